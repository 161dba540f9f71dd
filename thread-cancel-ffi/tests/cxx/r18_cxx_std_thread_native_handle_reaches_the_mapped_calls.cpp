/* R18 in C++: a thread libstdc++ created (std::thread, with the C library's own pthread_create)
 * is reached through its native_handle() by the mapped pthread calls, as with glibc:
 *   - a thread that has run a cancellation point: pthread_setname_np/getname_np, pthread_kill
 *     (signal 0) and pthread_cancel return 0, pthread_equal matches its pthread_self; the
 *     cancel acts at its next point and runs its destructors; std::thread::join returns;
 *   - a thread canceled before it has reached any point: pthread_cancel returns 0, and the
 *     thread acts at its first point, its destructors run;
 *   - a thread canceled that ends without reaching any point: the next threads (which the C
 *     library often gives the same pthread_t) are not canceled.
 *
 * Built twice by the harness (tests/c_programs.rs): through pthread_compat.h with
 * libthread_cancel, and against the system's glibc alone (-DTC_PLAIN_GLIBC); both must print
 * the same lines. */
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <atomic>
#include <thread>

#include "../c/tc_test.h"

static std::atomic<int> destructors, started, go;
static std::atomic<pthread_t> self_of_worker;

struct Counted {
    ~Counted() { destructors++; }
};

static void wait_for(std::atomic<int> &v) {
    while (v.load() == 0) usleep(1000);
}

/* Runs points (usleep) until canceled. */
static void worker() {
    Counted c;
    usleep(1000);
    self_of_worker = pthread_self();
    started = 1;
    for (;;) usleep(1000);
}

/* Reaches its first point only once main has canceled it. */
static void late_worker() {
    while (go.load() == 0) {
    }
    Counted c;
    for (;;) usleep(1000);
}

/* A thread whose cancel failed would never end: its join would hang. */
static void expect_canceled(const char *what, int rc) {
    printf("%s: cancel %d\n", what, rc);
    if (rc != 0) {
        fprintf(stderr, "%s: pthread_cancel failed (%s)\n", what, strerror(rc));
        fflush(stdout);
        _exit(1);
    }
}

/* Returns without any point once main has canceled it. */
static void returns_at_once() {
    while (go.load() == 0) {
    }
}

/* Runs points, then returns. */
static std::atomic<int> completed;
static void runs_points() {
    for (int i = 0; i < 3; i++) usleep(1000);
    completed++;
}

int main() {
    alarm(20);

    std::thread t(worker);
    pthread_t h = t.native_handle();
    wait_for(started);
    int s = pthread_setname_np(h, "cxx-worker");
    char name[16] = {0};
    int g = pthread_getname_np(h, name, sizeof name);
    printf("known thread: setname %d, getname %d \"%s\", kill %d, equal to its self %d\n", s, g,
           name, pthread_kill(h, 0), pthread_equal(h, self_of_worker.load()) != 0);
    expect_canceled("known thread", pthread_cancel(h));
    t.join();
    printf("known thread: joined, %d destructor(s) ran\n", destructors.exchange(0));

    std::thread u(late_worker);
    expect_canceled("thread before its first point", pthread_cancel(u.native_handle()));
    go = 1;
    u.join();
    printf("thread before its first point: joined, %d destructor(s) ran\n", destructors.load());

    go = 0;
    std::thread v(returns_at_once);
    expect_canceled("thread that ends without a point", pthread_cancel(v.native_handle()));
    go = 1;
    v.join();
    for (int i = 0; i < 5; i++) std::thread(runs_points).join();
    printf("thread that ends without a point: joined; of the 5 threads after it %d ran to their "
           "end\n", completed.load());
    return 0;
}
