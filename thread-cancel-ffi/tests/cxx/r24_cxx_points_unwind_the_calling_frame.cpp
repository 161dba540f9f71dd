/* R24 / R07 in C++: a call redirected by the compat header that can act on a cancellation is
 * not declared noexcept unless the C library's own declaration is, so g++ keeps the landing
 * pad of the calling frame and the destructors there run when the call acts. The header
 * declared aio_suspend with glibc's __THROW (noexcept), which glibc's declaration has only
 * with _FILE_OFFSET_BITS=64: g++ made no call-site entry for the call, and a thread canceled
 * in aio_suspend ended the program here ("terminate called without an active exception",
 * aborted; in a frame with no other landing pad, the thread was canceled and the destructor
 * did not run: "destructors 0"; glibc: 1).
 *
 * Built twice by the harness (tests/c_programs.rs): through pthread_compat.h with
 * libthread_cancel, and against the system's glibc alone (-DTC_PLAIN_GLIBC); both must print the
 * same lines: for aio_suspend, read and pthread_testcancel, the thread is canceled and the
 * destructor of the object in the frame that made the call ran once. */
#include <aio.h>
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <atomic>

#include "../c/tc_test.h"

/* The system's nanosleep, named by its symbol (the header redirects `nanosleep` to ours). */
extern "C" int sys_nanosleep(const struct timespec *, struct timespec *) __asm__("nanosleep");

static std::atomic<int> destructors;
static std::atomic<int> started;
static int pipefd[2];
static struct aiocb cb;
static char aio_buf[8];

struct Guard {
    ~Guard() { destructors++; }
};

enum Point { AIO_SUSPEND, READ, TESTCANCEL };
static const char *const names[] = {"aio_suspend", "read", "pthread_testcancel"};

/* Each call in a frame of its own that holds the object (not inlined: the landing pad is this
 * frame's, made for this call). */
__attribute__((noinline)) static void in_aio_suspend() {
    Guard g;
    memset(&cb, 0, sizeof cb);
    cb.aio_fildes = pipefd[0];
    cb.aio_buf = aio_buf;
    cb.aio_nbytes = 1;
    CHECK(aio_read(&cb) == 0);
    const struct aiocb *list[1] = {&cb};
    started = 1;
    for (;;) (void)aio_suspend(list, 1, NULL);
}

__attribute__((noinline)) static void in_read() {
    Guard g;
    char b;
    started = 1;
    for (;;) (void)read(pipefd[0], &b, 1);
}

__attribute__((noinline)) static void in_testcancel() {
    Guard g;
    started = 1;
    for (;;) pthread_testcancel();
}

static void *worker(void *arg) {
    switch (*static_cast<Point *>(arg)) {
    case AIO_SUSPEND:
        in_aio_suspend();
        break;
    case READ:
        in_read();
        break;
    case TESTCANCEL:
        in_testcancel();
        break;
    }
    return NULL;
}

int main() {
    alarm(30);
    for (int i = 0; i < 3; i++) {
        Point p = static_cast<Point>(i);
        CHECK(pipe(pipefd) == 0);
        destructors = 0;
        started = 0;
        pthread_t t;
        CHECK(pthread_create(&t, NULL, worker, &p) == 0);
        while (!started.load()) {
            struct timespec ts = {0, 1000000};
            sys_nanosleep(&ts, NULL);
        }
        struct timespec ts = {0, 50000000};
        sys_nanosleep(&ts, NULL);
        CHECK(pthread_cancel(t) == 0);
        void *ret;
        CHECK(pthread_join(t, &ret) == 0);
        printf("%s: %s, destructors %d\n", names[p],
               ret == PTHREAD_CANCELED ? "PTHREAD_CANCELED" : "returned", destructors.load());
        /* The pending aio_read completes (its request is the C library's, the thread gone). */
        CHECK(write(pipefd[1], "x", 1) == 1);
        while (p == AIO_SUSPEND && aio_error(&cb) == EINPROGRESS) {
            ts = {0, 1000000};
            sys_nanosleep(&ts, NULL);
        }
        close(pipefd[0]);
        close(pipefd[1]);
    }
    return 0;
}
