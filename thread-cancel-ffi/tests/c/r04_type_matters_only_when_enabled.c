/* R04: the cancel type matters only while the state is ENABLED.
 *
 *   A: DISABLE + ASYNCHRONOUS, a request arrives while the thread spins (pure computation):
 *      nothing happens, at any instruction; it then sets DEFERRED and enables: still nothing
 *      (deferred, enabling is not a point) until its testcancel.
 *   B: DISABLE + DEFERRED with a request pending: switching to ASYNCHRONOUS acts on nothing
 *      (disabled); enabling then acts at once, inside pthread_setcancelstate.
 *   C: ENABLE + DEFERRED with a request pending: switching to ASYNCHRONOUS acts at once,
 *      inside pthread_setcanceltype (the type now matters). */
#include <pthread.h>
#include "tc_test.h"

struct ctl {
    atomic_int ready, go, cleaned;
    atomic_long spins;
    atomic_int step; /* how far the thread got */
};

static void cleanup(void *arg) {
    atomic_fetch_add(&((struct ctl *)arg)->cleaned, 1);
}

static void *thread_a(void *arg) {
    struct ctl *c = arg;
    int old;
    pthread_cleanup_push(cleanup, c);
    CHECK(pthread_setcancelstate(PTHREAD_CANCEL_DISABLE, NULL) == 0);
    CHECK(pthread_setcanceltype(PTHREAD_CANCEL_ASYNCHRONOUS, NULL) == 0);
    atomic_store(&c->ready, 1);
    while (!atomic_load(&c->go)) atomic_fetch_add(&c->spins, 1);
    CHECK(pthread_setcanceltype(PTHREAD_CANCEL_DEFERRED, &old) == 0);
    CHECK(old == PTHREAD_CANCEL_ASYNCHRONOUS);
    atomic_store(&c->step, 1);
    CHECK(pthread_setcancelstate(PTHREAD_CANCEL_ENABLE, &old) == 0);
    CHECK(old == PTHREAD_CANCEL_DISABLE);
    atomic_store(&c->step, 2);
    pthread_testcancel();
    atomic_store(&c->step, 3);
    pthread_cleanup_pop(0);
    return NULL;
}

static void *thread_b(void *arg) {
    struct ctl *c = arg;
    int old;
    pthread_cleanup_push(cleanup, c);
    CHECK(pthread_setcancelstate(PTHREAD_CANCEL_DISABLE, NULL) == 0);
    atomic_store(&c->ready, 1);
    test_wait_ge(&c->go, 1); /* the request is pending */
    CHECK(pthread_setcanceltype(PTHREAD_CANCEL_ASYNCHRONOUS, &old) == 0);
    CHECK(old == PTHREAD_CANCEL_DEFERRED);
    atomic_store(&c->step, 1);
    for (int i = 0; i < 1000000; i++) atomic_fetch_add(&c->spins, 1); /* async but disabled */
    atomic_store(&c->step, 2);
    pthread_setcancelstate(PTHREAD_CANCEL_ENABLE, NULL); /* acts at once */
    atomic_store(&c->step, 3);
    pthread_cleanup_pop(0);
    return NULL;
}

static void *thread_c(void *arg) {
    struct ctl *c = arg;
    pthread_cleanup_push(cleanup, c);
    atomic_store(&c->ready, 1);
    test_wait_ge(&c->go, 1); /* the request is pending (enabled, deferred, no point yet) */
    atomic_store(&c->step, 1);
    pthread_setcanceltype(PTHREAD_CANCEL_ASYNCHRONOUS, NULL); /* acts at once */
    atomic_store(&c->step, 2);
    pthread_cleanup_pop(0);
    return NULL;
}

static void run(void *(*fn)(void *), int spin_after_cancel, int want_step, const char *name) {
    struct ctl c = {0};
    pthread_t t;
    CHECK(pthread_create(&t, NULL, fn, &c) == 0);
    test_wait_ge(&c.ready, 1);
    CHECK(pthread_cancel(t) == 0);
    if (spin_after_cancel) {
        long at = atomic_load(&c.spins);
        while (atomic_load(&c.spins) < at + 100000) test_msleep(1);
        CHECK(atomic_load(&c.cleaned) == 0);
    }
    atomic_store(&c.go, 1);
    void *ret;
    CHECK(pthread_join(t, &ret) == 0);
    if (ret != PTHREAD_CANCELED || atomic_load(&c.step) != want_step ||
        atomic_load(&c.cleaned) != 1) {
        fprintf(stderr, "%s: ret %p, step %d (want %d), cleaned %d\n", name, ret,
                atomic_load(&c.step), want_step, atomic_load(&c.cleaned));
        exit(1);
    }
}

int main(void) {
    alarm(20);
    run(thread_a, 1, 2, "A");
    run(thread_b, 0, 2, "B");
    run(thread_c, 0, 1, "C");
    printf("ok: disabled+async ignored, disabled->async ignored, enabled->async acted at once\n");
    return 0;
}
