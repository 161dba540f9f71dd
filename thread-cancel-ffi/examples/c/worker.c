/* A plain POSIX program, unmodified: a worker blocked in read(2) is canceled; its cleanup
 * handler frees its buffer; join reports PTHREAD_CANCELED. Built with thread-cancel's
 * compatibility header, so it gets thread-cancel's semantics (see README, "C"). */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

static void free_buffer(void *buf) {
    printf("worker: cleanup handler frees its buffer\n");
    free(buf);
}

static void *worker(void *arg) {
    int fd = *(int *)arg;
    char *buf = malloc(4096);
    pthread_cleanup_push(free_buffer, buf);
    printf("worker: blocking in read()\n");
    ssize_t n = read(fd, buf, 4096); /* a cancellation point: canceled while blocked */
    printf("worker: read returned %zd (not reached)\n", n);
    pthread_cleanup_pop(1);
    return NULL;
}

int main(void) {
    int p[2];
    if (pipe(p) != 0) return 1;
    pthread_t t;
    if (pthread_create(&t, NULL, worker, &p[0]) != 0) return 1;
    sleep(1); /* also a cancellation point (main is never canceled here) */
    printf("main: pthread_cancel -> %d\n", pthread_cancel(t));
    void *ret;
    pthread_join(t, &ret);
    printf("main: join says %s\n", ret == PTHREAD_CANCELED ? "PTHREAD_CANCELED" : "returned");
    printf("main: cancel again -> %d (ESRCH = %d: the thread is gone)\n", pthread_cancel(t), 3);
    return ret == PTHREAD_CANCELED ? 0 : 1;
}
