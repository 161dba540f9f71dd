/* pthread_cond_clockwait and sem_clockwait (glibc >= 2.30) are cancellation points, as in glibc,
 * on CLOCK_REALTIME and CLOCK_MONOTONIC:
 *   - a thread canceled while blocked in one (a 20 s timeout) returns before its timeout: its
 *     cleanup handler runs (for the condition wait with the mutex held again) and join reports
 *     PTHREAD_CANCELED (the time is only bounded by the timeout, generous for a loaded machine;
 *     a longer one is reported on stderr with what was measured);
 *   - a loop of short clock waits (C++'s wait_for) ends with the cancel;
 *   - they work as waits: a timeout is ETIMEDOUT (sem_clockwait: -1 and errno), a signal or a
 *     post wakes them (0), a token already there is taken at once;
 *   - another clock (CLOCK_MONOTONIC_RAW, CLOCK_PROCESS_CPUTIME_ID) or a tv_nsec out of range is
 *     EINVAL, as glibc.
 * Through the header they were not mapped: a canceled thread waited out its whole timeout and
 * the loop never ended.
 *
 * TC_COMPARE_WITH_GLIBC: the runner also builds this against plain glibc; both print the same. */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <pthread.h>
#include <semaphore.h>
#include "tc_test.h"

static pthread_mutex_t m;
static pthread_cond_t c = PTHREAD_COND_INITIALIZER;
static sem_t s;
static atomic_int tid, handler_ran, handler_unlock, waits;
static clockid_t clock_used;

/* The timeout of the blocked waits, in seconds: the bound of a canceled one's return (and of a
 * canceled loop's, a hang bound there). */
#define TIMEOUT_S 20

static double now_s(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}

/* `ms` milliseconds from now on `clock`. */
static struct timespec in_ms(clockid_t clock, long ms) {
    struct timespec t;
    CHECK(clock_gettime(clock, &t) == 0);
    t.tv_sec += ms / 1000;
    t.tv_nsec += (ms % 1000) * 1000000L;
    if (t.tv_nsec >= 1000000000L) {
        t.tv_sec++;
        t.tv_nsec -= 1000000000L;
    }
    return t;
}

static const char *clock_name(clockid_t clock) {
    return clock == CLOCK_REALTIME ? "CLOCK_REALTIME" : "CLOCK_MONOTONIC";
}

static const char *err(int e) {
    switch (e) {
    case 0: return "0";
    case EINVAL: return "EINVAL";
    case ETIMEDOUT: return "ETIMEDOUT";
    case EINTR: return "EINTR";
    default: return "other";
    }
}

static void unlock_handler(void *arg) {
    (void)arg;
    atomic_store(&handler_ran, 1);
    atomic_store(&handler_unlock, pthread_mutex_unlock(&m)); /* errorcheck: EPERM if not held */
}

static void sem_handler(void *arg) {
    (void)arg;
    atomic_store(&handler_ran, 1);
}

static void *cond_blocked(void *arg) {
    (void)arg;
    CHECK(pthread_mutex_lock(&m) == 0);
    pthread_cleanup_push(unlock_handler, NULL);
    struct timespec t = in_ms(clock_used, TIMEOUT_S * 1000);
    atomic_store(&tid, test_gettid());
    while (pthread_cond_clockwait(&c, &m, clock_used, &t) != ETIMEDOUT) continue;
    pthread_cleanup_pop(1);
    return (void *)1;
}

static void *cond_loop(void *arg) {
    (void)arg;
    CHECK(pthread_mutex_lock(&m) == 0);
    pthread_cleanup_push(unlock_handler, NULL);
    atomic_store(&tid, test_gettid());
    while (atomic_fetch_add(&waits, 1) < 100) {
        struct timespec t = in_ms(clock_used, 30);
        pthread_cond_clockwait(&c, &m, clock_used, &t);
    }
    pthread_cleanup_pop(1);
    return (void *)1;
}

static void *sem_blocked(void *arg) {
    (void)arg;
    pthread_cleanup_push(sem_handler, NULL);
    struct timespec t = in_ms(clock_used, TIMEOUT_S * 1000);
    atomic_store(&tid, test_gettid());
    while (sem_clockwait(&s, clock_used, &t) == 0 || errno != ETIMEDOUT) continue;
    pthread_cleanup_pop(0);
    return (void *)1;
}

static void *sem_loop(void *arg) {
    (void)arg;
    pthread_cleanup_push(sem_handler, NULL);
    atomic_store(&tid, test_gettid());
    while (atomic_fetch_add(&waits, 1) < 100) {
        struct timespec t = in_ms(clock_used, 30);
        sem_clockwait(&s, clock_used, &t);
    }
    pthread_cleanup_pop(0);
    return (void *)1;
}

static void canceled(void *(*body)(void *), const char *what, int loop) {
    atomic_store(&tid, 0);
    atomic_store(&handler_ran, 0);
    atomic_store(&handler_unlock, -1);
    atomic_store(&waits, 0);
    pthread_t t;
    CHECK(pthread_create(&t, NULL, body, NULL) == 0);
    while (atomic_load(&tid) == 0) test_usleep(100);
    if (loop) test_msleep(100);
    else test_wait_blocked(atomic_load(&tid));
    double start = now_s();
    CHECK(pthread_cancel(t) == 0);
    void *ret = NULL;
    CHECK(pthread_join(t, &ret) == 0);
    double took = now_s() - start;
    if (took >= TIMEOUT_S)
        fprintf(stderr, "%s on %s: the cancel took %.3f s\n", what, clock_name(clock_used), took);
    printf("%s on %s, canceled: %s, handler ran %d%s, ended within %d s: %s\n", what,
           clock_name(clock_used), ret == PTHREAD_CANCELED ? "PTHREAD_CANCELED" : "not canceled",
           atomic_load(&handler_ran),
           atomic_load(&handler_unlock) == -1 ? ""
           : atomic_load(&handler_unlock) == 0 ? ", with the mutex held"
                                               : ", without the mutex",
           TIMEOUT_S, took < TIMEOUT_S ? "yes" : "no");
}

