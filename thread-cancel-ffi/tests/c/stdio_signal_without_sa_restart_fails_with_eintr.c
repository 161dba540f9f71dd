/* stdio and a signal handler installed without SA_RESTART: a call blocked on its descriptor
 * fails with EINTR when the handler returns, as glibc's read(2) or write(2) inside it does
 * (the classic alarm() timeout idiom): fgets, fgetc, getline and fread on an empty pipe,
 * fputs to a full pipe; the result, errno and the stream's error flag are glibc's. With
 * SA_RESTART the call goes on after the handler and returns the data that comes later.
 *
 * TC_COMPARE_WITH_GLIBC: the runner also builds this against plain glibc; both print the same. */
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <sys/time.h>
#include <unistd.h>
#include "tc_test.h"

static atomic_int alarms;

static void on_alarm(int sig) {
    (void)sig;
    atomic_fetch_add(&alarms, 1);
}

static void handle(int flags) {
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_alarm;
    sa.sa_flags = flags;
    sigemptyset(&sa.sa_mask);
    CHECK(sigaction(SIGALRM, &sa, NULL) == 0);
}

/* SIGALRM every 100 ms until the call returns (the process's timer: only the main thread
 * leaves SIGALRM unblocked), so that a loaded machine that reaches the call late still sees
 * it interrupted. */
static void arm(void) {
    atomic_store(&alarms, 0);
    struct itimerval it = {{0, 100 * 1000}, {0, 100 * 1000}};
    CHECK(setitimer(ITIMER_REAL, &it, NULL) == 0);
}

static void report(const char *what, long rc, FILE *f) {
    int e = errno;
    struct itimerval off = {{0, 0}, {0, 0}};
    CHECK(setitimer(ITIMER_REAL, &off, NULL) == 0);
    printf("%s: %ld, %s, ferror %d, handler ran %s\n", what, rc,
           e == EINTR ? "EINTR" : e == 0 ? "no error" : strerror(e), ferror(f) != 0,
           atomic_load(&alarms) > 0 ? "yes" : "no");
    clearerr(f);
}

static int late_fd;

static void *watchdog(void *arg) {
    (void)arg;
    for (int i = 0; i < 300; i++) test_msleep(100);
    fprintf(stderr, "a stdio call did not return in 30 s\n");
    _exit(1);
}

/* Writes a line once the handler has run (the reader was interrupted, and restarted). */
static void *late_writer(void *arg) {
    (void)arg;
    test_wait_ge(&alarms, 2);
    CHECK(write(late_fd, "late\n", 5) == 5);
    return NULL;
}

/* A thread that never takes SIGALRM. */
static pthread_t start(void *(*fn)(void *)) {
    sigset_t s, old;
    sigemptyset(&s);
    sigaddset(&s, SIGALRM);
    CHECK(pthread_sigmask(SIG_BLOCK, &s, &old) == 0);
    pthread_t t;
    CHECK(pthread_create(&t, NULL, fn, NULL) == 0);
    CHECK(pthread_sigmask(SIG_SETMASK, &old, NULL) == 0);
    return t;
}

int main(void) {
    start(watchdog);
    int p[2];
    CHECK(pipe(p) == 0);
    FILE *in = fdopen(p[0], "r");
    CHECK(in != NULL);
    char buf[64];
    handle(0);

    arm();
    errno = 0;
    report("fgets", fgets(buf, sizeof buf, in) != NULL, in);
    arm();
    errno = 0;
    report("fgetc", fgetc(in), in);
    arm();
    errno = 0;
    report("getc", getc(in), in);
    char *line = NULL;
    size_t cap = 0;
    arm();
    errno = 0;
    report("getline", (long)getline(&line, &cap, in), in);
    arm();
    errno = 0;
    report("fread", (long)fread(buf, 1, 4, in), in);
    /* A partial line, then the signal: fgets fails (glibc drops what it had read). */
    CHECK(write(p[1], "par", 3) == 3);
    arm();
    errno = 0;
    report("fgets of a partial line", fgets(buf, sizeof buf, in) != NULL, in);

    /* With SA_RESTART: the handler runs, the call goes on and gets the late line. */
    handle(SA_RESTART);
    late_fd = p[1];
    arm();
    pthread_t t = start(late_writer);
    errno = 0;
    char *got = fgets(buf, sizeof buf, in);
    report("fgets with SA_RESTART", got != NULL, in);
    if (got) printf("  got %s", buf);
    CHECK(pthread_join(t, NULL) == 0);
    handle(0);

    /* Output: a full pipe (its writer blocking again), an unbuffered stream. */
    int q[2];
    CHECK(pipe(q) == 0);
    int fl = fcntl(q[1], F_GETFL);
    CHECK(fcntl(q[1], F_SETFL, fl | O_NONBLOCK) == 0);
    static char fill[65536];
    while (write(q[1], fill, sizeof fill) > 0) {
    }
    while (write(q[1], fill, 1) > 0) {
    }
    CHECK(fcntl(q[1], F_SETFL, fl) == 0);
    FILE *out = fdopen(q[1], "w");
    CHECK(out != NULL);
    CHECK(setvbuf(out, NULL, _IONBF, 0) == 0);
    arm();
    errno = 0;
    report("fputs to a full pipe", fputs("abc", out), out);
    arm();
    errno = 0;
    report("fputc to a full pipe", fputc('x', out), out);
    FILE *bout = fdopen(dup(q[1]), "w");
    CHECK(bout != NULL);
    CHECK(fputs("abc", bout) >= 0);
    arm();
    errno = 0;
    report("fflush to a full pipe", fflush(bout), bout);
    free(line);
    return 0;
}
