/* In a child forked by a thread other than main, the parent's other threads do not exist; the
 * ids the child inherited answer as glibc's (R18, R09):
 *   - pthread_cancel and pthread_kill(..., 0) of the parent's main thread: ESRCH;
 *   - pthread_cancel of another thread of the parent (blocked in read there): 0, nothing
 *     happens (glibc's descriptor of it says it has ended);
 *   - pthread_join of that thread: returns 0 at once, with a NULL value;
 * the child's own id is still the one its parent had for it (pthread_equal), and the parent's
 * thread itself is untouched (canceled afterwards by the parent).
 * Through the header pthread_cancel of the parent's main thread returned 0 and the join waited
 * for ever (the child was ended by its alarm, the parent printed "child exited -1").
 *
 * TC_COMPARE_WITH_GLIBC: the runner also builds this against plain glibc; both print the same. */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <pthread.h>
#include <signal.h>
#include <sys/wait.h>
#include "tc_test.h"

static pthread_t main_id, blocked_id, forker_id;
static int fds[2];
static atomic_int blocked_tid;

static const char *err(int e) {
    return e == 0 ? "0" : e == ESRCH ? "ESRCH" : e == EINVAL ? "EINVAL" : e == EDEADLK ? "EDEADLK" : "another error";
}

static void *blocked(void *arg) {
    (void)arg;
    atomic_store(&blocked_tid, test_gettid());
    char c;
    ssize_t n = read(fds[0], &c, 1);
    (void)n;
    return (void *)5;
}

static void *forker(void *arg) {
    (void)arg;
    fflush(stdout);
    pid_t pid = fork();
    CHECK(pid >= 0);
    if (pid == 0) {
        alarm(10);
        printf("child: pthread_equal(self, the parent's id for it): %d\n",
               pthread_equal(pthread_self(), forker_id));
        printf("child: cancel of the parent's main thread: %s\n", err(pthread_cancel(main_id)));
        printf("child: kill 0 of the parent's main thread: %s\n", err(pthread_kill(main_id, 0)));
        printf("child: cancel of the parent's blocked thread: %s\n", err(pthread_cancel(blocked_id)));
        void *r = (void *)1;
        int e = pthread_join(blocked_id, &r);
        printf("child: join of the parent's blocked thread: %s, value %s\n", err(e),
               r == NULL ? "NULL" : r == (void *)1 ? "unchanged" : r == PTHREAD_CANCELED ? "PTHREAD_CANCELED" : "another");
        fflush(stdout);
        _exit(0);
    }
    int status;
    CHECK(waitpid(pid, &status, 0) == pid);
    printf("parent: child exited %d\n", WIFEXITED(status) ? WEXITSTATUS(status) : -1);
    return NULL;
}

int main(void) {
    alarm(30);
    main_id = pthread_self();
    CHECK(pipe(fds) == 0);
    CHECK(pthread_create(&blocked_id, NULL, blocked, NULL) == 0);
    test_wait_ge(&blocked_tid, 1);
    test_wait_blocked(atomic_load(&blocked_tid));
    CHECK(pthread_create(&forker_id, NULL, forker, NULL) == 0);
    CHECK(pthread_join(forker_id, NULL) == 0);
    CHECK(pthread_cancel(blocked_id) == 0);
    void *r;
    CHECK(pthread_join(blocked_id, &r) == 0);
    printf("parent: the blocked thread %s\n", r == PTHREAD_CANCELED ? "canceled" : "not canceled");
    return 0;
}
