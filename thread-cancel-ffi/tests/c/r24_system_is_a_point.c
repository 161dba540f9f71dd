/* R24: system() is a cancellation point. A thread runs a shell command that
 * never ends and is canceled while waiting for it: join reports PTHREAD_CANCELED, the cleanup
 * handler ran, and, as glibc does, the shell was killed and reaped (its process id no longer
 * exists); SIGINT's action is the program's again. A system() that is not canceled returns
 * the shell's status.
 *
 * TC_COMPARE_WITH_GLIBC: the runner also builds this against plain glibc; both print the same. */
#include <pthread.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>
#include "tc_test.h"

static atomic_int cleaned;
static char pidfile[64];

static void cleanup(void *arg) {
    (void)arg;
    atomic_fetch_add(&cleaned, 1);
}

static void *runner(void *arg) {
    (void)arg;
    char cmd[300];
    /* The shell writes its process id, then waits for ever (exec: the same process). */
    snprintf(cmd, sizeof cmd, "echo $$ > %s.tmp && mv %s.tmp %s && exec sleep 3600", pidfile,
             pidfile, pidfile);
    pthread_cleanup_push(cleanup, NULL);
    system(cmd);
    pthread_cleanup_pop(0);
    return (void *)1;
}

static void on_int(int sig) {
    (void)sig;
}

int main(void) {
    alarm(60);
    int st = system("exit 3");
    CHECK(WIFEXITED(st) && WEXITSTATUS(st) == 3);
    CHECK(system(NULL) != 0);
    signal(SIGINT, on_int);
    snprintf(pidfile, sizeof pidfile, "/tmp/tc-r24-system-%d", (int)getpid());
    pthread_t t;
    CHECK(pthread_create(&t, NULL, runner, NULL) == 0);
    int shell = 0;
    while (shell <= 0) { /* the shell's pid, once it wrote it */
        test_msleep(5);
        FILE *f = fopen(pidfile, "r");
        if (f) {
            if (fscanf(f, "%d", &shell) != 1) shell = 0;
            fclose(f);
        }
    }
    unlink(pidfile);
    CHECK(kill(shell, 0) == 0); /* running */
    test_msleep(20);
    CHECK(pthread_cancel(t) == 0);
    void *ret;
    CHECK(pthread_join(t, &ret) == 0);
    int gone = kill(shell, 0) == -1 && errno == ESRCH;
    struct sigaction sa;
    sigaction(SIGINT, NULL, &sa);
    printf("system: %s, cleanup handler %s, shell %s, SIGINT action %s\n",
           ret == PTHREAD_CANCELED ? "canceled" : "NOT canceled",
           atomic_load(&cleaned) == 1 ? "ran" : "did not run",
           gone ? "killed and reaped" : "still there",
           sa.sa_handler == on_int ? "restored" : "NOT restored");
    if (!gone) kill(shell, SIGKILL);
    return ret == PTHREAD_CANCELED && atomic_load(&cleaned) == 1 && gone && sa.sa_handler == on_int
               ? 0
               : 1;
}
