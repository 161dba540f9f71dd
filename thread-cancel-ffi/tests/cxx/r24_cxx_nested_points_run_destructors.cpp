/* R24 / R07 in C++: every cancellation point the compat header maps runs the destructors of
 * the C++ frames when a thread is canceled in it, also the points the library implements by
 * calling another of its points (usleep -> nanosleep -> clock_nanosleep, poll -> ppoll,
 * pause -> ppoll, open -> openat, creat -> open, fopen -> open, lockf -> fcntl,
 * preadv -> preadv2, pwritev -> pwritev2, wait -> waitpid, accept -> accept4,
 * recv -> recvfrom, send -> sendto, mq_receive -> mq_timedreceive, mq_send -> mq_timedsend,
 * sigwaitinfo -> sigtimedwait, sigpause -> sigsuspend, system -> waitpid, and stdio, which
 * waits in poll). Before the fix each of those printed "destructors 0+0" (glibc: 1+1): the
 * forced unwind stopped at the library's outer `extern "C"` frame, whose exception table has
 * no entry for its call of the inner point (the Rust personality reports an error), and the
 * library's fallback ran the cleanup handlers and abandoned the C++ frames.
 *
 * Built twice by the harness (tests/c_programs.rs): through pthread_compat.h with
 * libthread_cancel, and against the system's glibc alone (-DTC_PLAIN_GLIBC); both must print
 * the same lines: for each point, the thread is canceled, the cleanup handler pushed in the
 * frame that makes the call ran, and the destructors of the object in that frame and of the
 * object in its caller ran once each ("1+1"). read and clock_nanosleep, which call no other
 * point, are the controls.
 * A thread blocked in a point that blocks is canceled there; the points that do not block here
 * (lockf, preadv, pwritev on a regular file, wait and wait3 with no child) are called in a loop
 * until the request is acted on at one's entry. */
#include <errno.h>
#include <fcntl.h>
#include <mqueue.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/uio.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <atomic>
#include <string>

#include "../c/tc_test.h"

/* The system's nanosleep, named by its symbol (the header redirects `nanosleep` to ours). */
extern "C" int sys_nanosleep(const struct timespec *, struct timespec *) __asm__("nanosleep");

static void msleep(long ms) {
    struct timespec ts = {ms / 1000, (ms % 1000) * 1000000L};
    sys_nanosleep(&ts, NULL);
}

static std::atomic<int> inner_destructors, outer_destructors, handlers, started;

struct Inner {
    ~Inner() { inner_destructors++; }
};
struct Outer {
    ~Outer() { outer_destructors++; }
};

static void handler(void *) { handlers++; }

/* What the cases block in, set up by main before each case. */
static int pipefd[2];      /* an empty pipe (the input cases), or a full one (the output cases) */
static int sockfd[2];      /* a stream socket pair: empty, or full for send */
static int listen_fd;      /* a listening socket nobody connects to */
static int file_fd;        /* a regular file */
static FILE *stream;       /* a stream over pipefd[0] or pipefd[1] */
static std::string fifo;   /* a FIFO nobody opens from the other end */
static mqd_t mq;           /* an empty, or a full, message queue */
static sigset_t usr1;      /* { SIGUSR1 }, blocked in the worker */

enum Point {
    READ,
    CLOCK_NANOSLEEP,
    NANOSLEEP,
    USLEEP,
    SLEEP,
    POLL,
    PAUSE,
    SIGPAUSE,
    SIGWAIT,
    SIGWAITINFO,
    OPEN,
    CREAT,
    FOPEN,
    LOCKF,
    PREADV,
    PWRITEV,
    WAIT,
    WAIT3,
    ACCEPT,
    RECV,
    SEND,
    MQ_RECEIVE,
    MQ_SEND,
    SYSTEM,
    FGETS,
    FGETC,
    GETC,
    FREAD,
    GETLINE,
    FSCANF,
    FPUTS,
    FWRITE,
    COUNT
};

static const char *const names[COUNT] = {
    "read",   "clock_nanosleep", "nanosleep",  "usleep", "sleep",   "poll",    "pause",
    "sigpause", "sigwait",       "sigwaitinfo", "open",  "creat",   "fopen",   "lockf",
    "preadv", "pwritev",         "wait",       "wait3",  "accept",  "recv",    "send",
    "mq_receive", "mq_send",     "system",     "fgets",  "fgetc",   "getc",    "fread",
    "getline", "fscanf",         "fputs",      "fwrite",
};

static char big[1 << 17];

