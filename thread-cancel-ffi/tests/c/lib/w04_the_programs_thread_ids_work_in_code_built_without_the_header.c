/* The library half of w04_the_programs_thread_ids_work_in_code_built_without_the_header.c: a
 * library of the distribution, built without the compatibility header and without
 * libthread_cancel (TC_PLAIN_LIBRARY), whose functions take a pthread_t from the program and
 * give it to the C library's own calls (pthread_equal, pthread_setname_np, pthread_getname_np,
 * pthread_kill, pthread_getattr_np), and which creates a thread with the C library's
 * pthread_create that calls back into the program.
 *
 * Each comparison is made twice: by the C library's pthread_equal, called (through a pointer,
 * so that it is the C library's function whatever the optimisation), and by a raw `==`, which
 * is what glibc's header makes of pthread_equal at -O2 (an inline function): code built that
 * way compares the bits of the ids. */
#define _GNU_SOURCE
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdint.h>
#include "../tc_test.h"

static int (*volatile c_library_equal)(pthread_t, pthread_t) = pthread_equal;

/* The C library's pthread_self() of the calling thread. */
pthread_t lib_self(void) { return pthread_self(); }

/* Whether `t` is the calling thread: pthread_equal(t, pthread_self()) as the result, `t ==
 * pthread_self()` in *raw. */
int lib_is_self(pthread_t t, int *raw) {
    pthread_t self = pthread_self();
    *raw = t == self;
    return c_library_equal(t, self) != 0;
}

/* Names thread `t` (the C library's pthread_setname_np): its result. */
int lib_set_name(pthread_t t, const char *name) { return pthread_setname_np(t, name); }

/* Reads thread `t`'s name into `buf` (the C library's pthread_getname_np): its result. */
int lib_get_name(pthread_t t, char *buf, size_t size) { return pthread_getname_np(t, buf, size); }

/* The C library's pthread_kill(t, 0). */
int lib_kill0(pthread_t t) { return pthread_kill(t, 0); }

/* The C library's pthread_getattr_np(t): its result; in *sized whether the stack it gives has a
 * size > 0, in *holds whether it holds `local` (the address of a local of the thread). */
int lib_stack_of(pthread_t t, const void *local, int *sized, int *holds) {
    pthread_attr_t a;
    int e = pthread_getattr_np(t, &a);
    *sized = *holds = 0;
    if (e != 0)
        return e;
    void *base = NULL;
    size_t size = 0;
    if (pthread_attr_getstack(&a, &base, &size) == 0) {
        *sized = size > 0;
        *holds = (uintptr_t)local >= (uintptr_t)base &&
                 (uintptr_t)local < (uintptr_t)base + size;
    }
    pthread_attr_destroy(&a);
    return 0;
}

/* A thread of the library's that calls back into the program once the program has its id. */
static pthread_t cb_thread;
static atomic_int cb_go;
static void (*program_callback)(void);

static void *cb_body(void *arg) {
    while (atomic_load(&cb_go) == 0)
        test_usleep(100);
    program_callback();
    return arg;
}

/* Starts the thread (the C library's pthread_create), gives its id in *id, then lets it call
 * `callback`. */
int lib_start_thread(pthread_t *id, void (*callback)(void)) {
    program_callback = callback;
    int e = pthread_create(&cb_thread, NULL, cb_body, NULL);
    if (e != 0)
        return e;
    *id = cb_thread;
    atomic_store(&cb_go, 1);
    return 0;
}

/* Joins it (the C library's pthread_join): its result. */
int lib_join_thread(void) { return pthread_join(cb_thread, NULL); }
