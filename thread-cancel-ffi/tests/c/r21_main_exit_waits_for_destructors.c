/* R21 with R07 and R20: pthread_exit in main ends the process (status 0) only after every
 * created thread has ended, its thread-specific-data destructors included. Checked in a child
 * process: a detached thread's destructor, still running when main exits, reports through a
 * pipe before the process ends. */
#include <pthread.h>
#include <sys/wait.h>
#include <unistd.h>
#include "tc_test.h"

static pthread_key_t key;
static int report;

static void destructor(void *v) {
    (void)v;
    test_msleep(100); /* still running when main calls pthread_exit */
    CHECK((write)(report, "d", 1) == 1);
}

static void *body(void *arg) {
    (void)arg;
    pthread_setspecific(key, (void *)1);
    return NULL;
}

int main(void) {
    alarm(20);
    int p[2];
    CHECK(pipe(p) == 0);
    pid_t child = fork();
    CHECK(child >= 0);
    if (child == 0) {
        (close)(p[0]);
        report = p[1];
        CHECK(pthread_key_create(&key, destructor) == 0);
        pthread_attr_t a;
        pthread_attr_init(&a);
        pthread_attr_setdetachstate(&a, PTHREAD_CREATE_DETACHED);
        pthread_t t;
        CHECK(pthread_create(&t, &a, body, NULL) == 0);
        pthread_exit(NULL);
    }
    (close)(p[1]);
    char c = 0;
    ssize_t n = (read)(p[0], &c, 1);
    int st;
    CHECK((waitpid)(child, &st, 0) == child);
    CHECK(n == 1 && c == 'd');
    CHECK(WIFEXITED(st) && WEXITSTATUS(st) == 0);
    printf("ok: main's pthread_exit waited for a detached thread's destructor, then exit status 0\n");
    return 0;
}
