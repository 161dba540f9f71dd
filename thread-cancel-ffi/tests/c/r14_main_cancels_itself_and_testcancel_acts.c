/* R14 in main: the main thread cancels itself (pthread_cancel(pthread_self())), and
 * pthread_testcancel acts there as in any thread: main's cleanup handlers run, then its
 * thread-specific-data destructors, and the main thread ends while the process lives on until
 * its last thread ends (as pthread_exit in main); the process exits with status 0.
 * TC_COMPARE_WITH_GLIBC */
#include <pthread.h>
#include "tc_test.h"

static pthread_key_t key;
static atomic_int destroyed;

static void handler(void *arg) {
    printf("main's cleanup handler %s\n", (const char *)arg);
}

static void destructor(void *value) {
    printf("main's key destructor: %s\n", (const char *)value);
    fflush(stdout);
    atomic_store(&destroyed, 1);
}

static void *last_thread(void *arg) {
    (void)arg;
    test_wait_ge(&destroyed, 1); /* main's destructors run before the process ends */
    printf("the last thread returns\n");
    return NULL;
}

int main(void) {
    alarm(20);
    CHECK(pthread_key_create(&key, destructor) == 0);
    CHECK(pthread_setspecific(key, "ran") == 0);
    pthread_t t;
    CHECK(pthread_create(&t, NULL, last_thread, NULL) == 0);
    pthread_cleanup_push(handler, "pushed first ran second");
    pthread_cleanup_push(handler, "pushed last ran first");
    CHECK(pthread_cancel(pthread_self()) == 0);
    printf("main goes on until a cancellation point\n");
    pthread_testcancel();
    printf("main went past pthread_testcancel\n");
    exit(1);
    pthread_cleanup_pop(0);
    pthread_cleanup_pop(0);
    return 1;
}
