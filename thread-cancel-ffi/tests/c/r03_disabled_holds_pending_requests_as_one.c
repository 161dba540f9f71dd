/* R03: with cancellation DISABLED a request stays pending indefinitely (through cancellation
 * points, blocking ones included); it is acted on after the thread enables: at its next point
 * if DEFERRED, at once if ASYNCHRONOUS. Several requests while pending count as one.
 *
 *   A (deferred): disabled; main cancels 3 times (each returns 0); the thread goes through
 *     testcancel, sleep(0), usleep, a read that returns data, a poll that times out, and 100 ms
 *     more, without acting; it enables (no act there), runs on, and acts at testcancel.
 *     Exactly one cancellation happened: its cleanup handler ran once.
 *   B (asynchronous): disabled + asynchronous, canceled twice; enabling acts at once, inside
 *     pthread_setcancelstate. */
#include <poll.h>
#include <pthread.h>
#include <unistd.h>
#include "tc_test.h"

static atomic_int ready, canceled, after_enable, after_point, cleaned, points_done;
static int pipefd[2];

static void cleanup(void *arg) {
    (void)arg;
    atomic_fetch_add(&cleaned, 1);
}

static void *deferred(void *arg) {
    (void)arg;
    int old = -1;
    CHECK(pthread_setcancelstate(PTHREAD_CANCEL_DISABLE, &old) == 0);
    CHECK(old == PTHREAD_CANCEL_ENABLE);
    pthread_cleanup_push(cleanup, NULL);
    atomic_store(&ready, 1);
    test_wait_ge(&canceled, 1);
    /* Pending and disabled: none of these points acts. */
    pthread_testcancel();
    CHECK(sleep(0) == 0);
    CHECK(usleep(1000) == 0);
    char b = 0;
    CHECK(read(pipefd[0], &b, 1) == 1 && b == 'x');
    struct pollfd p = {.fd = pipefd[0], .events = POLLIN};
    CHECK(poll(&p, 1, 50) == 0); /* blocks 50 ms, times out: the request does not wake it */
    test_msleep(100);            /* indefinitely */
    pthread_testcancel();
    atomic_store(&points_done, 1);
    test_wait_ge(&canceled, 2); /* one more request, still pending */
    pthread_testcancel();
    CHECK(pthread_setcancelstate(PTHREAD_CANCEL_ENABLE, &old) == 0);
    CHECK(old == PTHREAD_CANCEL_DISABLE);
    atomic_store(&after_enable, 1); /* deferred: enabling is not a point */
    pthread_testcancel();           /* acts here */
    atomic_store(&after_point, 1);
    pthread_cleanup_pop(0);
    return NULL;
}

static atomic_int b_ready, b_canceled, b_after_enable, b_cleaned;

static void b_cleanup(void *arg) {
    (void)arg;
    atomic_fetch_add(&b_cleaned, 1);
}

static void *asynchronous(void *arg) {
    (void)arg;
    CHECK(pthread_setcancelstate(PTHREAD_CANCEL_DISABLE, NULL) == 0);
    CHECK(pthread_setcanceltype(PTHREAD_CANCEL_ASYNCHRONOUS, NULL) == 0);
    pthread_cleanup_push(b_cleanup, NULL);
    atomic_store(&b_ready, 1);
    while (!atomic_load(&b_canceled)) {
    } /* disabled: the request waits (pure spin, nothing held) */
    pthread_setcancelstate(PTHREAD_CANCEL_ENABLE, NULL); /* acts at once, in here */
    atomic_store(&b_after_enable, 1);
    pthread_cleanup_pop(0);
    return NULL;
}

int main(void) {
    alarm(20);
    CHECK(pipe(pipefd) == 0);
    CHECK((write)(pipefd[1], "x", 1) == 1);

    pthread_t t;
    CHECK(pthread_create(&t, NULL, deferred, NULL) == 0);
    test_wait_ge(&ready, 1);
    for (int i = 0; i < 3; i++) CHECK(pthread_cancel(t) == 0);
    atomic_store(&canceled, 1);
    test_wait_ge(&points_done, 1);
    CHECK(pthread_cancel(t) == 0); /* still pending, still one */
    atomic_store(&canceled, 2);
    void *ret;
    CHECK(pthread_join(t, &ret) == 0);
    CHECK(ret == PTHREAD_CANCELED);
    CHECK(atomic_load(&after_enable) == 1);
    CHECK(atomic_load(&after_point) == 0);
    CHECK(atomic_load(&cleaned) == 1);

    CHECK(pthread_create(&t, NULL, asynchronous, NULL) == 0);
    test_wait_ge(&b_ready, 1);
    CHECK(pthread_cancel(t) == 0);
    CHECK(pthread_cancel(t) == 0);
    test_msleep(20); /* the cancel signal, if any, has come and gone: nothing acted */
    CHECK(atomic_load(&b_cleaned) == 0);
    atomic_store(&b_canceled, 1);
    CHECK(pthread_join(t, &ret) == 0);
    CHECK(ret == PTHREAD_CANCELED);
    CHECK(atomic_load(&b_after_enable) == 0);
    CHECK(atomic_load(&b_cleaned) == 1);

    (close)(pipefd[0]);
    (close)(pipefd[1]);
    printf("ok: 4 requests pending through 7 points while disabled, acted once at the next "
           "point (deferred) / at enable (asynchronous)\n");
    return 0;
}
