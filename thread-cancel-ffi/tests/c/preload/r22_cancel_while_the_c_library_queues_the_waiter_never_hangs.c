/* Preloaded (LD_PRELOAD) before every other library by the test runner, for the program of the
 * same name: a pthread_cond_wait between libthread_cancel's condition wait and the C library's
 * (the library looks up the C library's definition as the first after its own object), which
 * spins 200 µs with the mutex held before it waits, when the program sets r22_slow. Built as a
 * plain shared library: no header, nothing of libthread_cancel. */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <pthread.h>
#include <stdatomic.h>
#include <time.h>

atomic_int r22_in_window, r22_slow;

int pthread_cond_wait(pthread_cond_t *c, pthread_mutex_t *m) {
    static int (*real)(pthread_cond_t *, pthread_mutex_t *);
    if (!real) /* x86_64's current version; other architectures have only their first one */
        real = (int (*)(pthread_cond_t *, pthread_mutex_t *))dlvsym(RTLD_NEXT, "pthread_cond_wait",
                                                                    "GLIBC_2.3.2");
    if (!real) real = (int (*)(pthread_cond_t *, pthread_mutex_t *))dlsym(RTLD_NEXT, "pthread_cond_wait");
    if (atomic_load(&r22_slow)) {
        struct timespec t0, t;
        clock_gettime(CLOCK_MONOTONIC, &t0);
        atomic_store(&r22_in_window, 1);
        do clock_gettime(CLOCK_MONOTONIC, &t);
        while ((t.tv_sec - t0.tv_sec) * 1000000000L + (t.tv_nsec - t0.tv_nsec) < 200000);
    }
    return real(c, m);
}
