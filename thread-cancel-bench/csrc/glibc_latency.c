/* P3 and P4, the glibc side: cancellation latency of glibc's pthread_cancel, from the call to
 * the first cleanup handler (pushed with pthread_cleanup_push) starting in the target thread,
 * with the target blocked in a wait (nanosleep, pthread_cond_wait, pthread_join), in a system-call
 * cancellation point (read, accept, poll on a descriptor the Rust side owns), or running
 * (a pthread_testcancel loop); and the signal-to-handler floors of P4 (no cancellation), one
 * per system call: leaving a call for a signal costs the kernel more in some calls than in
 * others (accept frees the socket and the file it made before it waited).
 *
 * A measurement is split in three so the Rust side can wait until the target is blocked with
 * the same code it uses for thread-cancel's threads (src/glibc.rs):
 *
 *   glibc_lat_start(kind, fd, cpu, &t)  creates the target thread (pinned to `cpu` unless it is
 *                                       negative) and returns once the thread has published
 *                                       its kernel tid, just before it blocks (on `fd`, for the
 *                                       kinds that use one; it stays open until fire returns);
 *   glibc_lat_tid(target)               that tid (the caller watches /proc/self/task/TID/...);
 *   glibc_lat_fire(target)              t0 = CLOCK_MONOTONIC, pthread_cancel (pthread_kill for
 *                                       the floor), pthread_join, free; returns the handler's
 *                                       time - t0 in ns. */

#define _GNU_SOURCE
#include "glibc_common.h"
#include <errno.h>
#include <poll.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdlib.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

/* What the target thread does when it is canceled (keep in sync with src/glibc.rs). */
enum glibc_lat_kind {
    GLIBC_LAT_NANOSLEEP = 0,  /* blocked in nanosleep(1 h) */
    GLIBC_LAT_COND_WAIT = 1,  /* blocked in pthread_cond_wait, never signalled */
    GLIBC_LAT_TESTCANCEL = 2, /* running: a loop of pthread_testcancel() (no wake-up) */
    GLIBC_LAT_READ = 3,       /* read(fd, buf, 1) on an empty pipe whose writer stays open */
    GLIBC_LAT_ACCEPT = 4,     /* accept(fd, NULL, NULL) on a listener nobody connects to */
    GLIBC_LAT_POLL = 5,       /* poll({fd, POLLIN}, 1, -1) on an empty pipe */
    /* The floors of P4: blocked in read as GLIBC_LAT_READ (accept, poll: as GLIBC_LAT_ACCEPT,
     * GLIBC_LAT_POLL), woken by a signal (pthread_kill, not pthread_cancel) whose handler is
     * what is timed; the thread then returns. */
    GLIBC_LAT_SIGNAL_READ = 6,
    /* pthread_join of a helper thread that waits until the sample is over */
    GLIBC_LAT_JOIN = 7,
    GLIBC_LAT_SIGNAL_ACCEPT = 8,
    GLIBC_LAT_SIGNAL_POLL = 9
};

/* Whether `kind` is a floor (signalled, not canceled). */
static int is_floor(int kind) {
    return kind == GLIBC_LAT_SIGNAL_READ || kind == GLIBC_LAT_SIGNAL_ACCEPT ||
           kind == GLIBC_LAT_SIGNAL_POLL;
}

/* The call a target of `kind` blocks in: a floor's is that of the canceled kind it mirrors. */
static int call_of(int kind) {
    switch (kind) {
    case GLIBC_LAT_SIGNAL_READ:
        return GLIBC_LAT_READ;
    case GLIBC_LAT_SIGNAL_ACCEPT:
        return GLIBC_LAT_ACCEPT;
    case GLIBC_LAT_SIGNAL_POLL:
        return GLIBC_LAT_POLL;
    default:
        return kind;
    }
}

struct glibc_lat_target {
    pthread_t thread;
    int kind;
    int fd;
    int cpu;       /* < 0: not pinned */
    int pin_error; /* the target's pthread_setaffinity_np error (published with tid = -1) */
    pthread_mutex_t mutex;
    pthread_cond_t cond;
    /* GLIBC_LAT_JOIN: the thread the target joins, which waits on `cond` until `stop` (set by
     * glibc_lat_fire once the target is over); `helper_started` says it must be ended and
     * joined; `helper_joined` that the target's join returned (it never should). */
    pthread_t helper;
    int helper_started;
    int helper_joined;
    int stop;
    /* The target's kernel tid; 0 until the thread is about to block. */
    _Atomic int tid;
    /* CLOCK_MONOTONIC in ns when the measured handler started; 0 until then. */
    _Atomic uint64_t handler_ns;
};

