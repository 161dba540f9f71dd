/* stdio on a descriptor with O_NONBLOCK does not wait: the C library's own read(2) or write(2)
 * fails with EAGAIN at once, and the call reports it as glibc does (its result, errno, the
 * stream's error flag). Input: fgets, fgetc, getc, fread, getline on an empty non-blocking
 * pipe, then a line that arrives is read whole; output: fputs and fwrite to an unbuffered
 * stream on a full non-blocking pipe, and fflush of a buffered one. The flag is read at each
 * call: a descriptor made blocking again waits (and here gets its data).
 *
 * TC_COMPARE_WITH_GLIBC: the runner also builds this against plain glibc; both print the same. */
#include <fcntl.h>
#include <pthread.h>
#include <unistd.h>
#include "tc_test.h"

static void set_nonblock(int fd, int on) {
    int fl = fcntl(fd, F_GETFL);
    CHECK(fl >= 0);
    CHECK(fcntl(fd, F_SETFL, on ? fl | O_NONBLOCK : fl & ~O_NONBLOCK) == 0);
}

static void report(const char *what, long rc) {
    int e = errno;
    printf("%s: %ld, %s\n", what, rc, e == EAGAIN ? "EAGAIN" : e == 0 ? "no error" : strerror(e));
}

static int late_fd;

static void *late_writer(void *arg) {
    (void)arg;
    test_msleep(100);
    CHECK(write(late_fd, "late\n", 5) == 5);
    return NULL;
}

int main(void) {
    alarm(60);
    int p[2];
    CHECK(pipe(p) == 0);
    set_nonblock(p[0], 1);
    FILE *in = fdopen(p[0], "r");
    CHECK(in != NULL);
    char buf[64];

    errno = 0;
    report("fgets on an empty pipe", fgets(buf, sizeof buf, in) != NULL);
    printf("  ferror %d feof %d\n", ferror(in) != 0, feof(in) != 0);
    clearerr(in);
    errno = 0;
    report("fgetc on an empty pipe", fgetc(in));
    printf("  ferror %d\n", ferror(in) != 0);
    clearerr(in);
    errno = 0;
    report("getc on an empty pipe", getc(in));
    clearerr(in);
    errno = 0;
    report("fread on an empty pipe", (long)fread(buf, 1, 10, in));
    printf("  ferror %d\n", ferror(in) != 0);
    clearerr(in);
    char *line = NULL;
    size_t cap = 0;
    errno = 0;
    report("getline on an empty pipe", (long)getline(&line, &cap, in));
    clearerr(in);

    CHECK(write(p[1], "data\n", 5) == 5);
    errno = 0;
    CHECK(fgets(buf, sizeof buf, in) != NULL);
    printf("then fgets: %s", buf);
    errno = 0;
    report("fgets after the line", fgets(buf, sizeof buf, in) != NULL);
    clearerr(in);

    /* Blocking again: fgets waits for the line a thread writes later. */
    set_nonblock(p[0], 0);
    late_fd = p[1];
    pthread_t t;
    CHECK(pthread_create(&t, NULL, late_writer, NULL) == 0);
    CHECK(fgets(buf, sizeof buf, in) != NULL);
    printf("blocking again, fgets waited for: %s", buf);
    CHECK(pthread_join(t, NULL) == 0);

    /* Output to a full non-blocking pipe. */
    int q[2];
    CHECK(pipe(q) == 0);
    set_nonblock(q[1], 1);
    static char fill[65536];
    while (write(q[1], fill, sizeof fill) > 0) {
    }
    while (write(q[1], fill, 1) > 0) {
    }
    FILE *out = fdopen(q[1], "w");
    CHECK(out != NULL);
    CHECK(setvbuf(out, NULL, _IONBF, 0) == 0);
    errno = 0;
    report("unbuffered fputs to a full pipe", fputs("abc", out));
    printf("  ferror %d\n", ferror(out) != 0);
    clearerr(out);
    errno = 0;
    report("unbuffered fputc to a full pipe", fputc('x', out));
    clearerr(out);
    errno = 0;
    report("unbuffered fwrite to a full pipe", (long)fwrite("abcdef", 1, 6, out));
    printf("  ferror %d\n", ferror(out) != 0);
    clearerr(out);

    FILE *bout = fdopen(dup(q[1]), "w");
    CHECK(bout != NULL);
    errno = 0;
    report("buffered fputs to a full pipe", fputs("abc", bout));
    errno = 0;
    report("buffered fflush to a full pipe", fflush(bout));
    printf("  ferror %d\n", ferror(bout) != 0);
    clearerr(bout);
    /* Drain: the failed write dropped the buffered bytes (glibc's stdio does). */
    set_nonblock(q[0], 1);
    while (read(q[0], fill, sizeof fill) > 0) {
    }
    errno = 0;
    report("fflush after the reader drained", fflush(bout));
    printf("the reader then got %ld bytes\n", (long)read(q[0], buf, sizeof buf));
    free(line);
    return 0;
}
