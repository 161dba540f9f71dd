/* R11: pthread_setcancelstate returns the previous state in *oldstate; oldstate may be NULL; a
 * value other than ENABLE/DISABLE is EINVAL and changes nothing (nor writes *oldstate).
 * Checked in a created thread (and the round trip in main too), and the state is shown in
 * behaviour: after the EINVAL calls a pending request is still held (disabled), then acted on
 * once enabled. */
#include <limits.h>
#include <pthread.h>
#include "tc_test.h"

static const int bad[] = {2, 3, -1, 42, INT_MAX, INT_MIN};
#define NBAD (int)(sizeof bad / sizeof bad[0])

static atomic_int ready, canceled, after;

static void check_round_trip(void) {
    int old = -7;
    CHECK(pthread_setcancelstate(PTHREAD_CANCEL_ENABLE, &old) == 0);
    CHECK(old == PTHREAD_CANCEL_ENABLE);
    CHECK(pthread_setcancelstate(PTHREAD_CANCEL_DISABLE, &old) == 0);
    CHECK(old == PTHREAD_CANCEL_ENABLE);
    CHECK(pthread_setcancelstate(PTHREAD_CANCEL_DISABLE, &old) == 0);
    CHECK(old == PTHREAD_CANCEL_DISABLE);
    CHECK(pthread_setcancelstate(PTHREAD_CANCEL_ENABLE, NULL) == 0); /* NULL is fine */
    CHECK(pthread_setcancelstate(PTHREAD_CANCEL_DISABLE, NULL) == 0);
    CHECK(pthread_setcancelstate(PTHREAD_CANCEL_ENABLE, &old) == 0);
    CHECK(old == PTHREAD_CANCEL_DISABLE);
    for (int i = 0; i < NBAD; i++) {
        old = -7;
        CHECK(pthread_setcancelstate(bad[i], &old) == EINVAL);
        CHECK(old == -7);
        CHECK(pthread_setcancelstate(bad[i], NULL) == EINVAL);
    }
    CHECK(pthread_setcancelstate(PTHREAD_CANCEL_ENABLE, &old) == 0);
    CHECK(old == PTHREAD_CANCEL_ENABLE); /* unchanged by the EINVAL calls */
}

static void *worker(void *arg) {
    (void)arg;
    check_round_trip();
    int old = -7;
    CHECK(pthread_setcancelstate(PTHREAD_CANCEL_DISABLE, NULL) == 0);
    atomic_store(&ready, 1);
    test_wait_ge(&canceled, 1);
    for (int i = 0; i < NBAD; i++) CHECK(pthread_setcancelstate(bad[i], NULL) == EINVAL);
    pthread_testcancel(); /* still disabled: not acted on */
    CHECK(pthread_setcancelstate(PTHREAD_CANCEL_DISABLE, &old) == 0);
    CHECK(old == PTHREAD_CANCEL_DISABLE);
    pthread_testcancel();
    atomic_store(&after, 1);
    CHECK(pthread_setcancelstate(PTHREAD_CANCEL_ENABLE, NULL) == 0);
    pthread_testcancel(); /* acts */
    atomic_store(&after, 2);
    return NULL;
}

int main(void) {
    alarm(20);
    check_round_trip(); /* main (not created by pthread_create) too */
    pthread_t t;
    CHECK(pthread_create(&t, NULL, worker, NULL) == 0);
    test_wait_ge(&ready, 1);
    CHECK(pthread_cancel(t) == 0);
    atomic_store(&canceled, 1);
    void *ret;
    CHECK(pthread_join(t, &ret) == 0);
    CHECK(ret == PTHREAD_CANCELED);
    CHECK(atomic_load(&after) == 1);
    printf("ok: previous state returned, NULL accepted, %d bad values EINVAL with no change\n",
           NBAD);
    return 0;
}
