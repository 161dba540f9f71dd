/* R05: every real-time signal a program sees, SIGRTMIN to SIGRTMAX, is the program's, as with
 * glibc (whose own signals lie below its SIGRTMIN): it blocks them all and takes each with
 * sigwait, before it creates a thread and after, in main and in another thread; and a thread
 * that inherited that mask, blocked in read, is still canceled (join reports
 * PTHREAD_CANCELED, its cleanup handler ran). Each of them has its default action at the start
 * (no handler of a library's), and the signal just below SIGRTMIN is refused as the C
 * library's own.
 *
 * TC_COMPARE_WITH_GLIBC: the runner also builds this against plain glibc; both print the same.
 * Preloaded (the plain-glibc build given libthread_cancel.so with LD_PRELOAD), the program's
 * signal calls are the library's definitions for the process, which refuse the cancel signal
 * as the header's do: the same lines (before, they were the C library's, which refuse glibc's
 * own signals but not the library's). */
#include <pthread.h>
#include <signal.h>
#include "tc_test.h"

static int pipefd[2];
static atomic_int tid, cleaned, waiter_ready, waiter_took;

/* SIGRTMIN..SIGRTMAX. */
static sigset_t realtime(void) {
    sigset_t rt;
    CHECK(sigemptyset(&rt) == 0);
    for (int s = SIGRTMIN; s <= SIGRTMAX; s++) CHECK(sigaddset(&rt, s) == 0);
    return rt;
}

/* Blocks every real-time signal in the calling thread; checks that the mask holds them all. */
static void block_realtime(void) {
    sigset_t rt = realtime(), now;
    CHECK(pthread_sigmask(SIG_BLOCK, &rt, NULL) == 0);
    CHECK(pthread_sigmask(SIG_SETMASK, NULL, &now) == 0);
    for (int s = SIGRTMIN; s <= SIGRTMAX; s++) CHECK(sigismember(&now, s) == 1);
}

/* Raises each real-time signal in the calling thread (blocked: it stays pending) and takes it
 * back with sigwait; whether every one came back as itself. */
static int raise_and_wait_each(void) {
    sigset_t rt = realtime();
    int same = 0;
    for (int s = SIGRTMIN; s <= SIGRTMAX; s++) {
        CHECK(raise(s) == 0);
        int got = 0;
        CHECK(sigwait(&rt, &got) == 0);
        same += got == s;
    }
    return same == SIGRTMAX - SIGRTMIN + 1;
}

static void cleanup(void *arg) {
    (void)arg;
    atomic_fetch_add(&cleaned, 1);
}

static void *reader(void *arg) {
    (void)arg;
    char b;
    pthread_cleanup_push(cleanup, NULL);
    atomic_store(&tid, test_gettid());
    read(pipefd[0], &b, 1);
    pthread_cleanup_pop(0);
    return NULL; /* only if read returned: reported as "not canceled" */
}

/* Takes each real-time signal, sent to it by main with pthread_kill, with sigwait. */
static void *waiter(void *arg) {
    (void)arg;
    sigset_t rt = realtime();
    atomic_store(&waiter_ready, 1);
    int same = 0;
    for (int s = SIGRTMIN; s <= SIGRTMAX; s++) {
        int got = 0;
        CHECK(sigwait(&rt, &got) == 0);
        same += got == s;
    }
    atomic_store(&waiter_took, same);
    return NULL;
}

/* Whether the signal just below SIGRTMIN is refused as the C library's own (glibc: 33, its
 * SIGSETXID; ours: the cancel signal): sigaction (a query too), signal, sigaddset and sigdelset
 * fail with EINVAL and sigfillset leaves it out. */
static int below_is_the_librarys(void) {
    int s = SIGRTMIN - 1, ok = 1;
    struct sigaction now;
    errno = 0;
    ok &= sigaction(s, NULL, &now) == -1 && errno == EINVAL;
    errno = 0;
    ok &= signal(s, SIG_IGN) == SIG_ERR && errno == EINVAL;
    sigset_t set;
    CHECK(sigemptyset(&set) == 0);
    errno = 0;
    ok &= sigaddset(&set, s) == -1 && errno == EINVAL;
    errno = 0;
    ok &= sigdelset(&set, s) == -1 && errno == EINVAL;
    CHECK(sigfillset(&set) == 0);
    ok &= sigismember(&set, s) == 0 && sigismember(&set, SIGRTMIN) == 1;
    return ok;
}

int main(void) {
    alarm(60); /* a hang ends the program: reported as a failure by the runner */
    CHECK(pipe(pipefd) == 0);

    printf("SIGRTMIN - 1 is the C library's (sigaction, signal, sigaddset, sigdelset: EINVAL; "
           "not in sigfillset): %s\n", below_is_the_librarys() ? "yes" : "NO");

    int dfl = 0;
    for (int s = SIGRTMIN; s <= SIGRTMAX; s++) {
        struct sigaction now;
        dfl += sigaction(s, NULL, &now) == 0 && now.sa_handler == SIG_DFL;
    }
    printf("before any thread: each of SIGRTMIN..SIGRTMAX has its default action: %s\n",
           dfl == SIGRTMAX - SIGRTMIN + 1 ? "yes" : "NO");
    block_realtime();
    printf("before any thread: each of SIGRTMIN..SIGRTMAX blocked, raised and taken by sigwait: "
           "%s\n", raise_and_wait_each() ? "yes" : "NO");
    fflush(stdout);

    /* The reader inherits the mask that blocks every real-time signal. */
    pthread_t t;
    CHECK(pthread_create(&t, NULL, reader, NULL) == 0);
    test_wait_ge(&tid, 1);
    test_wait_blocked(atomic_load(&tid));

    printf("with a thread: each taken by sigwait in main: %s\n",
           raise_and_wait_each() ? "yes" : "NO");
    fflush(stdout);

    pthread_t w;
    CHECK(pthread_create(&w, NULL, waiter, NULL) == 0);
    test_wait_ge(&waiter_ready, 1);
    for (int s = SIGRTMIN; s <= SIGRTMAX; s++) CHECK(pthread_kill(w, s) == 0);
    CHECK(pthread_join(w, NULL) == 0);
    printf("with a thread: each sent with pthread_kill taken by sigwait in another thread: %s\n",
           atomic_load(&waiter_took) == SIGRTMAX - SIGRTMIN + 1 ? "yes" : "NO");

    CHECK(pthread_cancel(t) == 0);
    void *ret;
    CHECK(pthread_join(t, &ret) == 0);
    int ok = ret == PTHREAD_CANCELED && atomic_load(&cleaned) == 1;
    printf("a thread with them all blocked, blocked in read: %s\n",
           ok ? "canceled, its cleanup handler ran" : "NOT canceled");
    return ok ? 0 : 1;
}
