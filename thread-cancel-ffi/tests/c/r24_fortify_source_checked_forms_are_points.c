/* R24 with _FORTIFY_SOURCE=2 (the harness builds this program with it, as Debian builds its
 * packages): read, recv, recvfrom, poll and ppoll with a buffer whose size the compiler knows
 * and a length it does not go to glibc's checking functions (__read_chk, __recv_chk,
 * __recvfrom_chk, __poll_chk, __ppoll_chk); through the compatibility header those are the
 * library's, so each blocked call is canceled: join reports PTHREAD_CANCELED and the cleanup
 * handler ran. pread cannot block (on a pipe it fails): __pread_chk and __pread64_chk are
 * entered with a request pending and act there. With glibc alone the same program passes: its
 * checking functions are glibc's cancellation points. */
#define _GNU_SOURCE
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <sys/socket.h>
#include <unistd.h>
#include "tc_test.h"

enum kind { K_READ, K_RECV, K_RECVFROM, K_POLL, K_PPOLL, K_PREAD_PENDING, K_COUNT };
static const char *names[K_COUNT] = {"read (__read_chk)", "recv (__recv_chk)",
                                     "recvfrom (__recvfrom_chk)", "poll (__poll_chk)",
                                     "ppoll (__ppoll_chk)", "pread (__pread_chk)"};

static int sv[2], filefd;
/* Lengths the compiler cannot know: the checking functions are called. */
static volatile size_t one = 1;
static volatile nfds_t nfds = 1;
static atomic_int cleaned, started;

static void cleanup(void *arg) {
    (void)arg;
    atomic_fetch_add(&cleaned, 1);
}

static void *blocker(void *arg) {
    int k = (int)(long)arg;
    pthread_cleanup_push(cleanup, NULL);
    char buf[64];
    struct pollfd p[1] = {{.fd = sv[0], .events = POLLIN}};
    atomic_store(&started, 1);
    switch (k) {
    case K_READ: (void)!read(sv[0], buf, one); break;
    case K_RECV: (void)!recv(sv[0], buf, one, 0); break;
    case K_RECVFROM: (void)!recvfrom(sv[0], buf, one, 0, NULL, NULL); break;
    case K_POLL: poll(p, nfds, -1); break;
    case K_PPOLL: ppoll(p, nfds, NULL, NULL); break;
    case K_PREAD_PENDING:
        pthread_cancel(pthread_self());
        (void)!pread(filefd, buf, one, 0); /* acts at entry */
        break;
    }
    pthread_cleanup_pop(0);
    return (void *)1;
}

int main(void) {
    alarm(30);
    CHECK(socketpair(AF_UNIX, SOCK_STREAM, 0, sv) == 0);
    char path[] = "/tmp/tc-r24-fortify-XXXXXX";
    filefd = mkstemp(path);
    CHECK(filefd >= 0);
    unlink(path);
    CHECK(write(filefd, "data", 4) == 4);
    for (int k = 0; k < K_COUNT; k++) {
        atomic_store(&started, 0);
        int before = atomic_load(&cleaned);
        pthread_t t;
        CHECK(pthread_create(&t, NULL, blocker, (void *)(long)k) == 0);
        while (!atomic_load(&started)) test_msleep(1);
        test_msleep(30);
        int rc = pthread_cancel(t);
        CHECK(rc == 0 || rc == ESRCH);
        void *ret;
        CHECK(pthread_join(t, &ret) == 0);
        if (ret != PTHREAD_CANCELED || atomic_load(&cleaned) != before + 1) {
            fprintf(stderr, "%s: not canceled (ret %p)\n", names[k], ret);
            return 1;
        }
    }
    printf("%d checked forms canceled\n", K_COUNT);
    return 0;
}
