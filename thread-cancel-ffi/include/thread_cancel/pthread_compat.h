/* pthread_compat.h: gives an unmodified POSIX C program thread-cancel's semantics.
 *
 *     cc -include thread_cancel/pthread_compat.h -I<repo>/include prog.c \
 *        -L<dir of libthread_cancel> -lthread_cancel -lpthread
 *
 * It includes the system headers first, then redirects the POSIX thread, cancellation and
 * cancellation-point calls (system calls, stdio, system, aio_suspend) and the signal-mask
 * calls, sigaction, signal and the older handler calls, raise, the set calls (see "The cancel
 * signal" below) to their tc_ equivalents (thread_cancel.h). The rest (mutexes, attributes, other signal calls, ...) is the
 * system's, untouched. glibc points not mapped (a blocked thread there is canceled only at
 * its next point): the wide-character stdio calls, freopen, pclose, fseek/fsetpos/rewind's
 * flush, getaddrinfo and the other resolver lookups, syslog, wordexp, getopt's message.
 * pthread_t values are, on glibc, the C library's own ids (never reused for the threads created
 * here: thread_cancel.h, tc_thread_t), good for any call and any library; elsewhere our
 * generation-tagged ids: pass them only to the calls renamed here (tc_native gives the
 * system's id for any other). The calls renamed here also take the
 * system's pthread_t of a thread created without this header (std::thread's native_handle()),
 * once that thread has called one of them; before that, such a thread's calls are the C
 * library's and so is its cancel: pthread_cancel of its system id is the C library's (glibc; a
 * cancel is kept for its first call elsewhere). Not pthread_join/pthread_detach: join such a
 * thread with the C library's own (as std::thread).
 *
 * How: no macros. Each call is redeclared, after the system header's own declaration, with an
 * asm label (glibc's __REDIRECT form: `extern ssize_t read(int, void *, size_t)
 * __asm__("tc_read");`, in C++ extern "C" with the system's exception specification), so the
 * function keeps its name and every reference to it reaches the tc_ symbol: `read(...)`,
 * `::read`, `std::fgets` and `std::system` after <cstdio>/<cstdlib> (libstdc++'s #undefs do
 * not matter), and the function's address: `&read` and a function pointer taken from it are
 * tc_read. C++ members and other scopes' names (`obj.read()`, `ops->write(...)`,
 * std::condition_variable::wait, std::ostream::write) are the program's. To call the C
 * library's own function, declare it under a name of your own with its symbol:
 * `extern int sys_nanosleep(const struct timespec *, struct timespec *) __asm__("nanosleep");`.
 * Written `int pthread_cond_wait(...) { ... }` in the program, a definition is tc_cond_wait's
 * (the link fails: multiple definition), and #undef changes nothing (no macros).
 *
 * Calls made by other libraries (glibc on 64-bit Linux): code built without this header — the
 * C++ standard library, libcurl, sqlite, zlib, libuv, a plugin — calls the C library's own
 * names, and libthread_cancel defines them too: read, write, poll, select, nanosleep, usleep,
 * sleep, accept, connect, recv, send, waitpid, the other system-call points of its table, and
 * pthread_cond_wait, pthread_cond_timedwait and pthread_cond_clockwait; and the cancellation
 * calls of that code — pthread_cancel, pthread_setcancelstate, pthread_setcanceltype,
 * pthread_testcancel, pthread_exit and the registration of glibc's pthread_cleanup_push without
 * -fexceptions (__pthread_register_cancel and its family) — which are the library's for a thread
 * the library manages and the C library's for any other: a library's pthread_cancel of a thread
 * of the program (by the id pthread_self gave it) reaches it blocked in read, a section it
 * disables with pthread_setcancelstate is not canceled, its cleanup handlers run in order with
 * the program's. So a blocking call made
 * inside any library is a cancellation point of a thread the library manages (created with
 * pthread_create through this header, or the main thread), acting as with glibc: the C and C++
 * frames are unwound, the cleanup handlers and destructors run (std::condition_variable::wait,
 * curl_easy_perform, a sqlite busy wait, gzread are canceled). Inside tc_scope_run, such a call
 * fails with the scope's error (ECANCELED, ETIMEDOUT) instead of unwinding code that was not
 * written for it, and a condition wait made by another library is never woken nor failed by a
 * scope's cancel (libuv aborts on such an error; POSIX gives the wait none): only the thread's
 * own cancellation acts there. A thread that such code creates (its pthread_create or
 * thrd_create, std::thread in libstdc++: the library defines both for the process) stays the C
 * library's — its id, cancel, state, cleanup handlers, unwind and every glibc cancellation point
 * are glibc's — but the blocking calls the library defines are its points there: canceled, such
 * a call completed or had no effect, and glibc then acts on the cancel (never both: glibc
 * before 2.41 can consume a read's data and still act). The same holds for every thread of a
 * program built against plain glibc and started with LD_PRELOAD=libthread_cancel.so (its main
 * thread too; the limits are in the README). Any other thread the library does not manage calls
 * the C library's own definition (one thread-local read more: 1.05x glibc's read of one byte,
 * measured by `cargo bench -p thread-cancel-ffi --bench foreign_read`). Not reached: stdio and iostreams
 * used inside other libraries (std::cin, std::getline, fprintf in libcurl: the C library's
 * stdio calls its own internal read and write; defining the stdio functions for every thread
 * would cost 3.5x on a getc of a buffered byte, measured by the same bench), open, openat and fcntl from other libraries
 * with the shared library (variadic: the static library defines them), and a library linked
 * with -Bsymbolic or statically against the C library. Because the library defines these
 * names, a program that defines one of them itself (its own pthread_cond_wait, read, ...) and
 * links the static library fails to link (multiple definition); with the shared library the
 * program's definition is the one every other library reaches, and the library's own waits
 * call the C library's (the first definition after libthread_cancel: a preloaded object's, if
 * any). pthread_cond_wait references bound to glibc's pre-2003 version (GLIBC_2.2.5, binaries
 * linked before glibc 2.3.2) reach the current condition variable: such binaries are not
 * supported. Under AddressSanitizer (libasan first, then libthread_cancel, then libc), ASan's
 * interceptors call libthread_cancel's definitions, which call the C library's.
 * The variadic calls (open, openat, fcntl, printf, fprintf, dprintf, scanf, fscanf) reach
 * static helpers here that call the va_list or mode-taking tc_ function. Still macros, as in
 * the C library itself: pthread_cleanup_push/pop (they open and close a block) and
 * PTHREAD_CANCELED. glibc's own labels (the scanf family, sigpause, _FILE_OFFSET_BITS=64's
 * open64, pread64, fopen64, ...) and _FORTIFY_SOURCE's __read_alias, __fgets_alias, ... are
 * redeclared before the system headers (the first label holds). With _FORTIFY_SOURCE, a call
 * whose buffer size the compiler knows goes to a checking function (__read_chk, __printf_chk,
 * ...): the printf family, read, pread, recv, recvfrom, poll, ppoll, fgets and fread have
 * checking functions that call ours (the others' are glibc's); recvfrom's unchecked path
 * (__recvfrom_alias, when the size is safe) keeps glibc's label. C++ and exceptions:
 * each redeclaration keeps the system's exception specification. glibc declares wait3 and
 * wait4 (and aio_suspend with _FILE_OFFSET_BITS=64) noexcept, and a later declaration cannot
 * take that back: g++ makes no landing pad for such a call, so a cancellation acting there
 * does not run the destructors of the calling frame (with glibc alone neither: the same
 * declarations). Every other point is declared without it.
 *
 * The cancel signal: a program has every signal from SIGRTMIN to SIGRTMAX, as with glibc, which
 * keeps its own signals below the SIGRTMIN it reports. The library's cancel signal is the
 * system's first real-time signal (the SIGRTMIN of the C library's headers), and the program's
 * SIGRTMIN is the next one: the system's macro calls __libc_current_sigrtmin, redirected here
 * to tc_current_sigrtmin (on glibc the library also defines __libc_current_sigrtmin itself, so
 * every library of the process, built with the header or not, sees the same SIGRTMIN). To give
 * the cancel signal another of the system's first eight real-time signals, set the environment
 * variable THREAD_CANCEL_SIGNAL to its number before the program starts (glibc; read when the
 * library is loaded, before any constructor): SIGRTMIN is then the one after it, and a value
 * that is not such a signal is reported on stderr and ignored. A program may block, wait for and handle each of its real-time
 * signals, before its first thread or after, and cancellation is untouched. Our signal is
 * treated as glibc treats its own: sigaction and signal refuse it (EINVAL), and so do sigset,
 * sysv_signal, bsd_signal, sigignore, sighold, sigrelse and siginterrupt; pthread_kill,
 * pthread_sigqueue and raise do not send it (EINVAL), sigaddset and sigdelset refuse it,
 * sigfillset leaves it out, masks and signal waits never hold it (sigqueue and kill to the
 * process send it, as glibc's send its own, and it does nothing then); its
 * handler is installed before main (thread_cancel.h's constructor). The Rust crate's default
 * (SIGRTMIN + 7, for Rust programs, which see the system's SIGRTMIN) is not used here; if a
 * Rust thread of the crate started first in the process, its signal stays and SIGRTMIN is the
 * system's.
 *
 * Also as glibc (2.36), each checked against it by a test program: pthread_create applies the
 * signal mask of the attribute (pthread_attr_setsigmask_np, glibc >= 2.32; without one, the
 * creator's), less the cancel signal (pthread_attr_getsigmask_np reads the attribute back as
 * the program set it; sigaddset and sigfillset never put our signal in it). Inside a cleanup
 * handler or a destructor run by a cancel or pthread_exit, pthread_setcancelstate and
 * pthread_setcanceltype report the state and type the thread last set (glibc does not change
 * them when it acts), yet no second cancel acts there, whatever the handler sets. In a child
 * forked by a thread, the parent's other threads count as ended: pthread_cancel returns 0 and
 * does nothing, pthread_join returns 0 at once with a NULL value (the id then ends), except the
 * parent's main thread (when another thread forked), whose id has ended: ESRCH for every call
 * (glibc's join of it waits for ever; pthread_kill of the other threads returns 0 here, EINVAL
 * with glibc, whose descriptor of them holds no thread id). A program gets as many
 * thread-specific keys (PTHREAD_KEYS_MAX, less the C library's) as with glibc alone: the
 * library takes none of them for itself.
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
 * (-D_GNU_SOURCE), not in its source; a strict mode must then name POSIX.1-2008
 * (-D_POSIX_C_SOURCE=200809L or -D_XOPEN_SOURCE=700), and the calls that take an off64_t are
 * mapped only where the system headers declare them. */
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

