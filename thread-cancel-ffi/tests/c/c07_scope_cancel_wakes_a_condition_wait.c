/* C07 with R22: a scope's cancel wakes a thread blocked in pthread_cond_wait inside
 * tc_scope_run; the wait re-acquires the mutex before the first cleanup handler runs (the
 * handler unlocks it), tc_scope_run returns TC_SCOPE_CANCELED, and the thread goes on: it can
 * lock the mutex again and wait on the condition for a real signal. */
#include <poll.h>
#include <pthread.h>
#include "tc_test.h"

static pthread_mutex_t m = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t cv = PTHREAD_COND_INITIALIZER;
static int ready; /* guarded by m */
static atomic_int handler_saw_lock_held;
static atomic_int waiting;

static void unlock_it(void *arg) {
    (void)arg;
    /* The mutex must be held again here: trylock from this thread fails with EBUSY/EDEADLK. */
    int r = pthread_mutex_trylock(&m);
    atomic_store(&handler_saw_lock_held, r != 0);
    if (r == 0)
        pthread_mutex_unlock(&m);
    pthread_mutex_unlock(&m);
}

static void *waits_forever(void *arg) {
    (void)arg;
    pthread_mutex_lock(&m);
    pthread_cleanup_push(unlock_it, NULL);
    atomic_store(&waiting, 1);
    while (!ready)
        pthread_cond_wait(&cv, &m);
    pthread_cleanup_pop(1);
    return (void *)1;
}

static void *worker(void *arg) {
    tc_scope_t *s = arg;
    int rc = tc_scope_run(s, waits_forever, NULL, NULL);
    if (rc != TC_SCOPE_CANCELED) {
        fprintf(stderr, "tc_scope_run: %d (want %d)\n", rc, TC_SCOPE_CANCELED);
        exit(1);
    }
    CHECK(atomic_load(&handler_saw_lock_held) == 1);
    CHECK(poll(NULL, 0, 5) == 0);
    /* The thread goes on: a real wait on the same condition completes. */
    pthread_mutex_lock(&m);
    atomic_store(&waiting, 2);
    while (!ready)
        pthread_cond_wait(&cv, &m);
    pthread_mutex_unlock(&m);
    return (void *)42;
}

int main(void) {
    alarm(30);
    tc_scope_t *s = tc_scope_new();
    CHECK(s != NULL);
    pthread_t t;
    CHECK(pthread_create(&t, NULL, worker, s) == 0);
    while (atomic_load(&waiting) != 1)
        usleep(1000);
    usleep(20000); /* blocked in the wait */
    CHECK(tc_scope_cancel(s) == 0);
    while (atomic_load(&waiting) != 2)
        usleep(1000);
    pthread_mutex_lock(&m);
    ready = 1;
    pthread_cond_broadcast(&cv);
    pthread_mutex_unlock(&m);
    void *ret;
    CHECK(pthread_join(t, &ret) == 0);
    CHECK(ret == (void *)42);
    tc_scope_free(s);
    printf("ok: a scope's cancel woke the condition wait; the thread went on\n");
    return 0;
}
