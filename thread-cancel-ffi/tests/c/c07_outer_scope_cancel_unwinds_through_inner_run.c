/* C07 (with C03): nested runs in C. The thread runs tc_scope_run(outer, f1); f1 pushes handler
 * '1' and runs tc_scope_run(inner, f2); f2 pushes '2' and blocks in read(2).
 *
 *   - Canceling outer unwinds through the inner run to the outer one: handlers "21", the inner
 *     tc_scope_run never returns to f1, the outer returns TC_SCOPE_CANCELED.
 *   - Canceling inner stops the inner run only: handler "2", the inner tc_scope_run returns
 *     TC_SCOPE_CANCELED to f1, which goes on (its own read then succeeds) and returns; the
 *     outer run returns 0.
 *
 * Both in a thread created by the library and in the main thread (a thread of the C library,
 * which acts in C code too), with another thread canceling. */
#include <pthread.h>
#include "tc_test.h"

static char trace[16];
static atomic_int ntrace;
static atomic_int blocked;
static atomic_int inner_returned;
static pid_t tid;
static int fd;
static tc_scope_t *outer, *inner;

static void h(void *arg) {
    int i = atomic_fetch_add(&ntrace, 1);
    if (i < 15) trace[i] = (char)(long)arg;
}

static void *f2(void *arg) {
    (void)arg;
    char b;
    pthread_cleanup_push(h, (void *)'2');
    tid = test_gettid();
    atomic_store(&blocked, 1);
    (void)read(fd, &b, 1);
    h((void *)'r'); /* the read returned: it must not (nothing written before the cancel) */
    pthread_cleanup_pop(0);
    return NULL;
}

static void *f1(void *arg) {
    (void)arg;
    void *ret = (void *)1;
    pthread_cleanup_push(h, (void *)'1');
    int rc = tc_scope_run(inner, f2, NULL, NULL);
    h(rc == TC_SCOPE_CANCELED ? (void *)'c' : (void *)'?');
    atomic_store(&inner_returned, 1);
    char b;
    if (read(fd, &b, 1) == 1 && b == 'z') ret = (void *)2; /* main writes 'z' after the cancel */
    pthread_cleanup_pop(0);
    return ret;
}

/* Runs the scenario in the calling thread: cancel_outer says which scope the canceler cancels.
 * Returns the outer run's code and stores f1's value in *result. */
static int scenario(int cancel_outer, void **result) {
    atomic_store(&ntrace, 0);
    atomic_store(&blocked, 0);
    atomic_store(&inner_returned, 0);
    outer = tc_scope_new();
    inner = tc_scope_new();
    CHECK(outer && inner);
    *result = (void *)0x55;
    int rc = tc_scope_run(outer, f1, NULL, result);
    trace[atomic_load(&ntrace)] = 0;
    CHECK(tc_scope_is_canceled(outer) == cancel_outer);
    CHECK(tc_scope_is_canceled(inner) == !cancel_outer); /* not outer's child */
    tc_scope_free(inner);
    tc_scope_free(outer);
    return rc;
}

static atomic_int cancel_outer_flag;
static int wfd;

static void *canceler(void *arg) {
    (void)arg;
    test_wait_ge(&blocked, 1);
    test_wait_blocked(tid);
    CHECK(tc_scope_cancel(atomic_load(&cancel_outer_flag) ? outer : inner) == 0);
    if (!atomic_load(&cancel_outer_flag)) {
        CHECK(tc_scope_cancel(inner) == 0); /* twice: once */
        /* The byte f1 reads once the inner run returned (written before that, the blocked
         * read could take it: a read that completed is not undone). */
        test_wait_ge(&inner_returned, 1);
        CHECK((write)(wfd, "z", 1) == 1);
    }
    return NULL;
}

static void check(const char *where, int cancel_outer, int rc, void *result) {
    const char *want = cancel_outer ? "21" : "2c";
    int want_rc = cancel_outer ? TC_SCOPE_CANCELED : 0;
    void *want_result = cancel_outer ? (void *)0x55 : (void *)2;
    if (rc != want_rc || result != want_result || strcmp(trace, want) != 0) {
        fprintf(stderr, "%s, cancel %s: rc %d (want %d), result %p (want %p), trace \"%s\" "
                "(want \"%s\")\n", where, cancel_outer ? "outer" : "inner", rc, want_rc, result,
                want_result, trace, want);
        exit(1);
    }
}

static void *worker(void *arg) {
    int cancel_outer = (int)(long)arg;
    void *result;
    int rc = scenario(cancel_outer, &result);
    check("library thread", cancel_outer, rc, result);
    return (void *)42;
}

int main(void) {
    alarm(30);
    for (int cancel_outer = 1; cancel_outer >= 0; cancel_outer--) {
        int p[2];
        CHECK(pipe(p) == 0);
        fd = p[0];
        wfd = p[1];
        atomic_store(&cancel_outer_flag, cancel_outer);
        pthread_t t, c;
        atomic_store(&blocked, 0);
        CHECK(pthread_create(&t, NULL, worker, (void *)(long)cancel_outer) == 0);
        CHECK(pthread_create(&c, NULL, canceler, NULL) == 0);
        void *ret;
        CHECK(pthread_join(t, &ret) == 0);
        CHECK(ret == (void *)42);
        CHECK(pthread_join(c, NULL) == 0);

        /* The main thread. */
        atomic_store(&blocked, 0);
        CHECK(pthread_create(&c, NULL, canceler, NULL) == 0);
        void *result;
        int rc = scenario(cancel_outer, &result);
        check("main thread", cancel_outer, rc, result);
        CHECK(pthread_join(c, NULL) == 0);
        (close)(p[0]);
        (close)(p[1]);
    }
    printf("ok: an outer cancel unwound through the inner run; an inner cancel stopped it only\n");
    return 0;
}
