/* R24: glibc's system-call points beyond the ones of r24_points and
 * r24_more_points: preadv2, pwritev2, sendmmsg, recvmmsg, epoll_pwait2, wait3, wait4, splice,
 * tee, vmsplice, sigpause, aio_suspend each block in a thread that is then canceled: join
 * reports PTHREAD_CANCELED and the cleanup handler ran. preadv and pwritev cannot block on a
 * descriptor that has an offset, so they are entered with a request pending instead (glibc
 * acts in the call too).
 *
 * TC_COMPARE_WITH_GLIBC: the runner also builds this against plain glibc; both print the same.
 * R24_CASE=<n> runs case n alone. */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <aio.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <sys/epoll.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/uio.h>
#include <sys/wait.h>
#include <unistd.h>
#include "tc_test.h"

/* struct mmsghdr is declared only with _GNU_SOURCE, which the force-included compat header
 * fixes before this file's own define (see pthread_compat.h on feature macros): its layout. */
struct test_mmsghdr {
    struct msghdr msg_hdr;
    unsigned int msg_len;
};

#pragma GCC diagnostic ignored "-Wdeprecated-declarations" /* glibc's sigpause */

enum kind { K_PREADV2, K_PWRITEV2, K_SENDMMSG, K_RECVMMSG, K_EPOLL_PWAIT2, K_WAIT3, K_WAIT4,
            K_SPLICE, K_TEE, K_VMSPLICE, K_SIGPAUSE, K_AIO_SUSPEND, K_PREADV_PENDING,
            K_PWRITEV_PENDING, K_COUNT };
static const char *names[K_COUNT] = {"preadv2", "pwritev2", "sendmmsg", "recvmmsg",
                                     "epoll_pwait2", "wait3", "wait4", "splice", "tee",
                                     "vmsplice", "sigpause", "aio_suspend",
                                     "preadv (request pending)", "pwritev (request pending)"};

static int empty_pipe[2], full_pipe[2], out_pipe[2], socks[2], full_socks[2], epfd, filefd;
static pid_t child;
static struct aiocb aio_cb;
static atomic_int started, cleaned, tid;

static void cleanup(void *arg) {
    (void)arg;
    atomic_fetch_add(&cleaned, 1);
}

static void fill(int fd) { /* until it would block */
    static char junk[4096];
    int fl = fcntl(fd, F_GETFL);
    CHECK(fcntl(fd, F_SETFL, fl | O_NONBLOCK) == 0);
    while ((write)(fd, junk, sizeof junk) > 0) {
    }
    CHECK(fcntl(fd, F_SETFL, fl) == 0);
}

static void *blocker(void *arg) {
    int k = (int)(long)arg;
    char buf[64] = "x";
    struct iovec iov = {buf, sizeof buf};
    struct test_mmsghdr m = {.msg_hdr = {.msg_iov = &iov, .msg_iovlen = 1}};
    pthread_cleanup_push(cleanup, NULL);
    atomic_store(&tid, test_gettid());
    atomic_store(&started, 1);
    switch (k) {
    case K_PREADV2: preadv2(empty_pipe[0], &iov, 1, -1, 0); break;
    case K_PWRITEV2: pwritev2(full_pipe[1], &iov, 1, -1, 0); break;
    case K_SENDMMSG: sendmmsg(full_socks[0], (struct mmsghdr *)&m, 1, 0); break;
    case K_RECVMMSG: recvmmsg(socks[0], (struct mmsghdr *)&m, 1, 0, NULL); break;
    case K_EPOLL_PWAIT2: {
        struct epoll_event ev;
        epoll_pwait2(epfd, &ev, 1, NULL, NULL);
        break;
    }
    case K_WAIT3: {
        int st;
        struct rusage ru;
        wait3(&st, 0, &ru);
        break;
    }
    case K_WAIT4: {
        int st;
        wait4(child, &st, 0, NULL);
        break;
    }
    case K_SPLICE: splice(empty_pipe[0], NULL, out_pipe[1], NULL, 16, 0); break;
    case K_TEE: tee(empty_pipe[0], out_pipe[1], 16, 0); break;
    case K_VMSPLICE: vmsplice(full_pipe[1], &iov, 1, 0); break;
    case K_SIGPAUSE: sigpause(SIGUSR2); break;
    case K_AIO_SUSPEND: {
        /* Static: glibc's helper thread goes on reading after the wait is canceled (main
         * completes the read afterwards). */
        static char aio_buf[1];
        aio_cb = (struct aiocb){.aio_fildes = empty_pipe[0], .aio_buf = aio_buf, .aio_nbytes = 1};
        CHECK(aio_read(&aio_cb) == 0);
        const struct aiocb *list[1] = {&aio_cb};
        aio_suspend(list, 1, NULL);
        break;
    }
    case K_PREADV_PENDING:
        pthread_cancel(pthread_self());
        preadv(filefd, &iov, 1, 0);
        break;
    case K_PWRITEV_PENDING:
        pthread_cancel(pthread_self());
        pwritev(filefd, &iov, 1, 0);
        break;
    }
    pthread_cleanup_pop(0);
    return (void *)1;
}

