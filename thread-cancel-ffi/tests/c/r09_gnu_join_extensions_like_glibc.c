#define _GNU_SOURCE
/* R09 with glibc's join extensions: pthread_tryjoin_np, pthread_timedjoin_np
 * and pthread_clockjoin_np take our ids and answer as glibc does:
 *   - a thread that has not ended: tryjoin EBUSY; a timed join whose time passes ETIMEDOUT
 *     (a time in the past, a negative tv_sec too), the thread staying joinable;
 *   - a clock other than CLOCK_REALTIME / CLOCK_MONOTONIC: EINVAL;
 *   - an ended thread: 0 and its value, from each of the three; a null time waits for the end;
 *   - the caller itself: tryjoin EBUSY (it has not ended), the timed joins EDEADLK;
 *   - a detached thread: EINVAL;
 *   - the timed joins are cancellation points (a canceled one leaves the target joinable);
 *     tryjoin is not one.
 * Through the header only (glibc spins or has undefined behaviour there): a bad tv_nsec is
 * EINVAL, and an id that is not a live thread ESRCH. Then R09_RACES times (default 300) a timed
 * join races the thread's end: it either joins (the value) or times out (and pthread_join then
 * gets the value), never both, never neither.
 *
 * TC_COMPARE_WITH_GLIBC: the runner also builds this against plain glibc; both print the same. */
#include <pthread.h>
#include <time.h>
#include "tc_test.h"

static atomic_int release, tid;

static void *held(void *arg) {
    atomic_store(&tid, test_gettid());
    test_wait_ge(&release, 1);
    return arg;
}

static struct timespec in_ms(clockid_t clock, long ms) {
    struct timespec t;
    clock_gettime(clock, &t);
    t.tv_nsec += (ms % 1000) * 1000000L;
    t.tv_sec += ms / 1000 + t.tv_nsec / 1000000000L;
    t.tv_nsec %= 1000000000L;
    return t;
}

static const char *name(int e) {
    switch (e) {
    case 0: return "0";
    case EBUSY: return "EBUSY";
    case ETIMEDOUT: return "ETIMEDOUT";
    case EINVAL: return "EINVAL";
    case EDEADLK: return "EDEADLK";
    case ESRCH: return "ESRCH";
    default: return "other";
    }
}

static void wait_gone(void) {
    while (atomic_load(&tid) == 0) test_usleep(100);
    while (test_thread_state(atomic_load(&tid)) != '?') test_usleep(200);
    atomic_store(&tid, 0);
}

static atomic_int self_results[3];

static void *joins_itself(void *arg) {
    (void)arg;
    struct timespec t = in_ms(CLOCK_REALTIME, 10);
    struct timespec m = in_ms(CLOCK_MONOTONIC, 10);
    atomic_store(&self_results[0], pthread_tryjoin_np(pthread_self(), NULL));
    atomic_store(&self_results[1], pthread_timedjoin_np(pthread_self(), NULL, &t));
    atomic_store(&self_results[2], pthread_clockjoin_np(pthread_self(), NULL, CLOCK_MONOTONIC, &m));
    return NULL;
}

static void *spins(void *arg) {
    for (volatile long i = 0; i < (long)arg % 7 * 300; i++) {
    }
    return arg;
}

static pthread_t target;
static atomic_int joiner_in;

static void *timed_joiner(void *arg) {
    struct timespec t = in_ms(CLOCK_MONOTONIC, 3600 * 1000L);
    atomic_store(&joiner_in, 1);
    if (arg)
        pthread_clockjoin_np(target, NULL, CLOCK_MONOTONIC, &t);
    else {
        struct timespec r = in_ms(CLOCK_REALTIME, 3600 * 1000L);
        pthread_timedjoin_np(target, NULL, &r);
    }
    return (void *)1; /* not reached: canceled */
}

static atomic_int survived_tryjoin;

