/* pthread_compat.h: gives an unmodified POSIX C program thread-cancel's semantics.
 *
 *     cc -include thread_cancel/pthread_compat.h -I<repo>/include prog.c \
 *        -L<dir of libthread_cancel> -lthread_cancel -lpthread
 *
 * It includes the system headers first, then renames the POSIX thread, cancellation and
 * cancellation-point calls (system calls, stdio, system, aio_suspend) and the signal-mask
 * calls (so that the cancel signal is never blocked) to their tc_ equivalents
 * (thread_cancel.h). Everything else (mutexes, attributes, signal handlers, ...) is the
 * system's, untouched. glibc points not mapped (a blocked thread there is canceled only at
 * its next point): the wide-character stdio calls, freopen, pclose, fseek/fsetpos/rewind's
 * flush, getaddrinfo and the other resolver lookups, syslog, wordexp, getopt's message.
 * pthread_t values are our generation-tagged ids: pass them only to the calls renamed here
 * (tc_native gives the system's id for any other). The system-call points are function-like
 * macros, so a struct member or a function pointer named `read` is left alone.
 *
 * Feature macros: force-included, this header is read before the program's first line, where
 * programs define _GNU_SOURCE, _XOPEN_SOURCE, ... So it reads the system headers it needs
 * (those thread_cancel.h includes, <stdio.h> and <unistd.h> among them, and <fcntl.h>) with
 * _GNU_SOURCE, then puts the feature macros back as the command line left them and lets
 * <features.h> decide again: every other header the program includes (<stdlib.h>, <string.h>,
 * ...) follows the program's own defines (the GNU or the POSIX strerror_r, ...), and the
 * headers read here declare their GNU extensions too (cpu_set_t, pipe2, pthread_setname_np,
 * asprintf, ...), as with g++, which always defines _GNU_SOURCE. A program whose own names
 * collide with one of those extensions (its own gettid, say) compiles with
 * -DTC_COMPAT_NO_GNU_SOURCE: those headers then follow the command line's feature macros only,
 * so a program that needs their GNU parts must define _GNU_SOURCE on the command line
 * (-D_GNU_SOURCE), not in its source. */
#ifndef THREAD_CANCEL_PTHREAD_COMPAT_H
#define THREAD_CANCEL_PTHREAD_COMPAT_H

/* Feature macros (see above): only when nothing has fixed the feature set yet (force-included)
 * and the program is C (g++ and clang++ always define _GNU_SOURCE). */
#if !defined _FEATURES_H && !defined _GNU_SOURCE && !defined __cplusplus &&                     \
    !defined TC_COMPAT_NO_GNU_SOURCE
#define TC_COMPAT_FEATURES_ 1
#pragma push_macro("_DEFAULT_SOURCE")
#pragma push_macro("_ISOC95_SOURCE")
#pragma push_macro("_ISOC99_SOURCE")
#pragma push_macro("_ISOC11_SOURCE")
#pragma push_macro("_ISOC2X_SOURCE")
#pragma push_macro("_POSIX_SOURCE")
#pragma push_macro("_POSIX_C_SOURCE")
#pragma push_macro("_XOPEN_SOURCE")
#pragma push_macro("_XOPEN_SOURCE_EXTENDED")
#pragma push_macro("_LARGEFILE64_SOURCE")
#pragma push_macro("_ATFILE_SOURCE")
#pragma push_macro("_DYNAMIC_STACK_SIZE_SOURCE")
#define _GNU_SOURCE 1
#endif

#include <fcntl.h>
#include <stdarg.h>
#include <thread_cancel.h>
#ifdef __cplusplus
/* C++: every header that declares a call renamed below is included before the renaming, so
 * that a later #include of it (<cstdlib>'s `using ::system;`, say) sees the system's names. C
 * needs none of this (a later #include declares the tc_ name instead: the same function), and
 * these headers then follow the program's own feature macros (see above). */
#include <stdlib.h>
#include <sys/resource.h>
#include <termios.h>
#endif

#ifdef TC_COMPAT_FEATURES_
/* Puts back what <features.h> defined from _GNU_SOURCE (it defines the other feature macros
 * as _GNU_SOURCE implies them, and may have replaced the command line's values; push_macro
 * keeps those). The next system header the program includes runs <features.h> again, which
 * starts by undefining every __USE_ macro. */
