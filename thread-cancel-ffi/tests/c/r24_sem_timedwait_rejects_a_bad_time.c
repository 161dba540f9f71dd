/* R24: sem_timedwait with an invalid absolute time fails with EINVAL at once (it neither waits
 * nor spins), as glibc's does; with a time already past it times out. */
#include <pthread.h>
#include <semaphore.h>
#include "tc_test.h"

int main(void) {
    alarm(20);
    sem_t s;
    CHECK(sem_init(&s, 0, 0) == 0);
    struct timespec bad = {0, 2000000000L};
    errno = 0;
    CHECK(sem_timedwait(&s, &bad) == -1 && errno == EINVAL);
    struct timespec past = {1, 0};
    errno = 0;
    CHECK(sem_timedwait(&s, &past) == -1 && errno == ETIMEDOUT);
    CHECK(sem_post(&s) == 0);
    CHECK(sem_timedwait(&s, &past) == 0); /* a token is taken even with the time past */
    printf("ok: EINVAL for tv_nsec out of range, ETIMEDOUT for a past time, a token still taken\n");
    return 0;
}
