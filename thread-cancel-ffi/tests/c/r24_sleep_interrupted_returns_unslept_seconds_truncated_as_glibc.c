/* sleep() interrupted by a handled signal returns the unslept time in whole seconds truncated,
 * as glibc (POSIX allows rounding either way; "as glibc" means glibc's): sleep(5) interrupted
 * after about 200 ms returns 4, sleep(3) after about 1.2 s returns 1, with errno EINTR; sleep(0)
 * returns 0. The signal is SIGUSR1 sent by another thread (SIGALRM is the program's timeout),
 * to the main thread and to a created thread. Through the header the time left was rounded up
 * (5 and 2).
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

struct shot {
    pthread_t target;
    long after_ms;
};

static void *shoot(void *arg) {
    struct shot *s = arg;
    test_msleep(s->after_ms);
    CHECK(pthread_kill(s->target, SIGUSR1) == 0);
    return NULL;
}

/* sleep(seconds) in the calling thread, SIGUSR1 after `after_ms`. */
static void interrupted(unsigned seconds, long after_ms, const char *who) {
    struct shot s = {pthread_self(), after_ms};
    pthread_t t;
    int before = atomic_load(&usr1);
    CHECK(pthread_create(&t, NULL, shoot, &s) == 0);
    errno = 0;
    unsigned left = sleep(seconds);
    int e = errno;
    CHECK(pthread_join(t, NULL) == 0);
    printf("%s: sleep(%u) interrupted after %ld ms returns %u, errno %s, handler ran %d\n", who,
           seconds, after_ms, left, e == EINTR ? "EINTR" : e == 0 ? "0" : "other",
           atomic_load(&usr1) - before);
}

static void *in_thread(void *arg) {
    (void)arg;
    interrupted(5, 200, "created thread");
    return NULL;
}

int main(void) {
    alarm(60);
    struct sigaction sa = {.sa_handler = on_usr1};
    sigemptyset(&sa.sa_mask);
    CHECK(sigaction(SIGUSR1, &sa, NULL) == 0);
    interrupted(5, 200, "main");
    interrupted(3, 1200, "main");
    pthread_t t;
    CHECK(pthread_create(&t, NULL, in_thread, NULL) == 0);
    CHECK(pthread_join(t, NULL) == 0);
    errno = 0;
    unsigned z = sleep(0);
    printf("sleep(0) returns %u, errno %d\n", z, errno);
    return 0;
}
