/* R24 (and R09, R18, R20, R21) for C11 <threads.h>: thrd_join, thrd_sleep, cnd_wait and
 * cnd_timedwait are cancellation points, as in glibc: a thread made by thrd_create blocked in
 * each (or entering it with a request pending) is canceled by pthread_cancel of its thrd_t,
 * its cleanup handler runs (a canceled condition wait holds the mutex again), its tss
 * destructor runs, and thrd_join reports -1 (PTHREAD_CANCELED as an int). Also glibc's
 * results: thrd_join of the start routine's int and of thrd_exit's, thrd_sleep's -1 with the
 * time left for a signal and -2 for a bad time, cnd_timedwait's thrd_timedout, thrd_detach,
 * thrd_current/thrd_equal, call_once across threads, tss_get/tss_set.
 *
 * TC_COMPARE_WITH_GLIBC: the runner also builds this against plain glibc; both print the same. */
#include <pthread.h>
#include <signal.h>
#include <threads.h>
#include <time.h>
#include "tc_test.h"

static mtx_t mtx;
static cnd_t cnd;
static tss_t key;
static atomic_int started, cleaned, destroyed, held_in_cleanup, once_runs;
static thrd_t blocked_forever;
static once_flag once = ONCE_FLAG_INIT;

enum kind { K_CND_WAIT, K_CND_TIMEDWAIT, K_THRD_SLEEP, K_THRD_JOIN, K_SLEEP_PENDING,
            K_CND_WAIT_PENDING, K_COUNT };
static const char *names[K_COUNT] = {"cnd_wait", "cnd_timedwait", "thrd_sleep", "thrd_join",
                                     "thrd_sleep (request pending)",
                                     "cnd_wait (request pending)"};

static void destructor(void *v) {
    (void)v;
    atomic_fetch_add(&destroyed, 1);
}

static void cleanup(void *arg) {
    /* A canceled condition wait holds the mutex again: unlocking it succeeds. */
    if (arg) atomic_store(&held_in_cleanup, mtx_unlock(&mtx) == thrd_success);
    atomic_fetch_add(&cleaned, 1);
}

static int forever(void *arg) {
    (void)arg;
    for (;;) pause();
    return 0;
}

static int blocker(void *arg) {
    int k = (int)(long)arg;
    CHECK(tss_set(key, &key) == thrd_success);
    int waits = k == K_CND_WAIT || k == K_CND_TIMEDWAIT || k == K_CND_WAIT_PENDING;
    if (waits) CHECK(mtx_lock(&mtx) == thrd_success);
    pthread_cleanup_push(cleanup, waits ? &mtx : NULL);
    atomic_store(&started, 1);
    struct timespec ts;
    switch (k) {
    case K_CND_WAIT:
        cnd_wait(&cnd, &mtx);
        break;
    case K_CND_TIMEDWAIT:
        timespec_get(&ts, TIME_UTC);
        ts.tv_sec += 30;
        cnd_timedwait(&cnd, &mtx, &ts);
        break;
    case K_THRD_SLEEP:
        thrd_sleep(&(struct timespec){30, 0}, NULL);
        break;
    case K_THRD_JOIN:
        thrd_join(blocked_forever, NULL);
        break;
    case K_SLEEP_PENDING:
        pthread_cancel(thrd_current());
        thrd_sleep(&(struct timespec){0, 1000}, NULL);
        break;
    case K_CND_WAIT_PENDING:
        pthread_cancel(thrd_current());
        cnd_wait(&cnd, &mtx);
        break;
    }
    pthread_cleanup_pop(0);
    return 1;
}

static int returns(void *arg) {
    return (int)(long)arg;
}

static void exit_handler(void *arg) {
    (void)arg;
    atomic_fetch_add(&cleaned, 1);
}

static int exits(void *arg) {
    (void)arg;
    pthread_cleanup_push(exit_handler, NULL);
    thrd_exit(7);
    pthread_cleanup_pop(0);
    return 0;
}

static void init_once(void) {
    atomic_fetch_add(&once_runs, 1);
}

static int calls_once(void *arg) {
    (void)arg;
    call_once(&once, init_once);
    return 0;
}

static void on_alarm(int sig) {
    (void)sig;
}

static int sleeper_result, sleeper_left;
static atomic_int sleeper_tid;

static int interrupted_sleeper(void *arg) {
    (void)arg;
    struct timespec left = {0, 0};
    atomic_store(&sleeper_tid, test_gettid());
    atomic_store(&started, 1);
    sleeper_result = thrd_sleep(&(struct timespec){30, 0}, &left);
    sleeper_left = left.tv_sec > 20 && left.tv_sec <= 30;
    return 0;
}

