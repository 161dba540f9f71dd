/* C07 (with C01, C04): one tc_scope_cancel stops every run of the scope, in every thread, at
 * every kind of cancellation point, and each thread goes on.
 *
 * Six threads created by the library run the same scope, each function with a cleanup handler:
 * two blocked in read(2), one computing with the type asynchronous (no point at all), one in
 * pthread_join of a thread that does not end, one in sem_wait, and one with cancellation
 * disabled, which must not act while disabled (tc_testcancel returns) and acts at the first
 * point after it enables again. Main cancels the scope once: every run returns
 * TC_SCOPE_CANCELED, every handler ran once, and each thread then finds nothing left (poll
 * returns 0, tc_testcancel returns) and returns normally. The joined thread is joined again
 * afterwards (the canceled join left it joinable), as is the semaphore left untaken. */
#include <poll.h>
#include <pthread.h>
#include <semaphore.h>
#include "tc_test.h"

enum kind { READ1, READ2, ASYNC_LOOP, JOIN, SEM, DISABLED, KINDS };

static tc_scope_t *scope;
static int fd;
static pthread_t never_ends;
static sem_t sem;
static atomic_int ready;
static atomic_int handlers[KINDS];
static pid_t tids[KINDS];
static atomic_int disabled_point_returned;
static atomic_int went_past; /* functions that went past their point: must stay 0 */
static atomic_int cancel_returned;

static void handler(void *arg) {
    atomic_fetch_add(&handlers[(long)arg], 1);
}

static void *op(void *arg) {
    long k = (long)arg;
    char b;
    pthread_cleanup_push(handler, arg);
    tids[k] = test_gettid();
    switch (k) {
    case READ1:
    case READ2:
        atomic_fetch_add(&ready, 1);
        (void)read(fd, &b, 1);
        break;
    case ASYNC_LOOP: {
        CHECK(pthread_setcanceltype(PTHREAD_CANCEL_ASYNCHRONOUS, NULL) == 0);
        atomic_fetch_add(&ready, 1);
        volatile unsigned long n = 0;
        for (;;) n++;
    }
    case JOIN:
        atomic_fetch_add(&ready, 1);
        (void)pthread_join(never_ends, NULL);
        break;
    case SEM:
        atomic_fetch_add(&ready, 1);
        (void)sem_wait(&sem);
        break;
    case DISABLED:
        CHECK(pthread_setcancelstate(PTHREAD_CANCEL_DISABLE, NULL) == 0);
        atomic_fetch_add(&ready, 1);
        /* Until tc_scope_cancel has returned (tc_scope_is_canceled says 1 as soon as the cancel
         * begins, before it has reached every run). */
        test_wait_ge(&cancel_returned, 1);
        CHECK(tc_scope_is_canceled(scope) == 1);
        tc_testcancel(); /* held while disabled */
        atomic_store(&disabled_point_returned, 1);
        CHECK(pthread_setcancelstate(PTHREAD_CANCEL_ENABLE, NULL) == 0);
        tc_testcancel(); /* acts here */
        break;
    }
    atomic_fetch_add(&went_past, 1); /* the point returned: it must not */
    pthread_cleanup_pop(0);
    return NULL;
}

static void *worker(void *arg) {
    long k = (long)arg;
    int rc = tc_scope_run(scope, op, arg, NULL);
    CHECK(pthread_setcanceltype(PTHREAD_CANCEL_DEFERRED, NULL) == 0);
    if (rc != TC_SCOPE_CANCELED || atomic_load(&handlers[k]) != 1) {
        fprintf(stderr, "kind %ld: rc %d (want %d), handler ran %d times (want 1)\n", k, rc,
                TC_SCOPE_CANCELED, atomic_load(&handlers[k]));
        exit(1);
    }
    CHECK(poll(NULL, 0, 5) == 0);
    tc_testcancel();
    return (void *)42;
}

static int release_fd;

static void *blocked_forever(void *arg) {
    (void)arg;
    char b;
    (void)read(release_fd, &b, 1);
    return (void *)9;
}

int main(void) {
    alarm(60);
    int p[2], q[2];
    CHECK(pipe(p) == 0 && pipe(q) == 0);
    fd = p[0];
    release_fd = q[0];
    CHECK(sem_init(&sem, 0, 0) == 0);
    CHECK(pthread_create(&never_ends, NULL, blocked_forever, NULL) == 0);
    scope = tc_scope_new();
    CHECK(scope != NULL);
    pthread_t t[KINDS];
    for (long k = 0; k < KINDS; k++) CHECK(pthread_create(&t[k], NULL, worker, (void *)k) == 0);
    test_wait_ge(&ready, KINDS);
    test_wait_blocked(tids[READ1]);
    test_wait_blocked(tids[READ2]);
    test_wait_blocked(tids[JOIN]);
    test_wait_blocked(tids[SEM]);
    CHECK(tc_scope_cancel(scope) == 0);
    atomic_store(&cancel_returned, 1);
    for (long k = 0; k < KINDS; k++) {
        void *ret;
        CHECK(pthread_join(t[k], &ret) == 0);
        CHECK(ret == (void *)42);
    }
    CHECK(atomic_load(&disabled_point_returned) == 1);
    CHECK(atomic_load(&went_past) == 0);
    CHECK((write)(q[1], "x", 1) == 1);
    void *ret;
    CHECK(pthread_join(never_ends, &ret) == 0 && ret == (void *)9);
    int v;
    CHECK(sem_getvalue(&sem, &v) == 0 && v == 0);
    tc_scope_free(scope);
    printf("ok: one cancel stopped %d runs (read, read, async loop, join, sem_wait, disabled "
           "then enabled); each thread went on\n", KINDS);
    return 0;
}
