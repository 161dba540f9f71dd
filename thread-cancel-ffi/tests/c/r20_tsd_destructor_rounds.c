/* R20: thread-specific-data destructors. A destructor gets the thread's value, with the slot
 * already cleared (pthread_getspecific returns NULL inside it); a destructor that sets a value
 * again is called again in a further round, at most 4 rounds (PTHREAD_DESTRUCTOR_ITERATIONS);
 * a destructor setting another key's value gets that key's destructor called in the next
 * round; NULL values and deleted keys get no call. Checked when the thread returns, is canceled
 * (after its cleanup handler), and exits. */
#include <pthread.h>
#include "tc_test.h"

static pthread_key_t k_forever, k_twice, k_chain_a, k_chain_b, k_null, k_deleted;
static atomic_int forever_calls, twice_calls, a_calls, b_calls, bad_calls, handler_ran;
static atomic_int saw_nonnull_inside, wrong_value, dtor_before_handler;
static int v_forever = 1, v_twice = 2, v_a = 3, v_b = 4;

static void check_cleared(pthread_key_t k, void *v, int *expected) {
    if (pthread_getspecific(k) != NULL) atomic_store(&saw_nonnull_inside, 1);
    if (v != expected) atomic_store(&wrong_value, 1);
    if (!atomic_load(&handler_ran)) atomic_store(&dtor_before_handler, 1);
}

static void d_forever(void *v) { /* always sets itself again: stopped after 4 rounds */
    check_cleared(k_forever, v, &v_forever);
    atomic_fetch_add(&forever_calls, 1);
    CHECK(pthread_setspecific(k_forever, &v_forever) == 0);
}

static void d_twice(void *v) { /* sets itself again once: 2 calls */
    check_cleared(k_twice, v, &v_twice);
    if (atomic_fetch_add(&twice_calls, 1) == 0) CHECK(pthread_setspecific(k_twice, &v_twice) == 0);
}

static void d_chain_a(void *v) { /* sets key b: b's destructor runs in a later round */
    check_cleared(k_chain_a, v, &v_a);
    atomic_fetch_add(&a_calls, 1);
    CHECK(pthread_setspecific(k_chain_b, &v_b) == 0);
}

static void d_chain_b(void *v) {
    check_cleared(k_chain_b, v, &v_b);
    atomic_fetch_add(&b_calls, 1);
}

static void d_bad(void *v) {
    (void)v;
    atomic_fetch_add(&bad_calls, 1);
}

static void handler(void *arg) {
    (void)arg;
    atomic_store(&handler_ran, 1);
}

enum how { RETURN, CANCEL, EXIT };
static atomic_int ready;

static void *worker(void *arg) {
    enum how how = (enum how)(long)arg;
    CHECK(pthread_setspecific(k_forever, &v_forever) == 0);
    CHECK(pthread_setspecific(k_twice, &v_twice) == 0);
    CHECK(pthread_setspecific(k_chain_a, &v_a) == 0);
    CHECK(pthread_setspecific(k_null, &v_a) == 0);
    CHECK(pthread_setspecific(k_null, NULL) == 0); /* back to NULL: no call */
    CHECK(pthread_setspecific(k_deleted, &v_a) == 0);
    CHECK(pthread_key_delete(k_deleted) == 0); /* deleted with a value set: no call */
    CHECK(pthread_getspecific(k_forever) == &v_forever);
    pthread_cleanup_push(handler, NULL);
    if (how == CANCEL) {
        atomic_store(&ready, 1);
        for (;;) pause();
    }
    if (how == EXIT) pthread_exit((void *)3);
    pthread_cleanup_pop(1); /* return: run the handler ourselves, to share the checks */
    return (void *)2;
}

static void run(enum how how, void *want, const char *name) {
    atomic_store(&forever_calls, 0);
    atomic_store(&twice_calls, 0);
    atomic_store(&a_calls, 0);
    atomic_store(&b_calls, 0);
    atomic_store(&handler_ran, 0);
    atomic_store(&ready, 0);
    CHECK(pthread_key_create(&k_deleted, d_bad) == 0);
    pthread_t t;
    CHECK(pthread_create(&t, NULL, worker, (void *)(long)how) == 0);
    if (how == CANCEL) {
        test_wait_ge(&ready, 1);
        CHECK(pthread_cancel(t) == 0);
    }
    void *ret;
    CHECK(pthread_join(t, &ret) == 0);
    int f = atomic_load(&forever_calls), tw = atomic_load(&twice_calls);
    int a = atomic_load(&a_calls), b = atomic_load(&b_calls), bad = atomic_load(&bad_calls);
    if (ret != want || f != 4 || tw != 2 || a != 1 || b != 1 || bad != 0 ||
        atomic_load(&saw_nonnull_inside) || atomic_load(&wrong_value) ||
        atomic_load(&dtor_before_handler)) {
        fprintf(stderr,
                "%s: ret %p; calls: forever %d (want 4), twice %d (want 2), chain %d+%d (want "
                "1+1), null/deleted %d (want 0); slot not cleared inside %d, wrong value %d, "
                "before the cleanup handler %d\n",
                name, ret, f, tw, a, b, bad, atomic_load(&saw_nonnull_inside),
                atomic_load(&wrong_value), atomic_load(&dtor_before_handler));
        exit(1);
    }
}

int main(void) {
    alarm(20);
    CHECK(pthread_key_create(&k_forever, d_forever) == 0);
    CHECK(pthread_key_create(&k_twice, d_twice) == 0);
    CHECK(pthread_key_create(&k_chain_a, d_chain_a) == 0);
    CHECK(pthread_key_create(&k_chain_b, d_chain_b) == 0);
    CHECK(pthread_key_create(&k_null, d_bad) == 0);
    run(RETURN, (void *)2, "return");
    run(CANCEL, PTHREAD_CANCELED, "cancel");
    run(EXIT, (void *)3, "exit");
    printf("ok: slot cleared before the destructor; re-set -> called again, 4 rounds at most; "
           "on return, cancel, exit\n");
    return 0;
}
