/* W04: the thread ids a program has through the compatibility header (pthread_create's,
 * pthread_self's) are the C library's own pthread_t (on glibc), so code built without the header
 * (tests/c/lib/ of the same name, TC_PLAIN_LIBRARY: as a distribution's library is built) takes
 * them and gives its own to the program, as with glibc:
 *   (a) a thread the program created gives the library its id from pthread_create: the library
 *       finds it equal to its pthread_self(), by the C library's pthread_equal and by a raw ==
 *       (what glibc's inline pthread_equal is at -O2), and the library's pthread_self() is the
 *       program's id (the header's pthread_equal, and ==);
 *   (b) the same for the main thread, by the program's pthread_self();
 *   (c) the library names the program's thread with the C library's pthread_setname_np and the
 *       program reads the name with pthread_getname_np through the header; and the reverse;
 *   (d) the library's pthread_kill(id, 0) is 0 and its pthread_getattr_np(id) is 0, with a stack
 *       of a size > 0 holding a local of the thread (the created thread and main);
 *   (e) a thread the library creates with the C library's pthread_create, whose id the library
 *       gives the program, calls back into the program: there the program's pthread_self()
 *       (through the header) is that id (pthread_equal, and ==); the library joins it.
 *
 * TC_COMPARE_WITH_GLIBC: built through pthread_compat.h with libthread_cancel and against the
 * system's glibc alone; both print the same lines. Before, the header's ids were the library's
 * own (generation-tagged): (a) and (b) were 0 in the library, == 0 in the program, and the
 * == of (e) 0 (only the header's pthread_equal, which translates, said 1); the library's
 * pthread_setname_np of the program's id, (c), crashed the program (SIGSEGV in glibc). */
#define _GNU_SOURCE /* pthread_setname_np, pthread_getname_np */
#include <dlfcn.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <unistd.h>
#include "tc_test.h"

static pthread_t (*lib_self)(void);
static int (*lib_is_self)(pthread_t, int *);
static int (*lib_set_name)(pthread_t, const char *);
static int (*lib_get_name)(pthread_t, char *, size_t);
static int (*lib_kill0)(pthread_t);
static int (*lib_stack_of)(pthread_t, const void *, int *, int *);
static int (*lib_start_thread)(pthread_t *, void (*)(void));
static int (*lib_join_thread)(void);

/* (a): the worker asks the library once main has stored its id, then waits to be released. */
static pthread_t created_id;
static atomic_int go, asked, release;
static int a_eq, a_raw, a_self_eq, a_self_raw;
static const void *worker_local;

static void *worker(void *arg) {
    volatile char local = 0;
    test_wait_ge(&go, 1);
    a_eq = lib_is_self(created_id, &a_raw);
    pthread_t ls = lib_self();
    a_self_eq = pthread_equal(ls, created_id) != 0;
    a_self_raw = ls == created_id;
    worker_local = (const void *)&local;
    atomic_store(&asked, 1);
    test_wait_ge(&release, 1); /* alive (and this frame with it) until main is done with it */
    return arg;
}

/* (e): called by the library's thread; `given` is the id the library gave for it. */
static pthread_t given;
static int e_eq = -1, e_raw = -1;

static void callback(void) {
    pthread_t me = pthread_self();
    e_eq = pthread_equal(me, given) != 0;
    e_raw = me == given;
}

int main(void) {
    alarm(60);
    void *lib = dlopen(TC_TEST_LIB, RTLD_NOW | RTLD_LOCAL);
    CHECK(lib != NULL);
    lib_self = (pthread_t(*)(void))dlsym(lib, "lib_self");
    lib_is_self = (int (*)(pthread_t, int *))dlsym(lib, "lib_is_self");
    lib_set_name = (int (*)(pthread_t, const char *))dlsym(lib, "lib_set_name");
    lib_get_name = (int (*)(pthread_t, char *, size_t))dlsym(lib, "lib_get_name");
    lib_kill0 = (int (*)(pthread_t))dlsym(lib, "lib_kill0");
    lib_stack_of = (int (*)(pthread_t, const void *, int *, int *))dlsym(lib, "lib_stack_of");
    lib_start_thread = (int (*)(pthread_t *, void (*)(void)))dlsym(lib, "lib_start_thread");
    lib_join_thread = (int (*)(void))dlsym(lib, "lib_join_thread");
    CHECK(lib_self && lib_is_self && lib_set_name && lib_get_name && lib_kill0 && lib_stack_of &&
          lib_start_thread && lib_join_thread);

    /* (a) */
    pthread_t t;
    CHECK(pthread_create(&t, NULL, worker, NULL) == 0);
    created_id = t;
    atomic_store(&go, 1);
    test_wait_ge(&asked, 1);
    printf("(a) a thread the program created: its id from pthread_create is the library's "
           "pthread_self(): pthread_equal %d, == %d; the library's pthread_self() is that id: "
           "pthread_equal %d, == %d\n",
           a_eq, a_raw, a_self_eq, a_self_raw);

    /* (b) */
    pthread_t me = pthread_self();
    int raw;
    int eq = lib_is_self(me, &raw);
    pthread_t ls = lib_self();
    printf("(b) the main thread: its pthread_self() is the library's: pthread_equal %d, == %d; "
           "the library's is the program's: pthread_equal %d, == %d\n",
           eq, raw, pthread_equal(ls, me) != 0, ls == me);

    /* (c) */
    char name[16] = "";
    int set = lib_set_name(t, "named-by-lib");
    int get = pthread_getname_np(t, name, sizeof name);
    printf("(c) the library names the program's thread: pthread_setname_np %d; the program's "
           "pthread_getname_np %d: \"%s\"\n",
           set, get, name);
    memset(name, 0, sizeof name);
    set = pthread_setname_np(t, "named-by-prog");
    get = lib_get_name(t, name, sizeof name);
    printf("(c) the program names its thread: pthread_setname_np %d; the library's "
           "pthread_getname_np %d: \"%s\"\n",
           set, get, name);

    /* (d) */
    int sized, holds;
    int kill0 = lib_kill0(t);
    int attr = lib_stack_of(t, worker_local, &sized, &holds);
    printf("(d) the program's thread in the library: pthread_kill(id, 0) %d; pthread_getattr_np "
           "%d, stack size > 0: %d, holds the thread's local: %d\n",
           kill0, attr, sized, holds);
    volatile char main_local = 0;
    kill0 = lib_kill0(me);
    attr = lib_stack_of(me, (const void *)&main_local, &sized, &holds);
    printf("(d) the main thread in the library: pthread_kill(id, 0) %d; pthread_getattr_np %d, "
           "stack size > 0: %d, holds main's local: %d\n",
           kill0, attr, sized, holds);
    atomic_store(&release, 1);
    void *ret = (void *)1;
    CHECK(pthread_join(t, &ret) == 0 && ret == NULL);

    /* (e) */
    CHECK(lib_start_thread(&given, callback) == 0);
    int joined = lib_join_thread();
    printf("(e) a thread the library created, calling back into the program: the program's "
           "pthread_self() is the id the library gave: pthread_equal %d, == %d; the library's "
           "pthread_join %d\n",
           e_eq, e_raw, joined);
    return 0;
}
