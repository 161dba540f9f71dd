/* R05: with type DEFERRED a request is acted on only at a cancellation point.
 *
 * Each thread gets a request while it runs code without points; it then calls a series of
 * functions that are not cancellation points (mutexes, condition signal, semaphore post and
 * trywait, malloc, getpid, thread-specific data, the cancel state/type setters, pthread_self,
 * pthread_cancel on another thread, ...) — none acts — and finally enters one cancellation
 * point that would not block, which acts. Where the point has an effect, it had none: a read
 * with data ready leaves the byte in the pipe, a write with room writes nothing. */
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <semaphore.h>
#include <unistd.h>
#include "tc_test.h"

static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t cv = PTHREAD_COND_INITIALIZER;
static sem_t sem;
static pthread_key_t key;
static int pipefd[2];  /* holds one byte 'x' */
static int wpipe[2];   /* empty, room to write */
static int closefd;    /* a descriptor for the close case */
static pthread_t other; /* a thread for the workers to cancel (disabled until the end) */

enum point { P_TESTCANCEL, P_READ, P_WRITE, P_POLL, P_SLEEP0, P_USLEEP, P_NANOSLEEP, P_SEM_WAIT,
             P_COND_TIMEDWAIT, P_CLOSE, P_JOIN, P_COUNT };
static const char *names[P_COUNT] = {"testcancel", "read", "write", "poll", "sleep(0)",
                                     "usleep", "nanosleep", "sem_wait", "cond_timedwait", "close",
                                     "join"};

struct ctl {
    enum point point;
    atomic_int ready, go, cleaned, reached;
    pthread_t finished; /* for P_JOIN: a thread that has already ended */
};

static void cleanup(void *arg) {
    atomic_fetch_add(&((struct ctl *)arg)->cleaned, 1);
}

static void unlock(void *m) {
    CHECK(pthread_mutex_unlock(m) == 0);
}

static void *ended(void *arg) {
    return arg;
}

static atomic_int other_go;

static void *sleeper(void *arg) {
    (void)arg;
    CHECK(pthread_setcancelstate(PTHREAD_CANCEL_DISABLE, NULL) == 0); /* stays alive */
    test_wait_ge(&other_go, 1);
    CHECK(pthread_setcancelstate(PTHREAD_CANCEL_ENABLE, NULL) == 0);
    for (;;) sleep(60);
    return NULL;
}

static void non_points(void) {
    CHECK(pthread_mutex_lock(&mu) == 0);
    CHECK(pthread_cond_signal(&cv) == 0);
    CHECK(pthread_cond_broadcast(&cv) == 0);
    CHECK(pthread_mutex_unlock(&mu) == 0);
    CHECK(pthread_mutex_trylock(&mu) == 0);
    CHECK(pthread_mutex_unlock(&mu) == 0);
    CHECK(sem_post(&sem) == 0);
    CHECK(sem_trywait(&sem) == 0);
    void *p = malloc(100);
    CHECK(p != NULL);
    free(p);
    CHECK(getpid() > 0);
    CHECK(pthread_setspecific(key, &mu) == 0);
    CHECK(pthread_getspecific(key) == &mu);
    CHECK(pthread_setspecific(key, NULL) == 0);
    CHECK(pthread_setcancelstate(PTHREAD_CANCEL_ENABLE, NULL) == 0);
    CHECK(pthread_setcanceltype(PTHREAD_CANCEL_DEFERRED, NULL) == 0);
    CHECK(pthread_equal(pthread_self(), pthread_self()));
    CHECK(pthread_cancel(other) == 0);
    int fl = fcntl(pipefd[0], F_GETFL);
    CHECK(fl >= 0);
    char s[32];
    snprintf(s, sizeof s, "%d", 42);
    CHECK(strcmp(s, "42") == 0);
}