/* The measured cleanup handler: the newest one, so the first to run. */
static void record_handler(void *arg) {
    struct glibc_lat_target *t = arg;
    atomic_store_explicit(&t->handler_ns, glibc_bench_monotonic_ns(), memory_order_release);
}

static void unlock_handler(void *arg) {
    pthread_mutex_unlock(arg);
}

/* The floor's target: set by the thread before it blocks, read by the signal handler. */
static __thread struct glibc_lat_target *signal_target;

static void floor_signal_handler(int sig) {
    (void)sig;
    if (signal_target != NULL) {
        record_handler(signal_target);
    }
}

/* The signal of the floor: a real-time one that neither glibc (SIGRTMIN - 2, SIGRTMIN - 1) nor
 * thread-cancel (SIGRTMIN + 7 by default) uses. */
int glibc_lat_floor_signal(void) {
    return SIGRTMIN + 4;
}

static pthread_once_t floor_signal_once = PTHREAD_ONCE_INIT;
static int floor_signal_error;

static void install_floor_signal(void) {
    struct sigaction sa;
    sa.sa_handler = floor_signal_handler;
    sigemptyset(&sa.sa_mask);
    sa.sa_flags = 0; /* no SA_RESTART: the interrupted read returns EINTR */
    if (sigaction(glibc_lat_floor_signal(), &sa, NULL) != 0) {
        floor_signal_error = errno;
    }
}

/* Blocks as `t->kind` says until canceled (or, for the floor, signalled). */
static void block(struct glibc_lat_target *t) {
    char buf[1];
    struct pollfd p = {.fd = t->fd, .events = POLLIN, .revents = 0};
    struct timespec hour = {3600, 0};
    atomic_store_explicit(&t->tid, gettid(), memory_order_release);
    /* Each call blocks until canceled (a floor's: until signalled, then the thread returns); a
     * spurious return (none is expected) blocks again. */
    for (;;) {
        switch (call_of(t->kind)) {
        case GLIBC_LAT_NANOSLEEP:
            nanosleep(&hour, NULL);
            break;
        case GLIBC_LAT_COND_WAIT:
            pthread_cond_wait(&t->cond, &t->mutex);
            break;
        case GLIBC_LAT_TESTCANCEL:
            pthread_testcancel();
            break;
        case GLIBC_LAT_READ:
            (void)read(t->fd, buf, sizeof buf);
            break;
        case GLIBC_LAT_ACCEPT: {
            int c = accept(t->fd, NULL, NULL);
            if (c >= 0) {
                close(c);
            }
            break;
        }
        case GLIBC_LAT_POLL:
            (void)poll(&p, 1, -1);
            break;
        case GLIBC_LAT_JOIN:
            /* A thread is joined once: should the join return, wait as in nanosleep. */
            if (!t->helper_joined) {
                (void)pthread_join(t->helper, NULL);
                t->helper_joined = 1;
            } else {
                nanosleep(&hour, NULL);
            }
            break;
        default: /* not reached: glibc_lat_start checks the kind */
            return;
        }
        if (is_floor(t->kind) && atomic_load_explicit(&t->handler_ns, memory_order_acquire) != 0) {
            return;
        }
    }
}

/* GLIBC_LAT_JOIN's helper: waits until glibc_lat_fire sets `stop`. */
static void *helper_start(void *arg) {
    struct glibc_lat_target *t = arg;
    pthread_mutex_lock(&t->mutex);
    while (!t->stop) {
        pthread_cond_wait(&t->cond, &t->mutex);
    }
    pthread_mutex_unlock(&t->mutex);
    return NULL;
}

/* Ends GLIBC_LAT_JOIN's helper, if there is one (the target is over: a canceled join leaves
 * the helper joinable). */
static void end_helper(struct glibc_lat_target *t) {
    if (!t->helper_started) {
        return;
    }
    pthread_mutex_lock(&t->mutex);
    t->stop = 1;
    pthread_cond_broadcast(&t->cond);
    pthread_mutex_unlock(&t->mutex);
    if (!t->helper_joined) {
        (void)pthread_join(t->helper, NULL);
    }
    t->helper_started = 0;
}

/* Pushes the measured cleanup handler, then blocks. */
static void block_measured(struct glibc_lat_target *t) {
    pthread_cleanup_push(record_handler, t);
    block(t);
    pthread_cleanup_pop(0);
}

