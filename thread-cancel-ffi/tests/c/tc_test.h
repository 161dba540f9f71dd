/* Helpers shared by the C test programs (compiled through pthread_compat.h, as a user would). */
#ifndef TC_TEST_H
#define TC_TEST_H

#include <errno.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define CHECK(cond)                                                                     \
    do {                                                                                \
        if (!(cond)) {                                                                  \
            fprintf(stderr, "%s:%d: check failed: %s\n", __FILE__, __LINE__, #cond);    \
            exit(1);                                                                    \
        }                                                                               \
    } while (0)

/* Sleeps `ms` milliseconds with the system's nanosleep (not a cancellation point of ours:
 * the compat header renames only calls written `nanosleep(...)`, so this goes through
 * a function pointer). */
static inline void test_msleep(long ms) {
    int (*sys_nanosleep)(const struct timespec *, struct timespec *) = &nanosleep;
    struct timespec ts = {ms / 1000, (ms % 1000) * 1000000L};
    sys_nanosleep(&ts, NULL);
}

#endif
