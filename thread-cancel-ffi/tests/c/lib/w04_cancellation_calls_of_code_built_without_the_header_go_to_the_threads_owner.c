/* The library half of w04_cancellation_calls_of_code_built_without_the_header_go_to_the_threads_owner.c:
 * a library of the distribution, built without the compatibility header and without
 * libthread_cancel (TC_PLAIN_LIBRARY): its pthread_cancel, pthread_setcancelstate and
 * pthread_testcancel are the C library's names, called on the program's threads. */
#define _GNU_SOURCE
#include <pthread.h>
#include <stdatomic.h>
#include <unistd.h>

static pthread_t remembered;

/* Remembers the calling thread's id, as the C library gives it (pthread_self). */
void lib_remember_self(void) { remembered = pthread_self(); }

/* Cancels the remembered thread with the C library's pthread_cancel. */
int lib_cancel_remembered(void) { return pthread_cancel(remembered); }

static atomic_int read_result = -2; /* -2: the read has not returned */
static atomic_int old_state = -2, reenabled = -2;

/* Reads one byte from fd with cancellation disabled (the C library's call), enables it again
 * and tests for a cancel (pthread_testcancel): 100 if not canceled. */
int lib_read_disabled(int fd) {
    int old;
    if (pthread_setcancelstate(PTHREAD_CANCEL_DISABLE, &old) != 0)
        return -1;
    atomic_store(&old_state, old);
    char c;
    atomic_store(&read_result, (int)read(fd, &c, 1));
    int was;
    pthread_setcancelstate(old, &was);
    atomic_store(&reenabled, was);
    pthread_testcancel();
    return 100;
}

/* What lib_read_disabled saw: its read's result (-2 while it has not returned), the state
 * pthread_setcancelstate reported before it disabled, and the one it reported when enabling. */
int lib_read_result(void) { return atomic_load(&read_result); }
int lib_old_state(void) { return atomic_load(&old_state); }
int lib_reenabled_from(void) { return atomic_load(&reenabled); }

static atomic_int handler_ran;
static char order[8];
static atomic_int order_len;

static void handler(void *arg) {
    (void)arg;
    atomic_fetch_add(&handler_ran, 1);
}

/* Appends its argument (a letter) to the order in which handlers ran. */
static void note(void *arg) {
    int i = atomic_fetch_add(&order_len, 1);
    if (i < (int)sizeof order - 1)
        order[i] = *(const char *)arg;
}

static int inner_read(int fd) {
    char c;
    ssize_t n;
    pthread_cleanup_push(note, "c");
    n = read(fd, &c, 1);
    pthread_cleanup_pop(0);
    return (int)n;
}

/* Reads one byte from fd inside cleanup handlers pushed with glibc's macros (built without
 * -fexceptions: __pthread_register_cancel): `handler`, two nested ones in this frame ("b", then
 * "a" outside it) and one in the frame of the read ("c"). */
int lib_read_with_handler(int fd) {
    int n;
    pthread_cleanup_push(handler, NULL);
    pthread_cleanup_push(note, "a");
    pthread_cleanup_push(note, "b");
    n = inner_read(fd);
    pthread_cleanup_pop(0);
    pthread_cleanup_pop(0);
    pthread_cleanup_pop(0);
    return n;
}

/* The order in which the handlers of lib_read_with_handler ran. */
const char *lib_order(void) { return order; }

/* An asynchronous thread in a loop without points, under a handler of glibc's macros. */
static atomic_int spinning;
void lib_spin_async(void) {
    int old;
    pthread_setcanceltype(PTHREAD_CANCEL_ASYNCHRONOUS, &old);
    pthread_cleanup_push(note, "s");
    atomic_store(&spinning, 1);
    for (;;)
        atomic_fetch_add(&spinning, 1);
    pthread_cleanup_pop(0);
}

int lib_spinning(void) { return atomic_load(&spinning); }

/* How many times the handler of lib_read_with_handler ran. */
int lib_handler_ran(void) { return atomic_load(&handler_ran); }

static atomic_int exit_handler_ran;

static void exit_handler(void *arg) {
    (void)arg;
    atomic_fetch_add(&exit_handler_ran, 1);
}

/* Ends the calling thread with the C library's pthread_exit, under a cleanup handler. */
void lib_exit(void *value) {
    pthread_cleanup_push(exit_handler, NULL);
    pthread_exit(value);
    pthread_cleanup_pop(0);
}

int lib_exit_handler_ran(void) { return atomic_load(&exit_handler_ran); }

static atomic_int defer_type = -1;

/* pthread_cleanup_push_defer_np around a read, in a thread whose type is asynchronous: the type
 * is deferred inside (seen by pthread_setcanceltype), and asynchronous again after the pop. */
int lib_read_deferred(int fd) {
    char c;
    ssize_t n;
    int old;
    pthread_setcanceltype(PTHREAD_CANCEL_ASYNCHRONOUS, &old);
    pthread_cleanup_push_defer_np(handler, NULL);
    int inside;
    pthread_setcanceltype(PTHREAD_CANCEL_DEFERRED, &inside);
    atomic_store(&defer_type, inside);
    n = read(fd, &c, 1);
    pthread_cleanup_pop_restore_np(0);
    pthread_setcanceltype(old, &old);
    return (int)n;
}

/* The type pthread_setcanceltype reported inside lib_read_deferred's defer block. */
int lib_defer_type(void) { return atomic_load(&defer_type); }