/* Calls point `p` for ever (each call blocks, or fails at once and is made again). */
static void call_for_ever(Point p) {
    char buf[64];
    for (;;) {
        switch (p) {
        case READ:
            (void)read(pipefd[0], buf, 1);
            break;
        case CLOCK_NANOSLEEP: {
            struct timespec ts = {100, 0};
            (void)clock_nanosleep(CLOCK_MONOTONIC, 0, &ts, NULL);
            break;
        }
        case NANOSLEEP: {
            struct timespec ts = {100, 0};
            (void)nanosleep(&ts, NULL);
            break;
        }
        case USLEEP:
            (void)usleep(999999);
            break;
        case SLEEP:
            (void)sleep(100);
            break;
        case POLL: {
            struct pollfd pfd = {pipefd[0], POLLIN, 0};
            (void)poll(&pfd, 1, -1);
            break;
        }
        case PAUSE:
            (void)pause();
            break;
        case SIGPAUSE:
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wdeprecated-declarations"
            (void)sigpause(SIGUSR2); /* SIGUSR2 is never sent */
#pragma GCC diagnostic pop
            break;
        case SIGWAIT: {
            int sig;
            (void)sigwait(&usr1, &sig);
            break;
        }
        case SIGWAITINFO:
            (void)sigwaitinfo(&usr1, NULL);
            break;
        case OPEN: {
            int fd = open(fifo.c_str(), O_RDONLY);
            if (fd >= 0) close(fd);
            break;
        }
        case CREAT: {
            int fd = creat(fifo.c_str(), 0600);
            if (fd >= 0) close(fd);
            break;
        }
        case FOPEN: {
            FILE *f = fopen(fifo.c_str(), "r");
            if (f) fclose(f);
            break;
        }
        case LOCKF:
            (void)lockf(file_fd, F_LOCK, 1);
            break;
        case PREADV: {
            struct iovec v = {buf, 1};
            (void)preadv(file_fd, &v, 1, 0);
            break;
        }
        case PWRITEV: {
            struct iovec v = {buf, 1};
            buf[0] = 'x';
            (void)pwritev(file_fd, &v, 1, 0);
            break;
        }
        case WAIT:
            (void)wait(NULL);
            break;
        case WAIT3:
            (void)wait3(NULL, 0, NULL);
            break;
        case ACCEPT: {
            int fd = accept(listen_fd, NULL, NULL);
            if (fd >= 0) close(fd);
            break;
        }
        case RECV:
            (void)recv(sockfd[0], buf, 1, 0);
            break;
        case SEND:
            (void)send(sockfd[0], big, sizeof big, 0);
            break;
        case MQ_RECEIVE:
            (void)mq_receive(mq, buf, sizeof buf, NULL);
            break;
        case MQ_SEND:
            (void)mq_send(mq, "x", 1, 0);
            break;
        case SYSTEM:
            (void)system("exec sleep 100");
            break;
        case FGETS:
            (void)fgets(buf, sizeof buf, stream);
            break;
        case FGETC:
            (void)fgetc(stream);
            break;
        case GETC:
            (void)getc(stream);
            break;
        case FREAD:
            (void)fread(buf, 1, sizeof buf, stream);
            break;
        case GETLINE: {
            /* glibc allocates the line before it reads: kept where LeakSanitizer sees it. */
            static char *line;
            static size_t cap;
            (void)getline(&line, &cap, stream);
            break;
        }
        case FSCANF: {
            int x;
            (void)fscanf(stream, "%d", &x);
            break;
        }
        case FPUTS:
            big[sizeof big - 1] = '\0';
            (void)fputs(big, stream);
            break;
        case FWRITE:
            (void)fwrite(big, 1, sizeof big, stream);
            break;
        case COUNT:
            return;
        }
    }
}

/* The frame that makes the call: an object and a cleanup handler of its own (not inlined: the
 * landing pad is this frame's). */
__attribute__((noinline)) static void in_point(Point p) {
    Inner in;
    pthread_cleanup_push(handler, NULL);
    started = 1;
    call_for_ever(p);
    pthread_cleanup_pop(0);
}

static void *worker(void *arg) {
    Outer out;
    CHECK(pthread_sigmask(SIG_BLOCK, &usr1, NULL) == 0);
    in_point(*static_cast<Point *>(arg));
    return NULL;
}

