/* R09 for the main thread: a thread that cancels main (blocked in pause(), a cancellation
 * point) and then joins it waits until main has ended and gets PTHREAD_CANCELED; main's cleanup
 * handler has run by then. POSIX allows joining main. And (in a child process) a thread that
 * joins main after main called pthread_exit(value) gets the value. In both, the process exits
 * with status 0 when its last thread ends.
 * TC_COMPARE_WITH_GLIBC */
#include <pthread.h>
#include <sys/wait.h>
#include "tc_test.h"

static pthread_t main_thread;
static pid_t main_tid;
static atomic_int main_blocked, handler_ran;

static void handler(void *arg) {
    (void)arg;
    atomic_store(&handler_ran, 1);
}

static void *cancel_then_join_main(void *arg) {
    (void)arg;
    test_wait_ge(&main_blocked, 1);
    test_wait_blocked(main_tid);
    CHECK(pthread_cancel(main_thread) == 0);
    void *value = NULL;
    CHECK(pthread_join(main_thread, &value) == 0);
    CHECK(atomic_load(&handler_ran));
    printf("joined the canceled main: %s\n", value == PTHREAD_CANCELED ? "PTHREAD_CANCELED" : "?");
    return NULL;
}

static void *join_main(void *arg) {
    (void)arg;
    void *value = NULL;
    CHECK(pthread_join(main_thread, &value) == 0);
    printf("joined main after its pthread_exit: value %ld\n", (long)value);
    return NULL;
}

int main(void) {
    alarm(20);
    main_thread = pthread_self();
    main_tid = test_gettid();
    fflush(stdout);
    pid_t child = fork();
    CHECK(child >= 0);
    if (child == 0) {
        pthread_t t;
        CHECK(pthread_create(&t, NULL, join_main, NULL) == 0);
        pthread_exit((void *)42);
    }
    int status;
    CHECK(waitpid(child, &status, 0) == child);
    CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0);

    pthread_t t;
    CHECK(pthread_create(&t, NULL, cancel_then_join_main, NULL) == 0);
    pthread_cleanup_push(handler, NULL);
    atomic_store(&main_blocked, 1);
    for (;;) pause();
    pthread_cleanup_pop(0);
    return 1;
}
