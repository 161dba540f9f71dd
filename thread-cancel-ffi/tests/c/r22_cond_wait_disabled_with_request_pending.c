/* R22 with R03: a thread that has cancellation disabled and a request pending waits on a
 * condition variable like any other thread: the wait releases the mutex, blocks until it is
 * signaled, returns 0 with the mutex held; the request stays pending and is acted on at the
 * first point after the thread enables cancellation.
 *
 * A regression test: in the first C ABI the waiter never released the mutex — the wake-up
 * callback it registered with on_cancel ran at once in the waiter itself (a request was
 * pending) and spun waiting for the waiter, i.e. itself, to release the mutex. Fixed in 1cf2c8b.
 * Built against plain glibc (without the compat header) this program passes too. */
#include <pthread.h>
#include <time.h>
#include "tc_test.h"

static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t cv = PTHREAD_COND_INITIALIZER;
static int flag, in_wait; /* under mu */
static atomic_int ready, canceled, after_wait, after_enable;

static void *waiter(void *arg) {
    (void)arg;
    CHECK(pthread_setcancelstate(PTHREAD_CANCEL_DISABLE, NULL) == 0);
    atomic_store(&ready, 1);
    test_wait_ge(&canceled, 1); /* the request is pending */
    CHECK(pthread_mutex_lock(&mu) == 0);
    in_wait = 1;
    while (!flag) CHECK(pthread_cond_wait(&cv, &mu) == 0);
    CHECK(pthread_mutex_unlock(&mu) == 0);
    atomic_store(&after_wait, 1);
    CHECK(pthread_setcancelstate(PTHREAD_CANCEL_ENABLE, NULL) == 0);
    atomic_store(&after_enable, 1);
    pthread_testcancel();
    atomic_store(&after_enable, 2);
    return NULL;
}

int main(void) {
    alarm(20);
    pthread_t t;
    CHECK(pthread_create(&t, NULL, waiter, NULL) == 0);
    test_wait_ge(&ready, 1);
    CHECK(pthread_cancel(t) == 0);
    atomic_store(&canceled, 1);
    /* Wait until the waiter is in the wait: it took the mutex, set in_wait, and released the
     * mutex in pthread_cond_wait. A waiter that never releases it is the bug: 5 s is far more
     * than a correct wait needs. */
    struct timespec t0, t1;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    for (;;) {
        if (pthread_mutex_trylock(&mu) == 0) {
            if (in_wait) break; /* holding mu */
            CHECK(pthread_mutex_unlock(&mu) == 0);
        }
        clock_gettime(CLOCK_MONOTONIC, &t1);
        if (t1.tv_sec - t0.tv_sec >= 5) {
            fprintf(stderr, "a disabled thread with a request pending never released the mutex "
                    "in pthread_cond_wait (5 s)\n");
            _exit(1);
        }
        test_msleep(1);
    }
    flag = 1;
    CHECK(pthread_cond_signal(&cv) == 0);
    CHECK(pthread_mutex_unlock(&mu) == 0);
    void *ret;
    CHECK(pthread_join(t, &ret) == 0);
    CHECK(ret == PTHREAD_CANCELED);
    CHECK(atomic_load(&after_wait) == 1 && atomic_load(&after_enable) == 1);
    printf("ok: disabled with a request pending, the cond wait blocked and returned normally; "
           "acted after enable\n");
    return 0;
}
