/* P6, the glibc side: many C threads (pthread_create, a small stack) blocked at once -- a
 * quarter each in nanosleep, read on a pipe, pthread_cond_wait, sem_wait -- then canceled with
 * pthread_cancel, all of them, and joined, all of them; the time of the cancel and join loops.
 *
 *   glibc_p6_start(n, stack, fd, &m)  creates the n threads (thread i blocks in the wait
 *                                     i % 4; the readers read `fd`, which must stay open until
 *                                     fire returns) and returns once each has published its
 *                                     kernel tid, just before it blocks (the condition waiters:
 *                                     once they wait);
 *   glibc_p6_tid(m, i)                thread i's tid (the caller watches /proc/self/task/TID);
 *   glibc_p6_fire(m, &cancel_ns)      t0 = CLOCK_MONOTONIC, pthread_cancel every thread
 *                                     (cancel_ns = the time of that loop), pthread_join every
 *                                     thread, free; returns the time of both loops in ns. */

#define _GNU_SOURCE
#include "glibc_common.h"
#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <semaphore.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

/* Where thread i blocks: i % 4 (keep in sync with src/mass_cancel.rs). */
enum glibc_p6_wait {
    GLIBC_P6_NANOSLEEP = 0, /* nanosleep(1 h) */
    GLIBC_P6_READ = 1,      /* read(fd, buf, 1) on an empty pipe whose writer stays open */
    GLIBC_P6_COND_WAIT = 2, /* pthread_cond_wait on one condition variable shared by all */
    GLIBC_P6_SEM_WAIT = 3   /* sem_wait on one semaphore (value 0) shared by all */
};

struct glibc_p6_thread {
    struct glibc_p6 *mass;
    pthread_t thread;
    _Atomic int tid; /* 0 until the thread is about to block */
};

struct glibc_p6 {
    size_t n;
    int fd;
    pthread_mutex_t mutex;
    pthread_cond_t cond;
    sem_t sem;
    struct glibc_p6_thread *threads;
};

static void unlock_handler(void *arg) {
    pthread_mutex_unlock(arg);
}

static void *p6_start(void *arg) {
    struct glibc_p6_thread *me = arg;
    struct glibc_p6 *m = me->mass;
    int wait = (int)((size_t)(me - m->threads) % 4);
    struct timespec hour = {3600, 0};
    char buf[1];
    if (wait == GLIBC_P6_COND_WAIT) {
        pthread_mutex_lock(&m->mutex);
        pthread_cleanup_push(unlock_handler, &m->mutex);
        atomic_store_explicit(&me->tid, gettid(), memory_order_release);
        for (;;) {
            pthread_cond_wait(&m->cond, &m->mutex);
        }
        pthread_cleanup_pop(0);
    }
    atomic_store_explicit(&me->tid, gettid(), memory_order_release);
    /* Each call blocks until canceled; a spurious return (none is expected) blocks again. */
    for (;;) {
        switch (wait) {
        case GLIBC_P6_NANOSLEEP:
            nanosleep(&hour, NULL);
            break;
        case GLIBC_P6_READ:
            (void)read(m->fd, buf, sizeof buf);
            break;
        default: /* GLIBC_P6_SEM_WAIT */
            sem_wait(&m->sem);
            break;
        }
    }
    return NULL;
}

static void destroy(struct glibc_p6 *m) {
    sem_destroy(&m->sem);
    pthread_cond_destroy(&m->cond);
    pthread_mutex_destroy(&m->mutex);
    free(m->threads);
    free(m);
}

/* Cancels threads [0, k), then joins them; returns 0 or the first error number. Sets
 * *cancel_ns to the time of the cancel loop and *total_ns to that of both loops, and *all_canceled
 * to whether every join reported PTHREAD_CANCELED. */
