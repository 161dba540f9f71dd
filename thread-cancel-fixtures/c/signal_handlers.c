/* Signal handlers as C code installs them (tests `w02_` of thread-cancel/tests/w02_signal_handlers.rs):
 * with the C library's `signal()` (which installs through the C library's hidden sigaction, not
 * the public symbol), and a handler that leaves by siglongjmp. It knows nothing of
 * thread-cancel. */
#define _GNU_SOURCE 1
#include <errno.h>
#include <setjmp.h>
#include <signal.h>
#include <unistd.h>

static int self_pipe = -1;
static volatile sig_atomic_t wrote = 0, write_errno = 0;

/* A self-pipe handler: writes one byte; records the result and errno. */
static void write_one(int sig) {
    (void)sig;
    int saved = errno;
    ssize_t r = write(self_pipe, "x", 1);
    wrote = (sig_atomic_t)r;
    write_errno = r < 0 ? errno : 0;
    errno = saved;
}

/* Installs `write_one` for `sig` with `signal()`, writing to `fd`: the previous handler. */
void (*signal_test_install_with_signal(int sig, int fd))(int) {
    self_pipe = fd;
    return signal(sig, write_one);
}

/* The handler for `sig` as `sigaction` reports it (to check that it is the program's). */
void *signal_test_installed_handler(int sig) {
    struct sigaction old;
    if (sigaction(sig, NULL, &old) != 0)
        return NULL;
    return (void *)old.sa_handler;
}

/* What the last handler call did: the write's result, and its errno (0 on success). */
int signal_test_last_write(int *err) {
    *err = write_errno;
    return wrote;
}

static sigjmp_buf jump;

static void write_one_and_jump(int sig) {
    write_one(sig);
    siglongjmp(jump, 1);
}

/* Installs a handler for `sig` (with sigaction) that writes one byte to `fd` and leaves by
 * siglongjmp, raises `sig` on this thread, and returns once the handler jumped back here:
 * 1 if it did (the write's result and errno through `signal_test_last_write`), -1 if not. */
int signal_test_jump_out_of_a_handler(int sig, int fd) {
    struct sigaction sa = {0};
    self_pipe = fd;
    sa.sa_handler = write_one_and_jump;
    sigemptyset(&sa.sa_mask);
    if (sigaction(sig, &sa, NULL) != 0)
        return -1;
    if (sigsetjmp(jump, 1) == 0) {
        raise(sig);
        return -1;
    }
    return 1;
}
