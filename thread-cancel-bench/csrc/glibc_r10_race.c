/* R10 beside glibc: a C reader thread (pthread_create) loops read(fd, buf, 8) on a pipe and
 * counts the bytes each read returned; the Rust side writes a few bytes, cancels the reader
 * with pthread_cancel, joins it, and drains the pipe. Bytes written - (counted + drained) are
 * bytes that a read took out of the pipe and that were then lost to the cancellation: glibc's
 * read returned data and the thread was canceled at that same call.
 *
 *   glibc_r10_start(fd, &r)               creates the reader, returns once it is about to read;
 *   glibc_r10_cancel_join(r, &n, &c, &e)  pthread_cancel, pthread_join, free; stores the bytes
 *                                          counted, whether the join reported PTHREAD_CANCELED,
 *                                          and the errno of an unexpected read error (0: none).
 *
 * Between read returning and the count being stored the reader runs no cancellation point:
 * only a compare, an atomic add, and (on failure) a load of errno. The next cancellation point
 * is the next read. */

#define _GNU_SOURCE
#include "glibc_common.h"
#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdlib.h>
#include <unistd.h>

struct glibc_r10_reader {
    pthread_t thread;
    int fd;
    /* Set just before the first read. */
    _Atomic int started;
    /* Bytes the reads returned. */
    _Atomic size_t counted;
    /* errno of a read that failed with anything but EINTR (the reader then returns). */
    _Atomic int error;
};

static void *reader_start(void *arg) {
    struct glibc_r10_reader *r = arg;
    char buf[8];
    atomic_store_explicit(&r->started, 1, memory_order_release);
    for (;;) {
        ssize_t k = read(r->fd, buf, sizeof buf);
        if (k > 0) {
            atomic_fetch_add_explicit(&r->counted, (size_t)k, memory_order_relaxed);
        } else if (k == 0) {
            return NULL; /* end of file: not expected, the writer stays open */
        } else if (errno != EINTR) {
            atomic_store_explicit(&r->error, errno, memory_order_relaxed);
            return NULL;
        }
    }
}

/* Creates the reader on `fd` (default attributes: cancellation enabled, deferred) and waits
 * (yielding) until it is about to read. Returns 0 and stores the reader in *out, or an error
 * number. */
int glibc_r10_start(int fd, struct glibc_r10_reader **out) {
    struct glibc_r10_reader *r = calloc(1, sizeof *r);
    if (r == NULL) {
        return ENOMEM;
    }
    r->fd = fd;
    atomic_init(&r->started, 0);
    atomic_init(&r->counted, 0);
    atomic_init(&r->error, 0);
    int rc = glibc_bench_spawn_wait(&r->thread, reader_start, r, &r->started);
    if (rc != 0) {
        free(r);
        return rc;
    }
    *out = r;
    return 0;
}

/* Cancels the reader, joins it, frees it. Returns 0 or the error number of pthread_cancel or
 * pthread_join (the reader is not freed if the join failed). */
int glibc_r10_cancel_join(struct glibc_r10_reader *r, size_t *counted, int *canceled,
                          int *read_error) {
    int rc = pthread_cancel(r->thread);
    void *ret = NULL;
    int jrc = pthread_join(r->thread, &ret);
    if (jrc != 0) {
        return jrc; /* the thread may still use it: leak it */
    }
    *counted = atomic_load_explicit(&r->counted, memory_order_relaxed);
    *canceled = ret == PTHREAD_CANCELED;
    *read_error = atomic_load_explicit(&r->error, memory_order_relaxed);
    free(r);
    return rc;
}