static void *tryjoin_with_request_pending(void *arg) {
    (void)arg;
    pthread_cancel(pthread_self());
    int r = pthread_tryjoin_np(target, NULL);
    atomic_store(&survived_tryjoin, r == EBUSY ? 1 : 2);
    pthread_testcancel();
    return NULL;
}

int main(void) {
    alarm(30);
    pthread_t t;
    void *ret = NULL;
    CHECK(pthread_create(&t, NULL, held, (void *)5) == 0);
    struct timespec past = in_ms(CLOCK_REALTIME, -1000), neg = {-1, 0};
    struct timespec r = in_ms(CLOCK_REALTIME, 20), m = in_ms(CLOCK_MONOTONIC, 20);
    struct timespec m2 = in_ms(CLOCK_MONOTONIC, 20), r2 = in_ms(CLOCK_REALTIME, 20);
    printf("running: tryjoin %s, timedjoin %s, timedjoin(past) %s, timedjoin(tv_sec -1) %s, "
           "clockjoin(MONOTONIC) %s, clockjoin(REALTIME) %s, clockjoin(PROCESS_CPUTIME) %s, "
           "clockjoin(BOOTTIME) %s\n",
           name(pthread_tryjoin_np(t, &ret)), name(pthread_timedjoin_np(t, &ret, &r)),
           name(pthread_timedjoin_np(t, &ret, &past)), name(pthread_timedjoin_np(t, &ret, &neg)),
           name(pthread_clockjoin_np(t, &ret, CLOCK_MONOTONIC, &m)),
           name(pthread_clockjoin_np(t, &ret, CLOCK_REALTIME, &r2)),
           name(pthread_clockjoin_np(t, &ret, CLOCK_PROCESS_CPUTIME_ID, &m2)),
           name(pthread_clockjoin_np(t, &ret, CLOCK_BOOTTIME, &m2)));
#ifndef TC_PLAIN_GLIBC
    struct timespec bad = {0, 1000000000L};
    CHECK(pthread_timedjoin_np(t, &ret, &bad) == EINVAL);
    CHECK(pthread_clockjoin_np(t, &ret, CLOCK_MONOTONIC, &bad) == EINVAL);
    bad.tv_nsec = -1;
    CHECK(pthread_timedjoin_np(t, &ret, &bad) == EINVAL);
    CHECK(pthread_tryjoin_np((pthread_t)0x12345, &ret) == ESRCH);
    CHECK(pthread_timedjoin_np((pthread_t)0x12345, &ret, &r) == ESRCH);
    CHECK(pthread_clockjoin_np((pthread_t)0x12345, &ret, CLOCK_MONOTONIC, &m) == ESRCH);
#endif
    CHECK(ret == NULL);
    atomic_store(&release, 1);
    wait_gone();
    int e = pthread_tryjoin_np(t, &ret);
    printf("ended: tryjoin %s, value %ld\n", name(e), (long)ret);
#ifndef TC_PLAIN_GLIBC
    CHECK(pthread_tryjoin_np(t, &ret) == ESRCH); /* joined */
#endif

    atomic_store(&release, 0);
    CHECK(pthread_create(&t, NULL, held, (void *)6) == 0);
    atomic_store(&release, 1);
    wait_gone();
    r = in_ms(CLOCK_REALTIME, 5000);
    e = pthread_timedjoin_np(t, &ret, &r);
    printf("ended: timedjoin %s, value %ld\n", name(e), (long)ret);
    CHECK(pthread_create(&t, NULL, held, (void *)7) == 0);
    wait_gone();
    m = in_ms(CLOCK_MONOTONIC, 5000);
    e = pthread_clockjoin_np(t, &ret, CLOCK_MONOTONIC, &m);
    printf("ended: clockjoin %s, value %ld\n", name(e), (long)ret);
    atomic_store(&release, 0);
    CHECK(pthread_create(&t, NULL, held, (void *)8) == 0);
    while (atomic_load(&tid) == 0) test_usleep(100);
    atomic_store(&tid, 0);
    atomic_store(&release, 1);
    e = pthread_clockjoin_np(t, &ret, CLOCK_MONOTONIC, NULL);
    printf("null time: clockjoin %s, value %ld\n", name(e), (long)ret);

    CHECK(pthread_create(&t, NULL, joins_itself, NULL) == 0);
    CHECK(pthread_join(t, NULL) == 0);
    r = in_ms(CLOCK_REALTIME, 10);
    printf("itself: tryjoin %s, timedjoin %s, clockjoin %s; main itself: timedjoin %s\n",
           name(atomic_load(&self_results[0])), name(atomic_load(&self_results[1])),
           name(atomic_load(&self_results[2])), name(pthread_timedjoin_np(pthread_self(), NULL, &r)));

    atomic_store(&release, 0);
    pthread_attr_t a;
    CHECK(pthread_attr_init(&a) == 0);
    CHECK(pthread_attr_setdetachstate(&a, PTHREAD_CREATE_DETACHED) == 0);
    CHECK(pthread_create(&t, &a, held, NULL) == 0);
    r = in_ms(CLOCK_REALTIME, 10);
    m = in_ms(CLOCK_MONOTONIC, 10);
    printf("detached: tryjoin %s, timedjoin %s, clockjoin %s\n", name(pthread_tryjoin_np(t, NULL)),
           name(pthread_timedjoin_np(t, NULL, &r)),
           name(pthread_clockjoin_np(t, NULL, CLOCK_MONOTONIC, &m)));
    atomic_store(&release, 1);
    wait_gone();

    /* Cancellation points: a canceled timed join leaves its target joinable. */
    atomic_store(&release, 0);
    CHECK(pthread_create(&target, NULL, held, (void *)9) == 0);
    for (long clock = 0; clock < 2; clock++) {
        atomic_store(&joiner_in, 0);
        pthread_t j;
        CHECK(pthread_create(&j, NULL, timed_joiner, (void *)clock) == 0);
        test_wait_ge(&joiner_in, 1);
        test_msleep(20);
        CHECK(pthread_cancel(j) == 0);
        CHECK(pthread_join(j, &ret) == 0);
        printf("%s canceled while waiting: %s\n", clock ? "clockjoin" : "timedjoin",
               ret == PTHREAD_CANCELED ? "PTHREAD_CANCELED" : "returned");
    }
    pthread_t c;
    CHECK(pthread_create(&c, NULL, tryjoin_with_request_pending, NULL) == 0);
    CHECK(pthread_join(c, &ret) == 0);
    printf("tryjoin with a request pending: %s, then %s\n",
           atomic_load(&survived_tryjoin) == 1 ? "EBUSY" : "?",
           ret == PTHREAD_CANCELED ? "PTHREAD_CANCELED at the next point" : "returned");
    atomic_store(&release, 1);
    CHECK(pthread_join(target, &ret) == 0);
    printf("the target stayed joinable: value %ld\n", (long)ret);

    const char *env = getenv("R09_RACES");
    long races = env ? atol(env) : 300, timed_out = 0;
    for (long i = 1; i <= races; i++) {
        CHECK(pthread_create(&t, NULL, spins, (void *)i) == 0);
        struct timespec d = in_ms(i % 2 ? CLOCK_MONOTONIC : CLOCK_REALTIME, 0);
        d.tv_nsec += (i % 3) * 20000;
        if (d.tv_nsec >= 1000000000L) d.tv_sec++, d.tv_nsec -= 1000000000L;
        ret = NULL;
        e = i % 2 ? pthread_clockjoin_np(t, &ret, CLOCK_MONOTONIC, &d) : pthread_timedjoin_np(t, &ret, &d);
        CHECK(e == 0 || e == ETIMEDOUT);
        if (e == ETIMEDOUT) {
            timed_out++;
            CHECK(ret == NULL);
            CHECK(pthread_join(t, &ret) == 0);
        }
        CHECK(ret == (void *)i);
    }
    fprintf(stderr, "%ld timed-join races, %ld timed out then joined\n", races, timed_out);
    return 0;
}
