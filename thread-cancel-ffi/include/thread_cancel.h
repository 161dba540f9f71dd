/* thread_cancel.h: POSIX thread cancellation, done right (the C ABI of thread-cancel).
 *
 * Link with -lthread_cancel -lpthread (static: also -ldl -lm). Every function is the POSIX
 * one of the same name without the tc_ prefix (pthread_ for the thread functions), with these
 * guarantees:
 *   - a canceled blocking call either completed (its result is returned) or had no effect;
 *   - tc_cancel/tc_join/tc_detach/tc_kill on an id whose lifetime has ended (never existed,
 *     joined, detached and finished) return ESRCH, except tc_join and tc_detach of a detached
 *     thread that has finished: EINVAL, as glibc (until the id's slot has served another thread
 *     that also ended; ESRCH after); ids are never reused. A thread that has
 *     ended but is not yet joined keeps its id: tc_cancel and tc_kill return 0 and do nothing;
 *   - acting on a cancellation runs the cleanup handlers (last pushed first), then the
 *     thread-specific-data destructors, then the thread ends; tc_join reports TC_CANCELED.
 * Threads created by tc_create, and the main thread of a program built with this header, act
 * on requests at the cancellation points below. On glibc, threads that code built without the
 * header creates keep the C library's cancellation, with this library's points where it defines
 * the C library's blocking calls (pthread_compat.h says which); elsewhere a thread not created
 * by tc_create acts only once it has called one of the functions below.
 *
 * The constants have glibc's values, so PTHREAD_CANCEL_* and PTHREAD_CANCELED work as is. */
#ifndef THREAD_CANCEL_H
#define THREAD_CANCEL_H

