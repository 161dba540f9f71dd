#define _GNU_SOURCE /* sysv_signal */
/* R05: the older signal calls treat the signal just below SIGRTMIN as the C library's own
 * (glibc: 33, its SIGSETXID; ours: the cancel signal), as glibc's do for its internal signals:
 * sigset (SIG_HOLD too), sysv_signal and bsd_signal return SIG_ERR with errno EINVAL, sigignore,
 * sighold, sigrelse and siginterrupt -1 with errno EINVAL. They still work on the program's
 * signals (SIGRTMIN), and after them a thread blocked in read is still canceled (none of them
 * ignored, reset or blocked the library's signal).
 *
 * TC_COMPARE_WITH_GLIBC: the runner also builds this against plain glibc; both print the same.
 * Preloaded (the plain-glibc build given libthread_cancel.so with LD_PRELOAD), the program's
 * signal calls are the library's definitions for the process, which refuse the cancel signal
 * as the header's do: the same lines (before, they were the C library's, which refuse glibc's
 * own signals but not the library's). */
#include <pthread.h>
#include <signal.h>
#include "tc_test.h"

#pragma GCC diagnostic ignored "-Wdeprecated-declarations" /* sigset, sighold, ... */

/* glibc declares it for X/Open modes before POSIX 2008 only (not with _GNU_SOURCE). */
extern void (*bsd_signal(int, void (*)(int)))(int);

static int pipefd[2];
static atomic_int tid, got_rtmin;
static int refused; /* how many of the calls below refused the library's signal */

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

/* "EINVAL" for -1 (or SIG_ERR) with errno EINVAL, else what came back. */
static const char *said(int failed, int err) {
    static char buf[64];
    if (failed && err == EINVAL) {
        refused++;
        return "EINVAL";
    }
    snprintf(buf, sizeof buf, "%s (errno %d)", failed ? "failed" : "succeeded", err);
    return buf;
}

/* The call, then what it said (the comma operator orders them: errno is read after it). */
static int failed;
#define HANDLER_CALL(call) (errno = 0, failed = (call) == SIG_ERR, said(failed, errno))
#define INT_CALL(call) (errno = 0, failed = (call) == -1, said(failed, errno))

int main(void) {
    alarm(60); /* a hang ends the program: reported as a failure by the runner */
    CHECK(pipe(pipefd) == 0);
    int lib = SIGRTMIN - 1;

    printf("sigset(SIGRTMIN - 1, SIG_IGN): %s\n", HANDLER_CALL(sigset(lib, SIG_IGN)));
    printf("sigset(SIGRTMIN - 1, SIG_HOLD): %s\n", HANDLER_CALL(sigset(lib, SIG_HOLD)));
    printf("sysv_signal(SIGRTMIN - 1, SIG_IGN): %s\n", HANDLER_CALL(sysv_signal(lib, SIG_IGN)));
    printf("bsd_signal(SIGRTMIN - 1, SIG_IGN): %s\n", HANDLER_CALL(bsd_signal(lib, SIG_IGN)));
    printf("sigignore(SIGRTMIN - 1): %s\n", INT_CALL(sigignore(lib)));
    printf("sighold(SIGRTMIN - 1): %s\n", INT_CALL(sighold(lib)));
    printf("sigrelse(SIGRTMIN - 1): %s\n", INT_CALL(sigrelse(lib)));
    printf("siginterrupt(SIGRTMIN - 1, 1): %s\n", INT_CALL(siginterrupt(lib, 1)));
    fflush(stdout);

    /* The program's signal: each call does its work. */
    int ok = sysv_signal(SIGRTMIN, on_rtmin) != SIG_ERR && raise(SIGRTMIN) == 0; /* reset: */
    ok &= bsd_signal(SIGRTMIN, on_rtmin) == SIG_DFL && raise(SIGRTMIN) == 0;
    ok &= sigset(SIGRTMIN, on_rtmin) == on_rtmin && siginterrupt(SIGRTMIN, 1) == 0;
    ok &= sighold(SIGRTMIN) == 0 && raise(SIGRTMIN) == 0 && atomic_load(&got_rtmin) == 2;
    ok &= sigrelse(SIGRTMIN) == 0 && atomic_load(&got_rtmin) == 3; /* the held one arrived */
    ok &= sigignore(SIGRTMIN) == 0 && raise(SIGRTMIN) == 0 && atomic_load(&got_rtmin) == 3;
    printf("on SIGRTMIN: sysv_signal, bsd_signal, sigset, siginterrupt, sighold, sigrelse, "
           "sigignore work: %s\n", ok ? "yes" : "NO");
    fflush(stdout);

    pthread_t t;
    CHECK(pthread_create(&t, NULL, reader, NULL) == 0);
    test_wait_ge(&tid, 1);
    test_wait_blocked(atomic_load(&tid));
    CHECK(pthread_cancel(t) == 0);
    void *ret;
    CHECK(pthread_join(t, &ret) == 0);
    printf("then a thread blocked in read: %s\n",
           ret == PTHREAD_CANCELED ? "canceled" : "NOT canceled");
    return ret == PTHREAD_CANCELED && ok && refused == 8 ? 0 : 1;
}
