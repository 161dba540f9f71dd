/* R24: the system-call cancellation points the C API maps, each checked in a created thread.
 *
 *   1. Blocked: a thread blocked in the point (seen sleeping in the kernel before the cancel)
 *      is woken by pthread_cancel: join reports PTHREAD_CANCELED and its cleanup handler ran.
 *      read, readv, recv, recvfrom, recvmsg (empty pipe / socket), write, writev, send, sendto,
 *      sendmsg (full pipe / socket), accept, accept4 (loopback TCP listener), connect (a Unix
 *      listener with a full backlog), open of a FIFO, poll, ppoll, select, epoll_wait, sleep,
 *      usleep, nanosleep, clock_nanosleep, pause, sigwait, sigsuspend, waitpid, wait (a child
 *      that sleeps), sem_wait, sem_timedwait, pthread_cond_wait, pthread_cond_timedwait,
 *      pthread_join (of a thread that sleeps). Where a canceled call could have had an effect,
 *      it had none: the child is still there to be reaped, the semaphore is still 0, the
 *      joined thread is still joinable.
 *   2. Entered: calls that do not block (fsync, fdatasync, pread, pwrite, open, openat, creat,
 *      close) act on a pending request when entered, with no effect: no descriptor made, no
 *      file created, no byte written (close: the descriptor is released exactly once).
 *   3. Timed, nobody cancels: sem_timedwait and pthread_cond_timedwait give ETIMEDOUT, poll,
 *      ppoll, select and epoll_wait give 0, nanosleep/clock_nanosleep complete.
 * Not covered here: tcdrain (needs a terminal), and the points r24_more_points_wake_on_cancel.c
 * checks (pselect, epoll_pwait, sigtimedwait, sigwaitinfo, waitid, fcntl F_SETLKW, lockf, mq_*,
 * msgrcv/msgsnd, msync). */
#include <fcntl.h>
#include <netinet/in.h>
#include <poll.h>
#include <pthread.h>
#include <semaphore.h>
#include <signal.h>
#include <sys/epoll.h>
#include <sys/msg.h>
#include <sys/select.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/uio.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>
#include "tc_test.h"

/* ---- shared state of one case (set up by main, used by the thread) ---- */

static int fds[2], lfd, epfd;
static pid_t child;
static sem_t sem;
static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t cv = PTHREAD_COND_INITIALIZER;
static pthread_t sleeper_thread;
static char dir[64], path[128];
static struct sockaddr_un unaddr;

static void no_setup(void) {}
static void no_teardown(void) {}

static void pipe_setup(void) {
    CHECK(pipe(fds) == 0);
}

static void pair_setup(void) {
    CHECK(socketpair(AF_UNIX, SOCK_STREAM, 0, fds) == 0);
}

static void close_pair(void) {
    (close)(fds[0]);
    (close)(fds[1]);
}

/* Fills fds[1] (pipe or socket) until it would block, then makes it blocking again. */
static void fill(void) {
    int fl = fcntl(fds[1], F_GETFL);
    CHECK(fcntl(fds[1], F_SETFL, fl | O_NONBLOCK) == 0);
    static char buf[4096];
    while ((write)(fds[1], buf, sizeof buf) > 0) {
    }
    CHECK(errno == EAGAIN);
    while ((write)(fds[1], buf, 1) > 0) {
    }
    CHECK(fcntl(fds[1], F_SETFL, fl) == 0);
}

static void full_pipe_setup(void) {
    pipe_setup();
    fill();
}

static void full_pair_setup(void) {
    pair_setup();
    fill();
}

static void tcp_setup(void) {
    CHECK((lfd = socket(AF_INET, SOCK_STREAM, 0)) >= 0);
    struct sockaddr_in a = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
    CHECK(bind(lfd, (struct sockaddr *)&a, sizeof a) == 0);
    CHECK(listen(lfd, 8) == 0);
}

static void lfd_teardown(void) {
    (close)(lfd);
}

/* A Unix listener with backlog 0 and one connection queued: the next connect blocks. */
static void connect_setup(void) {
    memset(&unaddr, 0, sizeof unaddr);
    unaddr.sun_family = AF_UNIX;
    snprintf(unaddr.sun_path + 1, sizeof unaddr.sun_path - 1, "tc-r24-%d", (int)getpid());
    CHECK((lfd = socket(AF_UNIX, SOCK_STREAM, 0)) >= 0);
    CHECK(bind(lfd, (struct sockaddr *)&unaddr, sizeof unaddr) == 0);
    CHECK(listen(lfd, 0) == 0);
    CHECK((fds[0] = socket(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK, 0)) >= 0);
    CHECK((connect)(fds[0], (struct sockaddr *)&unaddr, sizeof unaddr) == 0);
    CHECK((fds[1] = socket(AF_UNIX, SOCK_STREAM, 0)) >= 0); /* the thread's, blocking */
}