static void *poster(void *arg) {
    test_msleep(50);
    if (arg == &s) {
        CHECK(sem_post(&s) == 0);
    } else {
        CHECK(pthread_mutex_lock(&m) == 0);
        atomic_store(&waits, 1);
        CHECK(pthread_cond_signal(&c) == 0);
        CHECK(pthread_mutex_unlock(&m) == 0);
    }
    return NULL;
}

static void works(clockid_t clock) {
    /* Condition: a timeout, then a signal. */
    CHECK(pthread_mutex_lock(&m) == 0);
    struct timespec t = in_ms(clock, 100);
    double start = now_s();
    int r = pthread_cond_clockwait(&c, &m, clock, &t);
    double took = now_s() - start;
    int timed = r == ETIMEDOUT && took >= 0.09;
    atomic_store(&waits, 0);
    pthread_t p;
    CHECK(pthread_create(&p, NULL, poster, &c) == 0);
    t = in_ms(clock, 5000);
    int r2 = 0;
    while (atomic_load(&waits) == 0 && r2 == 0) r2 = pthread_cond_clockwait(&c, &m, clock, &t);
    CHECK(pthread_mutex_unlock(&m) == 0);
    CHECK(pthread_join(p, NULL) == 0);
    printf("pthread_cond_clockwait on %s: timeout %s (%s), signaled %s\n", clock_name(clock),
           err(r), timed ? "after its time" : "early", err(r2));

    /* Semaphore: a timeout, a post, a token already there. */
    t = in_ms(clock, 100);
    errno = 0;
    start = now_s();
    r = sem_clockwait(&s, clock, &t);
    int e = errno;
    took = now_s() - start;
    timed = r == -1 && e == ETIMEDOUT && took >= 0.09;
    CHECK(pthread_create(&p, NULL, poster, &s) == 0);
    t = in_ms(clock, 5000);
    r2 = sem_clockwait(&s, clock, &t);
    CHECK(pthread_join(p, NULL) == 0);
    CHECK(sem_post(&s) == 0);
    t = in_ms(clock, 5000);
    int r3 = sem_clockwait(&s, clock, &t);
    printf("sem_clockwait on %s: timeout %d errno %s (%s), posted %d, token there %d\n",
           clock_name(clock), r, err(e), timed ? "after its time" : "early", r2, r3);
}

static void invalid(void) {
    clockid_t bad[] = {CLOCK_MONOTONIC_RAW, CLOCK_PROCESS_CPUTIME_ID};
    for (int i = 0; i < 2; i++) {
        struct timespec t = in_ms(CLOCK_MONOTONIC, 100);
        CHECK(pthread_mutex_lock(&m) == 0);
        int r = pthread_cond_clockwait(&c, &m, bad[i], &t);
        CHECK(pthread_mutex_unlock(&m) == 0);
        CHECK(sem_post(&s) == 0); /* a token: still EINVAL */
        errno = 0;
        int r2 = sem_clockwait(&s, bad[i], &t);
        int e = errno;
        CHECK(sem_trywait(&s) == 0);
        printf("clock %s: pthread_cond_clockwait %s, sem_clockwait %d errno %s\n",
               i == 0 ? "CLOCK_MONOTONIC_RAW" : "CLOCK_PROCESS_CPUTIME_ID", err(r), r2, err(e));
    }
    struct timespec t = in_ms(CLOCK_MONOTONIC, 100);
    t.tv_nsec = 1000000000L;
    CHECK(pthread_mutex_lock(&m) == 0);
    int r = pthread_cond_clockwait(&c, &m, CLOCK_MONOTONIC, &t);
    CHECK(pthread_mutex_unlock(&m) == 0);
    errno = 0;
    int r2 = sem_clockwait(&s, CLOCK_MONOTONIC, &t);
    int e = errno;
    printf("tv_nsec 1000000000: pthread_cond_clockwait %s, sem_clockwait %d errno %s\n", err(r),
           r2, err(e));
}

int main(void) {
    alarm(6 * TIMEOUT_S); /* even if every blocked wait ran to its timeout */
    setvbuf(stdout, NULL, _IOLBF, 0);
    pthread_mutexattr_t ma;
    CHECK(pthread_mutexattr_init(&ma) == 0);
    CHECK(pthread_mutexattr_settype(&ma, PTHREAD_MUTEX_ERRORCHECK) == 0);
    CHECK(pthread_mutex_init(&m, &ma) == 0);
    CHECK(sem_init(&s, 0, 0) == 0);
    clockid_t clocks[] = {CLOCK_REALTIME, CLOCK_MONOTONIC};
    for (int i = 0; i < 2; i++) {
        works(clocks[i]);
        clock_used = clocks[i];
        canceled(cond_blocked, "pthread_cond_clockwait blocked", 0);
        canceled(cond_loop, "pthread_cond_clockwait loop", 1);
        canceled(sem_blocked, "sem_clockwait blocked", 0);
        canceled(sem_loop, "sem_clockwait loop", 1);
    }
    invalid();
    return 0;
}
