/* The library half of w04_cleanup_registration_of_code_built_without_the_header_raced_with_cancel.c:
 * built without the compatibility header and without libthread_cancel (TC_PLAIN_LIBRARY). A
 * loop that registers a cleanup handler with glibc's macros (without -fexceptions:
 * __pthread_register_cancel), reads a byte (a point, inside), pops it, and tests for a cancel
 * (a point, outside), until canceled; it records where it was. */
#define _GNU_SOURCE
#include <pthread.h>
#include <stdatomic.h>
#include <unistd.h>

struct lib_run {
    int fd;
    atomic_int where; /* 1: inside the handler's block, 2: outside it */
    atomic_int ran;   /* how many times the handler ran */
    atomic_int bad;   /* the handler ran outside its block */
    atomic_long rounds;
};

static void handler(void *arg) {
    struct lib_run *r = arg;
    atomic_fetch_add(&r->ran, 1);
    if (atomic_load(&r->where) != 1)
        atomic_fetch_add(&r->bad, 1);
}

void lib_loop(struct lib_run *r) {
    for (;;) {
        char c;
        pthread_cleanup_push(handler, r);
        atomic_store(&r->where, 1);
        (void)!read(r->fd, &c, 1);
        atomic_store(&r->where, 2);
        pthread_cleanup_pop(0);
        atomic_fetch_add(&r->rounds, 1);
        pthread_testcancel();
    }
}