static void connect_teardown(void) {
    close_pair();
    (close)(lfd);
}

static void fifo_setup(void) {
    snprintf(path, sizeof path, "%s/fifo", dir);
    CHECK(mkfifo(path, 0600) == 0);
}

static void fifo_teardown(void) {
    CHECK(unlink(path) == 0);
}

static void epoll_setup(void) {
    pipe_setup();
    CHECK((epfd = epoll_create1(0)) >= 0);
    struct epoll_event ev = {.events = EPOLLIN, .data.fd = fds[0]};
    CHECK(epoll_ctl(epfd, EPOLL_CTL_ADD, fds[0], &ev) == 0);
}

static void epoll_teardown(void) {
    (close)(epfd);
    close_pair();
}

static void child_setup(void) {
    child = fork();
    CHECK(child >= 0);
    if (child == 0) {
        for (;;) (pause)(); /* the system's pause: the child only waits to be killed */
    }
}

static void child_teardown(void) {
    /* The canceled wait reaped nothing: the child is still ours to reap. */
    CHECK(kill(child, SIGKILL) == 0);
    int st;
    CHECK((waitpid)(child, &st, 0) == child);
    CHECK(WIFSIGNALED(st) && WTERMSIG(st) == SIGKILL);
}

static void sem_setup(void) {
    CHECK(sem_init(&sem, 0, 0) == 0);
}

static void sem_teardown(void) {
    int v = -1;
    CHECK(sem_getvalue(&sem, &v) == 0);
    CHECK(v == 0);
    CHECK(sem_post(&sem) == 0);
    CHECK(sem_trywait(&sem) == 0); /* the token was not taken by the canceled wait */
    CHECK(sem_destroy(&sem) == 0);
}

static void *sleeps(void *arg) {
    (void)arg;
    for (;;) sleep(60);
    return NULL;
}

static void join_setup(void) {
    CHECK(pthread_create(&sleeper_thread, NULL, sleeps, NULL) == 0);
}

static void join_teardown(void) {
    /* The canceled joiner left it joinable. */
    CHECK(pthread_cancel(sleeper_thread) == 0);
    void *ret;
    CHECK(pthread_join(sleeper_thread, &ret) == 0);
    CHECK(ret == PTHREAD_CANCELED);
}

/* ---- the blocking calls (in the thread); each returns only on an unexpected result ---- */

static struct timespec in_60s(clockid_t c) {
    struct timespec ts;
    clock_gettime(c, &ts);
    ts.tv_sec += 60;
    return ts;
}

