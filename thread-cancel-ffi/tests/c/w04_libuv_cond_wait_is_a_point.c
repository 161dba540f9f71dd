/* W04 with a real C library: a thread blocked in libuv's uv_cond_wait (libuv calls the C
 * library's pthread_cond_wait inside libuv.so, built without the compatibility header, and
 * abort()s on any error it returns) is canceled as with glibc: joined with PTHREAD_CANCELED,
 * its cleanup handler ran with the mutex held again.
 *
 * And inside a scope (this library's tc_scope_run, not in glibc: not printed there): a scope's
 * cancel never fails nor wakes a condition wait made by such a library — libuv would abort —
 * so the wait goes on until the program signals the condition; the run then acts at its next
 * point of the program's own and returns ECANCELED; nothing aborted, no lock left held.
 *
 * TC_COMPARE_WITH_GLIBC: built through pthread_compat.h with libthread_cancel and against the
 * system's glibc alone; both print the same lines.
 *
 * TC_LINK: -luv */
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <unistd.h>
#include <uv.h>
#include "tc_test.h"

static uv_mutex_t mu;
static uv_cond_t cv;
static atomic_int started, handlers, tid;

static void unlock(void *arg) {
    (void)arg;
    /* The mutex is held again when the handler runs. */
    if (uv_mutex_trylock(&mu) != 0) atomic_fetch_add(&handlers, 1);
    uv_mutex_unlock(&mu);
}

static void *waiter(void *arg) {
    (void)arg;
    uv_mutex_lock(&mu);
    pthread_cleanup_push(unlock, NULL);
    atomic_store(&tid, test_gettid());
    atomic_store(&started, 1);
    for (;;) uv_cond_wait(&cv, &mu); /* the predicate never holds */
    pthread_cleanup_pop(0);
    return NULL;
}

#ifndef TC_PLAIN_GLIBC
#include <thread_cancel.h>

static atomic_int go;

static void *scope_run_body(void *arg) {
    (void)arg;
    uv_mutex_lock(&mu);
    atomic_store(&tid, test_gettid());
    atomic_store(&started, 1);
    while (!atomic_load(&go)) uv_cond_wait(&cv, &mu);
    uv_mutex_unlock(&mu);
    pthread_testcancel(); /* the program's own point: the run acts here */
    return NULL;
}

static tc_scope_t *scope;

static void *in_scope(void *arg) {
    (void)arg;
    void *ret;
    return (void *)(long)tc_scope_run(scope, scope_run_body, NULL, &ret);
}
#endif

int main(void) {
    alarm(60);
    CHECK(uv_mutex_init(&mu) == 0);
    CHECK(uv_cond_init(&cv) == 0);
    pthread_t t;
    CHECK(pthread_create(&t, NULL, waiter, NULL) == 0);
    test_wait_ge(&started, 1);
    test_wait_blocked(atomic_load(&tid));
    CHECK(pthread_cancel(t) == 0);
    void *r;
    CHECK(pthread_join(t, &r) == 0);
    printf("uv_cond_wait: %s, cleanup handler with the mutex held %d\n",
           r == PTHREAD_CANCELED ? "canceled" : "returned", atomic_load(&handlers));
#ifndef TC_PLAIN_GLIBC
    atomic_store(&started, 0);
    scope = tc_scope_new();
    CHECK(scope != NULL);
    CHECK(pthread_create(&t, NULL, in_scope, NULL) == 0);
    test_wait_ge(&started, 1);
    test_wait_blocked(atomic_load(&tid));
    CHECK(tc_scope_cancel(scope) == 0);
    /* The wait is not woken by the scope's cancel: the thread stays blocked in it. */
    test_wait_blocked(atomic_load(&tid));
    uv_mutex_lock(&mu);
    atomic_store(&go, 1);
    uv_cond_signal(&cv);
    uv_mutex_unlock(&mu);
    CHECK(pthread_join(t, &r) == 0);
    int free_again = uv_mutex_trylock(&mu) == 0;
    if (free_again) uv_mutex_unlock(&mu);
    fprintf(stderr, "in a scope: the run returned %s, the mutex free again %s\n",
            (long)r == ECANCELED ? "ECANCELED" : "something else", free_again ? "yes" : "no");
    CHECK((long)r == ECANCELED && free_again);
    tc_scope_free(scope);
#endif
    return 0;
}
