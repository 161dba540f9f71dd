/* R07/R21 for pthread_exit in main: main's cleanup handlers run, then its
 * thread-specific-data destructors, and only then does the process wait for the other threads
 * (it ends with status 0 when the last one ends). Here main's destructor releases what a
 * created thread waits for: waiting first would deadlock. Checked in a child process, which
 * reports through a pipe: "h" (main's handler), "d" (main's destructor), "t" (the thread,
 * released), in that order, then exit status 0.
 *
 * TC_COMPARE_WITH_GLIBC: the runner also builds this against plain glibc; both print the same. */
#include <pthread.h>
#include <semaphore.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>
#include "tc_test.h"

static pthread_key_t key;
static sem_t released;
static int report;

static void say(const char *s) {
    CHECK((write)(report, s, 1) == 1);
}

static void handler(void *arg) {
    (void)arg;
    say("h");
}

static void destructor(void *v) {
    (void)v;
    say("d");
    CHECK(sem_post(&released) == 0);
}

static void *waiter(void *arg) {
    (void)arg;
    while (sem_wait(&released) != 0) CHECK(errno == EINTR);
    say("t");
    return NULL;
}

int main(void) {
    int p[2];
    CHECK(pipe(p) == 0);
    pid_t child = fork();
    CHECK(child >= 0);
    if (child == 0) {
        alarm(5); /* a deadlock ends here: the parent sees SIGALRM */
        (close)(p[0]);
        report = p[1];
        CHECK(sem_init(&released, 0, 0) == 0);
        CHECK(pthread_key_create(&key, destructor) == 0);
        CHECK(pthread_setspecific(key, (void *)1) == 0);
        pthread_t t;
        CHECK(pthread_create(&t, NULL, waiter, NULL) == 0);
        pthread_cleanup_push(handler, NULL);
        pthread_exit(NULL);
        pthread_cleanup_pop(0);
    }
    (close)(p[1]);
    alarm(20);
    char got[8] = "";
    size_t n = 0;
    ssize_t r;
    while (n < sizeof got - 1 && (r = (read)(p[0], got + n, sizeof got - 1 - n)) > 0) n += (size_t)r;
    int st;
    CHECK((waitpid)(child, &st, 0) == child);
    if (WIFSIGNALED(st))
        printf("main's pthread_exit: \"%s\", killed by signal %d%s\n", got, WTERMSIG(st),
               WTERMSIG(st) == SIGALRM ? " (deadlock)" : "");
    else
        printf("main's pthread_exit: \"%s\", exit status %d\n", got, WEXITSTATUS(st));
    return strcmp(got, "hdt") == 0 && WIFEXITED(st) && WEXITSTATUS(st) == 0 ? 0 : 1;
}
