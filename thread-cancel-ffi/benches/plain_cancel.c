/* The cost of pthread_cancel as code built without the compatibility header calls it when
 * libthread_cancel is in the process (the library defines it for that code: the thread's owner
 * decides, the library's registry is looked up by system id), beside glibc's own pthread_cancel,
 * sampled interleaved in one process run, with 0 and then 10,000 other threads known to the
 * library (created through the header, blocked in read): the lookup must not grow with them.
 * Driven by benches/plain_cancel.rs.
 *
 * This file is built through thread_cancel/pthread_compat.h (so its 10,000 threads are the
 * library's); the calls measured are the process's `pthread_cancel` symbol (what code built
 * without the header binds to: libthread_cancel's) and glibc's (dlsym on libc.so.6). Targets:
 *   - a thread of glibc's (created with glibc's pthread_create), ended, not joined: the library
 *     finds no thread of its own and calls glibc's, which returns 0 at once;
 *   - a thread of the library's (created through the header), ended, not joined: the library's
 *     cancel, 0 and nothing done.
 * PLAIN_SAMPLES (default 2000) samples of 1000 calls each. */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>
#include "bench.h"

#define BATCH 1000
#define MANY 10000

typedef int (*cancel_fn)(pthread_t);
typedef int (*create_fn)(pthread_t *, const pthread_attr_t *, void *(*)(void *), void *);
/* The process's pthread_cancel: libthread_cancel's definition for code built without the header. */
extern int process_cancel(pthread_t) __asm__("pthread_cancel");
static cancel_fn glibc_cancel;
static pthread_t glibc_thread, library_thread;


#define SERIES(name, call, target)                                                         \
    static double name(void) {                                                             \
        double t = now_ns();                                                               \
        for (int i = 0; i < BATCH; i++) {                                                  \
            if (call(target) != 0) abort();                                                \
            __asm__ volatile("" ::: "memory");                                             \
        }                                                                                  \
        return (now_ns() - t) / BATCH;                                                     \
    }
SERIES(ours_of_glibc_thread, process_cancel, glibc_thread)
SERIES(glibc_of_glibc_thread, glibc_cancel, glibc_thread)
SERIES(ours_of_library_thread, process_cancel, library_thread)


static void *returns(void *arg) { return arg; }

static int fds[2];
static void *blocks(void *arg) {
    char c;
    (void)!read(fds[0], &c, 1);
    return arg;
}

/* Samples the three series interleaved: their medians in m[0..3]. */
static void measure(int n, double m[3]) {
    double *s[3];
    for (int k = 0; k < 3; k++) s[k] = malloc(sizeof(double) * (size_t)n);
    for (int i = 0; i < 200; i++) ours_of_glibc_thread(), glibc_of_glibc_thread(), ours_of_library_thread();
    for (int i = 0; i < n; i++) {
        s[0][i] = ours_of_glibc_thread();
        s[1][i] = glibc_of_glibc_thread();
        s[2][i] = ours_of_library_thread();
    }
    for (int k = 0; k < 3; k++) {
        m[k] = median(s[k], n);
        free(s[k]);
    }
}

int main(void) {
    const char *env = getenv("PLAIN_SAMPLES");
    int n = env ? atoi(env) : 2000;
    if (n < 1) n = 1;
    void *libc = dlopen("libc.so.6", RTLD_NOW | RTLD_NOLOAD);
    glibc_cancel = libc ? (cancel_fn)dlsym(libc, "pthread_cancel") : NULL;
    create_fn glibc_create = libc ? (create_fn)dlsym(libc, "pthread_create") : NULL;
    Dl_info info;
    if (!glibc_cancel || !glibc_create || !dladdr((void *)process_cancel, &info)) {
        fprintf(stderr, "symbols not found\n");
        return 1;
    }
    printf("`pthread_cancel` of code built without the header is defined in: %s\n", info.dli_fname);
    if (glibc_create(&glibc_thread, NULL, returns, NULL) != 0 ||
        pthread_create(&library_thread, NULL, returns, NULL) != 0)
        return 1;
    usleep(100000); /* both have ended (a cancel of either does nothing either way) */
    double at0[3], at_many[3];
    measure(n, at0);

    if (pipe(fds) != 0) return 1;
    pthread_attr_t attr;
    pthread_attr_init(&attr);
    pthread_attr_setstacksize(&attr, 64 * 1024);
    static pthread_t many[MANY];
    for (int i = 0; i < MANY; i++)
        if (pthread_create(&many[i], &attr, blocks, NULL) != 0) {
            fprintf(stderr, "thread %d not created\n", i);
            return 1;
        }
    measure(n, at_many);

    printf("pthread_cancel as code built without the header calls it, median of %d samples of "
           "%d calls (ns per call):\n", n, BATCH);
    printf("  %-46s %9s %13s %9s\n", "", "0 threads", "10,000 threads", "ratio");
    const char *what[3] = {"libthread_cancel's, of a thread of glibc's", "glibc's own, of the same",
                           "libthread_cancel's, of a thread of its own"};
    for (int k = 0; k < 3; k++)
        printf("  %-46s %9.1f %13.1f %8.2fx\n", what[k], at0[k], at_many[k], at_many[k] / at0[k]);
    printf("  libthread_cancel's / glibc's, thread of glibc's: %.2fx (0 threads), %.2fx (10,000)\n",
           at0[0] / at0[1], at_many[0] / at_many[1]);
    close(fds[1]); /* the 10,000 read 0 and end */
    for (int i = 0; i < MANY; i++) pthread_join(many[i], NULL);
    return 0;
}
