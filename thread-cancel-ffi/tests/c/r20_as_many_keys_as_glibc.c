/* A program gets as many thread-specific keys as on glibc: pthread_key_create succeeds the
 * same number of times before EAGAIN (PTHREAD_KEYS_MAX, 1024, less the keys the C library and
 * the runtime hold), in main and again in a thread, after every key is deleted.
 * Through the header the program used to get one key fewer ("keys created: 1023").
 *
 * TC_COMPARE_WITH_GLIBC: the runner also builds this against plain glibc; both print the same. */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <limits.h>
#include <pthread.h>
#include "tc_test.h"

static pthread_key_t keys[2 * PTHREAD_KEYS_MAX];

static int fill_and_empty(void) {
    int n = 0, e;
    while (n < 2 * PTHREAD_KEYS_MAX && (e = pthread_key_create(&keys[n], NULL)) == 0) n++;
    CHECK(n < 2 * PTHREAD_KEYS_MAX && e == EAGAIN);
    for (int i = 0; i < n; i++) CHECK(pthread_key_delete(keys[i]) == 0);
    return n;
}

static void *in_a_thread(void *arg) {
    (void)arg;
    printf("keys created in a thread: %d\n", fill_and_empty());
    return NULL;
}

int main(void) {
    alarm(60);
    printf("PTHREAD_KEYS_MAX: %d\n", PTHREAD_KEYS_MAX);
    printf("keys created: %d\n", fill_and_empty());
    pthread_t t;
    CHECK(pthread_create(&t, NULL, in_a_thread, NULL) == 0);
    CHECK(pthread_join(t, NULL) == 0);
    printf("keys created again in main: %d\n", fill_and_empty());
    return 0;
}
