/* W06: a library of the program (built against plain glibc, no header) whose constructor runs
 * before libthread_cancel's own when libthread_cancel is preloaded (the dynamic loader
 * initialises the program's dependencies first) creates a thread — through libthread_cancel's
 * pthread_create, before anything of libthread_cancel's was set up — and the thread blocks in
 * read (libthread_cancel's). Built with -DW06_LIBRARY as the library, without it as the
 * program, which cancels that thread once it is asleep: its cleanup handler runs and the join
 * reports PTHREAD_CANCELED, the same lines as without the library. */
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/syscall.h>
#include <unistd.h>

#ifdef W06_LIBRARY
int early_fds[2];
pthread_t early_thread;
atomic_int early_cleaned, early_tid;

static void cleanup(void *a) {
    (void)a;
    atomic_fetch_add(&early_cleaned, 1);
}

static void *reader(void *a) {
    char b;
    (void)a;
    pthread_cleanup_push(cleanup, NULL);
    atomic_store(&early_tid, (int)syscall(SYS_gettid));
    ssize_t n = read(early_fds[0], &b, 1);
    printf("the early thread's read returned %zd (not canceled)\n", n);
    pthread_cleanup_pop(0);
    return NULL;
}

__attribute__((constructor)) static void early(void) {
    if (pipe(early_fds) != 0 || pthread_create(&early_thread, NULL, reader, NULL) != 0) abort();
    while (!atomic_load(&early_tid)) usleep(100);
}
#else
extern int early_fds[2];
extern pthread_t early_thread;
extern atomic_int early_cleaned, early_tid;

/* Whether thread `tid` is asleep (blocked), from /proc. */
static int asleep(pid_t tid) {
    char path[64], buf[512];
    snprintf(path, sizeof path, "/proc/self/task/%d/stat", (int)tid);
    FILE *f = fopen(path, "r");
    if (!f) return 0;
    size_t n = fread(buf, 1, sizeof buf - 1, f);
    fclose(f);
    buf[n] = 0;
    char *p = buf;
    for (char *q = buf; *q; q++)
        if (*q == ')') p = q;
    return p[1] == ' ' && p[2] == 'S';
}

int main(void) {
    alarm(30);
    /* Wait until the early thread is asleep (in its read). */
    while (!asleep(atomic_load(&early_tid))) usleep(1000);
    void *ret = NULL;
    printf("cancel of the thread a constructor created: %d\n", pthread_cancel(early_thread));
    int joined = pthread_join(early_thread, &ret);
    printf("its join: %d, %s; its cleanup handler ran: %d\n", joined,
           ret == PTHREAD_CANCELED ? "canceled" : "not canceled", atomic_load(&early_cleaned));
    return 0;
}
#endif
