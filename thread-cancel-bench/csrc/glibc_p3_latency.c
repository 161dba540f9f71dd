/* P3, the glibc side: cancellation latency of glibc's pthread_cancel, from the call to the
 * first cleanup handler (pushed with pthread_cleanup_push) starting in the target thread.
 *
 * A measurement is split in two so the Rust side can wait until the target is blocked with the
 * same code it uses for thread-cancel's threads:
 *
 *   glibc_p3_start(kind, cpu, &t)   creates the target thread (pinned to `cpu` unless it is
 *                                   negative) and returns once the thread has published its
 *                                   kernel tid, just before it blocks;
 *   glibc_p3_tid(target)            that tid (the caller watches /proc/self/task/TID/...);
 *   glibc_p3_fire(target)           t0 = CLOCK_MONOTONIC, pthread_cancel, pthread_join, free;
 *                                   returns handler_time - t0 in ns.
 *
 * The cleanup handler records clock_gettime(CLOCK_MONOTONIC), the clock behind Rust's
 * std::time::Instant on Linux, so the two sides measure the same way. */

#define _GNU_SOURCE
#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

/* What the target thread does when it is canceled (keep in sync with src/p3.rs). */
enum glibc_p3_kind {
    GLIBC_P3_NANOSLEEP = 0, /* blocked in nanosleep(1 h) */
    GLIBC_P3_COND_WAIT = 1, /* blocked in pthread_cond_wait, never signalled */
    GLIBC_P3_TESTCANCEL = 2 /* running: a loop of pthread_testcancel() (no wake-up involved) */
};

struct glibc_p3_target {
    pthread_t thread;
    int kind;
    int cpu; /* < 0: not pinned */
    /* The target's pthread_setaffinity_np error, if any (published with tid = -1). */
    int pin_error;
    pthread_mutex_t mutex;
    pthread_cond_t cond;
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

/* The measured cleanup handler: the newest one, so the first to run. */
static void record_handler(void *arg) {
    struct glibc_p3_target *t = arg;
    atomic_store_explicit(&t->handler_ns, monotonic_ns(), memory_order_release);
}

static void unlock_handler(void *arg) {
    pthread_mutex_unlock(arg);
}

static void *target_start(void *arg) {
    struct glibc_p3_target *t = arg;
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
    switch (t->kind) {
    case GLIBC_P3_NANOSLEEP: {
        struct timespec hour = {3600, 0};
        pthread_cleanup_push(record_handler, t);
        atomic_store_explicit(&t->tid, gettid(), memory_order_release);
        for (;;) {
            nanosleep(&hour, NULL);
        }
        pthread_cleanup_pop(0);
        break;
    }
    case GLIBC_P3_COND_WAIT:
        pthread_mutex_lock(&t->mutex);
        /* The usual pattern: the mutex (re-acquired by a canceled wait) is unlocked by a
         * cleanup handler, pushed first so it runs after the measured one. */
        pthread_cleanup_push(unlock_handler, &t->mutex);
        pthread_cleanup_push(record_handler, t);
        atomic_store_explicit(&t->tid, gettid(), memory_order_release);
        for (;;) {
            pthread_cond_wait(&t->cond, &t->mutex);
        }
        pthread_cleanup_pop(0);
        pthread_cleanup_pop(0);
        break;
    default: /* GLIBC_P3_TESTCANCEL */
        pthread_cleanup_push(record_handler, t);
        atomic_store_explicit(&t->tid, gettid(), memory_order_release);
        for (;;) {
            pthread_testcancel();
        }
        pthread_cleanup_pop(0);
        break;
    }
    return NULL;
}

/* Creates the target thread, pinned to `cpu` if it is not negative, and waits (yielding) until
 * it is about to block. Returns 0 and stores the target in *out, or an error number. */
int glibc_p3_start(int kind, int cpu, struct glibc_p3_target **out) {
    if (cpu >= CPU_SETSIZE) {
        return EINVAL;
    }
    struct glibc_p3_target *t = calloc(1, sizeof *t);
    if (t == NULL) {
        return ENOMEM;
    }
    t->kind = kind;
    t->cpu = cpu;
    pthread_mutex_init(&t->mutex, NULL);
    pthread_cond_init(&t->cond, NULL);
    atomic_init(&t->tid, 0);
    atomic_init(&t->handler_ns, 0);
    int rc = pthread_create(&t->thread, NULL, target_start, t);
    if (rc != 0) {
        pthread_cond_destroy(&t->cond);
        pthread_mutex_destroy(&t->mutex);
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
        pthread_cond_destroy(&t->cond);
        pthread_mutex_destroy(&t->mutex);
        free(t);
        return rc;
    }
    *out = t;
    return 0;
}

int glibc_p3_tid(const struct glibc_p3_target *t) {
    return atomic_load_explicit(&t->tid, memory_order_acquire);
}

/* Cancels the target, joins it and frees it. Returns the latency in ns (handler start minus the
 * time just before pthread_cancel), or a negated error number: -EINVAL if the thread was not
 * canceled or its handler did not run. */
int64_t glibc_p3_fire(struct glibc_p3_target *t) {
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
        pthread_cond_destroy(&t->cond);
        pthread_mutex_destroy(&t->mutex);
        free(t); /* a thread we could not join may still use it: leak it instead */
    }
    return result;
}
