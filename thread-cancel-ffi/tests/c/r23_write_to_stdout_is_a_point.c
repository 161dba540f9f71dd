/* R23: writing to standard output is a cancellation point. In C that is write(STDOUT_FILENO)
 * (renamed by the compat header); printf's own writes happen inside glibc and are not renamed,
 * so a C program that needs a cancelable stdout writes with write(2).
 *
 * Standard output is pointed at a full pipe, a thread blocks writing a line to it, and is
 * canceled: join reports PTHREAD_CANCELED, its cleanup ran, and the pipe holds only what was
 * there before (the canceled write wrote nothing). */
#include <fcntl.h>
#include <pthread.h>
#include <unistd.h>
#include "tc_test.h"

static atomic_int cleaned;

static void cleanup(void *arg) {
    (void)arg;
    atomic_store(&cleaned, 1);
}

static void *writer(void *arg) {
    (void)arg;
    pthread_cleanup_push(cleanup, NULL);
    const char line[] = "a line to stdout\n";
    write(STDOUT_FILENO, line, sizeof line - 1); /* blocks: the pipe is full */
    pthread_cleanup_pop(0);
    return NULL;
}

int main(void) {
    alarm(20);
    int saved = dup(STDOUT_FILENO);
    CHECK(saved >= 0);
    int p[2];
    CHECK(pipe(p) == 0);
    CHECK(fcntl(p[1], F_SETFL, O_NONBLOCK) == 0);
    long filled = 0;
    char block[4096] = {0};
    for (;;) {
        ssize_t n = (write)(p[1], block, sizeof block);
        if (n < 0) break;
        filled += n;
    }
    for (;;) { /* the last bytes, one at a time */
        ssize_t n = (write)(p[1], block, 1);
        if (n < 0) break;
        filled += n;
    }
    CHECK(fcntl(p[1], F_SETFL, 0) == 0);
    CHECK(dup2(p[1], STDOUT_FILENO) == STDOUT_FILENO);
    pthread_t t;
    CHECK(pthread_create(&t, NULL, writer, NULL) == 0);
    test_msleep(50);
    CHECK(pthread_cancel(t) == 0);
    void *ret;
    CHECK(pthread_join(t, &ret) == 0);
    CHECK(dup2(saved, STDOUT_FILENO) == STDOUT_FILENO);
    CHECK(ret == PTHREAD_CANCELED);
    CHECK(atomic_load(&cleaned) == 1);
    CHECK(fcntl(p[0], F_SETFL, O_NONBLOCK) == 0);
    long drained = 0;
    for (;;) {
        ssize_t n = (read)(p[0], block, sizeof block);
        if (n <= 0) break;
        drained += n;
    }
    CHECK(drained == filled);
    printf("ok: a write to a full stdout was canceled; %ld bytes in the pipe before and after\n", drained);
    return 0;
}
