/* Open POSIX Test Suite, pthread_once 1-1 (our own test of the same assertion; the suite's
 * sources are GPL and are not copied here): after the first call with a given once-control has
 * run the init routine, later calls with it do not run it. */
#include <pthread.h>
#include "tc_test.h"

static int runs;

static void init(void) {
    runs++;
}

int main(void) {
    alarm(20);
    pthread_once_t once = PTHREAD_ONCE_INIT; /* an automatic once-control */
    CHECK(pthread_once(&once, init) == 0);
    CHECK(pthread_once(&once, init) == 0);
    CHECK(pthread_once(&once, init) == 0);
    CHECK(runs == 1);
    printf("ok: three calls, one run\n");
    return 0;
}
