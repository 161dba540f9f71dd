#define _GNU_SOURCE
/* R18: every glibc call that takes a pthread_t works with the ids the header
 * gives (glibc would get our id as its own and crash): pthread_setname_np / getname_np
 * (ERANGE for a short buffer), pthread_getattr_np (the stack size and detach state asked
 * for), pthread_getschedparam / setschedparam / setschedprio, pthread_getaffinity_np /
 * setaffinity_np, pthread_getcpuclockid (the clock reads), pthread_sigqueue (the value
 * arrives, in that thread); for a created thread and for main's own pthread_self(). Through
 * the header only: a stale or invented id is ESRCH for each of them, never a crash.
 *
 * TC_COMPARE_WITH_GLIBC: the runner also builds this against plain glibc; both print the same. */
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <time.h>
#include "tc_test.h"

static atomic_int release, value, receiver, worker_tid;

static void on_usr1(int sig, siginfo_t *si, void *uc) {
    (void)sig, (void)uc;
    atomic_store(&value, si->si_value.sival_int);
    atomic_store(&receiver, test_gettid());
}

static void *worker(void *arg) {
    atomic_store(&worker_tid, test_gettid());
    test_wait_ge(&release, 1);
    return arg;
}

static void exercise(pthread_t t, pid_t kernel_tid, const char *who, const char *newname) {
    char name[16] = "", tiny[3];
    int sn = pthread_setname_np(t, newname);
    int gn = pthread_getname_np(t, name, sizeof name);
    int gt = pthread_getname_np(t, tiny, sizeof tiny);
    int policy = -1;
    struct sched_param sp = {0};
    int gs = pthread_getschedparam(t, &policy, &sp);
    int ss = pthread_setschedparam(t, policy, &sp);
    int sprio = pthread_setschedprio(t, sp.sched_priority);
    cpu_set_t set;
    CPU_ZERO(&set);
    int ga = pthread_getaffinity_np(t, sizeof set, &set);
    int sa = pthread_setaffinity_np(t, sizeof set, &set);
    clockid_t clock;
    struct timespec ts;
    int gc = pthread_getcpuclockid(t, &clock);
    int readable = gc == 0 && clock_gettime(clock, &ts) == 0;
    atomic_store(&value, 0);
    atomic_store(&receiver, 0);
    int q = pthread_sigqueue(t, SIGUSR1, (union sigval){.sival_int = 42});
    while (q == 0 && atomic_load(&value) == 0) test_usleep(100);
    printf("%s: setname %d, getname %d \"%s\", getname(3 bytes) %s, getschedparam %d "
           "(SCHED_OTHER %d), setschedparam %d, setschedprio %d, getaffinity %d (CPUs > 0: %d), "
           "setaffinity %d, getcpuclockid %d (clock reads: %d), sigqueue %d (value %d, to that "
           "thread: %d)\n",
           who, sn, gn, name, gt == ERANGE ? "ERANGE" : "?", gs, policy == SCHED_OTHER, ss, sprio,
           ga, CPU_COUNT(&set) > 0, sa, gc, readable, q, atomic_load(&value),
           atomic_load(&receiver) == kernel_tid);
}

int main(void) {
    alarm(20);
    struct sigaction sa = {.sa_sigaction = on_usr1, .sa_flags = SA_SIGINFO};
    CHECK(sigaction(SIGUSR1, &sa, NULL) == 0);
    pthread_attr_t a;
    CHECK(pthread_attr_init(&a) == 0);
    CHECK(pthread_attr_setstacksize(&a, 1 << 20) == 0);
    pthread_t t;
    CHECK(pthread_create(&t, &a, worker, NULL) == 0);
    CHECK(pthread_attr_destroy(&a) == 0);
    test_wait_ge(&worker_tid, 1);
    /* The worker takes the signal only if main blocks it. */
    sigset_t usr1;
    sigemptyset(&usr1);
    sigaddset(&usr1, SIGUSR1);
    CHECK(pthread_sigmask(SIG_BLOCK, &usr1, NULL) == 0);
    exercise(t, atomic_load(&worker_tid), "created thread", "worker");
    CHECK(pthread_sigmask(SIG_UNBLOCK, &usr1, NULL) == 0);

    pthread_attr_t got;
    size_t stack = 0;
    int detach = -1;
    int ga = pthread_getattr_np(t, &got);
    CHECK(ga != 0 || (pthread_attr_getstacksize(&got, &stack) == 0 &&
                      pthread_attr_getdetachstate(&got, &detach) == 0 &&
                      pthread_attr_destroy(&got) == 0));
    printf("getattr_np %d: stack size asked for %d, joinable %d\n", ga, stack == 1 << 20,
           detach == PTHREAD_CREATE_JOINABLE);

    exercise(pthread_self(), test_gettid(), "main", "main-thread");
    ga = pthread_getattr_np(pthread_self(), &got);
    CHECK(ga != 0 || pthread_attr_destroy(&got) == 0);
    printf("main: getattr_np %d\n", ga);

    atomic_store(&release, 1);
    CHECK(pthread_join(t, NULL) == 0);
#ifndef TC_PLAIN_GLIBC
    pthread_t stale[] = {t, (pthread_t)0x12345, (pthread_t)0};
    for (int i = 0; i < 3; i++) {
        pthread_t s = stale[i];
        char buf[16];
        int policy;
        struct sched_param sp = {0};
        cpu_set_t set;
        clockid_t clock;
        CHECK(pthread_setname_np(s, "x") == ESRCH);
        CHECK(pthread_getname_np(s, buf, sizeof buf) == ESRCH);
        CHECK(pthread_getattr_np(s, &got) == ESRCH);
        CHECK(pthread_getschedparam(s, &policy, &sp) == ESRCH);
        CHECK(pthread_setschedparam(s, SCHED_OTHER, &sp) == ESRCH);
        CHECK(pthread_setschedprio(s, 0) == ESRCH);
        CHECK(pthread_getaffinity_np(s, sizeof set, &set) == ESRCH);
        CHECK(pthread_setaffinity_np(s, sizeof set, &set) == ESRCH);
        CHECK(pthread_getcpuclockid(s, &clock) == ESRCH);
        CHECK(pthread_sigqueue(s, SIGUSR1, (union sigval){.sival_int = 1}) == ESRCH);
    }
#endif
    return 0;
}
