/* W05: a C program chooses the cancel signal before main with the environment variable
 * THREAD_CANCEL_SIGNAL (one of the C library's first eight real-time signals), read when the
 * library is loaded, before any constructor can read SIGRTMIN: the program's SIGRTMIN is then
 * the one after it, the chosen signal is the library's (sigaction refuses it, as glibc refuses
 * its own), and a thread blocked in read is canceled. The program runs itself again with the
 * variable set (natively: /proc/self/exe). */
#include <dlfcn.h>
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
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

static void on_sig(int sig) { (void)sig; }

int main(int argc, char **argv) {
    (void)argc;
    alarm(60);
    int (*system_rtmin)(void) = (int (*)(void))dlsym(RTLD_NEXT, "__libc_current_sigrtmin");
    CHECK(system_rtmin != NULL);
    int min = system_rtmin();
    if (!getenv("THREAD_CANCEL_SIGNAL")) {
        char v[16];
        snprintf(v, sizeof v, "%d", min + 2);
        CHECK(setenv("THREAD_CANCEL_SIGNAL", v, 1) == 0);
        execv("/proc/self/exe", argv);
        perror("execv");
        return 1;
    }
    int chosen = atoi(getenv("THREAD_CANCEL_SIGNAL"));
    CHECK(chosen == min + 2);
    CHECK(SIGRTMIN == chosen + 1);
    struct sigaction sa = {0};
    sa.sa_handler = on_sig;
    CHECK(sigaction(chosen, &sa, NULL) == -1 && errno == EINVAL);
    CHECK(sigaction(SIGRTMIN, &sa, NULL) == 0);
    CHECK(pipe(fds) == 0);
    pthread_t t;
    CHECK(pthread_create(&t, NULL, reader, NULL) == 0);
    test_wait_ge(&started, 1);
    test_wait_blocked(atomic_load(&tid));
    CHECK(pthread_cancel(t) == 0);
    void *r;
    CHECK(pthread_join(t, &r) == 0);
    CHECK(r == PTHREAD_CANCELED);
    printf("THREAD_CANCEL_SIGNAL=SIGRTMIN(system)+2: the program's SIGRTMIN is the next, the "
           "chosen signal is refused to the program, a thread blocked in read was canceled\n");
    return 0;
}
