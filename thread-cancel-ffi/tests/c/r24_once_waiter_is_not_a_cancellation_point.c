/* pthread_once is not a cancellation point (POSIX; glibc's waiters are not either): a thread
 * waiting in pthread_once for another thread's init routine, with a deferred cancellation
 * request, keeps waiting; it returns from pthread_once once the init routine has completed, and
 * acts on the request at its next cancellation point. */
#include <pthread.h>
#include "tc_test.h"

static pthread_once_t once = PTHREAD_ONCE_INIT;
static atomic_int in_init, release_init, init_runs, waiter_tid, waiter_returned;

static void init(void) {
    atomic_fetch_add(&init_runs, 1);
    atomic_store(&in_init, 1);
    test_wait_ge(&release_init, 1); /* no cancellation point */
}

static void *initializer(void *arg) {
    (void)arg;
    CHECK(pthread_once(&once, init) == 0);
    return (void *)1;
}

static void *waiter(void *arg) {
    (void)arg;
    atomic_store(&waiter_tid, test_gettid());
    CHECK(pthread_once(&once, init) == 0);
    atomic_store(&waiter_returned, 1);
    pthread_testcancel();
    return (void *)2;
}

int main(void) {
    alarm(20);
    pthread_t i, w;
    CHECK(pthread_create(&i, NULL, initializer, NULL) == 0);
    test_wait_ge(&in_init, 1);
    CHECK(pthread_create(&w, NULL, waiter, NULL) == 0);
    while (atomic_load(&waiter_tid) == 0) test_usleep(100);
    test_wait_blocked(atomic_load(&waiter_tid));
    CHECK(pthread_cancel(w) == 0);
    test_msleep(50);
    CHECK(pthread_kill(w, 0) == 0); /* still there, still waiting */
    CHECK(!atomic_load(&waiter_returned));
    atomic_store(&release_init, 1);
    void *ret;
    CHECK(pthread_join(i, &ret) == 0 && ret == (void *)1);
    CHECK(pthread_join(w, &ret) == 0 && ret == PTHREAD_CANCELED);
    CHECK(atomic_load(&waiter_returned) && atomic_load(&init_runs) == 1);
    printf("ok: a waiter in pthread_once kept waiting with a request pending, returned after the "
           "init routine, then acted at pthread_testcancel\n");
    return 0;
}
