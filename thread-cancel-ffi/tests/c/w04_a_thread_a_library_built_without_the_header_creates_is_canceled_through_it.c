/* W04: a thread that a library built without the compatibility header creates (tests/c/lib/ of
 * the same name, TC_PLAIN_LIBRARY: as a distribution's library is built) is the program's to
 * cancel, as on glibc. The library's worker is blocked in read; the program cancels it with
 * the id the library gave it; the library joins it with the C library's pthread_join and gets
 * PTHREAD_CANCELED, its cleanup handler (registered by glibc's macros) run. The same for a C11
 * thread of the library (thrd_create, thrd_join: -1).
 *
 * TC_COMPARE_WITH_GLIBC: built through pthread_compat.h with libthread_cancel and against the
 * system's glibc alone; both print the same lines. Before the library defined pthread_create,
 * the cancel returned 0 and was only queued: the worker, blocked in the C library's read, never
 * reached a point of ours, and the library's join waited until the program's alarm. */
#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>
#include <unistd.h>
#include "tc_test.h"

int main(void) {
    alarm(60);
    void *lib = dlopen(TC_TEST_LIB, RTLD_NOW | RTLD_LOCAL);
    CHECK(lib != NULL);
    int (*lib_start)(pthread_t *) = (int (*)(pthread_t *))dlsym(lib, "lib_start");
    int (*lib_worker_tid)(void) = (int (*)(void))dlsym(lib, "lib_worker_tid");
    const char *(*lib_join)(void) = (const char *(*)(void))dlsym(lib, "lib_join");
    int (*lib_cleaned)(void) = (int (*)(void))dlsym(lib, "lib_cleaned");
    CHECK(lib_start && lib_worker_tid && lib_join && lib_cleaned);
    pthread_t worker;
    CHECK(lib_start(&worker) == 0);
    int tid;
    while ((tid = lib_worker_tid()) == 0)
        test_usleep(100);
    test_wait_blocked(tid);
    printf("cancel of the library's worker: %d\n", pthread_cancel(worker));
    printf("the library's join: %s\n", lib_join());
    printf("the library's cleanup handler ran: %d time(s)\n", lib_cleaned());
    int (*lib_c11_start)(pthread_t *) = (int (*)(pthread_t *))dlsym(lib, "lib_c11_start");
    int (*lib_c11_worker_tid)(void) = (int (*)(void))dlsym(lib, "lib_c11_worker_tid");
    int (*lib_c11_join)(void) = (int (*)(void))dlsym(lib, "lib_c11_join");
    CHECK(lib_c11_start && lib_c11_worker_tid && lib_c11_join);
    CHECK(lib_c11_start(&worker) == 0);
    while ((tid = lib_c11_worker_tid()) == 0)
        test_usleep(100);
    test_wait_blocked(tid);
    printf("cancel of the library's C11 thread: %d\n", pthread_cancel(worker));
    printf("the library's thrd_join: %d\n", lib_c11_join());
    return 0;
}