static long do_read(void) {
    char b;
    return read(fds[0], &b, 1);
}
static long do_readv(void) {
    char b;
    struct iovec v = {&b, 1};
    return readv(fds[0], &v, 1);
}
static long do_recv(void) {
    char b;
    return recv(fds[0], &b, 1, 0);
}
static long do_recvfrom(void) {
    char b;
    return recvfrom(fds[0], &b, 1, 0, NULL, NULL);
}
static long do_recvmsg(void) {
    char b;
    struct iovec v = {&b, 1};
    struct msghdr m = {.msg_iov = &v, .msg_iovlen = 1};
    return recvmsg(fds[0], &m, 0);
}
static long do_write(void) {
    return write(fds[1], "w", 1);
}
static long do_writev(void) {
    struct iovec v = {"w", 1};
    return writev(fds[1], &v, 1);
}
static long do_send(void) {
    return send(fds[1], "s", 1, 0);
}
static long do_sendto(void) {
    return sendto(fds[1], "s", 1, 0, NULL, 0);
}
static long do_sendmsg(void) {
    struct iovec v = {"s", 1};
    struct msghdr m = {.msg_iov = &v, .msg_iovlen = 1};
    return sendmsg(fds[1], &m, 0);
}
static long do_accept(void) {
    return accept(lfd, NULL, NULL);
}
static long do_accept4(void) {
    return accept4(lfd, NULL, NULL, 0);
}
static long do_connect(void) {
    return connect(fds[1], (struct sockaddr *)&unaddr, sizeof unaddr);
}
static long do_open_fifo(void) {
    return open(path, O_RDONLY);
}
static long do_poll(void) {
    struct pollfd p = {.fd = fds[0], .events = POLLIN};
    return poll(&p, 1, -1);
}
static long do_ppoll(void) {
    struct pollfd p = {.fd = fds[0], .events = POLLIN};
    return ppoll(&p, 1, NULL, NULL);
}
static long do_select(void) {
    fd_set r;
    FD_ZERO(&r);
    FD_SET(fds[0], &r);
    return select(fds[0] + 1, &r, NULL, NULL, NULL);
}
static long do_epoll_wait(void) {
    struct epoll_event ev;
    return epoll_wait(epfd, &ev, 1, -1);
}
static long do_sleep(void) {
    return sleep(60);
}
static long do_usleep(void) {
    for (;;)
        if (usleep(999999) != 0) return -1;
}
static long do_nanosleep(void) {
    struct timespec ts = {60, 0};
    return nanosleep(&ts, NULL);
}
static long do_clock_nanosleep(void) {
    struct timespec ts = in_60s(CLOCK_MONOTONIC);
    return clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, NULL);
}
static long do_pause(void) {
    return pause();
}
static long do_sigwait(void) {
    sigset_t s;
    sigemptyset(&s);
    sigaddset(&s, SIGUSR1);
    CHECK(pthread_sigmask(SIG_BLOCK, &s, NULL) == 0);
    int sig;
    return sigwait(&s, &sig);
}
static long do_sigsuspend(void) {
    sigset_t s;
    sigemptyset(&s);
    return sigsuspend(&s);
}
static long do_waitpid(void) {
    int st;
    return waitpid(child, &st, 0);
}
static long do_wait(void) {
    int st;
    return wait(&st);
}
static long do_sem_wait(void) {
    return sem_wait(&sem);
}
static long do_sem_timedwait(void) {
    struct timespec ts = in_60s(CLOCK_REALTIME);
    return sem_timedwait(&sem, &ts);
}
static void unlock(void *m) {
    pthread_mutex_unlock(m);
}
static long do_cond_wait(void) {
    CHECK(pthread_mutex_lock(&mu) == 0);
    long r = 0;
    pthread_cleanup_push(unlock, &mu);
    r = pthread_cond_wait(&cv, &mu);
    pthread_cleanup_pop(1);
    return r ? r : 999; /* no one signals: any return is unexpected */
}
static long do_cond_timedwait(void) {
    CHECK(pthread_mutex_lock(&mu) == 0);
    long r = 0;
    struct timespec ts = in_60s(CLOCK_REALTIME);
    pthread_cleanup_push(unlock, &mu);
    r = pthread_cond_timedwait(&cv, &mu, &ts);
    pthread_cleanup_pop(1);
    return r ? r : 999;
}
static long do_join(void) {
    return pthread_join(sleeper_thread, NULL);
}

struct blocking {
    const char *name;
    void (*setup)(void);
    long (*call)(void);
    void (*teardown)(void);
};

static const struct blocking blocking[] = {
    {"read", pipe_setup, do_read, close_pair},
    {"readv", pipe_setup, do_readv, close_pair},
    {"recv", pair_setup, do_recv, close_pair},
    {"recvfrom", pair_setup, do_recvfrom, close_pair},
    {"recvmsg", pair_setup, do_recvmsg, close_pair},
    {"write", full_pipe_setup, do_write, close_pair},
    {"writev", full_pipe_setup, do_writev, close_pair},
    {"send", full_pair_setup, do_send, close_pair},
    {"sendto", full_pair_setup, do_sendto, close_pair},
    {"sendmsg", full_pair_setup, do_sendmsg, close_pair},
    {"accept", tcp_setup, do_accept, lfd_teardown},
    {"accept4", tcp_setup, do_accept4, lfd_teardown},
    {"connect", connect_setup, do_connect, connect_teardown},
    {"open (FIFO)", fifo_setup, do_open_fifo, fifo_teardown},
    {"poll", pipe_setup, do_poll, close_pair},
    {"ppoll", pipe_setup, do_ppoll, close_pair},
    {"select", pipe_setup, do_select, close_pair},
    {"epoll_wait", epoll_setup, do_epoll_wait, epoll_teardown},
    {"sleep", no_setup, do_sleep, no_teardown},
    {"usleep", no_setup, do_usleep, no_teardown},
    {"nanosleep", no_setup, do_nanosleep, no_teardown},
    {"clock_nanosleep", no_setup, do_clock_nanosleep, no_teardown},
    {"pause", no_setup, do_pause, no_teardown},
    {"sigwait", no_setup, do_sigwait, no_teardown},
    {"sigsuspend", no_setup, do_sigsuspend, no_teardown},
    {"waitpid", child_setup, do_waitpid, child_teardown},
    {"wait", child_setup, do_wait, child_teardown},
    {"sem_wait", sem_setup, do_sem_wait, sem_teardown},
    {"sem_timedwait", sem_setup, do_sem_timedwait, sem_teardown},
    {"pthread_cond_wait", no_setup, do_cond_wait, no_teardown},
    {"pthread_cond_timedwait", no_setup, do_cond_timedwait, no_teardown},
    {"pthread_join", join_setup, do_join, join_teardown},
};
#define NBLOCKING (int)(sizeof blocking / sizeof blocking[0])

