#define _GNU_SOURCE /* pthread_sigqueue */
/* R05: the signal just below SIGRTMIN is the C library's own (glibc: 33, its SIGSETXID; ours:
 * the cancel signal), and the program cannot send it to a thread: pthread_kill and
 * pthread_sigqueue fail with EINVAL and raise with -1 and errno EINVAL, as glibc's do for its
 * internal signals, for the calling thread and for another. The program's own signals
 * (SIGRTMIN, signal 0) still go through, and the library's own sending is not refused: a thread
 * blocked in read is still canceled.
 *
 * TC_COMPARE_WITH_GLIBC: the runner also builds this against plain glibc; both print the same.
 * Preloaded (the plain-glibc build given libthread_cancel.so with LD_PRELOAD), the program's
 * signal calls are the library's definitions for the process, which refuse the cancel signal
 * as the header's do: the same lines (before, they were the C library's, which refuse glibc's
 * own signals but not the library's). */
#include <pthread.h>
#include <signal.h>
#include "tc_test.h"

static int pipefd[2];
static atomic_int tid, got_rtmin;
static int refused; /* how many of the five sends below were refused */

static void on_rtmin(int sig) {
    (void)sig;
    atomic_fetch_add(&got_rtmin, 1);
}

static void *reader(void *arg) {
    (void)arg;
    char b;
    atomic_store(&tid, test_gettid());
    read(pipefd[0], &b, 1);
    return NULL; /* only if read returned: reported as "not canceled" */
}

/* "EINVAL" for an error number (or -1 with errno) of EINVAL, else what came back. */
static const char *said(int r, int err) {
    static char buf[64];
    if (r == EINVAL || (r == -1 && err == EINVAL)) {
        refused++;
        return "EINVAL";
    }
    snprintf(buf, sizeof buf, "%d (errno %d)", r, err);
    return buf;
}

int main(void) {
    alarm(60); /* a hang ends the program: reported as a failure by the runner */
    CHECK(pipe(pipefd) == 0);
    CHECK(signal(SIGRTMIN, on_rtmin) != SIG_ERR);
    int lib = SIGRTMIN - 1;
    union sigval v = {.sival_int = 1};

    errno = 0;
    int r = pthread_kill(pthread_self(), lib);
    printf("pthread_kill(pthread_self(), SIGRTMIN - 1): %s\n", said(r, errno));
    errno = 0;
    r = raise(lib);
    printf("raise(SIGRTMIN - 1): %s\n", said(r, errno));
    errno = 0;
    r = pthread_sigqueue(pthread_self(), lib, v);
    printf("pthread_sigqueue(pthread_self(), SIGRTMIN - 1): %s\n", said(r, errno));
    fflush(stdout);

    pthread_t t;
    CHECK(pthread_create(&t, NULL, reader, NULL) == 0);
    test_wait_ge(&tid, 1);
    test_wait_blocked(atomic_load(&tid));
    errno = 0;
    r = pthread_kill(t, lib);
    printf("pthread_kill(another thread, SIGRTMIN - 1): %s\n", said(r, errno));
    errno = 0;
    r = pthread_sigqueue(t, lib, v);
    printf("pthread_sigqueue(another thread, SIGRTMIN - 1): %s\n", said(r, errno));

    int ok0 = pthread_kill(t, 0) == 0;
    int ok1 = pthread_kill(pthread_self(), SIGRTMIN) == 0 && raise(SIGRTMIN) == 0 &&
              pthread_sigqueue(pthread_self(), SIGRTMIN, v) == 0;
    printf("the program's signals: pthread_kill(t, 0) %s; SIGRTMIN sent three ways, "
           "handled %d times\n", ok0 ? "0" : "failed", ok1 ? atomic_load(&got_rtmin) : -1);

    CHECK(pthread_cancel(t) == 0);
    void *ret;
    CHECK(pthread_join(t, &ret) == 0);
    printf("a thread blocked in read: %s\n", ret == PTHREAD_CANCELED ? "canceled" : "NOT canceled");
    return ret == PTHREAD_CANCELED && refused == 5 ? 0 : 1;
}
