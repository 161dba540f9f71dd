/* C07 (with C01, C03, C06): a scope's deadline interrupts a blocked call in C.
 *
 * In a thread created by the library: a run of a scope made by tc_scope_new_timeout_ns(200 ms)
 * around a read(2) blocked on an empty pipe (nothing is ever written) returns TC_SCOPE_TIMEDOUT,
 * its cleanup handler ran, and the thread goes on (poll(NULL, 0, 5) returns 0: no EINTR). A
 * child of a scope whose deadline passes times out with it (a child's own longer deadline does
 * not extend its parent's), while a run with a distant deadline whose function returns gives
 * 0 and its value. An inner run's deadline stops only the inner run: the outer one goes on and
 * returns 0. A hang is caught by alarm(); no elapsed time is asserted. */
#include <poll.h>
#include <pthread.h>
#include "tc_test.h"

#define MS 1000000ull

static int fd;
static atomic_int handlers;

static void handler(void *arg) {
    (void)arg;
    atomic_fetch_add(&handlers, 1);
}

static void *blocked_read(void *arg) {
    (void)arg;
    char b;
    pthread_cleanup_push(handler, NULL);
    (void)read(fd, &b, 1);
    pthread_cleanup_pop(0);
    return (void *)1; /* not reached: nothing is ever written */
}

static void *quick(void *arg) {
    return arg;
}

/* Inside an outer run: an inner run with a short deadline, which times out; the outer run's
 * function then goes on and returns 7. */
static void *outer_fn(void *arg) {
    (void)arg;
    tc_scope_t *inner = tc_scope_new_timeout_ns(200 * MS);
    CHECK(inner != NULL);
    int rc = tc_scope_run(inner, blocked_read, NULL, NULL);
    tc_scope_free(inner);
    CHECK(rc == TC_SCOPE_TIMEDOUT);
    return (void *)7;
}

static void *worker(void *arg) {
    (void)arg;
    /* Warm-up: a run of a scope with a distant deadline, so that the first use of scopes and
     * deadlines is done before the short deadlines below start counting. Their runs must start
     * before the deadline passes (else the run reports TC_SCOPE_TIMEDOUT without calling the
     * function, and no handler runs); under user-mode emulation on a loaded machine the first
     * use alone once took longer than 50 ms ("handlers 0" on aarch64 under qemu-user). */
    tc_scope_t *s = tc_scope_new_timeout_ns(3600ull * 1000 * MS);
    CHECK(s != NULL);
    CHECK(tc_scope_run(s, quick, NULL, NULL) == 0);
    tc_scope_free(s);

    /* Its own deadline. The deadlines below leave the run time to start before they pass (a
     * run whose deadline passed before it started calls no function and runs no handler): a
     * 30 ms one was missed once by a loaded machine under ASan ("handlers == 2" failed). */
    s = tc_scope_new_timeout_ns(200 * MS);
    CHECK(s != NULL);
    void *result = (void *)0x55;
    int rc = tc_scope_run(s, blocked_read, NULL, &result);
    if (rc != TC_SCOPE_TIMEDOUT || result != (void *)0x55 || atomic_load(&handlers) != 1) {
        fprintf(stderr, "deadline: rc %d (want %d), result %p, handlers %d (want 1)\n", rc,
                TC_SCOPE_TIMEDOUT, result, atomic_load(&handlers));
        exit(1);
    }
    CHECK(tc_scope_is_canceled(s) == 1);
    tc_scope_free(s);
    CHECK(poll(NULL, 0, 5) == 0);

    /* A parent's deadline, through a child with a longer one of its own. */
    tc_scope_t *parent = tc_scope_new_timeout_ns(200 * MS);
    CHECK(parent != NULL);
    tc_scope_t *child = tc_scope_child(parent);
    CHECK(child != NULL);
    tc_scope_free(parent); /* the child keeps what it needs */
    rc = tc_scope_run(child, blocked_read, NULL, NULL);
    CHECK(rc == TC_SCOPE_TIMEDOUT);
    CHECK(atomic_load(&handlers) == 2);
    tc_scope_free(child);

    /* A distant deadline: the function returns, its value is stored. */
    s = tc_scope_new_timeout_ns(3600ull * 1000 * MS);
    CHECK(s != NULL);
    rc = tc_scope_run(s, quick, (void *)9, &result);
    CHECK(rc == 0 && result == (void *)9);
    tc_scope_free(s);

    /* Nested: the inner deadline stops the inner run only. */
    s = tc_scope_new();
    CHECK(s != NULL);
    rc = tc_scope_run(s, outer_fn, NULL, &result);
    CHECK(rc == 0 && result == (void *)7);
    CHECK(atomic_load(&handlers) == 3);
    CHECK(tc_scope_is_canceled(s) == 0);
    tc_scope_free(s);

    CHECK(poll(NULL, 0, 5) == 0);
    return (void *)42;
}

int main(void) {
    alarm(30);
    int p[2];
    CHECK(pipe(p) == 0);
    fd = p[0];
    pthread_t t;
    CHECK(pthread_create(&t, NULL, worker, NULL) == 0);
    void *ret;
    CHECK(pthread_join(t, &ret) == 0);
    CHECK(ret == (void *)42);
    printf("ok: deadlines (own, a parent's, nested) interrupted blocked reads; handlers ran\n");
    return 0;
}