#include <features.h> /* __GLIBC__, glibc's <sys/cdefs.h> */

/* With -DTC_COMPAT_NO_GNU_SOURCE the system headers follow the command line's feature macros,
 * and this header needs POSIX.1-2008's (siginfo_t, idtype_t, useconds_t, CLOCK_REALTIME, ...):
 * a strict mode (-std=c11) must name that level. */
#if defined TC_COMPAT_NO_GNU_SOURCE && !defined __cplusplus &&                                  \
    ((defined __GLIBC__ && !defined __USE_XOPEN2K8) ||                                         \
     (!defined __GLIBC__ && defined __STRICT_ANSI__ && !defined _POSIX_C_SOURCE &&            \
      !defined _XOPEN_SOURCE && !defined _DEFAULT_SOURCE && !defined _GNU_SOURCE &&           \
      !defined _BSD_SOURCE))
#error "thread_cancel/pthread_compat.h with -DTC_COMPAT_NO_GNU_SOURCE needs POSIX.1-2008: add -D_POSIX_C_SOURCE=200809L (or -D_XOPEN_SOURCE=700, or -D_DEFAULT_SOURCE)"
#endif

/* Symbol-level redirection (see the top comment). TC_COMPAT_REDIRECT_(name, (params), alias)
 * is glibc's __REDIRECT (<sys/cdefs.h>): `name (params) __asm__("alias")`, made here on every C
 * library; the _NTH form adds, in C++, the exception specification (glibc's __THROW,
 * `noexcept(true)`) of a system declaration that has one, which a redeclaration must repeat.
 * Only for such calls: a call that can act on a cancellation (every point, pthread_testcancel,
 * pthread_join) must not be declared with _NTH where the system's declaration is not
 * noexcept, or g++ takes the call for one that cannot unwind and makes no landing pad for it
 * (the destructors of the calling frame do not run when it acts). */
#define TC_COMPAT_STR_(x) #x
#define TC_COMPAT_ASMNAME_(prefix, name) TC_COMPAT_STR_(prefix) #name
#define TC_COMPAT_ASM_(name) __asm__(TC_COMPAT_ASMNAME_(__USER_LABEL_PREFIX__, name))
#define TC_COMPAT_REDIRECT_(name, proto, alias) name proto TC_COMPAT_ASM_(alias)
#if defined __cplusplus && defined __GLIBC__
#define TC_COMPAT_REDIRECT_NTH_(name, proto, alias) name proto __THROW TC_COMPAT_ASM_(alias)
#else
#define TC_COMPAT_REDIRECT_NTH_(name, proto, alias) name proto TC_COMPAT_ASM_(alias)
#endif
#ifdef __cplusplus
#define TC_COMPAT_BEGIN_ extern "C" {
#define TC_COMPAT_END_ }
#else
#define TC_COMPAT_BEGIN_
#define TC_COMPAT_END_
#endif

#ifdef __GLIBC__
/* glibc gives some of the calls mapped here an asm label of its own, and the first label of a
 * function is the one that holds: those are declared here, before the system headers.
 *   - fscanf, scanf, vfscanf, vscanf (C99 and later: __isoc99_fscanf, ...); sigpause (X/Open:
 *     __xpg_sigpause);
 *   - with _FILE_OFFSET_BITS=64: open -> open64, pread -> pread64, fopen -> fopen64, ... (the
 *     same calls on the 64-bit targets this library supports);
 *   - with _FORTIFY_SOURCE (and optimisation): read, fgets, poll, open, ... are inline wrappers
 *     that call __read_alias (labeled "read") when the buffer is large enough or of unknown
 *     size; the __*_alias names are redirected here too. (What the wrappers call when the
 *     size is checked at run time: see below.)
 * glibc's inline bodies of getc_unlocked, putchar, getline, ... (<bits/stdio.h>, read at -O)
 * would reach the C library's stdio buffers and __uflow directly: the headers read here are
 * read without glibc's extern inlines (programs then call the functions, redirected below). */
