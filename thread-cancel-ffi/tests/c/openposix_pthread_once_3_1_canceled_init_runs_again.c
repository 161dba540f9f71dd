/* Open POSIX Test Suite, pthread_once 3-1 (our own test of the same assertion): an init routine
 * canceled at a cancellation point (the thread's type asynchronous, the routine in sleep()) has
 * the effect of pthread_once never having been called: the next call with the once-control runs
 * its init routine. */
#include <pthread.h>
#include "tc_test.h"

static pthread_once_t once = PTHREAD_ONCE_INIT;
static atomic_int first_entered, first_finished, second_ran;

static void first(void) {
    atomic_store(&first_entered, 1);
    sleep(10);
    atomic_store(&first_finished, 1); /* not canceled */
}

static void second(void) {
    atomic_store(&second_ran, 1);
}

static void *thread(void *arg) {
    (void)arg;
    CHECK(pthread_setcanceltype(PTHREAD_CANCEL_ASYNCHRONOUS, NULL) == 0);
    pthread_once(&once, first);
    return NULL;
}

int main(void) {
    alarm(20);
    pthread_t t;
    CHECK(pthread_create(&t, NULL, thread, NULL) == 0);
    test_wait_ge(&first_entered, 1);
    CHECK(pthread_cancel(t) == 0);
    void *ret;
    CHECK(pthread_join(t, &ret) == 0 && ret == PTHREAD_CANCELED);
    CHECK(!atomic_load(&first_finished));
    CHECK(pthread_once(&once, second) == 0);
    CHECK(atomic_load(&second_ran));
    printf("ok: after the canceled init routine, the next call ran its own\n");
    return 0;
}