#undef _GNU_SOURCE
#undef _DEFAULT_SOURCE
#pragma pop_macro("_DEFAULT_SOURCE")
#undef _ISOC95_SOURCE
#pragma pop_macro("_ISOC95_SOURCE")
#undef _ISOC99_SOURCE
#pragma pop_macro("_ISOC99_SOURCE")
#undef _ISOC11_SOURCE
#pragma pop_macro("_ISOC11_SOURCE")
#undef _ISOC2X_SOURCE
#pragma pop_macro("_ISOC2X_SOURCE")
#undef _POSIX_SOURCE
#pragma pop_macro("_POSIX_SOURCE")
#undef _POSIX_C_SOURCE
#pragma pop_macro("_POSIX_C_SOURCE")
#undef _XOPEN_SOURCE
#pragma pop_macro("_XOPEN_SOURCE")
#undef _XOPEN_SOURCE_EXTENDED
#pragma pop_macro("_XOPEN_SOURCE_EXTENDED")
#undef _LARGEFILE64_SOURCE
#pragma pop_macro("_LARGEFILE64_SOURCE")
#undef _ATFILE_SOURCE
#pragma pop_macro("_ATFILE_SOURCE")
#undef _DYNAMIC_STACK_SIZE_SOURCE
#pragma pop_macro("_DYNAMIC_STACK_SIZE_SOURCE")
#undef _FEATURES_H
#undef __USE_POSIX_IMPLICITLY
#endif
#undef TC_COMPAT_FEATURES_

#define pthread_create tc_create
#define pthread_join tc_join
#define pthread_detach tc_detach
#define pthread_exit tc_exit
#define pthread_self tc_self
#undef pthread_equal /* a macro of musl's */
#define pthread_equal tc_equal
#define pthread_kill tc_kill
#define pthread_cancel tc_cancel
#define pthread_setcancelstate tc_setcancelstate
#define pthread_setcanceltype tc_setcanceltype
#define pthread_testcancel tc_testcancel
#define pthread_once tc_once
#define pthread_key_create tc_key_create
#define pthread_key_delete tc_key_delete
#define pthread_getspecific tc_getspecific
#define pthread_setspecific tc_setspecific
#define pthread_cond_wait tc_cond_wait
#define pthread_cond_timedwait tc_cond_timedwait
#define sem_wait tc_sem_wait
#define sem_timedwait tc_sem_timedwait

/* glibc's other calls that take a pthread_t (every one of glibc 2.36's): our ids, translated to
 * the system's. */
#define pthread_tryjoin_np tc_tryjoin_np
#define pthread_timedjoin_np tc_timedjoin_np
#define pthread_clockjoin_np tc_clockjoin_np
#define pthread_getattr_np tc_getattr_np
#define pthread_setname_np tc_setname_np
#define pthread_getname_np tc_getname_np
#define pthread_setschedparam tc_setschedparam
#define pthread_getschedparam tc_getschedparam
#define pthread_setschedprio tc_setschedprio
#define pthread_setaffinity_np tc_setaffinity_np
#define pthread_getaffinity_np tc_getaffinity_np
#define pthread_getcpuclockid tc_getcpuclockid
#if defined(__GLIBC__) || defined(__ANDROID__)
#define pthread_sigqueue tc_pthread_sigqueue
#endif

#undef pthread_cleanup_push
#undef pthread_cleanup_pop
#define pthread_cleanup_push(routine, arg) tc_cleanup_push(routine, arg)
#define pthread_cleanup_pop(execute) tc_cleanup_pop(execute)

#ifdef __cplusplus
/* C++: a cleanup handler is also a destructor (as with glibc's <pthread.h> in C++), so that the
 * unwind of a cancellation or an exit runs the handlers and the other destructors of one frame
 * interleaved, last in first out. Leaving the scope by a C++ exception runs the handler too
 * (glibc's behaviour); pop(0) never runs it. */
