/* W05: every module of the process sees one SIGRTMIN, above the library's cancel signal. A
 * library built without the compatibility header (tests/c/lib/ of the same name,
 * TC_PLAIN_LIBRARY: as a distribution's library is built) reads SIGRTMIN through the C
 * library's __libc_current_sigrtmin, which libthread_cancel defines: it sees the program's
 * SIGRTMIN, installs its handler there, and
 *   - a thread blocked in read is still canceled (the library's handler did not take the
 *     cancel signal);
 *   - raise(SIGRTMIN) from the program reaches the library's handler (not "Real-time signal 1").
 *
 * TC_COMPARE_WITH_GLIBC: built through pthread_compat.h with libthread_cancel and against the
 * system's glibc alone; both print the same lines. Before the library defined
 * __libc_current_sigrtmin, the library saw 34 where the program saw 35: its handler replaced
 * the cancel signal's. */
#include <dlfcn.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <unistd.h>
#include "tc_test.h"

static int fds[2];
static atomic_int started, tid;

static void *reader(void *arg) {
    (void)arg;
    char c;
    atomic_store(&tid, test_gettid());
    atomic_store(&started, 1);
    ssize_t n = read(fds[0], &c, 1);
    return n == 1 ? "read a byte" : "read failed";
}

int main(void) {
    alarm(60);
    void *lib = dlopen(TC_TEST_LIB, RTLD_NOW | RTLD_LOCAL);
    CHECK(lib != NULL);
    int (*lib_sigrtmin)(void) = (int (*)(void))dlsym(lib, "lib_sigrtmin");
    int (*lib_install)(void) = (int (*)(void))dlsym(lib, "lib_install");
    int (*lib_got)(void) = (int (*)(void))dlsym(lib, "lib_got");
    CHECK(lib_sigrtmin && lib_install && lib_got);
    printf("the library's SIGRTMIN is the program's: %s\n",
           lib_sigrtmin() == SIGRTMIN ? "yes" : "no");
    CHECK(lib_install() == 0);
    CHECK(pipe(fds) == 0);
    pthread_t t;
    CHECK(pthread_create(&t, NULL, reader, NULL) == 0);
    test_wait_ge(&started, 1);
    test_wait_blocked(atomic_load(&tid));
    CHECK(pthread_cancel(t) == 0);
    void *r;
    CHECK(pthread_join(t, &r) == 0);
    printf("a thread blocked in read, the library's handler on its SIGRTMIN: %s\n",
           r == PTHREAD_CANCELED ? "canceled" : (char *)r);
    CHECK(raise(SIGRTMIN) == 0);
    printf("raise(SIGRTMIN) reached the library's handler: %d time(s)\n", lib_got());
    return 0;
}
