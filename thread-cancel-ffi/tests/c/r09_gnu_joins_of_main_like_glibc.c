#define _GNU_SOURCE
/* R09 and R21 together: glibc's GNU joins also take the main thread's id.
 * While main runs, pthread_tryjoin_np gives EBUSY and pthread_timedjoin_np /
 * pthread_clockjoin_np give ETIMEDOUT, main staying joinable; once main has called
 * pthread_exit(value), a timed join gets the value, and by then main's cleanup handler and its
 * key's destructor have run. The joiner is the last thread: its end ends the process with
 * status 0 (and flushes stdout).
 *
 * TC_COMPARE_WITH_GLIBC: the runner also builds this against plain glibc; both print the same. */
#include <pthread.h>
#include <time.h>
#include "tc_test.h"

static pthread_t main_thread;
static pthread_key_t key;
static atomic_int tried, handler_ran, key_destroyed;

static void handler(void *arg) {
    (void)arg;
    atomic_store(&handler_ran, 1);
}

static void destructor(void *value) {
    (void)value;
    atomic_store(&key_destroyed, 1);
}

static struct timespec in_ms(clockid_t clock, long ms) {
    struct timespec t;
    clock_gettime(clock, &t);
    t.tv_nsec += (ms % 1000) * 1000000L;
    t.tv_sec += ms / 1000 + t.tv_nsec / 1000000000L;
    t.tv_nsec %= 1000000000L;
    return t;
}

static void *joiner(void *arg) {
    (void)arg;
    void *value = NULL;
    CHECK(pthread_tryjoin_np(main_thread, &value) == EBUSY);
    struct timespec t = in_ms(CLOCK_REALTIME, 20);
    CHECK(pthread_timedjoin_np(main_thread, &value, &t) == ETIMEDOUT);
    t = in_ms(CLOCK_MONOTONIC, 20);
    CHECK(pthread_clockjoin_np(main_thread, &value, CLOCK_MONOTONIC, &t) == ETIMEDOUT);
    CHECK(value == NULL);
    printf("main running: tryjoin EBUSY, timedjoin and clockjoin ETIMEDOUT\n");
    atomic_store(&tried, 1);
    t = in_ms(CLOCK_MONOTONIC, 10000);
    CHECK(pthread_clockjoin_np(main_thread, &value, CLOCK_MONOTONIC, &t) == 0);
    CHECK(atomic_load(&handler_ran) && atomic_load(&key_destroyed));
    printf("main ended: clockjoin got %ld, its cleanup handler and key destructor had run\n",
           (long)value);
    return NULL;
}

int main(void) {
    alarm(20);
    main_thread = pthread_self();
    CHECK(pthread_key_create(&key, destructor) == 0);
    CHECK(pthread_setspecific(key, &key) == 0);
    pthread_t t;
    CHECK(pthread_create(&t, NULL, joiner, NULL) == 0);
    pthread_cleanup_push(handler, NULL);
    test_wait_ge(&tried, 1);
    pthread_exit((void *)42);
    pthread_cleanup_pop(0);
    return 1;
}
