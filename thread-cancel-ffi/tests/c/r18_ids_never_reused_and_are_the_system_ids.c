/* R18: the ids pthread_create gives through the compatibility header are never reused, and each
 * is the C library's own pthread_t of the thread (on glibc):
 *   (a) 3,000 threads created and joined one after another (default attributes), 1,000 more with
 *       a 64 KiB stack (PTHREAD_STACK_MIN where that is larger) and an 8 KiB guard, and 500
 *       created detached (by attribute), each gone (ended, pthread_kill(id, 0) ESRCH, its kernel
 *       thread gone from /proc/self/task) before the next is created: all 4,500 ids from
 *       pthread_create differ, where glibc hands the next thread the descriptor (and so the id)
 *       of the one before, out of its stack cache;
 *   (b) each of those ids is the C library's pthread_self() in that thread (asked of a library
 *       built without the header, tests/c/lib/ of the same name, TC_PLAIN_LIBRARY);
 *   (c) afterwards the first joined thread's id is ESRCH for pthread_cancel, pthread_kill(id, 0),
 *       pthread_join and pthread_detach, and the last detached one's for pthread_cancel and
 *       pthread_kill(id, 0);
 *   (d) 10 threads created one after another on a stack the caller gives (pthread_attr_setstack
 *       of one 256 KiB block, reused): (b) holds for them too (their ids may repeat: the stack
 *       is the caller's, the C library's descriptor on it too).
 * Prints one line with the counts; exits 0 only if every check holds.
 *
 * Not compared with glibc: glibc reuses ids, (a) fails there (2 distinct ids of 4,500, glibc
 * 2.36), and its pthread_kill(id, 0) of a detached thread that has ended is 0, not ESRCH.
 * Before, the header's ids were the library's own (generation-tagged): all distinct, but none
 * the C library's pthread_self(), (b) and (d) 0 of 4,500 and 0 of 10. */
#define _GNU_SOURCE /* PTHREAD_STACK_MIN may be sysconf's */
#include <dlfcn.h>
#include <limits.h>
#include <pthread.h>
#include <signal.h>
#include <stdint.h>
#include <stdlib.h>
#include "tc_test.h"

#define JOINED 3000
#define SMALL 1000
#define DETACHED 500
#define CREATED (JOINED + SMALL + DETACHED)
#define OWN_STACK 10
#define OWN_STACK_SIZE (256 * 1024)

static pthread_t (*lib_self)(void);

static pthread_t ids[CREATED + OWN_STACK];   /* from pthread_create */
static pthread_t selfs[CREATED + OWN_STACK]; /* the library's lib_self() in the thread */

static const char *volatile stage = "starting";

static void on_alarm(int sig) {
    (void)sig;
    static const char msg[] = "hang: no progress in 120 s, waiting for: ";
    (write)(2, msg, sizeof msg - 1);
    const char *s = stage;
    (write)(2, s, strlen(s));
    (write)(2, "\n", 1);
    _exit(1);
}

static void *record(void *arg) {
    selfs[(uintptr_t)arg] = lib_self();
    return arg;
}

static atomic_int detached_done, detached_tid;

static void *record_detached(void *arg) {
    selfs[(uintptr_t)arg] = lib_self();
    atomic_store(&detached_tid, (int)test_gettid());
    atomic_fetch_add(&detached_done, 1);
    return arg;
}

/* Creates thread `i` with `attr` and joins it. */
static void create_and_join(size_t i, const pthread_attr_t *attr) {
    void *ret = NULL;
    CHECK(pthread_create(&ids[i], attr, record, (void *)(uintptr_t)i) == 0);
    CHECK(pthread_join(ids[i], &ret) == 0 && ret == (void *)(uintptr_t)i);
}

static int by_value(const void *a, const void *b) {
    uintptr_t x = *(const uintptr_t *)a, y = *(const uintptr_t *)b;
    return x < y ? -1 : x > y;
}

/* How many of ids[from..to) are the C library's pthread_self() of their thread; the first few
 * that are not are reported on stderr. */
static int system_ids(size_t from, size_t to) {
    int same = 0, told = 0;
    for (size_t i = from; i < to; i++) {
        if (ids[i] == selfs[i]) {
            same++;
        } else if (told++ < 3) {
            fprintf(stderr, "thread %zu: id %#lx from pthread_create, the C library's "
                    "pthread_self() %#lx\n", i, (unsigned long)(uintptr_t)ids[i],
                    (unsigned long)(uintptr_t)selfs[i]);
        }
    }
    return same;
}

static const char *err(int e) {
    return e == ESRCH ? "ESRCH" : e == 0 ? "0" : strerror(e);
}

