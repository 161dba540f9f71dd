/* pthread_once through the compat header: an init routine that is canceled (or calls
 * pthread_exit) leaves the once-control as if pthread_once had never been called, so the next
 * pthread_once on it runs an init routine again; threads already waiting in pthread_once on it
 * are woken and one of them runs it (POSIX; glibc does the same). It used to stay "in progress"
 * forever: every later pthread_once on it hung.
 *   - canceled at a blocking point (read) inside init, with waiters blocked in pthread_once;
 *     the init routine's own cleanup handler runs first, then the once-control is reset;
 *   - canceled asynchronously in a compute loop inside init;
 *   - pthread_exit inside init (its value is what pthread_join reports);
 *   - nested: an init routine canceled inside the init routine of another once-control resets
 *     both;
 *   - a race: 4 threads call pthread_once, 1 to 4 of them are canceled; each request lands
 *     before, during or after an init routine, or while its thread waits (where it waits for
 *     the next point); every once-control ends up initialized exactly once, by the threads or
 *     by main's call after them (THREAD_CANCEL_STRESS rounds, default 300; half of them with
 *     the asynchronous type, where only "no hang, at least once" holds: see race()). */
#include <pthread.h>
#include "tc_test.h"

#define WAITERS 3

static int pipe_fds[2]; /* never written: a read on it blocks */
static atomic_int entered, completed, handler_ran, handler_after_reset;
static pthread_once_t once_a = PTHREAD_ONCE_INIT;

static void handler(void *arg) {
    (void)arg;
    /* The init routine's own handler runs before the once-control is reset (last pushed first):
     * no other thread can have run the init routine yet. */
    if (atomic_load(&completed) != 0) atomic_store(&handler_after_reset, 1);
    atomic_store(&handler_ran, 1);
}

/* The first call blocks in read (a cancellation point); later calls complete. */
static void init_blocks_first(void) {
    if (atomic_fetch_add(&entered, 1) == 0) {
        char c;
        pthread_cleanup_push(handler, NULL);
        (void)read(pipe_fds[0], &c, 1);
        pthread_cleanup_pop(0);
        CHECK(!"read returned");
    }
    atomic_fetch_add(&completed, 1);
}

static void *call_once_a(void *arg) {
    (void)arg;
    CHECK(pthread_once(&once_a, init_blocks_first) == 0);
    return (void *)1;
}

struct waiter {
    pthread_t t;
    atomic_int tid;
};

static void *waiter_main(void *arg) {
    struct waiter *w = arg;
    atomic_store(&w->tid, test_gettid());
    return call_once_a(NULL);
}

static void canceled_at_a_point_with_waiters(void) {
    CHECK(pipe(pipe_fds) == 0);
    pthread_t t;
    CHECK(pthread_create(&t, NULL, call_once_a, NULL) == 0);
    test_wait_ge(&entered, 1);
    struct waiter w[WAITERS];
    for (int i = 0; i < WAITERS; i++) {
        atomic_store(&w[i].tid, 0);
        CHECK(pthread_create(&w[i].t, NULL, waiter_main, &w[i]) == 0);
    }
    for (int i = 0; i < WAITERS; i++) {
        while (atomic_load(&w[i].tid) == 0) test_usleep(100);
        test_wait_blocked(atomic_load(&w[i].tid)); /* waiting in pthread_once */
    }
    CHECK(atomic_load(&entered) == 1);
    CHECK(pthread_cancel(t) == 0);
    void *ret;
    CHECK(pthread_join(t, &ret) == 0 && ret == PTHREAD_CANCELED);
    CHECK(atomic_load(&handler_ran) && !atomic_load(&handler_after_reset));
    for (int i = 0; i < WAITERS; i++) CHECK(pthread_join(w[i].t, &ret) == 0 && ret == (void *)1);
    CHECK(atomic_load(&entered) == 2 && atomic_load(&completed) == 1);
    CHECK(pthread_once(&once_a, init_blocks_first) == 0); /* done: not run again */
    CHECK(atomic_load(&entered) == 2);
}

static pthread_once_t once_b = PTHREAD_ONCE_INIT;
static atomic_int b_runs, b_spinning;

static void init_spins_first(void) {
    if (atomic_fetch_add(&b_runs, 1) == 0) {
        atomic_store(&b_spinning, 1);
        for (;;) { /* no cancellation point: only an asynchronous request ends this */
        }
    }
}

static void *async_once_b(void *arg) {
    (void)arg;
    CHECK(pthread_setcanceltype(PTHREAD_CANCEL_ASYNCHRONOUS, NULL) == 0);
    pthread_once(&once_b, init_spins_first);
    return NULL;
}

static void canceled_asynchronously(void) {
    pthread_t t;
    CHECK(pthread_create(&t, NULL, async_once_b, NULL) == 0);
    test_wait_ge(&b_spinning, 1);
    CHECK(pthread_cancel(t) == 0);
    void *ret;
    CHECK(pthread_join(t, &ret) == 0 && ret == PTHREAD_CANCELED);
    CHECK(pthread_once(&once_b, init_spins_first) == 0);
    CHECK(atomic_load(&b_runs) == 2);
}

static pthread_once_t once_c = PTHREAD_ONCE_INIT;
static atomic_int c_runs;

