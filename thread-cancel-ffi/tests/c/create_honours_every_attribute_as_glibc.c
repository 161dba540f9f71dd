/* pthread_create honours the whole attribute object, as glibc: the stack size (rounded down to
 * pages: 32 KiB + 1 gives 32768), a stack of the caller's (pthread_attr_setstack: the thread
 * runs on it), the guard size, PTHREAD_EXPLICIT_SCHED with SCHED_FIFO priority 20 (applied to
 * the new thread; PTHREAD_INHERIT_SCHED ignores the attribute's policy), a detached thread's
 * stack size; and what glibc refuses it refuses: a real-time policy without the privilege is
 * EPERM (a child that left root). Each is read back from inside the thread with
 * pthread_getattr_np, pthread_getschedparam and sched_getscheduler.
 *
 * TC_COMPARE_WITH_GLIBC: the runner also builds this against plain glibc; both print the same. */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <pthread.h>
#include <sched.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>
#include "tc_test.h"

struct seen {
    size_t stacksize, guardsize;
    void *stackaddr;
    int on_given_stack, policy, prio, scheduler, detached;
    atomic_int done;
};

static char *given;
static size_t given_size;

static void *look(void *arg) {
    struct seen *s = arg;
    pthread_attr_t a;
    CHECK(pthread_getattr_np(pthread_self(), &a) == 0);
    CHECK(pthread_attr_getstack(&a, &s->stackaddr, &s->stacksize) == 0);
    CHECK(pthread_attr_getguardsize(&a, &s->guardsize) == 0);
    CHECK(pthread_attr_getdetachstate(&a, &s->detached) == 0);
    pthread_attr_destroy(&a);
    char local;
    s->on_given_stack = given && &local >= given && &local < given + given_size;
    struct sched_param sp;
    CHECK(pthread_getschedparam(pthread_self(), &s->policy, &sp) == 0);
    s->prio = sp.sched_priority;
    s->scheduler = sched_getscheduler(0);
    atomic_store(&s->done, 1);
    return NULL;
}

static const char *policy(int p) {
    return p == SCHED_OTHER ? "SCHED_OTHER" : p == SCHED_FIFO ? "SCHED_FIFO" : "other";
}

static int run(const char *what, pthread_attr_t *a, int detached) {
    struct seen s = {0};
    pthread_t t;
    int r = pthread_create(&t, a, look, &s);
    if (r != 0) {
        printf("%s: pthread_create %s\n", what, r == EPERM ? "EPERM" : r == EINVAL ? "EINVAL" : "?");
        return r;
    }
    if (detached) test_wait_ge(&s.done, 1);
    else CHECK(pthread_join(t, NULL) == 0);
    printf("%s: stack size %zu, guard size %zu, detached %d, on the given stack %d, at its "
           "address %d, policy %s priority %d, sched_getscheduler %s\n",
           what, s.stacksize, s.guardsize, s.detached == PTHREAD_CREATE_DETACHED,
           s.on_given_stack, given && (char *)s.stackaddr == given, policy(s.policy), s.prio,
           policy(s.scheduler));
    return 0;
}

int main(void) {
    alarm(60);
    pthread_attr_t a;

    long min = sysconf(_SC_THREAD_STACK_MIN), page = sysconf(_SC_PAGESIZE);
    size_t base = 32768;
    if (min > 0 && (size_t)min > base) base = ((size_t)min + (size_t)page - 1) / (size_t)page * (size_t)page;
    CHECK(pthread_attr_init(&a) == 0);
    CHECK(pthread_attr_setstacksize(&a, base + 1) == 0);
    size_t asked;
    CHECK(pthread_attr_getstacksize(&a, &asked) == 0);
    printf("attribute's stack size after setting base + 1: base %s\n",
           asked == base ? "+ 0" : asked == base + 1 ? "+ 1" : "+ other");
    run("stack size base + 1", &a, 0);
    CHECK(pthread_attr_setstacksize(&a, 256 * 1024) == 0);
    CHECK(pthread_attr_setguardsize(&a, 32 * 1024) == 0);
    run("stack 256 KiB, guard 32 KiB", &a, 0);
    CHECK(pthread_attr_setdetachstate(&a, PTHREAD_CREATE_DETACHED) == 0);
    run("detached, stack 256 KiB, guard 32 KiB", &a, 1);
    pthread_attr_destroy(&a);

    given_size = 1 << 20;
    given = aligned_alloc(65536, given_size);
    CHECK(given);
    CHECK(pthread_attr_init(&a) == 0);
    CHECK(pthread_attr_setstack(&a, given, given_size) == 0);
    run("a stack of the caller's (1 MiB)", &a, 0);
    pthread_attr_destroy(&a);
    free(given);
    given = NULL;

    struct sched_param sp = {.sched_priority = 20};
    CHECK(pthread_attr_init(&a) == 0);
    CHECK(pthread_attr_setschedpolicy(&a, SCHED_FIFO) == 0);
    CHECK(pthread_attr_setschedparam(&a, &sp) == 0);
    run("SCHED_FIFO 20, inherited scheduling", &a, 0);
    CHECK(pthread_attr_setinheritsched(&a, PTHREAD_EXPLICIT_SCHED) == 0);
    int priv = geteuid() == 0;
    if (priv) {
        run("SCHED_FIFO 20, explicit scheduling", &a, 0);
    } else {
        printf("SCHED_FIFO 20, explicit scheduling: skipped (not root)\n");
    }
    fflush(stdout);
    /* Without the privilege: a child that leaves root (and may not raise its real-time limit). */
    pid_t child = fork();
    CHECK(child >= 0);
    if (child == 0) {
        struct rlimit rl = {0, 0};
        setrlimit(RLIMIT_RTPRIO, &rl);
        if (priv && setuid(65534) != 0) _exit(2);
        run("SCHED_FIFO 20, explicit scheduling, not privileged", &a, 0);
        fflush(stdout);
        _exit(0);
    }
    int st;
    CHECK(waitpid(child, &st, 0) == child && WIFEXITED(st) && WEXITSTATUS(st) == 0);
    pthread_attr_destroy(&a);
    return 0;
}
