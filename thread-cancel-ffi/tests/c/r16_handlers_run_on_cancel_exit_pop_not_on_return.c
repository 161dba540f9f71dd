/* R16: cleanup handlers run on cancellation (all, last pushed first), on pthread_exit (all,
 * last pushed first, also when called from a nested function), and on pop(nonzero); they do
 * not run when the thread returns normally from its start function (its handlers were popped
 * with pop(0) on the way out). pthread_exit in main runs main's handlers too, then the process
 * exits 0 once the other threads have ended (checked in a forked child, whose other thread
 * waits until main's handler has run, then reports and ends). */
#include <pthread.h>
#include <sys/wait.h>
#include <unistd.h>
#include "tc_test.h"

static char trace[64];
static atomic_int ntrace;

static void h(void *arg) {
    int i = atomic_fetch_add(&ntrace, 1);
    if (i < 63) trace[i] = (char)(long)arg;
}

static const char *take_trace(void) {
    trace[atomic_load(&ntrace)] = 0;
    atomic_store(&ntrace, 0);
    return trace;
}

enum how { CANCEL, EXIT, RETURN, POP };
static atomic_int ready;

static void nested_exit(void) {
    pthread_exit((void *)7);
}

static void *worker(void *arg) {
    enum how how = (enum how)(long)arg;
    pthread_cleanup_push(h, (void *)'1');
    pthread_cleanup_push(h, (void *)'2');
    pthread_cleanup_push(h, (void *)'3');
    switch (how) {
    case CANCEL:
        atomic_store(&ready, 1);
        for (;;) pause();
        break;
    case EXIT: nested_exit(); break;
    case RETURN: break;
    case POP: break;
    }
    pthread_cleanup_pop(how == POP);
    pthread_cleanup_pop(how == POP);
    pthread_cleanup_pop(how == POP);
    return (void *)5;
}

static void run(enum how how, void *want_ret, const char *want_trace, const char *name) {
    atomic_store(&ready, 0);
    pthread_t t;
    CHECK(pthread_create(&t, NULL, worker, (void *)(long)how) == 0);
    if (how == CANCEL) {
        test_wait_ge(&ready, 1);
        CHECK(pthread_cancel(t) == 0);
    }
    void *ret;
    CHECK(pthread_join(t, &ret) == 0);
    const char *got = take_trace();
    if (ret != want_ret || strcmp(got, want_trace) != 0) {
        fprintf(stderr, "%s: ret %p (want %p), handlers \"%s\" (want \"%s\")\n", name, ret,
                want_ret, got, want_trace);
        exit(1);
    }
}

static int report_fd;
static atomic_int main_handler_ran;

static void main_handler(void *arg) {
    (void)arg;
    CHECK((write)(report_fd, "H", 1) == 1);
    atomic_store(&main_handler_ran, 1);
}

/* Reports "T" once main's handler has reported "H" (main is then in its pthread_exit), and a
 * moment later, so that the process still has this thread to wait for after main's exit. */
static void *short_lived(void *arg) {
    test_wait_ge(&main_handler_ran, 1);
    test_msleep(50);
    CHECK((write)(report_fd, "T", 1) == 1);
    return arg;
}

/* Forked child: main pushes a handler, starts a thread, and calls pthread_exit. */
static void child_main(void) {
    pthread_t t;
    CHECK(pthread_create(&t, NULL, short_lived, NULL) == 0);
    pthread_cleanup_push(main_handler, NULL);
    pthread_exit(NULL);
    pthread_cleanup_pop(0);
}

int main(void) {
    alarm(20);
    /* Fork first, while this process has a single thread. */
    int p[2];
    CHECK(pipe(p) == 0);
    pid_t pid = fork();
    CHECK(pid >= 0);
    if (pid == 0) {
        (close)(p[0]);
        report_fd = p[1];
        child_main();
        _exit(3); /* not reached */
    }
    (close)(p[1]);

    run(CANCEL, PTHREAD_CANCELED, "321", "cancel");
    run(EXIT, (void *)7, "321", "exit");
    run(POP, (void *)5, "321", "pop(1)");
    run(RETURN, (void *)5, "", "return");

    int status;
    CHECK((waitpid)(pid, &status, 0) == pid);
    char buf[8] = {0};
    ssize_t n = (read)(p[0], buf, sizeof buf - 1);
    (close)(p[0]);
    if (!WIFEXITED(status) || WEXITSTATUS(status) != 0 || n != 2 || strcmp(buf, "HT") != 0) {
        fprintf(stderr, "main's pthread_exit: status %#x, events \"%s\" (want exit 0, \"HT\")\n",
                status, buf);
        return 1;
    }
    printf("ok: handlers LIFO on cancel, exit, pop(1); none on return; main's on pthread_exit\n");
    return 0;
}