#ifndef __ANDROID__ /* bionic has neither header */
#include <aio.h>
#endif
#include <errno.h>
#ifndef __ANDROID__
#include <mqueue.h>
#endif
#include <poll.h>
#include <pthread.h>
#include <semaphore.h>
#include <signal.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/epoll.h>
#include <sys/mman.h>
#include <sys/select.h>
#include <sys/socket.h>
#include <sys/types.h>
#include <sys/uio.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#ifdef __cplusplus
extern "C" {
#endif

/* A thread id, of the C library's pthread_t type (an unsigned long in glibc, a long in bionic, a
 * pointer in musl), so that a program's pthread_t variables hold it through pthread_compat.h.
 * On glibc it is the C library's own pthread_t of the thread, usable with every C library call
 * and by libraries built without this header; the threads tc_create makes run on stacks the
 * library owns (unless the attribute gives a stack of the caller's), so their ids are never
 * reused: once a thread's id has ended (joined, or detached and ended) every call on it is
 * ESRCH. An id the C library made (a thread created without this library, the main thread, a
 * stack of the caller's) is reused as the C library reuses it. Elsewhere (musl, bionic) it is
 * the library's own, generation-tagged, never reused and never a system id (its top bit is
 * set): pass tc_native(id) to code built without the header. The calls below also take the
 * system's pthread_t of a thread created without this library (std::thread's native_handle()):
 * see pthread_compat.h. */
typedef pthread_t tc_thread_t;

#define TC_CANCEL_ENABLE 0
#define TC_CANCEL_DISABLE 1
#define TC_CANCEL_DEFERRED 0
#define TC_CANCEL_ASYNCHRONOUS 1
#define TC_CANCELED ((void *)-1)

/* Threads. attr: honoured as the system's pthread_create does (stack size rounded as glibc,
 * pthread_attr_setstack, guard size, inheritsched/schedpolicy/schedparam, EPERM where it
 * refuses them) and its detach state; NULL for the defaults. */
int tc_create(tc_thread_t *thread, const pthread_attr_t *attr, void *(*start)(void *), void *arg);
int tc_join(tc_thread_t thread, void **retval); /* a cancellation point */
int tc_detach(tc_thread_t thread);
__attribute__((noreturn)) void tc_exit(void *retval);
tc_thread_t tc_self(void); /* a thread not created by tc_create gets an id on first use, freed when it ends */
int tc_equal(tc_thread_t a, tc_thread_t b);
int tc_kill(tc_thread_t thread, int sig); /* 0 and no signal for a thread that has ended, not joined */
/* The system's pthread_t of a live thread (0 otherwise), for calls not mapped here. */
pthread_t tc_native(tc_thread_t thread);

/* glibc's joins (GNU): tc_tryjoin_np is EBUSY while the thread has not ended (the caller
 * itself included) and is not a cancellation point; tc_timedjoin_np (CLOCK_REALTIME) and
 * tc_clockjoin_np (CLOCK_REALTIME or CLOCK_MONOTONIC, EINVAL for another) wait until abstime
 * (null: no limit), then ETIMEDOUT with the thread still joinable; they are cancellation
 * points. A negative tv_sec has passed; a tv_nsec outside [0, 1e9) is EINVAL. */
int tc_tryjoin_np(tc_thread_t thread, void **retval);
int tc_timedjoin_np(tc_thread_t thread, void **retval, const struct timespec *abstime);
int tc_clockjoin_np(tc_thread_t thread, void **retval, clockid_t clock, const struct timespec *abstime);

/* The system's calls that take a pthread_t, on our ids (ESRCH for an id that is not a live
 * thread; the system's semantics otherwise). */
int tc_getattr_np(tc_thread_t thread, pthread_attr_t *attr);
int tc_setname_np(tc_thread_t thread, const char *name);
int tc_getname_np(tc_thread_t thread, char *buf, size_t len);
int tc_setschedparam(tc_thread_t thread, int policy, const struct sched_param *param);
int tc_getschedparam(tc_thread_t thread, int *policy, struct sched_param *param);
int tc_setschedprio(tc_thread_t thread, int prio);
int tc_getcpuclockid(tc_thread_t thread, clockid_t *clock);
#if defined(__GLIBC__) || defined(__ANDROID__) /* musl has no pthread_sigqueue */
int tc_pthread_sigqueue(tc_thread_t thread, int sig, const union sigval value);
#endif
#if defined(__USE_GNU) || (defined(_GNU_SOURCE) && !defined(__GLIBC__) && !defined(__ANDROID__)) /* cpu_set_t */
int tc_setaffinity_np(tc_thread_t thread, size_t size, const cpu_set_t *set);
int tc_getaffinity_np(tc_thread_t thread, size_t size, cpu_set_t *set);
#endif

/* Cancellation. */
int tc_cancel(tc_thread_t thread);
int tc_setcancelstate(int state, int *oldstate); /* EINVAL for another value; oldstate may be NULL */
int tc_setcanceltype(int type, int *oldtype);
void tc_testcancel(void);

/* Operation-level cancellation: cancel one operation, not the thread.
 *
 * A scope is a token: tc_scope_run(scope, fn, arg, &result) runs fn(arg) in the calling thread
 * inside the scope, and tc_scope_cancel(scope), from any thread, stops every run of it in
 * progress (in any thread) at its next cancellation point, and every later run before it
 * starts. A canceled call there either completed (the cancel is then acted on at the next
 * point) or had no effect, as with tc_cancel. Acting on it runs the cleanup handlers pushed
 * since tc_scope_run began (last pushed first, C++ destructors interleaved, as for a thread's
 * cancellation), and then tc_scope_run returns TC_SCOPE_CANCELED (TC_SCOPE_TIMEDOUT if a
 * deadline canceled it); the handlers pushed before tc_scope_run do not run and the thread
 * goes on as before the call: no request left, no signal on its way, no EINTR in later calls.
 * A cancel that comes after tc_scope_run returned changes nothing in that thread.
 *
 *   - Runs nest: canceling an outer scope unwinds through the inner runs (their handlers run)
 *     to the outer tc_scope_run. A cancellation of the thread itself (tc_cancel) or tc_exit
 *     passes through every run to the thread's end: tc_scope_run never returns then.
 *   - tc_setcancelstate(TC_CANCEL_DISABLE) holds a scope's cancel as it holds a thread's.
 *   - Never silent: a run whose fn returned although its scope was canceled (or its deadline
 *     passed) before the run ended — cancellation disabled, or no point met — stores fn's
 *     value in *result and still returns TC_SCOPE_CANCELED (TC_SCOPE_TIMEDOUT).
 *   - A run entered on a canceled scope does not call fn.
 *   - Where: in threads that act on cancellation in C code (threads created by tc_create, and
 *     the main thread and other threads of a C program); a cancel is acted on at the points
 *     listed below, condition waits included. In other threads (those of a Rust program), fn
 *     runs in the scope but its C points do not act on the cancel: tc_scope_run stores what
 *     fn returned and reports the cancel as above.
 *   - fn must not throw a C++ exception out of itself (the process aborts, as for tc_create's
 *     start routine); a C++ catch (...) that catches the scope's unwind must rethrow it.
 *
 * Handles: each tc_scope_new, tc_scope_new_timeout_ns, tc_scope_child and tc_scope_ref gives
 * the caller one reference, which tc_scope_free drops. The scope lives while any reference, a
 * child or a run in progress holds it, so a handle can be given to another thread with
 * tc_scope_ref and freed there; as with free(), a reference must not be used after it was
 * dropped. The functions are thread-safe; none is async-signal-safe. */
typedef struct tc_scope tc_scope_t;
#define TC_SCOPE_CANCELED ECANCELED /* tc_scope_run: the scope was canceled before the run ended */
#define TC_SCOPE_TIMEDOUT ETIMEDOUT /* tc_scope_run: the same, by a deadline (its own or a parent's) */
/* A new scope, not canceled; NULL with errno ENOMEM if memory runs out. */
tc_scope_t *tc_scope_new(void);
/* A new scope that cancels itself timeout_ns nanoseconds from now (CLOCK_MONOTONIC); a run in
 * progress then returns TC_SCOPE_TIMEDOUT. NULL with errno ENOMEM if memory runs out. */
tc_scope_t *tc_scope_new_timeout_ns(uint64_t timeout_ns);
/* A new scope canceled with parent (and by its deadline); canceling it leaves parent alone.
 * NULL with errno EINVAL for a null parent, ENOMEM if memory runs out. */
tc_scope_t *tc_scope_child(tc_scope_t *parent);
/* Another reference to scope (the same pointer); NULL with errno EINVAL for a null scope. */
tc_scope_t *tc_scope_ref(tc_scope_t *scope);
/* Drops one reference (NULL: nothing). Runs in progress keep the scope alive. */
void tc_scope_free(tc_scope_t *scope);
/* Cancels scope and its children; 0, or EINVAL for a null scope. Canceling twice is once. */
int tc_scope_cancel(tc_scope_t *scope);
/* 1 if scope is canceled (by tc_scope_cancel, a parent or a deadline that passed), 0 if not;
 * -1 with errno EINVAL for a null scope. */
int tc_scope_is_canceled(tc_scope_t *scope);
/* Runs fn(arg) inside scope: 0 when fn returned (its value stored in *result unless result is
 * NULL); TC_SCOPE_CANCELED or TC_SCOPE_TIMEDOUT when the scope was canceled and fn was stopped
 * at a cancellation point or never started (*result untouched); EINVAL for a null scope or fn
 * (fn not called). Not itself a cancellation point. */
int tc_scope_run(tc_scope_t *scope, void *(*fn)(void *), void *arg, void **result);

/* Cleanup handlers: tc_cleanup_push and tc_cleanup_pop are macros that pair with braces in one
 * lexical scope, as POSIX allows; the buffer lives in the caller's frame. */
struct tc_cleanup_buffer {
    void (*routine)(void *);
    void *arg;
    struct tc_cleanup_buffer *prev;
};
void tc_cleanup_push_buffer(struct tc_cleanup_buffer *buffer, void (*routine)(void *), void *arg);
void tc_cleanup_pop_buffer(struct tc_cleanup_buffer *buffer, int execute);
#define tc_cleanup_push(routine, arg)                                                           \
    do {                                                                                        \
        struct tc_cleanup_buffer tc_cleanup_buffer_;                                            \
        tc_cleanup_push_buffer(&tc_cleanup_buffer_, (routine), (arg));                          \
        {
#define tc_cleanup_pop(execute)                                                                 \
        }                                                                                       \
        tc_cleanup_pop_buffer(&tc_cleanup_buffer_, (execute));                                  \
    } while (0)

/* Once-only initialisation (pthread_once) on the system's pthread_once_t, initialised with
 * PTHREAD_ONCE_INIT (glibc's encoding of the word). Not a cancellation point: a thread waiting
 * for another thread's init routine keeps waiting with a request pending. If the init routine
 * is canceled or calls tc_exit, it is as if tc_once had never been called: the once-control is
 * reset and the next call (or one of the waiting threads) runs an init routine. In the child of
 * a fork made while another thread ran the init routine, the child's call runs it itself.
 * Returns 0; EINVAL for a null or misaligned once_control or a null init_routine; EDEADLK if
 * the calling thread is itself running once_control's init routine (glibc would hang). */
int tc_once(pthread_once_t *once_control, void (*init_routine)(void));

/* Thread-specific data (destructors: at most 4 rounds, after the cleanup handlers). */
int tc_key_create(pthread_key_t *key, void (*destructor)(void *));
int tc_key_delete(pthread_key_t key);
void *tc_getspecific(pthread_key_t key);
int tc_setspecific(pthread_key_t key, const void *value);

/* Waits on the system's condition variables and semaphores, as cancellation points: a canceled
 * condition wait re-acquires the mutex before the first cleanup handler runs; a canceled
 * semaphore wait took nothing. */
int tc_cond_wait(pthread_cond_t *cond, pthread_mutex_t *mutex);
int tc_cond_timedwait(pthread_cond_t *cond, pthread_mutex_t *mutex, const struct timespec *abstime);
int tc_sem_wait(sem_t *sem);
int tc_sem_timedwait(sem_t *sem, const struct timespec *abstime);
/* pthread_cond_clockwait and sem_clockwait (glibc 2.30): abstime on clock, CLOCK_REALTIME or
 * CLOCK_MONOTONIC; another clock or a tv_nsec out of range is EINVAL (sem: -1 and errno) before
 * anything else, as glibc. Cancellation points as the timed waits. */
int tc_cond_clockwait(pthread_cond_t *cond, pthread_mutex_t *mutex, clockid_t clock,
                      const struct timespec *abstime);
int tc_sem_clockwait(sem_t *sem, clockid_t clock, const struct timespec *abstime);

/* System-call cancellation points: the system's semantics, -1 and errno on failure. */
ssize_t tc_read(int fd, void *buf, size_t count);
ssize_t tc_write(int fd, const void *buf, size_t count);
ssize_t tc_pread(int fd, void *buf, size_t count, off_t offset);
ssize_t tc_pwrite(int fd, const void *buf, size_t count, off_t offset);
ssize_t tc_readv(int fd, const struct iovec *iov, int iovcnt);
ssize_t tc_writev(int fd, const struct iovec *iov, int iovcnt);
int tc_open(const char *path, int flags, mode_t mode);
int tc_openat(int dirfd, const char *path, int flags, mode_t mode);
int tc_creat(const char *path, mode_t mode);
int tc_close(int fd); /* the descriptor is released exactly once, even when canceled */
int tc_fsync(int fd);
int tc_fdatasync(int fd);
int tc_accept(int fd, struct sockaddr *addr, socklen_t *addrlen);
int tc_accept4(int fd, struct sockaddr *addr, socklen_t *addrlen, int flags);
int tc_connect(int fd, const struct sockaddr *addr, socklen_t addrlen);
ssize_t tc_recv(int fd, void *buf, size_t len, int flags);
ssize_t tc_send(int fd, const void *buf, size_t len, int flags);
ssize_t tc_recvfrom(int fd, void *buf, size_t len, int flags, struct sockaddr *addr, socklen_t *addrlen);
ssize_t tc_sendto(int fd, const void *buf, size_t len, int flags, const struct sockaddr *addr, socklen_t addrlen);
ssize_t tc_recvmsg(int fd, struct msghdr *msg, int flags);
ssize_t tc_sendmsg(int fd, const struct msghdr *msg, int flags);
int tc_poll(struct pollfd *fds, nfds_t nfds, int timeout);
int tc_ppoll(struct pollfd *fds, nfds_t nfds, const struct timespec *timeout, const sigset_t *sigmask);
/* The checked forms that C code built with _FORTIFY_SOURCE calls in place of read, pread, recv,
 * recvfrom, poll and ppoll (the compatibility header redirects glibc's names here): the size
 * check, as glibc's (a failure aborts the process), then the point. */
ssize_t tc___read_chk(int fd, void *buf, size_t count, size_t buflen);
ssize_t tc___pread_chk(int fd, void *buf, size_t count, off_t offset, size_t buflen);
ssize_t tc___pread64_chk(int fd, void *buf, size_t count, off_t offset, size_t buflen);
ssize_t tc___recv_chk(int fd, void *buf, size_t len, size_t buflen, int flags);
ssize_t tc___recvfrom_chk(int fd, void *buf, size_t len, size_t buflen, int flags, struct sockaddr *addr, socklen_t *addrlen);
int tc___poll_chk(struct pollfd *fds, nfds_t nfds, int timeout, size_t fdslen);
int tc___ppoll_chk(struct pollfd *fds, nfds_t nfds, const struct timespec *timeout, const sigset_t *sigmask, size_t fdslen);
int tc_select(int nfds, fd_set *readfds, fd_set *writefds, fd_set *exceptfds, struct timeval *timeout);
int tc_epoll_wait(int epfd, struct epoll_event *events, int maxevents, int timeout);
unsigned int tc_sleep(unsigned int seconds);
int tc_usleep(useconds_t usec);
int tc_nanosleep(const struct timespec *req, struct timespec *rem);
int tc_clock_nanosleep(clockid_t clock, int flags, const struct timespec *req, struct timespec *rem);
int tc_pause(void);
pid_t tc_wait(int *status);
pid_t tc_waitpid(pid_t pid, int *status, int options);
int tc_sigwait(const sigset_t *set, int *sig);
int tc_sigsuspend(const sigset_t *mask);
int tc_tcdrain(int fd);
int tc_pselect(int nfds, fd_set *readfds, fd_set *writefds, fd_set *exceptfds, const struct timespec *timeout, const sigset_t *sigmask);
int tc_epoll_pwait(int epfd, struct epoll_event *events, int maxevents, int timeout, const sigset_t *sigmask);
int tc_sigtimedwait(const sigset_t *set, siginfo_t *info, const struct timespec *timeout);
int tc_sigwaitinfo(const sigset_t *set, siginfo_t *info);
int tc_waitid(idtype_t idtype, id_t id, siginfo_t *info, int options);
int tc_fcntl(int fd, int cmd, long arg); /* a point for F_SETLKW / F_OFD_SETLKW */
int tc_lockf(int fd, int cmd, off_t len); /* a point for F_LOCK */
int tc_msync(void *addr, size_t length, int flags);
ssize_t tc_msgrcv(int msqid, void *msgp, size_t msgsz, long msgtyp, int msgflg);
int tc_msgsnd(int msqid, const void *msgp, size_t msgsz, int msgflg);
/* (<sys/msg.h> is not included here: with the compatibility header, the program's own include
 * of it follows the program's feature macros, so its own struct msgbuf does not collide with
 * glibc's GNU one.) */
#ifndef __ANDROID__ /* message queues: not in bionic */
ssize_t tc_mq_receive(mqd_t mq, char *msg, size_t len, unsigned int *prio);
ssize_t tc_mq_timedreceive(mqd_t mq, char *msg, size_t len, unsigned int *prio, const struct timespec *timeout);
int tc_mq_send(mqd_t mq, const char *msg, size_t len, unsigned int prio);
int tc_mq_timedsend(mqd_t mq, const char *msg, size_t len, unsigned int prio, const struct timespec *timeout);
#endif

/* More system-call points that glibc has (the ones a thread can block in). */
struct mmsghdr;
struct rusage;
ssize_t tc_preadv(int fd, const struct iovec *iov, int iovcnt, off_t offset);
ssize_t tc_pwritev(int fd, const struct iovec *iov, int iovcnt, off_t offset);
ssize_t tc_preadv2(int fd, const struct iovec *iov, int iovcnt, off_t offset, int flags);
ssize_t tc_pwritev2(int fd, const struct iovec *iov, int iovcnt, off_t offset, int flags);
int tc_sendmmsg(int fd, struct mmsghdr *msgs, unsigned int n, int flags);
int tc_recvmmsg(int fd, struct mmsghdr *msgs, unsigned int n, int flags, struct timespec *timeout);
int tc_epoll_pwait2(int epfd, struct epoll_event *events, int maxevents, const struct timespec *timeout, const sigset_t *sigmask);
pid_t tc_wait3(int *status, int options, struct rusage *usage);
pid_t tc_wait4(pid_t pid, int *status, int options, struct rusage *usage);
/* splice's offsets: __loff_t in glibc, off_t in musl, off64_t in bionic. */
#if defined(__GLIBC__)
typedef __loff_t tc_loff_t;
#elif defined(__ANDROID__)
typedef off64_t tc_loff_t;
#else
typedef off_t tc_loff_t;
#endif
ssize_t tc_splice(int fd_in, tc_loff_t *off_in, int fd_out, tc_loff_t *off_out, size_t len, unsigned int flags);
ssize_t tc_tee(int fd_in, int fd_out, size_t len, unsigned int flags);
ssize_t tc_vmsplice(int fd, const struct iovec *iov, size_t n, unsigned int flags);
int tc_sigpause(int sig); /* X/Open: sig is removed from the mask for the wait */

#ifndef __ANDROID__ /* not built for bionic: no aio, no posix_spawn binding */
/* aio_suspend waits in slices of at most 10 ms with a cancellation point before each (glibc's
 * wait cannot be interrupted from outside); a canceled wait took nothing. */
int tc_aio_suspend(const struct aiocb *const list[], int n, const struct timespec *timeout);
/* system: sh -c command, waited for in a cancellation point; a canceled call kills the shell
 * (SIGKILL) and reaps it before the caller's cleanup handlers run, as glibc's does. */
int tc_system(const char *command);
#endif

/* stdio. Each call holds the stream's lock; before glibc would read(2) into an empty buffer
 * it waits (a cancellation point) until the descriptor is readable, and before glibc would
 * write(2) to a descriptor where a write can block (a pipe, a socket, a terminal; not a
 * regular file) it waits until the descriptor is writable and lets glibc write at most
 * PIPE_BUF bytes at a time, so the inner read or write does not block. As glibc, a
 * non-blocking descriptor is not waited for (EAGAIN), and a signal handler without SA_RESTART
 * makes a waiting call fail with EINTR; a byte already in the buffer is taken without a wait. A canceled input call pushed
 * back every byte it had taken (the stream is as before the call); a canceled output call
 * left the bytes it had given to the stream there (written by a later flush) and dropped the
 * rest. Either way the stream's lock is released. Limits: a stream whose descriptor another
 * reader drains between the wait and the read can still block there, as can a scanf
 * conversion that needs a second refill; tc_fflush(NULL) is the system's (not a point).
 * On a C library other than glibc (musl, bionic), an input call waits only before its first
 * refill (musl; bionic: not at all) and an output call is a point at its entry only. */
int tc_fgetc(FILE *stream);
int tc_getc(FILE *stream);
int tc_getchar(void);
char *tc_fgets(char *s, int n, FILE *stream);
size_t tc_fread(void *ptr, size_t size, size_t count, FILE *stream);
ssize_t tc_getline(char **line, size_t *cap, FILE *stream);
ssize_t tc_getdelim(char **line, size_t *cap, int delim, FILE *stream);
int tc_vfscanf(FILE *stream, const char *format, va_list ap);
int tc_vscanf(const char *format, va_list ap);
int tc_fputc(int c, FILE *stream);
int tc_putc(int c, FILE *stream);
int tc_putchar(int c);
int tc_fputs(const char *s, FILE *stream);
int tc_puts(const char *s);
size_t tc_fwrite(const void *ptr, size_t size, size_t count, FILE *stream);
int tc_vfprintf(FILE *stream, const char *format, va_list ap);
int tc_vprintf(const char *format, va_list ap);
int tc_vdprintf(int fd, const char *format, va_list ap);
int tc_fflush(FILE *stream);
int tc_fclose(FILE *stream); /* the flush is the point; the stream is closed after it */
FILE *tc_fopen(const char *path, const char *mode); /* the open is the point (a FIFO waits) */
void tc_perror(const char *s);

/* The cancel signal: the system's first real-time signal (the SIGRTMIN of the C library's own
 * headers), kept from the program as glibc keeps its own signals (which lie below its
 * SIGRTMIN). tc_current_sigrtmin is the first real-time signal left to the program (one more;
 * pthread_compat.h makes it the program's SIGRTMIN), so every signal from it to SIGRTMAX is the
 * program's. tc_signal_init chooses the signal and installs its handler, once per process: this
 * header gives every translation unit that includes it a constructor that calls it (priority
 * 101: before the program's own constructors and C++ static initializers), so the handler is in
 * place before main (with GCC and Clang; elsewhere call tc_signal_init first thing in main),
 * and the calls below call it too. If the process had already chosen another signal (a Rust
 * thread of thread-cancel started first), that one stays and tc_current_sigrtmin is the
 * system's SIGRTMIN.
 * tc_sigaction, tc_signal, tc_sigaddset and tc_sigdelset answer EINVAL (tc_signal: SIG_ERR) for
 * the cancel signal and tc_sigfillset leaves it out, as glibc's calls do for its own signals, and
 * so do the older calls: tc_sigset, tc_sysv_signal, tc_bsd_signal (SIG_ERR), tc_sigignore,
 * tc_sighold, tc_sigrelse, tc_siginterrupt (-1), each with errno EINVAL;
 * the program cannot send it either: tc_kill and tc_pthread_sigqueue return EINVAL and tc_raise
 * -1 with errno EINVAL (the library sends it itself, not through these).
 * The cancel signal is never blocked and never waited for: tc_pthread_sigmask and
 * tc_sigprocmask remove it from the mask they set, and every point above that takes a mask
 * (tc_sigsuspend, tc_ppoll, tc_pselect, tc_epoll_pwait, tc_epoll_pwait2, tc_sigpause) or a set
 * of signals to wait for (tc_sigwait, tc_sigwaitinfo, tc_sigtimedwait) passes the system a copy
 * without it. */
void tc_signal_init(void);
int tc_current_sigrtmin(void);
struct sigaction;
int tc_sigaction(int sig, const struct sigaction *act, struct sigaction *oldact);
void (*tc_signal(int sig, void (*handler)(int)))(int);
int tc_raise(int sig);
#ifndef __ANDROID__ /* bionic: the X/Open calls from API level 26 only; not mapped there */
void (*tc_sigset(int sig, void (*disp)(int)))(int);
void (*tc_bsd_signal(int sig, void (*handler)(int)))(int);
int tc_sigignore(int sig);
int tc_sighold(int sig);
int tc_sigrelse(int sig);
#endif
#ifdef __GLIBC__
void (*tc_sysv_signal(int sig, void (*handler)(int)))(int);
#endif
int tc_siginterrupt(int sig, int flag);
int tc_sigaddset(sigset_t *set, int sig);
int tc_sigdelset(sigset_t *set, int sig);
int tc_sigfillset(sigset_t *set);
int tc_pthread_sigmask(int how, const sigset_t *set, sigset_t *oldset);
int tc_sigprocmask(int how, const sigset_t *set, sigset_t *oldset);
/* (TC_LIBRARY_BUILD: the library's own C file, which must not make the main thread of every
 * process that loads the library the library's: a program given it with LD_PRELOAD keeps the
 * C library's main thread.) */
#if (defined __GNUC__ || defined __clang__) && !defined TC_LIBRARY_BUILD
__attribute__((constructor(101), used)) static void thread_cancel_signal_init_at_load_(void) {
    tc_signal_init();
}
#endif

#ifdef __cplusplus
}
#endif

#endif /* THREAD_CANCEL_H */
