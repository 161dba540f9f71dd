/* R22 / R05: a cancel that lands while a condition wait is being entered, when the waiter holds
 * the mutex and is not yet queued (a broadcast sent then wakes nobody), still ends the wait;
 * and a thread that cancels while holding the wait's mutex is not blocked by that.
 *
 * The window is made wide on purpose: a shared library preloaded before every other
 * (preload/r22_..., LD_PRELOAD: the test runner builds and preloads it) defines
 * pthread_cond_wait, which the library's condition wait (whose lookup of the C library's
 * definition finds the first after its own object) then calls; when told to, it spins 200 µs
 * with the mutex held before it calls the C library's own wait, as a waiter preempted there
 * would. Against plain glibc, this program defines the symbol itself. 3,000 rounds, three kinds: (a) the cancel is sent inside that window; (b) after
 * a delay of 0 to ~3 µs from the start of the wait; (c) with the mutex held by the canceler
 * across pthread_cancel. The waiter must end canceled each time, its cleanup handler run with
 * the mutex held again.
 *
 * Written for the waker that reads no C-library layout (waits/any.rs: it broadcasts again
 * until the wait returns, from a thread of its own so that a canceler holding the mutex never
 * waits for the waiter). A waker that broadcast once hung in round 0 (kind a). glibc's waker
 * (it reads the mutex's owner) passes it too. */
#include <dlfcn.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <unistd.h>
#include "tc_test.h"

static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t cv = PTHREAD_COND_INITIALIZER;
static atomic_int entering, cleaned_with_mutex;

#ifdef TC_PLAIN_GLIBC
static atomic_int in_window_here, slow_here;
static atomic_int *in_window = &in_window_here, *slow = &slow_here;

/* The C library's wait, reached past this program's definition below. */
static int real_cond_wait(pthread_cond_t *c, pthread_mutex_t *m) {
    static int (*real)(pthread_cond_t *, pthread_mutex_t *);
    if (!real) real = (int (*)(pthread_cond_t *, pthread_mutex_t *))dlsym(RTLD_NEXT, "pthread_cond_wait");
    return real(c, m);
}

int pthread_cond_wait(pthread_cond_t *c, pthread_mutex_t *m) {
    if (atomic_load(slow)) {
        struct timespec t0, t;
        clock_gettime(CLOCK_MONOTONIC, &t0);
        atomic_store(in_window, 1);
        do clock_gettime(CLOCK_MONOTONIC, &t);
        while ((t.tv_sec - t0.tv_sec) * 1000000000L + (t.tv_nsec - t0.tv_nsec) < 200000);
    }
    return real_cond_wait(c, m);
}
#else
/* The preloaded library's flags (it defines them: see the top comment). */
static atomic_int *in_window, *slow;
#endif

static void on_alarm(int sig) {
    (void)sig;
    static const char msg[] = "hang: a canceled condition wait never returned in 60 s\n";
    (write)(2, msg, sizeof msg - 1);
    _exit(1);
}

static void unlock(void *m) {
    /* The mutex is held again when the handler runs: unlocking it succeeds. */
    if (pthread_mutex_unlock(m) == 0) atomic_fetch_add(&cleaned_with_mutex, 1);
}

static void *waiter(void *arg) {
    (void)arg;
    CHECK(pthread_mutex_lock(&mu) == 0);
    pthread_cleanup_push(unlock, &mu);
    atomic_store(&entering, 1);
    /* The library's wait (pthread_cond_wait here names it too; the symbol pthread_cond_wait is
     * this program's, above). */
    for (;;) tc_cond_wait(&cv, &mu); /* the predicate never holds */
    pthread_cleanup_pop(0);
    return NULL;
}

int main(void) {
    signal(SIGALRM, on_alarm);
    alarm(60);
#ifndef TC_PLAIN_GLIBC
    in_window = dlsym(RTLD_DEFAULT, "r22_in_window");
    slow = dlsym(RTLD_DEFAULT, "r22_slow");
    CHECK(in_window && slow); /* the preloaded library is there */
#endif
    const char *env = getenv("R22_ROUNDS");
    int n = env ? atoi(env) : 3000;
    for (int i = 0; i < n; i++) {
        int kind = i % 3;
        atomic_store(&entering, 0);
        atomic_store(in_window, 0);
        atomic_store(slow, kind == 0);
        pthread_t w;
        CHECK(pthread_create(&w, NULL, waiter, NULL) == 0);
        if (kind == 0) {
            while (!atomic_load(in_window)) {
            }
        } else {
            while (!atomic_load(&entering)) {
            }
            for (volatile int s = 0; s < (i / 3 % 128) * 10; s++) {
            }
        }
        if (kind == 2) CHECK(pthread_mutex_lock(&mu) == 0);
        CHECK(pthread_cancel(w) == 0);
        if (kind == 2) CHECK(pthread_mutex_unlock(&mu) == 0);
        void *ret;
        CHECK(pthread_join(w, &ret) == 0);
        if (ret != PTHREAD_CANCELED) {
            fprintf(stderr, "round %d (kind %d): the waiter was not canceled\n", i, kind);
            return 1;
        }
    }
    CHECK(atomic_load(&cleaned_with_mutex) == n);
    printf("ok: %d cancels at the start of a condition wait (a third inside a 200 us window "
           "before the C library queues the waiter, a third with the mutex held by the "
           "canceler): every wait ended, every handler ran with the mutex held\n", n);
    return 0;
}
