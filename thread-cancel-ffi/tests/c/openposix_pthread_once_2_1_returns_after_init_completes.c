/* Open POSIX Test Suite, pthread_once 2-1 (our own test of the same assertion): pthread_once
 * returns only once the init routine has completed, in the thread that runs it and in the
 * threads that call it meanwhile. */
#include <pthread.h>
#include "tc_test.h"

#define NTHREADS 4

static pthread_once_t once = PTHREAD_ONCE_INIT;
static atomic_int started, completed, early;

static void init(void) {
    atomic_store(&started, 1);
    usleep(100 * 1000); /* the init routine takes a while (a cancellation point: not canceled) */
    atomic_store(&completed, 1);
}

static void *thread(void *arg) {
    (void)arg;
    CHECK(pthread_once(&once, init) == 0);
    if (!atomic_load(&completed)) atomic_store(&early, 1);
    return NULL;
}

int main(void) {
    alarm(20);
    pthread_t t[NTHREADS];
    CHECK(pthread_create(&t[0], NULL, thread, NULL) == 0);
    test_wait_ge(&started, 1);
    for (int i = 1; i < NTHREADS; i++) CHECK(pthread_create(&t[i], NULL, thread, NULL) == 0);
    for (int i = 0; i < NTHREADS; i++) CHECK(pthread_join(t[i], NULL) == 0);
    CHECK(!atomic_load(&early));
    printf("ok: no call returned before the init routine completed\n");
    return 0;
}
