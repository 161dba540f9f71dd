/* R17: in C, pthread_cleanup_push and pthread_cleanup_pop are macros that pair like braces in
 * one lexical scope. This program nests them: in blocks, in if/else branches, in a loop (10000
 * iterations, each pushes and pops), with locals declared between push and pop, across
 * recursive calls (one pair per frame). A cancellation at the deepest level runs exactly the
 * handlers still pushed, innermost first, each with its own frame's argument. */
#include <pthread.h>
#include "tc_test.h"

#define DEPTH 8

static int order[64];
static atomic_int norder;
static atomic_int ready, never;
static atomic_long loop_runs;

static void h(void *arg) {
    int i = atomic_fetch_add(&norder, 1);
    if (i < 64) order[i] = *(int *)arg;
}

static void count(void *arg) {
    (void)arg;
    atomic_fetch_add(&loop_runs, 1);
}

static void recurse(int level) {
    int mine = level; /* this frame's argument */
    pthread_cleanup_push(h, &mine);
    {
        int inner = 100 + level; /* a nested pair in an inner block, popped unrun */
        pthread_cleanup_push(h, &inner);
        inner++;
        pthread_cleanup_pop(0);
    }
    if (level % 2) {
        int odd = 200 + level;
        pthread_cleanup_push(h, &odd);
        pthread_cleanup_pop(0);
    } else {
        int even = 300 + level;
        pthread_cleanup_push(h, &even);
        pthread_cleanup_pop(0);
    }
    if (level < DEPTH) {
        recurse(level + 1);
    } else {
        atomic_store(&ready, 1);
        while (!atomic_load(&never)) pthread_testcancel();
    }
    pthread_cleanup_pop(0);
}

static void *worker(void *arg) {
    (void)arg;
    for (int i = 0; i < 10000; i++) {
        pthread_cleanup_push(count, NULL);
        int local = i; /* a local of the pair's own scope (not visible to the pop's argument) */
        (void)local;
        pthread_cleanup_pop(i % 3 != 0); /* runs 2 of 3 */
    }
    recurse(1);
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
    CHECK(atomic_load(&loop_runs) == 6666);
    int n = atomic_load(&norder);
    int ok = n == DEPTH;
    for (int i = 0; ok && i < DEPTH; i++) ok = order[i] == DEPTH - i;
    if (!ok) {
        fprintf(stderr, "handlers ran:");
        for (int i = 0; i < n && i < 64; i++) fprintf(stderr, " %d", order[i]);
        fprintf(stderr, " (want %d down to 1)\n", DEPTH);
        return 1;
    }
    printf("ok: %d nested frames' handlers ran innermost first; 10000 paired push/pop in a loop\n",
           DEPTH);
    return 0;
}
