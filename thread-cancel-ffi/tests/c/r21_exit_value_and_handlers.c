/* R21: pthread_exit(value) runs the cleanup handlers (last pushed first), then the
 * thread-specific-data destructors, then ends the thread; join reports the value.
 *
 *   A: exit from three calls deep, with 2 handlers in different frames and a destructor:
 *      order H2 H1 D, join reports a heap pointer exactly.
 *   B: exit with a cancellation request pending (enabled, deferred, no point reached): exiting
 *      wins — join reports the value, not PTHREAD_CANCELED, even though a handler calls
 *      testcancel.
 *   C: exit with a NULL value, no handlers. */
#include <pthread.h>
#include "tc_test.h"

static char log_[16];
static atomic_int nlog;
static pthread_key_t key;

static void record(char c) {
    int i = atomic_fetch_add(&nlog, 1);
    if (i < 15) log_[i] = c;
}

static void handler(void *arg) {
    pthread_testcancel(); /* no cancellation while exiting */
    record(*(char *)arg);
}

static void dtor(void *v) {
    record(*(char *)v);
}

static char c1 = '1', c2 = '2', cd = 'D';

static void level3(void *value) {
    pthread_exit(value);
}

static void level2(void *value) {
    pthread_cleanup_push(handler, &c2);
    level3(value);
    pthread_cleanup_pop(0);
}

static atomic_int b_ready, b_canceled;

static void *worker(void *arg) {
    CHECK(pthread_setspecific(key, &cd) == 0);
    pthread_cleanup_push(handler, &c1);
    if (arg == (void *)0xB) {
        atomic_store(&b_ready, 1);
        while (!atomic_load(&b_canceled)) {
        } /* no point: the request stays pending */
    }
    level2(arg);
    pthread_cleanup_pop(0);
    return NULL;
}

static void *bare(void *arg) {
    (void)arg;
    pthread_exit(NULL);
}

static void check_log(const char *name) {
    log_[atomic_load(&nlog)] = 0;
    if (strcmp(log_, "21D") != 0) {
        fprintf(stderr, "%s: ran \"%s\", want \"21D\"\n", name, log_);
        exit(1);
    }
    atomic_store(&nlog, 0);
}

int main(void) {
    alarm(20);
    CHECK(pthread_key_create(&key, dtor) == 0);
    void *value = malloc(1), *ret = NULL;
    CHECK(value != NULL);
    pthread_t t;
    CHECK(pthread_create(&t, NULL, worker, value) == 0);
    CHECK(pthread_join(t, &ret) == 0);
    CHECK(ret == value);
    check_log("exit");
    free(value);

    CHECK(pthread_create(&t, NULL, worker, (void *)0xB) == 0);
    test_wait_ge(&b_ready, 1);
    CHECK(pthread_cancel(t) == 0);
    atomic_store(&b_canceled, 1);
    CHECK(pthread_join(t, &ret) == 0);
    CHECK(ret == (void *)0xB);
    check_log("exit with a request pending");

    ret = (void *)1;
    CHECK(pthread_create(&t, NULL, bare, NULL) == 0);
    CHECK(pthread_join(t, &ret) == 0);
    CHECK(ret == NULL);

    printf("ok: exit ran handlers LIFO, then the destructor; join got the value (also with a "
           "request pending)\n");
    return 0;
}