#ifdef __USE_EXTERN_INLINES
#define TC_COMPAT_EXTERN_INLINES_ 1
#undef __USE_EXTERN_INLINES
#endif
#include <stdarg.h>
#include <sys/types.h>
#include <bits/types/FILE.h>
#include <bits/types/struct_iovec.h>
#include <bits/types/__sigset_t.h>
struct aiocb;
struct pollfd;
struct timespec;
TC_COMPAT_BEGIN_
extern int TC_COMPAT_REDIRECT_(fscanf, (FILE *__restrict, const char *__restrict, ...), tc_compat_fscanf_);
extern int TC_COMPAT_REDIRECT_(scanf, (const char *__restrict, ...), tc_compat_scanf_);
extern int TC_COMPAT_REDIRECT_(vfscanf, (FILE *__restrict, const char *__restrict, va_list), tc_vfscanf);
extern int TC_COMPAT_REDIRECT_(vscanf, (const char *__restrict, va_list), tc_vscanf);
extern int TC_COMPAT_REDIRECT_(sigpause, (int), tc_sigpause);
#ifdef __USE_FILE_OFFSET64
extern int TC_COMPAT_REDIRECT_(open, (const char *, int, ...), tc_compat_open_);
extern int TC_COMPAT_REDIRECT_(openat, (int, const char *, int, ...), tc_compat_openat_);
extern int TC_COMPAT_REDIRECT_(creat, (const char *, mode_t), tc_creat);
extern int TC_COMPAT_REDIRECT_(fcntl, (int, int, ...), tc_compat_fcntl_);
extern int TC_COMPAT_REDIRECT_(lockf, (int, int, off_t), tc_lockf);
extern ssize_t TC_COMPAT_REDIRECT_(pread, (int, void *, size_t, off_t), tc_pread);
extern ssize_t TC_COMPAT_REDIRECT_(pwrite, (int, const void *, size_t, off_t), tc_pwrite);
extern ssize_t TC_COMPAT_REDIRECT_(preadv, (int, const struct iovec *, int, off_t), tc_preadv);
extern ssize_t TC_COMPAT_REDIRECT_(pwritev, (int, const struct iovec *, int, off_t), tc_pwritev);
extern ssize_t TC_COMPAT_REDIRECT_(preadv2, (int, const struct iovec *, int, off_t, int), tc_preadv2);
extern ssize_t TC_COMPAT_REDIRECT_(pwritev2, (int, const struct iovec *, int, off_t, int), tc_pwritev2);
extern FILE *TC_COMPAT_REDIRECT_(fopen, (const char *__restrict, const char *__restrict), tc_fopen);
extern int TC_COMPAT_REDIRECT_NTH_(aio_suspend, (const struct aiocb *const[], int, const struct timespec *__restrict), tc_aio_suspend); /* glibc: noexcept with _FILE_OFFSET_BITS=64 only */
#endif
#if defined __USE_FORTIFY_LEVEL && __USE_FORTIFY_LEVEL > 0
extern ssize_t TC_COMPAT_REDIRECT_(__read_alias, (int, void *, size_t), tc_read);
extern ssize_t TC_COMPAT_REDIRECT_(__pread_alias, (int, void *, size_t, off_t), tc_pread);
extern ssize_t TC_COMPAT_REDIRECT_(__pread64_alias, (int, void *, size_t, __off64_t), tc_pread);
extern char *TC_COMPAT_REDIRECT_(__fgets_alias, (char *__restrict, int, FILE *__restrict), tc_fgets);
extern char *TC_COMPAT_REDIRECT_(__fgets_unlocked_alias, (char *__restrict, int, FILE *__restrict), tc_fgets);
extern size_t TC_COMPAT_REDIRECT_(__fread_alias, (void *__restrict, size_t, size_t, FILE *__restrict), tc_fread);
extern size_t TC_COMPAT_REDIRECT_(__fread_unlocked_alias, (void *__restrict, size_t, size_t, FILE *__restrict), tc_fread);
extern int TC_COMPAT_REDIRECT_(__poll_alias, (struct pollfd *, unsigned long int, int), tc_poll);
extern int TC_COMPAT_REDIRECT_(__ppoll_alias, (struct pollfd *, unsigned long int, const struct timespec *, const __sigset_t *), tc_ppoll);
extern ssize_t TC_COMPAT_REDIRECT_(__recv_alias, (int, void *, size_t, int), tc_recv);
extern int TC_COMPAT_REDIRECT_(__open_alias, (const char *, int, ...), tc_compat_open_);
extern int TC_COMPAT_REDIRECT_(__openat_alias, (int, const char *, int, ...), tc_compat_openat_);
extern int TC_COMPAT_REDIRECT_(__open64_alias, (const char *, int, ...), tc_compat_open_);
extern int TC_COMPAT_REDIRECT_(__openat64_alias, (int, const char *, int, ...), tc_compat_openat_);
#endif
TC_COMPAT_END_
#endif /* __GLIBC__ */

#include <fcntl.h>
#include <stdarg.h>
#include <thread_cancel.h>
/* The C standard's <threads.h> (glibc 2.28 and later; -DTC_COMPAT_NO_C11_THREADS leaves it
 * out): read here so that its calls can be redirected below. It defines the standard's
 * `thread_local` macro in C. */
#if defined __GLIBC__ && defined __has_include && !defined TC_COMPAT_NO_C11_THREADS
#if __has_include(<threads.h>)
#include <threads.h>
#define TC_COMPAT_C11_THREADS_ 1
#endif
#endif
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

#ifdef TC_COMPAT_EXTERN_INLINES_
#define __USE_EXTERN_INLINES 1
#undef TC_COMPAT_EXTERN_INLINES_
#endif

/* The system's declarations are read: every call below is redeclared with an asm label, so
 * that the program's calls (and the address of the function) reach the tc_ function. */
#undef pthread_equal /* a macro of musl's */
#undef getc
#undef putc
#undef getchar
#undef putchar
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
#undef open64 /* macros of musl's (the 64-bit names of the same calls) */
#undef openat64
#undef creat64
#undef pread64
#undef pwrite64
#undef preadv64
#undef pwritev64
#undef lockf64

/* The types of the system's declarations where they differ from thread_cancel.h's: glibc's
 * socket address parameters (a transparent union in C with _GNU_SOURCE). */
#ifdef __GLIBC__
#define TC_COMPAT_SOCKADDR_ARG_ __SOCKADDR_ARG
#define TC_COMPAT_CONST_SOCKADDR_ARG_ __CONST_SOCKADDR_ARG
#else
#define TC_COMPAT_SOCKADDR_ARG_ struct sockaddr *__restrict
#define TC_COMPAT_CONST_SOCKADDR_ARG_ const struct sockaddr *
#endif

TC_COMPAT_BEGIN_

/* Threads and cancellation. */
extern int TC_COMPAT_REDIRECT_NTH_(pthread_create, (pthread_t *__restrict, const pthread_attr_t *__restrict, void *(*)(void *), void *__restrict), tc_create);
extern int TC_COMPAT_REDIRECT_(pthread_join, (pthread_t, void **), tc_join);
extern int TC_COMPAT_REDIRECT_NTH_(pthread_detach, (pthread_t), tc_detach);
extern void TC_COMPAT_REDIRECT_(pthread_exit, (void *), tc_exit);
extern pthread_t TC_COMPAT_REDIRECT_NTH_(pthread_self, (void), tc_self);
extern int TC_COMPAT_REDIRECT_NTH_(pthread_equal, (pthread_t, pthread_t), tc_equal);
extern int TC_COMPAT_REDIRECT_NTH_(pthread_kill, (pthread_t, int), tc_kill);
extern int TC_COMPAT_REDIRECT_(pthread_cancel, (pthread_t), tc_cancel);
extern int TC_COMPAT_REDIRECT_(pthread_setcancelstate, (int, int *), tc_setcancelstate);
extern int TC_COMPAT_REDIRECT_(pthread_setcanceltype, (int, int *), tc_setcanceltype);
extern void TC_COMPAT_REDIRECT_(pthread_testcancel, (void), tc_testcancel);
extern int TC_COMPAT_REDIRECT_(pthread_once, (pthread_once_t *, void (*)(void)), tc_once);
extern int TC_COMPAT_REDIRECT_NTH_(pthread_key_create, (pthread_key_t *, void (*)(void *)), tc_key_create);
extern int TC_COMPAT_REDIRECT_NTH_(pthread_key_delete, (pthread_key_t), tc_key_delete);
extern void *TC_COMPAT_REDIRECT_NTH_(pthread_getspecific, (pthread_key_t), tc_getspecific);
extern int TC_COMPAT_REDIRECT_NTH_(pthread_setspecific, (pthread_key_t, const void *), tc_setspecific);
extern int TC_COMPAT_REDIRECT_(pthread_cond_wait, (pthread_cond_t *__restrict, pthread_mutex_t *__restrict), tc_cond_wait);
extern int TC_COMPAT_REDIRECT_(pthread_cond_timedwait, (pthread_cond_t *__restrict, pthread_mutex_t *__restrict, const struct timespec *__restrict), tc_cond_timedwait);
extern int TC_COMPAT_REDIRECT_(sem_wait, (sem_t *), tc_sem_wait);
extern int TC_COMPAT_REDIRECT_(sem_timedwait, (sem_t *__restrict, const struct timespec *__restrict), tc_sem_timedwait);
#if defined __USE_GNU && defined __GLIBC__ /* glibc declares them with _GNU_SOURCE */
#if __GLIBC_PREREQ(2, 30) /* (an #if of its own: the macro is glibc's) */
extern int TC_COMPAT_REDIRECT_(pthread_cond_clockwait, (pthread_cond_t *__restrict, pthread_mutex_t *__restrict, clockid_t, const struct timespec *__restrict), tc_cond_clockwait);
extern int TC_COMPAT_REDIRECT_(sem_clockwait, (sem_t *__restrict, clockid_t, const struct timespec *__restrict), tc_sem_clockwait);
#endif
#endif

