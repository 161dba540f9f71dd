/* W04: a thread that a library built without the compatibility header creates (tests/c/lib/ of
 * the same name, TC_PLAIN_LIBRARY: as a distribution's library is built) is the program's to
 * cancel, as on glibc. The library's worker is blocked in read; the program cancels it with
 * the id the library gave it; the library joins it with the C library's pthread_join and gets
 * PTHREAD_CANCELED, its cleanup handler (registered by glibc's macros) run. The same for a C11
 * thread of the library (thrd_create, thrd_join: -1). And a worker of the library that calls back
 * into the program between a cleanup push and its pop: the program's code (pthread_self through
 * the header) makes it a thread of libthread_cancel's there, so the pop (of a handler the C
 * library registered) goes to the C library, the next push to libthread_cancel; canceled in read,
 * only the second handler runs.
 *
 * TC_COMPARE_WITH_GLIBC: built through pthread_compat.h with libthread_cancel and against the
 * system's glibc alone; both print the same lines. The worker has never called the library:
 * its read is the C library's, and so is its cancel (tc_cancel of a system id no thread of the
 * library has is the C library's pthread_cancel). Before, the cancel returned 0 and was only
 * queued for the worker's first call of the header's, which never came: the library's join
 * waited until the program's alarm. */
#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>
#include <unistd.h>
#include "tc_test.h"

static pthread_t seen_self;

/* Called by the library's worker: the program's own code, through the header. */
static void callback(void) { seen_self = pthread_self(); }

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

    int (*lib_callback_start)(pthread_t *, void (*)(void)) =
        (int (*)(pthread_t *, void (*)(void)))dlsym(lib, "lib_callback_start");
    int (*lib_callback_worker_tid)(void) = (int (*)(void))dlsym(lib, "lib_callback_worker_tid");
    const char *(*lib_callback_join)(void) =
        (const char *(*)(void))dlsym(lib, "lib_callback_join");
    int (*lib_first_ran)(void) = (int (*)(void))dlsym(lib, "lib_first_ran");
    int (*lib_second_ran)(void) = (int (*)(void))dlsym(lib, "lib_second_ran");
    CHECK(lib_callback_start && lib_callback_worker_tid && lib_callback_join && lib_first_ran &&
          lib_second_ran);
    CHECK(lib_callback_start(&worker, callback) == 0);
    while ((tid = lib_callback_worker_tid()) == 0)
        test_usleep(100);
    test_wait_blocked(tid);
    /* While the worker lives (after its end, its id is no valid thread id: POSIX leaves the
     * comparison undefined). */
    int same = pthread_equal(seen_self, worker) != 0;
    printf("cancel of the library's worker that called back into the program: %d\n",
           pthread_cancel(worker));
    const char *j = lib_callback_join();
    printf("the library's join: %s; the handler popped after the callback ran %d time(s), the "
           "one pushed after it %d; the callback's pthread_self was the worker: %d\n",
           j, lib_first_ran(), lib_second_ran(), same);
    return 0;
}
