/* sleep() interrupted by a handled signal returns the unslept time in whole seconds truncated,
 * as glibc (POSIX allows rounding either way; "as glibc" means glibc's): sleep(30) interrupted
 * after about 200 ms returns 29, after about 1.2 s returns 28, with errno EINTR; sleep(0)
 * returns 0. The signal is SIGUSR1 sent by another thread (SIGALRM is the program's timeout),
 * to the main thread and to a created thread. Through the header the time left was rounded up
 * (30 and 29).
 *
 * The shooter waits until the target is seen blocked in its sleep, then the given time, then
 * signals (a 30 s sleep: the signal comes while it sleeps even if the shooter runs seconds
 * late). How long the sleep ran is only known within bounds, so the program prints whether the
 * value returned is the truncated unslept time for a time slept within them: the time from the
 * target seen blocked to the signal is a lower bound, the time around the call an upper bound.
 * On time (the usual case) the bounds allow one value only (29, 28), and a rounded-up value
 * (30, 29) prints "no"; a late shooter widens the bounds (a weaker check) but changes no line.
 * A value out of the bounds is printed with them.
 *
 * TC_COMPARE_WITH_GLIBC: the runner also builds this against plain glibc; both print the same. */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <pthread.h>
#include <signal.h>
#include "tc_test.h"

static atomic_int usr1;

static void on_usr1(int sig) {
    (void)sig;
    atomic_fetch_add(&usr1, 1);
}

static double now(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}

struct shot {
    pthread_t target;
    pid_t target_tid;
    long after_ms;
    double seen_blocked, sent; /* CLOCK_MONOTONIC, set by the shooter */
};

/* Waits until the target sleeps in the kernel, then `after_ms`, then signals it. */
static void *shoot(void *arg) {
    struct shot *s = arg;
    test_wait_blocked(s->target_tid);
    s->seen_blocked = now();
    test_msleep(s->after_ms);
    s->sent = now();
    CHECK(pthread_kill(s->target, SIGUSR1) == 0);
    return NULL;
}

/* sleep(seconds) in the calling thread, SIGUSR1 `after_ms` after it is seen blocked. */
static void interrupted(unsigned seconds, long after_ms, const char *who) {
    struct shot s = {pthread_self(), test_gettid(), after_ms, 0, 0};
    pthread_t t;
    int before = atomic_load(&usr1);
    CHECK(pthread_create(&t, NULL, shoot, &s) == 0);
    errno = 0;
    double start = now();
    unsigned left = sleep(seconds);
    double end = now();
    int e = errno;
    CHECK(pthread_join(t, NULL) == 0);
    /* The sleep began before the target was seen blocked and ended after the signal was sent:
     * it ran at least sent - seen_blocked (>= after_ms); it began after `start` and ended before
     * `end`: at most end - start. The unslept time is within [seconds - most, seconds - least],
     * and so its truncation within these bounds truncated. */
    double least = s.sent - s.seen_blocked, most = end - start;
    long lo = (long)((double)seconds - most), hi = (long)((double)seconds - least);
    if (lo < 0) lo = 0;
    char verdict[160];
    if ((long)left >= lo && (long)left <= hi && least < (double)seconds)
        snprintf(verdict, sizeof verdict, "yes");
    else
        snprintf(verdict, sizeof verdict, "no (returns %u, slept between %.3f s and %.3f s)",
                 left, least, most);
    printf("%s: sleep(%u) interrupted after %ld ms returns the unslept seconds truncated: %s, "
           "errno %s, handler ran %d\n",
           who, seconds, after_ms, verdict, e == EINTR ? "EINTR" : e == 0 ? "0" : "other",
           atomic_load(&usr1) - before);
}

static void *in_thread(void *arg) {
    (void)arg;
    interrupted(30, 200, "created thread");
    return NULL;
}

int main(void) {
    alarm(60);
    struct sigaction sa = {.sa_handler = on_usr1};
    sigemptyset(&sa.sa_mask);
    CHECK(sigaction(SIGUSR1, &sa, NULL) == 0);
    interrupted(30, 200, "main");
    interrupted(30, 1200, "main");
    pthread_t t;
    CHECK(pthread_create(&t, NULL, in_thread, NULL) == 0);
    CHECK(pthread_join(t, NULL) == 0);
    errno = 0;
    unsigned z = sleep(0);
    printf("sleep(0) returns %u, errno %d\n", z, errno);
    return 0;
}
