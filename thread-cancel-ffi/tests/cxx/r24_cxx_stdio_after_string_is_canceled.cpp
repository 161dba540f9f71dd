/* R24 in C++: stdio is a cancellation point through the compat header also when the program
 * includes <string> and <iostream> first (libstdc++'s <cstdio> #undefs fgets, printf, fread,
 * ...; with the header's old function-like macros, a C++ file that read it called glibc's stdio
 * directly, so a thread blocked in std::fgets was never canceled and pthread_join waited for
 * ever); std::system compiles and runs ('tc_system' is not a member of 'std' with the macros).
 *
 * Built twice by the harness (tests/c_programs.rs): through pthread_compat.h with
 * libthread_cancel, and against the system's glibc alone (-DTC_PLAIN_GLIBC); both must print the
 * same lines:
 *   - a thread blocked in std::fgets on an empty pipe is canceled: joined with
 *     PTHREAD_CANCELED, its cleanup handler and the destructors of its local objects ran
 *     (before the library's points were declared "C-unwind", the forced unwind stopped in the
 *     library's tc_poll frame and the destructors did not run: "destructors 0", glibc 1);
 *   - the same for ::fgets and std::fread;
 *   - std::system("true") returns 0, std::printf prints. */
#include <string>
#include <iostream>
#include <cstdio>
#include <cstdlib>

#include <atomic>
#include <pthread.h>
#include <signal.h>
#include <time.h>
#include <unistd.h>

#include "../c/tc_test.h"

static std::atomic<int> destructors;
static std::atomic<int> handlers;
static std::atomic<int> started;
static FILE *in;

struct Guard {
    ~Guard() { destructors++; }
};

static void handler(void *) { handlers++; }

enum Call { STD_FGETS, GLOBAL_FGETS, STD_FREAD };

static void *reader(void *arg) {
    Call call = *static_cast<Call *>(arg);
    Guard g;
    /* On the heap: a destructor the cancellation skipped would leave it to LeakSanitizer in
     * the sanitized build. */
    std::string s(100, 's');
    char buf[64];
    bool got = false;
    pthread_cleanup_push(handler, nullptr);
    started = 1;
    switch (call) {
    case STD_FGETS:
        got = std::fgets(buf, sizeof buf, in) != nullptr;
        break;
    case GLOBAL_FGETS:
        got = ::fgets(buf, sizeof buf, in) != nullptr;
        break;
    case STD_FREAD:
        got = std::fread(buf, 1, sizeof buf, in) != 0;
        break;
    }
    pthread_cleanup_pop(0);
    return got ? arg : nullptr; /* not reached: the pipe stays empty */
}

static void msleep(long ms) {
    struct timespec ts = {ms / 1000, (ms % 1000) * 1000000L};
    while (nanosleep(&ts, &ts) != 0) {
    }
}

static void one(Call call, const char *name) {
    int p[2];
    CHECK(pipe(p) == 0);
    in = fdopen(p[0], "r");
    CHECK(in != nullptr);
    destructors = 0;
    handlers = 0;
    started = 0;
    pthread_t t;
    CHECK(pthread_create(&t, nullptr, reader, &call) == 0);
    while (!started) msleep(1);
    msleep(100); /* blocked in the call */
    CHECK(pthread_cancel(t) == 0);
    void *ret = nullptr;
    CHECK(pthread_join(t, &ret) == 0);
    std::printf("%s: %s, cleanup handlers %d, destructors %d\n", name,
                ret == PTHREAD_CANCELED ? "PTHREAD_CANCELED" : "returned", handlers.load(),
                destructors.load());
    std::fclose(in);
    close(p[1]);
}

int main() {
    alarm(60); /* a thread never canceled: fail, not hang */
    one(STD_FGETS, "std::fgets");
    one(GLOBAL_FGETS, "::fgets");
    one(STD_FREAD, "std::fread");
    int status = std::system("true");
    std::printf("std::system(\"true\") = %d\n", status);
    std::cout << "iostream still works" << std::endl;
    return 0;
}