struct ctl {
    long (*call)(void);
    atomic_int tid, about_to_block, cleaned, returned;
    long result;
    int err;
};

static void cleanup(void *arg) {
    atomic_store(&((struct ctl *)arg)->cleaned, 1);
}

static void *blocker(void *arg) {
    struct ctl *c = arg;
    pthread_cleanup_push(cleanup, c);
    atomic_store(&c->tid, test_gettid());
    atomic_store(&c->about_to_block, 1);
    c->result = c->call();
    c->err = errno;
    atomic_store(&c->returned, 1);
    pthread_cleanup_pop(0);
    return NULL;
}

static void run_blocking(const struct blocking *b) {
    b->setup();
    struct ctl c = {.call = b->call};
    pthread_t t;
    CHECK(pthread_create(&t, NULL, blocker, &c) == 0);
    test_wait_ge(&c.about_to_block, 1);
    /* Blocked in the kernel (3 samples in a row), unless the call returned at once. */
    for (int seen = 0; seen < 3 && !atomic_load(&c.returned);) {
        char s = test_thread_state((pid_t)atomic_load(&c.tid));
        seen = s == 'S' ? seen + 1 : 0;
        test_msleep(1);
    }
    if (atomic_load(&c.returned)) {
        fprintf(stderr, "%s: returned %ld (%s) instead of blocking\n", b->name, c.result,
                strerror(c.err));
        exit(1);
    }
    CHECK(pthread_cancel(t) == 0);
    void *ret;
    CHECK(pthread_join(t, &ret) == 0);
    if (ret != PTHREAD_CANCELED || !atomic_load(&c.cleaned) || atomic_load(&c.returned)) {
        fprintf(stderr, "%s: ret %p, cleanup ran %d, call returned %d (%ld, %s)\n", b->name, ret,
                atomic_load(&c.cleaned), atomic_load(&c.returned), c.result, strerror(c.err));
        exit(1);
    }
    b->teardown();
}

/* ---- 2. entered with a request pending ---- */

static int file_fd;

static long e_fsync(void) { return fsync(file_fd); }
static long e_fdatasync(void) { return fdatasync(file_fd); }
static long e_pread(void) {
    char b;
    return pread(file_fd, &b, 1, 0);
}
static long e_pwrite(void) { return pwrite(file_fd, "X", 1, 0); }
static long e_open(void) { return open(path, O_RDONLY); }
static long e_openat(void) { return openat(AT_FDCWD, path, O_RDONLY); }
static long e_creat(void) {
    char p[160];
    snprintf(p, sizeof p, "%s/created", dir);
    return creat(p, 0600);
}
static int close_me;
static long e_close(void) { return close(close_me); }

struct entered {
    const char *name;
    long (*call)(void);
};

static const struct entered entered[] = {
    {"fsync", e_fsync},   {"fdatasync", e_fdatasync}, {"pread", e_pread}, {"pwrite", e_pwrite},
    {"open", e_open},     {"openat", e_openat},       {"creat", e_creat}, {"close", e_close},
};
#define NENTERED (int)(sizeof entered / sizeof entered[0])

static void *enterer(void *arg) {
    struct ctl *c = arg;
    pthread_cleanup_push(cleanup, c);
    CHECK(pthread_cancel(pthread_self()) == 0); /* pending, deferred: nothing happens yet */
    c->result = c->call();
    atomic_store(&c->returned, 1);
    pthread_cleanup_pop(0);
    return NULL;
}