static int cancel_join(struct glibc_p6 *m, size_t k, uint64_t *cancel_ns, uint64_t *total_ns,
                       int *all_canceled) {
    int err = 0;
    *all_canceled = 1;
    uint64_t t0 = glibc_bench_monotonic_ns();
    for (size_t i = 0; i < k; i++) {
        int rc = pthread_cancel(m->threads[i].thread);
        if (rc != 0 && err == 0) {
            err = rc;
        }
    }
    uint64_t t1 = glibc_bench_monotonic_ns();
    for (size_t i = 0; i < k; i++) {
        void *ret = NULL;
        int rc = pthread_join(m->threads[i].thread, &ret);
        if (rc != 0 && err == 0) {
            err = rc;
        }
        if (ret != PTHREAD_CANCELED) {
            *all_canceled = 0;
        }
    }
    uint64_t t2 = glibc_bench_monotonic_ns();
    *cancel_ns = t1 - t0;
    *total_ns = t2 - t0;
    return err;
}

/* Creates the n threads with `stack` bytes of stack each and waits (yielding) until all are
 * about to block. Returns 0 and stores the set in *out, or an error number (the threads created
 * so far are canceled and joined). */
int glibc_p6_start(size_t n, size_t stack, int fd, struct glibc_p6 **out) {
    struct glibc_p6 *m = calloc(1, sizeof *m);
    if (m == NULL) {
        return ENOMEM;
    }
    m->threads = calloc(n == 0 ? 1 : n, sizeof *m->threads);
    if (m->threads == NULL) {
        free(m);
        return ENOMEM;
    }
    m->n = n;
    m->fd = fd;
    pthread_mutex_init(&m->mutex, NULL);
    pthread_cond_init(&m->cond, NULL);
    if (sem_init(&m->sem, 0, 0) != 0) {
        int e = errno;
        pthread_cond_destroy(&m->cond);
        pthread_mutex_destroy(&m->mutex);
        free(m->threads);
        free(m);
        return e;
    }
    pthread_attr_t attr;
    int rc = pthread_attr_init(&attr);
    if (rc == 0) {
        rc = pthread_attr_setstacksize(&attr, stack);
    }
    size_t created = 0;
    for (; rc == 0 && created < n; created++) {
        struct glibc_p6_thread *th = &m->threads[created];
        th->mass = m;
        atomic_init(&th->tid, 0);
        rc = pthread_create(&th->thread, &attr, p6_start, th);
        if (rc != 0) {
            break;
        }
    }
    pthread_attr_destroy(&attr);
    for (size_t i = 0; i < created; i++) {
        while (atomic_load_explicit(&m->threads[i].tid, memory_order_acquire) == 0) {
            sched_yield();
        }
    }
    /* Every condition waiter published its tid holding the mutex, which it releases only by
     * waiting: once we hold it, all of them wait. */
    pthread_mutex_lock(&m->mutex);
    pthread_mutex_unlock(&m->mutex);
    if (rc != 0) {
        uint64_t c, t;
        int all;
        if (cancel_join(m, created, &c, &t, &all) == 0) {
            destroy(m); /* threads we could not join may still use it: leak it instead */
        }
        return rc;
    }
    *out = m;
    return 0;
}

int glibc_p6_tid(const struct glibc_p6 *m, size_t i) {
    return i < m->n ? atomic_load_explicit(&m->threads[i].tid, memory_order_acquire) : 0;
}

/* Cancels every thread, then joins every thread, then frees the set. Returns the time of both
 * loops in ns and stores that of the cancel loop in *cancel_ns, or returns a negated error
 * number: -EINVAL if a thread was not canceled. */
int64_t glibc_p6_fire(struct glibc_p6 *m, uint64_t *cancel_ns) {
    uint64_t total = 0;
    int all = 0;
    int rc = cancel_join(m, m->n, cancel_ns, &total, &all);
    if (rc != 0) {
        return -(int64_t)rc; /* a thread we could not join may still use it: leak it */
    }
    destroy(m);
    return all ? (int64_t)total : -(int64_t)EINVAL;
}
