/* R22 with R03: a thread that has cancellation disabled and a request pending waits on a
 * condition variable like any other thread: the wait releases the mutex, blocks until it is
 * signaled, returns 0 with the mutex held; the request stays pending and is acted on at the
 * first point after the thread enables cancellation.
 *
 * KNOWN LIBRARY BUG (kept as r22_cond_wait_disabled_with_request_pending.c.disabled until
 * fixed): the waiter never releases the mutex and spins forever inside pthread_cond_wait.
 * thread-cancel-ffi/src/waits.rs:79 registers the wake-up callback with
 * thread_cancel::on_cancel, which runs the callback at once, in the calling thread, when a
 * request is already pending (on_cancel.rs: "If a request is already pending, f runs at once,
 * here"); the callback, wake() (waits.rs:42-55), waits for the waiter to stop owning the mutex
 * ("between its check and its sleep") — but the waiter is itself, holding the mutex, and it
 * never gets to the wait: an endless yield loop. The same livelock happens to an enabled
 * waiter when the request lands between the point at waits.rs:69 and the registration at
 * waits.rs:79 (seen as a 20 s hang in the R22 signal/cancel race).
 * Failing check: "the waiter released the mutex" (main's trylock keeps returning EBUSY).
 * Built against plain glibc (without the compat header) this program passes. */
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
            fprintf(stderr, "LIBRARY BUG: a disabled thread with a request pending never "
                    "released the mutex in pthread_cond_wait (it spins in its own on_cancel "
                    "callback, waits.rs:79 -> wake())\n");
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
