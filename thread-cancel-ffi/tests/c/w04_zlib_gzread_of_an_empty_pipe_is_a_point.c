/* W04 with a real C library: a thread blocked in zlib's gzread of an empty pipe (zlib calls the
 * C library's read inside libz.so, built without the compatibility header) is canceled as with
 * glibc: joined with PTHREAD_CANCELED, its cleanup handler ran; the pipe is still open (the
 * cancel did not need it closed), and a byte written after the cancel is still there (the
 * canceled read took nothing).
 *
 * TC_COMPARE_WITH_GLIBC: built through pthread_compat.h with libthread_cancel and against the
 * system's glibc alone; both print the same lines. Through the header, before the library
 * defined the C library's blocking functions, the thread was not canceled: it ended only when
 * the pipe was closed.
 *
 * TC_LINK: -lz */
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <unistd.h>
#include <zlib.h>
#include "tc_test.h"

static int fds[2];
static atomic_int started, handlers, tid;

static void handler(void *arg) {
    (void)arg;
    atomic_fetch_add(&handlers, 1);
}

static void *reader(void *arg) {
    gzFile gz = arg;
    char buf[64];
    int n = 0;
    pthread_cleanup_push(handler, NULL);
    atomic_store(&tid, test_gettid());
    atomic_store(&started, 1);
    n = gzread(gz, buf, sizeof buf);
    pthread_cleanup_pop(0);
    return n > 0 ? "read data" : "read nothing";
}

int main(void) {
    alarm(60);
    CHECK(pipe(fds) == 0);
    int in = dup(fds[0]);
    gzFile gz = gzdopen(in, "rb");
    CHECK(gz != NULL);
    pthread_t t;
    CHECK(pthread_create(&t, NULL, reader, gz) == 0);
    test_wait_ge(&started, 1);
    test_wait_blocked(atomic_load(&tid));
    CHECK(pthread_cancel(t) == 0);
    void *r;
    CHECK(pthread_join(t, &r) == 0);
    CHECK(write(fds[1], "z", 1) == 1);
    char c = 0;
    ssize_t n = read(fds[0], &c, 1);
    printf("gzread of an empty pipe: %s, cleanup handler %d; the byte written after: %s\n",
           r == PTHREAD_CANCELED ? "canceled" : (char *)r, atomic_load(&handlers),
           n == 1 && c == 'z' ? "still there" : "lost");
    gzclose(gz);
    return 0;
}
