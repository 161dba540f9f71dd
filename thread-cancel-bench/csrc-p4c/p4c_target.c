/* P4c, one sample: a C thread blocked in read(2) on an empty pipe, canceled; the time from the
 * cancel call to its first cleanup handler starting. Plain POSIX code, compiled twice by
 * src/c_thread_latency.rs into the driver: once through thread_cancel/pthread_compat.h (-include; the
 * thread is created by tc_create, read is tc_read, pthread_cancel is tc_cancel) with
 * -DP4C_SAMPLE=p4c_sample_ours, and once against glibc alone with -DP4C_SAMPLE=p4c_sample_glibc.
 * The protocol is P3's and P4's (src/wait_latency.rs): the target publishes its kernel tid before it
 * blocks; the driver waits until /proc says it is asleep in read, settles, cancels, joins. */

#include "glibc_common.h"
#include "p4c.h"
#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdlib.h>
#include <unistd.h>

struct target {
    int fd;
    int cpu; /* < 0: not pinned */
    _Atomic int tid;
    _Atomic uint64_t handler_ns;
};

/* The measured cleanup handler: the newest one, so the first to run. */
static void record_handler(void *arg) {
    struct target *t = arg;
    atomic_store_explicit(&t->handler_ns, glibc_bench_monotonic_ns(), memory_order_release);
}

static void *target_start(void *arg) {
    struct target *t = arg;
    char buf[1];
    if (t->cpu >= 0) {
        cpu_set_t set;
        CPU_ZERO(&set);
        CPU_SET(t->cpu, &set);
        (void)sched_setaffinity(0, sizeof set, &set);
    }
    pthread_cleanup_push(record_handler, t);
    atomic_store_explicit(&t->tid, gettid(), memory_order_release);
    for (;;) {
        (void)read(t->fd, buf, sizeof buf); /* blocks until canceled */
    }
    pthread_cleanup_pop(0);
    return NULL;
}

int64_t P4C_SAMPLE(int fd, int cpu) {
    if (cpu >= CPU_SETSIZE) {
        return -EINVAL;
    }
    struct target *t = calloc(1, sizeof *t);
    if (t == NULL) {
        return -ENOMEM;
    }
    t->fd = fd;
    t->cpu = cpu;
    atomic_init(&t->tid, 0);
    atomic_init(&t->handler_ns, 0);
    pthread_t th;
    int rc = pthread_create(&th, NULL, target_start, t);
    if (rc != 0) {
        free(t);
        return -rc;
    }
    int tid;
    while ((tid = atomic_load_explicit(&t->tid, memory_order_acquire)) == 0) {
        sched_yield();
    }
    int blocked = p4c_wait_blocked(tid);
    uint64_t t0 = glibc_bench_monotonic_ns();
    rc = pthread_cancel(th);
    void *ret = NULL;
    int jrc = pthread_join(th, &ret);
    uint64_t t1 = atomic_load_explicit(&t->handler_ns, memory_order_acquire);
    int64_t result;
    if (blocked != 0) {
        result = -blocked;
    } else if (rc != 0) {
        result = -rc;
    } else if (jrc != 0) {
        result = -jrc;
    } else if (ret != PTHREAD_CANCELED || t1 == 0 || t1 < t0) {
        result = -EINVAL;
    } else {
        result = (int64_t)(t1 - t0);
    }
    if (jrc == 0) {
        free(t); /* a thread we could not join may still use it: leak it instead */
    }
    return result;
}
