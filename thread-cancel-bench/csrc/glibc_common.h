/* Helpers shared by the glibc drivers of the benchmarks (included, not compiled on its own). */

#ifndef THREAD_CANCEL_BENCH_GLIBC_COMMON_H
#define THREAD_CANCEL_BENCH_GLIBC_COMMON_H

#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdint.h>
#include <time.h>

/* CLOCK_MONOTONIC in ns: the clock behind Rust's std::time::Instant on Linux, so the C and the
 * Rust sides of a comparison measure the same way. */
static inline uint64_t glibc_bench_monotonic_ns(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/* Creates a thread (default attributes) running start(arg), then waits, yielding, until the
 * thread has set *ready to a non-zero value. Returns 0, or the error number of pthread_create
 * (no thread was created then). */
static inline int glibc_bench_spawn_wait(pthread_t *thread, void *(*start)(void *), void *arg,
                                         _Atomic int *ready) {
    int rc = pthread_create(thread, NULL, start, arg);
    if (rc != 0) {
        return rc;
    }
    while (atomic_load_explicit(ready, memory_order_acquire) == 0) {
        sched_yield();
    }
    return 0;
}

#endif
