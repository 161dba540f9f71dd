/* Open POSIX Test Suite, pthread_once 1-2 (our own test of the same assertion): the first call
 * with a given once-control runs the init routine, which has run when the call returns 0. */
#include <pthread.h>
#include "tc_test.h"

static int ran;

static void init(void) {
    ran = 1;
}

int main(void) {
    alarm(20);
    pthread_once_t once = PTHREAD_ONCE_INIT;
    CHECK(pthread_once(&once, init) == 0);
    CHECK(ran == 1);
    printf("ok: the first call ran the init routine\n");
    return 0;
}
