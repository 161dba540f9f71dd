/* R14: pthread_testcancel is a cancellation point: with cancellation enabled and a request
 * pending the thread acts there; otherwise it returns.
 *
 *   A: a compute loop whose only point is testcancel is canceled there (cleanup runs, the code
 *      after it does not); before the request, thousands of testcancel calls returned.
 *   B: pending but disabled: testcancel returns; enabled: the next testcancel acts.
 *   C: in main (nothing pending) it simply returns. */
#include <pthread.h>
#include "tc_test.h"

static atomic_long calls;
static atomic_int a_after, a_cleaned;

static void a_cleanup(void *arg) {
    (void)arg;
    atomic_store(&a_cleaned, 1);
}

static void *loop(void *arg) {
    (void)arg;
    unsigned long x = 1;
    pthread_cleanup_push(a_cleanup, NULL);
    for (;;) {
        for (int i = 0; i < 100; i++) x = x * 6364136223846793005UL + 1442695040888963407UL;
        pthread_testcancel();
        atomic_fetch_add(&calls, 1);
        if (x == 0) break;
    }
    atomic_store(&a_after, 1);
    pthread_cleanup_pop(0);
    return NULL;
}

static atomic_int b_ready, b_canceled, b_step;

static void *disabled_then_enabled(void *arg) {
    (void)arg;
    CHECK(pthread_setcancelstate(PTHREAD_CANCEL_DISABLE, NULL) == 0);
    atomic_store(&b_ready, 1);
    test_wait_ge(&b_canceled, 1);
    for (int i = 0; i < 1000; i++) pthread_testcancel(); /* pending, disabled: returns */
    atomic_store(&b_step, 1);
    CHECK(pthread_setcancelstate(PTHREAD_CANCEL_ENABLE, NULL) == 0);
    atomic_store(&b_step, 2);
    pthread_testcancel(); /* acts */
    atomic_store(&b_step, 3);
    return NULL;
}

int main(void) {
    alarm(20);
    for (int i = 0; i < 1000; i++) pthread_testcancel(); /* main, nothing pending */

    pthread_t t;
    CHECK(pthread_create(&t, NULL, loop, NULL) == 0);
    while (atomic_load(&calls) < 1000) test_msleep(1);
    CHECK(pthread_cancel(t) == 0);
    void *ret;
    CHECK(pthread_join(t, &ret) == 0);
    CHECK(ret == PTHREAD_CANCELED);
    CHECK(atomic_load(&a_cleaned) == 1 && atomic_load(&a_after) == 0);

    CHECK(pthread_create(&t, NULL, disabled_then_enabled, NULL) == 0);
    test_wait_ge(&b_ready, 1);
    CHECK(pthread_cancel(t) == 0);
    atomic_store(&b_canceled, 1);
    CHECK(pthread_join(t, &ret) == 0);
    CHECK(ret == PTHREAD_CANCELED);
    CHECK(atomic_load(&b_step) == 2);

    printf("ok: testcancel acted in a compute loop (after >= 1000 returns), returned while "
           "disabled and in main\n");
    return 0;
}
