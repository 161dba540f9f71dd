/* R24: fopen is a cancellation point (glibc opens with its cancellable
 * open): a thread opening a FIFO that no one opens for writing waits, and is canceled there;
 * join reports PTHREAD_CANCELED and the cleanup handler ran. Then an fopen of the FIFO with a
 * writer present succeeds and reads what was written.
 *
 * TC_COMPARE_WITH_GLIBC: the runner also builds this against plain glibc; both print the same. */
#include <fcntl.h>
#include <pthread.h>
#include <sys/stat.h>
#include <unistd.h>
#include "tc_test.h"

static char path[64];
static atomic_int started, cleaned, tid;

static void cleanup(void *arg) {
    (void)arg;
    atomic_fetch_add(&cleaned, 1);
}

static void *opener(void *arg) {
    (void)arg;
    pthread_cleanup_push(cleanup, NULL);
    atomic_store(&tid, test_gettid());
    atomic_store(&started, 1);
    FILE *f = fopen(path, "r");
    if (f) fclose(f);
    pthread_cleanup_pop(0);
    return (void *)1;
}

int main(void) {
    alarm(60);
    snprintf(path, sizeof path, "/tmp/tc-r24-fifo-%d", (int)getpid());
    CHECK(mkfifo(path, 0600) == 0);
    pthread_t t;
    CHECK(pthread_create(&t, NULL, opener, NULL) == 0);
    while (!atomic_load(&started)) test_msleep(1);
    test_wait_blocked(atomic_load(&tid));
    CHECK(pthread_cancel(t) == 0);
    void *ret;
    CHECK(pthread_join(t, &ret) == 0);
    int ok = ret == PTHREAD_CANCELED && atomic_load(&cleaned) == 1;
    /* With a writer: the open completes. */
    int w = open(path, O_RDWR); /* O_RDWR on a FIFO does not wait (Linux) */
    CHECK(w >= 0);
    CHECK((write)(w, "fifo\n", 5) == 5);
    FILE *f = fopen(path, "r");
    CHECK(f != NULL);
    char buf[16];
    int read_back = fgets(buf, sizeof buf, f) != NULL && strcmp(buf, "fifo\n") == 0;
    fclose(f);
    (close)(w);
    unlink(path);
    printf("fopen of a FIFO: %s; with a writer: %s\n", ok ? "canceled" : "NOT canceled",
           read_back ? "opened and read" : "FAILED");
    return ok && read_back ? 0 : 1;
}