static void run_entered(void) {
    snprintf(path, sizeof path, "%s/file", dir);
    CHECK((file_fd = (open)(path, O_RDWR | O_CREAT, 0600)) >= 0);
    CHECK((write)(file_fd, "a", 1) == 1);
    for (int i = 0; i < NENTERED; i++) {
        CHECK((close_me = dup(0)) >= 0);
        int lowest_before = dup(0); /* the lowest free descriptor number, then freed */
        CHECK(lowest_before >= 0);
        (close)(lowest_before);
        if (i == NENTERED - 1) lowest_before = close_me; /* close frees close_me */
        struct ctl c = {.call = entered[i].call};
        pthread_t t;
        CHECK(pthread_create(&t, NULL, enterer, &c) == 0);
        void *ret;
        CHECK(pthread_join(t, &ret) == 0);
        if (ret != PTHREAD_CANCELED || !atomic_load(&c.cleaned) || atomic_load(&c.returned)) {
            fprintf(stderr, "%s (entered): ret %p, cleanup ran %d, returned %d (%ld)\n",
                    entered[i].name, ret, atomic_load(&c.cleaned), atomic_load(&c.returned),
                    c.result);
            exit(1);
        }
        /* No descriptor was made (open, openat, creat), close released close_me. */
        int lowest_after = dup(0);
        if (lowest_after != lowest_before) {
            fprintf(stderr, "%s (entered): descriptors changed (lowest free %d, was %d)\n",
                    entered[i].name, lowest_after, lowest_before);
            exit(1);
        }
        (close)(lowest_after);
        if (i != NENTERED - 1) (close)(close_me);
    }
    char b = 0;
    CHECK((pread)(file_fd, &b, 1, 0) == 1 && b == 'a'); /* pwrite wrote nothing */
    char p[160];
    snprintf(p, sizeof p, "%s/created", dir);
    CHECK(access(p, F_OK) == -1 && errno == ENOENT); /* creat created nothing */
    (close)(file_fd);
    CHECK(unlink(path) == 0);
}

/* ---- 3. timed, nobody cancels ---- */

static struct timespec in_ms(clockid_t clk, long ms) {
    struct timespec ts;
    clock_gettime(clk, &ts);
    ts.tv_nsec += ms * 1000000L;
    ts.tv_sec += ts.tv_nsec / 1000000000L;
    ts.tv_nsec %= 1000000000L;
    return ts;
}

static void *timed(void *arg) {
    (void)arg;
    CHECK(sem_init(&sem, 0, 0) == 0);
    struct timespec ts = in_ms(CLOCK_REALTIME, 30);
    CHECK(sem_timedwait(&sem, &ts) == -1 && errno == ETIMEDOUT);
    CHECK(sem_destroy(&sem) == 0);
    CHECK(pthread_mutex_lock(&mu) == 0);
    ts = in_ms(CLOCK_REALTIME, 30);
    int r;
    while ((r = pthread_cond_timedwait(&cv, &mu, &ts)) == 0) {
    } /* a spurious wake-up may return 0 */
    CHECK(r == ETIMEDOUT);
    CHECK(pthread_mutex_unlock(&mu) == 0);
    CHECK(pipe(fds) == 0);
    struct pollfd p = {.fd = fds[0], .events = POLLIN};
    CHECK(poll(&p, 1, 30) == 0);
    struct timespec rel = {0, 30000000L};
    CHECK(ppoll(&p, 1, &rel, NULL) == 0);
    fd_set rs;
    FD_ZERO(&rs);
    FD_SET(fds[0], &rs);
    struct timeval tv = {0, 30000};
    CHECK(select(fds[0] + 1, &rs, NULL, NULL, &tv) == 0);
    CHECK((epfd = epoll_create1(0)) >= 0);
    struct epoll_event ev = {.events = EPOLLIN, .data.fd = fds[0]};
    CHECK(epoll_ctl(epfd, EPOLL_CTL_ADD, fds[0], &ev) == 0);
    CHECK(epoll_wait(epfd, &ev, 1, 30) == 0);
    (close)(epfd);
    close_pair();
    CHECK(nanosleep(&rel, NULL) == 0);
    CHECK(clock_nanosleep(CLOCK_MONOTONIC, 0, &rel, NULL) == 0);
    CHECK(usleep(1000) == 0);
    CHECK(sleep(0) == 0);
    return (void *)1;
}

int main(void) {
    alarm(20);
    signal(SIGPIPE, SIG_IGN);
    snprintf(dir, sizeof dir, "/tmp/tc-r24-XXXXXX");
    CHECK(mkdtemp(dir) != NULL);

    for (int i = 0; i < NBLOCKING; i++) run_blocking(&blocking[i]);
    run_entered();
    pthread_t t;
    void *ret;
    CHECK(pthread_create(&t, NULL, timed, NULL) == 0);
    CHECK(pthread_join(t, &ret) == 0);
    CHECK(ret == (void *)1);

    CHECK(rmdir(dir) == 0);
    printf("ok: %d blocking points woken by cancel, %d entered points acted with no effect, 8 "
           "timed waits timed out\n", NBLOCKING, NENTERED);
    return 0;
}