static double now(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec + t.tv_nsec / 1e9;
}

int main(void) {
    alarm(60);
    setvbuf(stdout, NULL, _IOLBF, 0);
    CHECK(mtx_init(&mtx, mtx_plain) == thrd_success);
    CHECK(cnd_init(&cnd) == thrd_success);
    CHECK(tss_create(&key, destructor) == thrd_success);
    CHECK(thrd_create(&blocked_forever, forever, NULL) == thrd_success);

    for (int k = 0; k < K_COUNT; k++) {
        atomic_store(&started, 0);
        atomic_store(&held_in_cleanup, 0);
        int c0 = atomic_load(&cleaned), d0 = atomic_load(&destroyed);
        thrd_t t;
        CHECK(thrd_create(&t, blocker, (void *)(long)k) == thrd_success);
        test_wait_ge(&started, 1);
        test_msleep(50);
        double t0 = now();
        int cr = pthread_cancel(t);
        int res = 0;
        int jr = thrd_join(t, &res);
        printf("%s: cancel %d, join %s, result %d (PTHREAD_CANCELED: %d), cleanup ran %d, "
               "mutex held in it %d, tss destructor ran %d, within 5 s %d\n",
               names[k], cr, jr == thrd_success ? "thrd_success" : "error", res,
               res == (int)(long)PTHREAD_CANCELED, atomic_load(&cleaned) - c0,
               atomic_load(&held_in_cleanup), atomic_load(&destroyed) - d0, now() - t0 < 5);
    }

    /* Results. */
    thrd_t t;
    int res = 0;
    CHECK(thrd_create(&t, returns, (void *)42L) == thrd_success);
    int jr = thrd_join(t, &res);
    printf("thrd_join of a return: %d, result %d\n", jr, res);
    int c0 = atomic_load(&cleaned);
    CHECK(thrd_create(&t, exits, NULL) == thrd_success);
    jr = thrd_join(t, &res);
    printf("thrd_join of thrd_exit(7): %d, result %d, its cleanup handler ran %d\n", jr, res,
           atomic_load(&cleaned) - c0);
    printf("thrd_equal(thrd_current(), thrd_current()) %d\n",
           thrd_equal(thrd_current(), thrd_current()) != 0);

    thrd_t ts[8];
    for (int i = 0; i < 8; i++) CHECK(thrd_create(&ts[i], calls_once, NULL) == thrd_success);
    for (int i = 0; i < 8; i++) CHECK(thrd_join(ts[i], NULL) == thrd_success);
    call_once(&once, init_once);
    printf("call_once: init ran %d time(s)\n", atomic_load(&once_runs));

    CHECK(tss_set(key, &res) == thrd_success);
    printf("tss_get %d\n", tss_get(key) == &res);

    mtx_lock(&mtx);
    struct timespec ts1;
    timespec_get(&ts1, TIME_UTC);
    ts1.tv_nsec += 20000000;
    if (ts1.tv_nsec >= 1000000000) ts1.tv_sec++, ts1.tv_nsec -= 1000000000;
    printf("cnd_timedwait past its time: %s\n",
           cnd_timedwait(&cnd, &mtx, &ts1) == thrd_timedout ? "thrd_timedout" : "other");
    mtx_unlock(&mtx);

    printf("thrd_sleep of a bad time: %d\n", thrd_sleep(&(struct timespec){0, -1}, NULL));
    printf("thrd_sleep 1 ms: %d\n", thrd_sleep(&(struct timespec){0, 1000000}, NULL));

    struct sigaction sa = {.sa_handler = on_alarm};
    sigemptyset(&sa.sa_mask);
    CHECK(sigaction(SIGUSR1, &sa, NULL) == 0);
    atomic_store(&started, 0);
    CHECK(thrd_create(&t, interrupted_sleeper, NULL) == thrd_success);
    test_wait_ge(&started, 1);
    test_wait_blocked(atomic_load(&sleeper_tid)); /* in thrd_sleep: the signal interrupts it */
    CHECK(pthread_kill(t, SIGUSR1) == 0);
    CHECK(thrd_join(t, NULL) == thrd_success);
    printf("thrd_sleep interrupted by a signal: %d, time left set %d\n", sleeper_result,
           sleeper_left);

    CHECK(thrd_create(&t, returns, (void *)0L) == thrd_success);
    printf("thrd_detach %d\n", thrd_detach(t));

    CHECK(pthread_cancel(blocked_forever) == 0);
    CHECK(thrd_join(blocked_forever, &res) == thrd_success);
    printf("a thread in pause canceled: result %d\n", res);
    return 0;
}
