/* R03: a request held pending while cancellation is disabled disturbs nothing: the thread's
 * non-restartable calls (usleep, poll) run to their end without EINTR; the request is acted on
 * at the first point after the thread enables. (The request is sent once the thread is seen
 * blocked, in its usleep; the thread enables only once the request has been sent, however late
 * main runs.) */
#include <poll.h>
#include <pthread.h>
#include <unistd.h>
#include "tc_test.h"

static atomic_int tid, disabled, canceled, usleep_rc = -2, usleep_errno, poll_rc = -2;

static void *body(void *arg) {
    (void)arg;
    int old;
    CHECK(pthread_setcancelstate(PTHREAD_CANCEL_DISABLE, &old) == 0);
    atomic_store(&tid, test_gettid());
    atomic_store(&disabled, 1);
    errno = 0;
    atomic_store(&usleep_rc, usleep(200 * 1000)); /* canceled meanwhile: held */
    atomic_store(&usleep_errno, errno);
    atomic_store(&poll_rc, poll(NULL, 0, 100));
    test_wait_ge(&canceled, 1); /* main has sent the request (normally during the usleep) */
    CHECK(pthread_setcancelstate(PTHREAD_CANCEL_ENABLE, &old) == 0);
    pthread_testcancel(); /* acted on here */
    return NULL;
}

int main(void) {
    alarm(20);
    pthread_t t;
    CHECK(pthread_create(&t, NULL, body, NULL) == 0);
    test_wait_ge(&disabled, 1);
    test_wait_blocked(atomic_load(&tid));
    CHECK(pthread_cancel(t) == 0);
    atomic_store(&canceled, 1);
    void *ret;
    CHECK(pthread_join(t, &ret) == 0);
    CHECK(ret == PTHREAD_CANCELED);
    CHECK(atomic_load(&usleep_rc) == 0);
    CHECK(atomic_load(&poll_rc) == 0);
    printf("ok: a disabled thread's usleep and poll ran to their end (no EINTR); acted after enable\n");
    return 0;
}
