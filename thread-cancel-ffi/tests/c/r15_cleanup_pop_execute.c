/* R15: pthread_cleanup_push puts a handler on top of the calling thread's stack;
 * pthread_cleanup_pop(execute) removes the top one and runs it (with its argument) iff execute
 * is nonzero. A popped handler never runs again (a later cancellation runs only those still
 * pushed). Checked in a created thread and in main. */
#include <pthread.h>
#include "tc_test.h"

static char trace[64];
static atomic_int ntrace;

static void h(void *arg) {
    int i = atomic_fetch_add(&ntrace, 1);
    if (i < 63) trace[i] = *(const char *)arg;
}

static const char A = 'A', B = 'B', C = 'C', D = 'D', E = 'E';

static const char *sequence(void) {
    pthread_cleanup_push(h, (void *)&A);
    pthread_cleanup_push(h, (void *)&B);
    pthread_cleanup_pop(1); /* runs B */
    pthread_cleanup_push(h, (void *)&C);
    pthread_cleanup_pop(0); /* removes C, does not run it */
    pthread_cleanup_push(h, (void *)&D);
    pthread_cleanup_pop(-1); /* any nonzero value executes: D */
    pthread_cleanup_pop(2);  /* A */
    return "BDA";
}

static atomic_int ready;

static void *worker(void *arg) {
    (void)arg;
    CHECK(strcmp(sequence(), "BDA") == 0);
    /* Pushed, popped without running: gone; then a cancellation runs only E. */
    pthread_cleanup_push(h, (void *)&E);
    pthread_cleanup_push(h, (void *)&C);
    pthread_cleanup_pop(0);
    atomic_store(&ready, 1);
    for (;;) pthread_testcancel();
    pthread_cleanup_pop(0);
    return NULL;
}

int main(void) {
    alarm(20);
    pthread_t t;
    CHECK(pthread_create(&t, NULL, worker, NULL) == 0);
    test_wait_ge(&ready, 1);
    CHECK(pthread_cancel(t) == 0);
    void *ret;
    CHECK(pthread_join(t, &ret) == 0);
    CHECK(ret == PTHREAD_CANCELED);
    trace[atomic_load(&ntrace)] = 0;
    if (strcmp(trace, "BDAE") != 0) {
        fprintf(stderr, "thread: handlers ran as \"%s\", want \"BDAE\"\n", trace);
        return 1;
    }
    atomic_store(&ntrace, 0);
    sequence(); /* main too */
    trace[atomic_load(&ntrace)] = 0;
    if (strcmp(trace, "BDA") != 0) {
        fprintf(stderr, "main: handlers ran as \"%s\", want \"BDA\"\n", trace);
        return 1;
    }
    printf("ok: pop(1) ran the top, pop(0) removed it unrun, cancel ran only those left\n");
    return 0;
}
