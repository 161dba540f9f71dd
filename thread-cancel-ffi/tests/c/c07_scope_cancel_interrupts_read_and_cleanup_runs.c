/* C07 (with C01, C02): a scope's cancel stops the operation, not the thread.
 *
 * Part 1: a thread created by the library runs tc_scope_run around a read(2) blocked on an empty
 * pipe, with a cleanup handler pushed inside the run and one pushed before it. Another thread
 * calls tc_scope_cancel. The inner handler ran (the outer one did not), tc_scope_run returned
 * TC_SCOPE_CANCELED, and the thread goes on clean: no cancel signal pending or blocked, a later
 * read succeeds, poll(NULL, 0, 5) returns 0 (no EINTR), and its join reports the value it
 * returned, not PTHREAD_CANCELED.
 *
 * Part 2 (races): the same thread runs many reads of one byte, each in a scope of its own,
 * while main writes one byte and cancels the scope at varied moments (before, with and after
 * the byte): every byte is either returned by a run that returned 0 or still in the pipe after a
 * run that returned TC_SCOPE_CANCELED (a canceled read had no effect), and after every run no
 * cancel signal is pending or blocked. THREAD_CANCEL_STRESS sets the count (default 300). */
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include "tc_test.h"

/* Whether some real-time signal (the cancel signal is one) is pending for, or blocked in, the
 * calling thread. */
static int rt_signal_pending_or_blocked(void) {
    sigset_t pend, mask;
    CHECK(sigpending(&pend) == 0);
    CHECK(syscall(SYS_rt_sigprocmask, SIG_BLOCK, NULL, &mask, _NSIG / 8) == 0);
    for (int s = SIGRTMIN; s <= SIGRTMAX; s++)
        if (sigismember(&pend, s) || sigismember(&mask, s)) return s;
    return 0;
}

struct op {
    tc_scope_t *scope;
    int fd;
    atomic_int blocked;
    atomic_int run_returned;
    atomic_int inner_handler;
    atomic_int outer_handler;
    pid_t tid;
    long got; /* bytes the read returned */
};

static void inner_handler(void *arg) {
    atomic_fetch_add(&((struct op *)arg)->inner_handler, 1);
}

static void outer_handler(void *arg) {
    atomic_fetch_add(&((struct op *)arg)->outer_handler, 1);
}

static void *blocked_read(void *arg) {
    struct op *o = arg;
    char b;
    void *ret = (void *)1;
    pthread_cleanup_push(inner_handler, o);
    atomic_store(&o->blocked, 1);
    ssize_t n = read(o->fd, &b, 1);
    if (n > 0) o->got += n;
    ret = (void *)2; /* the read returned: with part 1, it must not */
    pthread_cleanup_pop(0);
    return ret;
}

/* Part 2's shared state: main starts round i by setting `round` to i + 1. */
static struct {
    atomic_int round;
    atomic_int stop;
    atomic_int done;
    tc_scope_t *scope;
    int fd;
    int rc;
    long got;
} race;

static void *read_one(void *arg) {
    (void)arg;
    char b;
    ssize_t n = read(race.fd, &b, 1);
    return (void *)(long)n;
}

