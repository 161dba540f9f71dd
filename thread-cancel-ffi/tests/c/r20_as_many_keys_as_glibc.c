/* A program gets as many thread-specific keys as on glibc: pthread_key_create succeeds the same
 * number of times before EAGAIN (PTHREAD_KEYS_MAX, 1024, less the keys the C library holds),
 * counted (and every key deleted again) at the start of main, after main has used the library
 * (pthread_self, pthread_setcancelstate, a cancel of a thread blocked in read and its join,
 * which give main its control block), inside a thread, and after that thread's end.
 * Through the header the count used to drop to 1023 once main had used the library: the Rust
 * standard library took a key of the C library's for itself the first time the library asked
 * it for main's thread handle ("keys created after main used the library: 1023").
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
    int n = 0, e = 0;
    while (n < 2 * PTHREAD_KEYS_MAX && (e = pthread_key_create(&keys[n], NULL)) == 0) n++;
    CHECK(n < 2 * PTHREAD_KEYS_MAX && e == EAGAIN);
    for (int i = 0; i < n; i++) CHECK(pthread_key_delete(keys[i]) == 0);
    return n;
}

static int fds[2];
static atomic_int reader_tid;

static void *reader(void *arg) {
    (void)arg;
    atomic_store(&reader_tid, test_gettid());
    char c;
    ssize_t n = read(fds[0], &c, 1);
    (void)n;
    return NULL;
}

static void *in_a_thread(void *arg) {
    (void)arg;
    printf("keys created in a thread: %d\n", fill_and_empty());
    return NULL;
}

int main(void) {
    alarm(60);
    printf("PTHREAD_KEYS_MAX: %d\n", PTHREAD_KEYS_MAX);
    printf("keys created at the start: %d\n", fill_and_empty());

    pthread_t me = pthread_self(), t;
    int old;
    CHECK(pthread_setcancelstate(PTHREAD_CANCEL_DISABLE, &old) == 0);
    CHECK(pthread_setcancelstate(old, NULL) == 0);
    CHECK(pipe(fds) == 0);
    CHECK(pthread_create(&t, NULL, reader, NULL) == 0);
    test_wait_ge(&reader_tid, 1);
    test_wait_blocked(atomic_load(&reader_tid));
    CHECK(pthread_cancel(t) == 0);
    void *r;
    CHECK(pthread_join(t, &r) == 0 && r == PTHREAD_CANCELED);
    CHECK(pthread_equal(me, pthread_self()));
    printf("keys created after main used the library: %d\n", fill_and_empty());

    CHECK(pthread_create(&t, NULL, in_a_thread, NULL) == 0);
    CHECK(pthread_join(t, NULL) == 0);
    printf("keys created after the thread ended: %d\n", fill_and_empty());
    return 0;
}
