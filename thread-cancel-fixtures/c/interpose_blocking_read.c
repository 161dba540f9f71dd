/* A C library that blocks in `read` (tests `e06_a_c_..._blocked_in_read_...` of
 * thread-cancel/tests/interpose.rs): it knows nothing of thread-cancel. Built by this crate's
 * build.rs into a static library and, renamed (interpose_blocking_read_so.c), into a shared
 * object, both linked into the test programs only. */
#define _GNU_SOURCE 1 /* pthread_timedjoin_np */
#include <errno.h>
#include <unistd.h>

/* Reads one byte from `fd`: the count read, or -errno. */
long interpose_test_c_read_one(int fd) {
    char b;
    ssize_t r = read(fd, &b, 1);
    return r < 0 ? -(long)errno : (long)r;
}

/* A C library's own threads canceled with the C library's pthread_cancel while each is blocked
 * in an interposed function (test `e06_the_c_librarys_own_cancel_still_reaches_its_threads_...`):
 * such a thread never met thread-cancel, so the interposed definition calls the C library's,
 * a cancellation point of the C library's. Writes one line per case to `out` ("read: canceled,
 * cleanup ran" or what happened instead); returns the number of cases not canceled. */
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <sys/select.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <time.h>

struct blocked {
    int fd;
    const char *path;
    int which;
    volatile int cleaned;
};

static void cleanup(void *arg) { ((struct blocked *)arg)->cleaned = 1; }

static void *block(void *arg) {
    struct blocked *b = arg;
    char c;
    pthread_cleanup_push(cleanup, b);
    switch (b->which) {
    case 0: read(b->fd, &c, 1); break;
    case 1: { struct timespec t = {30, 0}; nanosleep(&t, NULL); break; }
    case 2: { struct pollfd p = {b->fd, POLLIN, 0}; poll(&p, 1, -1); break; }
    case 3: recv(b->fd, &c, 1, 0); break;
    case 4: { fd_set r; FD_ZERO(&r); FD_SET(b->fd, &r); select(b->fd + 1, &r, NULL, NULL, NULL); break; }
    case 5: { int f = open(b->path, O_RDONLY); if (f >= 0) close(f); break; }
    }
    pthread_cleanup_pop(0);
    return NULL;
}

int interpose_test_c_glibc_cancels(const char *fifo, char *out, size_t len) {
    static const char *names[] = {"read", "nanosleep", "poll", "recv", "select", "open of a FIFO"};
    int missed = 0;
    size_t used = 0;
    out[0] = 0;
    for (int i = 0; i < 6; i++) {
        int sv[2];
        if (socketpair(AF_UNIX, SOCK_STREAM, 0, sv) != 0) return -1;
        /* Static: a thread that was not canceled is left running with it. */
        static struct blocked bs[6];
        struct blocked *b = &bs[i];
        *b = (struct blocked){sv[0], fifo, i, 0};
        pthread_t t;
        if (pthread_create(&t, NULL, block, b) != 0) return -1;
        struct timespec pause = {0, 50 * 1000 * 1000};
        nanosleep(&pause, NULL);
        pthread_cancel(t);
        struct timespec until;
        clock_gettime(CLOCK_REALTIME, &until);
        until.tv_sec += 3;
        void *ret = NULL;
        int r = pthread_timedjoin_np(t, &ret, &until);
        const char *what;
        if (r == 0 && ret == PTHREAD_CANCELED && b->cleaned) {
            what = "canceled, cleanup ran";
        } else {
            what = r != 0 ? "not canceled in 3 s" : "ended without being canceled";
            missed++;
        }
        used += (size_t)snprintf(out + used, used < len ? len - used : 0, "%s: %s\n", names[i], what);
        if (r != 0) {
            /* Let it go: its socket stays open (a leak in a failed test only). */
            pthread_detach(t);
            continue;
        }
        close(sv[0]);
        close(sv[1]);
    }
    return missed;
}

/* Children started other ways than `fork` and `posix_spawn` (test
 * `w03_vfork_and_clone_children_are_not_tracked_they_run_on_past_the_deadline`): `argv[0]` (a
 * path) with `vfork` and `execv`, or with the C library's `clone` (a new process, `SIGCHLD` at
 * its end). The child's id, or -errno. */
#include <sched.h>
#include <signal.h>
#include <stdlib.h>

long interpose_test_c_vfork_exec(char *const argv[]) {
    pid_t pid = vfork();
    if (pid == 0) {
        execv(argv[0], argv);
        _exit(127);
    }
    return pid < 0 ? -(long)errno : (long)pid;
}

static int clone_child(void *argv) {
    execv(((char *const *)argv)[0], (char *const *)argv);
    _exit(127);
}

long interpose_test_c_clone_exec(char *const argv[]) {
    size_t size = 64 * 1024;
    char *stack = malloc(size);
    if (!stack)
        return -ENOMEM;
    /* No CLONE_VM: the child runs on its own copy of the stack, which the parent frees. */
    pid_t pid = clone(clone_child, stack + size, SIGCHLD, (void *)argv);
    long r = pid < 0 ? -(long)errno : (long)pid;
    free(stack);
    return r;
}
