/* A thread created with the C library's name (as a library built without the header creates
 * it: on glibc libthread_cancel's pthread_create, which adopts it at its start) forks while
 * other such threads are being created and canceled in the parent. In the child, the forking
 * thread is the only one: it creates another such thread blocked in read, cancels it by its
 * system id and joins it with the C library's pthread_join (PTHREAD_CANCELED), then ends. The
 * parent's own threads are canceled and joined as before.
 *
 * TC_COMPARE_WITH_GLIBC: the runner also builds this against plain glibc; both print the same. */
#include <pthread.h>
#include <sys/wait.h>
#include <unistd.h>
#include "tc_test.h"

extern int plain_pthread_create(pthread_t *, const pthread_attr_t *, void *(*)(void *),
                                void *) __asm__("pthread_create");
extern int plain_pthread_join(pthread_t, void **) __asm__("pthread_join");

struct reader {
    int fd;
    atomic_int tid;
};

static void *read_forever(void *arg) {
    struct reader *r = arg;
    char b;
    atomic_store(&r->tid, test_gettid());
    for (;;) (void)read(r->fd, &b, 1);
    return NULL;
}

/* Creates a thread blocked in read with the C library's name, cancels it by its system id and
 * joins it with the C library's join: 1 if joined with PTHREAD_CANCELED. */
static int cancel_a_plain_reader(void) {
    int p[2];
    if (pipe(p) != 0) return 0;
    struct reader r = {.fd = p[0]};
    pthread_t t;
    if (plain_pthread_create(&t, NULL, read_forever, &r) != 0) return 0;
    while (atomic_load(&r.tid) == 0) test_usleep(100);
    test_wait_blocked(atomic_load(&r.tid));
    void *ret = NULL;
    int ok = pthread_cancel(t) == 0 && plain_pthread_join(t, &ret) == 0 && ret == PTHREAD_CANCELED;
    close(p[0]);
    close(p[1]);
    return ok;
}

static atomic_int stop;

/* Creates and cancels plain threads in a loop while the other thread forks. */
static void *churn(void *arg) {
    (void)arg;
    long n = 0;
    while (!atomic_load(&stop)) n += cancel_a_plain_reader();
    return (void *)n;
}

static void *forker(void *arg) {
    (void)arg;
    int status = -1;
    for (int i = 0; i < 20; i++) {
        pid_t pid = fork();
        if (pid == 0) {
            alarm(20);
            _exit(cancel_a_plain_reader() ? 0 : 1);
        }
        if (pid < 0 || waitpid(pid, &status, 0) != pid || !WIFEXITED(status) ||
            WEXITSTATUS(status) != 0)
            return "a child failed";
    }
    return "20 children each canceled a thread";
}

int main(void) {
    alarm(120);
    pthread_t c, f;
    CHECK(plain_pthread_create(&c, NULL, churn, NULL) == 0);
    CHECK(plain_pthread_create(&f, NULL, forker, NULL) == 0);
    void *r;
    CHECK(plain_pthread_join(f, &r) == 0);
    printf("forked from a thread created without the header: %s\n", (char *)r);
    atomic_store(&stop, 1);
    void *n;
    CHECK(plain_pthread_join(c, &n) == 0);
    printf("the parent's threads canceled meanwhile: %s\n", (long)n > 0 ? "yes" : "none");
    return 0;
}
