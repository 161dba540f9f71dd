/* A C++ exception thrown by a pthread_once init routine propagates to the caller of
 * pthread_once, as with glibc (POSIX: as if pthread_once had never been called): the once
 * control is left not done, and the next call runs the init routine again. Shown three ways:
 *   - glibc's own tst-once5 shape: the routine throws on the first two calls (each caught by
 *     the caller), runs to its end on the third; a fourth call does not run it;
 *   - a thread waiting in pthread_once while another thread's routine throws: the waiter wakes
 *     and runs the routine itself;
 *   - a thread that caught such an exception, then pushes a cleanup handler and calls
 *     pthread_exit: only its own handler runs (nothing of the abandoned pthread_once is left
 *     on its cleanup list), and a later pthread_once on the same control in it works.
 * Through the header the first throw aborted the process ("panic in a function that cannot
 * unwind").
 *
 * Built twice by the harness (tests/c_programs.rs): through pthread_compat.h with
 * libthread_cancel, and against the system's glibc alone (-DTC_PLAIN_GLIBC); both must print
 * the same lines (TC_COMPARE_WITH_GLIBC). */
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

#include <atomic>

#include "../c/tc_test.h"

struct OnceException {
    int n;
};

static void pause_ms(long ms) {
    struct timespec ts = {ms / 1000, (ms % 1000) * 1000000L};
    while (nanosleep(&ts, &ts) != 0 && errno == EINTR) {
    }
}

/* glibc's tst-once5. */
static pthread_once_t once5 = PTHREAD_ONCE_INIT;
static int niter, ran5;

static void init5() {
    ran5++;
    if (niter < 2) throw OnceException{niter};
}

static void tst_once5() {
    for (niter = 0; niter != 4; ++niter) {
        try {
            int r = pthread_once(&once5, init5);
            printf("call %d: returned %d, the routine has run %d times\n", niter, r, ran5);
        } catch (OnceException &e) {
            printf("call %d: caught the exception of call %d, the routine has run %d times\n",
                   niter, e.n, ran5);
        }
    }
}

/* A waiter woken by another thread's exception. */
static pthread_once_t once_w = PTHREAD_ONCE_INIT;
static std::atomic<int> in_routine, routine_runs, waiter_started;

static void init_w() {
    int run = ++routine_runs;
    if (run == 1) {
        in_routine = 1;
        while (waiter_started.load() == 0) pause_ms(1);
        pause_ms(100); /* the waiter is in pthread_once by now */
        throw OnceException{run};
    }
}

/* Waits until this thread's routine runs, then calls pthread_once on the same control. */
static void *waiter(void *) {
    while (in_routine.load() == 0) pause_ms(1);
    waiter_started = 1;
    int r = pthread_once(&once_w, init_w);
    return (void *)(long)r;
}

static void waiter_runs_it() {
    pthread_t w;
    CHECK(pthread_create(&w, nullptr, waiter, nullptr) == 0);
    int caught = 0;
    try {
        pthread_once(&once_w, init_w);
    } catch (OnceException &e) {
        caught = e.n;
    }
    void *r;
    CHECK(pthread_join(w, &r) == 0);
    printf("waiter: the first routine threw (caught %d), the waiter's pthread_once returned %ld, "
           "the routine ran %d times\n", caught, (long)r, routine_runs.load());
}

/* A thread's cleanup list after the exception. */
static pthread_once_t once_c = PTHREAD_ONCE_INIT;
static std::atomic<int> handler_runs, later_runs;

static void throws() { throw OnceException{7}; }
static void later() { later_runs++; }
static void handler(void *) { handler_runs++; }

static void *after_exception(void *) {
    int caught = 0;
    try {
        pthread_once(&once_c, throws);
    } catch (OnceException &e) {
        caught = e.n;
    }
    CHECK(caught == 7);
    CHECK(pthread_once(&once_c, later) == 0);
    CHECK(pthread_once(&once_c, later) == 0);
    pthread_cleanup_push(handler, nullptr);
    pthread_exit((void *)3);
    pthread_cleanup_pop(0);
    return nullptr;
}

static void cleanup_list_intact() {
    pthread_t t;
    CHECK(pthread_create(&t, nullptr, after_exception, nullptr) == 0);
    void *r;
    CHECK(pthread_join(t, &r) == 0);
    printf("after a caught exception: pthread_once ran the next routine %d times, pthread_exit "
           "ran %d handler(s), exit value %ld\n", later_runs.load(), handler_runs.load(), (long)r);
}

int main() {
    alarm(60);
    setvbuf(stdout, nullptr, _IOLBF, 0);
    tst_once5();
    waiter_runs_it();
    cleanup_list_intact();
    return 0;
}
