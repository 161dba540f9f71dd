/* R06 in main: with the asynchronous type, the main thread's pthread_cancel of itself is acted
 * on at once (it would otherwise spin below forever): its cleanup handler and
 * thread-specific-data destructor run, the main thread ends, and the process exits with status
 * 0 when its last thread ends.
 * TC_COMPARE_WITH_GLIBC */
#include <pthread.h>
#include "tc_test.h"

static pthread_key_t key;
static atomic_int destroyed;
static volatile unsigned long spins;

static void handler(void *arg) {
    (void)arg;
    printf("main's cleanup handler ran\n");
}

static void destructor(void *value) {
    (void)value;
    printf("main's key destructor ran\n");
    fflush(stdout);
    atomic_store(&destroyed, 1);
}

static void *last_thread(void *arg) {
    (void)arg;
    test_wait_ge(&destroyed, 1);
    printf("the last thread returns\n");
    return NULL;
}

int main(void) {
    alarm(20);
    CHECK(pthread_key_create(&key, destructor) == 0);
    CHECK(pthread_setspecific(key, &key) == 0);
    pthread_t t;
    CHECK(pthread_create(&t, NULL, last_thread, NULL) == 0);
    pthread_cleanup_push(handler, NULL);
    CHECK(pthread_setcanceltype(PTHREAD_CANCEL_ASYNCHRONOUS, NULL) == 0);
    pthread_cancel(pthread_self());
    for (;;) spins++; /* pure computation: no cancellation point */
    pthread_cleanup_pop(0);
    return 1;
}