class tc_compat_cleanup_ {
public:
    tc_compat_cleanup_(void (*routine)(void *), void *arg) : popped_(false) {
        tc_cleanup_push_buffer(&buffer_, routine, arg);
    }
    ~tc_compat_cleanup_() {
        if (!popped_) tc_cleanup_pop_buffer(&buffer_, 1);
    }
    void pop(int execute) {
        popped_ = true;
        tc_cleanup_pop_buffer(&buffer_, execute);
    }

private:
    tc_compat_cleanup_(const tc_compat_cleanup_ &);
    tc_compat_cleanup_ &operator=(const tc_compat_cleanup_ &);
    struct tc_cleanup_buffer buffer_;
    bool popped_;
};
#undef tc_cleanup_push
#undef tc_cleanup_pop
#define tc_cleanup_push(routine, arg)                                                           \
    do {                                                                                        \
        tc_compat_cleanup_ tc_compat_cleanup_obj_((routine), (arg));                            \
        {
#define tc_cleanup_pop(execute)                                                                 \
        }                                                                                       \
        tc_compat_cleanup_obj_.pop(execute);                                                    \
    } while (0)
#endif

#undef PTHREAD_CANCELED
#define PTHREAD_CANCELED TC_CANCELED

/* open/openat take an optional mode, with O_CREAT or O_TMPFILE (with _GNU_SOURCE). */
#ifdef O_TMPFILE
#define TC_COMPAT_MODE_FLAGS_ (O_CREAT | O_TMPFILE)
#else
#define TC_COMPAT_MODE_FLAGS_ O_CREAT
#endif
#define TC_COMPAT_MODE_(flags, last)                                                            \
    mode_t mode = 0;                                                                            \
    if ((flags) & TC_COMPAT_MODE_FLAGS_) {                                                      \
        va_list ap;                                                                             \
        va_start(ap, last);                                                                     \
        mode = (mode_t)va_arg(ap, int);                                                         \
        va_end(ap);                                                                             \
    }
static inline int tc_compat_open_(const char *path, int flags, ...) {
    TC_COMPAT_MODE_(flags, flags)
    return tc_open(path, flags, mode);
}
static inline int tc_compat_openat_(int dirfd, const char *path, int flags, ...) {
    TC_COMPAT_MODE_(flags, flags)
    return tc_openat(dirfd, path, flags, mode);
}

/* fcntl takes an optional integer or pointer argument; the F_GET* commands take none. */
static inline int tc_compat_fcntl_(int fd, int cmd, ...) {
    long arg = 0;
    switch (cmd) {
    case F_GETFD:
    case F_GETFL:
    case F_GETOWN:
#ifdef F_GETSIG
    case F_GETSIG:
#endif
#ifdef F_GETLEASE
    case F_GETLEASE:
#endif
#ifdef F_GETPIPE_SZ
    case F_GETPIPE_SZ:
#endif
#ifdef F_GET_SEALS
    case F_GET_SEALS:
#endif
        break;
    default: {
        va_list ap;
        va_start(ap, cmd);
        arg = va_arg(ap, long);
        va_end(ap);
    }
    }
    return tc_fcntl(fd, cmd, arg);
}

#define read(...) tc_read(__VA_ARGS__)
#define write(...) tc_write(__VA_ARGS__)
#define pread(...) tc_pread(__VA_ARGS__)
#define pwrite(...) tc_pwrite(__VA_ARGS__)
#define readv(...) tc_readv(__VA_ARGS__)
#define writev(...) tc_writev(__VA_ARGS__)
#define open(...) tc_compat_open_(__VA_ARGS__)
#define openat(...) tc_compat_openat_(__VA_ARGS__)
#define creat(...) tc_creat(__VA_ARGS__)
#define close(...) tc_close(__VA_ARGS__)
#define fsync(...) tc_fsync(__VA_ARGS__)
#define fdatasync(...) tc_fdatasync(__VA_ARGS__)
#define accept(...) tc_accept(__VA_ARGS__)
#define accept4(...) tc_accept4(__VA_ARGS__)
#define connect(...) tc_connect(__VA_ARGS__)
#define recv(...) tc_recv(__VA_ARGS__)
#define send(...) tc_send(__VA_ARGS__)
#define recvfrom(...) tc_recvfrom(__VA_ARGS__)
#define sendto(...) tc_sendto(__VA_ARGS__)
#define recvmsg(...) tc_recvmsg(__VA_ARGS__)
#define sendmsg(...) tc_sendmsg(__VA_ARGS__)
#define poll(...) tc_poll(__VA_ARGS__)
#define ppoll(...) tc_ppoll(__VA_ARGS__)
#define select(...) tc_select(__VA_ARGS__)
#define epoll_wait(...) tc_epoll_wait(__VA_ARGS__)
#define sleep(...) tc_sleep(__VA_ARGS__)
#define usleep(...) tc_usleep(__VA_ARGS__)
#define nanosleep(...) tc_nanosleep(__VA_ARGS__)
#define clock_nanosleep(...) tc_clock_nanosleep(__VA_ARGS__)
#define pause(...) tc_pause(__VA_ARGS__)
#define wait(...) tc_wait(__VA_ARGS__)
#define waitpid(...) tc_waitpid(__VA_ARGS__)
#define sigwait(...) tc_sigwait(__VA_ARGS__)
#define sigsuspend(...) tc_sigsuspend(__VA_ARGS__)
#define tcdrain(...) tc_tcdrain(__VA_ARGS__)
#define pselect(...) tc_pselect(__VA_ARGS__)
#define epoll_pwait(...) tc_epoll_pwait(__VA_ARGS__)
#define sigtimedwait(...) tc_sigtimedwait(__VA_ARGS__)
#define sigwaitinfo(...) tc_sigwaitinfo(__VA_ARGS__)
#define waitid(...) tc_waitid(__VA_ARGS__)
#define fcntl(...) tc_compat_fcntl_(__VA_ARGS__)
#define lockf(...) tc_lockf(__VA_ARGS__)
#define msync(...) tc_msync(__VA_ARGS__)
#define msgrcv(...) tc_msgrcv(__VA_ARGS__)
#define msgsnd(...) tc_msgsnd(__VA_ARGS__)
#ifndef __ANDROID__
#define mq_receive(...) tc_mq_receive(__VA_ARGS__)
#define mq_timedreceive(...) tc_mq_timedreceive(__VA_ARGS__)
#define mq_send(...) tc_mq_send(__VA_ARGS__)
#define mq_timedsend(...) tc_mq_timedsend(__VA_ARGS__)
#endif

