/* Helpers shared by the C and C++ test programs (compiled through pthread_compat.h, as a user
 * would; the C++ programs of tests/cxx include it as "../c/tc_test.h"). */
#ifndef TC_TEST_H
#define TC_TEST_H

#include <errno.h>
#ifdef __cplusplus
#include <atomic> /* g++ before C++23 has no <stdatomic.h> */
#else
#include <stdatomic.h>
#endif
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <sys/types.h>
#include <time.h>
#include <unistd.h>

#define CHECK(cond)                                                                     \
    do {                                                                                \
        if (!(cond)) {                                                                  \
            fprintf(stderr, "%s:%d: check failed: %s\n", __FILE__, __LINE__, #cond);    \
            exit(1);                                                                    \
        }                                                                               \
    } while (0)

/* Sleeps `ms` milliseconds, never a cancellation point: the system call itself (the C
 * library's nanosleep is a cancellation point with glibc, and with libthread_cancel, which
 * defines it for every library of the process). */
static inline void test_msleep(long ms) {
    struct timespec ts = {ms / 1000, (ms % 1000) * 1000000L};
    syscall(SYS_nanosleep, &ts, NULL);
}

/* The same in microseconds. */
static inline void test_usleep(long us) {
    struct timespec ts = {us / 1000000, (us % 1000000) * 1000L};
    syscall(SYS_nanosleep, &ts, NULL);
}

/* Waits (without a cancellation point) until `*flag >= value`. A hang is caught by the
 * program's alarm(). */
#ifdef __cplusplus
static inline void test_wait_ge(std::atomic<int> *flag, int value) {
    while (flag->load() < value) test_usleep(100);
}
#else
static inline void test_wait_ge(atomic_int *flag, int value) {
    while (atomic_load(flag) < value) test_usleep(100);
}
#endif

/* The calling thread's kernel id (for test_wait_blocked). */
static inline pid_t test_gettid(void) {
    return (pid_t)syscall(SYS_gettid);
}

/* The scheduler state of thread `tid` of this process ('R' running, 'S' sleeping, ...), from
 * /proc/self/task/<tid>/stat; '?' if it cannot be read (e.g. the thread has ended). */
static inline char test_thread_state(pid_t tid) {
    char path[64], buf[512];
    snprintf(path, sizeof path, "/proc/self/task/%d/stat", (int)tid);
    FILE *f = fopen(path, "r");
    if (!f) return '?';
    size_t n = fread(buf, 1, sizeof buf - 1, f);
    fclose(f);
    buf[n] = 0;
    char *p = strrchr(buf, ')'); /* the command name may hold spaces and parentheses */
    return p && p[1] == ' ' ? p[2] : '?';
}

/* Waits until thread `tid` (which announced it is about to block) sleeps in the kernel, then a
 * little longer, so that a request sent next finds it blocked rather than on its way in. */
static inline void test_wait_blocked(pid_t tid) {
    for (int seen = 0; seen < 3;) {
        char s = test_thread_state(tid);
        seen = (s == 'S' || s == 'D' || s == 't' || s == 'T') ? seen + 1 : 0;
        test_usleep(200);
    }
}

#endif
