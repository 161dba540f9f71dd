/* R24: a thread writing with stdio to a pipe nobody reads blocks once the
 * pipe is full, and is canceled there, as with glibc (whose stdio functions are points because
 * their write(2) is): fprintf, vfprintf, fputs, fwrite, fputc and putc in a loop; printf, puts
 * and putchar to standard output (a full pipe); fflush and fclose of a stream holding data;
 * dprintf. Each case: join reports PTHREAD_CANCELED and the cleanup handler ran.
 *
 * TC_COMPARE_WITH_GLIBC: the runner also builds this against plain glibc; both print the same.
 * R24_CASE=<n> runs case n alone. */
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio_ext.h>
#include <unistd.h>
#include "tc_test.h"

enum kind { K_FPRINTF, K_VFPRINTF, K_FPUTS, K_FWRITE, K_FPUTC, K_PUTC, K_PRINTF, K_PUTS,
            K_PUTCHAR, K_FFLUSH, K_DPRINTF, K_FCLOSE, K_COUNT }; /* fclose last: see below */
static const char *names[K_COUNT] = {"fprintf", "vfprintf", "fputs", "fwrite", "fputc", "putc",
                                     "printf", "puts", "putchar", "fflush", "dprintf", "fclose"};

static FILE *out;
static int outfd;
static atomic_int started, cleaned, tid;
static const char line[] = "a line of text written again and again to a pipe nobody reads\n";

static void cleanup(void *arg) {
    (void)arg;
    atomic_fetch_add(&cleaned, 1);
}

static int call_vfprintf(FILE *f, const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    int r = vfprintf(f, fmt, ap);
    va_end(ap);
    return r;
}

/* Fills the pipe behind `fd` without blocking. */
static void fill(int fd) {
    static char junk[4096];
    int fl = fcntl(fd, F_GETFL);
    CHECK(fcntl(fd, F_SETFL, fl | O_NONBLOCK) == 0);
    while ((write)(fd, junk, sizeof junk) > 0) {
    }
    CHECK(fcntl(fd, F_SETFL, fl) == 0);
}

static void *writer(void *arg) {
    int k = (int)(long)arg;
    static char big[1 << 20];
    pthread_cleanup_push(cleanup, NULL);
    atomic_store(&tid, test_gettid());
    atomic_store(&started, 1);
    switch (k) {
    case K_FPRINTF: for (int i = 0;; i++) fprintf(out, "%d %s", i, line); break;
    case K_VFPRINTF: for (int i = 0;; i++) call_vfprintf(out, "%d %s", i, line); break;
    case K_FPUTS: for (;;) fputs(line, out); break;
    case K_FWRITE: for (;;) fwrite(big, 1, sizeof big, out); break;
    case K_FPUTC: for (;;) fputc('x', out); break;
    case K_PUTC: for (;;) putc('x', out); break;
    case K_PRINTF: for (int i = 0;; i++) printf("%d %s", i, line); break;
    case K_PUTS: for (;;) puts(line); break;
    case K_PUTCHAR: for (;;) putchar('x'); break;
    case K_FFLUSH: fflush(out); break;
    case K_FCLOSE: fclose(out); break;
    case K_DPRINTF: for (int i = 0;; i++) dprintf(outfd, "%d %s", i, line); break;
    }
    pthread_cleanup_pop(0);
    return (void *)1;
}

static int run_case(int k) {
    int p[2], saved = -1;
    CHECK(pipe(p) == 0);
    outfd = p[1];
    if (k == K_PRINTF || k == K_PUTS || k == K_PUTCHAR) {
        fflush(stdout);
        saved = dup(1);
        CHECK(dup2(p[1], 1) == 1);
        out = stdout;
    } else if (k != K_DPRINTF) {
        out = fdopen(p[1], "w");
        CHECK(out != NULL);
    }
    if (k == K_FFLUSH || k == K_FCLOSE) { /* data in the stream, the pipe full */
        CHECK(fputs(line, out) >= 0);
        fill(p[1]);
    }
    atomic_store(&started, 0);
    int before = atomic_load(&cleaned);
    pthread_t t;
    CHECK(pthread_create(&t, NULL, writer, (void *)(long)k) == 0);
    while (!atomic_load(&started)) test_msleep(1);
    test_wait_blocked(atomic_load(&tid));
    CHECK(pthread_cancel(t) == 0);
    void *ret;
    CHECK(pthread_join(t, &ret) == 0);
    (close)(p[0]); /* what the stream still holds now fails with EPIPE (ignored) */
    if (saved >= 0) {
        __fpurge(stdout);
        CHECK(dup2(saved, 1) == 1);
        (close)(saved);
        (close)(p[1]);
    } else if (k == K_DPRINTF) {
        (close)(p[1]);
    } else if (k != K_FCLOSE || ret != PTHREAD_CANCELED) {
        fclose(out);
    } else {
        /* A canceled fclose: the stream's state is unspecified (POSIX); it is not touched
         * (glibc's leaves it half-closed, and a later flush of every stream aborts: this case
         * runs last, and main ends with _exit). */
    }
    int ok = ret == PTHREAD_CANCELED && atomic_load(&cleaned) == before + 1;
    printf("%s: %s\n", names[k], ok ? "canceled" : "NOT canceled");
    return ok;
}

int main(void) {
    alarm(60);
    signal(SIGPIPE, SIG_IGN);
    const char *only = getenv("R24_CASE");
    int failed = 0;
    for (int k = 0; k < K_COUNT; k++) {
        if (only && atoi(only) != k) continue;
        fflush(stdout);
        failed += !run_case(k);
    }
    /* _exit: glibc's exit() flushes every stream and aborts on the one its canceled fclose
     * left half-closed ("invalid stdio handle"). */
    fflush(stdout);
    _exit(failed ? 1 : 0);
}