#ifdef TC_COMPAT_C11_THREADS_
/* The C standard's threads (glibc's layouts: thrd_t is a pthread_t, so it is our id; cnd_t, mtx_t, once_flag
 * and tss_t are glibc's pthread_cond_t, pthread_mutex_t, pthread_once_t and pthread_key_t),
 * with glibc's results: thrd_success, thrd_nomem (ENOMEM), thrd_timedout, thrd_busy,
 * thrd_error (any other error); thrd_sleep 0, -1 (a signal: *remaining is set) or -2.
 * Cancellation points as in glibc: thrd_join, thrd_sleep, cnd_wait, cnd_timedwait. A thread
 * made by thrd_create is one of ours (pthread_cancel, pthread_kill, ... take its thrd_t); its
 * int result is joined as glibc's: thrd_join of a canceled thread gives -1 (PTHREAD_CANCELED).
 * mtx_*, cnd_init/signal/broadcast/destroy and thrd_yield are glibc's own (not points). */
extern int TC_COMPAT_REDIRECT_(thrd_create, (thrd_t *, thrd_start_t, void *), tc_compat_thrd_create_);
extern int TC_COMPAT_REDIRECT_(thrd_join, (thrd_t, int *), tc_compat_thrd_join_);
extern void TC_COMPAT_REDIRECT_(thrd_exit, (int), tc_compat_thrd_exit_);
extern int TC_COMPAT_REDIRECT_(thrd_detach, (thrd_t), tc_compat_thrd_detach_);
extern thrd_t TC_COMPAT_REDIRECT_(thrd_current, (void), tc_self);
extern int TC_COMPAT_REDIRECT_(thrd_equal, (thrd_t, thrd_t), tc_equal);
extern int TC_COMPAT_REDIRECT_(thrd_sleep, (const struct timespec *, struct timespec *), tc_compat_thrd_sleep_);
extern int TC_COMPAT_REDIRECT_(cnd_wait, (cnd_t *, mtx_t *), tc_compat_cnd_wait_);
extern int TC_COMPAT_REDIRECT_(cnd_timedwait, (cnd_t *__restrict, mtx_t *__restrict, const struct timespec *__restrict), tc_compat_cnd_timedwait_);
extern void TC_COMPAT_REDIRECT_(call_once, (once_flag *, void (*)(void)), tc_compat_call_once_);
extern int TC_COMPAT_REDIRECT_(tss_create, (tss_t *, tss_dtor_t), tc_compat_tss_create_);
extern void *TC_COMPAT_REDIRECT_(tss_get, (tss_t), tc_getspecific);
extern int TC_COMPAT_REDIRECT_(tss_set, (tss_t, void *), tc_compat_tss_set_);
extern void TC_COMPAT_REDIRECT_(tss_delete, (tss_t), tc_compat_tss_delete_);
#endif

/* glibc's other calls that take a pthread_t (every one of glibc 2.36's): our ids, translated to
 * the system's. */
extern int TC_COMPAT_REDIRECT_NTH_(pthread_tryjoin_np, (pthread_t, void **), tc_tryjoin_np);
extern int TC_COMPAT_REDIRECT_(pthread_timedjoin_np, (pthread_t, void **, const struct timespec *), tc_timedjoin_np);
extern int TC_COMPAT_REDIRECT_(pthread_clockjoin_np, (pthread_t, void **, clockid_t, const struct timespec *), tc_clockjoin_np);
extern int TC_COMPAT_REDIRECT_NTH_(pthread_getattr_np, (pthread_t, pthread_attr_t *), tc_getattr_np);
extern int TC_COMPAT_REDIRECT_NTH_(pthread_setname_np, (pthread_t, const char *), tc_setname_np);
extern int TC_COMPAT_REDIRECT_NTH_(pthread_getname_np, (pthread_t, char *, size_t), tc_getname_np);
extern int TC_COMPAT_REDIRECT_NTH_(pthread_setschedparam, (pthread_t, int, const struct sched_param *), tc_setschedparam);
extern int TC_COMPAT_REDIRECT_NTH_(pthread_getschedparam, (pthread_t, int *__restrict, struct sched_param *__restrict), tc_getschedparam);
extern int TC_COMPAT_REDIRECT_NTH_(pthread_setschedprio, (pthread_t, int), tc_setschedprio);
#if defined(__USE_GNU) || (defined(_GNU_SOURCE) && !defined(__GLIBC__) && !defined(__ANDROID__)) /* cpu_set_t */
extern int TC_COMPAT_REDIRECT_NTH_(pthread_setaffinity_np, (pthread_t, size_t, const cpu_set_t *), tc_setaffinity_np);
extern int TC_COMPAT_REDIRECT_NTH_(pthread_getaffinity_np, (pthread_t, size_t, cpu_set_t *), tc_getaffinity_np);
#endif
extern int TC_COMPAT_REDIRECT_NTH_(pthread_getcpuclockid, (pthread_t, clockid_t *), tc_getcpuclockid);
#if defined(__GLIBC__) || defined(__ANDROID__)
extern int TC_COMPAT_REDIRECT_NTH_(pthread_sigqueue, (pthread_t, int, const union sigval), tc_pthread_sigqueue);
#endif

