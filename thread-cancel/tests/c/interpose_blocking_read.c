/* A C library that blocks in `read` (test `e06_a_c_static_library_blocked_in_read_...` of
 * tests/interpose.rs): it knows nothing of thread-cancel. Built by build.rs (feature
 * `interpose`) into a static library linked into the test programs only. */
#include <errno.h>
#include <unistd.h>

/* Reads one byte from `fd`: the count read, or -errno. */
long interpose_test_c_read_one(int fd) {
    char b;
    ssize_t r = read(fd, &b, 1);
    return r < 0 ? -(long)errno : (long)r;
}
