/* R07: acting on a request runs (1) the cleanup handlers, last pushed first, (2) the
 * thread-specific-data destructors of every key with a destructor and a non-null value, (3) the
 * thread ends — join returns only after all of it.
 *
 * Each step appends to an event log (an array with an atomic index); main checks the log after
 * join. A destructor pauses before logging, so a join that returned early would find it
 * missing. A key without a destructor and a key with a NULL value log nothing. Run twice: the
 * thread acts at testcancel, and while blocked in read. */
#include <pthread.h>
#include <unistd.h>
#include "tc_test.h"

enum { H1 = 1, H2, H3, D1, D2 };
static atomic_int log_[16];
static atomic_int nlog;
static pthread_key_t k1, k2, k_nodtor, k_null;
static atomic_int ready;
static int pipefd[2];

static void record(int e) {
    int i = atomic_fetch_add(&nlog, 1);
    if (i < 16) atomic_store(&log_[i], e);
}

static void handler(void *arg) {
    record((int)(long)arg);
}

static void dtor(void *v) {
    test_msleep(20);
    record(*(int *)v);
}

static void dtor_never(void *v) {
    (void)v;
    record(99);
}

static int d1 = D1, d2 = D2;

static void *worker(void *arg) {
    int blocked = (int)(long)arg;
    CHECK(pthread_setspecific(k1, &d1) == 0);
    CHECK(pthread_setspecific(k2, &d2) == 0);
    CHECK(pthread_setspecific(k_nodtor, &d1) == 0);
    CHECK(pthread_setspecific(k_null, NULL) == 0);
    pthread_cleanup_push(handler, (void *)(long)H1);
    pthread_cleanup_push(handler, (void *)(long)H2);
    pthread_cleanup_push(handler, (void *)(long)H3);
    atomic_store(&ready, 1);
    if (blocked) {
        char b;
        for (;;) (void)read(pipefd[0], &b, 1);
    } else {
        test_wait_ge(&ready, 2);
        pthread_testcancel();
    }
    pthread_cleanup_pop(0);
    pthread_cleanup_pop(0);
    pthread_cleanup_pop(0);
    return NULL;
}

static void run(int blocked) {
    atomic_store(&nlog, 0);
    atomic_store(&ready, 0);
    pthread_t t;
    CHECK(pthread_create(&t, NULL, worker, (void *)(long)blocked) == 0);
    test_wait_ge(&ready, 1);
    if (blocked) test_msleep(10);
    CHECK(pthread_cancel(t) == 0);
    atomic_store(&ready, 2);
    void *ret;
    CHECK(pthread_join(t, &ret) == 0);
    CHECK(ret == PTHREAD_CANCELED);
    int n = atomic_load(&nlog);
    int ok = n == 5 && log_[0] == H3 && log_[1] == H2 && log_[2] == H1 &&
             ((log_[3] == D1 && log_[4] == D2) || (log_[3] == D2 && log_[4] == D1));
    if (!ok) {
        fprintf(stderr, "%s: wrong order (%d events):", blocked ? "read" : "testcancel", n);
        for (int i = 0; i < n && i < 16; i++) fprintf(stderr, " %d", log_[i]);
        fprintf(stderr, " (want 3 2 1, then 4 5 in any order)\n");
        exit(1);
    }
}

int main(void) {
    alarm(20);
    CHECK(pipe(pipefd) == 0);
    CHECK(pthread_key_create(&k1, dtor) == 0);
    CHECK(pthread_key_create(&k2, dtor) == 0);
    CHECK(pthread_key_create(&k_nodtor, NULL) == 0);
    CHECK(pthread_key_create(&k_null, dtor_never) == 0);
    run(0);
    run(1);
    (close)(pipefd[0]);
    (close)(pipefd[1]);
    printf("ok: 3 handlers LIFO, then 2 destructors, then join (at testcancel and in read)\n");
    return 0;
}
