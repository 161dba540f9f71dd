/* R12: pthread_setcanceltype returns the previous type in *oldtype; oldtype may be NULL; a value
 * other than DEFERRED/ASYNCHRONOUS is EINVAL and changes nothing (nor writes *oldtype). Checked
 * in a created thread and in main; the type is shown in behaviour: after the EINVAL calls a
 * pending request is still deferred (not acted on in a loop without points), then acted on at
 * testcancel. */
#include <limits.h>
#include <pthread.h>
#include "tc_test.h"

static const int bad[] = {2, 3, -1, 42, INT_MAX, INT_MIN};
#define NBAD (int)(sizeof bad / sizeof bad[0])

static atomic_int ready, canceled, after;
static atomic_long spins;

static void check_round_trip(void) {
    int old = -7;
    /* Disabled around the ASYNCHRONOUS stretch: nothing here may be interrupted. */
    CHECK(pthread_setcancelstate(PTHREAD_CANCEL_DISABLE, NULL) == 0);
    CHECK(pthread_setcanceltype(PTHREAD_CANCEL_DEFERRED, &old) == 0);
    CHECK(old == PTHREAD_CANCEL_DEFERRED);
    CHECK(pthread_setcanceltype(PTHREAD_CANCEL_ASYNCHRONOUS, &old) == 0);
    CHECK(old == PTHREAD_CANCEL_DEFERRED);
    CHECK(pthread_setcanceltype(PTHREAD_CANCEL_ASYNCHRONOUS, &old) == 0);
    CHECK(old == PTHREAD_CANCEL_ASYNCHRONOUS);
    for (int i = 0; i < NBAD; i++) {
        old = -7;
        CHECK(pthread_setcanceltype(bad[i], &old) == EINVAL);
        CHECK(old == -7);
        CHECK(pthread_setcanceltype(bad[i], NULL) == EINVAL);
    }
    CHECK(pthread_setcanceltype(PTHREAD_CANCEL_DEFERRED, &old) == 0);
    CHECK(old == PTHREAD_CANCEL_ASYNCHRONOUS); /* unchanged by the EINVAL calls */
    CHECK(pthread_setcanceltype(PTHREAD_CANCEL_ASYNCHRONOUS, NULL) == 0); /* NULL is fine */
    CHECK(pthread_setcanceltype(PTHREAD_CANCEL_DEFERRED, NULL) == 0);
    CHECK(pthread_setcanceltype(PTHREAD_CANCEL_DEFERRED, &old) == 0);
    CHECK(old == PTHREAD_CANCEL_DEFERRED);
    CHECK(pthread_setcancelstate(PTHREAD_CANCEL_ENABLE, NULL) == 0);
}

static void *worker(void *arg) {
    (void)arg;
    check_round_trip();
    atomic_store(&ready, 1);
    test_wait_ge(&canceled, 1);
    for (int i = 0; i < NBAD; i++) CHECK(pthread_setcanceltype(bad[i], NULL) == EINVAL);
    /* Still deferred: the pending request is not acted on in a loop without points. */
    for (long i = 0; i < 1000000; i++) atomic_fetch_add(&spins, 1);
    atomic_store(&after, 1);
    pthread_testcancel(); /* acts */
    atomic_store(&after, 2);
    return NULL;
}

int main(void) {
    alarm(20);
    check_round_trip();
    pthread_t t;
    CHECK(pthread_create(&t, NULL, worker, NULL) == 0);
    test_wait_ge(&ready, 1);
    CHECK(pthread_cancel(t) == 0);
    atomic_store(&canceled, 1);
    void *ret;
    CHECK(pthread_join(t, &ret) == 0);
    CHECK(ret == PTHREAD_CANCELED);
    CHECK(atomic_load(&after) == 1);
    CHECK(atomic_load(&spins) == 1000000);
    printf("ok: previous type returned, NULL accepted, %d bad values EINVAL with no change\n",
           NBAD);
    return 0;
}
