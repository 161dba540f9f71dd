/* The library half of w05_a_library_built_without_the_header_has_the_programs_sigrtmin.c: a
 * library of the distribution, built without the compatibility header and without
 * libthread_cancel (TC_PLAIN_LIBRARY), that uses its own SIGRTMIN as such libraries do. */
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
