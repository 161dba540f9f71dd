/* R18: pthread_cancel (and join, detach, kill) on a thread that does not exist returns ESRCH,
 * never undefined behaviour:
 *   - an id that never existed (0x12345, 0, ~0);
 *   - a joined thread's id;
 *   - a detached thread's id once it has finished (detached by attribute or by pthread_detach):
 *     cancel and kill; join and detach of it are EINVAL, as glibc (the thread is detached:
 *     r18_join_or_detach_of_a_detached_thread_is_einval_as_glibc.c);
 *   - (not:) cancel on a thread that has exited but is not yet joined returns 0 (its id lives
 *     until the join, as POSIX and glibc >= 2.34); join still collects its value;
 * and ids are never reused: 200 threads created after a join never get the old id, and the old
 * id stays ESRCH while they live. */
#include <pthread.h>
#include <signal.h>
#include "tc_test.h"

static void all_esrch(pthread_t t, const char *what) {
    int c = pthread_cancel(t), k = pthread_kill(t, 0), d = pthread_detach(t);
    int j = pthread_join(t, NULL);
    if (c != ESRCH || k != ESRCH || d != ESRCH || j != ESRCH) {
        fprintf(stderr, "%s: cancel %d, kill %d, detach %d, join %d (want ESRCH = %d)\n", what, c,
                k, d, j, ESRCH);
        exit(1);
    }
}

/* A detached thread that has finished: cancel and kill ESRCH, join and detach EINVAL. */
static void detached_ended(pthread_t t, const char *what) {
    int c = pthread_cancel(t), k = pthread_kill(t, 0), d = pthread_detach(t);
    int j = pthread_join(t, NULL);
    if (c != ESRCH || k != ESRCH || d != EINVAL || j != EINVAL) {
        fprintf(stderr, "%s: cancel %d, kill %d, detach %d, join %d (want ESRCH = %d, ESRCH, "
                "EINVAL = %d, EINVAL)\n", what, c, k, d, j, ESRCH, EINVAL);
        exit(1);
    }
}

static atomic_int done;

static void *quick(void *arg) {
    atomic_fetch_add(&done, 1);
    return arg;
}

static atomic_int hold;

static void *held(void *arg) {
    test_wait_ge(&hold, 1);
    return arg;
}

int main(void) {
    alarm(20);
    all_esrch((pthread_t)0x12345, "never existed (0x12345)");
    all_esrch((pthread_t)0, "never existed (0)");
    all_esrch((pthread_t)~0UL, "never existed (~0)");
    all_esrch((pthread_t)((1UL << 32) | 1), "never existed (generation 1, slot 1)");

    /* Joined. */
    pthread_t t;
    CHECK(pthread_create(&t, NULL, quick, (void *)1) == 0);
    void *ret;
    CHECK(pthread_join(t, &ret) == 0 && ret == (void *)1);
    all_esrch(t, "joined");
    pthread_t joined = t;

    /* Detached by pthread_detach while alive, then finished. */
    atomic_store(&hold, 0);
    CHECK(pthread_create(&t, NULL, held, NULL) == 0);
    CHECK(pthread_detach(t) == 0);
    CHECK(pthread_kill(t, 0) == 0); /* alive */
    CHECK(pthread_cancel(t) == 0);  /* alive: queued (it has no point left, it returns) */
    atomic_store(&hold, 1);
    int rc;
    while ((rc = pthread_kill(t, 0)) == 0) test_msleep(1); /* until it has gone */
    CHECK(rc == ESRCH);
    detached_ended(t, "detached (pthread_detach), finished");

    /* Detached by attribute, finished. */
    pthread_attr_t a;
    CHECK(pthread_attr_init(&a) == 0);
    CHECK(pthread_attr_setdetachstate(&a, PTHREAD_CREATE_DETACHED) == 0);
    atomic_store(&done, 0);
    CHECK(pthread_create(&t, &a, quick, NULL) == 0);
    CHECK(pthread_attr_destroy(&a) == 0);
    test_wait_ge(&done, 1);
    while ((rc = pthread_cancel(t)) == 0) test_msleep(1);
    CHECK(rc == ESRCH);
    detached_ended(t, "detached (attribute), finished");

    /* Exited, not joined: the id lives until the join (POSIX; glibc >= 2.34): cancel is 0 and
     * does nothing, join still reports the returned value (r18_exited_unjoined_thread_is_still_
     * a_valid_id.c waits for the thread to have gone; here it may not have yet). */
    atomic_store(&done, 0);
    CHECK(pthread_create(&t, NULL, quick, (void *)9) == 0);
    test_wait_ge(&done, 1);
    for (int i = 0; i < 20; i++) {
        CHECK(pthread_cancel(t) == 0);
        test_msleep(1);
    }
    CHECK(pthread_join(t, &ret) == 0);
    CHECK(ret == (void *)9); /* returned: the requests it got after its last point did nothing */
    all_esrch(t, "exited then joined");

    /* Never reused. */
    for (int i = 0; i < 200; i++) {
        atomic_store(&hold, 0);
        pthread_t n;
        CHECK(pthread_create(&n, NULL, held, NULL) == 0);
        if (pthread_equal(n, joined) || pthread_equal(n, t)) {
            fprintf(stderr, "thread %d got a stale id %#lx\n", i, (unsigned long)n);
            return 1;
        }
        CHECK(pthread_cancel(joined) == ESRCH); /* the old id does not reach the new thread */
        CHECK(pthread_kill(joined, 0) == ESRCH);
        atomic_store(&hold, 1);
        CHECK(pthread_join(n, &ret) == 0 && ret == NULL);
    }
    printf("ok: ESRCH for never-existed, joined, detached+finished (cancel, kill; join, detach "
           "EINVAL), exited ids; 200 new threads, no id reused\n");
    return 0;
}
