/* pthread_create through the header gives a thread an executable stack where the program needs
 * one, as glibc does for its own stacks. A GCC nested function whose address is taken runs
 * through a trampoline written on the stack; the compiler marks the object as needing an
 * executable stack (PT_GNU_STACK RWE), and glibc maps every thread stack PROT_EXEC for such a
 * program. The threads created through the header run on stacks the library maps itself (so that
 * their ids are never reused): those must be executable too.
 *
 * TC_COMPARE_WITH_GLIBC: both print the same line. Before (the library's stacks mapped read and
 * write only): the thread died of SIGSEGV at the trampoline. */
#include <pthread.h>
#include <stdio.h>
#include "tc_test.h"

/* Not inlined, and through a volatile pointer: the call goes through the trampoline. */
__attribute__((noinline)) static int apply(int (*volatile f)(int), int x) { return f(x); }

static void *work(void *arg) {
    int base = *(int *)arg;
    int add(int x) { return x + base; }
    printf("a nested function on the created thread's stack: %d\n", apply(add, 1));
    return NULL;
}

int main(void) {
    alarm(60);
    int base = 41;
    pthread_t t;
    CHECK(pthread_create(&t, NULL, work, &base) == 0);
    CHECK(pthread_join(t, NULL) == 0);
    return 0;
}
