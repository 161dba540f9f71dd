/* A plugin: a shared object the test program loads with dlopen(RTLD_LOCAL) at run time, which
 * blocks in the C library's read (test w03_a_dlopened_plugin_...). It knows nothing of
 * thread-cancel. */
#include <errno.h>
#include <unistd.h>

/* Reads one byte from `fd`: the count read, or -errno. */
long w03_plugin_read_one(int fd) {
    char b;
    ssize_t r = read(fd, &b, 1);
    return r < 0 ? -(long)errno : (long)r;
}
