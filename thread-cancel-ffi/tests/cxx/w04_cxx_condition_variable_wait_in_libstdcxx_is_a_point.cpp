/* W04 in C++: a thread blocked in std::condition_variable::wait — whose body is in libstdc++.so,
 * built without the compatibility header, calling the C library's pthread_cond_wait — is
 * canceled as with glibc: joined with PTHREAD_CANCELED, the destructors of its frames run (the
 * std::unique_lock gives the mutex back), its cleanup handler ran. Then the same for
 * wait_for (pthread_cond_clockwait inside libstdc++) and std::this_thread::sleep_for
 * (nanosleep inside libstdc++).
 *
 * TC_COMPARE_WITH_GLIBC: built through pthread_compat.h with libthread_cancel and against the
 * system's glibc alone; both print the same lines. Through the header, before the library
 * defined the C library's blocking functions: "not canceled" (the wait went on until the
 * program's own alarm). */
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <mutex>
#include <thread>
#include <pthread.h>
#include <signal.h>
#include <unistd.h>

#include "../c/tc_test.h"

static std::mutex m;
static std::condition_variable cv;
static std::atomic<int> destructors, handlers, started;
static std::atomic<pid_t> tid;

struct Guard {
    ~Guard() { destructors++; }
};

static void handler(void *) { handlers++; }

enum Call { WAIT, WAIT_FOR, SLEEP_FOR };

static void *waiter(void *arg) {
    Call call = *static_cast<Call *>(arg);
    Guard g;
    pthread_cleanup_push(handler, nullptr);
    tid = test_gettid();
    {
        std::unique_lock<std::mutex> lk(m);
        started = 1;
        switch (call) {
        case WAIT:
            cv.wait(lk, [] { return false; });
            break;
        case WAIT_FOR:
            cv.wait_for(lk, std::chrono::hours(1), [] { return false; });
            break;
        case SLEEP_FOR:
            lk.unlock();
            std::this_thread::sleep_for(std::chrono::hours(1));
            break;
        }
    }
    pthread_cleanup_pop(0);
    return nullptr;
}

static void on_alarm(int) {
    static const char msg[] = "not canceled: the wait went on for 60 s\n";
    (void)!write(1, msg, sizeof msg - 1);
    _exit(1);
}

int main() {
    signal(SIGALRM, on_alarm);
    alarm(60);
    const char *names[] = {"std::condition_variable::wait", "std::condition_variable::wait_for",
                           "std::this_thread::sleep_for"};
    for (Call call : {WAIT, WAIT_FOR, SLEEP_FOR}) {
        destructors = 0;
        handlers = 0;
        started = 0;
        pthread_t t;
        CHECK(pthread_create(&t, nullptr, waiter, &call) == 0);
        test_wait_ge(&started, 1);
        test_wait_blocked(tid);
        CHECK(pthread_cancel(t) == 0);
        void *r = nullptr;
        CHECK(pthread_join(t, &r) == 0);
        bool free_again = m.try_lock();
        if (free_again) m.unlock();
        std::printf("%s: %s, destructors %d, cleanup handler %d, mutex free again %s\n",
                    names[call], r == PTHREAD_CANCELED ? "canceled" : "returned",
                    destructors.load(), handlers.load(), free_again ? "yes" : "no");
        std::fflush(stdout);
    }
    return 0;
}
