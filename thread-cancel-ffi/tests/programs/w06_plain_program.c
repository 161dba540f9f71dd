/* A program built against plain glibc, without the compatibility header (tests/w06_preload.rs
 * runs it as it is and with LD_PRELOAD=libthread_cancel.so): a thread blocked in read under a
 * cleanup handler of glibc's macros, canceled and joined; a section disabled around a read. */
#define _GNU_SOURCE
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

static int fds[2];
static atomic_int tid, cleaned;

static void cleanup(void *arg) {
    (void)arg;
    atomic_fetch_add(&cleaned, 1);
}

static void *reader(void *arg) {
    (void)arg;
    char c;
    ssize_t n;
    pthread_cleanup_push(cleanup, NULL);
    atomic_store(&tid, (int)syscall(SYS_gettid));
    n = read(fds[0], &c, 1);
    pthread_cleanup_pop(0);
    return n == 1 ? "read a byte" : "read failed";
}

/* Whether thread `t` sleeps in the kernel (/proc). */
static int asleep(int t) {
    char path[64], buf[512];
    snprintf(path, sizeof path, "/proc/self/task/%d/stat", t);
    FILE *f = fopen(path, "r");
    if (!f) return 0;
    size_t n = fread(buf, 1, sizeof buf - 1, f);
    fclose(f);
    buf[n] = 0;
    char *p = strrchr(buf, ')');
    return p && p[1] == ' ' && p[2] == 'S';
}

int main(void) {
    alarm(30);
    if (pipe(fds) != 0) return 1;
    pthread_t t;
    if (pthread_create(&t, NULL, reader, NULL) != 0) return 1;
    while (atomic_load(&tid) == 0 || !asleep(atomic_load(&tid))) usleep(1000);
    printf("cancel: %d\n", pthread_cancel(t));
    void *r = NULL;
    int j = pthread_join(t, &r);
    printf("join: %d, %s\n", j, r == PTHREAD_CANCELED ? "canceled" : (char *)r);
    printf("cleanup handler ran: %d time(s)\n", atomic_load(&cleaned));
    int old, was;
    int s = pthread_setcancelstate(PTHREAD_CANCEL_DISABLE, &old);
    printf("setcancelstate: %d", s);
    pthread_testcancel();
    pthread_setcancelstate(old, &was);
    printf(", old %s, then %s\n", old == PTHREAD_CANCEL_ENABLE ? "enabled" : "disabled",
           was == PTHREAD_CANCEL_DISABLE ? "disabled" : "enabled");
    return 0;
}
