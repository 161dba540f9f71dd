/* R24 (sem_wait) with R10: sem_wait is a cancellation point that still works as a wait; a
 * canceled sem_wait took nothing, and a wake-up it may have received is not lost.
 *
 *   0: no cancellation: a thread blocked in sem_wait / sem_timedwait (on a process-private and
 *      on a process-shared semaphore) is woken by sem_post and returns 0.
 *   A: W1 blocked in sem_wait is canceled: sem_getvalue is still 0; then W2 blocks in sem_wait
 *      and a sem_post is received by W2 (it returns 0, the value is 0 again).
 *   B: post-vs-cancel race, 500 rounds: W1 and W2 blocked in sem_wait (W1 first); main posts
 *      one token and cancels W1, in varying orders and with varying delays. The token must end
 *      up taken — by W1 (its sem_wait returned 0 before it acted) or by W2, which must not be
 *      left asleep while the value is 1 — and never twice: posts = taken + value.
 *      (Built against plain glibc 2.36, B fails: glibc's cancellation can act after the futex
 *      wake-up was received — its bug 12683, the one R10 is about.)
 *
 * A regression test for two bugs of the first C ABI, fixed in 1cf2c8b: (1) part 0 — a sem_wait
 * that blocked was never woken by sem_post (the futex wait used glibc's `private` field as the
 * flag itself, while glibc stores 0 for private and FUTEX_PRIVATE_FLAG for shared and XORs it:
 * the waiter slept on the shared futex, sem_post woke the private one); (2) part B — a waiter
 * woken by the post (the kernel hands the wake to W1 even when the cancel signal came first, if
 * W1 is still queued) acted before taking the token, and the wake-up was lost. */
#include <pthread.h>
#include <semaphore.h>
#include <time.h>
#include "tc_test.h"

#define ROUNDS 500

static sem_t sem;
static atomic_int took_w1, took_w2, blocked_tid[2], about[2], cleaned;

struct who {
    int index;
    atomic_int *took;
};

static void cleanup(void *arg) {
    (void)arg;
    atomic_fetch_add(&cleaned, 1);
}

static void *waiter(void *arg) {
    struct who *w = arg;
    pthread_cleanup_push(cleanup, NULL);
    atomic_store(&blocked_tid[w->index], test_gettid());
    for (;;) {
        atomic_store(&about[w->index], 1);
        if (sem_wait(&sem) == 0) atomic_fetch_add(w->took, 1);
    }
    pthread_cleanup_pop(0);
    return NULL;
}

static void wait_blocked(int index) {
    test_wait_ge(&about[index], 1);
    test_wait_blocked((pid_t)atomic_load(&blocked_tid[index]));
}

static int value(void) {
    int v = -1;
    CHECK(sem_getvalue(&sem, &v) == 0);
    return v;
}

static struct who w1 = {0, &took_w1}, w2 = {1, &took_w2};

static atomic_int p0_in, p0_got;

static void *p0_waiter(void *arg) {
    sem_t *s = arg;
    atomic_store(&p0_in, 1);
    if (sem_wait(s) == 0) atomic_fetch_add(&p0_got, 1);
    atomic_store(&p0_in, 2);
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    ts.tv_sec += 60;
    if (sem_timedwait(s, &ts) == 0) atomic_fetch_add(&p0_got, 1);
    return NULL;
}

/* Waits (5 s at most: a missed wake-up never resolves) until p0_got reaches `n`. */
static int p0_wait_got(int n) {
    struct timespec t0, t1;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    while (atomic_load(&p0_got) < n) {
        clock_gettime(CLOCK_MONOTONIC, &t1);
        if (t1.tv_sec - t0.tv_sec >= 5) return 0;
        test_msleep(1);
    }
    return 1;
}

static void part_0(void) {
    for (int pshared = 0; pshared <= 1; pshared++) {
        sem_t s;
        CHECK(sem_init(&s, pshared, 0) == 0);
        atomic_store(&p0_in, 0);
        atomic_store(&p0_got, 0);
        pthread_t t;
        CHECK(pthread_create(&t, NULL, p0_waiter, &s) == 0);
        int ok = 1;
        for (int n = 1; n <= 2 && ok; n++) {
            test_wait_ge(&p0_in, n);
            test_msleep(20); /* it blocks (or would have taken the token: also fine) */
            CHECK(sem_post(&s) == 0);
            if (!p0_wait_got(n)) {
                int v = -1;
                sem_getvalue(&s, &v);
                fprintf(stderr, "a thread blocked in %s on a %s semaphore was not woken by "
                        "sem_post (value %d)\n", n == 1 ? "sem_wait" : "sem_timedwait",
                        pshared ? "process-shared" : "process-private", v);
                exit(1);
            }
        }
        void *ret;
        CHECK(pthread_join(t, &ret) == 0);
        CHECK(ret == NULL);
        CHECK(sem_destroy(&s) == 0);
    }
}

