/* R24: the system-call points that r24_points_wake_on_cancel.c leaves out — pselect, epoll_pwait, sigtimedwait,
 * sigwaitinfo, waitid, fcntl(F_OFD_SETLKW), lockf(F_LOCK), msgrcv, msgsnd, mq_receive,
 * mq_timedreceive, mq_send — each blocks in a thread that is then canceled: join reports
 * PTHREAD_CANCELED and the cleanup handler ran. (lockf's process-wide locks cannot block a
 * thread of the same process: its F_LOCK is entered with a request pending instead.) */
#define _GNU_SOURCE
#include <fcntl.h>
#include <mqueue.h>
#include <pthread.h>
#include <signal.h>
#include <sys/epoll.h>
#include <sys/msg.h>
#include <sys/select.h>
#include <sys/wait.h>
#include <unistd.h>
#include "tc_test.h"

/* The compat header is included first (-include), before this file's _GNU_SOURCE: Linux's OFD
 * lock commands, by value (see pthread_compat.h on feature macros). */
#ifndef F_OFD_SETLK
#define F_OFD_SETLK 37
#define F_OFD_SETLKW 38
#endif

enum kind { K_PSELECT, K_EPOLL_PWAIT, K_SIGTIMEDWAIT, K_SIGWAITINFO, K_WAITID, K_OFD_SETLKW,
            K_LOCKF_PENDING, K_MSGRCV, K_MSGSND, K_MQ_RECEIVE, K_MQ_TIMEDRECEIVE, K_MQ_SEND, K_COUNT };
static const char *names[K_COUNT] = {"pselect", "epoll_pwait", "sigtimedwait", "sigwaitinfo",
                                     "waitid", "fcntl(F_OFD_SETLKW)", "lockf(F_LOCK)", "msgrcv",
                                     "msgsnd", "mq_receive", "mq_timedreceive", "mq_send"};

static int pipefd[2], epfd, lockfd, msq, child;
static char lockpath[64]; /* /proc/self/fd/<lockfd>: opening it makes a new open file description */
static mqd_t mq_empty, mq_full;
static atomic_int cleaned, started;

static void cleanup(void *arg) {
    (void)arg;
    atomic_fetch_add(&cleaned, 1);
}

static void *blocker(void *arg) {
    int k = (int)(long)arg;
    pthread_cleanup_push(cleanup, NULL);
    atomic_store(&started, 1);
    sigset_t set;
    sigemptyset(&set);
    sigaddset(&set, SIGUSR2);
    struct { long type; char text[8]; } m = {1, "x"};
    char buf[64];
    switch (k) {
    case K_PSELECT: {
        fd_set r;
        FD_ZERO(&r);
        FD_SET(pipefd[0], &r);
        pselect(pipefd[0] + 1, &r, NULL, NULL, NULL, NULL);
        break;
    }
    case K_EPOLL_PWAIT: {
        struct epoll_event ev;
        epoll_pwait(epfd, &ev, 1, -1, NULL);
        break;
    }
    case K_SIGTIMEDWAIT: sigtimedwait(&set, NULL, NULL); break;
    case K_SIGWAITINFO: sigwaitinfo(&set, NULL); break;
    case K_WAITID: {
        siginfo_t info;
        waitid(P_PID, (id_t)child, &info, WEXITED | WNOWAIT);
        break;
    }
    case K_OFD_SETLKW: {
        int fd = open(lockpath, O_RDWR);
        struct flock fl = {.l_type = F_WRLCK, .l_whence = SEEK_SET};
        fcntl(fd, F_OFD_SETLKW, &fl); /* blocks: main holds a write lock on another OFD */
        break;
    }
    case K_LOCKF_PENDING:
        pthread_cancel(pthread_self());
        lockf(lockfd, F_LOCK, 0); /* acts at entry */
        break;
    case K_MSGRCV: msgrcv(msq, &m, sizeof m.text, 0, 0); break;
    case K_MSGSND:
        for (;;) msgsnd(msq, &m, sizeof m.text, 0); /* until the queue is full, then blocks */
        break;
    case K_MQ_RECEIVE: mq_receive(mq_empty, buf, sizeof buf, NULL); break;
    case K_MQ_TIMEDRECEIVE: {
        struct timespec far;
        clock_gettime(CLOCK_REALTIME, &far);
        far.tv_sec += 3600;
        mq_timedreceive(mq_empty, buf, sizeof buf, NULL, &far);
        break;
    }
    case K_MQ_SEND:
        for (;;) mq_send(mq_full, "y", 1, 0); /* fills the queue, then blocks */
        break;
    }
    pthread_cleanup_pop(0);
    return (void *)1;
}

