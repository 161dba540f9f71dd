/* The token harness of the R22 programs: consumers wait on a condition variable for tokens (a
 * predicate counter under the mutex); a cleanup handler checks the canceled waiter holds the
 * mutex (a default mutex's trylock by its owner is EBUSY) and releases it. */
#ifndef TC_TOKENS_H
#define TC_TOKENS_H

#include <pthread.h>
#include "tc_test.h"

static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t tok_cv = PTHREAD_COND_INITIALIZER;
static int tokens, waiting, consumed_w1, consumed_w2, handler_bad; /* under mu */
/* The kernel tid of the consumer counting into consumed_w1 (for aiming a cancel). */
static atomic_int w1_tid __attribute__((unused));

static void b_handler(void *p) {
    (void)p;
    if (pthread_mutex_trylock(&mu) != EBUSY) handler_bad = 1; /* must hold it */
    waiting--;
    pthread_mutex_unlock(&mu);
}

/* Consumes tokens forever, counting them into *p (consumed_w1 or consumed_w2). */
static void *consumer(void *p) {
    int *consumed = p;
    if (consumed == &consumed_w1) atomic_store(&w1_tid, test_gettid());
    CHECK(pthread_mutex_lock(&mu) == 0);
    pthread_cleanup_push(b_handler, NULL);
    for (;;) {
        while (tokens == 0) {
            waiting++;
            (void)pthread_cond_wait(&tok_cv, &mu);
            waiting--;
        }
        tokens--;
        (*consumed)++;
    }
    pthread_cleanup_pop(0);
    return NULL;
}

static int locked_read(int *v) {
    CHECK(pthread_mutex_lock(&mu) == 0);
    int r = *v;
    CHECK(pthread_mutex_unlock(&mu) == 0);
    return r;
}

#endif
