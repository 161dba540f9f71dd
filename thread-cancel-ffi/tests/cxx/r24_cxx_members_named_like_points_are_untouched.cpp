/* C++ member functions named like the cancellation points the compat header maps (read, write,
 * wait, sleep, close, open, system) are the program's own: with the header's old function-like
 * macros, `obj.read(...)` became `obj.tc_read(...)` (no such member: the program did not
 * compile) and std::condition_variable::wait, std::ostream::write were renamed the same way.
 * The header now redirects the C library's functions by symbol, which leaves members alone.
 *
 * Built twice by the harness (tests/c_programs.rs): through pthread_compat.h with
 * libthread_cancel, and against the system's glibc alone (-DTC_PLAIN_GLIBC); both must print the
 * same lines:
 *   - a struct whose members are read/write/wait/close/open/sleep/system: its members run;
 *   - std::condition_variable::wait and wait_for, std::ostream::write,
 *     std::istream::read, std::this_thread::sleep_for: they behave as on glibc;
 *   - a pointer to member &Device::read and a member called through it. */
#include <string>
#include <iostream>
#include <sstream>
#include <cstdio>
#include <cstdlib>

#include <chrono>
#include <condition_variable>
#include <mutex>
#include <thread>
#include <unistd.h>

#include "../c/tc_test.h"

struct Device {
    std::string log;
    int read(int n) { log += "read "; return n + 1; }
    int write(const char *s, int n) { log += "write "; return (int)std::string(s, n).size(); }
    int wait() { log += "wait "; return 7; }
    int close() { log += "close "; return 0; }
    int open(const char *) { log += "open "; return 3; }
    int sleep(unsigned s) { log += "sleep "; return (int)s; }
    int system(const char *) { log += "system "; return 9; }
};

/* A member whose callers go through a pointer, as device tables in C do. */
struct Ops {
    long (*read)(int, void *, unsigned long);
    long (*write)(int, const void *, unsigned long);
};
static long fake_read(int, void *, unsigned long n) { return (long)n * 2; }
static long fake_write(int, const void *, unsigned long n) { return (long)n * 3; }

int main() {
    alarm(60);
    Device d;
    int r = d.read(1) + d.write("abc", 3) + d.wait() + d.close() + d.open("x") + d.sleep(2) +
            d.system("x");
    Device *p = &d;
    r += p->read(10);
    int (Device::*m)(int) = &Device::read;
    r += (d.*m)(100);
    std::printf("members: %s= %d\n", d.log.c_str(), r);

    Ops ops = {fake_read, fake_write};
    char buf[4];
    const Ops *o = &ops;
    std::printf("function-pointer members: read %ld, write %ld\n", o->read(0, buf, 4),
                o->write(1, buf, 5));

    std::mutex mu;
    std::condition_variable cv;
    bool ready = false;
    std::thread t([&] {
        std::this_thread::sleep_for(std::chrono::milliseconds(20));
        std::lock_guard<std::mutex> g(mu);
        ready = true;
        cv.notify_one();
    });
    {
        std::unique_lock<std::mutex> lk(mu);
        cv.wait(lk, [&] { return ready; });
        std::printf("condition_variable::wait: ready %d\n", (int)ready);
        bool timed_out = !cv.wait_for(lk, std::chrono::milliseconds(30), [] { return false; });
        std::printf("condition_variable::wait_for: timed out %d\n", (int)timed_out);
        std::cv_status s = cv.wait_for(lk, std::chrono::milliseconds(10));
        std::printf("condition_variable::wait_for (no predicate): %s\n",
                    s == std::cv_status::timeout ? "timeout" : "no_timeout");
    }
    t.join();

    std::ostringstream out;
    out.write("hello", 5);
    std::istringstream in("world");
    char w[6] = {0};
    in.read(w, 5);
    std::cout.write("ostream::write\n", 15);
    std::printf("ostream::write %s, istream::read %s\n", out.str().c_str(), w);
    std::cout << std::flush;
    return 0;
}
