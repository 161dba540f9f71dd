/* R07 across languages: C++ frames, a C frame with a cleanup handler (r07_cxx_c_frames_
 * interleave.c), and C++ frames again between the canceled point and the thread's start. The
 * unwind runs the inner C++ destructors, then the C frame's handler, then the outer C++
 * destructors and handler: last in first out across the languages, as glibc does. Built and
 * compared with glibc by the harness (tests/c_programs.rs). */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

#include <atomic>
#include <mutex>
#include <string>

#include "../c/tc_test.h"

extern "C" void c_layer(void (*handler)(void *), void *arg, void (*callback)(void));

static std::string log_;
static std::atomic<int> ready;
static int pipefd[2];
static std::mutex inner_m, outer_m;
static bool blocked_in_read;

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
    ~Obj() { log_ += name; }
};

extern "C" void handler(void *arg) {
    log_ += *static_cast<const char *>(arg);
}

extern "C" void callback(void) {
    std::lock_guard<std::mutex> held(inner_m);
    Obj i('i');
    ready = 1;
    if (blocked_in_read) {
        char b;
        for (;;) (void)read(pipefd[0], &b, 1);
    }
    while (ready.load() < 2) msleep(1);
    for (;;) pthread_testcancel();
}

static void *worker(void *) {
    static const char c = 'C', o = 'O';
    std::lock_guard<std::mutex> held(outer_m);
    Obj x('x');
    pthread_cleanup_push(handler, (void *)&o);
    Obj y('y');
    c_layer(handler, (void *)&c, callback);
    pthread_cleanup_pop(0);
    return NULL;
}

static void run(bool in_read) {
    log_.clear();
    ready = 0;
    blocked_in_read = in_read;
    pthread_t t;
    CHECK(pthread_create(&t, NULL, worker, NULL) == 0);
    while (ready.load() == 0) msleep(1);
    msleep(20);
    CHECK(pthread_cancel(t) == 0);
    ready = 2;
    void *ret;
    CHECK(pthread_join(t, &ret) == 0);
    CHECK(ret == PTHREAD_CANCELED);
    bool free_again = inner_m.try_lock() && outer_m.try_lock();
    if (free_again) {
        inner_m.unlock();
        outer_m.unlock();
    }
    const char *where = in_read ? "read" : "testcancel";
    printf("%s: %s, mutexes %s\n", where, log_.c_str(), free_again ? "free" : "LOCKED");
    std::string want = "iCyOx";
    if (log_ != want || !free_again) {
        fprintf(stderr, "%s: got \"%s\", want \"%s\"\n", where, log_.c_str(), want.c_str());
        exit(1);
    }
}

int main() {
    alarm(30);
    CHECK(pipe(pipefd) == 0);
    run(true);
    run(false);
    return 0;
}
