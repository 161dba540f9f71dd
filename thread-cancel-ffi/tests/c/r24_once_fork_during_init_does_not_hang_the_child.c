/* fork while another thread runs a pthread_once init routine: that thread does not exist in the
 * child, so the child's pthread_once on the same once-control must not wait for it forever; it
 * runs the init routine itself (glibc does the same: the once-control records the process's
 * fork generation). The parent is unaffected: its init routine completes, once. */
#include <pthread.h>
#include <sys/wait.h>
#include "tc_test.h"

static pthread_once_t once = PTHREAD_ONCE_INIT;
static atomic_int in_init, release_init, init_runs;

static void init(void) {
    atomic_fetch_add(&init_runs, 1);
    atomic_store(&in_init, 1);
    test_wait_ge(&release_init, 1); /* no cancellation point */
}

static void *initializer(void *arg) {
    (void)arg;
    CHECK(pthread_once(&once, init) == 0);
    return NULL;
}

int main(void) {
    alarm(20);
    pthread_t t;
    CHECK(pthread_create(&t, NULL, initializer, NULL) == 0);
    test_wait_ge(&in_init, 1);
    pid_t pid = fork();
    CHECK(pid >= 0);
    if (pid == 0) {
        alarm(5); /* a hang ends the child with SIGALRM */
        atomic_store(&release_init, 1); /* init must not wait in the child */
        if (pthread_once(&once, init) != 0) _exit(2);
        if (atomic_load(&init_runs) != 2) _exit(3); /* the parent's call, copied, and ours */
        if (pthread_once(&once, init) != 0 || atomic_load(&init_runs) != 2) _exit(4);
        _exit(0);
    }
    int status;
    CHECK(waitpid(pid, &status, 0) == pid);
    if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
        fprintf(stderr, "child: %s %d\n", WIFEXITED(status) ? "exit" : "signal",
                WIFEXITED(status) ? WEXITSTATUS(status) : WTERMSIG(status));
        return 1;
    }
    atomic_store(&release_init, 1);
    CHECK(pthread_join(t, NULL) == 0);
    CHECK(pthread_once(&once, init) == 0 && atomic_load(&init_runs) == 1);
    printf("ok: the child of a fork during init ran the init routine itself; the parent's ran "
           "once\n");
    return 0;
}
