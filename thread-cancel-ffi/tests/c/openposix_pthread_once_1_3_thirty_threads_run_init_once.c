/* Open POSIX Test Suite, pthread_once 1-3 (our own test of the same assertion): 30 threads call
 * pthread_once with one once-control; the init routine runs exactly once. */
#include <pthread.h>
#include "tc_test.h"

#define NTHREADS 30

static pthread_mutex_t mutex = PTHREAD_MUTEX_INITIALIZER;
static int runs;
static atomic_int go;

static void init(void) {
    CHECK(pthread_mutex_lock(&mutex) == 0);
    runs++;
    CHECK(pthread_mutex_unlock(&mutex) == 0);
}

static void *thread(void *arg) {
    test_wait_ge(&go, 1); /* all start together */
    CHECK(pthread_once(arg, init) == 0);
    return NULL;
}

int main(void) {
    alarm(20);
    pthread_once_t once = PTHREAD_ONCE_INIT;
    pthread_t t[NTHREADS];
    for (int i = 0; i < NTHREADS; i++) CHECK(pthread_create(&t[i], NULL, thread, &once) == 0);
    atomic_store(&go, 1);
    for (int i = 0; i < NTHREADS; i++) CHECK(pthread_join(t[i], NULL) == 0);
    CHECK(pthread_mutex_lock(&mutex) == 0);
    CHECK(runs == 1);
    CHECK(pthread_mutex_unlock(&mutex) == 0);
    printf("ok: %d threads, one run\n", NTHREADS);
    return 0;
}
