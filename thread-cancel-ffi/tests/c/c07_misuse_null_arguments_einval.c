/* C07, misuse: null arguments are EINVAL (or NULL with errno EINVAL), never a crash, a hang or
 * a leak (the program also runs under ASan and LeakSanitizer). tc_scope_run with a null scope
 * or function does not call anything; a null result pointer is allowed. References: tc_scope_ref
 * returns the same scope, which lives until its last reference is freed (a use after the
 * first free would be reported by ASan); tc_scope_free(NULL) does nothing. */
#include <pthread.h>
#include "tc_test.h"

static atomic_int calls;

static void *fn(void *arg) {
    atomic_fetch_add(&calls, 1);
    return arg;
}

static void *worker(void *arg) {
    (void)arg;
    tc_scope_t *s = tc_scope_new();
    CHECK(s != NULL);
    void *result = (void *)0x55;
    CHECK(tc_scope_run(NULL, fn, NULL, &result) == EINVAL);
    CHECK(tc_scope_run(s, NULL, NULL, &result) == EINVAL);
    CHECK(tc_scope_run(NULL, NULL, NULL, NULL) == EINVAL);
    CHECK(atomic_load(&calls) == 0 && result == (void *)0x55);
    CHECK(tc_scope_run(s, fn, (void *)3, NULL) == 0); /* result may be NULL */
    CHECK(atomic_load(&calls) == 1);

    CHECK(tc_scope_cancel(NULL) == EINVAL);
    errno = 0;
    CHECK(tc_scope_is_canceled(NULL) == -1 && errno == EINVAL);
    errno = 0;
    CHECK(tc_scope_child(NULL) == NULL && errno == EINVAL);
    errno = 0;
    CHECK(tc_scope_ref(NULL) == NULL && errno == EINVAL);
    tc_scope_free(NULL);

    tc_scope_t *r = tc_scope_ref(s);
    CHECK(r == s);
    tc_scope_free(s); /* one reference left */
    CHECK(tc_scope_is_canceled(r) == 0);
    CHECK(tc_scope_cancel(r) == 0);
    CHECK(tc_scope_is_canceled(r) == 1);
    CHECK(tc_scope_run(r, fn, NULL, NULL) == TC_SCOPE_CANCELED);
    tc_scope_free(r);
    CHECK(atomic_load(&calls) == 1);
    return (void *)42;
}

int main(void) {
    alarm(30);
    pthread_t t;
    CHECK(pthread_create(&t, NULL, worker, NULL) == 0);
    void *ret;
    CHECK(pthread_join(t, &ret) == 0);
    CHECK(ret == (void *)42);
    printf("ok: null arguments are EINVAL; references counted\n");
    return 0;
}
