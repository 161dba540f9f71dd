/* R18, the cost of ids that are never reused (on glibc the threads created through the header
 * run on stacks the library owns, each carrying up to an eighth of its size / 64 bytes threads,
 * its top moved down 64 bytes each time, then retired: its memory given back, its addresses kept
 * so that no later thread's descriptor lands there). Thread churn must not make the process grow
 * but by the address space its ids use up: the number of mappings (vm.max_map_count, 65,530 by
 * default, would end a process that reached it) and the resident memory stay flat.
 *
 * N threads (THREAD_CANCEL_STRESS, default 30,000: seconds idle, about a minute beside a CPU
 * load of twice the cores) with 64 KiB stacks (PTHREAD_STACK_MIN where that is larger), each
 * created and joined before the next: about N / 1,024 stacks retired on x86-64 (29 here).
 * Checked: the lines of /proc/self/maps grow by at most 4 (a retired stack that did not merge
 * with its neighbours would add one each), VmRSS by at most 4 MiB, over the N threads after a
 * first N / 4; printed: what each thread cost in address space. Under
 * ASan and under an emulator only printed (the sanitizer maps memory of its own per thread, between the library's
 * retired stacks). Not compared with glibc (which reuses ids at no cost). */
#define _GNU_SOURCE
#include <limits.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "tc_test.h"

static long lines_of_maps(void) {
    FILE *f = fopen("/proc/self/maps", "r");
    CHECK(f != NULL);
    long n = 0;
    int c;
    while ((c = fgetc(f)) != EOF) n += c == '\n';
    fclose(f);
    return n;
}

/* A "Key:  value kB" line of /proc/self/status. */
static long status_kb(const char *key) {
    FILE *f = fopen("/proc/self/status", "r");
    CHECK(f != NULL);
    char line[256];
    long v = -1;
    size_t k = strlen(key);
    while (fgets(line, sizeof line, f))
        if (!strncmp(line, key, k) && line[k] == ':') v = atol(line + k + 1);
    fclose(f);
    CHECK(v >= 0);
    return v;
}

static void *touch(void *arg) {
    volatile char buf[1024];
    memset((char *)buf, 1, sizeof buf);
    return arg;
}

static void churn(const pthread_attr_t *a, long n) {
    for (long i = 0; i < n; i++) {
        pthread_t t;
        CHECK(pthread_create(&t, a, touch, NULL) == 0);
        CHECK(pthread_join(t, NULL) == 0);
    }
}

int main(void) {
    alarm(600);
    const char *env = getenv("THREAD_CANCEL_STRESS");
    long n = env ? atol(env) : 30000;
    size_t size = 64 * 1024;
    if (size < (size_t)PTHREAD_STACK_MIN) size = PTHREAD_STACK_MIN;
    pthread_attr_t a;
    CHECK(pthread_attr_init(&a) == 0);
    CHECK(pthread_attr_setstacksize(&a, size) == 0);
    churn(&a, n / 4 + 1);
    long maps0 = lines_of_maps(), rss0 = status_kb("VmRSS"), vm0 = status_kb("VmSize");
    churn(&a, n);
    long maps1 = lines_of_maps(), rss1 = status_kb("VmRSS"), vm1 = status_kb("VmSize");
    printf("%ld threads (stacks of %zu KiB): mappings %ld -> %ld, VmRSS %ld -> %ld kB, address "
           "space %.0f bytes per thread\n",
           n, size / 1024, maps0, maps1, rss0, rss1, (vm1 - vm0) * 1024.0 / (double)n);
#ifdef __SANITIZE_ADDRESS__
    /* The sanitizer keeps mappings and memory of its own per thread (between the library's
     * retired stacks, which then cannot merge): its figures are printed, not bounded. */
    return 0;
#endif
    /* Under an emulator (TC_EMULATED, set by the runner) the figures are the emulator's, which
     * keeps memory per guest thread (qemu-user: about 280 KiB, plain glibc too). */
    if (getenv("TC_EMULATED")) return 0;
    if (maps1 - maps0 > 4 || rss1 - rss0 > 4 * 1024) {
        fprintf(stderr, "thread churn grew the process: mappings by %ld (bound 4), VmRSS by %ld kB "
                        "(bound 4096)\n", maps1 - maps0, rss1 - rss0);
        return 1;
    }
    return 0;
}
