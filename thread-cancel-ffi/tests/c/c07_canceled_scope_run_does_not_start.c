/* C07 (with C05): a run entered on a canceled scope does not call its function, in a thread
 * created by the library and in the main thread. A child of a canceled scope is canceled; a
 * scope canceled later cancels the children it has; canceling a child leaves its parent alone;
 * canceling twice is canceling once. Afterwards the thread goes on clean (poll(NULL, 0, 5)
 * returns 0, tc_testcancel does not act). A scope canceled from inside its own run (the
 * thread cancels the scope it runs) stops the run at its next cancellation point. */
#include <poll.h>
#include <pthread.h>
#include "tc_test.h"

static atomic_int started;

static void *must_not_start(void *arg) {
    (void)arg;
    atomic_fetch_add(&started, 1);
    return (void *)1;
}

static void *cancels_itself(void *arg) {
    tc_scope_t *s = arg;
    CHECK(tc_scope_cancel(s) == 0);
    atomic_fetch_add(&started, 1);
    tc_testcancel(); /* acts here */
    atomic_fetch_add(&started, 100);
    return (void *)1;
}

static void checks(const char *where) {
    atomic_store(&started, 0);
    tc_scope_t *parent = tc_scope_new();
    CHECK(parent != NULL);
    tc_scope_t *child = tc_scope_child(parent);
    CHECK(child != NULL);
    CHECK(tc_scope_cancel(child) == 0);
    CHECK(tc_scope_cancel(child) == 0);
    CHECK(tc_scope_is_canceled(child) == 1 && tc_scope_is_canceled(parent) == 0);
    void *result = (void *)0x55;
    int rc = tc_scope_run(child, must_not_start, NULL, &result);
    if (rc != TC_SCOPE_CANCELED || result != (void *)0x55 || atomic_load(&started) != 0) {
        fprintf(stderr, "%s: rc %d (want %d), result %p, started %d (want 0)\n", where, rc,
                TC_SCOPE_CANCELED, result, atomic_load(&started));
        exit(1);
    }
    tc_scope_t *later = tc_scope_child(parent);
    CHECK(later != NULL);
    CHECK(tc_scope_cancel(parent) == 0);
    CHECK(tc_scope_is_canceled(later) == 1);
    tc_scope_t *born_canceled = tc_scope_child(parent);
    CHECK(born_canceled != NULL && tc_scope_is_canceled(born_canceled) == 1);
    CHECK(tc_scope_run(parent, must_not_start, NULL, NULL) == TC_SCOPE_CANCELED);
    CHECK(tc_scope_run(later, must_not_start, NULL, NULL) == TC_SCOPE_CANCELED);
    CHECK(tc_scope_run(born_canceled, must_not_start, NULL, NULL) == TC_SCOPE_CANCELED);
    CHECK(atomic_load(&started) == 0);
    /* A deadline already passed. */
    tc_scope_t *expired = tc_scope_new_timeout_ns(0);
    CHECK(expired != NULL);
    CHECK(tc_scope_run(expired, must_not_start, NULL, NULL) == TC_SCOPE_TIMEDOUT);
    CHECK(atomic_load(&started) == 0);

    tc_scope_t *self = tc_scope_new();
    CHECK(self != NULL);
    rc = tc_scope_run(self, cancels_itself, self, NULL);
    if (rc != TC_SCOPE_CANCELED || atomic_load(&started) != 1) {
        fprintf(stderr, "%s: self-canceled run: rc %d, started %d (want %d, 1)\n", where, rc,
                atomic_load(&started), TC_SCOPE_CANCELED);
        exit(1);
    }
    CHECK(poll(NULL, 0, 5) == 0);
    tc_testcancel();
    tc_scope_free(self);
    tc_scope_free(expired);
    tc_scope_free(born_canceled);
    tc_scope_free(later);
    tc_scope_free(child);
    tc_scope_free(parent);
}

static void *worker(void *arg) {
    (void)arg;
    checks("library thread");
    return (void *)42;
}

int main(void) {
    alarm(30);
    pthread_t t;
    CHECK(pthread_create(&t, NULL, worker, NULL) == 0);
    void *ret;
    CHECK(pthread_join(t, &ret) == 0);
    CHECK(ret == (void *)42);
    checks("main thread");
    printf("ok: runs of canceled scopes did not start; children follow their parents\n");
    return 0;
}
