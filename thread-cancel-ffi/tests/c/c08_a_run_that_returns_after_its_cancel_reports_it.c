/* C08 in C: a run never hides a cancel. A function that returns although its scope was canceled
 * before the run ended (cancellation disabled around the cancel, or no cancellation point met
 * after it) has its value stored in *result, and tc_scope_run still returns TC_SCOPE_CANCELED
 * (TC_SCOPE_TIMEDOUT for a deadline). A run whose scope is not canceled returns 0. In a thread
 * created by the library and in the main thread; the thread goes on clean. */
#include <poll.h>
#include <pthread.h>
#include <time.h>
#include "tc_test.h"

static void *cancel_while_disabled(void *arg) {
    int old;
    CHECK(tc_setcancelstate(TC_CANCEL_DISABLE, &old) == 0);
    CHECK(tc_scope_cancel((tc_scope_t *)arg) == 0);
    tc_testcancel(); /* held: disabled */
    CHECK(tc_setcancelstate(old, NULL) == 0);
    return (void *)0x77; /* no point after enabling: the cancel is missed */
}

static void *busy_past_deadline(void *arg) {
    (void)arg;
    struct timespec t0, t;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    do clock_gettime(CLOCK_MONOTONIC, &t); /* not a cancellation point */
    while ((t.tv_sec - t0.tv_sec) * 1000000000L + (t.tv_nsec - t0.tv_nsec) < 150000000L);
    return (void *)0x88;
}

static void *plain(void *arg) { return arg; }

static void checks(const char *where) {
    tc_scope_t *s = tc_scope_new();
    CHECK(s != NULL);
    void *result = NULL;
    int rc = tc_scope_run(s, plain, (void *)0x66, &result);
    CHECK(rc == 0 && result == (void *)0x66);
    result = NULL;
    rc = tc_scope_run(s, cancel_while_disabled, s, &result);
    if (rc != TC_SCOPE_CANCELED || result != (void *)0x77) {
        fprintf(stderr, "%s: rc %d (want %d), result %p (want 0x77)\n", where, rc,
                TC_SCOPE_CANCELED, result);
        exit(1);
    }
    /* The deadline timer is started first (under emulation its start can outlast a short
     * deadline, whose run would then never start). */
    tc_scope_t *warm = tc_scope_new_timeout_ns(1000000);
    CHECK(warm != NULL);
    (void)tc_scope_run(warm, plain, NULL, NULL);
    tc_scope_free(warm);
    tc_scope_t *d = tc_scope_new_timeout_ns(50000000); /* 50 ms; the function runs 150 ms */
    CHECK(d != NULL);
    result = NULL;
    rc = tc_scope_run(d, busy_past_deadline, NULL, &result);
    if (rc != TC_SCOPE_TIMEDOUT || result != (void *)0x88) {
        fprintf(stderr, "%s: deadline: rc %d (want %d), result %p (want 0x88)\n", where, rc,
                TC_SCOPE_TIMEDOUT, result);
        exit(1);
    }
    CHECK(poll(NULL, 0, 5) == 0);
    tc_testcancel();
    tc_scope_free(d);
    tc_scope_free(s);
}

static void *worker(void *arg) {
    (void)arg;
    checks("library thread");
    return (void *)42;
}

int main(void) {
    alarm(30);
    pthread_t t;
    CHECK(pthread_create(&t, NULL, worker, NULL) == 0);
    void *ret;
    CHECK(pthread_join(t, &ret) == 0);
    CHECK(ret == (void *)42);
    checks("main thread");
    printf("ok: runs that returned after their cancel reported it, with their value\n");
    return 0;
}
