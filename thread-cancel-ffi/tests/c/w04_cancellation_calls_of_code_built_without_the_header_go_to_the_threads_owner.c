/* W04: the cancellation calls of a library built without the compatibility header (tests/c/lib/
 * of the same name, TC_PLAIN_LIBRARY: as a distribution's library is built) act on the
 * program's threads as on glibc: they are the library's for a thread created through the header.
 *
 * 1. A thread of the program, blocked in read, canceled by the library's pthread_cancel with
 *    the id the library took from pthread_self: canceled, its cleanup handler run. Before, the C
 *    library's pthread_cancel sent its own signal, which found no point of the C library (the
 *    read is the library's): the join waited until the program's alarm.
 * 2. A thread of the program in the library, which disables cancellation with the C library's
 *    pthread_setcancelstate around a read: a cancel sent while it is blocked there does not act
 *    (the thread is still asleep 200 ms later); the byte written then is read, and the cancel
 *    acts at the library's pthread_testcancel after it enables it again. Before, the cancel acted
 *    inside the read the library had disabled (its state was the C library's, the read ours).
 * 3. A thread of the program blocked in the library's read, under a cleanup handler the library
 *    pushed with glibc's macros (without -fexceptions they register it with the C library:
 *    __pthread_register_cancel), itself under one of the program's: canceled, the library's
 *    handlers run, innermost first, then the program's. Then an asynchronous thread spinning
 *    in the library under a handler of its macros: canceled, the handler run.
 * 4. A thread of the program that ends in the library with the C library's pthread_exit, under a
 *    cleanup handler of the library's: the handler runs, the join gets the value.
 * 5. pthread_cleanup_push_defer_np in the library, in a thread made asynchronous: deferred inside
 *    (as pthread_setcanceltype reports it), canceled in its read, the handler run.
 *
 * TC_COMPARE_WITH_GLIBC: built through pthread_compat.h with libthread_cancel and against the
 * system's glibc alone; both print the same lines. */
#include <dlfcn.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <unistd.h>
#include "tc_test.h"

static void (*lib_remember_self)(void);
static int (*lib_cancel_remembered)(void);
static int (*lib_read_disabled)(int);
static int (*lib_read_result)(void);
static int (*lib_old_state)(void);
static int (*lib_reenabled_from)(void);
static int (*lib_read_with_handler)(int);
static int (*lib_handler_ran)(void);
static const char *(*lib_order)(void);
static void (*lib_spin_async)(void);
static int (*lib_spinning)(void);
static void (*lib_exit)(void *);
static int (*lib_exit_handler_ran)(void);
static int (*lib_read_deferred)(int);
static int (*lib_defer_type)(void);

static int fds[2];
static atomic_int tid, cleaned;

static void cleanup(void *arg) {
    (void)arg;
    atomic_fetch_add(&cleaned, 1);
}

static void *reader(void *arg) {
    (void)arg;
    char c;
    ssize_t n;
    lib_remember_self();
    atomic_store(&tid, test_gettid());
    pthread_cleanup_push(cleanup, NULL);
    n = read(fds[0], &c, 1);
    pthread_cleanup_pop(0);
    return n == 1 ? "read a byte" : "read failed";
}

static void *disabled_reader(void *arg) {
    (void)arg;
    atomic_store(&tid, test_gettid());
    return lib_read_disabled(fds[0]) == 100 ? "not canceled" : "the library failed";
}

static atomic_int program_handler_saw = -1;
static char program_saw_order[8];

static void program_handler(void *arg) {
    (void)arg;
    atomic_store(&program_handler_saw, lib_handler_ran());
    snprintf(program_saw_order, sizeof program_saw_order, "%s", lib_order());
}

static void *spinner(void *arg) {
    (void)arg;
    lib_spin_async();
    return "lib_spin_async returned";
}

static void *reader_in_library(void *arg) {
    (void)arg;
    int n;
    pthread_cleanup_push(program_handler, NULL);
    atomic_store(&tid, test_gettid());
    n = lib_read_with_handler(fds[0]);
    pthread_cleanup_pop(0);
    return n == 1 ? "read a byte" : "read failed";
}

static void *exits_in_library(void *arg) {
    (void)arg;
    lib_exit("the library's pthread_exit value");
    return "lib_exit returned";
}

static void *deferred_reader(void *arg) {
    (void)arg;
    atomic_store(&tid, test_gettid());
    return lib_read_deferred(fds[0]) == 1 ? "read a byte" : "read failed";
}

static const char *joined(pthread_t t) {
    void *r;
    if (pthread_join(t, &r) != 0)
        return "join failed";
    return r == PTHREAD_CANCELED ? "canceled" : (const char *)r;
}

