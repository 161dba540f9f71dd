/* The cost of creating a thread through the compatibility header and joining it (pthread_create
 * and pthread_join mapped to the library's: a control block, the registry, and on glibc a stack
 * of the library's so that the thread's id is never reused), beside glibc's own pthread_create +
 * pthread_join (dlsym on libc.so.6: a stack from glibc's cache, the id reused), sampled
 * interleaved in one process run, first with no other thread, then with 10,000 other threads of
 * the library alive (blocked in read) and, by then, the stacks of the threads of the first part
 * retired by the hundred: neither must make it grow. Both with 64 KiB stacks and with the
 * default (8 MiB), the thread doing nothing. Driven by benches/create_join.rs.
 * CREATE_SAMPLES (default 500) samples of 20 threads each. */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>
#include "bench.h"

#define BATCH 20
#define MANY 10000

typedef int (*create_fn)(pthread_t *, const pthread_attr_t *, void *(*)(void *), void *);
typedef int (*join_fn)(pthread_t, void **);
static create_fn glibc_create;
static join_fn glibc_join;
static pthread_attr_t small;

static void *returns(void *arg) { return arg; }

#define SERIES(name, create, join, attr)                                                   \
    static double name(void) {                                                             \
        double t = now_ns();                                                               \
        for (int i = 0; i < BATCH; i++) {                                                  \
            pthread_t th;                                                                  \
            if (create(&th, attr, returns, NULL) != 0 || join(th, NULL) != 0) abort();     \
        }                                                                                  \
        return (now_ns() - t) / BATCH;                                                     \
    }
SERIES(ours_default, pthread_create, pthread_join, NULL)
SERIES(glibc_default, glibc_create, glibc_join, NULL)
SERIES(ours_small, pthread_create, pthread_join, &small)
SERIES(glibc_small, glibc_create, glibc_join, &small)

#define SERIES_N 4
static double (*const series[SERIES_N])(void) = {ours_default, glibc_default, ours_small,
                                                 glibc_small};

/* Samples the series interleaved: their medians in m. */
static void measure(int n, double m[SERIES_N]) {
    double *s[SERIES_N];
    for (int k = 0; k < SERIES_N; k++) s[k] = malloc(sizeof(double) * (size_t)n);
    for (int i = 0; i < 20; i++)
        for (int k = 0; k < SERIES_N; k++) series[k]();
    for (int i = 0; i < n; i++)
        for (int k = 0; k < SERIES_N; k++) s[k][i] = series[k]();
    for (int k = 0; k < SERIES_N; k++) {
        m[k] = median(s[k], n);
        free(s[k]);
    }
}

static int fds[2];
static void *blocks(void *arg) {
    char c;
    (void)!read(fds[0], &c, 1);
    return arg;
}

int main(void) {
    const char *env = getenv("CREATE_SAMPLES");
    int n = env ? atoi(env) : 500;
    if (n < 1) n = 1;
    void *libc = dlopen("libc.so.6", RTLD_NOW | RTLD_NOLOAD);
    glibc_create = libc ? (create_fn)dlsym(libc, "pthread_create") : NULL;
    glibc_join = libc ? (join_fn)dlsym(libc, "pthread_join") : NULL;
    if (!glibc_create || !glibc_join) {
        fprintf(stderr, "glibc's calls not found\n");
        return 1;
    }
    pthread_attr_init(&small);
    pthread_attr_setstacksize(&small, 64 * 1024);
    double at0[SERIES_N], at_many[SERIES_N];
    measure(n, at0);

    if (pipe(fds) != 0) return 1;
    static pthread_t many[MANY];
    for (int i = 0; i < MANY; i++)
        if (pthread_create(&many[i], &small, blocks, NULL) != 0) {
            fprintf(stderr, "thread %d not created\n", i);
            return 1;
        }
    measure(n, at_many);

    printf("pthread_create + pthread_join of a thread that does nothing, median of %d samples of "
           "%d threads (us per thread):\n", n, BATCH);
    printf("  %-44s %9s %15s %9s\n", "", "0 threads", "10,000 threads", "ratio");
    const char *what[SERIES_N] = {"through the header, default stack", "glibc's own, default stack",
                                  "through the header, 64 KiB stack", "glibc's own, 64 KiB stack"};
    for (int k = 0; k < SERIES_N; k++)
        printf("  %-44s %9.2f %15.2f %8.2fx\n", what[k], at0[k] / 1e3, at_many[k] / 1e3,
               at_many[k] / at0[k]);
    printf("  through the header / glibc's: default stack %.2fx (0 threads), %.2fx (10,000); "
           "64 KiB stack %.2fx, %.2fx\n", at0[0] / at0[1], at_many[0] / at_many[1],
           at0[2] / at0[3], at_many[2] / at_many[3]);
    close(fds[1]); /* the 10,000 read 0 and end */
    for (int i = 0; i < MANY; i++) pthread_join(many[i], NULL);
    return 0;
}
