/* P4, the glibc side: cancellation latency of glibc's pthread_cancel on a C thread blocked in
 * one of glibc's own system-call cancellation points -- read, accept, poll -- from the call to
 * the first cleanup handler (pushed with pthread_cleanup_push) starting in the target thread.
 *
 * Same protocol as P3 (glibc_p3_latency.c), with a descriptor the Rust side owns:
 *
 *   glibc_p4_start(kind, fd, cpu, &t)  creates the target thread (pinned to `cpu` unless it is
 *                                      negative) and returns once the thread has published its
 *                                      kernel tid, just before it blocks on `fd`;
 *   glibc_p4_tid(target)               that tid (the caller watches /proc/self/task/TID/...);
 *   glibc_p4_fire(target)              t0 = CLOCK_MONOTONIC, pthread_cancel, pthread_join, free;
 *                                      returns handler_time - t0 in ns.
 *
 * The descriptor stays open until glibc_p4_fire has returned (the caller closes it after). */

#define _GNU_SOURCE
#include <errno.h>
#include <poll.h>
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdlib.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

/* Where the target thread blocks (keep in sync with src/p4.rs). */
enum glibc_p4_kind {
    GLIBC_P4_READ = 0,   /* read(fd, buf, 1) on an empty pipe whose writer stays open */
    GLIBC_P4_ACCEPT = 1, /* accept(fd, NULL, NULL) on a listening socket nobody connects to */
    GLIBC_P4_POLL = 2    /* poll({fd, POLLIN}, 1, -1) on an empty pipe */
};

struct glibc_p4_target {
    pthread_t thread;
    int kind;
    int fd;
    int cpu;       /* < 0: not pinned */
    int pin_error; /* the target's pthread_setaffinity_np error (published with tid = -1) */
    /* The target's kernel tid; 0 until the thread is about to block. */
    _Atomic int tid;
    /* CLOCK_MONOTONIC in ns when the cleanup handler started; 0 until then. */
    _Atomic uint64_t handler_ns;
};

static uint64_t monotonic_ns(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/* The measured cleanup handler: the only one, so the first to run. */
static void record_handler(void *arg) {
    struct glibc_p4_target *t = arg;
    atomic_store_explicit(&t->handler_ns, monotonic_ns(), memory_order_release);
}

static void *target_start(void *arg) {
    struct glibc_p4_target *t = arg;
    if (t->cpu >= 0) {
        cpu_set_t set;
        CPU_ZERO(&set);
        CPU_SET(t->cpu, &set);
        int rc = pthread_setaffinity_np(pthread_self(), sizeof set, &set);
        if (rc != 0) {
            t->pin_error = rc;
            atomic_store_explicit(&t->tid, -1, memory_order_release);
            return NULL;
        }
    }
    char buf[1];
    struct pollfd p = {.fd = t->fd, .events = POLLIN, .revents = 0};
    pthread_cleanup_push(record_handler, t);
    atomic_store_explicit(&t->tid, gettid(), memory_order_release);
    /* Each call blocks until canceled; a spurious return (none is expected) blocks again. */
    for (;;) {
        switch (t->kind) {
        case GLIBC_P4_READ:
            (void)read(t->fd, buf, sizeof buf);
            break;
        case GLIBC_P4_ACCEPT: {
            int c = accept(t->fd, NULL, NULL);
            if (c >= 0) {
                close(c);
            }
            break;
        }
        default: /* GLIBC_P4_POLL */
            (void)poll(&p, 1, -1);
            break;
        }
    }
    pthread_cleanup_pop(0);
    return NULL;
}

/* Creates the target thread, pinned to `cpu` if it is not negative, and waits (yielding) until
 * it is about to block on `fd`. Returns 0 and stores the target in *out, or an error number. */
int glibc_p4_start(int kind, int fd, int cpu, struct glibc_p4_target **out) {
    if (cpu >= CPU_SETSIZE || kind < GLIBC_P4_READ || kind > GLIBC_P4_POLL) {
        return EINVAL;
    }
    struct glibc_p4_target *t = calloc(1, sizeof *t);
    if (t == NULL) {
        return ENOMEM;
    }
    t->kind = kind;
    t->fd = fd;
    t->cpu = cpu;
    atomic_init(&t->tid, 0);
    atomic_init(&t->handler_ns, 0);
    int rc = pthread_create(&t->thread, NULL, target_start, t);
    if (rc != 0) {
        free(t);
        return rc;
    }
    while (atomic_load_explicit(&t->tid, memory_order_acquire) == 0) {
        sched_yield();
    }
    if (atomic_load_explicit(&t->tid, memory_order_acquire) < 0) {
        /* The thread could not pin itself and has returned. */
        rc = t->pin_error;
        pthread_join(t->thread, NULL);
        free(t);
        return rc;
    }
    *out = t;
    return 0;
}

int glibc_p4_tid(const struct glibc_p4_target *t) {
    return atomic_load_explicit(&t->tid, memory_order_acquire);
}

/* Cancels the target, joins it and frees it. Returns the latency in ns (handler start minus the
 * time just before pthread_cancel), or a negated error number: -EINVAL if the thread was not
 * canceled or its handler did not run. */
int64_t glibc_p4_fire(struct glibc_p4_target *t) {
    uint64_t t0 = monotonic_ns();
    int rc = pthread_cancel(t->thread);
    void *ret = NULL;
    int jrc = pthread_join(t->thread, &ret);
    uint64_t t1 = atomic_load_explicit(&t->handler_ns, memory_order_acquire);
    int64_t result;
    if (rc != 0) {
        result = -(int64_t)rc;
    } else if (jrc != 0) {
        result = -(int64_t)jrc;
    } else if (ret != PTHREAD_CANCELED || t1 == 0 || t1 < t0) {
        result = -(int64_t)EINVAL;
    } else {
        result = (int64_t)(t1 - t0);
    }
    if (jrc == 0) {
        free(t); /* a thread we could not join may still use it: leak it instead */
    }
    return result;
}
