/* R21: while main waits in pthread_exit for the other threads, a thread that
 * calls exit(3) ends the process with status 3 (POSIX; glibc: main's pthread_exit ends only the
 * main thread, the last thread to end calls exit(0), a thread calling exit() ends the process).
 * The race it guards against: the exiting thread's teardown wakes main, which must not then
 * call exit(0) concurrently. An atexit handler that takes a while widens that window. In child
 * processes, R21_ROUNDS times (default 20).
 *
 * TC_COMPARE_WITH_GLIBC: the runner also builds this against plain glibc; both print the same. */
#include <pthread.h>
#include <sys/wait.h>
#include <unistd.h>
#include "tc_test.h"

static void slow_atexit(void) {
    test_msleep(20);
}

static void *exits(void *arg) {
    (void)arg;
    test_msleep(5); /* main is in pthread_exit by now */
    exit(3);
}

int main(void) {
    alarm(120);
    const char *env = getenv("R21_ROUNDS");
    int rounds = env ? atoi(env) : 20, three = 0, other = 0;
    for (int i = 0; i < rounds; i++) {
        fflush(stdout);
        pid_t child = fork();
        CHECK(child >= 0);
        if (child == 0) {
            alarm(10);
            CHECK(atexit(slow_atexit) == 0);
            pthread_t t;
            CHECK(pthread_create(&t, NULL, exits, NULL) == 0);
            pthread_exit(NULL);
        }
        int st;
        CHECK((waitpid)(child, &st, 0) == child);
        if (WIFEXITED(st) && WEXITSTATUS(st) == 3)
            three++;
        else {
            other++;
            fprintf(stderr, "round %d: %s %d\n", i, WIFEXITED(st) ? "exit status" : "signal",
                    WIFEXITED(st) ? WEXITSTATUS(st) : WTERMSIG(st));
        }
    }
    printf("a thread's exit(3) while main is in pthread_exit: every process exited with 3: %s\n",
           other == 0 ? "yes" : "no");
    return other == 0 && three == rounds ? 0 : 1;
}
