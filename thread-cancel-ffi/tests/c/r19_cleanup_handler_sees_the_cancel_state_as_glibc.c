/* Inside a cleanup handler run by a cancel (and by pthread_exit), pthread_setcancelstate and
 * pthread_setcanceltype report the state and type the thread last set, as glibc (which does not
 * change them when it acts; it marks the thread as exiting), and nothing the handler does lets
 * a second cancel act (R19):
 *   - deferred, canceled in pthread_testcancel: the handler's setcancelstate(DISABLE) reports
 *     ENABLE, a setcancelstate(ENABLE) then reports DISABLE; setcanceltype reports DEFERRED;
 *     a second pthread_cancel of itself and a pthread_testcancel, enabled and asynchronous,
 *     do not end the handler;
 *   - a thread that disabled cancellation and called pthread_exit: the handler sees DISABLE;
 *   - an asynchronous thread canceled in a compute loop: the handler sees ENABLE and
 *     ASYNCHRONOUS.
 * Through the header the handler's setcancelstate used to report DISABLE in the first and last
 * cases ("canceled, deferred: state was DISABLE, then DISABLE").
 *
 * TC_COMPARE_WITH_GLIBC: the runner also builds this against plain glibc; both print the same. */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <pthread.h>
#include "tc_test.h"

static const char *state(int s) {
    return s == PTHREAD_CANCEL_ENABLE ? "ENABLE" : s == PTHREAD_CANCEL_DISABLE ? "DISABLE" : "?";
}

static const char *type(int t) {
    return t == PTHREAD_CANCEL_DEFERRED ? "DEFERRED"
           : t == PTHREAD_CANCEL_ASYNCHRONOUS ? "ASYNCHRONOUS" : "?";
}

static void handler(void *arg) {
    const char *what = arg;
    int s1, s2, s3, t1, t2;
    CHECK(pthread_setcancelstate(PTHREAD_CANCEL_DISABLE, &s1) == 0);
    CHECK(pthread_setcancelstate(PTHREAD_CANCEL_ENABLE, &s2) == 0);
    CHECK(pthread_setcanceltype(PTHREAD_CANCEL_ASYNCHRONOUS, &t1) == 0);
    /* R19: enabled and asynchronous, canceled again: no second cancellation acts. */
    CHECK(pthread_cancel(pthread_self()) == 0);
    pthread_testcancel();
    CHECK(pthread_setcanceltype(PTHREAD_CANCEL_DEFERRED, &t2) == 0);
    CHECK(pthread_setcancelstate(PTHREAD_CANCEL_ENABLE, &s3) == 0);
    printf("%s: state was %s, then %s, then %s; type was %s, then %s; handler ran to its end\n",
           what, state(s1), state(s2), state(s3), type(t1), type(t2));
}

static atomic_int started, go;

static void *deferred(void *arg) {
    (void)arg;
    pthread_cleanup_push(handler, "canceled, deferred");
    atomic_store(&started, 1);
    test_wait_ge(&go, 1);
    pthread_testcancel();
    pthread_cleanup_pop(0);
    return NULL;
}

static void *exits_disabled(void *arg) {
    (void)arg;
    pthread_cleanup_push(handler, "pthread_exit, disabled");
    CHECK(pthread_setcancelstate(PTHREAD_CANCEL_DISABLE, NULL) == 0);
    pthread_exit((void *)7);
    pthread_cleanup_pop(0);
    return NULL;
}

static volatile unsigned long spin;

static void *asynchronous(void *arg) {
    (void)arg;
    pthread_cleanup_push(handler, "canceled, asynchronous");
    CHECK(pthread_setcanceltype(PTHREAD_CANCEL_ASYNCHRONOUS, NULL) == 0);
    atomic_store(&started, 1);
    for (;;) spin++;
    pthread_cleanup_pop(0);
    return NULL;
}

int main(void) {
    alarm(60);
    pthread_t t;
    void *r;
    CHECK(pthread_create(&t, NULL, deferred, NULL) == 0);
    test_wait_ge(&started, 1);
    CHECK(pthread_cancel(t) == 0);
    atomic_store(&go, 1);
    CHECK(pthread_join(t, &r) == 0);
    printf("joined: %s\n", r == PTHREAD_CANCELED ? "PTHREAD_CANCELED" : "another value");

    CHECK(pthread_create(&t, NULL, exits_disabled, NULL) == 0);
    CHECK(pthread_join(t, &r) == 0);
    printf("joined: %s\n", r == (void *)7 ? "its exit value" : "another value");

    atomic_store(&started, 0);
    CHECK(pthread_create(&t, NULL, asynchronous, NULL) == 0);
    test_wait_ge(&started, 1);
    CHECK(pthread_cancel(t) == 0);
    CHECK(pthread_join(t, &r) == 0);
    printf("joined: %s\n", r == PTHREAD_CANCELED ? "PTHREAD_CANCELED" : "another value");
    return 0;
}
