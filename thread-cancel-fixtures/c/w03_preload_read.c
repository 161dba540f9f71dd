/* Another interposer of `read`, as an LD_PRELOAD library defines one (a tracer, a fault
 * injector): counts its calls and forwards to the next definition (test
 * w03_another_interposer_of_read_...). */
#define _GNU_SOURCE 1
#include <dlfcn.h>
#include <stdatomic.h>
#include <unistd.h>

static atomic_long calls;

ssize_t read(int fd, void *buf, size_t n) {
    static ssize_t (*next)(int, void *, size_t);
    atomic_fetch_add(&calls, 1);
    if (!next)
        next = (ssize_t (*)(int, void *, size_t))dlsym(RTLD_NEXT, "read");
    return next(fd, buf, n);
}

/* How many calls reached this definition. */
long w03_preload_read_calls(void) { return atomic_load(&calls); }
