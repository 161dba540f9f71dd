/* R21 after fork: a child forked while the parent has threads running has one thread, its
 * forking one; when that is main and it ends with pthread_exit, the child exits with status 0 at
 * once, as with glibc. (Before, the child kept the parent's count of live threads and main's
 * pthread_exit waited for threads that do not exist in the child, for ever.) Also a child that
 * creates a thread of its own before main's pthread_exit: the child ends when that thread ends.
 * A hung child is killed after 3 s and reported.
 *
 * TC_COMPARE_WITH_GLIBC: the runner also builds this against plain glibc; both print the same. */
#include <pthread.h>
#include <signal.h>
#include <sys/wait.h>
#include "tc_test.h"

static atomic_int release_parent, started;

static void *held(void *a) {
    atomic_fetch_add(&started, 1);
    test_wait_ge(&release_parent, 1);
    return a;
}

static void *child_thread(void *a) {
    test_msleep(50);
    return a;
}

/* Waits for child `p` (3 s at most); returns whether it exited with status 0. */
static int child_ended(pid_t p, const char *what) {
    int st = 0, waited = 0;
    while (waitpid(p, &st, WNOHANG) == 0) {
        test_msleep(10);
        if (++waited == 300) {
            kill(p, SIGKILL);
            waitpid(p, &st, 0);
            printf("%s: the child hung in main's pthread_exit (killed)\n", what);
            return 0;
        }
    }
    printf("%s: the child exited %d with status %d\n", what, WIFEXITED(st), WEXITSTATUS(st));
    return WIFEXITED(st) && WEXITSTATUS(st) == 0;
}

int main(void) {
    alarm(20);
    pthread_t t[2];
    for (int i = 0; i < 2; i++) CHECK(pthread_create(&t[i], NULL, held, NULL) == 0);
    /* The threads are past their start (under AddressSanitizer a starting thread allocates, and
     * a fork while it holds the sanitizer's allocator lock leaves the child's allocator locked:
     * the child's first allocation would hang, whatever the thread library). */
    test_wait_ge(&started, 2);
    test_msleep(10);
    fflush(stdout);

    pid_t p = fork();
    CHECK(p >= 0);
    if (p == 0) pthread_exit(NULL);
    int ok = child_ended(p, "main's pthread_exit, no thread of its own");

    fflush(stdout);
    p = fork();
    CHECK(p >= 0);
    if (p == 0) {
        pthread_t c;
        CHECK(pthread_create(&c, NULL, child_thread, NULL) == 0);
        pthread_exit(NULL);
    }
    ok &= child_ended(p, "main's pthread_exit, a thread of its own");

    atomic_store(&release_parent, 1);
    for (int i = 0; i < 2; i++) CHECK(pthread_join(t[i], NULL) == 0);
    return ok ? 0 : 1;
}
