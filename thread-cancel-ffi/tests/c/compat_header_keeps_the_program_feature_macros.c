#define _GNU_SOURCE
/* The compat header and feature macros: a program whose first line defines _GNU_SOURCE gets the GNU interfaces
 * through the compat header too (force-included before that line): the GNU strerror_r (which
 * returns a char *, where the POSIX one returns an int), mktemp, the CPU affinity types and
 * macros of <sched.h>, pthread_setname_np/pthread_getname_np of <pthread.h>, pipe2 of
 * <unistd.h>. The test is that it compiles (with -Werror) and runs.
 *
 * TC_COMPARE_WITH_GLIBC: the runner also builds this against plain glibc; both print the same. */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

int main(void) {
    char buf[64];
    char *msg = strerror_r(ENOENT, buf, sizeof buf); /* the GNU form: a string, not an int */
    char tmpl[] = "/tmp/tc_featuresXXXXXX";
    char *name = mktemp(tmpl);
    cpu_set_t set;
    CPU_ZERO(&set);
    CPU_SET(0, &set);
    int fds[2];
    int p = pipe2(fds, O_CLOEXEC);
    int named = pthread_setname_np(pthread_self(), "features");
    char got[16] = "";
    int gotname = pthread_getname_np(pthread_self(), got, sizeof got);
    printf("strerror_r (GNU): %s; mktemp: %s; CPU_ISSET(0): %d; pipe2: %d; setname %d, getname %d "
           "\"%s\"\n",
           msg, name && name[0] ? "a name" : "none", CPU_ISSET(0, &set), p, named, gotname, got);
    return msg && strcmp(msg, "No such file or directory") == 0 && p == 0 && named == 0 &&
                   gotname == 0 && strcmp(got, "features") == 0
               ? 0
               : 1;
}
