/* pthread_attr_setsigmask_np (glibc >= 2.32) gives the new thread its mask, as glibc:
 *   - a thread created with an attribute whose mask blocks SIGUSR1 and SIGRTMIN+1 starts with
 *     them blocked (its creator blocks neither), and pthread_attr_getsigmask_np reads the mask
 *     back;
 *   - a thread created with an attribute without a mask (or a null mask set) starts with its
 *     creator's mask (here SIGUSR2 blocked);
 *   - a thread whose attribute's mask has every bit set (memset, so the library's own cancel
 *     signal too, as glibc's internal ones) can still be canceled in a blocking read: the
 *     cancel signal is never blocked (glibc's pthread_attr_setsigmask_np drops its own).
 * Through the header the attribute's mask used to be ignored: the thread started with its
 * creator's mask ("attribute mask: SIGUSR1 blocked no, SIGRTMIN+1 blocked no, SIGUSR2 blocked
 * yes").
 *
 * TC_COMPARE_WITH_GLIBC: the runner also builds this against plain glibc; both print the same. */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <pthread.h>
#include <signal.h>
#include "tc_test.h"

static const char *yes(int b) {
    return b ? "yes" : "no";
}

static void *report(void *arg) {
    const char *what = arg;
    sigset_t now;
    CHECK(pthread_sigmask(SIG_BLOCK, NULL, &now) == 0);
    printf("%s: SIGUSR1 blocked %s, SIGRTMIN+1 blocked %s, SIGUSR2 blocked %s\n", what,
           yes(sigismember(&now, SIGUSR1)), yes(sigismember(&now, SIGRTMIN + 1)),
           yes(sigismember(&now, SIGUSR2)));
    return NULL;
}

static int fds[2];
static atomic_int reader_tid;

static void *reader(void *arg) {
    (void)arg;
    atomic_store(&reader_tid, test_gettid());
    char c;
    ssize_t n = read(fds[0], &c, 1);
    printf("read returned %zd\n", n); /* not reached */
    return NULL;
}

int main(void) {
    alarm(60);
    sigset_t creator;
    sigemptyset(&creator);
    sigaddset(&creator, SIGUSR2);
    CHECK(pthread_sigmask(SIG_SETMASK, &creator, NULL) == 0);

    pthread_attr_t a;
    pthread_t t;
    sigset_t m, back;
    CHECK(pthread_attr_init(&a) == 0);
    CHECK(pthread_attr_getsigmask_np(&a, &back) == PTHREAD_ATTR_NO_SIGMASK_NP);
    sigemptyset(&m);
    sigaddset(&m, SIGUSR1);
    sigaddset(&m, SIGRTMIN + 1);
    CHECK(pthread_attr_setsigmask_np(&a, &m) == 0);
    CHECK(pthread_attr_getsigmask_np(&a, &back) == 0);
    printf("read back: SIGUSR1 %s, SIGRTMIN+1 %s, SIGUSR2 %s\n", yes(sigismember(&back, SIGUSR1)),
           yes(sigismember(&back, SIGRTMIN + 1)), yes(sigismember(&back, SIGUSR2)));
    CHECK(pthread_create(&t, &a, report, "attribute mask") == 0);
    CHECK(pthread_join(t, NULL) == 0);

    CHECK(pthread_attr_setsigmask_np(&a, NULL) == 0);
    CHECK(pthread_attr_getsigmask_np(&a, &back) == PTHREAD_ATTR_NO_SIGMASK_NP);
    CHECK(pthread_create(&t, &a, report, "mask unset again") == 0);
    CHECK(pthread_join(t, NULL) == 0);
    CHECK(pthread_create(&t, NULL, report, "no attribute") == 0);
    CHECK(pthread_join(t, NULL) == 0);

    /* Every bit set in the attribute's mask: still canceled in read. */
    memset(&m, 0xff, sizeof m);
    CHECK(pthread_attr_setsigmask_np(&a, &m) == 0);
    CHECK(pipe(fds) == 0);
    CHECK(pthread_create(&t, &a, reader, NULL) == 0);
    test_wait_ge(&reader_tid, 1);
    test_wait_blocked(atomic_load(&reader_tid));
    CHECK(pthread_cancel(t) == 0);
    void *r;
    CHECK(pthread_join(t, &r) == 0);
    printf("full attribute mask, blocked in read: %s\n",
           r == PTHREAD_CANCELED ? "canceled" : "not canceled");
    CHECK(pthread_attr_destroy(&a) == 0);
    return 0;
}
