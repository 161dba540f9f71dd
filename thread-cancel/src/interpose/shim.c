/* The interposed C-variadic functions of feature `interpose` (stable Rust cannot define
 * C-variadic functions). Each reads its optional argument as glibc does and calls the Rust
 * point (calls.rs). Nothing here allocates, locks or touches errno except through the Rust
 * side or `syscall`, so each stays async-signal-safe (E07). */
#define _GNU_SOURCE
#include <fcntl.h>
#include <stdarg.h>
#include <sys/syscall.h>
#include <sys/types.h>
#include <unistd.h>

int thread_cancel_openat(int dirfd, const char *path, int flags, mode_t mode);
int thread_cancel_fcntl_lock(int fd, int cmd, void *lock);

/* Referenced from Rust so that this object is always linked with the crate. */
int thread_cancel_interpose_shim_anchor(void) { return 1; }

#ifndef O_TMPFILE
#define O_TMPFILE (020000000 | O_DIRECTORY)
#endif

/* Whether `flags` take a mode argument. */
static int needs_mode(int flags) {
    return (flags & O_CREAT) != 0 || (flags & O_TMPFILE) == O_TMPFILE;
}

#define MODE_ARG(flags, last)                                                               \
    mode_t mode = 0;                                                                        \
    if (needs_mode(flags)) {                                                                \
        va_list ap;                                                                         \
        va_start(ap, last);                                                                 \
        mode = va_arg(ap, mode_t);                                                          \
        va_end(ap);                                                                         \
    }

int open(const char *path, int flags, ...) {
    MODE_ARG(flags, flags)
    return thread_cancel_openat(AT_FDCWD, path, flags, mode);
}

int open64(const char *path, int flags, ...) {
    MODE_ARG(flags, flags)
    return thread_cancel_openat(AT_FDCWD, path, flags, mode);
}

int openat(int dirfd, const char *path, int flags, ...) {
    MODE_ARG(flags, flags)
    return thread_cancel_openat(dirfd, path, flags, mode);
}

int openat64(int dirfd, const char *path, int flags, ...) {
    MODE_ARG(flags, flags)
    return thread_cancel_openat(dirfd, path, flags, mode);
}

/* Every command but the blocking locks is the plain system call; F_GETOWN as glibc makes it
 * (through F_GETOWN_EX, so that a process group's negative id is not read as an error). */
static int fcntl_any(int fd, int cmd, void *arg) {
    switch (cmd) {
    case F_SETLKW:
#ifdef F_OFD_SETLKW
    case F_OFD_SETLKW:
#endif
        return thread_cancel_fcntl_lock(fd, cmd, arg);
    case F_GETOWN: {
        struct f_owner_ex fex;
        if (syscall(SYS_fcntl, fd, F_GETOWN_EX, &fex) == 0)
            return fex.type == F_OWNER_PGRP ? -fex.pid : fex.pid;
        break;
    }
    default:
        break;
    }
    return (int)syscall(SYS_fcntl, fd, cmd, arg);
}

int fcntl(int fd, int cmd, ...) {
    va_list ap;
    va_start(ap, cmd);
    void *arg = va_arg(ap, void *);
    va_end(ap);
    return fcntl_any(fd, cmd, arg);
}

int fcntl64(int fd, int cmd, ...) {
    va_list ap;
    va_start(ap, cmd);
    void *arg = va_arg(ap, void *);
    va_end(ap);
    return fcntl_any(fd, cmd, arg);
}
