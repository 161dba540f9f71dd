/* R19: once a thread acts on a cancellation, cancellation stays disabled: cancellation points
 * inside its cleanup handlers and thread-specific-data destructors do not cancel again, and
 * further requests change nothing.
 *
 * The thread is canceled in read. Its top cleanup handler then calls testcancel, sleep(0),
 * usleep, a poll that times out, a read that blocks until main writes (main cancels again
 * while it is blocked there, then writes), and enables cancellation (ENABLE is reported as
 * the old state, as glibc: acting does not change the state the thread sees; and nothing
 * acts); it runs to its end, and so do the handler below it and a TSD destructor that calls
 * points too. */
#include <poll.h>
#include <pthread.h>
#include <unistd.h>
#include "tc_test.h"

static int block_pipe[2]; /* the thread is canceled in a read of this one */
static int data_pipe[2];  /* the handler reads from this one; main writes while it waits */
static atomic_int ready, handler_blocking, handler_tid;
static atomic_int steps, lower_ran, dtor_steps;
static pthread_key_t key;

static void top_handler(void *arg) {
    (void)arg;
    atomic_store(&steps, 1);
    pthread_testcancel();
    CHECK(sleep(0) == 0);
    CHECK(usleep(1000) == 0);
    struct pollfd p = {.fd = data_pipe[0], .events = POLLIN};
    CHECK(poll(&p, 1, 20) == 0);
    atomic_store(&steps, 2);
    atomic_store(&handler_tid, test_gettid());
    atomic_store(&handler_blocking, 1);
    char b = 0;
    CHECK(read(data_pipe[0], &b, 1) == 1 && b == 'd'); /* blocks; a cancel does not end it */
    atomic_store(&steps, 3);
    int old = -1;
    CHECK(pthread_setcancelstate(PTHREAD_CANCEL_ENABLE, &old) == 0);
    CHECK(old == PTHREAD_CANCEL_ENABLE); /* as glibc: acting does not change the state seen */
    pthread_testcancel();
    CHECK(usleep(100) == 0);
    atomic_store(&steps, 4); /* the end */
}

static void lower_handler(void *arg) {
    (void)arg;
    pthread_testcancel();
    atomic_store(&lower_ran, 1);
}

static void dtor(void *v) {
    (void)v;
    atomic_store(&dtor_steps, 1);
    pthread_testcancel();
    CHECK(usleep(100) == 0);
    CHECK(sleep(0) == 0);
    atomic_store(&dtor_steps, 2);
}

static void *worker(void *arg) {
    (void)arg;
    CHECK(pthread_setspecific(key, &key) == 0);
    pthread_cleanup_push(lower_handler, NULL);
    pthread_cleanup_push(top_handler, NULL);
    atomic_store(&ready, 1);
    char b;
    for (;;) (void)read(block_pipe[0], &b, 1);
    pthread_cleanup_pop(0);
    pthread_cleanup_pop(0);
    return NULL;
}

int main(void) {
    alarm(20);
    CHECK(pipe(block_pipe) == 0);
    CHECK(pipe(data_pipe) == 0);
    CHECK(pthread_key_create(&key, dtor) == 0);
    pthread_t t;
    CHECK(pthread_create(&t, NULL, worker, NULL) == 0);
    test_wait_ge(&ready, 1);
    test_msleep(10);
    CHECK(pthread_cancel(t) == 0);
    test_wait_ge(&handler_blocking, 1);
    test_wait_blocked((pid_t)atomic_load(&handler_tid));
    int rc = pthread_cancel(t); /* the thread is still there, acting: merged, changes nothing */
    CHECK(rc == 0);
    test_msleep(20);
    CHECK(atomic_load(&steps) == 2); /* still blocked in the handler's read */
    CHECK((write)(data_pipe[1], "d", 1) == 1);
    void *ret;
    CHECK(pthread_join(t, &ret) == 0);
    CHECK(ret == PTHREAD_CANCELED);
    if (atomic_load(&steps) != 4 || !atomic_load(&lower_ran) || atomic_load(&dtor_steps) != 2) {
        fprintf(stderr, "handler reached step %d (want 4), lower handler %d, destructor step %d "
                "(want 2)\n", atomic_load(&steps), atomic_load(&lower_ran),
                atomic_load(&dtor_steps));
        return 1;
    }
    (close)(block_pipe[0]);
    (close)(block_pipe[1]);
    (close)(data_pipe[0]);
    (close)(data_pipe[1]);
    printf("ok: handler and destructor ran to their end through 11 points and a second cancel\n");
    return 0;
}
