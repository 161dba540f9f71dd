/* Open POSIX Test Suite, pthread_once 4-1 (our own test of the same assertion; the suite's is
 * build-only): PTHREAD_ONCE_INIT, from <pthread.h>, initialises a once-control with static
 * storage duration, which then works with pthread_once. */
#include <pthread.h>
#include "tc_test.h"

pthread_once_t global_once = PTHREAD_ONCE_INIT;
static pthread_once_t file_once = PTHREAD_ONCE_INIT;
static int runs;

static void init(void) {
    runs++;
}

int main(void) {
    alarm(20);
    static pthread_once_t local_once = PTHREAD_ONCE_INIT;
    CHECK(pthread_once(&global_once, init) == 0 && pthread_once(&global_once, init) == 0);
    CHECK(pthread_once(&file_once, init) == 0 && pthread_once(&file_once, init) == 0);
    CHECK(pthread_once(&local_once, init) == 0 && pthread_once(&local_once, init) == 0);
    CHECK(runs == 3);
    printf("ok: static once-controls initialised with PTHREAD_ONCE_INIT\n");
    return 0;
}
