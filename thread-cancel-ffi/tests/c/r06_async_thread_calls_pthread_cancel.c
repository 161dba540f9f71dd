/* R06 with R08: pthread_cancel is async-cancel-safe. A thread with the asynchronous type
 * cancels itself (it acts at once, the C way: its cleanup handler runs, join reports
 * PTHREAD_CANCELED), and a thread that cancels another in a loop while asynchronous is itself
 * canceled, 200 times, without the process aborting or a lock staying held. */
#include <pthread.h>
#include <unistd.h>
#include "tc_test.h"

static atomic_int cleaned, started;
static pthread_t victim;

static void cleanup(void *arg) {
    (void)arg;
    atomic_fetch_add(&cleaned, 1);
}

static void *self_canceler(void *arg) {
    (void)arg;
    pthread_cleanup_push(cleanup, NULL);
    int old;
    CHECK(pthread_setcanceltype(PTHREAD_CANCEL_ASYNCHRONOUS, &old) == 0);
    pthread_cancel(pthread_self());
    for (;;) {
    }
    pthread_cleanup_pop(0);
    return NULL;
}

static void *sleeper(void *arg) {
    (void)arg;
    for (;;) pause();
    return NULL;
}

static void *looping_canceler(void *arg) {
    (void)arg;
    pthread_cleanup_push(cleanup, NULL);
    int old;
    CHECK(pthread_setcanceltype(PTHREAD_CANCEL_ASYNCHRONOUS, &old) == 0);
    atomic_store(&started, 1);
    for (;;) pthread_cancel(victim); /* ESRCH once the victim is gone: still a valid call */
    pthread_cleanup_pop(0);
    return NULL;
}

int main(void) {
    alarm(30);
    pthread_t t;
    void *ret;
    CHECK(pthread_create(&t, NULL, self_canceler, NULL) == 0);
    CHECK(pthread_join(t, &ret) == 0);
    CHECK(ret == PTHREAD_CANCELED && atomic_load(&cleaned) == 1);
    for (int i = 0; i < 200; i++) {
        CHECK(pthread_create(&victim, NULL, sleeper, NULL) == 0);
        atomic_store(&started, 0);
        CHECK(pthread_create(&t, NULL, looping_canceler, NULL) == 0);
        test_wait_ge(&started, 1);
        if (i % 2) test_msleep(0);
        CHECK(pthread_cancel(t) == 0);
        CHECK(pthread_join(t, &ret) == 0);
        CHECK(ret == PTHREAD_CANCELED);
        pthread_cancel(victim);
        CHECK(pthread_join(victim, &ret) == 0);
    }
    CHECK(atomic_load(&cleaned) == 201);
    printf("ok: an asynchronous thread canceled itself; 200 asynchronous cancelers canceled mid-pthread_cancel\n");
    return 0;
}
