/* R01: pthread_cancel only queues a request; whether and when it is acted on is decided by the
 * target's state and type.
 *
 *   A: enabled + deferred, in code without cancellation points: it keeps running after the
 *      cancel returned, and acts at the next point (testcancel).
 *   B: disabled: it keeps running through points; after enabling it acts at the next point.
 *   C: enabled + deferred, the target returns without passing a point: the request is never
 *      acted on and join reports the return value, not PTHREAD_CANCELED. */
#include <pthread.h>
#include "tc_test.h"

struct ctl {
    atomic_int ready;    /* the thread is in its loop */
    atomic_int canceled; /* main: pthread_cancel has returned */
    atomic_long spins;   /* the thread's progress */
    atomic_int after;    /* the thread ran past a point it must not have passed */
    atomic_int cleaned;
};

static void cleanup(void *arg) {
    atomic_fetch_add(&((struct ctl *)arg)->cleaned, 1);
}

/* Spins (no cancellation point) until main has canceled and seen progress after it. */
static void spin_until_told(struct ctl *c, atomic_int *until) {
    while (!atomic_load(until)) atomic_fetch_add(&c->spins, 1);
}

static atomic_int go_a, go_b, go_c;

static void *thread_a(void *arg) {
    struct ctl *c = arg;
    pthread_cleanup_push(cleanup, c);
    atomic_store(&c->ready, 1);
    spin_until_told(c, &go_a);
    pthread_testcancel(); /* acts here */
    atomic_store(&c->after, 1);
    pthread_cleanup_pop(0);
    return NULL;
}

static void *thread_b(void *arg) {
    struct ctl *c = arg;
    CHECK(pthread_setcancelstate(PTHREAD_CANCEL_DISABLE, NULL) == 0);
    pthread_cleanup_push(cleanup, c);
    atomic_store(&c->ready, 1);
    while (!atomic_load(&go_b)) {
        atomic_fetch_add(&c->spins, 1);
        pthread_testcancel(); /* disabled: not acted on */
        usleep(100);          /* nor here */
    }
    CHECK(pthread_setcancelstate(PTHREAD_CANCEL_ENABLE, NULL) == 0);
    pthread_testcancel(); /* acts here */
    atomic_store(&c->after, 1);
    pthread_cleanup_pop(0);
    return NULL;
}

static void *thread_c(void *arg) {
    struct ctl *c = arg;
    pthread_cleanup_push(cleanup, c);
    atomic_store(&c->ready, 1);
    spin_until_told(c, &go_c);
    atomic_store(&c->after, 1);
    pthread_cleanup_pop(0);
    return (void *)42; /* returns with the request still pending, never acted on */
}

/* Starts `fn`, cancels it once it runs, and checks that it keeps running after the cancel. */
static pthread_t start_and_cancel(void *(*fn)(void *), struct ctl *c) {
    pthread_t t;
    CHECK(pthread_create(&t, NULL, fn, c) == 0);
    test_wait_ge(&c->ready, 1);
    CHECK(pthread_cancel(t) == 0);
    atomic_store(&c->canceled, 1);
    long at_cancel = atomic_load(&c->spins);
    while (atomic_load(&c->spins) < at_cancel + 200) test_msleep(1);
    return t;
}

int main(void) {
    alarm(20);
    void *ret;

    struct ctl a = {0};
    pthread_t ta = start_and_cancel(thread_a, &a);
    CHECK(atomic_load(&a.cleaned) == 0);
    atomic_store(&go_a, 1);
    CHECK(pthread_join(ta, &ret) == 0);
    CHECK(ret == PTHREAD_CANCELED);
    CHECK(atomic_load(&a.after) == 0);
    CHECK(atomic_load(&a.cleaned) == 1);

    struct ctl b = {0};
    pthread_t tb = start_and_cancel(thread_b, &b);
    CHECK(atomic_load(&b.cleaned) == 0);
    atomic_store(&go_b, 1);
    CHECK(pthread_join(tb, &ret) == 0);
    CHECK(ret == PTHREAD_CANCELED);
    CHECK(atomic_load(&b.after) == 0);
    CHECK(atomic_load(&b.cleaned) == 1);

    struct ctl c = {0};
    pthread_t tc = start_and_cancel(thread_c, &c);
    atomic_store(&go_c, 1);
    CHECK(pthread_join(tc, &ret) == 0);
    CHECK(ret == (void *)42);
    CHECK(atomic_load(&c.after) == 1);
    CHECK(atomic_load(&c.cleaned) == 0);

    printf("ok: queued; deferred acted at testcancel, disabled after enable, no point -> returned "
           "42\n");
    return 0;
}
