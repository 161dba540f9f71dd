/* R07 in C++: acting on a cancellation (or pthread_exit) unwinds the C++ frames between the
 * point and the thread's start, as glibc does: every destructor runs, and the cleanup handlers
 * of pthread_cleanup_push run interleaved with them, last in first out.
 *
 * Built twice by the harness (tests/c_programs.rs): through pthread_compat.h with
 * libthread_cancel, and against the system's glibc alone (-DTC_PLAIN_GLIBC). Each case prints
 * its event log; the harness requires both builds to print the same lines, and the program
 * checks the order it expects itself:
 *   - a std::lock_guard held across a canceled read, pthread_testcancel, sem_wait and
 *     pthread_cond_wait: its std::mutex is unlocked again (glibc: 1 destructor, ours too);
 *   - objects and cleanup handlers in two frames, nested scopes: the exact LIFO order;
 *   - pthread_exit from a nested frame: the same;
 *   - a catch (...) that rethrows (the cancellation passes through it, as with glibc). */
#include <errno.h>
#include <pthread.h>
#include <semaphore.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include <atomic>
#include <mutex>
#include <string>

#include "../c/tc_test.h"

static std::string log_; /* written by the one worker at a time, read after join */
static std::atomic<int> ready;
static std::atomic<int> destructors;
static int pipefd[2];
static std::mutex m;
static pthread_mutex_t pm = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t cv = PTHREAD_COND_INITIALIZER;
static sem_t sem;

/* The system's nanosleep, named by its symbol: the compat header redirects every reference
 * to `nanosleep` (a call or its address) to tc_nanosleep, a cancellation point. */
extern "C" int sys_nanosleep(const struct timespec *, struct timespec *) __asm__("nanosleep");

/* Sleeps without a cancellation point (the cancel must act where the case says, not here). */
static void msleep(long ms) {
    struct timespec ts = {ms / 1000, (ms % 1000) * 1000000L};
    sys_nanosleep(&ts, NULL);
}

struct Obj {
    char name;
    explicit Obj(char n) : name(n) {}
    ~Obj() {
        log_ += name;
        destructors++;
    }
};

static void handler(void *arg) {
    log_ += *static_cast<const char *>(arg);
}

/* Unlocks a pthread mutex when it goes out of scope. */
struct PmGuard {
    pthread_mutex_t *mu;
    explicit PmGuard(pthread_mutex_t *x) : mu(x) {}
    ~PmGuard() {
        log_ += 'u';
        pthread_mutex_unlock(mu);
    }
};

enum Point { READ, TESTCANCEL, SEM_WAIT, COND_WAIT, EXIT };
static const char *const point_names[] = {"read", "testcancel", "sem_wait", "cond_wait",
                                          "pthread_exit"};

/* Blocks (or exits) at `p` with the cancellation already requested or about to be. */
static void reach(Point p) {
    ready = 1;
    switch (p) {
    case READ: {
        char b;
        for (;;) (void)read(pipefd[0], &b, 1);
    }
    case TESTCANCEL:
        while (ready.load() < 2) msleep(1);
        for (;;) pthread_testcancel();
    case SEM_WAIT:
        for (;;) sem_wait(&sem);
    case COND_WAIT: {
        pthread_mutex_lock(&pm);
        PmGuard g(&pm);
        for (;;) pthread_cond_wait(&cv, &pm);
    }
    case EXIT:
        pthread_exit(NULL);
    }
}

static void inner(Point p) {
    Obj a('a');
    static const char one = '1', two = '2';
    pthread_cleanup_push(handler, (void *)&one);
    Obj b('b');
    pthread_cleanup_push(handler, (void *)&two);
    {
        std::lock_guard<std::mutex> held(m);
        Obj c('c');
        reach(p);
    }
    pthread_cleanup_pop(0);
    pthread_cleanup_pop(0);
}

static void *worker(void *arg) {
    Point p = static_cast<Point>(reinterpret_cast<long>(arg));
    static const char zero = '0';
    Obj x('x');
    pthread_cleanup_push(handler, (void *)&zero);
    try {
        Obj y('y');
        inner(p);
    } catch (...) {
        log_ += '!';
        throw; /* a cancellation must be rethrown */
    }
    pthread_cleanup_pop(0);
    return NULL;
}

static void run(Point p) {
    log_.clear();
    ready = 0;
    destructors = 0;
    pthread_t t;
    CHECK(pthread_create(&t, NULL, worker, reinterpret_cast<void *>(static_cast<long>(p))) == 0);
    while (ready.load() == 0) msleep(1);
    if (p != EXIT) {
        msleep(20); /* usually blocked by now; either way the point acts */
        CHECK(pthread_cancel(t) == 0);
        ready = 2;
    }
    void *ret;
    CHECK(pthread_join(t, &ret) == 0);
    CHECK(ret == (p == EXIT ? NULL : PTHREAD_CANCELED));
    /* The lock_guard's destructor ran: the mutex is free (a skipped destructor leaves it
     * locked, and the next lock() would deadlock). */
    bool free_again = m.try_lock();
    if (free_again) m.unlock();
    printf("%s: %s, %d destructors, mutex %s\n", point_names[p], log_.c_str(), destructors.load(),
           free_again ? "free" : "LOCKED");
    /* Innermost first: c, the lock_guard, handler 2, b, handler 1, a, y, the catch block, then
     * handler 0 and x (the condition wait's guard unlocks first: 'u'). */
    std::string want = std::string(p == COND_WAIT ? "u" : "") + "c2b1ay!0x";
    if (log_ != want || !free_again) {
        fprintf(stderr, "%s: got \"%s\", want \"%s\"; mutex %s\n", point_names[p], log_.c_str(),
                want.c_str(), free_again ? "free" : "still locked");
        exit(1);
    }
}

int main() {
    alarm(30);
    CHECK(pipe(pipefd) == 0);
    CHECK(sem_init(&sem, 0, 0) == 0);
    run(READ);
    run(TESTCANCEL);
    run(SEM_WAIT);
    run(COND_WAIT);
    run(EXIT);
    return 0;
}