int main(void) {
    alarm(60);
    void *lib = dlopen(TC_TEST_LIB, RTLD_NOW | RTLD_LOCAL);
    CHECK(lib != NULL);
    lib_remember_self = (void (*)(void))dlsym(lib, "lib_remember_self");
    lib_cancel_remembered = (int (*)(void))dlsym(lib, "lib_cancel_remembered");
    lib_read_disabled = (int (*)(int))dlsym(lib, "lib_read_disabled");
    lib_read_result = (int (*)(void))dlsym(lib, "lib_read_result");
    lib_old_state = (int (*)(void))dlsym(lib, "lib_old_state");
    lib_reenabled_from = (int (*)(void))dlsym(lib, "lib_reenabled_from");
    lib_read_with_handler = (int (*)(int))dlsym(lib, "lib_read_with_handler");
    lib_handler_ran = (int (*)(void))dlsym(lib, "lib_handler_ran");
    lib_order = (const char *(*)(void))dlsym(lib, "lib_order");
    lib_spin_async = (void (*)(void))dlsym(lib, "lib_spin_async");
    lib_spinning = (int (*)(void))dlsym(lib, "lib_spinning");
    CHECK(lib_order && lib_spin_async && lib_spinning);
    lib_exit = (void (*)(void *))dlsym(lib, "lib_exit");
    lib_exit_handler_ran = (int (*)(void))dlsym(lib, "lib_exit_handler_ran");
    lib_read_deferred = (int (*)(int))dlsym(lib, "lib_read_deferred");
    lib_defer_type = (int (*)(void))dlsym(lib, "lib_defer_type");
    CHECK(lib_exit && lib_exit_handler_ran && lib_read_deferred && lib_defer_type);
    CHECK(lib_remember_self && lib_cancel_remembered && lib_read_disabled && lib_read_result &&
          lib_old_state && lib_reenabled_from && lib_read_with_handler && lib_handler_ran);
    CHECK(pipe(fds) == 0);

    pthread_t t;
    const char *j;
    CHECK(pthread_create(&t, NULL, reader, NULL) == 0);
    int id;
    while ((id = atomic_load(&tid)) == 0)
        test_usleep(100);
    test_wait_blocked(id);
    printf("the library's cancel of a thread blocked in read: %d\n", lib_cancel_remembered());
    printf("its join: %s\n", joined(t));
    printf("its cleanup handler ran: %d time(s)\n", atomic_load(&cleaned));

    atomic_store(&tid, 0);
    CHECK(pthread_create(&t, NULL, disabled_reader, NULL) == 0);
    while ((id = atomic_load(&tid)) == 0)
        test_usleep(100);
    test_wait_blocked(id);
    printf("cancel of a thread in the library's disabled read: %d\n", pthread_cancel(t));
    /* A window in which nothing must happen: a cancel that acted would end the read at once. */
    test_msleep(200);
    char state = test_thread_state(id);
    printf("the thread, 200 ms after the cancel: %s\n",
           state == 'S' ? "still asleep (in its read)" : state == '?' ? "gone" : "running");
    CHECK(write(fds[1], "x", 1) == 1);
    printf("its join: %s\n", joined(t));
    printf("the library's read returned %d; the state before it disabled: %s, when it enabled "
           "again: %s\n",
           lib_read_result(), lib_old_state() == PTHREAD_CANCEL_ENABLE ? "enabled" : "disabled",
           lib_reenabled_from() == PTHREAD_CANCEL_DISABLE ? "disabled" : "enabled");

    atomic_store(&tid, 0);
    CHECK(pthread_create(&t, NULL, reader_in_library, NULL) == 0);
    while ((id = atomic_load(&tid)) == 0)
        test_usleep(100);
    test_wait_blocked(id);
    printf("cancel of a thread blocked in the library's read, under the library's cleanup "
           "handler: %d\n",
           pthread_cancel(t));
    printf("its join: %s\n", joined(t));
    printf("the library's cleanup handler ran: %d time(s), before the program's (which saw %d)\n",
           lib_handler_ran(), atomic_load(&program_handler_saw));
    printf("the library's nested handlers ran in the order \"%s\" (the program's saw \"%s\")\n",
           lib_order(), program_saw_order);

    CHECK(pthread_create(&t, NULL, spinner, NULL) == 0);
    while (lib_spinning() < 1000)
        test_usleep(100);
    printf("cancel of an asynchronous thread spinning in the library: %d\n", pthread_cancel(t));
    j = joined(t);
    printf("its join: %s; the handlers ran in the order \"%s\"\n", j, lib_order());

    CHECK(pthread_create(&t, NULL, exits_in_library, NULL) == 0);
    j = joined(t);
    printf("a thread that ends with the library's pthread_exit: join: %s, the library's handler "
           "ran: %d time(s)\n",
           j, lib_exit_handler_ran());

    atomic_store(&tid, 0);
    CHECK(pthread_create(&t, NULL, deferred_reader, NULL) == 0);
    while ((id = atomic_load(&tid)) == 0)
        test_usleep(100);
    test_wait_blocked(id);
    printf("cancel of a thread in the library's read under pthread_cleanup_push_defer_np: %d\n",
           pthread_cancel(t));
    j = joined(t);
    printf("its join: %s; the type inside: %s; the library's handler ran: %d time(s) in all\n",
           j, lib_defer_type() == PTHREAD_CANCEL_DEFERRED ? "deferred" : "asynchronous",
           lib_handler_ran());
    return 0;
}
