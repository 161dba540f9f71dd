/* R24 (sigwaitinfo, sigtimedwait): the si_code they report is glibc's: its wrapper turns the
 * kernel's SI_TKILL (raise, pthread_kill: tgkill) into SI_USER, from this process or another;
 * kill and sigqueue keep SI_USER and SI_QUEUE.
 *
 * TC_COMPARE_WITH_GLIBC: the runner also builds this against plain glibc; both print the same. */
#include <pthread.h>
#include <signal.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>
#include "tc_test.h"

static const char *code(int c) {
    switch (c) {
    case SI_USER: return "SI_USER";
    case SI_TKILL: return "SI_TKILL";
    case SI_QUEUE: return "SI_QUEUE";
    default: return "other";
    }
}

static sigset_t set;

static void show(const char *how, int timed) {
    siginfo_t si;
    int r;
    if (timed) {
        struct timespec ts = {5, 0};
        r = sigtimedwait(&set, &si, &ts);
    } else {
        r = sigwaitinfo(&set, &si);
    }
    printf("%s, %s: signal %s, si_code %s, from this process %d\n", how,
           timed ? "sigtimedwait" : "sigwaitinfo", r == SIGUSR1 ? "SIGUSR1" : "?",
           code(si.si_code), si.si_pid == getpid());
}

int main(void) {
    alarm(60);
    sigemptyset(&set);
    sigaddset(&set, SIGUSR1);
    CHECK(sigprocmask(SIG_BLOCK, &set, NULL) == 0);
    for (int timed = 0; timed < 2; timed++) {
        raise(SIGUSR1);
        show("raise", timed);
        CHECK(pthread_kill(pthread_self(), SIGUSR1) == 0);
        show("pthread_kill", timed);
        kill(getpid(), SIGUSR1);
        show("kill", timed);
        sigqueue(getpid(), SIGUSR1, (union sigval){.sival_int = 1});
        show("sigqueue", timed);
        pid_t me = getpid(), tid = test_gettid();
        pid_t child = fork();
        CHECK(child >= 0);
        if (child == 0) {
            syscall(SYS_tgkill, me, tid, SIGUSR1);
            _exit(0);
        }
        CHECK(waitpid(child, NULL, 0) == child);
        show("tgkill from another process", timed);
    }
    return 0;
}