static void *target_start(void *arg) {
    struct glibc_lat_target *t = arg;
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
    if (is_floor(t->kind)) {
        signal_target = t;
        block(t);
        return NULL;
    }
    if (t->kind == GLIBC_LAT_COND_WAIT) {
        /* The usual pattern: the mutex (re-acquired by a canceled wait) is unlocked by a
         * cleanup handler, pushed first so it runs after the measured one. */
        pthread_mutex_lock(&t->mutex);
        pthread_cleanup_push(unlock_handler, &t->mutex);
        block_measured(t);
        pthread_cleanup_pop(0);
    } else {
        block_measured(t);
    }
    return NULL;
}

/* A new target, its thread not yet created (NULL if out of memory). */
static struct glibc_lat_target *create(int kind, int fd, int cpu) {
    struct glibc_lat_target *t = calloc(1, sizeof *t);
    if (t != NULL) {
        t->kind = kind;
        t->fd = fd;
        t->cpu = cpu;
        pthread_mutex_init(&t->mutex, NULL);
        pthread_cond_init(&t->cond, NULL);
        atomic_init(&t->tid, 0);
        atomic_init(&t->handler_ns, 0);
    }
    return t;
}

static void destroy(struct glibc_lat_target *t) {
    pthread_cond_destroy(&t->cond);
    pthread_mutex_destroy(&t->mutex);
    free(t);
}

/* Creates the target thread, pinned to `cpu` if it is not negative, and waits (yielding) until
 * it is about to block. Returns 0 and stores the target in *out, or an error number. */
int glibc_lat_start(int kind, int fd, int cpu, struct glibc_lat_target **out) {
    if (cpu >= CPU_SETSIZE || kind < GLIBC_LAT_NANOSLEEP || kind > GLIBC_LAT_SIGNAL_POLL) {
        return EINVAL;
    }
    if (is_floor(kind)) {
        pthread_once(&floor_signal_once, install_floor_signal);
        if (floor_signal_error != 0) {
            return floor_signal_error;
        }
    }
    struct glibc_lat_target *t = create(kind, fd, cpu);
    if (t == NULL) {
        return ENOMEM;
    }
    if (kind == GLIBC_LAT_JOIN) {
        /* Made by this thread, as the Rust side's joined thread is by the sampling thread. */
        int hrc = pthread_create(&t->helper, NULL, helper_start, t);
        if (hrc != 0) {
            destroy(t);
            return hrc;
        }
        t->helper_started = 1;
    }
    int rc = glibc_bench_spawn_wait(&t->thread, target_start, t, &t->tid);
    if (rc != 0) {
        end_helper(t);
        destroy(t);
        return rc;
    }
    if (atomic_load_explicit(&t->tid, memory_order_acquire) < 0) {
        /* The thread could not pin itself and has returned. */
        rc = t->pin_error;
        pthread_join(t->thread, NULL);
        end_helper(t);
        destroy(t);
        return rc;
    }
    *out = t;
    return 0;
}

int glibc_lat_tid(const struct glibc_lat_target *t) {
    return atomic_load_explicit(&t->tid, memory_order_acquire);
}

/* Cancels (for the floor: signals) the target, joins it and frees it. Returns the latency in
 * ns (handler start minus the time just before pthread_cancel or pthread_kill), or a negated
 * error number: -EINVAL if the thread did not end as expected (canceled; for the floor,
 * returned) or its handler did not run. */
int64_t glibc_lat_fire(struct glibc_lat_target *t) {
    int floor = is_floor(t->kind);
    uint64_t t0 = glibc_bench_monotonic_ns();
    int rc = floor ? pthread_kill(t->thread, glibc_lat_floor_signal()) : pthread_cancel(t->thread);
    void *ret = NULL;
    int jrc = pthread_join(t->thread, &ret);
    uint64_t t1 = atomic_load_explicit(&t->handler_ns, memory_order_acquire);
    if (jrc == 0) {
        end_helper(t);
    }
    int64_t result;
    if (rc != 0) {
        result = -(int64_t)rc;
    } else if (jrc != 0) {
        result = -(int64_t)jrc;
    } else if (ret != (floor ? NULL : PTHREAD_CANCELED) || t1 == 0 || t1 < t0) {
        result = -(int64_t)EINVAL;
    } else {
        result = (int64_t)(t1 - t0);
    }
    if (jrc == 0) {
        destroy(t); /* a thread we could not join may still use it: leak it instead */
    }
    return result;
}
