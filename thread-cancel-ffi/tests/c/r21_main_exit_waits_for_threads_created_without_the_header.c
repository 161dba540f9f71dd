/* R21: main's pthread_exit ends main only; the process lives on until its last thread ends, as
 * with glibc, also when the threads still running were created without the compatibility
 * header (by a C library compiled without it, libstdc++'s std::thread: here the C library's own
 * pthread_create, reached under a name of our own). One such thread calls a mapped function
 * (usleep), one only the C library's own; both print once main has ended, the first 200 ms
 * after, the second 200 ms after the first has printed (it waits for the first's flag, so the
 * two lines come in this order however late either thread runs). (Before, the last exit(0) ran
 * as soon as no thread created through the header was left, and ended them.)
 *
 * TC_COMPARE_WITH_GLIBC: the runner also builds this against plain glibc; both print the same. */
#include <pthread.h>
#include <time.h>
#include "tc_test.h"

/* The C library's own functions, whatever the header maps (as a library built without it). */
extern int plain_pthread_create(pthread_t *, const pthread_attr_t *, void *(*)(void *),
                                void *) __asm__("pthread_create");
extern int plain_nanosleep(const struct timespec *, struct timespec *) __asm__("nanosleep");

static atomic_int main_ended, first_printed;

static void *calls_a_mapped_function(void *a) {
    while (!atomic_load(&main_ended)) usleep(1000);
    usleep(200 * 1000);
    printf("a thread created without the header, which calls usleep, ends\n");
    fflush(stdout);
    atomic_store(&first_printed, 1);
    return a;
}

static void *calls_only_the_c_library(void *a) {
    struct timespec ms = {0, 1000 * 1000};
    while (!atomic_load(&first_printed)) plain_nanosleep(&ms, NULL);
    struct timespec later = {0, 200 * 1000 * 1000}; /* the last thread left, for a while */
    plain_nanosleep(&later, NULL);
    printf("a thread created without the header, which calls the C library only, ends\n");
    fflush(stdout);
    return a;
}

int main(void) {
    alarm(20);
    pthread_attr_t detached;
    CHECK(pthread_attr_init(&detached) == 0);
    CHECK(pthread_attr_setdetachstate(&detached, PTHREAD_CREATE_DETACHED) == 0);
    pthread_t t;
    CHECK(plain_pthread_create(&t, &detached, calls_a_mapped_function, NULL) == 0);
    CHECK(plain_pthread_create(&t, &detached, calls_only_the_c_library, NULL) == 0);
    printf("main ends with pthread_exit\n");
    fflush(stdout);
    atomic_store(&main_ended, 1);
    pthread_exit(NULL);
}
