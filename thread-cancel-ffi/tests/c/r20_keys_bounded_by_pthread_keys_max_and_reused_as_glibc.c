/* pthread_key_create is bounded by PTHREAD_KEYS_MAX keys in use and reuses the numbers of
 * deleted keys, as glibc:
 *   - keys created until one fails: it fails with EAGAIN, after no more than PTHREAD_KEYS_MAX
 *     (glibc's count includes keys the C library and other code hold, so only the bound is
 *     printed, not the count), and every number is below PTHREAD_KEYS_MAX;
 *   - with the table full, deleting one key lets the next create succeed, with that number;
 *   - 100,000 create/delete cycles succeed, every number below PTHREAD_KEYS_MAX (nothing grows
 *     for ever), and a new key with a reused number starts NULL in every thread;
 *   - a thread's value left under a deleted key is never given to the destructor of a new key
 *     that reuses its number.
 * Through the header the numbers used to grow for ever (never reused) and nothing bounded them.
 *
 * TC_COMPARE_WITH_GLIBC: the runner also builds this against plain glibc; both print the same. */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <limits.h>
#include <pthread.h>
#include "tc_test.h"

#define CAP (2 * PTHREAD_KEYS_MAX)

static pthread_key_t keys[CAP];
static atomic_int old_destructor, new_destructor, value_set, go;

static void old_dtor(void *v) {
    (void)v;
    atomic_fetch_add(&old_destructor, 1);
}

static void new_dtor(void *v) {
    (void)v;
    atomic_fetch_add(&new_destructor, 1);
}

static pthread_key_t shared;

static void *holder(void *arg) {
    (void)arg;
    CHECK(pthread_setspecific(shared, (void *)1) == 0);
    atomic_store(&value_set, 1);
    test_wait_ge(&go, 1);
    return NULL;
}

int main(void) {
    alarm(60);

    /* Until full. */
    int n = 0, e = 0;
    while (n < CAP && (e = pthread_key_create(&keys[n], NULL)) == 0) n++;
    int below = 1;
    for (int i = 0; i < n; i++) below &= keys[i] < PTHREAD_KEYS_MAX;
    printf("keys until full: %s, after no more than PTHREAD_KEYS_MAX (%d): %s, at least half of "
           "it: %s, every number below it: %s\n",
           e == EAGAIN ? "EAGAIN" : e == 0 ? "no error" : "another error", PTHREAD_KEYS_MAX,
           n <= PTHREAD_KEYS_MAX ? "yes" : "no", n >= PTHREAD_KEYS_MAX / 2 ? "yes" : "no",
           below ? "yes" : "no");
    if (n == CAP) {
        printf("no EAGAIN after %d keys\n", CAP);
        return 0;
    }

    /* Full: one deleted, one created. */
    pthread_key_t freed = keys[n / 2], again;
    CHECK(pthread_key_delete(freed) == 0);
    int c = pthread_key_create(&again, NULL);
    printf("full, one deleted: create %s, its number reused: %s; full again: %s\n",
           c == 0 ? "0" : "failed", c == 0 && again == freed ? "yes" : "no",
           pthread_key_create(&keys[CAP - 1], NULL) == EAGAIN ? "EAGAIN" : "not EAGAIN");
    keys[n / 2] = again;
    for (int i = 0; i < n; i++) CHECK(pthread_key_delete(keys[i]) == 0);

    /* Cycles. */
    int failed = 0, above = 0, not_null = 0;
    for (int i = 0; i < 100000; i++) {
        pthread_key_t k;
        if (pthread_key_create(&k, NULL) != 0) {
            failed++;
            continue;
        }
        above += k >= PTHREAD_KEYS_MAX;
        not_null += pthread_getspecific(k) != NULL;
        CHECK(pthread_setspecific(k, (void *)2) == 0);
        CHECK(pthread_key_delete(k) == 0);
    }
    printf("100000 create/delete cycles: %d failed, %d numbers not below PTHREAD_KEYS_MAX, %d new "
           "keys not NULL\n", failed, above, not_null);

    /* A value left under a deleted key. */
    CHECK(pthread_key_create(&shared, old_dtor) == 0);
    pthread_key_t first = shared;
    pthread_t t;
    CHECK(pthread_create(&t, NULL, holder, NULL) == 0);
    test_wait_ge(&value_set, 1);
    CHECK(pthread_key_delete(shared) == 0);
    pthread_key_t reused;
    CHECK(pthread_key_create(&reused, new_dtor) == 0);
    atomic_store(&go, 1);
    CHECK(pthread_join(t, NULL) == 0);
    printf("a deleted key's value: its number reused %s, old destructor ran %d times, new one "
           "%d times\n", reused == first ? "yes" : "no", atomic_load(&old_destructor),
           atomic_load(&new_destructor));
    CHECK(pthread_key_delete(reused) == 0);
    return 0;
}
