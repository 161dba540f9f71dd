/* R18: a thread that has ended but is not yet joined still has a valid id
 * (POSIX ties the id's lifetime to join or detach): pthread_cancel returns 0 and does nothing,
 * pthread_kill returns 0 and sends nothing (glibc >= 2.34), and join then reports the value
 * the thread returned (or passed to pthread_exit), not PTHREAD_CANCELED. Only once the id's
 * lifetime has ended (joined, or detached and ended) are the calls ESRCH (checked here through
 * the header only: with glibc such an id is undefined behaviour).
 *
 * TC_COMPARE_WITH_GLIBC: the runner also builds this against plain glibc; both print the same. */
#include <pthread.h>
#include <signal.h>
#include "tc_test.h"

static atomic_int tid, usr1;

static void on_usr1(int sig) {
    (void)sig;
    atomic_fetch_add(&usr1, 1);
}

static void *returns(void *arg) {
    atomic_store(&tid, test_gettid());
    return arg;
}

static void *exits(void *arg) {
    atomic_store(&tid, test_gettid());
    pthread_exit(arg);
}

/* Waits until the thread whose kernel id was published has left the kernel's task list. */
static void wait_gone(void) {
    while (atomic_load(&tid) == 0) test_usleep(100);
    while (test_thread_state(atomic_load(&tid)) != '?') test_usleep(200);
    atomic_store(&tid, 0);
}

static void check_ended_unjoined(void *(*body)(void *), const char *how) {
    pthread_t t;
    CHECK(pthread_create(&t, NULL, body, (void *)7) == 0);
    wait_gone();
    int c = pthread_cancel(t), k0 = pthread_kill(t, 0), k1 = pthread_kill(t, SIGUSR1);
    int c2 = pthread_cancel(t);
    void *ret = NULL;
    int j = pthread_join(t, &ret);
    printf("%s, not joined: cancel %d, kill(0) %d, kill(SIGUSR1) %d, cancel again %d; join %d, "
           "value %s; SIGUSR1 delivered %d times\n",
           how, c, k0, k1, c2, j, ret == (void *)7 ? "7" : ret == PTHREAD_CANCELED ? "CANCELED" : "?",
           atomic_load(&usr1));
    CHECK(c == 0 && k0 == 0 && k1 == 0 && c2 == 0 && j == 0 && ret == (void *)7);
    CHECK(atomic_load(&usr1) == 0);
#ifndef TC_PLAIN_GLIBC
    /* The id's lifetime has ended with the join. */
    CHECK(pthread_cancel(t) == ESRCH && pthread_kill(t, 0) == ESRCH);
#endif
}

int main(void) {
    alarm(20);
    struct sigaction sa = {.sa_handler = on_usr1};
    CHECK(sigaction(SIGUSR1, &sa, NULL) == 0);
    check_ended_unjoined(returns, "returned");
    check_ended_unjoined(exits, "pthread_exit");
#ifndef TC_PLAIN_GLIBC
    /* Detached and ended: the lifetime has ended. */
    pthread_t t;
    CHECK(pthread_create(&t, NULL, returns, NULL) == 0);
    CHECK(pthread_detach(t) == 0);
    wait_gone();
    CHECK(pthread_cancel(t) == ESRCH && pthread_kill(t, 0) == ESRCH);
#endif
    return 0;
}
