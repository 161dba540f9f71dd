/* R24 + R10 for stdio: a canceled stdio read took nothing from the stream. The
 * bytes a canceled fgets, fread or getline had already taken (a partial line, a partial
 * record, a line longer than the stream's buffer) are pushed back, so the next read of the
 * stream gets them; and in races of cancel against the arrival of a line, every line written
 * is either returned by the canceled thread's fgets or read from the stream afterwards, exactly
 * once. (glibc loses such bytes: POSIX leaves a canceled stream's state unspecified, so this
 * is a guarantee of ours, not compared with glibc.) Last, four readers share one stream while
 * lines arrive in two pieces, and all four are canceled each round: every line is received
 * once, whole (glibc hands a later reader the second half of a line a canceled fgets had
 * begun). R10_STDIO_RACES sets the races (300) and the rounds (a tenth of that). */
#include <pthread.h>
#include <unistd.h>
#include "tc_test.h"

enum kind { K_FGETS, K_FREAD, K_GETLINE_LONG };

static FILE *in;
static atomic_int started, tid;
static char got[16384];
static atomic_int returned;

static atomic_long shared_got;

/* A reader of the shared stream: counts whole lines until end of file; a torn line fails. */
static void *line_counter(void *arg) {
    (void)arg;
    char b[64];
    while (fgets(b, sizeof b, in)) {
        if (strcmp(b, "line\n") != 0) {
            fprintf(stderr, "a reader got a torn line: [%s]\n", b);
            exit(1);
        }
        atomic_fetch_add(&shared_got, 1);
    }
    return NULL;
}

/* The caller owns getline's buffer, canceled or not: a cleanup handler frees it. */
static void free_line(void *p) {
    free(*(char **)p);
}

static void *reader(void *arg) {
    int k = (int)(long)arg;
    atomic_store(&tid, test_gettid());
    atomic_store(&started, 1);
    char *line = NULL;
    size_t cap = 0;
    switch (k) {
    case K_FGETS:
        if (fgets(got, sizeof got, in)) atomic_store(&returned, 1);
        break;
    case K_FREAD:
        if (fread(got, 1, 10, in) == 10) atomic_store(&returned, 1);
        break;
    case K_GETLINE_LONG:
        pthread_cleanup_push(free_line, &line);
        if (getline(&line, &cap, in) > 0) atomic_store(&returned, 1);
        pthread_cleanup_pop(1);
        break;
    }
    return NULL;
}

/* Starts a reader of kind `k`, waits until it blocks, cancels it; returns the join value. */
static void *cancel_blocked(int k) {
    atomic_store(&started, 0);
    atomic_store(&returned, 0);
    pthread_t t;
    CHECK(pthread_create(&t, NULL, reader, (void *)(long)k) == 0);
    while (!atomic_load(&started)) test_msleep(1);
    test_wait_blocked(atomic_load(&tid));
    CHECK(pthread_cancel(t) == 0);
    void *ret;
    CHECK(pthread_join(t, &ret) == 0);
    return ret;
}

int main(void) {
    alarm(120);
    int p[2];
    CHECK(pipe(p) == 0);
    in = fdopen(p[0], "r");
    CHECK(in != NULL);
    char buf[16384];

    /* A partial line: fgets took "abc" and waits for the rest. */
    CHECK((write)(p[1], "abc", 3) == 3);
    CHECK(cancel_blocked(K_FGETS) == PTHREAD_CANCELED);
    CHECK((write)(p[1], "\n", 1) == 1);
    CHECK(fgets(buf, sizeof buf, in) && strcmp(buf, "abc\n") == 0);

    /* A partial record: fread took 5 of 10 bytes. */
    CHECK((write)(p[1], "12345", 5) == 5);
    CHECK(cancel_blocked(K_FREAD) == PTHREAD_CANCELED);
    CHECK((write)(p[1], "67890", 5) == 5);
    CHECK(fread(buf, 1, 10, in) == 10 && memcmp(buf, "1234567890", 10) == 0);

    /* A line longer than the stream's buffer: taken over several refills, all pushed back. */
    static char longline[10001];
    for (int i = 0; i < 10000; i++) longline[i] = (char)('a' + i % 26);
    CHECK((write)(p[1], longline, 10000) == 10000);
    CHECK(cancel_blocked(K_GETLINE_LONG) == PTHREAD_CANCELED);
    CHECK((write)(p[1], "\n", 1) == 1);
    char *line = NULL;
    size_t cap = 0;
    CHECK(getline(&line, &cap, in) == 10001 && memcmp(line, longline, 10000) == 0);
    free(line);
    printf("partial line, partial record, long line: pushed back\n");
    fclose(in);
    (close)(p[1]);

    /* Races: a line arrives as the cancel does. */
    const char *env = getenv("R10_STDIO_RACES");
    long races = env ? atol(env) : 300, canceled = 0, by_thread = 0, left = 0;
    for (long i = 0; i < races; i++) {
        CHECK(pipe(p) == 0);
        in = fdopen(p[0], "r");
        atomic_store(&started, 0);
        atomic_store(&returned, 0);
        pthread_t t;
        CHECK(pthread_create(&t, NULL, reader, (void *)(long)K_FGETS) == 0);
        while (!atomic_load(&started)) sched_yield();
        if (i % 3 == 0) CHECK(pthread_cancel(t) == 0);
        for (volatile int spin = 0; spin < (int)(i % 7) * 300; spin++) {
        }
        CHECK((write)(p[1], "line\n", 5) == 5);
        if (i % 3 != 0) {
            int rc = pthread_cancel(t);
            CHECK(rc == 0 || rc == ESRCH);
        }
        void *ret;
        CHECK(pthread_join(t, &ret) == 0);
        canceled += ret == PTHREAD_CANCELED;
        (close)(p[1]);
        int thread_got = atomic_load(&returned) && strcmp(got, "line\n") == 0;
        int rest = 0;
        while (fgets(buf, sizeof buf, in)) rest += strcmp(buf, "line\n") == 0 ? 1 : 100;
        if (thread_got + rest != 1) {
            fprintf(stderr, "race %ld: thread %d + stream %d lines\n", i, thread_got, rest);
            return 1;
        }
        by_thread += thread_got;
        left += rest;
        fclose(in);
    }
    printf("%ld races (%ld canceled): every line once (%ld by the thread, %ld left in the "
           "stream)\n", races, canceled, by_thread, left);

    CHECK(pipe(p) == 0);
    in = fdopen(p[0], "r");
    long lines = 0, rounds = races / 10 > 0 ? races / 10 : 1;
    for (long round = 0; round < rounds; round++) {
        pthread_t t[4];
        for (int i = 0; i < 4; i++) CHECK(pthread_create(&t[i], NULL, line_counter, NULL) == 0);
        for (int j = 0; j < 40; j++, lines++) {
            CHECK((write)(p[1], "li", 2) == 2);
            if (j % 8 == 0) sched_yield();
            CHECK((write)(p[1], "ne\n", 3) == 3);
        }
        for (int i = 0; i < 4; i++) pthread_cancel(t[i]); /* 0, or ESRCH if it ended */
        for (int i = 0; i < 4; i++) CHECK(pthread_join(t[i], NULL) == 0);
    }
    (close)(p[1]);
    long rest = 0;
    while (fgets(buf, sizeof buf, in)) {
        CHECK(strcmp(buf, "line\n") == 0);
        rest++;
    }
    fclose(in);
    CHECK(atomic_load(&shared_got) + rest == lines);
    printf("4 readers of one stream canceled %ld times: every line once, whole\n", rounds);
    return 0;
}
