/* R18: a thread created without the compatibility header (by a C library compiled without it:
 * here the C library's own pthread_create, sleep and join, reached under names of our own) that
 * has called no mapped function yet is reached through its system pthread_t by the mapped
 * calls that take one, as with glibc: pthread_kill (signal 0 and a real signal, whose handler
 * runs in that thread), names, scheduling parameters. (Before, each answered ESRCH until the
 * thread had called a mapped function.)
 *
 * TC_COMPARE_WITH_GLIBC: the runner also builds this against plain glibc; both print the same. */
#define _GNU_SOURCE
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <string.h>
#include "tc_test.h"

extern int plain_pthread_create(pthread_t *, const pthread_attr_t *, void *(*)(void *),
                                void *) __asm__("pthread_create");
extern int plain_pthread_join(pthread_t, void **) __asm__("pthread_join");
extern pthread_t plain_pthread_self(void) __asm__("pthread_self");
extern int plain_usleep(useconds_t) __asm__("usleep");

static atomic_int started, stop, handled_here;
static pthread_t target;

static void on_usr1(int sig) {
    (void)sig;
    if (pthread_equal(plain_pthread_self(), target)) atomic_store(&handled_here, 1);
}

static void *quiet(void *a) {
    atomic_store(&started, 1);
    while (!atomic_load(&stop)) plain_usleep(1000);
    return a;
}

int main(void) {
    alarm(20);
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_usr1;
    CHECK(sigaction(SIGUSR1, &sa, NULL) == 0);
    CHECK(plain_pthread_create(&target, NULL, quiet, NULL) == 0);
    test_wait_ge(&started, 1);
    printf("kill 0: %d\n", pthread_kill(target, 0));
    printf("kill SIGUSR1: %d\n", pthread_kill(target, SIGUSR1));
    for (int i = 0; i < 2000 && !atomic_load(&handled_here); i++) plain_usleep(1000);
    printf("its handler ran in that thread: %s\n", atomic_load(&handled_here) ? "yes" : "no");
    char name[16] = "";
    int s = pthread_setname_np(target, "quiet-one");
    int g = pthread_getname_np(target, name, sizeof name);
    printf("setname %d, getname %d \"%s\"\n", s, g, name);
    int policy = -1;
    struct sched_param param;
    int p = pthread_getschedparam(target, &policy, &param);
    printf("getschedparam %d, SCHED_OTHER %d, priority %d\n", p, policy == SCHED_OTHER,
           param.sched_priority);
    atomic_store(&stop, 1);
    void *ret = (void *)1;
    int j = plain_pthread_join(target, &ret);
    printf("the C library's join %d, value %s\n", j, ret == NULL ? "NULL" : "not NULL");
    return 0;
}
