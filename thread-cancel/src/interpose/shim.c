/* The interposed C-variadic functions of feature `interpose` (stable Rust cannot define
 * C-variadic functions). Each reads its optional argument as glibc does and calls the Rust
 * point (calls.rs) — or, for a thread that never met the crate, the C library's own definition
 * (found at load, as next.rs does for the Rust ones), so that the C library's cancellation keeps
 * working for its threads (built with unwind tables: its forced unwind passes through these
 * frames). Nothing on the call paths allocates, locks or touches errno except through the Rust
 * side, the C library's definition or `syscall`, so each stays async-signal-safe. */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <fcntl.h>
#include <stdarg.h>
#include <sys/syscall.h>
#include <sys/types.h>
#include <unistd.h>

int thread_cancel_openat(int dirfd, const char *path, int flags, mode_t mode);
int thread_cancel_fcntl_lock(int fd, int cmd, void *lock);
/* Whether the calling thread has a control block (it met the crate): calls.rs. */
int thread_cancel_interpose_has_control(void);

typedef int (*open_fn)(const char *, int, ...);
typedef int (*openat_fn)(int, const char *, int, ...);
typedef int (*fcntl_fn)(int, int, ...);
static open_fn next_open, next_open64;
static openat_fn next_openat, next_openat64;
static fcntl_fn next_fcntl, next_fcntl64;

int open(const char *path, int flags, ...);
int open64(const char *path, int flags, ...);
int openat(int dirfd, const char *path, int flags, ...);
int openat64(int dirfd, const char *path, int flags, ...);
int fcntl(int fd, int cmd, ...);
int fcntl64(int fd, int cmd, ...);

/* The C library's definitions (the next after this object's), once, at load; none if the
 * lookup finds this object's own (calling it would recurse). */
#define NEXT(var, type, name)                                                               \
    do {                                                                                    \
        var = (type)dlsym(RTLD_NEXT, #name);                                                \
        if (var == (type)name) var = 0;                                                     \
    } while (0)

__attribute__((constructor)) static void thread_cancel_interpose_resolve(void) {
    NEXT(next_open, open_fn, open);
    NEXT(next_open64, open_fn, open64);
    NEXT(next_openat, openat_fn, openat);
    NEXT(next_openat64, openat_fn, openat64);
    NEXT(next_fcntl, fcntl_fn, fcntl);
    NEXT(next_fcntl64, fcntl_fn, fcntl64);
}

/* The C library's definition `next`, if the calling thread never met the crate. */
#define FOREIGN(next) ((next) != 0 && !thread_cancel_interpose_has_control())

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
    if (FOREIGN(next_open)) return next_open(path, flags, mode);
    return thread_cancel_openat(AT_FDCWD, path, flags, mode);
}

int open64(const char *path, int flags, ...) {
    MODE_ARG(flags, flags)
    if (FOREIGN(next_open64)) return next_open64(path, flags, mode);
    return thread_cancel_openat(AT_FDCWD, path, flags, mode);
}

int openat(int dirfd, const char *path, int flags, ...) {
    MODE_ARG(flags, flags)
    if (FOREIGN(next_openat)) return next_openat(dirfd, path, flags, mode);
    return thread_cancel_openat(dirfd, path, flags, mode);
}

int openat64(int dirfd, const char *path, int flags, ...) {
    MODE_ARG(flags, flags)
    if (FOREIGN(next_openat64)) return next_openat64(dirfd, path, flags, mode);
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
    if (FOREIGN(next_fcntl)) return next_fcntl(fd, cmd, arg);
    return fcntl_any(fd, cmd, arg);
}

int fcntl64(int fd, int cmd, ...) {
    va_list ap;
    va_start(ap, cmd);
    void *arg = va_arg(ap, void *);
    va_end(ap);
    if (FOREIGN(next_fcntl64)) return next_fcntl64(fd, cmd, arg);
    return fcntl_any(fd, cmd, arg);
}