static void *worker(void *arg) {
    struct op *o = arg;
    o->tid = test_gettid();
    void *result = (void *)0x55;
    int rc;
    pthread_cleanup_push(outer_handler, o);
    rc = tc_scope_run(o->scope, blocked_read, o, &result);
    pthread_cleanup_pop(0);
    atomic_store(&o->run_returned, 1);
    if (rc != TC_SCOPE_CANCELED || result != (void *)0x55 || atomic_load(&o->inner_handler) != 1 ||
        atomic_load(&o->outer_handler) != 0) {
        fprintf(stderr, "part 1: rc %d (want %d), result %p (want untouched), handlers inner %d "
                "outer %d (want 1, 0)\n", rc, TC_SCOPE_CANCELED, result,
                atomic_load(&o->inner_handler), atomic_load(&o->outer_handler));
        exit(1);
    }
    int s = rt_signal_pending_or_blocked();
    if (s) {
        fprintf(stderr, "part 1: signal %d pending or blocked after the run\n", s);
        exit(1);
    }
    /* The thread goes on: a read that succeeds (main writes a byte once the run returned). */
    char b;
    ssize_t n = read(o->fd, &b, 1);
    CHECK(n == 1 && b == 'a');
    CHECK(poll(NULL, 0, 5) == 0); /* no EINTR from a signal still on its way */
    tc_testcancel();              /* no request left */

    /* Part 2. */
    for (int i = 0;; i++) {
        while (atomic_load(&race.round) <= i && !atomic_load(&race.stop)) sched_yield();
        if (atomic_load(&race.round) <= i) break;
        void *r = NULL;
        race.rc = tc_scope_run(race.scope, read_one, NULL, &r);
        /* A read that returned before the cancel was seen: TC_SCOPE_CANCELED with its value
         * in r (never silent); a stopped one leaves r NULL. */
        race.got = (long)r;
        s = rt_signal_pending_or_blocked();
        if (s) {
            fprintf(stderr, "round %d: signal %d pending or blocked after the run (rc %d)\n", i,
                    s, race.rc);
            exit(1);
        }
        atomic_store(&race.done, i + 1);
    }
    CHECK(poll(NULL, 0, 5) == 0);
    return (void *)42;
}

int main(void) {
    alarm(60);
    int p[2];
    CHECK(pipe(p) == 0);
    tc_scope_t *scope = tc_scope_new();
    CHECK(scope != NULL);
    struct op o = {.scope = scope, .fd = p[0]};
    atomic_store(&race.round, 0);
    pthread_t t;
    CHECK(pthread_create(&t, NULL, worker, &o) == 0);
    test_wait_ge(&o.blocked, 1);
    test_wait_blocked(o.tid);
    CHECK(tc_scope_cancel(scope) == 0);
    CHECK(tc_scope_is_canceled(scope) == 1);
    test_wait_ge(&o.run_returned, 1);
    CHECK((write)(p[1], "a", 1) == 1);
    tc_scope_free(scope);

    const char *env = getenv("THREAD_CANCEL_STRESS");
    long rounds = env ? atol(env) : 300;
    long canceled = 0, returned = 0, left = 0, late = 0;
    for (long i = 0; i < rounds; i++) {
        int q[2];
        CHECK(pipe(q) == 0);
        race.fd = q[0];
        race.scope = tc_scope_new();
        CHECK(race.scope != NULL);
        int cancel_first = i % 3 == 0;
        atomic_store(&race.round, (int)i + 1);
        if (i % 4 == 0) test_msleep(1); /* sometimes already blocked */
        if (cancel_first) CHECK(tc_scope_cancel(race.scope) == 0);
        for (volatile int spin = 0; spin < (int)(i % 7) * 300; spin++) {
        }
        CHECK((write)(q[1], "x", 1) == 1);
        if (!cancel_first) CHECK(tc_scope_cancel(race.scope) == 0);
        test_wait_ge(&race.done, (int)i + 1);
        CHECK(fcntl(q[0], F_SETFL, O_NONBLOCK) == 0);
        char b;
        long still = 0;
        while ((read)(q[0], &b, 1) == 1) still++;
        if (race.rc == 0) {
            returned += race.got;
        } else {
            CHECK(race.rc == TC_SCOPE_CANCELED);
            if (race.got) {
                returned += race.got;
                late++;
            } else {
                canceled++;
            }
        }
        left += still;
        if (race.got + still != 1) {
            fprintf(stderr, "round %ld: rc %d, read returned %ld, %ld left in the pipe\n", i,
                    race.rc, race.got, still);
            return 1;
        }
        tc_scope_free(race.scope);
        (close)(q[0]);
        (close)(q[1]);
    }
    atomic_store(&race.stop, 1);

    void *ret;
    CHECK(pthread_join(t, &ret) == 0);
    CHECK(ret == (void *)42);
    printf("ok: canceled read had no effect, inner handler ran, thread went on; %ld races: %ld "
           "canceled, %ld bytes returned (%ld of them with TC_SCOPE_CANCELED: the cancel came "
           "before the run ended) + %ld left, 0 lost\n", rounds, canceled, returned, late, left);
    return 0;
}
