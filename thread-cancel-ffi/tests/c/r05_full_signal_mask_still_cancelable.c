/* R05: a thread that blocks every signal can still be canceled, as with
 * glibc, which never lets its cancel signal be blocked. Each case: a thread blocks all signals
 * (pthread_sigmask or sigprocmask with a sigfillset set, or inherits the mask from its creator)
 * or passes a full mask to a call that takes one (sigsuspend, ppoll, pselect, epoll_pwait), or
 * waits for every signal (sigwait, sigwaitinfo, sigtimedwait: the cancel signal must not be
 * taken as their result); then it blocks (or spins with the asynchronous type) and is canceled:
 * join reports PTHREAD_CANCELED and the cleanup handler ran.
 *
 * TC_COMPARE_WITH_GLIBC: the runner also builds this against plain glibc; both print the same.
 * R05_CASE=<n> runs case n alone. */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <sys/epoll.h>
#include <sys/select.h>
#include <unistd.h>
#include "tc_test.h"

enum kind { K_ASYNC_SPIN, K_READ_AFTER_SIGPROCMASK, K_READ_WITH_INHERITED_MASK, K_SIGSUSPEND,
            K_PPOLL, K_PSELECT, K_EPOLL_PWAIT, K_SIGWAIT, K_SIGWAITINFO, K_SIGTIMEDWAIT, K_COUNT };
static const char *names[K_COUNT] = {
    "async spin after pthread_sigmask(SIG_BLOCK, full)", "read after sigprocmask(SIG_SETMASK, full)",
    "read with a full mask inherited from the creator", "sigsuspend(full)", "ppoll(full)",
    "pselect(full)", "epoll_pwait(full)", "sigwait(full)", "sigwaitinfo(full)",
    "sigtimedwait(full, 1 h)"};

static int pipefd[2], epfd;
static atomic_int started, cleaned;
static atomic_int tid;

static void cleanup(void *arg) {
    (void)arg;
    atomic_fetch_add(&cleaned, 1);
}

static void *blocker(void *arg) {
    int k = (int)(long)arg;
    sigset_t full;
    sigfillset(&full);
    char b;
    pthread_cleanup_push(cleanup, NULL);
    atomic_store(&tid, test_gettid());
    switch (k) {
    case K_ASYNC_SPIN:
        CHECK(pthread_sigmask(SIG_BLOCK, &full, NULL) == 0);
        CHECK(pthread_setcanceltype(PTHREAD_CANCEL_ASYNCHRONOUS, NULL) == 0);
        atomic_store(&started, 1);
        for (volatile unsigned long spin = 0;; spin++) {
        }
        break;
    case K_READ_AFTER_SIGPROCMASK:
        CHECK(sigprocmask(SIG_SETMASK, &full, NULL) == 0);
        atomic_store(&started, 1);
        read(pipefd[0], &b, 1);
        break;
    case K_READ_WITH_INHERITED_MASK:
        atomic_store(&started, 1);
        read(pipefd[0], &b, 1);
        break;
    case K_SIGSUSPEND:
        atomic_store(&started, 1);
        sigsuspend(&full);
        break;
    case K_PPOLL: {
        struct pollfd p = {.fd = pipefd[0], .events = POLLIN};
        atomic_store(&started, 1);
        ppoll(&p, 1, NULL, &full);
        break;
    }
    case K_PSELECT: {
        fd_set r;
        FD_ZERO(&r);
        FD_SET(pipefd[0], &r);
        atomic_store(&started, 1);
        pselect(pipefd[0] + 1, &r, NULL, NULL, NULL, &full);
        break;
    }
    case K_EPOLL_PWAIT: {
        struct epoll_event ev;
        atomic_store(&started, 1);
        epoll_pwait(epfd, &ev, 1, -1, &full);
        break;
    }
    case K_SIGWAIT: {
        int sig = 0;
        atomic_store(&started, 1);
        sigwait(&full, &sig);
        break;
    }
    case K_SIGWAITINFO:
        atomic_store(&started, 1);
        sigwaitinfo(&full, NULL);
        break;
    case K_SIGTIMEDWAIT: {
        struct timespec hour = {3600, 0};
        atomic_store(&started, 1);
        sigtimedwait(&full, NULL, &hour);
        break;
    }
    }
    pthread_cleanup_pop(0);
    return (void *)1; /* only if the call returned: reported as "not canceled" */
}

static int run_case(int k) {
    atomic_store(&started, 0);
    atomic_store(&tid, 0);
    int before = atomic_load(&cleaned);
    sigset_t full, old;
    sigfillset(&full);
    if (k == K_READ_WITH_INHERITED_MASK) CHECK(pthread_sigmask(SIG_SETMASK, &full, &old) == 0);
    pthread_t t;
    CHECK(pthread_create(&t, NULL, blocker, (void *)(long)k) == 0);
    if (k == K_READ_WITH_INHERITED_MASK) CHECK(pthread_sigmask(SIG_SETMASK, &old, NULL) == 0);
    while (!atomic_load(&started)) test_msleep(1);
    if (k == K_ASYNC_SPIN)
        test_msleep(20);
    else
        test_wait_blocked(atomic_load(&tid));
    CHECK(pthread_cancel(t) == 0);
    void *ret;
    CHECK(pthread_join(t, &ret) == 0);
    int ok = ret == PTHREAD_CANCELED && atomic_load(&cleaned) == before + 1;
    printf("%s: %s\n", names[k], ok ? "canceled" : "NOT canceled");
    return ok;
}

int main(void) {
    alarm(60); /* a case that hangs ends the program: reported as a failure by the runner */
    CHECK(pipe(pipefd) == 0);
    epfd = epoll_create1(0);
    struct epoll_event ev = {.events = EPOLLIN};
    CHECK(epoll_ctl(epfd, EPOLL_CTL_ADD, pipefd[0], &ev) == 0);
    const char *only = getenv("R05_CASE");
    int failed = 0;
    for (int k = 0; k < K_COUNT; k++) {
        if (only && atoi(only) != k) continue;
        fflush(stdout);
        failed += !run_case(k);
    }
    return failed ? 1 : 0;
}
