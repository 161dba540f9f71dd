/* R08: pthread_cancel returns as soon as the request is queued; its success says nothing about
 * whether the target has acted.
 *
 *   A: the target has cancellation disabled and spins: cancel returns 0, the target has not
 *      acted (and keeps running) — the return does not wait for it.
 *   B: the target is blocked in read; its cleanup handler waits until main says "cancel has
 *      returned": had cancel waited for the target to act (or finish), this would deadlock.
 *   C: a thread cancels itself: cancel returns 0 and it runs on to its next point. */
#include <pthread.h>
#include <unistd.h>
#include "tc_test.h"

static atomic_int a_ready, a_go, a_cleaned;
static atomic_long a_spins;

static void a_cleanup(void *arg) {
    (void)arg;
    atomic_store(&a_cleaned, 1);
}

static void *thread_a(void *arg) {
    (void)arg;
    CHECK(pthread_setcancelstate(PTHREAD_CANCEL_DISABLE, NULL) == 0);
    pthread_cleanup_push(a_cleanup, NULL);
    atomic_store(&a_ready, 1);
    while (!atomic_load(&a_go)) atomic_fetch_add(&a_spins, 1);
    CHECK(pthread_setcancelstate(PTHREAD_CANCEL_ENABLE, NULL) == 0);
    pthread_testcancel();
    pthread_cleanup_pop(0);
    return NULL;
}

static atomic_int b_ready, b_returned, b_handler_in, b_handler_out;
static int pipefd[2];

static void b_cleanup(void *arg) {
    (void)arg;
    atomic_store(&b_handler_in, 1);
    test_wait_ge(&b_returned, 1);
    atomic_store(&b_handler_out, 1);
}

static void *thread_b(void *arg) {
    (void)arg;
    pthread_cleanup_push(b_cleanup, NULL);
    atomic_store(&b_ready, 1);
    char b;
    for (;;) (void)read(pipefd[0], &b, 1);
    pthread_cleanup_pop(0);
    return NULL;
}

static atomic_int c_after_cancel, c_after_point;

static void *thread_c(void *arg) {
    (void)arg;
    CHECK(pthread_cancel(pthread_self()) == 0);
    atomic_store(&c_after_cancel, 1);
    pthread_testcancel();
    atomic_store(&c_after_point, 1);
    return NULL;
}

int main(void) {
    alarm(20);
    void *ret;

    pthread_t t;
    CHECK(pthread_create(&t, NULL, thread_a, NULL) == 0);
    test_wait_ge(&a_ready, 1);
    CHECK(pthread_cancel(t) == 0);
    CHECK(atomic_load(&a_cleaned) == 0); /* queued, not acted */
    long at = atomic_load(&a_spins);
    while (atomic_load(&a_spins) < at + 1000) test_msleep(1); /* the target runs on */
    CHECK(atomic_load(&a_cleaned) == 0);
    atomic_store(&a_go, 1);
    CHECK(pthread_join(t, &ret) == 0);
    CHECK(ret == PTHREAD_CANCELED && atomic_load(&a_cleaned) == 1);

    CHECK(pipe(pipefd) == 0);
    CHECK(pthread_create(&t, NULL, thread_b, NULL) == 0);
    test_wait_ge(&b_ready, 1);
    test_msleep(10);
    CHECK(pthread_cancel(t) == 0);
    CHECK(atomic_load(&b_handler_out) == 0); /* the target has not finished acting */
    atomic_store(&b_returned, 1);
    CHECK(pthread_join(t, &ret) == 0);
    CHECK(ret == PTHREAD_CANCELED);
    CHECK(atomic_load(&b_handler_in) == 1 && atomic_load(&b_handler_out) == 1);
    (close)(pipefd[0]);
    (close)(pipefd[1]);

    CHECK(pthread_create(&t, NULL, thread_c, NULL) == 0);
    CHECK(pthread_join(t, &ret) == 0);
    CHECK(ret == PTHREAD_CANCELED);
    CHECK(atomic_load(&c_after_cancel) == 1 && atomic_load(&c_after_point) == 0);

    printf("ok: cancel returned before the target acted (disabled, in its handler, itself)\n");
    return 0;
}
