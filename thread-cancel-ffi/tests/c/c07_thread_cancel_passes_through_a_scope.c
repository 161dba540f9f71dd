/* C07 (with C03): a scope never swallows the thread's own cancellation or exit.
 *
 * A thread created by the library pushes handler 'A', then runs tc_scope_run whose function
 * pushes 'B', runs a nested tc_scope_run whose function pushes 'C' and blocks in read(2). Main
 * cancels the thread (pthread_cancel): every handler runs, innermost first ("CBA"), neither
 * tc_scope_run returns (code after them never runs), the scopes are not canceled, and the join
 * reports PTHREAD_CANCELED. The same with pthread_exit(7) called inside the inner run: the
 * handlers run ("CBA") and the join reports 7. */
#include <pthread.h>
#include "tc_test.h"

static char trace[16];
static atomic_int ntrace;
static atomic_int blocked;
static pid_t tid;
static int fd;
static int use_exit;
static tc_scope_t *outer, *inner;

static void h(void *arg) {
    int i = atomic_fetch_add(&ntrace, 1);
    if (i < 15) trace[i] = (char)(long)arg;
}

static void *innermost(void *arg) {
    (void)arg;
    char b;
    pthread_cleanup_push(h, (void *)'C');
    if (use_exit) pthread_exit((void *)7);
    tid = test_gettid();
    atomic_store(&blocked, 1);
    (void)read(fd, &b, 1);
    h((void *)'r'); /* the read returned: it must not */
    pthread_cleanup_pop(0);
    return NULL;
}

static void *middle(void *arg) {
    (void)arg;
    pthread_cleanup_push(h, (void *)'B');
    int rc = tc_scope_run(inner, innermost, NULL, NULL);
    h((void *)'0' + rc % 10); /* the inner run returned: it must not */
    pthread_cleanup_pop(0);
    return NULL;
}

static void *worker(void *arg) {
    (void)arg;
    pthread_cleanup_push(h, (void *)'A');
    int rc = tc_scope_run(outer, middle, NULL, NULL);
    h((void *)'0' + rc % 10); /* the outer run returned: it must not */
    pthread_cleanup_pop(0);
    return (void *)5;
}

static void one(int exit_instead, void *want_ret) {
    use_exit = exit_instead;
    atomic_store(&ntrace, 0);
    atomic_store(&blocked, 0);
    outer = tc_scope_new();
    inner = tc_scope_new();
    CHECK(outer && inner);
    pthread_t t;
    CHECK(pthread_create(&t, NULL, worker, NULL) == 0);
    if (!exit_instead) {
        test_wait_ge(&blocked, 1);
        test_wait_blocked(tid);
        CHECK(pthread_cancel(t) == 0);
    }
    void *ret;
    CHECK(pthread_join(t, &ret) == 0);
    trace[atomic_load(&ntrace)] = 0;
    if (ret != want_ret || strcmp(trace, "CBA") != 0) {
        fprintf(stderr, "%s: ret %p (want %p), handlers \"%s\" (want \"CBA\")\n",
                exit_instead ? "exit" : "cancel", ret, want_ret, trace);
        exit(1);
    }
    CHECK(tc_scope_is_canceled(outer) == 0 && tc_scope_is_canceled(inner) == 0);
    tc_scope_free(outer);
    tc_scope_free(inner);
}

int main(void) {
    alarm(30);
    int p[2];
    CHECK(pipe(p) == 0);
    fd = p[0];
    one(0, PTHREAD_CANCELED);
    one(1, (void *)7);
    printf("ok: a thread cancel and an exit passed through two scope runs; handlers CBA\n");
    return 0;
}
