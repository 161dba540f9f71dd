/* W04: the main thread of a program built through the compatibility header, blocked in read, is
 * canceled by a library built without the header (tests/c/lib/ of the same name,
 * TC_PLAIN_LIBRARY) through the id the library took with pthread_self: main's cleanup handler
 * runs and the process ends when the library's thread does, with status 0, as on glibc. Before,
 * main was not the library's until it called pthread_self through the header: its read was a
 * plain system call and the library's cancel (the C library's, for a thread the library did not
 * know) was lost; the program ran until its alarm.
 *
 * TC_COMPARE_WITH_GLIBC: built through pthread_compat.h with libthread_cancel and against the
 * system's glibc alone; both print the same lines. */
#include <dlfcn.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <unistd.h>
#include "tc_test.h"

static atomic_int handler_ran;

static void handler(void *arg) {
    (void)arg;
    atomic_fetch_add(&handler_ran, 1);
}

int main(void) {
    alarm(60);
    void *lib = dlopen(TC_TEST_LIB, RTLD_NOW | RTLD_LOCAL);
    CHECK(lib != NULL);
    int (*cancel_me)(atomic_int *) = (int (*)(atomic_int *))dlsym(lib, "lib_cancel_me_once_blocked");
    CHECK(cancel_me != NULL);
    int fds[2];
    CHECK(pipe(fds) == 0);
    char c;
    ssize_t n;
    pthread_cleanup_push(handler, NULL);
    CHECK(cancel_me(&handler_ran) == 0);
    n = read(fds[0], &c, 1);
    pthread_cleanup_pop(0);
    printf("main's read returned %zd: not canceled\n", n);
    return 1;
}
