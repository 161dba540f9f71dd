/* The cost row of the C library's reach: a read of one byte (/dev/zero) on a thread that never
 * met the library, in a program built WITHOUT the compatibility header that merely has
 * libthread_cancel.so loaded (linked with -lthread_cancel: the library defines `read`, so every
 * `read` of the process is the library's), beside glibc's own `read` and the raw system call,
 * sampled interleaved in one process run. Driven by benches/foreign_read.rs.
 *
 * Prints each series' median ns per call over the samples, and the ratios. FOREIGN_SAMPLES
 * (default 2000) samples of 1000 calls each.
 *
 * Also glibc's getc of a buffered stream (/dev/zero, the byte in the buffer: no system call),
 * against which the fast path's cost (libthread_cancel's read minus glibc's read) is set: what
 * defining the stdio functions process-wide would add to every byte a thread that never met the
 * library reads through stdio (the library does not: stdio inside other libraries is listed as
 * not reached). */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>
#include "bench.h"

#define BATCH 1000

typedef ssize_t (*read_fn)(int, void *, size_t);
static int fd;
static char buf[1];
static read_fn glibc_read;


static double ours(void) {
    double t = now_ns();
    for (int i = 0; i < BATCH; i++) {
        if (read(fd, buf, 1) != 1) abort();
        __asm__ volatile("" ::: "memory");
    }
    return (now_ns() - t) / BATCH;
}

static double glibc(void) {
    double t = now_ns();
    for (int i = 0; i < BATCH; i++) {
        if (glibc_read(fd, buf, 1) != 1) abort();
        __asm__ volatile("" ::: "memory");
    }
    return (now_ns() - t) / BATCH;
}

static double raw(void) {
    double t = now_ns();
    for (int i = 0; i < BATCH; i++) {
        if (syscall(SYS_read, fd, buf, 1) != 1) abort();
        __asm__ volatile("" ::: "memory");
    }
    return (now_ns() - t) / BATCH;
}

static FILE *stream;

static double getc_series(void) {
    double t = now_ns();
    for (int i = 0; i < BATCH; i++) {
        if (getc(stream) != 0) abort();
        __asm__ volatile("" ::: "memory");
    }
    return (now_ns() - t) / BATCH;
}


int main(void) {
    const char *env = getenv("FOREIGN_SAMPLES");
    int n = env ? atoi(env) : 2000;
    if (n < 1) n = 1;
    void *libc = dlopen("libc.so.6", RTLD_NOW | RTLD_NOLOAD);
    glibc_read = libc ? (read_fn)dlsym(libc, "read") : NULL;
    void *ours_sym = dlsym(RTLD_DEFAULT, "read");
    Dl_info info;
    if (!glibc_read || !ours_sym || !dladdr(ours_sym, &info)) {
        fprintf(stderr, "symbols not found\n");
        return 1;
    }
    printf("`read` of this process is defined in: %s\n", info.dli_fname);
    fd = open("/dev/zero", O_RDONLY);
    if (fd < 0) return 1;
    stream = fopen("/dev/zero", "r");
    if (!stream) return 1;
    double *a = malloc(sizeof(double) * (size_t)n), *b = malloc(sizeof(double) * (size_t)n),
           *c = malloc(sizeof(double) * (size_t)n), *d = malloc(sizeof(double) * (size_t)n);
    for (int i = 0; i < 200; i++) ours(), glibc(), raw(), getc_series(); /* warm up */
    for (int i = 0; i < n; i++) {
        a[i] = ours();
        b[i] = glibc();
        c[i] = raw();
        d[i] = getc_series();
    }
    double ma = median(a, n), mb = median(b, n), mc = median(c, n), md = median(d, n);
    printf("read of 1 byte on a thread that never met the library, median of %d samples of %d "
           "calls:\n",
           n, BATCH);
    printf("  libthread_cancel's read   %7.2f ns   %.3fx glibc's read   %.3fx the raw call\n", ma,
           ma / mb, ma / mc);
    printf("  glibc's read              %7.2f ns   %.3fx the raw call\n", mb, mb / mc);
    printf("  raw syscall(SYS_read)     %7.2f ns\n", mc);
    printf("glibc's getc of a buffered byte: %.2f ns; the fast path's cost (%.2f ns) on it: "
           "%.2fx\n",
           md, ma - mb, (md + ma - mb) / md);
    return 0;
}