/* More of glibc's points: the explicit 64-bit names (the same calls on the 64-bit
 * targets this library supports), the calls added since, and the signal masks (the cancel
 * signal is never blocked nor waited for: see thread_cancel.h). */
#undef open64 /* a macro of musl's */
#define open64(...) tc_compat_open_(__VA_ARGS__)
#undef openat64 /* a macro of musl's */
#define openat64(...) tc_compat_openat_(__VA_ARGS__)
#undef creat64 /* a macro of musl's */
#define creat64(...) tc_creat(__VA_ARGS__)
#undef pread64 /* a macro of musl's */
#define pread64(...) tc_pread(__VA_ARGS__)
#undef pwrite64 /* a macro of musl's */
#define pwrite64(...) tc_pwrite(__VA_ARGS__)
#undef preadv64 /* a macro of musl's */
#define preadv64(...) tc_preadv(__VA_ARGS__)
#undef pwritev64 /* a macro of musl's */
#define pwritev64(...) tc_pwritev(__VA_ARGS__)
#define preadv64v2(...) tc_preadv2(__VA_ARGS__)
#define pwritev64v2(...) tc_pwritev2(__VA_ARGS__)
#define fcntl64(...) tc_compat_fcntl_(__VA_ARGS__)
#undef lockf64 /* a macro of musl's */
#define lockf64(...) tc_lockf(__VA_ARGS__)
#define preadv(...) tc_preadv(__VA_ARGS__)
#define pwritev(...) tc_pwritev(__VA_ARGS__)
#define preadv2(...) tc_preadv2(__VA_ARGS__)
#define pwritev2(...) tc_pwritev2(__VA_ARGS__)
#define sendmmsg(...) tc_sendmmsg(__VA_ARGS__)
#define recvmmsg(...) tc_recvmmsg(__VA_ARGS__)
#define epoll_pwait2(...) tc_epoll_pwait2(__VA_ARGS__)
#define wait3(...) tc_wait3(__VA_ARGS__)
#define wait4(...) tc_wait4(__VA_ARGS__)
#define splice(...) tc_splice(__VA_ARGS__)
#define tee(...) tc_tee(__VA_ARGS__)
#define vmsplice(...) tc_vmsplice(__VA_ARGS__)
#define sigpause(...) tc_sigpause(__VA_ARGS__)
#define pthread_sigmask tc_pthread_sigmask
#define sigprocmask(...) tc_sigprocmask(__VA_ARGS__)
#ifndef __ANDROID__
#define aio_suspend(...) tc_aio_suspend(__VA_ARGS__)
#define system(...) tc_system(__VA_ARGS__)
#endif

