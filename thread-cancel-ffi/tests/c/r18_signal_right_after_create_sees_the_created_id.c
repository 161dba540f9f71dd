/* R18: a signal sent to a thread right after pthread_create returns runs its handler in that
 * thread with pthread_self() equal to the id pthread_create gave (the Open POSIX test
 * pthread_kill/1-2), and the thread can still be joined afterwards with its value. Before the
 * fix the handler could run before the new thread knew its id: pthread_self() made it a
 * foreign thread's id, and at its end the thread's own slot was freed (join: ESRCH).
 *
 * TC_COMPARE_WITH_GLIBC: the runner also builds this against plain glibc; both print the same. */
#include <pthread.h>
#include <signal.h>
#include "tc_test.h"

static pthread_t expected;
static atomic_int seen, wrong, ready;

static void on_usr2(int sig) {
    (void)sig;
    if (!pthread_equal(pthread_self(), expected)) atomic_fetch_add(&wrong, 1);
    atomic_fetch_add(&seen, 1);
}

static void *body(void *arg) {
    while (!atomic_load(&ready)) test_usleep(50);
    while (atomic_load(&seen) == 0) test_usleep(50);
    return arg;
}

int main(void) {
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_usr2;
    sigemptyset(&sa.sa_mask);
    CHECK(sigaction(SIGUSR2, &sa, NULL) == 0);
    int rounds = 200;
    for (int i = 0; i < rounds; i++) {
        pthread_t t;
        atomic_store(&seen, 0);
        atomic_store(&ready, 0);
        CHECK(pthread_create(&t, NULL, body, (void *)(long)(i + 1)) == 0);
        expected = t;
        atomic_store(&ready, 1);
        CHECK(pthread_kill(t, SIGUSR2) == 0);
        void *v = NULL;
        CHECK(pthread_join(t, &v) == 0);
        CHECK(v == (void *)(long)(i + 1));
    }
    CHECK(atomic_load(&wrong) == 0);
    printf("%d signals sent right after create: every handler saw the created id, every join "
           "got its value\n", rounds);
    return 0;
}