/* Sets up what case `p` blocks in; false if the system lacks it (message queues). */
static bool set_up(Point p) {
    CHECK(pipe(pipefd) == 0);
    if (p == FPUTS || p == FWRITE) {
        /* Full: a non-blocking fill, then blocking again. */
        int fl = fcntl(pipefd[1], F_GETFL);
        CHECK(fcntl(pipefd[1], F_SETFL, fl | O_NONBLOCK) == 0);
        while (write(pipefd[1], big, sizeof big) > 0) {
        }
        CHECK(fcntl(pipefd[1], F_SETFL, fl) == 0);
        stream = fdopen(pipefd[1], "w");
        CHECK(stream != NULL);
    } else if (p >= FGETS) {
        stream = fdopen(pipefd[0], "r");
        CHECK(stream != NULL);
    }
    CHECK(socketpair(AF_UNIX, SOCK_STREAM, 0, sockfd) == 0);
    if (p == SEND) {
        while (send(sockfd[0], big, sizeof big, MSG_DONTWAIT) > 0) {
        }
    }
    if (p == MQ_RECEIVE || p == MQ_SEND) {
        char name[64];
        snprintf(name, sizeof name, "/tc_cxx_nested_%d", (int)getpid());
        struct mq_attr attr;
        memset(&attr, 0, sizeof attr);
        attr.mq_maxmsg = 1;
        attr.mq_msgsize = 8;
        mq = mq_open(name, O_CREAT | O_RDWR, 0600, &attr);
        if (mq == (mqd_t)-1) return false;
        mq_unlink(name);
        if (p == MQ_SEND) CHECK(mq_send(mq, "x", 1, 0) == 0);
    }
    return true;
}

static void tear_down(Point p) {
    if (stream) {
        /* The reader first: an output stream's flush then fails (EPIPE) instead of blocking. */
        close(p >= FPUTS ? pipefd[0] : pipefd[1]);
        fclose(stream);
        stream = NULL;
    } else {
        close(pipefd[0]);
        close(pipefd[1]);
    }
    close(sockfd[0]);
    close(sockfd[1]);
    if (p == MQ_RECEIVE || p == MQ_SEND) mq_close(mq);
}

int main() {
    alarm(60);
    signal(SIGPIPE, SIG_IGN);
    memset(big, 'x', sizeof big);
    sigemptyset(&usr1);
    sigaddset(&usr1, SIGUSR1);
    char dir[] = "/tmp/tc_cxx_nested_XXXXXX";
    CHECK(mkdtemp(dir) != NULL);
    fifo = std::string(dir) + "/fifo";
    CHECK(mkfifo(fifo.c_str(), 0600) == 0);
    std::string file = std::string(dir) + "/file";
    file_fd = ::open(file.c_str(), O_RDWR | O_CREAT, 0600);
    CHECK(file_fd >= 0);
    std::string sock = std::string(dir) + "/sock";
    listen_fd = socket(AF_UNIX, SOCK_STREAM, 0);
    CHECK(listen_fd >= 0);
    struct sockaddr_un addr;
    memset(&addr, 0, sizeof addr);
    addr.sun_family = AF_UNIX;
    CHECK(sock.size() < sizeof addr.sun_path);
    strcpy(addr.sun_path, sock.c_str());
    CHECK(bind(listen_fd, reinterpret_cast<struct sockaddr *>(&addr), sizeof addr) == 0);
    CHECK(listen(listen_fd, 1) == 0);

    for (int i = 0; i < COUNT; i++) {
        Point p = static_cast<Point>(i);
        if (!set_up(p)) {
            printf("%s: not on this system\n", names[p]);
            tear_down(p);
            continue;
        }
        inner_destructors = 0;
        outer_destructors = 0;
        handlers = 0;
        started = 0;
        pthread_t t;
        CHECK(pthread_create(&t, NULL, worker, &p) == 0);
        while (!started.load()) msleep(1);
        msleep(50); /* blocked in the point by now (or calling it again and again) */
        CHECK(pthread_cancel(t) == 0);
        void *ret;
        CHECK(pthread_join(t, &ret) == 0);
        printf("%s: %s, cleanup handlers %d, destructors %d+%d\n", names[p],
               ret == PTHREAD_CANCELED ? "PTHREAD_CANCELED" : "returned", handlers.load(),
               inner_destructors.load(), outer_destructors.load());
        tear_down(p);
    }
    /* The shell system() started was killed and reaped by the canceled call. */
    CHECK(waitpid(-1, NULL, WNOHANG) == -1 && errno == ECHILD);
    close(listen_fd);
    close(file_fd);
    unlink(sock.c_str());
    unlink(file.c_str());
    unlink(fifo.c_str());
    rmdir(dir);
    return 0;
}
