/* R13: enabling cancellation with a request pending acts at the next cancellation point when
 * the type is DEFERRED (POSIX, Linux), at once when ASYNCHRONOUS. (IRIX's "at once" is, in C,
 * pthread_setcancelstate(ENABLE) followed by pthread_testcancel().)
 *
 *   A: deferred: after enabling, the thread runs on (logs a step); its next point is a read on
 *      an empty pipe that nobody writes to: it acts on entry instead of blocking.
 *   B: deferred, the next point is sem_wait on an empty semaphore: same.
 *   C: asynchronous: enabling acts inside pthread_setcancelstate; nothing after it runs.
 *   D: the "at once" idiom: enable + testcancel acts at the testcancel. */
#include <pthread.h>
#include <semaphore.h>
#include <unistd.h>
#include "tc_test.h"

enum mode { M_READ, M_SEM, M_ASYNC, M_IDIOM };

static int pipefd[2];
static sem_t sem;

struct ctl {
    enum mode mode;
    atomic_int ready, canceled, step, cleaned;
};

static void cleanup(void *arg) {
    atomic_fetch_add(&((struct ctl *)arg)->cleaned, 1);
}

static void *worker(void *arg) {
    struct ctl *c = arg;
    char b;
    CHECK(pthread_setcancelstate(PTHREAD_CANCEL_DISABLE, NULL) == 0);
    if (c->mode == M_ASYNC) CHECK(pthread_setcanceltype(PTHREAD_CANCEL_ASYNCHRONOUS, NULL) == 0);
    pthread_cleanup_push(cleanup, c);
    atomic_store(&c->ready, 1);
    while (!atomic_load(&c->canceled)) {
    }
    pthread_setcancelstate(PTHREAD_CANCEL_ENABLE, NULL);
    atomic_store(&c->step, 1); /* deferred: enabling did not act */
    switch (c->mode) {
    case M_READ: (void)read(pipefd[0], &b, 1); break;
    case M_SEM: (void)sem_wait(&sem); break;
    case M_ASYNC: break;
    case M_IDIOM: pthread_testcancel(); break;
    }
    atomic_store(&c->step, 2);
    pthread_cleanup_pop(0);
    return NULL;
}

int main(void) {
    alarm(20);
    CHECK(pipe(pipefd) == 0);
    CHECK(sem_init(&sem, 0, 0) == 0);
    static const char *names[] = {"read", "sem_wait", "asynchronous", "enable+testcancel"};
    static const int want_step[] = {1, 1, 0, 1};
    for (int m = M_READ; m <= M_IDIOM; m++) {
        struct ctl c = {.mode = (enum mode)m};
        pthread_t t;
        CHECK(pthread_create(&t, NULL, worker, &c) == 0);
        test_wait_ge(&c.ready, 1);
        CHECK(pthread_cancel(t) == 0);
        atomic_store(&c.canceled, 1);
        void *ret;
        CHECK(pthread_join(t, &ret) == 0);
        if (ret != PTHREAD_CANCELED || atomic_load(&c.step) != want_step[m] ||
            atomic_load(&c.cleaned) != 1) {
            fprintf(stderr, "%s: ret %p, step %d (want %d), cleaned %d\n", names[m], ret,
                    atomic_load(&c.step), want_step[m], atomic_load(&c.cleaned));
            exit(1);
        }
    }
    (close)(pipefd[0]);
    (close)(pipefd[1]);
    printf("ok: enable with a request pending: deferred acts at the next point (read, sem_wait, "
           "testcancel), asynchronous at once\n");
    return 0;
}
