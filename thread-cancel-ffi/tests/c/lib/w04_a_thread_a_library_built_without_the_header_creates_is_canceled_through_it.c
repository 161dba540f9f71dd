/* The library half of w04_a_thread_a_library_built_without_the_header_creates_is_canceled_through_it.c:
 * a library of the distribution, built without the compatibility header and without
 * libthread_cancel (TC_PLAIN_LIBRARY), that runs a worker thread of its own blocked in read,
 * with a cleanup handler (glibc's macros: without -fexceptions they register it with the C
 * library, __pthread_register_cancel), and joins it itself; and a C11 thread (thrd_create) likewise, joined with thrd_join;
 * and a worker that calls back into the program between a cleanup push and its pop (the program's
 * code makes it the library's there), then pushes another and blocks in read. */
#define _GNU_SOURCE
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <string.h>
#include <sys/syscall.h>
#include <threads.h>
#include <unistd.h>

static int fds[2];
static pthread_t worker;
static atomic_int tid, cleaned;

static void cleanup(void *arg) {
    (void)arg;
    atomic_fetch_add(&cleaned, 1);
}

static void *work(void *arg) {
    (void)arg;
    char c;
    atomic_store(&tid, (int)syscall(SYS_gettid));
    ssize_t n;
    pthread_cleanup_push(cleanup, NULL);
    n = read(fds[0], &c, 1);
    pthread_cleanup_pop(0);
    return n == 1 ? "read a byte" : "read failed";
}

/* Starts the worker; its id, as the C library gave it, in *id. */
int lib_start(pthread_t *id) {
    if (pipe(fds) != 0)
        return -1;
    int e = pthread_create(&worker, NULL, work, NULL);
    *id = worker;
    return e;
}

/* The worker's kernel thread id once it has started (0 before). */
int lib_worker_tid(void) { return atomic_load(&tid); }

/* Joins the worker with the C library's pthread_join: "canceled", or what it returned. */
const char *lib_join(void) {
    void *r;
    int e = pthread_join(worker, &r);
    if (e != 0)
        return strerror(e);
    return r == PTHREAD_CANCELED ? "canceled" : (const char *)r;
}

int lib_cleaned(void) { return atomic_load(&cleaned); }

/* The same with a C11 thread (thrd_create, which the C library implements with its internal
 * pthread_create), joined with thrd_join. */
static int c11_fds[2];
static thrd_t c11_worker;
static atomic_int c11_tid;

static int c11_work(void *arg) {
    (void)arg;
    char c;
    atomic_store(&c11_tid, (int)syscall(SYS_gettid));
    return read(c11_fds[0], &c, 1) == 1 ? 1 : 2;
}

int lib_c11_start(pthread_t *id) {
    if (pipe(c11_fds) != 0)
        return -1;
    int e = thrd_create(&c11_worker, c11_work, NULL);
    *id = c11_worker;
    return e == thrd_success ? 0 : -1;
}

int lib_c11_worker_tid(void) { return atomic_load(&c11_tid); }

/* thrd_join's result: -1 for a canceled thread (PTHREAD_CANCELED as an int). */
int lib_c11_join(void) {
    int r = 0;
    return thrd_join(c11_worker, &r) == thrd_success ? r : -100;
}

/* A worker that calls back into the program (`callback`) inside a cleanup handler pushed while
 * it had not met the program, pops that handler, pushes another, and blocks in read. */
static int cb_fds[2];
static pthread_t cb_worker;
static atomic_int cb_tid, first_ran, second_ran;
static void (*program_callback)(void);

static void first_handler(void *arg) {
    (void)arg;
    atomic_fetch_add(&first_ran, 1);
}

static void second_handler(void *arg) {
    (void)arg;
    atomic_fetch_add(&second_ran, 1);
}

static void *cb_work(void *arg) {
    (void)arg;
    char c;
    ssize_t n;
    pthread_cleanup_push(first_handler, NULL);
    program_callback();
    pthread_cleanup_pop(0);
    pthread_cleanup_push(second_handler, NULL);
    atomic_store(&cb_tid, (int)syscall(SYS_gettid));
    n = read(cb_fds[0], &c, 1);
    pthread_cleanup_pop(0);
    return n == 1 ? "read a byte" : "read failed";
}

int lib_callback_start(pthread_t *id, void (*callback)(void)) {
    if (pipe(cb_fds) != 0)
        return -1;
    program_callback = callback;
    int e = pthread_create(&cb_worker, NULL, cb_work, NULL);
    *id = cb_worker;
    return e;
}

int lib_callback_worker_tid(void) { return atomic_load(&cb_tid); }

const char *lib_callback_join(void) {
    void *r;
    int e = pthread_join(cb_worker, &r);
    if (e != 0)
        return strerror(e);
    return r == PTHREAD_CANCELED ? "canceled" : (const char *)r;
}

/* How many times the handler popped after the callback ran, and the one pushed after it. */
int lib_first_ran(void) { return atomic_load(&first_ran); }
int lib_second_ran(void) { return atomic_load(&second_ran); }