static void *worker(void *arg) {
    struct ctl *c = arg;
    pthread_cleanup_push(cleanup, c);
    atomic_store(&c->ready, 1);
    while (!atomic_load(&c->go)) {
    } /* no point: the request arrives here */
    non_points();
    atomic_store(&c->reached, 1);
    char b;
    struct pollfd pf = {.fd = pipefd[0], .events = POLLIN};
    struct timespec zero = {0, 0};
    switch (c->point) {
    case P_TESTCANCEL: pthread_testcancel(); break;
    case P_READ: (void)read(pipefd[0], &b, 1); break;
    case P_WRITE: (void)write(wpipe[1], "y", 1); break;
    case P_POLL: (void)poll(&pf, 1, 0); break;
    case P_SLEEP0: (void)sleep(0); break;
    case P_USLEEP: (void)usleep(0); break;
    case P_NANOSLEEP: (void)nanosleep(&zero, NULL); break;
    case P_SEM_WAIT: /* the semaphore holds a token: the wait would not block */
        CHECK(sem_post(&sem) == 0);
        (void)sem_wait(&sem);
        break;
    case P_COND_TIMEDWAIT: {
        struct timespec past = {0, 0}; /* already expired */
        CHECK(pthread_mutex_lock(&mu) == 0);
        pthread_cleanup_push(unlock, &mu);
        (void)pthread_cond_timedwait(&cv, &mu, &past);
        pthread_cleanup_pop(1);
        break;
    }
    case P_CLOSE: (void)close(closefd); break;
    case P_JOIN: (void)pthread_join(c->finished, NULL); break;
    case P_COUNT: break;
    }
    atomic_store(&c->reached, 2); /* must not get here */
    pthread_cleanup_pop(0);
    return NULL;
}

int main(void) {
    alarm(20);
    CHECK(sem_init(&sem, 0, 0) == 0);
    CHECK(pthread_key_create(&key, NULL) == 0);
    CHECK(pipe(pipefd) == 0);
    CHECK(pipe(wpipe) == 0);
    CHECK((write)(pipefd[1], "x", 1) == 1);
    CHECK(pthread_create(&other, NULL, sleeper, NULL) == 0);
    for (int i = 0; i < P_COUNT; i++) {
        struct ctl c = {.point = (enum point)i};
        if (i == P_CLOSE) CHECK((closefd = dup(0)) >= 0);
        if (i == P_JOIN) {
            CHECK(pthread_create(&c.finished, NULL, ended, (void *)7) == 0);
        }
        pthread_t t;
        CHECK(pthread_create(&t, NULL, worker, &c) == 0);
        test_wait_ge(&c.ready, 1);
        CHECK(pthread_cancel(t) == 0);
        atomic_store(&c.go, 1);
        void *ret;
        CHECK(pthread_join(t, &ret) == 0);
        if (ret != PTHREAD_CANCELED || atomic_load(&c.reached) != 1 ||
            atomic_load(&c.cleaned) != 1) {
            fprintf(stderr, "%s: ret %p, reached %d, cleaned %d\n", names[i], ret,
                    atomic_load(&c.reached), atomic_load(&c.cleaned));
            exit(1);
        }
        if (i == P_CLOSE) {
            /* close is special: the descriptor was released even though it was canceled */
            CHECK(fcntl(closefd, F_GETFD) == -1 && errno == EBADF);
        }
        if (i == P_JOIN) {
            /* the canceled joiner left the target joinable */
            CHECK(pthread_join(c.finished, &ret) == 0);
            CHECK(ret == (void *)7);
        }
    }
    /* No effect happened: the byte is still in the pipe, nothing was written to the other. */
    CHECK(fcntl(pipefd[0], F_SETFL, O_NONBLOCK) == 0);
    CHECK(fcntl(wpipe[0], F_SETFL, O_NONBLOCK) == 0);
    char b;
    CHECK((read)(pipefd[0], &b, 1) == 1 && b == 'x');
    CHECK((read)(wpipe[0], &b, 1) == -1 && errno == EAGAIN);
    int v = -1;
    CHECK(sem_getvalue(&sem, &v) == 0);
    CHECK(v == 1); /* the canceled sem_wait took nothing */

    atomic_store(&other_go, 1);
    void *ret;
    CHECK(pthread_join(other, &ret) == 0);
    CHECK(ret == PTHREAD_CANCELED);
    (close)(pipefd[0]);
    (close)(pipefd[1]);
    (close)(wpipe[0]);
    (close)(wpipe[1]);
    printf("ok: no act in 20 non-points; acted at %d points entered, with no effect\n", P_COUNT);
    return 0;
}