static int run_case(int k) {
    atomic_store(&started, 0);
    atomic_store(&tid, 0);
    int before = atomic_load(&cleaned);
    pthread_t t;
    CHECK(pthread_create(&t, NULL, blocker, (void *)(long)k) == 0);
    while (!atomic_load(&started)) test_msleep(1);
    if (k != K_PREADV_PENDING && k != K_PWRITEV_PENDING) {
        test_wait_blocked(atomic_load(&tid));
        int rc = pthread_cancel(t);
        CHECK(rc == 0);
    }
    void *ret;
    CHECK(pthread_join(t, &ret) == 0);
    int ok = ret == PTHREAD_CANCELED && atomic_load(&cleaned) == before + 1;
    if (k == K_AIO_SUSPEND) { /* complete glibc's read, which the canceled wait left */
        CHECK((write)(empty_pipe[1], "y", 1) == 1);
        while (aio_error(&aio_cb) == EINPROGRESS) test_msleep(1);
    }
    printf("%s: %s\n", names[k], ok ? "canceled" : "NOT canceled");
    return ok;
}

int main(void) {
    alarm(60);
    CHECK(pipe(empty_pipe) == 0 && pipe(full_pipe) == 0 && pipe(out_pipe) == 0);
    fill(full_pipe[1]);
    CHECK(socketpair(AF_UNIX, SOCK_DGRAM, 0, socks) == 0);
    CHECK(socketpair(AF_UNIX, SOCK_DGRAM, 0, full_socks) == 0);
    fill(full_socks[0]);
    epfd = epoll_create1(0);
    struct epoll_event ev = {.events = EPOLLIN};
    CHECK(epoll_ctl(epfd, EPOLL_CTL_ADD, empty_pipe[0], &ev) == 0);
    char path[] = "/tmp/tc-r24-glibc-XXXXXX";
    filefd = mkstemp(path);
    CHECK(filefd >= 0);
    unlink(path);
    sigset_t usr2;
    sigemptyset(&usr2);
    sigaddset(&usr2, SIGUSR2);
    CHECK(pthread_sigmask(SIG_BLOCK, &usr2, NULL) == 0);
    child = fork();
    if (child == 0) {
        int (*sys_pause)(void) = &pause;
        sys_pause();
        _exit(0);
    }
    const char *only = getenv("R24_CASE");
    int failed = 0;
    for (int k = 0; k < K_COUNT; k++) {
        if (only && atoi(only) != k) continue;
        fflush(stdout);
        failed += !run_case(k);
    }
    kill(child, SIGKILL);
    int st;
    (waitpid)(child, &st, 0);
    return failed ? 1 : 0;
}