/* System-call points. The variadic ones (open, openat, fcntl) go through the helpers below. */
extern ssize_t TC_COMPAT_REDIRECT_(read, (int, void *, size_t), tc_read);
extern ssize_t TC_COMPAT_REDIRECT_(write, (int, const void *, size_t), tc_write);
extern ssize_t TC_COMPAT_REDIRECT_(pread, (int, void *, size_t, off_t), tc_pread);
extern ssize_t TC_COMPAT_REDIRECT_(pwrite, (int, const void *, size_t, off_t), tc_pwrite);
extern ssize_t TC_COMPAT_REDIRECT_(readv, (int, const struct iovec *, int), tc_readv);
extern ssize_t TC_COMPAT_REDIRECT_(writev, (int, const struct iovec *, int), tc_writev);
extern int TC_COMPAT_REDIRECT_(open, (const char *, int, ...), tc_compat_open_);
extern int TC_COMPAT_REDIRECT_(openat, (int, const char *, int, ...), tc_compat_openat_);
extern int TC_COMPAT_REDIRECT_(creat, (const char *, mode_t), tc_creat);
extern int TC_COMPAT_REDIRECT_(close, (int), tc_close);
extern int TC_COMPAT_REDIRECT_(fsync, (int), tc_fsync);
extern int TC_COMPAT_REDIRECT_(fdatasync, (int), tc_fdatasync);
extern int TC_COMPAT_REDIRECT_(accept, (int, TC_COMPAT_SOCKADDR_ARG_, socklen_t *__restrict), tc_accept);
extern int TC_COMPAT_REDIRECT_(accept4, (int, TC_COMPAT_SOCKADDR_ARG_, socklen_t *__restrict, int), tc_accept4);
extern int TC_COMPAT_REDIRECT_(connect, (int, TC_COMPAT_CONST_SOCKADDR_ARG_, socklen_t), tc_connect);
extern ssize_t TC_COMPAT_REDIRECT_(recv, (int, void *, size_t, int), tc_recv);
extern ssize_t TC_COMPAT_REDIRECT_(send, (int, const void *, size_t, int), tc_send);
extern ssize_t TC_COMPAT_REDIRECT_(recvfrom, (int, void *__restrict, size_t, int, TC_COMPAT_SOCKADDR_ARG_, socklen_t *__restrict), tc_recvfrom);
extern ssize_t TC_COMPAT_REDIRECT_(sendto, (int, const void *, size_t, int, TC_COMPAT_CONST_SOCKADDR_ARG_, socklen_t), tc_sendto);
extern ssize_t TC_COMPAT_REDIRECT_(recvmsg, (int, struct msghdr *, int), tc_recvmsg);
extern ssize_t TC_COMPAT_REDIRECT_(sendmsg, (int, const struct msghdr *, int), tc_sendmsg);
extern int TC_COMPAT_REDIRECT_(poll, (struct pollfd *, nfds_t, int), tc_poll);
extern int TC_COMPAT_REDIRECT_(ppoll, (struct pollfd *, nfds_t, const struct timespec *, const sigset_t *), tc_ppoll);
extern int TC_COMPAT_REDIRECT_(select, (int, fd_set *__restrict, fd_set *__restrict, fd_set *__restrict, struct timeval *__restrict), tc_select);
extern int TC_COMPAT_REDIRECT_(epoll_wait, (int, struct epoll_event *, int, int), tc_epoll_wait);
extern unsigned int TC_COMPAT_REDIRECT_(sleep, (unsigned int), tc_sleep);
extern int TC_COMPAT_REDIRECT_(usleep, (useconds_t), tc_usleep);
extern int TC_COMPAT_REDIRECT_(nanosleep, (const struct timespec *, struct timespec *), tc_nanosleep);
extern int TC_COMPAT_REDIRECT_(clock_nanosleep, (clockid_t, int, const struct timespec *, struct timespec *), tc_clock_nanosleep);
extern int TC_COMPAT_REDIRECT_(pause, (void), tc_pause);
extern pid_t TC_COMPAT_REDIRECT_(wait, (int *), tc_wait);
extern pid_t TC_COMPAT_REDIRECT_(waitpid, (pid_t, int *, int), tc_waitpid);
extern int TC_COMPAT_REDIRECT_(sigwait, (const sigset_t *__restrict, int *__restrict), tc_sigwait);
extern int TC_COMPAT_REDIRECT_(sigsuspend, (const sigset_t *), tc_sigsuspend);
extern int TC_COMPAT_REDIRECT_(tcdrain, (int), tc_tcdrain);
extern int TC_COMPAT_REDIRECT_(pselect, (int, fd_set *__restrict, fd_set *__restrict, fd_set *__restrict, const struct timespec *__restrict, const sigset_t *__restrict), tc_pselect);
extern int TC_COMPAT_REDIRECT_(epoll_pwait, (int, struct epoll_event *, int, int, const sigset_t *), tc_epoll_pwait);
extern int TC_COMPAT_REDIRECT_(sigtimedwait, (const sigset_t *__restrict, siginfo_t *__restrict, const struct timespec *__restrict), tc_sigtimedwait);
extern int TC_COMPAT_REDIRECT_(sigwaitinfo, (const sigset_t *__restrict, siginfo_t *__restrict), tc_sigwaitinfo);
extern int TC_COMPAT_REDIRECT_(waitid, (idtype_t, id_t, siginfo_t *, int), tc_waitid);
extern int TC_COMPAT_REDIRECT_(fcntl, (int, int, ...), tc_compat_fcntl_);
extern int TC_COMPAT_REDIRECT_(lockf, (int, int, off_t), tc_lockf);
extern int TC_COMPAT_REDIRECT_(msync, (void *, size_t, int), tc_msync);
extern ssize_t TC_COMPAT_REDIRECT_(msgrcv, (int, void *, size_t, long int, int), tc_msgrcv);
extern int TC_COMPAT_REDIRECT_(msgsnd, (int, const void *, size_t, int), tc_msgsnd);
#ifndef __ANDROID__
extern ssize_t TC_COMPAT_REDIRECT_(mq_receive, (mqd_t, char *, size_t, unsigned int *), tc_mq_receive);
extern ssize_t TC_COMPAT_REDIRECT_(mq_timedreceive, (mqd_t, char *__restrict, size_t, unsigned int *__restrict, const struct timespec *__restrict), tc_mq_timedreceive);
extern int TC_COMPAT_REDIRECT_(mq_send, (mqd_t, const char *, size_t, unsigned int), tc_mq_send);
extern int TC_COMPAT_REDIRECT_(mq_timedsend, (mqd_t, const char *, size_t, unsigned int, const struct timespec *), tc_mq_timedsend);
#endif

/* More of glibc's points: the explicit 64-bit names (the same calls on the 64-bit targets this
 * library supports), the calls added since, and the signal masks (the cancel signal is never
 * blocked nor waited for: see thread_cancel.h). */
extern int TC_COMPAT_REDIRECT_(open64, (const char *, int, ...), tc_compat_open_);
extern int TC_COMPAT_REDIRECT_(openat64, (int, const char *, int, ...), tc_compat_openat_);
extern int TC_COMPAT_REDIRECT_(creat64, (const char *, mode_t), tc_creat);
/* The calls taking an off64_t exist for a program only where the system headers declare that
 * type (glibc: large-file 64 interfaces, _GNU_SOURCE or _LARGEFILE64_SOURCE; not in a strict
 * POSIX mode with -DTC_COMPAT_NO_GNU_SOURCE). */
#if (defined __GLIBC__ && defined __USE_LARGEFILE64) ||                                        \
    (!defined __GLIBC__ && (defined _GNU_SOURCE || defined _LARGEFILE64_SOURCE))
#define TC_COMPAT_OFF64_ 1
#endif
#ifdef TC_COMPAT_OFF64_
extern ssize_t TC_COMPAT_REDIRECT_(pread64, (int, void *, size_t, off64_t), tc_pread);
extern ssize_t TC_COMPAT_REDIRECT_(pwrite64, (int, const void *, size_t, off64_t), tc_pwrite);
extern ssize_t TC_COMPAT_REDIRECT_(preadv64, (int, const struct iovec *, int, off64_t), tc_preadv);
extern ssize_t TC_COMPAT_REDIRECT_(pwritev64, (int, const struct iovec *, int, off64_t), tc_pwritev);
#endif
#ifdef __GLIBC__ /* musl has neither */
#ifdef TC_COMPAT_OFF64_
extern ssize_t TC_COMPAT_REDIRECT_(preadv64v2, (int, const struct iovec *, int, off64_t, int), tc_preadv2);
extern ssize_t TC_COMPAT_REDIRECT_(pwritev64v2, (int, const struct iovec *, int, off64_t, int), tc_pwritev2);
#endif
extern int TC_COMPAT_REDIRECT_(fcntl64, (int, int, ...), tc_compat_fcntl_);
#endif
#ifdef TC_COMPAT_OFF64_
extern int TC_COMPAT_REDIRECT_(lockf64, (int, int, off64_t), tc_lockf);
#endif
extern ssize_t TC_COMPAT_REDIRECT_(preadv, (int, const struct iovec *, int, off_t), tc_preadv);
extern ssize_t TC_COMPAT_REDIRECT_(pwritev, (int, const struct iovec *, int, off_t), tc_pwritev);
extern ssize_t TC_COMPAT_REDIRECT_(preadv2, (int, const struct iovec *, int, off_t, int), tc_preadv2);
extern ssize_t TC_COMPAT_REDIRECT_(pwritev2, (int, const struct iovec *, int, off_t, int), tc_pwritev2);
#ifdef __GLIBC__
#define TC_COMPAT_MMSG_FLAGS_ int
#else /* musl's flags are unsigned */
#define TC_COMPAT_MMSG_FLAGS_ unsigned int
#endif
extern int TC_COMPAT_REDIRECT_(sendmmsg, (int, struct mmsghdr *, unsigned int, TC_COMPAT_MMSG_FLAGS_), tc_sendmmsg);
extern int TC_COMPAT_REDIRECT_(recvmmsg, (int, struct mmsghdr *, unsigned int, TC_COMPAT_MMSG_FLAGS_, struct timespec *), tc_recvmmsg);
extern int TC_COMPAT_REDIRECT_(epoll_pwait2, (int, struct epoll_event *, int, const struct timespec *, const sigset_t *), tc_epoll_pwait2);
extern pid_t TC_COMPAT_REDIRECT_NTH_(wait3, (int *, int, struct rusage *), tc_wait3);
extern pid_t TC_COMPAT_REDIRECT_NTH_(wait4, (pid_t, int *, int, struct rusage *), tc_wait4);
extern ssize_t TC_COMPAT_REDIRECT_(splice, (int, tc_loff_t *, int, tc_loff_t *, size_t, unsigned int), tc_splice);
extern ssize_t TC_COMPAT_REDIRECT_(tee, (int, int, size_t, unsigned int), tc_tee);
extern ssize_t TC_COMPAT_REDIRECT_(vmsplice, (int, const struct iovec *, size_t, unsigned int), tc_vmsplice);
extern int TC_COMPAT_REDIRECT_(sigpause, (int), tc_sigpause);
extern int TC_COMPAT_REDIRECT_NTH_(pthread_sigmask, (int, const sigset_t *__restrict, sigset_t *__restrict), tc_pthread_sigmask);
extern int TC_COMPAT_REDIRECT_NTH_(sigprocmask, (int, const sigset_t *__restrict, sigset_t *__restrict), tc_sigprocmask);
/* The cancel signal kept from the program (see the top comment): its SIGRTMIN (the system
 * headers' macro calls __libc_current_sigrtmin) is the first real-time signal after ours, and
 * sigaction, signal, raise and the set calls treat ours as glibc's treat its own signals
 * (pthread_kill and pthread_sigqueue, above, too). glibc labels signal __sysv_signal when read
 * without __USE_MISC (strict standard modes with -DTC_COMPAT_NO_GNU_SOURCE): then signal stays
 * the system's. */
