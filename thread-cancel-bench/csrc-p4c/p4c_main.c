/* P4c's driver, a program of its own (built and run by src/c_thread_latency.rs; it links libthread_cancel,
 * which the bench process cannot: two copies of the crate's state in one process). Built twice:
 * with libthread_cancel and p4c_sample_ours, and, with -DP4C_GLIBC_ONLY, against glibc alone
 * with p4c_sample_glibc (a process with libthread_cancel has the library's pthread_cancel and
 * cleanup registration for its plain code too, so glibc's are measured in a process without
 * it). It reads one command per line on stdin and answers one line on stdout:
 *
 *   "ours CPU"   one sample of p4c_sample_ours (a thread created through pthread_compat.h)
 *   "glibc CPU"  one sample of p4c_sample_glibc (the same code against glibc alone)
 *
 * with CPU the target's CPU (-1: not pinned; else this program's sampling thread keeps off it
 * for the sample, so that the wake-up crosses CPUs as in the bench process). The answer is the latency in ns, or "error N"
 * (an error number). It exits at end of input. */

#include "p4c.h"
#include <errno.h>
#include <inttypes.h>
#include <sched.h>
#include <stdio.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

/* Whether thread `tid` is asleep (S) in read(2), from /proc/self/task/TID/{stat,syscall}. */
static int is_blocked_in_read(int tid) {
    char path[64], buf[512];
    snprintf(path, sizeof path, "/proc/self/task/%d/stat", tid);
    FILE *f = fopen(path, "r");
    if (f == NULL) {
        return 0;
    }
    size_t n = fread(buf, 1, sizeof buf - 1, f);
    fclose(f);
    buf[n] = '\0';
    /* The state follows the command name, which is in parentheses and may contain anything. */
    char *p = strrchr(buf, ')');
    if (p == NULL || p[1] != ' ' || p[2] != 'S') {
        return 0;
    }
    snprintf(path, sizeof path, "/proc/self/task/%d/syscall", tid);
    f = fopen(path, "r");
    if (f == NULL) {
        return 1; /* a kernel without the file: the state alone */
    }
    long nr = -1;
    int got = fscanf(f, "%ld", &nr);
    fclose(f);
    return got == 1 && nr == SYS_read;
}

static uint64_t monotonic_ns(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

int p4c_wait_blocked(int tid) {
    const struct timespec settle = {0, 100000}, poll_gap = {0, 10000};
    uint64_t start = monotonic_ns();
    for (;;) {
        if (is_blocked_in_read(tid)) {
            nanosleep(&settle, NULL);
            if (is_blocked_in_read(tid)) {
                return 0;
            }
        }
        if (monotonic_ns() - start > 10000000000u) {
            return ETIMEDOUT;
        }
        nanosleep(&poll_gap, NULL);
    }
}

int main(void) {
    char line[64];
    setvbuf(stdout, NULL, _IOLBF, 0);
    cpu_set_t all;
    if (sched_getaffinity(0, sizeof all, &all) != 0) {
        CPU_ZERO(&all);
    }
    while (fgets(line, sizeof line, stdin) != NULL) {
        char who[16];
        int cpu;
        if (sscanf(line, "%15s %d", who, &cpu) != 2) {
            printf("error %d\n", EINVAL);
            continue;
        }
        int ours = strcmp(who, "ours") == 0;
        if (!ours && strcmp(who, "glibc") != 0) {
            printf("error %d\n", EINVAL);
            continue;
        }
        /* A fresh pipe per sample, its write end open until the target was joined: the target
         * leaves read only through the cancellation. */
        cpu_set_t away = all;
        if (cpu >= 0 && cpu < CPU_SETSIZE) {
            CPU_CLR(cpu, &away);
        }
        if (CPU_COUNT(&away) > 0) {
            (void)sched_setaffinity(0, sizeof away, &away);
        }
        int fds[2];
        if (pipe(fds) != 0) {
            printf("error %d\n", errno);
            continue;
        }
#ifdef P4C_GLIBC_ONLY
        int64_t r = ours ? -EINVAL : p4c_sample_glibc(fds[0], cpu);
#else
        int64_t r = ours ? p4c_sample_ours(fds[0], cpu) : -EINVAL;
#endif
        close(fds[0]);
        close(fds[1]);
        if (r < 0) {
            printf("error %" PRId64 "\n", -r);
        } else {
            printf("%" PRId64 "\n", r);
        }
    }
    return 0;
}
