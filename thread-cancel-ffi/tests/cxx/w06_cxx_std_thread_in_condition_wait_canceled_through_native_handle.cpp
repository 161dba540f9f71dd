/* W06 in C++ (and W04): an std::thread blocked in std::condition_variable::wait (libstdc++'s,
 * which calls the C library's pthread_cond_wait) is canceled with pthread_cancel of its
 * native_handle(): the wait acts with the mutex held again, the destructors of the thread's
 * frames run innermost first (the std::unique_lock's gives the mutex back), and
 * std::thread::join returns. Built through the header, against plain glibc, and — the drop-in
 * case — the plain build run with libthread_cancel.so preloaded (the C++ programs' runner runs
 * all three, and all must print the same lines).
 *
 * TC_COMPARE_WITH_GLIBC */
#include <atomic>
#include <condition_variable>
#include <mutex>
#include <thread>
#include <pthread.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "../c/tc_test.h"

static std::mutex m;
static std::condition_variable cv;
static std::atomic<int> tid;

struct Noisy {
    const char *what;
    ~Noisy() { printf("destructor: %s\n", what); }
};

static void waiter() {
    Noisy outer{"the thread's outer frame"};
    {
        Noisy inner{"the frame holding the lock"};
        std::unique_lock<std::mutex> lock(m);
        tid = (int)syscall(SYS_gettid);
        cv.wait(lock, [] { return false; }); /* canceled here */
    }
    printf("not canceled\n");
}

int main() {
    alarm(30);
    std::thread t(waiter);
    while (tid.load() == 0) usleep(100);
    test_wait_blocked(tid.load());
    /* Printed after the join: the canceled thread's destructors print while it unwinds, so a
     * line printed between the cancel and the join would race with theirs. */
    int rc = pthread_cancel(t.native_handle());
    t.join();
    printf("pthread_cancel(native_handle()): %d\n", rc);
    bool free_again = m.try_lock();
    printf("joined; the mutex is free again: %d\n", free_again);
    if (free_again) m.unlock();
    return 0;
}