static void init_exits_first(void) {
    if (atomic_fetch_add(&c_runs, 1) == 0) pthread_exit((void *)42);
}

static void *exit_once_c(void *arg) {
    (void)arg;
    pthread_once(&once_c, init_exits_first);
    return NULL;
}

static void exit_in_init(void) {
    pthread_t t;
    CHECK(pthread_create(&t, NULL, exit_once_c, NULL) == 0);
    void *ret;
    CHECK(pthread_join(t, &ret) == 0 && ret == (void *)42);
    CHECK(pthread_once(&once_c, init_exits_first) == 0);
    CHECK(atomic_load(&c_runs) == 2);
}

static pthread_once_t outer = PTHREAD_ONCE_INIT, inner = PTHREAD_ONCE_INIT;
static atomic_int outer_runs, inner_runs, inner_blocking;

static void init_inner(void) {
    if (atomic_fetch_add(&inner_runs, 1) == 0) {
        atomic_store(&inner_blocking, 1);
        char c;
        (void)read(pipe_fds[0], &c, 1);
    }
}

static void init_outer(void) {
    atomic_fetch_add(&outer_runs, 1);
    CHECK(pthread_once(&inner, init_inner) == 0);
}

static void *nested_main(void *arg) {
    (void)arg;
    pthread_once(&outer, init_outer);
    return NULL;
}

static void nested(void) {
    pthread_t t;
    CHECK(pthread_create(&t, NULL, nested_main, NULL) == 0);
    test_wait_ge(&inner_blocking, 1);
    CHECK(pthread_cancel(t) == 0);
    void *ret;
    CHECK(pthread_join(t, &ret) == 0 && ret == PTHREAD_CANCELED);
    CHECK(pthread_once(&outer, init_outer) == 0);
    CHECK(atomic_load(&outer_runs) == 2 && atomic_load(&inner_runs) == 2);
}

/* The race. */
static pthread_once_t race_once;
static atomic_int race_completed, race_canceled_inside, race_async;
static long delay_a, delay_b; /* per round, set before the threads start (no rand() in them) */

static void count_canceled_inside(void *arg) {
    (void)arg;
    atomic_fetch_add(&race_canceled_inside, 1);
}

static void race_init_counted(void) {
    pthread_cleanup_push(count_canceled_inside, NULL);
    test_usleep(delay_a);
    usleep(delay_b); /* a cancellation point */
    pthread_cleanup_pop(0);
    atomic_fetch_add(&race_completed, 1);
}

static void *race_thread(void *arg) {
    (void)arg;
    if (atomic_load(&race_async))
        CHECK(pthread_setcanceltype(PTHREAD_CANCEL_ASYNCHRONOUS, NULL) == 0);
    CHECK(pthread_once(&race_once, race_init_counted) == 0);
    return NULL;
}

/* Deferred rounds: each once-control is initialized exactly once. Asynchronous rounds (every
 * other 4): no hang and at least once (a request that lands in the instant between the init
 * routine's return and pthread_once's bookkeeping resets the control, as in glibc: pthread_once
 * is not async-cancel-safe; those rounds are counted). */
static void race(long rounds) {
    long canceled = 0, async_rounds = 0, async_reran = 0;
    for (long r = 0; r < rounds; r++) {
        race_once = PTHREAD_ONCE_INIT; /* nobody uses it between rounds */
        atomic_store(&race_completed, 0);
        atomic_store(&race_async, (r / (WAITERS + 1)) % 2);
        async_rounds += atomic_load(&race_async);
        delay_a = rand() % 50;
        delay_b = rand() % 50;
        pthread_t t[WAITERS + 1];
        for (int i = 0; i <= WAITERS; i++) CHECK(pthread_create(&t[i], NULL, race_thread, NULL) == 0);
        test_usleep(rand() % 100);
        for (int i = 0; i <= (int)(r % (WAITERS + 1)); i++) { /* cancel 1 to all of them */
            int rc = pthread_cancel(t[i]);
            CHECK(rc == 0 || rc == ESRCH); /* ESRCH: that thread has already returned */
        }
        for (int i = 0; i <= WAITERS; i++) {
            void *ret;
            CHECK(pthread_join(t[i], &ret) == 0);
            canceled += ret == PTHREAD_CANCELED;
        }
        CHECK(pthread_once(&race_once, race_init_counted) == 0);
        int completed = atomic_load(&race_completed);
        if (atomic_load(&race_async) && completed > 1) {
            async_reran++;
        } else if (completed != 1) {
            fprintf(stderr, "round %ld: init completed %d times\n", r, completed);
            exit(1);
        }
    }
    printf("race: %ld rounds (%ld asynchronous), %ld threads canceled, %d of them inside init; "
           "each once-control initialized exactly once (asynchronous: %ld rounds ran it again)\n",
           rounds, async_rounds, canceled, atomic_load(&race_canceled_inside), async_reran);
}

int main(void) {
    alarm(60);
    canceled_at_a_point_with_waiters();
    canceled_asynchronously();
    exit_in_init();
    nested();
    const char *env = getenv("THREAD_CANCEL_STRESS");
    race(env ? atol(env) : 300);
    printf("ok: a canceled or exited init routine runs again (waiters, async, exit, nested)\n");
    return 0;
}
