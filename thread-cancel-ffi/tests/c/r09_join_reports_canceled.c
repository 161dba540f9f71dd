/* R09: joining a canceled thread reports PTHREAD_CANCELED; R14: testcancel acts. */
#include <pthread.h>
#include "tc_test.h"

static atomic_int cleaned;

static void cleanup(void *arg) {
    (void)arg;
    atomic_store(&cleaned, 1);
}

static void *blocked(void *arg) {
    (void)arg;
    pthread_cleanup_push(cleanup, NULL);
    for (;;) {
        sleep(60); /* a cancellation point */
    }
    pthread_cleanup_pop(0);
    return NULL;
}

int main(void) {
    pthread_t t;
    CHECK(pthread_create(&t, NULL, blocked, NULL) == 0);
    test_msleep(20);
    CHECK(pthread_cancel(t) == 0);
    void *ret = NULL;
    CHECK(pthread_join(t, &ret) == 0);
    CHECK(ret == PTHREAD_CANCELED);
    CHECK(atomic_load(&cleaned) == 1);
    printf("ok\n");
    return 0;
}
