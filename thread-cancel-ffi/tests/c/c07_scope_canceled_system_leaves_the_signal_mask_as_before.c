/* C07 (with C01: the thread is left as it was before the run): system() blocks SIGCHLD in the
 * calling thread while the shell runs, and ignores SIGINT and SIGQUIT; a scope's cancel that
 * stops a system() inside tc_scope_run leaves the thread's signal mask and those actions as
 * they were before the call, and no shell behind. Before the fix the canceled system() left
 * SIGCHLD blocked in the thread that went on ("SIGCHLD blocked after the run: 1"). */
#include <pthread.h>
#include <signal.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <thread_cancel.h>
#include "tc_test.h"

static tc_scope_t *scope;
static atomic_int started;

static void *run_system(void *arg) {
    (void)arg;
    atomic_store(&started, 1);
    (void)system("exec sleep 100");
    return (void *)1;
}

static int sigchld_blocked(void) {
    sigset_t now;
    CHECK(pthread_sigmask(SIG_BLOCK, NULL, &now) == 0);
    return sigismember(&now, SIGCHLD);
}

static int ignored(int sig) {
    struct sigaction sa;
    CHECK(sigaction(sig, NULL, &sa) == 0);
    return sa.sa_handler == SIG_IGN;
}

static void *worker(void *arg) {
    (void)arg;
    int before = sigchld_blocked();
    /* As before the call, not "not ignored": a shell starts background jobs with SIGINT and
     * SIGQUIT ignored, and the program inherits that. */
    int intr_before = ignored(SIGINT), quit_before = ignored(SIGQUIT);
    void *result = NULL;
    int rc = tc_scope_run(scope, run_system, NULL, &result);
    printf("tc_scope_run: %s\n", rc == TC_SCOPE_CANCELED ? "TC_SCOPE_CANCELED" : "returned");
    printf("SIGCHLD blocked before the run: %d, after the run: %d\n", before, sigchld_blocked());
    printf("SIGINT and SIGQUIT actions as before the run: %d, %d\n",
           ignored(SIGINT) == intr_before, ignored(SIGQUIT) == quit_before);
    CHECK(rc == TC_SCOPE_CANCELED && sigchld_blocked() == before);
    CHECK(ignored(SIGINT) == intr_before && ignored(SIGQUIT) == quit_before);
    return NULL;
}

int main(void) {
    alarm(60);
    /* Start from the default actions, whatever the program inherited. */
    signal(SIGINT, SIG_DFL);
    signal(SIGQUIT, SIG_DFL);
    scope = tc_scope_new();
    CHECK(scope != NULL);
    pthread_t t;
    CHECK(pthread_create(&t, NULL, worker, NULL) == 0);
    test_wait_ge(&started, 1);
    test_msleep(100); /* the shell runs, system() waits for it */
    CHECK(tc_scope_cancel(scope) == 0);
    CHECK(pthread_join(t, NULL) == 0);
    /* The canceled call killed and reaped its shell. */
    printf("children left: %s\n", waitpid(-1, NULL, WNOHANG) == -1 && errno == ECHILD ? "none" : "some");
    tc_scope_free(scope);
    return 0;
}