int main(void) {
    alarm(30);
    CHECK(pipe(pipefd) == 0);
    epfd = epoll_create1(0);
    struct epoll_event ev = {.events = EPOLLIN};
    CHECK(epoll_ctl(epfd, EPOLL_CTL_ADD, pipefd[0], &ev) == 0);
    sigset_t set;
    sigemptyset(&set);
    sigaddset(&set, SIGUSR2);
    CHECK(pthread_sigmask(SIG_BLOCK, &set, NULL) == 0);
    child = fork();
    if (child == 0) {
        int (*sys_pause)(void) = &pause;
        sys_pause();
        _exit(0);
    }
    char path[] = "/tmp/tc-r24-XXXXXX";
    lockfd = mkstemp(path);
    CHECK(lockfd >= 0);
    unlink(path);
    snprintf(lockpath, sizeof lockpath, "/proc/self/fd/%d", lockfd);
    msq = msgget(IPC_PRIVATE, IPC_CREAT | 0600);
    CHECK(msq >= 0);
    struct mq_attr attr = {.mq_maxmsg = 1, .mq_msgsize = 16};
    char n1[64], n2[64];
    snprintf(n1, sizeof n1, "/tc-r24-a-%d", getpid());
    snprintf(n2, sizeof n2, "/tc-r24-b-%d", getpid());
    mq_empty = mq_open(n1, O_CREAT | O_RDWR, 0600, &attr);
    mq_full = mq_open(n2, O_CREAT | O_RDWR, 0600, &attr);
    CHECK(mq_empty != (mqd_t)-1 && mq_full != (mqd_t)-1);
    mq_unlink(n1);
    mq_unlink(n2);
    int done = 0;
    for (int k = 0; k < K_COUNT; k++) {
        int ofd = -1;
        if (k == K_OFD_SETLKW) {
            /* Main's own OFD write lock; the thread's OFD conflicts with it. */
            ofd = open(lockpath, O_RDWR);
            CHECK(ofd >= 0);
            struct flock fl = {.l_type = F_WRLCK, .l_whence = SEEK_SET};
            CHECK(fcntl(ofd, F_OFD_SETLK, &fl) == 0);
        }
        atomic_store(&started, 0);
        int before = atomic_load(&cleaned);
        pthread_t t;
        CHECK(pthread_create(&t, NULL, blocker, (void *)(long)k) == 0);
        while (!atomic_load(&started)) test_msleep(1);
        test_msleep(30);
        int rc = pthread_cancel(t);
        CHECK(rc == 0 || rc == ESRCH);
        void *ret;
        CHECK(pthread_join(t, &ret) == 0);
        if (ret != PTHREAD_CANCELED || atomic_load(&cleaned) != before + 1) {
            fprintf(stderr, "%s: not canceled (ret %p)\n", names[k], ret);
            return 1;
        }
        if (ofd >= 0) (close)(ofd);
        done++;
    }
    kill(child, SIGKILL);
    int st;
    (waitpid)(child, &st, 0);
    msgctl(msq, IPC_RMID, NULL);
    printf("ok: %d more points canceled (pselect, epoll_pwait, sigtimedwait, sigwaitinfo, waitid, "
           "F_OFD_SETLKW, lockf, msgrcv, msgsnd, mq_receive, mq_timedreceive, mq_send)\n", done);
    return 0;
}