typedef void (*tc_compat_sighandler_)(int);
extern int TC_COMPAT_REDIRECT_NTH_(__libc_current_sigrtmin, (void), tc_current_sigrtmin);
extern int TC_COMPAT_REDIRECT_NTH_(sigaction, (int, const struct sigaction *__restrict, struct sigaction *__restrict), tc_sigaction);
#if !defined __GLIBC__ || defined __USE_MISC
extern tc_compat_sighandler_ TC_COMPAT_REDIRECT_NTH_(signal, (int, tc_compat_sighandler_), tc_signal);
#endif
extern int TC_COMPAT_REDIRECT_NTH_(raise, (int), tc_raise);
/* The older handler and mask calls, which glibc refuses for its own signals as it refuses
 * sigaction: declared where the system declares them (on glibc: sigset, sighold, sigrelse,
 * sigignore in X/Open modes, siginterrupt in those and the default mode, sysv_signal with
 * _GNU_SOURCE). glibc declares bsd_signal only in X/Open modes before POSIX 2008, not with
 * _GNU_SOURCE, with which this header reads <signal.h>: it is declared here in every X/Open
 * mode, so that such a program still compiles through the header. bionic (API level 26 and
 * later) keeps its own X/Open calls. */
#if defined __GLIBC__ ? defined __USE_XOPEN_EXTENDED : !defined __ANDROID__
extern tc_compat_sighandler_ TC_COMPAT_REDIRECT_NTH_(sigset, (int, tc_compat_sighandler_), tc_sigset);
extern tc_compat_sighandler_ TC_COMPAT_REDIRECT_NTH_(bsd_signal, (int, tc_compat_sighandler_), tc_bsd_signal);
extern int TC_COMPAT_REDIRECT_NTH_(sigignore, (int), tc_sigignore);
extern int TC_COMPAT_REDIRECT_NTH_(sighold, (int), tc_sighold);
extern int TC_COMPAT_REDIRECT_NTH_(sigrelse, (int), tc_sigrelse);
#endif
#if !defined __GLIBC__ || defined __USE_XOPEN_EXTENDED || defined __USE_MISC
extern int TC_COMPAT_REDIRECT_NTH_(siginterrupt, (int, int), tc_siginterrupt);
#endif
#if defined __GLIBC__ && defined __USE_GNU
extern tc_compat_sighandler_ TC_COMPAT_REDIRECT_NTH_(sysv_signal, (int, tc_compat_sighandler_), tc_sysv_signal);
#endif
extern int TC_COMPAT_REDIRECT_NTH_(sigaddset, (sigset_t *, int), tc_sigaddset);
extern int TC_COMPAT_REDIRECT_NTH_(sigdelset, (sigset_t *, int), tc_sigdelset);
extern int TC_COMPAT_REDIRECT_NTH_(sigfillset, (sigset_t *), tc_sigfillset);
#ifndef __ANDROID__
#if defined __GLIBC__ && defined __USE_FILE_OFFSET64 /* glibc: noexcept with _FILE_OFFSET_BITS=64 only */
extern int TC_COMPAT_REDIRECT_NTH_(aio_suspend, (const struct aiocb *const[], int, const struct timespec *__restrict), tc_aio_suspend);
#else
extern int TC_COMPAT_REDIRECT_(aio_suspend, (const struct aiocb *const[], int, const struct timespec *__restrict), tc_aio_suspend);
#endif
extern int TC_COMPAT_REDIRECT_(system, (const char *), tc_system);
#endif

/* stdio (see thread_cancel.h for what a canceled call did). The variadic calls go through the
 * helpers below. The _unlocked variants: the caller may hold the stream's lock (flockfile),
 * which is recursive, so the locking calls serve them. */
extern int TC_COMPAT_REDIRECT_(fgetc, (FILE *), tc_fgetc);
extern int TC_COMPAT_REDIRECT_(getc, (FILE *), tc_getc);
extern int TC_COMPAT_REDIRECT_(getchar, (void), tc_getchar);
extern char *TC_COMPAT_REDIRECT_(fgets, (char *__restrict, int, FILE *__restrict), tc_fgets);
extern size_t TC_COMPAT_REDIRECT_(fread, (void *__restrict, size_t, size_t, FILE *__restrict), tc_fread);
extern ssize_t TC_COMPAT_REDIRECT_(getline, (char **__restrict, size_t *__restrict, FILE *__restrict), tc_getline);
extern ssize_t TC_COMPAT_REDIRECT_(getdelim, (char **__restrict, size_t *__restrict, int, FILE *__restrict), tc_getdelim);
extern int TC_COMPAT_REDIRECT_(fscanf, (FILE *__restrict, const char *__restrict, ...), tc_compat_fscanf_);
extern int TC_COMPAT_REDIRECT_(scanf, (const char *__restrict, ...), tc_compat_scanf_);
extern int TC_COMPAT_REDIRECT_(vfscanf, (FILE *__restrict, const char *__restrict, va_list), tc_vfscanf);
extern int TC_COMPAT_REDIRECT_(vscanf, (const char *__restrict, va_list), tc_vscanf);
extern int TC_COMPAT_REDIRECT_(fputc, (int, FILE *), tc_fputc);
extern int TC_COMPAT_REDIRECT_(putc, (int, FILE *), tc_putc);
extern int TC_COMPAT_REDIRECT_(putchar, (int), tc_putchar);
extern int TC_COMPAT_REDIRECT_(fputs, (const char *__restrict, FILE *__restrict), tc_fputs);
extern int TC_COMPAT_REDIRECT_(puts, (const char *), tc_puts);
extern size_t TC_COMPAT_REDIRECT_(fwrite, (const void *__restrict, size_t, size_t, FILE *__restrict), tc_fwrite);
extern int TC_COMPAT_REDIRECT_(fprintf, (FILE *__restrict, const char *__restrict, ...), tc_compat_fprintf_);
extern int TC_COMPAT_REDIRECT_(printf, (const char *__restrict, ...), tc_compat_printf_);
extern int TC_COMPAT_REDIRECT_(dprintf, (int, const char *__restrict, ...), tc_compat_dprintf_);
extern int TC_COMPAT_REDIRECT_(vfprintf, (FILE *__restrict, const char *__restrict, va_list), tc_vfprintf);
extern int TC_COMPAT_REDIRECT_(vprintf, (const char *__restrict, va_list), tc_vprintf);
extern int TC_COMPAT_REDIRECT_(vdprintf, (int, const char *__restrict, va_list), tc_vdprintf);
extern int TC_COMPAT_REDIRECT_(fflush, (FILE *), tc_fflush);
extern int TC_COMPAT_REDIRECT_(fclose, (FILE *), tc_fclose);
extern FILE *TC_COMPAT_REDIRECT_(fopen, (const char *__restrict, const char *__restrict), tc_fopen);
extern void TC_COMPAT_REDIRECT_(perror, (const char *), tc_perror);
extern int TC_COMPAT_REDIRECT_(getc_unlocked, (FILE *), tc_getc);
extern int TC_COMPAT_REDIRECT_(getchar_unlocked, (void), tc_getchar);
extern int TC_COMPAT_REDIRECT_(fgetc_unlocked, (FILE *), tc_fgetc);
extern char *TC_COMPAT_REDIRECT_(fgets_unlocked, (char *__restrict, int, FILE *__restrict), tc_fgets);
extern size_t TC_COMPAT_REDIRECT_(fread_unlocked, (void *__restrict, size_t, size_t, FILE *__restrict), tc_fread);
extern int TC_COMPAT_REDIRECT_(putc_unlocked, (int, FILE *), tc_putc);
extern int TC_COMPAT_REDIRECT_(putchar_unlocked, (int), tc_putchar);
extern int TC_COMPAT_REDIRECT_(fputc_unlocked, (int, FILE *), tc_fputc);
extern int TC_COMPAT_REDIRECT_(fputs_unlocked, (const char *__restrict, FILE *__restrict), tc_fputs);
extern size_t TC_COMPAT_REDIRECT_(fwrite_unlocked, (const void *__restrict, size_t, size_t, FILE *__restrict), tc_fwrite);
extern int TC_COMPAT_REDIRECT_(fflush_unlocked, (FILE *), tc_fflush);