/* stdio (see thread_cancel.h for what a canceled call did). The variadic calls format here
 * and go through the va_list ones. */
__attribute__((format(printf, 2, 3))) static inline int tc_compat_fprintf_(FILE *f, const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    int r = tc_vfprintf(f, fmt, ap);
    va_end(ap);
    return r;
}
__attribute__((format(printf, 1, 2))) static inline int tc_compat_printf_(const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    int r = tc_vprintf(fmt, ap);
    va_end(ap);
    return r;
}
__attribute__((format(printf, 2, 3))) static inline int tc_compat_dprintf_(int fd, const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    int r = tc_vdprintf(fd, fmt, ap);
    va_end(ap);
    return r;
}
__attribute__((format(scanf, 2, 3))) static inline int tc_compat_fscanf_(FILE *f, const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    int r = tc_vfscanf(f, fmt, ap);
    va_end(ap);
    return r;
}
__attribute__((format(scanf, 1, 2))) static inline int tc_compat_scanf_(const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    int r = tc_vscanf(fmt, ap);
    va_end(ap);
    return r;
}
#undef getc
#undef putc
#undef getchar
#undef putchar
#define fgetc(...) tc_fgetc(__VA_ARGS__)
#define getc(...) tc_getc(__VA_ARGS__)
#define getchar(...) tc_getchar(__VA_ARGS__)
#define fgets(...) tc_fgets(__VA_ARGS__)
#define fread(...) tc_fread(__VA_ARGS__)
#define getline(...) tc_getline(__VA_ARGS__)
#define getdelim(...) tc_getdelim(__VA_ARGS__)
#define fscanf(...) tc_compat_fscanf_(__VA_ARGS__)
#define scanf(...) tc_compat_scanf_(__VA_ARGS__)
#define vfscanf(...) tc_vfscanf(__VA_ARGS__)
#define vscanf(...) tc_vscanf(__VA_ARGS__)
#define fputc(...) tc_fputc(__VA_ARGS__)
#define putc(...) tc_putc(__VA_ARGS__)
#define putchar(...) tc_putchar(__VA_ARGS__)
#define fputs(...) tc_fputs(__VA_ARGS__)
#define puts(...) tc_puts(__VA_ARGS__)
#define fwrite(...) tc_fwrite(__VA_ARGS__)
#define fprintf(...) tc_compat_fprintf_(__VA_ARGS__)
#define printf(...) tc_compat_printf_(__VA_ARGS__)
#define dprintf(...) tc_compat_dprintf_(__VA_ARGS__)
#define vfprintf(...) tc_vfprintf(__VA_ARGS__)
#define vprintf(...) tc_vprintf(__VA_ARGS__)
#define vdprintf(...) tc_vdprintf(__VA_ARGS__)
#define fflush(...) tc_fflush(__VA_ARGS__)
#define fclose(...) tc_fclose(__VA_ARGS__)
#define fopen(...) tc_fopen(__VA_ARGS__)
#define perror(...) tc_perror(__VA_ARGS__)
/* The _unlocked variants: the caller may hold the stream's lock (flockfile), which is
 * recursive, so the locking calls serve them. */
#undef getc_unlocked
#undef getchar_unlocked
#undef putc_unlocked
#undef putchar_unlocked
#undef fgetc_unlocked
#undef fgets_unlocked
#undef fread_unlocked
#undef fputc_unlocked
#undef fputs_unlocked
#undef fwrite_unlocked
#undef fflush_unlocked
#define getc_unlocked(...) tc_getc(__VA_ARGS__)
#define getchar_unlocked(...) tc_getchar(__VA_ARGS__)
#define fgetc_unlocked(...) tc_fgetc(__VA_ARGS__)
#define fgets_unlocked(...) tc_fgets(__VA_ARGS__)
#define fread_unlocked(...) tc_fread(__VA_ARGS__)
#define putc_unlocked(...) tc_putc(__VA_ARGS__)
#define putchar_unlocked(...) tc_putchar(__VA_ARGS__)
#define fputc_unlocked(...) tc_fputc(__VA_ARGS__)
#define fputs_unlocked(...) tc_fputs(__VA_ARGS__)
#define fwrite_unlocked(...) tc_fwrite(__VA_ARGS__)
#define fflush_unlocked(...) tc_fflush(__VA_ARGS__)

#endif /* THREAD_CANCEL_PTHREAD_COMPAT_H */
