/* W04 attack: the cleanup registration of a library built without the header (glibc's macros,
 * tests/c/lib/ of the same name, TC_PLAIN_LIBRARY) raced with cancels. Each of 400 threads of the
 * program runs the library's loop (push, read a byte: a point inside the handler's block, pop,
 * pthread_testcancel: a point outside it) on a pipe that always has bytes, and is canceled after
 * a varying number of rounds. Wherever the cancel acts, the handler runs exactly when it acted
 * inside the block (once), never outside it, and the thread ends canceled; nothing is left
 * registered for the next thread (each reuses the stacks of the ones before). Under ASan too.
 *
 * TC_COMPARE_WITH_GLIBC: built through pthread_compat.h with libthread_cancel and against the
 * system's glibc alone; both print the same lines. */
#include <dlfcn.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <unistd.h>
#include "tc_test.h"

struct lib_run {
    int fd;
    atomic_int where;
    atomic_int ran;
    atomic_int bad;
    atomic_long rounds;
};

static void (*lib_loop)(struct lib_run *);

static void *start(void *arg) {
    lib_loop(arg);
    return "lib_loop returned";
}

#define THREADS 400

int main(void) {
    alarm(120);
    void *lib = dlopen(TC_TEST_LIB, RTLD_NOW | RTLD_LOCAL);
    CHECK(lib != NULL);
    lib_loop = (void (*)(struct lib_run *))dlsym(lib, "lib_loop");
    CHECK(lib_loop != NULL);
    int fds[2];
    CHECK(pipe(fds) == 0);
    /* Always readable: a writer thread is not needed if the pipe never runs dry within a round
     * of the test; refilled before each thread. */
    static char bytes[4096];
    int canceled = 0, consistent = 0, once = 0, inside = 0;
    for (int i = 0; i < THREADS; i++) {
        (void)!write(fds[1], bytes, sizeof bytes);
        struct lib_run r = {.fd = fds[0]};
        pthread_t t;
        CHECK(pthread_create(&t, NULL, start, &r) == 0);
        long target = i % 7; /* 0 .. 6 rounds before the cancel */
        while (atomic_load(&r.rounds) < target)
            ;
        for (int spin = 0; spin < (i * 37) % 500; spin++)
            __asm__ volatile("" ::: "memory");
        CHECK(pthread_cancel(t) == 0);
        void *ret;
        CHECK(pthread_join(t, &ret) == 0);
        canceled += ret == PTHREAD_CANCELED;
        int ran = atomic_load(&r.ran), where = atomic_load(&r.where);
        once += ran <= 1;
        consistent += atomic_load(&r.bad) == 0 && (ran == 1) == (where == 1);
        inside += where == 1;
        /* Drain what is left so the next thread starts from a known amount. */
        int fl = fcntl(fds[0], F_GETFL);
        fcntl(fds[0], F_SETFL, fl | O_NONBLOCK);
        char sink[4096];
        while (read(fds[0], sink, sizeof sink) > 0)
            ;
        fcntl(fds[0], F_SETFL, fl);
    }
    /* How the cancels fell (varies from run to run: on stderr). */
    fprintf(stderr, "acted inside the handler's block: %d, outside it: %d\n", inside,
            THREADS - inside);
    printf("%d threads: canceled %d, the handler ran at most once in %d, and exactly when the "
           "cancel acted inside its block in %d\n",
           THREADS, canceled, once, consistent);
    return 0;
}
