/* R10: a canceled read either returned its data or had no effect — never both.
 *
 * Each race: a thread blocks in read(2) on an empty pipe; main writes one byte and cancels the
 * thread at once. Afterwards every byte written must be accounted for: returned by the read, or
 * still in the pipe. Built twice by the test runner: through pthread_compat.h (ours: 0 bytes
 * lost, or the program fails) and, with TC_PLAIN_GLIBC, against the system's glibc alone (its
 * losses are printed for comparison, not failed on). R10_RACES sets the count (default 2000),
 * R10_SECONDS a time after which it stops early (the line gives the count that ran).
 * Another program may include this one with R10_READ (the read call), R10_DEFAULT_RACES,
 * R10_ALARM and R10_WHO (the name its line gives ours) defined first. */
#include <fcntl.h>
#include <pthread.h>
#include <unistd.h>
#include "tc_test.h"

#ifndef R10_READ
#define R10_READ read
#endif
#ifndef R10_DEFAULT_RACES
#define R10_DEFAULT_RACES 2000
#endif
#ifndef R10_ALARM
#define R10_ALARM 120
#endif
#ifndef R10_WHO
#define R10_WHO "thread-cancel"
#endif

struct race {
    int fd;
    atomic_int started;
    atomic_long returned; /* bytes the read returned to the thread */
};

static void *reader(void *arg) {
    struct race *r = arg;
    char b;
    atomic_store(&r->started, 1);
    ssize_t n = R10_READ(r->fd, &b, 1);
    if (n > 0) atomic_fetch_add(&r->returned, n);
    return NULL;
}

int main(void) {
    alarm(R10_ALARM);
    const char *env = getenv("R10_RACES");
    long races = env ? atol(env) : R10_DEFAULT_RACES;
    /* R10_SECONDS: stop early once that much time has passed (a long run beside a CPU load,
     * where each thread's start and end waits for a time slice); the line says how many ran. */
    const char *budget = getenv("R10_SECONDS");
    struct timespec start;
    clock_gettime(CLOCK_MONOTONIC, &start);
    long written = 0, returned = 0, left = 0, lossy_races = 0, canceled = 0;
    for (long i = 0; i < races; i++) {
        if (budget && i % 16 == 0) {
            struct timespec now;
            clock_gettime(CLOCK_MONOTONIC, &now);
            if (now.tv_sec - start.tv_sec >= atol(budget)) {
                races = i;
                break;
            }
        }
        int p[2];
        CHECK(pipe(p) == 0);
        struct race r = {.fd = p[0]};
        pthread_t t;
        CHECK(pthread_create(&t, NULL, reader, &r) == 0);
        while (!atomic_load(&r.started)) sched_yield();
        if (i % 4 == 0) test_msleep(0); /* vary the moment: sometimes already blocked */
        /* Vary the order too: the cancel lands before, with or after the data. */
        int cancel_first = i % 3 == 0;
        int rc = 0;
        if (cancel_first) rc = pthread_cancel(t);
        for (volatile int spin = 0; spin < (int)(i % 7) * 200; spin++) {
        }
        CHECK((write)(p[1], "x", 1) == 1); /* (write): the system's, not a point */
        written += 1;
        if (!cancel_first) rc = pthread_cancel(t);
        CHECK(rc == 0 || rc == ESRCH); /* ESRCH (ours) if the thread already ended (R18) */
        void *ret;
        CHECK(pthread_join(t, &ret) == 0);
        if (ret == PTHREAD_CANCELED) canceled++;
        CHECK(fcntl(p[0], F_SETFL, O_NONBLOCK) == 0);
        char b;
        long still = 0;
        while ((read)(p[0], &b, 1) == 1) still++;
        long got = atomic_load(&r.returned);
        returned += got;
        left += still;
        if (got + still != 1) lossy_races++;
        (close)(p[0]);
        (close)(p[1]);
    }
    long lost = written - returned - left;
#ifdef TC_PLAIN_GLIBC
    const char *who = "glibc pthread_cancel";
#else
    const char *who = R10_WHO;
#endif
    printf("%s: %ld races, %ld canceled, %ld bytes written = %ld returned + %ld left + %ld lost "
           "(%ld races lost data, %.2f%%)\n",
           who, races, canceled, written, returned, left, lost, lossy_races,
           100.0 * (double)lossy_races / (double)races);
#ifndef TC_PLAIN_GLIBC
    CHECK(lost == 0);
#endif
    return 0;
}
