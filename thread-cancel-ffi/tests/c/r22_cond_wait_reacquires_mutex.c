/* R22: a condition wait that is canceled re-acquires the mutex before the first cleanup handler
 * runs; a wake-up that was consumed is never lost to a cancellation.
 *
 *   A: threads canceled in pthread_cond_wait and pthread_cond_timedwait: their cleanup handler
 *      finds the mutex held by the thread itself (a default mutex: trylock is EBUSY; an
 *      error-checking one: lock is EDEADLK) and unlocks it (0); main can lock it afterwards.
 *   B: signal and cancel under the mutex, 300 rounds: two waiters W1, W2 wait for a token (a
 *      predicate counter); main, holding the mutex, cancels W1 and adds a token + signals (in
 *      either order). The token must be consumed — by W1 before it acts, or by W2: a signal
 *      W1 consumed and then acted on is passed on (W2 is not left asleep).
 * The race where the cancel comes after the mutex is released (W1 may already have re-acquired
 * it) is r22_cond_signal_not_lost_to_cancel.c, and a waiter with cancellation disabled is
 * r22_cond_wait_disabled_with_request_pending.c. */
#include <pthread.h>
#include <time.h>
#include "tc_test.h"
#include "tc_tokens.h"

static pthread_mutex_t m_default = PTHREAD_MUTEX_INITIALIZER;
static pthread_mutex_t m_check;
static pthread_cond_t cv = PTHREAD_COND_INITIALIZER;
static atomic_int a_waiting, a_handler_ok, a_handler_ran;

struct a_arg {
    pthread_mutex_t *m;
    int errorcheck, timed;
};

static void a_handler(void *p) {
    struct a_arg *a = p;
    int ok;
    if (a->errorcheck)
        ok = pthread_mutex_lock(a->m) == EDEADLK; /* ours: relocking is EDEADLK */
    else
        ok = pthread_mutex_trylock(a->m) == EBUSY;
    ok = pthread_mutex_unlock(a->m) == 0 && ok; /* an error-checking mutex: EPERM if not ours */
    atomic_store(&a_handler_ok, ok);
    atomic_store(&a_handler_ran, 1);
}

static void *a_waiter(void *p) {
    struct a_arg *a = p;
    CHECK(pthread_mutex_lock(a->m) == 0);
    pthread_cleanup_push(a_handler, a);
    atomic_store(&a_waiting, 1);
    for (;;) {
        if (a->timed) {
            struct timespec ts;
            clock_gettime(CLOCK_REALTIME, &ts);
            ts.tv_sec += 60;
            (void)pthread_cond_timedwait(&cv, a->m, &ts);
        } else {
            (void)pthread_cond_wait(&cv, a->m);
        }
    }
    pthread_cleanup_pop(0);
    return NULL;
}

static void part_a(void) {
    pthread_mutexattr_t ma;
    CHECK(pthread_mutexattr_init(&ma) == 0);
    CHECK(pthread_mutexattr_settype(&ma, PTHREAD_MUTEX_ERRORCHECK) == 0);
    CHECK(pthread_mutex_init(&m_check, &ma) == 0);
    CHECK(pthread_mutexattr_destroy(&ma) == 0);
    for (int i = 0; i < 4; i++) {
        struct a_arg a = {i & 1 ? &m_check : &m_default, i & 1, i >> 1};
        atomic_store(&a_waiting, 0);
        atomic_store(&a_handler_ran, 0);
        pthread_t t;
        CHECK(pthread_create(&t, NULL, a_waiter, &a) == 0);
        test_wait_ge(&a_waiting, 1);
        CHECK(pthread_mutex_lock(a.m) == 0); /* the waiter is in the wait (it released it) */
        CHECK(pthread_mutex_unlock(a.m) == 0);
        test_msleep(5);
        CHECK(pthread_cancel(t) == 0);
        void *ret;
        CHECK(pthread_join(t, &ret) == 0);
        CHECK(ret == PTHREAD_CANCELED);
        if (!atomic_load(&a_handler_ran) || !atomic_load(&a_handler_ok)) {
            fprintf(stderr, "%s %s mutex: the handler did not find it held by the thread\n",
                    a.timed ? "cond_timedwait," : "cond_wait,", a.errorcheck ? "error-checking"
                                                                             : "default");
            exit(1);
        }
        CHECK(pthread_mutex_trylock(a.m) == 0); /* released by the handler */
        CHECK(pthread_mutex_unlock(a.m) == 0);
    }
}

#define ROUNDS 300

static void part_b(void) {
    for (int i = 0; i < ROUNDS; i++) {
        pthread_t w1, w2;
        CHECK(pthread_create(&w1, NULL, consumer, &consumed_w1) == 0);
        while (locked_read(&waiting) < 1) test_msleep(0);
        CHECK(pthread_create(&w2, NULL, consumer, &consumed_w2) == 0);
        while (locked_read(&waiting) < 2) test_msleep(0); /* both are in the wait */
        CHECK(pthread_mutex_lock(&mu) == 0);
        if (i % 2 == 0) CHECK(pthread_cancel(w1) == 0);
        tokens++;
        CHECK(pthread_cond_signal(&tok_cv) == 0);
        if (i % 2 == 1) CHECK(pthread_cancel(w1) == 0);
        CHECK(pthread_mutex_unlock(&mu) == 0);
        void *ret;
        CHECK(pthread_join(w1, &ret) == 0);
        CHECK(ret == PTHREAD_CANCELED);
        /* The token must be consumed: W2 cannot stay asleep with a token available. A lost
         * wake-up never resolves; 5 s is far more than W2 needs to run. */
        struct timespec t0, t1;
        clock_gettime(CLOCK_MONOTONIC, &t0);
        while (locked_read(&tokens) != 0) {
            clock_gettime(CLOCK_MONOTONIC, &t1);
            if (t1.tv_sec - t0.tv_sec >= 5) {
                fprintf(stderr, "round %d (%s): a wake-up was lost: W2 stayed asleep with a "
                        "token available\n", i, i % 2 ? "signal, cancel" : "cancel, signal");
                exit(1);
            }
            test_msleep(1);
        }
        CHECK(pthread_cancel(w2) == 0);
        CHECK(pthread_join(w2, &ret) == 0);
        CHECK(ret == PTHREAD_CANCELED);
        CHECK(locked_read(&waiting) == 0);
    }
    CHECK(handler_bad == 0);
    CHECK(consumed_w1 + consumed_w2 == ROUNDS);
}

int main(void) {
    alarm(20);
    part_a();
    part_b();
    printf("ok: canceled cond waits held the mutex in their handler (4 kinds); %d signal+cancel "
           "under the mutex, no wake-up lost\n", ROUNDS);
    return 0;
}