TC_COMPAT_END_

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
static int tc_compat_open_(const char *path, int flags, ...) TC_COMPAT_ASM_(tc_compat_open_) __attribute__((used));
static int tc_compat_open_(const char *path, int flags, ...) {
    TC_COMPAT_MODE_(flags, flags)
    return tc_open(path, flags, mode);
}
static int tc_compat_openat_(int dirfd, const char *path, int flags, ...) TC_COMPAT_ASM_(tc_compat_openat_) __attribute__((used));
static int tc_compat_openat_(int dirfd, const char *path, int flags, ...) {
    TC_COMPAT_MODE_(flags, flags)
    return tc_openat(dirfd, path, flags, mode);
}

/* fcntl takes an optional integer or pointer argument; the F_GET* commands take none. */
static int tc_compat_fcntl_(int fd, int cmd, ...) TC_COMPAT_ASM_(tc_compat_fcntl_) __attribute__((used));
static int tc_compat_fcntl_(int fd, int cmd, ...) {
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

#ifdef TC_COMPAT_C11_THREADS_
TC_COMPAT_BEGIN_
/* The C standard's threads over the tc_ calls, as glibc's over its pthread calls (thrd_err_map). */
static inline int tc_compat_thrd_result_(int e) {
    return e == 0 ? thrd_success : e == ENOMEM ? thrd_nomem : e == ETIMEDOUT ? thrd_timedout
         : e == EBUSY ? thrd_busy : thrd_error;
}
struct tc_compat_thrd_start_ {
    thrd_start_t func;
    void *arg;
};
/* The start routine of a thrd_create'd thread: its int result is the thread's value. */
static void *tc_compat_thrd_run_(void *p) {
    struct tc_compat_thrd_start_ s = *(struct tc_compat_thrd_start_ *)p;
    __builtin_free(p);
    return (void *)(__INTPTR_TYPE__)s.func(s.arg);
}
static int tc_compat_thrd_create_(thrd_t *, thrd_start_t, void *) TC_COMPAT_ASM_(tc_compat_thrd_create_) __attribute__((used));
static int tc_compat_thrd_create_(thrd_t *thr, thrd_start_t func, void *arg) {
    struct tc_compat_thrd_start_ *s =
        (struct tc_compat_thrd_start_ *)__builtin_malloc(sizeof(struct tc_compat_thrd_start_));
    if (!s) return thrd_nomem;
    s->func = func;
    s->arg = arg;
    int e = tc_create(thr, 0, tc_compat_thrd_run_, s);
    if (e != 0) __builtin_free(s);
    return tc_compat_thrd_result_(e);
}
static int tc_compat_thrd_join_(thrd_t, int *) TC_COMPAT_ASM_(tc_compat_thrd_join_) __attribute__((used));
static int tc_compat_thrd_join_(thrd_t thr, int *res) {
    void *value = 0;
    int e = tc_join(thr, &value);
    if (e == 0 && res) *res = (int)(__INTPTR_TYPE__)value;
    return tc_compat_thrd_result_(e);
}
static void tc_compat_thrd_exit_(int) TC_COMPAT_ASM_(tc_compat_thrd_exit_) __attribute__((used, noreturn));
static void tc_compat_thrd_exit_(int res) {
    tc_exit((void *)(__INTPTR_TYPE__)res);
}
static int tc_compat_thrd_detach_(thrd_t) TC_COMPAT_ASM_(tc_compat_thrd_detach_) __attribute__((used));
static int tc_compat_thrd_detach_(thrd_t thr) {
    return tc_compat_thrd_result_(tc_detach(thr));
}
static int tc_compat_thrd_sleep_(const struct timespec *, struct timespec *) TC_COMPAT_ASM_(tc_compat_thrd_sleep_) __attribute__((used));
static int tc_compat_thrd_sleep_(const struct timespec *duration, struct timespec *remaining) {
    int e = tc_clock_nanosleep(CLOCK_REALTIME, 0, duration, remaining);
    return e == 0 ? 0 : e == EINTR ? -1 : -2;
}
static int tc_compat_cnd_wait_(cnd_t *, mtx_t *) TC_COMPAT_ASM_(tc_compat_cnd_wait_) __attribute__((used));
static int tc_compat_cnd_wait_(cnd_t *cond, mtx_t *mutex) {
    return tc_compat_thrd_result_(tc_cond_wait((pthread_cond_t *)cond, (pthread_mutex_t *)mutex));
}
static int tc_compat_cnd_timedwait_(cnd_t *, mtx_t *, const struct timespec *) TC_COMPAT_ASM_(tc_compat_cnd_timedwait_) __attribute__((used));
static int tc_compat_cnd_timedwait_(cnd_t *cond, mtx_t *mutex, const struct timespec *abstime) {
    return tc_compat_thrd_result_(
        tc_cond_timedwait((pthread_cond_t *)cond, (pthread_mutex_t *)mutex, abstime));
}
static void tc_compat_call_once_(once_flag *, void (*)(void)) TC_COMPAT_ASM_(tc_compat_call_once_) __attribute__((used));
static void tc_compat_call_once_(once_flag *flag, void (*func)(void)) {
    (void)tc_once((pthread_once_t *)(void *)flag, func);
}
static int tc_compat_tss_create_(tss_t *, tss_dtor_t) TC_COMPAT_ASM_(tc_compat_tss_create_) __attribute__((used));
static int tc_compat_tss_create_(tss_t *key, tss_dtor_t destructor) {
    return tc_compat_thrd_result_(tc_key_create((pthread_key_t *)key, destructor));
}
static int tc_compat_tss_set_(tss_t, void *) TC_COMPAT_ASM_(tc_compat_tss_set_) __attribute__((used));
static int tc_compat_tss_set_(tss_t key, void *value) {
    return tc_compat_thrd_result_(tc_setspecific((pthread_key_t)key, value));
}
static void tc_compat_tss_delete_(tss_t) TC_COMPAT_ASM_(tc_compat_tss_delete_) __attribute__((used));
static void tc_compat_tss_delete_(tss_t key) {
    (void)tc_key_delete((pthread_key_t)key);
}
TC_COMPAT_END_
#endif

TC_COMPAT_BEGIN_
/* The variadic stdio calls format here and go through the va_list ones. */
static int tc_compat_fprintf_(FILE *f, const char *fmt, ...) TC_COMPAT_ASM_(tc_compat_fprintf_) __attribute__((used));
__attribute__((format(printf, 2, 3))) static int tc_compat_fprintf_(FILE *f, const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    int r = tc_vfprintf(f, fmt, ap);
    va_end(ap);
    return r;
}
static int tc_compat_printf_(const char *fmt, ...) TC_COMPAT_ASM_(tc_compat_printf_) __attribute__((used));
__attribute__((format(printf, 1, 2))) static int tc_compat_printf_(const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    int r = tc_vprintf(fmt, ap);
    va_end(ap);
    return r;
}
static int tc_compat_dprintf_(int fd, const char *fmt, ...) TC_COMPAT_ASM_(tc_compat_dprintf_) __attribute__((used));
__attribute__((format(printf, 2, 3))) static int tc_compat_dprintf_(int fd, const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    int r = tc_vdprintf(fd, fmt, ap);
    va_end(ap);
    return r;
}
static int tc_compat_fscanf_(FILE *f, const char *fmt, ...) TC_COMPAT_ASM_(tc_compat_fscanf_) __attribute__((used));
__attribute__((format(scanf, 2, 3))) static int tc_compat_fscanf_(FILE *f, const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    int r = tc_vfscanf(f, fmt, ap);
    va_end(ap);
    return r;
}
static int tc_compat_scanf_(const char *fmt, ...) TC_COMPAT_ASM_(tc_compat_scanf_) __attribute__((used));
__attribute__((format(scanf, 1, 2))) static int tc_compat_scanf_(const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    int r = tc_vscanf(fmt, ap);
    va_end(ap);
    return r;
}
#if defined __GLIBC__ && defined __USE_FORTIFY_LEVEL && __USE_FORTIFY_LEVEL > 0
/* _FORTIFY_SOURCE: the checking functions its inline wrappers call for the calls used most
 * (printf's family always; read, pread, recv, recvfrom, poll, ppoll, fgets, fread when the
 * buffer's size is known) check as glibc's do (__chk_fail) and call ours; printf's %n check
 * (level 2) is not made. */
extern void __chk_fail(void) __attribute__((__noreturn__));
extern int TC_COMPAT_REDIRECT_(__printf_chk, (int, const char *__restrict, ...), tc_compat_printf_chk_);
extern int TC_COMPAT_REDIRECT_(__fprintf_chk, (FILE *__restrict, int, const char *__restrict, ...), tc_compat_fprintf_chk_);
extern int TC_COMPAT_REDIRECT_(__dprintf_chk, (int, int, const char *__restrict, ...), tc_compat_dprintf_chk_);
extern int TC_COMPAT_REDIRECT_(__vprintf_chk, (int, const char *__restrict, va_list), tc_compat_vprintf_chk_);
extern int TC_COMPAT_REDIRECT_(__vfprintf_chk, (FILE *__restrict, int, const char *__restrict, va_list), tc_compat_vfprintf_chk_);
extern int TC_COMPAT_REDIRECT_(__vdprintf_chk, (int, int, const char *__restrict, va_list), tc_compat_vdprintf_chk_);
extern ssize_t TC_COMPAT_REDIRECT_(__read_chk, (int, void *, size_t, size_t), tc___read_chk);
extern ssize_t TC_COMPAT_REDIRECT_(__pread_chk, (int, void *, size_t, __off_t, size_t), tc___pread_chk);
extern ssize_t TC_COMPAT_REDIRECT_(__pread64_chk, (int, void *, size_t, __off64_t, size_t), tc___pread64_chk);
extern ssize_t TC_COMPAT_REDIRECT_(__recv_chk, (int, void *, size_t, size_t, int), tc___recv_chk);
extern ssize_t TC_COMPAT_REDIRECT_(__recvfrom_chk, (int, void *__restrict, size_t, size_t, int, TC_COMPAT_SOCKADDR_ARG_, socklen_t *__restrict), tc___recvfrom_chk);
extern int TC_COMPAT_REDIRECT_(__poll_chk, (struct pollfd *, nfds_t, int, __SIZE_TYPE__), tc___poll_chk);
extern int TC_COMPAT_REDIRECT_(__ppoll_chk, (struct pollfd *, nfds_t, const struct timespec *, const __sigset_t *, __SIZE_TYPE__), tc___ppoll_chk);
extern char *TC_COMPAT_REDIRECT_(__fgets_chk, (char *__restrict, size_t, int, FILE *__restrict), tc_compat_fgets_chk_);
extern size_t TC_COMPAT_REDIRECT_(__fread_chk, (void *__restrict, size_t, size_t, size_t, FILE *__restrict), tc_compat_fread_chk_);
#define TC_COMPAT_VA_(last, call)                                                               \
    {                                                                                           \
        va_list ap;                                                                             \
        va_start(ap, last);                                                                     \
        int r = call;                                                                           \
        va_end(ap);                                                                             \
        return r;                                                                               \
    }
static int tc_compat_printf_chk_(int, const char *, ...) TC_COMPAT_ASM_(tc_compat_printf_chk_) __attribute__((used));
static int tc_compat_printf_chk_(int flag, const char *fmt, ...) { (void)flag; TC_COMPAT_VA_(fmt, tc_vprintf(fmt, ap)) }
static int tc_compat_fprintf_chk_(FILE *, int, const char *, ...) TC_COMPAT_ASM_(tc_compat_fprintf_chk_) __attribute__((used));
static int tc_compat_fprintf_chk_(FILE *f, int flag, const char *fmt, ...) { (void)flag; TC_COMPAT_VA_(fmt, tc_vfprintf(f, fmt, ap)) }
static int tc_compat_dprintf_chk_(int, int, const char *, ...) TC_COMPAT_ASM_(tc_compat_dprintf_chk_) __attribute__((used));
static int tc_compat_dprintf_chk_(int fd, int flag, const char *fmt, ...) { (void)flag; TC_COMPAT_VA_(fmt, tc_vdprintf(fd, fmt, ap)) }
static int tc_compat_vprintf_chk_(int, const char *, va_list) TC_COMPAT_ASM_(tc_compat_vprintf_chk_) __attribute__((used));
static int tc_compat_vprintf_chk_(int flag, const char *fmt, va_list ap) { (void)flag; return tc_vprintf(fmt, ap); }
static int tc_compat_vfprintf_chk_(FILE *, int, const char *, va_list) TC_COMPAT_ASM_(tc_compat_vfprintf_chk_) __attribute__((used));
static int tc_compat_vfprintf_chk_(FILE *f, int flag, const char *fmt, va_list ap) { (void)flag; return tc_vfprintf(f, fmt, ap); }
static int tc_compat_vdprintf_chk_(int, int, const char *, va_list) TC_COMPAT_ASM_(tc_compat_vdprintf_chk_) __attribute__((used));
static int tc_compat_vdprintf_chk_(int fd, int flag, const char *fmt, va_list ap) { (void)flag; return tc_vdprintf(fd, fmt, ap); }
static char *tc_compat_fgets_chk_(char *, size_t, int, FILE *) TC_COMPAT_ASM_(tc_compat_fgets_chk_) __attribute__((used));
static char *tc_compat_fgets_chk_(char *s, size_t size, int n, FILE *f) {
    if ((size_t)n > size) __chk_fail();
    return tc_fgets(s, n, f);
}
static size_t tc_compat_fread_chk_(void *, size_t, size_t, size_t, FILE *) TC_COMPAT_ASM_(tc_compat_fread_chk_) __attribute__((used));
static size_t tc_compat_fread_chk_(void *p, size_t size, size_t each, size_t count, FILE *f) {
    if (each != 0 && count > size / each) __chk_fail();
    return tc_fread(p, each, count, f);
}
#undef TC_COMPAT_VA_
#endif
TC_COMPAT_END_

#endif /* THREAD_CANCEL_PTHREAD_COMPAT_H */
