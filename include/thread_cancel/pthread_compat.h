/* pthread_compat.h: gives an unmodified POSIX C program thread-cancel's semantics.
 *
 *     cc -include thread_cancel/pthread_compat.h -I<repo>/include prog.c \
 *        -L<dir of libthread_cancel> -lthread_cancel -lpthread
 *
 * It includes the system headers first, then renames the POSIX thread, cancellation and
 * cancellation-point calls to their tc_ equivalents (thread_cancel.h). Everything else
 * (mutexes, attributes, signals, ...) is the system's, untouched. pthread_t values are our
 * generation-tagged ids: pass them only to the calls renamed here (tc_native gives the
 * system's id for any other). The system-call points are function-like macros, so a struct
 * member or a function pointer named `read` is left alone.
 *
 * Feature macros: force-included, this header is read before the program's first line, where
 * programs define _GNU_SOURCE, _XOPEN_SOURCE, ... So it reads the system headers it needs
 * (those thread_cancel.h includes, and <fcntl.h>) with _GNU_SOURCE, then puts the feature
 * macros back as the command line left them and lets <features.h> decide again: every other
 * header the program includes (<stdlib.h>, <string.h>, <stdio.h>, ...) follows the program's
 * own defines (the GNU or the POSIX strerror_r, ...), and the headers read here declare their
 * GNU extensions too (cpu_set_t, pipe2, pthread_setname_np, ...), as with g++, which always
 * defines _GNU_SOURCE. A program whose own names collide with one of those extensions (its own
 * gettid, say) compiles with -DTC_COMPAT_NO_GNU_SOURCE: those headers then
 * follow the command line's feature macros only, so a program that needs their GNU parts must
 * define _GNU_SOURCE on the command line (-D_GNU_SOURCE), not in its source. */
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
#define pthread_sigqueue tc_pthread_sigqueue

#undef pthread_cleanup_push
#undef pthread_cleanup_pop
#define pthread_cleanup_push(routine, arg) tc_cleanup_push(routine, arg)
#define pthread_cleanup_pop(execute) tc_cleanup_pop(execute)

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
#define mq_receive(...) tc_mq_receive(__VA_ARGS__)
#define mq_timedreceive(...) tc_mq_timedreceive(__VA_ARGS__)
#define mq_send(...) tc_mq_send(__VA_ARGS__)
#define mq_timedsend(...) tc_mq_timedsend(__VA_ARGS__)

#endif /* THREAD_CANCEL_PTHREAD_COMPAT_H */
