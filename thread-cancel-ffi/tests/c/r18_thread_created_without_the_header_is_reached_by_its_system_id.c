/* R18: a thread created without the compatibility header (by a C library compiled without it:
 * here the C library's own pthread_create and pthread_join, reached under names of our own) is
 * reached through its system pthread_t by the mapped calls, as with glibc, once it has called
 * one of them: pthread_kill (signal 0) and pthread_cancel return 0; the thread acts at its next
 * point (compiled through the header), its cleanup handler runs, and the C library's join
 * reports PTHREAD_CANCELED.
 *
 * TC_COMPARE_WITH_GLIBC: the runner also builds this against plain glibc; both print the same. */
#include <pthread.h>
#include <signal.h>
#include "tc_test.h"

extern int plain_pthread_create(pthread_t *, const pthread_attr_t *, void *(*)(void *),
                                void *) __asm__("pthread_create");
extern int plain_pthread_join(pthread_t, void **) __asm__("pthread_join");

static atomic_int started, handlers;

static void handler(void *a) {
    (void)a;
    atomic_fetch_add(&handlers, 1);
}

static void *until_canceled(void *a) {
    pthread_cleanup_push(handler, NULL);
    usleep(1000);
    atomic_store(&started, 1);
    for (;;) usleep(1000);
    pthread_cleanup_pop(0);
    return a;
}

int main(void) {
    alarm(20);
    pthread_t t;
    void *ret = NULL;
    CHECK(plain_pthread_create(&t, NULL, until_canceled, NULL) == 0);
    test_wait_ge(&started, 1);
    int k = pthread_kill(t, 0), c = pthread_cancel(t);
    printf("kill %d, cancel %d\n", k, c);
    fflush(stdout);
    if (c != 0) return 1; /* it would never end */
    int j = plain_pthread_join(t, &ret);
    printf("the C library's join %d, PTHREAD_CANCELED %d, %d cleanup handler(s) ran\n", j,
           ret == PTHREAD_CANCELED, atomic_load(&handlers));
    return 0;
}
