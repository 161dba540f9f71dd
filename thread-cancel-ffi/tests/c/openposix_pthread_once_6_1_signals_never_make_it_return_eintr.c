/* Open POSIX Test Suite, pthread_once 6-1 (our own test of the same assertion): pthread_once
 * never returns EINTR. Two threads send SIGUSR1 and SIGUSR2 (handlers installed, SA_RESTART
 * off) to the process without pause while two workers call pthread_once on fresh once-controls,
 * one running the init routine (which takes a little while) and the other waiting for it, so
 * the signals also interrupt the wait. Every call returns 0 and each init routine runs once. */
#include <pthread.h>
#include <signal.h>
#include "tc_test.h"

#define ROUNDS 2000

static atomic_int stop, handled, bad_rc;
static pthread_once_t onces[ROUNDS];
static atomic_int runs[ROUNDS];
static pthread_barrier_t barrier;

static void on_signal(int sig) {
    (void)sig;
    atomic_fetch_add(&handled, 1);
}

static void *sender(void *arg) {
    int sig = (int)(long)arg;
    sigset_t s;
    sigemptyset(&s);
    sigaddset(&s, SIGUSR1);
    sigaddset(&s, SIGUSR2);
    CHECK(pthread_sigmask(SIG_BLOCK, &s, NULL) == 0);
    while (!atomic_load(&stop)) {
        CHECK(kill(getpid(), sig) == 0);
        test_usleep(20);
    }
    return NULL;
}

static int current;

static void init(void) {
    atomic_fetch_add(&runs[current], 1);
    test_usleep(50); /* let the other worker wait */
}

static void *worker(void *arg) {
    (void)arg;
    for (int i = 0; i < ROUNDS; i++) {
        int rc = pthread_barrier_wait(&barrier);
        if (rc == PTHREAD_BARRIER_SERIAL_THREAD) current = i;
        pthread_barrier_wait(&barrier);
        rc = pthread_once(&onces[i], init);
        if (rc != 0) atomic_store(&bad_rc, rc);
        rc = pthread_once(&onces[i], init);
        if (rc != 0) atomic_store(&bad_rc, rc);
    }
    return NULL;
}

int main(void) {
    alarm(60);
    struct sigaction sa = {.sa_handler = on_signal};
    sigemptyset(&sa.sa_mask);
    CHECK(sigaction(SIGUSR1, &sa, NULL) == 0 && sigaction(SIGUSR2, &sa, NULL) == 0);
    for (int i = 0; i < ROUNDS; i++) onces[i] = (pthread_once_t)PTHREAD_ONCE_INIT;
    CHECK(pthread_barrier_init(&barrier, NULL, 2) == 0);
    pthread_t w[2], s[2];
    for (int i = 0; i < 2; i++) CHECK(pthread_create(&w[i], NULL, worker, NULL) == 0);
    CHECK(pthread_create(&s[0], NULL, sender, (void *)(long)SIGUSR1) == 0);
    CHECK(pthread_create(&s[1], NULL, sender, (void *)(long)SIGUSR2) == 0);
    for (int i = 0; i < 2; i++) CHECK(pthread_join(w[i], NULL) == 0);
    atomic_store(&stop, 1);
    for (int i = 0; i < 2; i++) CHECK(pthread_join(s[i], NULL) == 0);
    if (atomic_load(&bad_rc) != 0) {
        fprintf(stderr, "pthread_once returned %d\n", atomic_load(&bad_rc));
        return 1;
    }
    for (int i = 0; i < ROUNDS; i++) CHECK(atomic_load(&runs[i]) == 1);
    printf("ok: %d once-controls, each initialised once, no EINTR; %d signals handled\n", ROUNDS,
           atomic_load(&handled));
    return 0;
}
