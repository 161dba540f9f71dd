/* R05: a program's own handler on a real-time signal (SIGRTMIN + 7, as the program sees
 * SIGRTMIN) takes nothing from cancellation, as with glibc: installed before the program's
 * first thread (pthread_create then works) or after it (a thread blocked in read is still
 * canceled), the handler runs for the signal, and a thread blocked in read is canceled (join
 * reports PTHREAD_CANCELED, its cleanup handler ran). Each case runs in a child process of its
 * own (a fresh process: no thread yet), which alarm() ends if it hangs.
 *
 * TC_COMPARE_WITH_GLIBC: the runner also builds this against plain glibc; both print the same. */
#include <pthread.h>
#include <signal.h>
#include <sys/wait.h>
#include "tc_test.h"

static int pipefd[2];
static atomic_int tid, cleaned, handled;

static void on_signal(int sig) {
    if (sig == SIGRTMIN + 7) atomic_fetch_add(&handled, 1);
}

static void install(void) {
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_signal;
    sa.sa_flags = SA_RESTART;
    CHECK(sigemptyset(&sa.sa_mask) == 0);
    CHECK(sigaction(SIGRTMIN + 7, &sa, NULL) == 0);
    struct sigaction now;
    CHECK(sigaction(SIGRTMIN + 7, NULL, &now) == 0);
    CHECK(now.sa_handler == on_signal);
}

static void cleanup(void *arg) {
    (void)arg;
    atomic_fetch_add(&cleaned, 1);
}

static void *reader(void *arg) {
    (void)arg;
    char b;
    pthread_cleanup_push(cleanup, NULL);
    atomic_store(&tid, test_gettid());
    read(pipefd[0], &b, 1);
    pthread_cleanup_pop(0);
    return NULL; /* only if read returned: reported as "not canceled" */
}

static void *nothing(void *arg) {
    return arg;
}

/* Raises the signal; whether the handler ran for it. */
static int handler_runs(void) {
    int before = atomic_load(&handled);
    CHECK(raise(SIGRTMIN + 7) == 0);
    return atomic_load(&handled) == before + 1;
}

/* Cancels a thread blocked in read; whether it was canceled and its cleanup handler ran. */
static int read_canceled(void) {
    atomic_store(&tid, 0);
    int before = atomic_load(&cleaned);
    pthread_t t;
    CHECK(pthread_create(&t, NULL, reader, NULL) == 0);
    test_wait_ge(&tid, 1);
    test_wait_blocked(atomic_load(&tid));
    CHECK(pthread_cancel(t) == 0);
    void *ret;
    CHECK(pthread_join(t, &ret) == 0);
    return ret == PTHREAD_CANCELED && atomic_load(&cleaned) == before + 1;
}

static void report(const char *what, int handler, int canceled) {
    printf("%s: the handler runs: %s; a thread blocked in read: %s\n", what,
           handler ? "yes" : "NO", canceled ? "canceled, its cleanup handler ran" : "NOT canceled");
}

/* Child: the handler installed before the first thread. */
static int before_first_thread(void) {
    install();
    int h = handler_runs();
    int c = read_canceled();
    h = h && handler_runs();
    report("handler installed before the first thread", h, c);
    return h && c;
}

/* Child: the handler installed once a thread has run (and another is blocked in read). */
static int after_first_thread(void) {
    pthread_t t;
    CHECK(pthread_create(&t, NULL, nothing, NULL) == 0);
    CHECK(pthread_join(t, NULL) == 0);
    install();
    int h = handler_runs();
    int c = read_canceled();
    h = h && handler_runs();
    report("handler installed after the first thread", h, c);
    return h && c;
}

/* Runs `f` in a child process; whether it exited with 0 (else its end is printed). */
static int in_child(const char *name, int (*f)(void)) {
    fflush(stdout);
    pid_t pid = fork();
    CHECK(pid >= 0);
    if (pid == 0) {
        alarm(20);
        exit(f() ? 0 : 1);
    }
    int status;
    CHECK(waitpid(pid, &status, 0) == pid);
    if (WIFEXITED(status) && WEXITSTATUS(status) == 0) return 1;
    if (WIFSIGNALED(status))
        printf("%s: the child was killed by signal %d\n", name, WTERMSIG(status));
    else
        printf("%s: the child exited with %d\n", name, WEXITSTATUS(status));
    return 0;
}

int main(void) {
    alarm(60); /* a hang ends the program: reported as a failure by the runner */
    CHECK(pipe(pipefd) == 0);
    int ok = in_child("handler installed before the first thread", before_first_thread);
    ok &= in_child("handler installed after the first thread", after_first_thread);
    return ok ? 0 : 1;
}
