/* R24: a thread blocked in a stdio read on an empty pipe is canceled, as
 * with glibc (whose stdio functions are points because their read(2) is): fgets, fread, getc,
 * fgetc, getchar, getline, getdelim, fscanf, scanf, getc_unlocked. Each case: join reports PTHREAD_CANCELED,
 * the cleanup handler ran, and the stream's lock was released (main reads the stream after).
 *
 * TC_COMPARE_WITH_GLIBC: the runner also builds this against plain glibc; both print the same.
 * R24_CASE=<n> runs case n alone. */
#include <pthread.h>
#include <unistd.h>
#include "tc_test.h"

enum kind { K_FGETS, K_FREAD, K_GETC, K_FGETC, K_GETCHAR, K_GETLINE, K_GETDELIM, K_FSCANF,
            K_SCANF, K_GETC_UNLOCKED, K_COUNT };
static const char *names[K_COUNT] = {"fgets", "fread", "getc", "fgetc", "getchar", "getline",
                                     "getdelim", "fscanf", "scanf", "getc_unlocked"};

static FILE *in;
static atomic_int started, cleaned, tid;

static void cleanup(void *arg) {
    (void)arg;
    atomic_fetch_add(&cleaned, 1);
}

static void unlock_in(void *arg) {
    (void)arg;
    funlockfile(in);
}

static void free_line(void *line) {
    free(*(char **)line);
}

static void *reader(void *arg) {
    int k = (int)(long)arg;
    char buf[64];
    char *line = NULL;
    size_t cap = 0;
    int x;
    pthread_cleanup_push(cleanup, NULL);
    pthread_cleanup_push(free_line, &line);
    atomic_store(&tid, test_gettid());
    atomic_store(&started, 1);
    switch (k) {
    case K_FGETS: fgets(buf, sizeof buf, in); break;
    case K_FREAD: x = (int)fread(buf, 1, sizeof buf, in); break;
    case K_GETC: x = getc(in); break;
    case K_FGETC: x = fgetc(in); break;
    case K_GETCHAR: x = getchar(); break;
    case K_GETLINE: getline(&line, &cap, in); break;
    case K_GETDELIM: getdelim(&line, &cap, ';', in); break;
    case K_FSCANF: x = fscanf(in, "%d", &x); break;
    case K_SCANF: x = scanf("%d", &x); break;
    case K_GETC_UNLOCKED:
        flockfile(in); /* the caller's lock: its own cleanup handler releases it */
        pthread_cleanup_push(unlock_in, NULL);
        x = getc_unlocked(in);
        pthread_cleanup_pop(1);
        break;
    }
    (void)x;
    pthread_cleanup_pop(1);
    pthread_cleanup_pop(0);
    return (void *)1;
}

static int run_case(int k) {
    int p[2];
    CHECK(pipe(p) == 0);
    if (k == K_GETCHAR || k == K_SCANF) {
        CHECK(dup2(p[0], 0) == 0);
        in = stdin;
    } else {
        in = fdopen(p[0], "r");
        CHECK(in != NULL);
    }
    atomic_store(&started, 0);
    int before = atomic_load(&cleaned);
    pthread_t t;
    CHECK(pthread_create(&t, NULL, reader, (void *)(long)k) == 0);
    while (!atomic_load(&started)) test_msleep(1);
    test_wait_blocked(atomic_load(&tid));
    CHECK(pthread_cancel(t) == 0);
    void *ret;
    CHECK(pthread_join(t, &ret) == 0);
    /* The stream is usable (its lock was released): main reads what is written now. */
    CHECK((write)(p[1], "7\n", 2) == 2);
    char buf[8];
    int usable = fgets(buf, sizeof buf, in) != NULL && strcmp(buf, "7\n") == 0;
    int ok = ret == PTHREAD_CANCELED && atomic_load(&cleaned) == before + 1;
    printf("%s: %s, stream %s\n", names[k], ok ? "canceled" : "NOT canceled",
           usable ? "usable" : "NOT usable");
    if (in != stdin) fclose(in);
    (close)(p[1]);
    return ok && usable;
}

int main(void) {
    alarm(60);
    const char *only = getenv("R24_CASE");
    int failed = 0;
    for (int k = 0; k < K_COUNT; k++) {
        if (only && atoi(only) != k) continue;
        fflush(stdout);
        failed += !run_case(k);
    }
    return failed ? 1 : 0;
}
