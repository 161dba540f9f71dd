/* A C library built for plain glibc that uses its own SIGRTMIN, as such libraries do: loaded by
 * thread-cancel's tests/w05_sigrtmin.rs (a Rust program with `interpose`) with dlopen. The same
 * code as thread-cancel-ffi/tests/c/lib/w05_... for the C programs. */
#define _GNU_SOURCE
#include <signal.h>
#include <stdatomic.h>

static atomic_int got;

static void on_rtmin(int sig) {
    (void)sig;
    atomic_fetch_add(&got, 1);
}

int lib_sigrtmin(void) { return SIGRTMIN; }

int lib_install(void) {
    struct sigaction sa = {0};
    sa.sa_handler = on_rtmin;
    sigemptyset(&sa.sa_mask);
    return sigaction(SIGRTMIN, &sa, NULL);
}

int lib_got(void) { return atomic_load(&got); }