int main(void) {
    signal(SIGALRM, on_alarm);
    alarm(120);
    void *lib = dlopen(TC_TEST_LIB, RTLD_NOW | RTLD_LOCAL);
    CHECK(lib != NULL);
    lib_self = (pthread_t(*)(void))dlsym(lib, "lib_self");
    CHECK(lib_self != NULL);

    /* (a), (b): joined, default attributes. */
    stage = "the threads created with default attributes and joined";
    size_t n = 0;
    for (; n < JOINED; n++)
        create_and_join(n, NULL);

    /* Joined, a small stack and a guard. */
    stage = "the threads with a small stack and a guard";
    size_t small = 64 * 1024;
    if (small < (size_t)PTHREAD_STACK_MIN)
        small = (size_t)PTHREAD_STACK_MIN;
    pthread_attr_t a;
    CHECK(pthread_attr_init(&a) == 0);
    CHECK(pthread_attr_setstacksize(&a, small) == 0);
    CHECK(pthread_attr_setguardsize(&a, 8 * 1024) == 0);
    for (; n < JOINED + SMALL; n++)
        create_and_join(n, &a);
    CHECK(pthread_attr_destroy(&a) == 0);

    /* Detached by attribute, each gone before the next is created. */
    CHECK(pthread_attr_init(&a) == 0);
    CHECK(pthread_attr_setdetachstate(&a, PTHREAD_CREATE_DETACHED) == 0);
    int rc;
    for (int k = 0; n < CREATED; n++, k++) {
        CHECK(pthread_create(&ids[n], &a, record_detached, (void *)(uintptr_t)n) == 0);
        stage = "a detached thread to end";
        test_wait_ge(&detached_done, k + 1);
        stage = "a detached thread's pthread_kill(id, 0) to be ESRCH";
        while ((rc = pthread_kill(ids[n], 0)) == 0)
            test_usleep(100);
        CHECK(rc == ESRCH);
        stage = "a detached thread to be gone from /proc/self/task";
        while (test_thread_state(atomic_load(&detached_tid)) != '?')
            test_usleep(100);
    }
    CHECK(pthread_attr_destroy(&a) == 0);

    /* (a): all distinct. */
    stage = "the sort";
    static uintptr_t sorted[CREATED];
    for (size_t i = 0; i < CREATED; i++)
        sorted[i] = (uintptr_t)ids[i];
    qsort(sorted, CREATED, sizeof sorted[0], by_value);
    int distinct = 1;
    for (size_t i = 1; i < CREATED; i++)
        distinct += sorted[i] != sorted[i - 1];
    /* (b) */
    int system = system_ids(0, CREATED);

    /* (d): a caller's stack, reused. */
    stage = "the threads on a caller's stack";
    void *stack = NULL;
    CHECK(posix_memalign(&stack, 64 * 1024, OWN_STACK_SIZE) == 0);
    CHECK(pthread_attr_init(&a) == 0);
    CHECK(pthread_attr_setstack(&a, stack, OWN_STACK_SIZE) == 0);
    for (; n < CREATED + OWN_STACK; n++)
        create_and_join(n, &a);
    CHECK(pthread_attr_destroy(&a) == 0);
    free(stack);
    int own_system = system_ids(CREATED, CREATED + OWN_STACK);

    /* (c) */
    stage = "the calls on stale ids";
    pthread_t joined = ids[0], detached = ids[CREATED - 1];
    int jc = pthread_cancel(joined), jk = pthread_kill(joined, 0), jj = pthread_join(joined, NULL);
    int jd = pthread_detach(joined);
    int dc = pthread_cancel(detached), dk = pthread_kill(detached, 0);
    int stale_ok = jc == ESRCH && jk == ESRCH && jj == ESRCH && jd == ESRCH && dc == ESRCH &&
                   dk == ESRCH;

    int ok = distinct == CREATED && system == CREATED && own_system == OWN_STACK && stale_ok;
    printf("%s: %d threads (%d joined; %d joined with a %zu KiB stack and an 8 KiB guard; %d "
           "detached, each gone before the next): %d distinct ids; %d of %d ids from "
           "pthread_create are the C library's pthread_self() of the thread; a joined id: cancel "
           "%s, kill %s, join %s, detach %s; a finished detached id: cancel %s, kill %s; %d "
           "threads on a caller's stack: %d of %d ids are the C library's pthread_self()\n",
           ok ? "ok" : "FAILED", CREATED, JOINED, SMALL, small / 1024, DETACHED, distinct, system,
           CREATED, err(jc), err(jk), err(jj), err(jd), err(dc), err(dk), OWN_STACK, own_system,
           OWN_STACK);
    return ok ? 0 : 1;
}
