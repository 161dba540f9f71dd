/* The glibc side of the thread-cancel benchmarks: thin functions that call glibc directly, so
 * that a benchmark measures glibc itself side by side with thread-cancel in the same run.
 *
 * Loops live here, in C, so one FFI call is amortised over many glibc calls. */

#include <pthread.h>
#include <stddef.h>

/* One pthread_testcancel(): a cancellation point with (normally) nothing pending. */
void glibc_testcancel(void) {
    pthread_testcancel();
}

/* pthread_testcancel() n times. pthread_testcancel is an external call into libc.so that reads
 * the thread's cancelhandling word, so the compiler can neither drop nor merge the calls. */
void glibc_testcancel_n(unsigned long n) {
    for (unsigned long i = 0; i < n; i++) {
        pthread_testcancel();
    }
}

static void *empty_start(void *arg) {
    return arg;
}

/* pthread_create with default attributes and an empty start routine, then pthread_join.
 * Returns 0, or the error number of whichever call failed. */
int glibc_spawn_join(void) {
    pthread_t t;
    int rc = pthread_create(&t, NULL, empty_start, NULL);
    if (rc != 0) {
        return rc;
    }
    return pthread_join(t, NULL);
}
