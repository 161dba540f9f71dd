/* R01 for a thread the C library created: a SIGEV_THREAD timer's notification thread (created
 * by glibc, not by pthread_create) is canceled by main; the request is acted on at its next
 * cancellation point: its cleanup handler runs and the thread ends.
 * TC_COMPARE_WITH_GLIBC */
#include <pthread.h>
#include <signal.h>
#include "tc_test.h"

static pthread_t timer_thread;
static pid_t timer_tid;
static atomic_int started, cleaned;

static void cleanup(void *arg) {
    (void)arg;
    atomic_store(&cleaned, 1);
}

static void notify(union sigval sv) {
    (void)sv;
    timer_thread = pthread_self();
    timer_tid = test_gettid();
    pthread_cleanup_push(cleanup, NULL);
    atomic_store(&started, 1);
    for (;;) {
        pthread_testcancel();
        test_usleep(1000);
    }
    pthread_cleanup_pop(0);
}

int main(void) {
    alarm(20);
    struct sigevent sev;
    memset(&sev, 0, sizeof sev);
    sev.sigev_notify = SIGEV_THREAD;
    sev.sigev_notify_function = notify;
    timer_t timer;
    CHECK(timer_create(CLOCK_MONOTONIC, &sev, &timer) == 0);
    struct itimerspec its = {.it_value = {0, 10 * 1000 * 1000}};
    CHECK(timer_settime(timer, 0, &its, NULL) == 0);
    test_wait_ge(&started, 1);
    CHECK(pthread_cancel(timer_thread) == 0);
    test_wait_ge(&cleaned, 1);
    printf("the timer's thread acted on the cancel: its cleanup handler ran\n");
    while (test_thread_state(timer_tid) != '?') test_usleep(1000);
    printf("and it ended\n");
    CHECK(timer_delete(timer) == 0);
    return 0;
}