static void part_a(void) {
    pthread_t t1, t2;
    atomic_store(&about[0], 0);
    CHECK(pthread_create(&t1, NULL, waiter, &w1) == 0);
    wait_blocked(0);
    CHECK(pthread_cancel(t1) == 0);
    void *ret;
    CHECK(pthread_join(t1, &ret) == 0);
    CHECK(ret == PTHREAD_CANCELED);
    CHECK(value() == 0);
    CHECK(atomic_load(&took_w1) == 0);
    atomic_store(&about[1], 0);
    CHECK(pthread_create(&t2, NULL, waiter, &w2) == 0);
    wait_blocked(1);
    CHECK(sem_post(&sem) == 0);
    struct timespec t0, tn;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    while (atomic_load(&took_w2) < 1) {
        clock_gettime(CLOCK_MONOTONIC, &tn);
        if (tn.tv_sec - t0.tv_sec >= 5) {
            fprintf(stderr, "the post after a canceled sem_wait did not reach the next waiter "
                    "(value %d)\n", value());
            exit(1);
        }
        test_msleep(1);
    }
    CHECK(value() == 0);
    CHECK(pthread_cancel(t2) == 0);
    CHECK(pthread_join(t2, &ret) == 0);
    CHECK(ret == PTHREAD_CANCELED);
    CHECK(atomic_load(&took_w2) == 1);
}

static void part_b(void) {
    atomic_store(&took_w1, 0);
    atomic_store(&took_w2, 0);
    for (int i = 0; i < ROUNDS; i++) {
        pthread_t t1, t2;
        atomic_store(&about[0], 0);
        atomic_store(&about[1], 0);
        CHECK(pthread_create(&t1, NULL, waiter, &w1) == 0);
        wait_blocked(0);
        CHECK(pthread_create(&t2, NULL, waiter, &w2) == 0);
        test_wait_ge(&about[1], 1);
        if (i % 8 == 0) wait_blocked(1); /* mostly: W2 may still be on its way in */
        int before = atomic_load(&took_w1) + atomic_load(&took_w2);
        if (i % 3 == 0) CHECK(pthread_cancel(t1) == 0);
        CHECK(sem_post(&sem) == 0);
        for (volatile int s = 0; s < (i % 16) * 300; s++) {
        }
        if (i % 3 != 0) CHECK(pthread_cancel(t1) == 0);
        void *ret;
        CHECK(pthread_join(t1, &ret) == 0);
        CHECK(ret == PTHREAD_CANCELED);
        /* The token is taken by W1 or W2; a lost wake-up never resolves (5 s is far more than
         * W2 needs). */
        struct timespec t0, tn;
        clock_gettime(CLOCK_MONOTONIC, &t0);
        while (atomic_load(&took_w1) + atomic_load(&took_w2) == before) {
            clock_gettime(CLOCK_MONOTONIC, &tn);
            if (tn.tv_sec - t0.tv_sec >= 5) {
                fprintf(stderr, "round %d: the posted token was not taken: value %d, W2 asleep "
                        "(a wake-up received by the canceled W1 was lost)\n", i, value());
                exit(1);
            }
            test_usleep(50);
        }
        CHECK(pthread_cancel(t2) == 0);
        CHECK(pthread_join(t2, &ret) == 0);
        CHECK(ret == PTHREAD_CANCELED);
        int taken = atomic_load(&took_w1) + atomic_load(&took_w2);
        if (taken != i + 1 || value() != 0) {
            fprintf(stderr, "round %d: %d posts, %d taken, value %d\n", i, i + 1, taken, value());
            exit(1);
        }
    }
}

int main(void) {
    alarm(20);
    CHECK(sem_init(&sem, 0, 0) == 0);
    part_0();
    part_a();
    part_b();
    CHECK(sem_destroy(&sem) == 0);
    printf("ok: sem_post woke blocked waits; a canceled sem_wait took nothing, the next waiter got "
           "the post; %d post/cancel races, every token taken once\n", ROUNDS);
    return 0;
}
