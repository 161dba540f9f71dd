/* R18: pthread_detach of a thread that another thread is joining returns 0 and changes nothing,
 * as glibc's (its join id is taken: the join goes on and collects the value). A thread blocked
 * in pthread_join of a worker blocked in read; main detaches the worker (0), then lets it end:
 * the joiner gets its value; 100 threads created after it run as usual. (The library used to
 * mark the worker detached under its joiner — the same answers here — which, with threads on
 * stacks of the library's released once joined, also queued the worker's stack for a second
 * release at its end; it now leaves the worker to its joiner, as glibc.)
 * TC_COMPARE_WITH_GLIBC */
#include <pthread.h>
#include <unistd.h>
#include "tc_test.h"

static int fds[2];
static pthread_t worker;
static atomic_int joiner_tid;

static void *work(void *arg) {
    char c;
    CHECK(read(fds[0], &c, 1) == 1);
    return arg;
}

static void *join_worker(void *arg) {
    (void)arg;
    atomic_store(&joiner_tid, (int)test_gettid());
    void *value = NULL;
    int rc = pthread_join(worker, &value);
    printf("the joiner's pthread_join: %d, value %s\n", rc,
           value == (void *)&fds ? "the worker's" : "wrong");
    return NULL;
}

int main(void) {
    alarm(30);
    CHECK(pipe(fds) == 0);
    CHECK(pthread_create(&worker, NULL, work, &fds) == 0);
    pthread_t joiner;
    CHECK(pthread_create(&joiner, NULL, join_worker, NULL) == 0);
    while (atomic_load(&joiner_tid) == 0) test_usleep(100);
    test_wait_blocked(atomic_load(&joiner_tid));
    printf("pthread_detach of the worker while it is being joined: %d\n", pthread_detach(worker));
    CHECK(write(fds[1], "x", 1) == 1);
    CHECK(pthread_join(joiner, NULL) == 0);
    /* Threads created after: their stacks and ids as usual. */
    for (int i = 0; i < 100; i++) {
        pthread_t t;
        CHECK(pthread_create(&t, NULL, work, &fds) == 0);
        CHECK(write(fds[1], "y", 1) == 1);
        CHECK(pthread_join(t, NULL) == 0);
    }
    printf("100 threads created and joined after it\n");
    return 0;
}
