/* R02: a new thread starts with cancellation ENABLED and DEFERRED — also when its creator has
 * set DISABLED and ASYNCHRONOUS (state and type are not inherited).
 *
 * The creator (itself a created thread) switches to DISABLE + ASYNCHRONOUS and creates a child.
 * The child reads its state and type (the old values returned by the setters), and shows them
 * in behaviour: a request that arrives while it runs code without points is not acted on there
 * (deferred), and is acted on at its first testcancel (enabled). */
#include <pthread.h>
#include "tc_test.h"

struct seen {
    int state, type;
    int state2, type2; /* the creator: what it had set, read back after creating the child */
};

static atomic_int child_ready, child_go, child_after;
static atomic_long child_spins;
static struct seen child_seen, creator_seen;

static void *child(void *arg) {
    (void)arg;
    struct seen *s = &child_seen;
    /* Set to the same values, to read the current ones without changing them. */
    CHECK(pthread_setcancelstate(PTHREAD_CANCEL_ENABLE, &s->state) == 0);
    CHECK(pthread_setcanceltype(PTHREAD_CANCEL_DEFERRED, &s->type) == 0);
    atomic_store(&child_ready, 1);
    while (!atomic_load(&child_go)) atomic_fetch_add(&child_spins, 1); /* no point */
    pthread_testcancel();
    atomic_store(&child_after, 1);
    return NULL;
}

static void *creator(void *arg) {
    pthread_t *out = arg;
    CHECK(pthread_setcancelstate(PTHREAD_CANCEL_DISABLE, &creator_seen.state) == 0);
    CHECK(pthread_setcanceltype(PTHREAD_CANCEL_ASYNCHRONOUS, &creator_seen.type) == 0);
    CHECK(pthread_create(out, NULL, child, NULL) == 0);
    /* Still DISABLE + ASYNCHRONOUS here: */
    CHECK(pthread_setcanceltype(PTHREAD_CANCEL_DEFERRED, &creator_seen.type2) == 0);
    CHECK(pthread_setcancelstate(PTHREAD_CANCEL_ENABLE, &creator_seen.state2) == 0);
    return NULL;
}

int main(void) {
    alarm(20);
    pthread_t cr, ch;
    CHECK(pthread_create(&cr, NULL, creator, &ch) == 0);
    void *ret;
    CHECK(pthread_join(cr, &ret) == 0);
    CHECK(ret == NULL);
    /* The creator itself started ENABLE + DEFERRED and kept what it set. */
    CHECK(creator_seen.state == PTHREAD_CANCEL_ENABLE);
    CHECK(creator_seen.type == PTHREAD_CANCEL_DEFERRED);
    CHECK(creator_seen.type2 == PTHREAD_CANCEL_ASYNCHRONOUS);
    CHECK(creator_seen.state2 == PTHREAD_CANCEL_DISABLE);

    test_wait_ge(&child_ready, 1);
    CHECK(child_seen.state == PTHREAD_CANCEL_ENABLE);
    CHECK(child_seen.type == PTHREAD_CANCEL_DEFERRED);
    CHECK(pthread_cancel(ch) == 0);
    long at = atomic_load(&child_spins);
    while (atomic_load(&child_spins) < at + 200) test_msleep(1); /* deferred: still running */
    atomic_store(&child_go, 1);
    CHECK(pthread_join(ch, &ret) == 0);
    CHECK(ret == PTHREAD_CANCELED); /* enabled: acted at testcancel */
    CHECK(atomic_load(&child_after) == 0);
    printf("ok: new thread ENABLE + DEFERRED (creator was DISABLE + ASYNCHRONOUS)\n");
    return 0;
}
