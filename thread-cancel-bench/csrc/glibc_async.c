/* R06 benchmark, the glibc side: latency of pthread_cancel on a thread whose cancel type is
 * PTHREAD_CANCEL_ASYNCHRONOUS and which runs a compute loop with no cancellation point, from
 * the call to the first cleanup handler starting (see benches/async_region.rs).
 *
 *   glibc_async_start(&t)   creates the target; returns once it is in its loop;
 *   glibc_async_fire(t)     t0 = CLOCK_MONOTONIC, pthread_cancel, pthread_join, free;
 *                           returns handler_time - t0 in ns (0 on error). */

#define _GNU_SOURCE
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdlib.h>
#include <time.h>

struct glibc_async_target {
    pthread_t thread;
    _Atomic uint64_t progress;
    _Atomic uint64_t handler_ns;
};

static uint64_t monotonic_ns(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static void record_handler(void *arg) {
    struct glibc_async_target *t = arg;
    atomic_store_explicit(&t->handler_ns, monotonic_ns(), memory_order_release);
}

static void *target_start(void *arg) {
    struct glibc_async_target *t = arg;
    pthread_cleanup_push(record_handler, t);
    int old;
    pthread_setcanceltype(PTHREAD_CANCEL_ASYNCHRONOUS, &old);
    uint64_t x = 1;
    for (;;) {
        x = x * 6364136223846793005u + 1442695040888963407u;
        atomic_fetch_add_explicit(&t->progress, 1, memory_order_relaxed);
    }
    pthread_cleanup_pop(0);
    return NULL;
}

/* Starts the target; 0 on success, else an errno value. */
int glibc_async_start(struct glibc_async_target **out) {
    struct glibc_async_target *t = calloc(1, sizeof *t);
    if (t == NULL) return 12; /* ENOMEM */
    int rc = pthread_create(&t->thread, NULL, target_start, t);
    if (rc != 0) {
        free(t);
        return rc;
    }
    while (atomic_load_explicit(&t->progress, memory_order_relaxed) < 1000) sched_yield();
    *out = t;
    return 0;
}

uint64_t glibc_async_fire(struct glibc_async_target *t) {
    uint64_t t0 = monotonic_ns();
    pthread_cancel(t->thread);
    void *res = NULL;
    pthread_join(t->thread, &res);
    uint64_t h = atomic_load_explicit(&t->handler_ns, memory_order_acquire);
    free(t);
    return res == PTHREAD_CANCELED && h >= t0 ? h - t0 : 0;
}
