/* stdio as cancellation points, as in glibc: the C part of libthread_cancel.
 *
 * glibc's stdio functions are cancellation points because the read(2) and write(2) they make
 * inside are. Those inner calls are glibc's own (not interposable, not our trampoline), so here
 * the blocking is moved out of them: every wrapper holds the stream's lock (flockfile, with a
 * cleanup handler that releases it if the thread is canceled) and, before each step that
 * would make glibc call read(2) on an empty buffer, waits in our cancellable poll(2) until the
 * descriptor is readable, so the refill does not block; before each step that would make glibc
 * call write(2) to a descriptor whose write can block (a pipe, socket, FIFO, terminal), it
 * waits until the descriptor is writable and hands glibc at most PIPE_BUF bytes to write,
 * which a pipe then takes without blocking. The cancellation is acted on in the poll: nothing
 * was read from or written to the descriptor by the step it interrupted. A write to a regular
 * file, a block device or /dev/null cannot block: no bound, no poll (a point at that step),
 * as many write(2) calls as glibc makes.
 *
 * Otherwise as glibc's own calls:
 *   - a descriptor with O_NONBLOCK is not waited for: glibc's read(2) or write(2) fails with
 *     EAGAIN at once, and the call reports it as glibc does (wait_fd);
 *   - a signal handler of the program's without SA_RESTART makes a blocked call fail with
 *     EINTR (the stream's error flag set, as glibc's failed read or write sets it); with
 *     SA_RESTART the call goes on, as the kernel restarts glibc's read(2) or write(2);
 *   - a step that needs no system call (a byte in the buffer for getc or getc_unlocked, room
 *     in the buffer for putc or fwrite) takes no cleanup handler and no wait, and no lock
 *     where glibc's own call takes none (one thread, or the caller holds it: flockfile around
 *     a loop of _unlocked calls).
 *
 * What a canceled call did (POSIX leaves the stream's state unspecified; glibc may lose data):
 *   - input: every byte the call had taken from the stream is pushed back (ungetc, in order),
 *     so the stream is as before the call, and no byte left the descriptor without reaching
 *     the stream's buffer. The next read of the stream (another thread's, a cleanup handler's)
 *     gets them.
 *   - output: the bytes the call had given to the stream stay there (written by a later flush
 *     or at exit), the rest of its output is dropped; nothing is written twice.
 *   - the stream's lock is released; its error and end-of-file flags are unchanged.
 *
 * The layout of glibc's FILE (struct _IO_FILE, bits/types/struct_FILE.h) is public ABI; the
 * flag values below are glibc's, stable since the stdio of glibc 2.0. Written in C rather than
 * Rust for that layout and for va_list; the exported names are Rust shims (stdio.rs), since a
 * Rust cdylib exports only Rust symbols.
 *
 * On any other C library (musl, bionic) the second half of this file reads no private layout:
 * an input call waits until its descriptor is readable when nothing of the stream is in memory
 * (musl's __freadahead), so a thread blocked waiting for input is canceled and took nothing;
 * later refills inside the call, and every output call's write(2), are not interrupted (an
 * output call is a point at its entry only). */
#define _GNU_SOURCE
#define TC_LIBRARY_BUILD /* no constructor of the header's here: see thread_cancel.h */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <thread_cancel.h>
#include <unistd.h>
#ifdef __GLIBC__
#include <gnu/libc-version.h>
#else
#include <stdio_ext.h>
#endif

#define TC_IO_UNBUFFERED 0x0002
#define TC_IO_NO_READS 0x0004
#define TC_IO_IN_BACKUP 0x0100
#define TC_IO_LINE_BUF 0x0200
#define TC_IO_CURRENTLY_PUTTING 0x0800
#define TC_IO_USER_LOCK 0x8000
#define TC_IO_FLAGS2_NEED_LOCK 128

/* Whether a handler of the program's, installed without SA_RESTART, may have interrupted a
 * wait. After a wait failed with EINTR (not a cancellation: that acts in the wait) the signal
 * is not known; the read(2) or write(2) the wait stands for would have failed with EINTR if it
 * was such a handler's, and been restarted by the kernel if it had SA_RESTART. So: EINTR if
 * any caught signal's handler lacks SA_RESTART (the cancel signal has it), leaving out the
 * signals of a program error (SIGSEGV, SIGBUS, SIGFPE, SIGILL, SIGTRAP, SIGSYS: raised by the
 * faulting thread itself, never while it waits; crash reporters and the sanitizers catch them
 * without SA_RESTART). A program that mixes both kinds sees EINTR also when the SA_RESTART
 * one ran. Only after an EINTR: 64 sigaction queries. */
static int handler_without_restart(void) {
    for (int s = 1; s < NSIG; s++) {
        struct sigaction sa;
        if (s == SIGSEGV || s == SIGBUS || s == SIGFPE || s == SIGILL || s == SIGTRAP || s == SIGSYS)
            continue;
        if (sigaction(s, NULL, &sa) != 0) continue; /* glibc's own signals: EINVAL */
        if (sa.sa_handler == SIG_DFL || sa.sa_handler == SIG_IGN) continue;
        if (!(sa.sa_flags & SA_RESTART)) return 1;
    }
    return 0;
}

/* Waits (a cancellation point) until `fd` is ready for `events`, so that the read(2) or
 * write(2) the C library makes next does not block. 0: go on — ready, or the descriptor is
 * non-blocking (O_NONBLOCK, read at each wait: the flag can change at any time), whose
 * read(2) or write(2) then fails with EAGAIN at once, as without this layer. -1 with errno
 * EINTR: a signal handler without SA_RESTART ran (see handler_without_restart), where that
 * read(2) or write(2) would have failed with EINTR; the caller fails as it would have. A
 * handler with SA_RESTART: waits again, as the kernel restarts the read(2) or write(2). */
static int wait_fd(int fd, short events) {
    int e = errno; /* a call that succeeds leaves errno as it found it */
    struct pollfd p = {.fd = fd, .events = events};
    int r = tc_poll(&p, 1, 0); /* ready already: one system call */
    if (r == 0) {
        int fl = fcntl(fd, F_GETFL);
        if (fl < 0 || !(fl & O_NONBLOCK)) {
            while (tc_poll(&p, 1, -1) < 0 && errno == EINTR) {
                if (handler_without_restart()) {
                    errno = EINTR;
                    return -1;
                }
            }
        }
    }
    errno = e; /* ready, non-blocking, or an error the read(2) or write(2) will report */
    return 0;
}

/* The cleanup handler of a call canceled while it holds the stream's lock. */
static void unlock_canceled(void *arg) {
    funlockfile((FILE *)arg);
}

#ifdef __GLIBC__

/* Whether touching `f` needs its lock. glibc (2.27 on) marks every stream _IO_FLAGS2_NEED_LOCK
 * once the process may have a second thread (pthread_create marks them all before the thread
 * starts, and streams opened later are marked at their creation); until then its own getc,
 * putc, fwrite... skip the lock, and so do the fast paths here. Before 2.27 the bit is unused:
 * the lock is always taken. */
static int flag_known = -1; /* glibc 2.27 or later: 1 or 0, once asked */

__attribute__((noinline, cold)) static int ask_flag_known(void) {
    int major = 0, minor = 0;
    int known = sscanf(gnu_get_libc_version(), "%d.%d", &major, &minor) == 2 &&
                (major > 2 || (major == 2 && minor >= 27));
    __atomic_store_n(&flag_known, known, __ATOMIC_RELAXED);
    return known;
}

/* glibc's stream lock (nptl's _IO_lock_t, the same since glibc 2.3 on every architecture):
 * `owner` is the holding thread's pthread_self(), written only by that thread. */
struct tc_io_lock {
    int lock;
    int cnt;
    void *owner;
};

/* pthread_self(), inline on x86_64: there glibc's thread descriptor is at the thread pointer,
 * whose first word points to itself (the psABI's TLS layout). */
static inline void *self(void) {
#if defined(__x86_64__)
    void *p;
    __asm__("mov %%fs:0, %0" : "=r"(p));
    return p;
#else
    return (void *)pthread_self();
#endif
}

/* Whether the calling thread may touch `f` without taking its lock, as glibc's own getc, putc
 * and fwrite would not take it: the process has had no second thread (see above), or the
 * stream's locking is the caller's (__fsetlocking, _IO_USER_LOCK), or this thread holds the
 * lock already (flockfile around a loop of getc_unlocked: the usual reason for _unlocked). */
static inline int lock_free(FILE *f) {
    if (!(f->_flags2 & TC_IO_FLAGS2_NEED_LOCK)) {
        int known = __atomic_load_n(&flag_known, __ATOMIC_RELAXED);
        if (__builtin_expect(known >= 0, 1) ? known : ask_flag_known()) return 1;
    }
    if (f->_flags & TC_IO_USER_LOCK) return 1;
    struct tc_io_lock *l = (struct tc_io_lock *)f->_lock;
    return l != NULL && __atomic_load_n(&l->owner, __ATOMIC_RELAXED) == self();
}

/* Whether the next byte of `f` is in memory (the current get area, or the main area behind the
 * backup area that ungetc uses): reading it makes no system call. */
static int buffered(FILE *f) {
    if (f->_IO_read_ptr < f->_IO_read_end) return 1;
    return (f->_flags & TC_IO_IN_BACKUP) && f->_IO_save_base < f->_IO_save_end;
}

/* A read(2) or write(2) of `f` that failed with EINTR, as glibc records it: the error flag,
 * and (a write) the bytes the stream held for the descriptor are dropped, as glibc drops them
 * when its write fails (else a later flush, the one at exit, writes them). */
static void failed_eintr(FILE *f) {
    f->_flags |= _IO_ERR_SEEN;
    if (f->_flags & TC_IO_CURRENTLY_PUTTING) f->_IO_write_ptr = f->_IO_write_base;
    errno = EINTR;
}

/* Before glibc refills `f`: waits until its descriptor is readable, unless the next byte is
 * buffered, the stream is at end of file (sticky in glibc) or cannot read, or it has no
 * descriptor (a memory or cookie stream). -1 if the refill's read(2) would have failed with
 * EINTR (wait_fd): the stream's error flag is set, as glibc's refill sets it. */
static int wait_readable(FILE *f) {
    if (buffered(f) || (f->_flags & (_IO_EOF_SEEN | TC_IO_NO_READS))) return 0;
    int fd = fileno_unlocked(f);
    if (fd >= 0 && wait_fd(fd, POLLIN) < 0) {
        failed_eintr(f);
        return -1;
    }
    return 0;
}

/* A read in progress: the bytes taken so far are base[0..n), pushed back if it is canceled. */
struct rd {
    FILE *f;
    unsigned char *base;
    size_t n;
};

static void rd_canceled(void *arg) {
    struct rd *r = arg;
    for (size_t i = r->n; i > 0; i--) ungetc(r->base[i - 1], r->f);
    funlockfile(r->f);
}

enum { TOOK_MAX, TOOK_DELIM, TOOK_EOF };

/* Moves bytes of `r->f` to r->base + r->n, at most `max` of them, stopping after `delim` (if
 * >= 0). Every refill of an empty buffer is preceded by wait_readable. */
static int take(struct rd *r, size_t max, int delim) {
    FILE *f = r->f;
    size_t end = r->n + max;
    while (r->n < end) {
        size_t avail = f->_IO_read_ptr < f->_IO_read_end ? (size_t)(f->_IO_read_end - f->_IO_read_ptr) : 0;
        if (avail > 0) {
            size_t k = end - r->n < avail ? end - r->n : avail;
            if (delim >= 0) {
                unsigned char *d = memchr(f->_IO_read_ptr, delim, k);
                if (d) k = (size_t)(d - (unsigned char *)f->_IO_read_ptr) + 1;
            }
            size_t m = fread_unlocked(r->base + r->n, 1, k, f); /* from the buffer: no read(2) */
            r->n += m;
            if (m > 0 && delim >= 0 && r->base[r->n - 1] == (unsigned char)delim) return TOOK_DELIM;
            if (m < k) return TOOK_EOF;
            continue;
        }
        if (wait_readable(f) < 0) return TOOK_EOF; /* EINTR, as a read error */
        int c = getc_unlocked(f); /* one refill, which does not block now */
        if (c == EOF) return TOOK_EOF;
        r->base[r->n++] = (unsigned char)c;
        if (c == delim) return TOOK_DELIM;
    }
    return TOOK_MAX;
}

/* getc and the other one-byte reads (getc_unlocked too: the header maps both here). A buffered
 * byte is taken as glibc's getc_unlocked takes it, with no wait and no cleanup handler (no
 * system call follows, as with glibc); without the lock while glibc's getc would not take it. */
__attribute__((noinline)) static int fgetc_locked(FILE *f) {
    flockfile(f);
    int c;
    if (buffered(f)) {
        c = getc_unlocked(f);
    } else {
        struct rd r = {f, NULL, 0};
        tc_cleanup_push(rd_canceled, &r);
        c = wait_readable(f) < 0 ? EOF : getc_unlocked(f);
        tc_cleanup_pop(0);
    }
    funlockfile(f);
    return c;
}

int tc_stdio_fgetc(FILE *f) {
    if (__builtin_expect(lock_free(f) && f->_IO_read_ptr < f->_IO_read_end, 1))
        return *(unsigned char *)f->_IO_read_ptr++;
    return fgetc_locked(f);
}

char *tc_stdio_fgets(char *s, int n, FILE *f) {
    if (n <= 0) return NULL;
    if (n == 1) {
        s[0] = '\0';
        return s;
    }
    flockfile(f);
    int old_error = f->_flags & _IO_ERR_SEEN;
    f->_flags &= ~_IO_ERR_SEEN;
    struct rd r = {f, (unsigned char *)s, 0};
    tc_cleanup_push(rd_canceled, &r);
    take(&r, (size_t)n - 1, '\n');
    tc_cleanup_pop(0);
    char *result = s;
    /* As glibc: NULL at end of file with nothing read, or after a read error. */
    if (r.n == 0 || ((f->_flags & _IO_ERR_SEEN) && errno != EAGAIN))
        result = NULL;
    else
        s[r.n] = '\0';
    f->_flags |= old_error;
    funlockfile(f);
    return result;
}

size_t tc_stdio_fread(void *p, size_t size, size_t count, FILE *f) {
    if (size == 0 || count == 0) return 0;
    if (count > SIZE_MAX / size) {
        errno = EOVERFLOW;
        return 0;
    }
    flockfile(f);
    struct rd r = {f, p, 0};
    tc_cleanup_push(rd_canceled, &r);
    take(&r, size * count, -1);
    tc_cleanup_pop(0);
    funlockfile(f);
    return r.n / size;
}

/* getdelim's buffer: grown as glibc does (120 bytes first, then doubled). */
static int grow(char **line, size_t *cap, size_t need) {
    if (*line != NULL && *cap >= need) return 0;
    size_t c = *line == NULL || *cap < 120 ? 120 : *cap;
    while (c < need) {
        if (c > SSIZE_MAX / 2) {
            errno = EOVERFLOW;
            return -1;
        }
        c *= 2;
    }
    char *p = realloc(*line, c);
    if (p == NULL) return -1; /* errno is ENOMEM */
    *line = p;
    *cap = c;
    return 0;
}

ssize_t tc_stdio_getdelim(char **line, size_t *cap, int delim, FILE *f) {
    if (line == NULL || cap == NULL || f == NULL) {
        errno = EINVAL;
        return -1;
    }
    flockfile(f);
    struct rd r = {f, NULL, 0};
    ssize_t result = -1;
    tc_cleanup_push(rd_canceled, &r);
    for (;;) {
        if (grow(line, cap, r.n + 2) != 0) break;
        r.base = (unsigned char *)*line;
        int why = take(&r, *cap - r.n - 1, (unsigned char)delim);
        if (why == TOOK_MAX) continue;
        if (r.n > 0) result = (ssize_t)r.n; /* else end of file or an error: -1, as glibc */
        break;
    }
    tc_cleanup_pop(0);
    if (*line != NULL && *cap > r.n) (*line)[r.n] = '\0';
    funlockfile(f);
    return result;
}

int tc_stdio_vfscanf(FILE *f, const char *fmt, va_list ap) {
    flockfile(f);
    int r;
    tc_cleanup_push(unlock_canceled, f);
    r = wait_readable(f) < 0 ? EOF : vfscanf(f, fmt, ap);
    tc_cleanup_pop(0);
    funlockfile(f);
    return r;
}

/* ---- output ---- */

/* Whether a write(2) to `fd` can block: not to a regular file or a block device (the kernel
 * takes the whole write), nor to Linux's memory devices (/dev/null, /dev/zero, /dev/full,
 * /dev/random, ...: major 1), nor with no descriptor (a memory or cookie stream: nothing to
 * wait for). Pipes, FIFOs, sockets, terminals and other devices can. Asked once per call that
 * is about to write (a stream's descriptor number can be another file after fclose and open,
 * so nothing is remembered between calls); an fstat is cheap beside the write it precedes. */
static int write_can_block(int fd) {
    struct stat st;
    if (fd < 0) return 0;
    if (fstat(fd, &st) != 0) return 1;
    if (S_ISREG(st.st_mode) || S_ISBLK(st.st_mode)) return 0;
    return !(S_ISCHR(st.st_mode) && major(st.st_rdev) == 1);
}

/* Writes what `f` holds (one write(2) of at most PIPE_BUF bytes to a descriptor that can
 * block: put_bytes never lets more accumulate there) once its descriptor is writable. */
static int flush_out(FILE *f) {
    int fd = fileno_unlocked(f);
    if (fd >= 0 && (f->_flags & TC_IO_CURRENTLY_PUTTING) && f->_IO_write_ptr > f->_IO_write_base &&
        wait_fd(fd, POLLOUT) < 0) {
        failed_eintr(f);
        return EOF;
    }
    return fflush_unlocked(f);
}

/* Whether the `n` bytes at `p` go into `f`'s buffer with no write(2) (glibc's fwrite copies
 * them there and writes nothing while they fit: the room up to _IO_write_end, up to the
 * buffer's end if line buffered), within put_bytes's bound (at most PIPE_BUF bytes pending):
 * set up for output, buffered, room for them, and no newline if the stream is line buffered. */
static inline int fits(FILE *f, const char *p, size_t n) {
    if (!(f->_flags & TC_IO_CURRENTLY_PUTTING) || (f->_flags & TC_IO_UNBUFFERED) || f->_IO_buf_base == NULL)
        return 0;
    char *end = f->_IO_write_end;
    if (f->_flags & TC_IO_LINE_BUF) {
        if (memchr(p, '\n', n) != NULL) return 0;
        end = f->_IO_buf_end;
    }
    if (f->_IO_write_ptr > end) return 0;
    size_t pending = (size_t)(f->_IO_write_ptr - f->_IO_write_base);
    return n <= (size_t)(end - f->_IO_write_ptr) && pending + n <= PIPE_BUF;
}

/* Gives `n` bytes to `f`. Bytes that fit in its buffer without a write are copied there. A
 * step that may write, to a descriptor whose write can block, goes in pieces for which glibc
 * makes at most one write(2), of at most PIPE_BUF bytes, each after the descriptor was found
 * writable; to one that cannot block (a regular file), the call is a point at that step and
 * glibc writes as it would without this layer. 0, or -1 on a write error (EINTR: wait_fd). */
static int put_bytes(FILE *f, const char *p, size_t n) {
    int fd = fileno_unlocked(f);
    int blocks = -1; /* not asked yet */
    while (n > 0) {
        size_t k;
        int writes;
        int putting = f->_IO_buf_base != NULL && (f->_flags & TC_IO_CURRENTLY_PUTTING);
        if (fits(f, p, n)) return fwrite_unlocked(p, 1, n, f) == n ? 0 : -1; /* no write */
        if (blocks < 0) blocks = write_can_block(fd);
        if (!blocks) {
            tc_testcancel();
            return fwrite_unlocked(p, 1, n, f) == n ? 0 : -1;
        }
        if (!putting) {
            /* The first byte sets the stream up for output (it allocates the buffer). */
            k = 1;
            writes = (f->_flags & (TC_IO_UNBUFFERED | TC_IO_LINE_BUF)) != 0;
        } else if (f->_flags & TC_IO_UNBUFFERED) {
            k = n < PIPE_BUF ? n : PIPE_BUF;
            writes = 1;
        } else {
            size_t pending = (size_t)(f->_IO_write_ptr - f->_IO_write_base);
            size_t space = (size_t)(f->_IO_buf_end - f->_IO_write_ptr);
            if (pending >= PIPE_BUF || space == 0) {
                if (flush_out(f) == EOF) return -1;
                continue;
            }
            if (space > PIPE_BUF - pending) space = PIPE_BUF - pending;
            k = n < space ? n : space;
            writes = (f->_flags & TC_IO_LINE_BUF) && memchr(p, '\n', k) != NULL;
        }
        if (writes && fd >= 0 && wait_fd(fd, POLLOUT) < 0) {
            failed_eintr(f);
            return -1;
        }
        size_t m = fwrite_unlocked(p, 1, k, f);
        p += m;
        n -= m;
        if (m < k) return -1;
    }
    return 0;
}

/* An output call in progress: the stream to unlock and a formatted text to free. */
struct wr {
    FILE *f;
    char *heap;
};

static void wr_canceled(void *arg) {
    struct wr *w = arg;
    funlockfile(w->f);
    free(w->heap);
}

/* Gives `n` bytes (and a newline if `newline`) to `f` under its lock. 0 or -1. */
static int put_locked(FILE *f, const char *p, size_t n, char *heap, int newline) {
    struct wr w = {f, heap};
    int r;
    if (!newline && lock_free(f) && fits(f, p, n)) { /* no write: as glibc's fwrite, no lock */
        r = fwrite_unlocked(p, 1, n, f) == n ? 0 : -1;
        free(heap);
        return r;
    }
    flockfile(f);
    if (!newline && fits(f, p, n)) {
        r = fwrite_unlocked(p, 1, n, f) == n ? 0 : -1;
        funlockfile(f);
        free(heap);
        return r;
    }
    tc_cleanup_push(wr_canceled, &w);
    r = put_bytes(f, p, n);
    if (r == 0 && newline) r = put_bytes(f, "\n", 1);
    tc_cleanup_pop(0);
    funlockfile(f);
    free(heap);
    return r;
}

size_t tc_stdio_fwrite(const void *p, size_t size, size_t count, FILE *f) {
    if (size == 0 || count == 0) return 0;
    if (count > SIZE_MAX / size) {
        errno = EOVERFLOW;
        return 0;
    }
    /* Like glibc, a failed write reports no complete element as written. */
    return put_locked(f, p, size * count, NULL, 0) == 0 ? count : 0;
}

__attribute__((noinline)) static int fputc_locked(unsigned char b, FILE *f) {
    return put_locked(f, (const char *)&b, 1, NULL, 0) == 0 ? b : EOF;
}

int tc_stdio_fputc(int c, FILE *f) {
    /* putc_unlocked's fast path (the header maps it here too): room in the buffer, no write
     * due (fits). */
    char b = (char)c;
    if (__builtin_expect(lock_free(f) && fits(f, &b, 1), 1)) return (unsigned char)(*f->_IO_write_ptr++ = b);
    return fputc_locked((unsigned char)c, f);
}

int tc_stdio_fputs(const char *s, FILE *f) {
    return put_locked(f, s, strlen(s), NULL, 0) == 0 ? 1 : EOF;
}

int tc_stdio_puts(const char *s) {
    size_t n = strlen(s);
    if (put_locked(stdout, s, n, NULL, 1) != 0) return EOF;
    return n < INT_MAX ? (int)n + 1 : INT_MAX;
}

/* Formats into `small` or, if it does not fit, into memory from malloc (*heap). */
static int format(char *small, size_t size, char **out, char **heap, const char *fmt, va_list ap) {
    va_list again;
    va_copy(again, ap);
    int n = vsnprintf(small, size, fmt, ap);
    *out = small;
    *heap = NULL;
    if (n >= 0 && (size_t)n >= size) {
        *heap = malloc((size_t)n + 1);
        if (*heap == NULL)
            n = -1;
        else {
            vsnprintf(*heap, (size_t)n + 1, fmt, again);
            *out = *heap;
        }
    }
    va_end(again);
    return n;
}

int tc_stdio_vfprintf(FILE *f, const char *fmt, va_list ap) {
    char small[512], *text, *heap;
    int n = format(small, sizeof small, &text, &heap, fmt, ap);
    if (n < 0) return -1;
    return put_locked(f, text, (size_t)n, heap, 0) == 0 ? n : -1;
}

static void free_canceled(void *arg) {
    free(arg);
}

int tc_stdio_vdprintf(int fd, const char *fmt, va_list ap) {
    char small[512], *text, *heap;
    int n = format(small, sizeof small, &text, &heap, fmt, ap);
    if (n < 0) return -1;
    int result = n;
    tc_cleanup_push(free_canceled, heap);
    for (size_t done = 0; done < (size_t)n;) {
        ssize_t w = tc_write(fd, text + done, (size_t)n - done);
        if (w < 0) {
            if (errno == EINTR) continue;
            result = -1;
            break;
        }
        done += (size_t)w;
    }
    tc_cleanup_pop(0);
    free(heap);
    return result;
}

int tc_stdio_fflush(FILE *f) {
    if (f == NULL) return fflush(NULL); /* every stream: glibc's own, not a point here */
    int r;
    flockfile(f);
    tc_cleanup_push(unlock_canceled, f);
    r = flush_out(f);
    tc_cleanup_pop(0);
    funlockfile(f);
    return r;
}

int tc_stdio_fclose(FILE *f) {
    /* The flush is the point; the close that follows has nothing left to write. */
    int flushed = tc_stdio_fflush(f);
    int closed = fclose(f);
    return flushed == 0 ? closed : EOF;
}

/* perror: the message is written to stderr as by fputs (a point when the write would block). */
void tc_stdio_perror(const char *s) {
    int e = errno;
    char err[256], msg[1024];
    const char *text = strerror_r(e, err, sizeof err); /* GNU: returns the message */
    int n = snprintf(msg, sizeof msg, "%s%s%s\n", s && *s ? s : "", s && *s ? ": " : "", text);
    if (n > 0) put_locked(stderr, msg, (size_t)n < sizeof msg ? (size_t)n : sizeof msg - 1, NULL, 0);
    errno = e;
}

#else /* any other C library: no private layout is read */

/* Before a call that may refill `f`: if nothing of it is in memory (musl: __freadahead; on a C
 * library without it, bionic, unknown), waits until its descriptor is readable, so that the
 * first refill does not block. The call's later refills (a long line arriving in pieces) can
 * block without being interrupted. A call canceled in the wait took nothing from the stream.
 * A non-blocking descriptor is not waited for (the C library's read(2) fails with EAGAIN, as
 * without this layer). -1 with errno EINTR where that read(2) would have failed with EINTR
 * (wait_fd): the call then fails so, without its read; the stream's error flag is not set (no
 * portable way to set it). */
static int wait_input(FILE *f) {
#if defined(__ANDROID__)
    (void)f;
    return 0;
#else
    if (__freadahead(f) > 0 || feof(f)) return 0;
    int fd = fileno(f);
    return fd >= 0 ? wait_fd(fd, POLLIN) : 0;
#endif
}

#define LOCKED_INPUT(f, type, call, failed)                                                     \
    do {                                                                                        \
        type result_;                                                                           \
        tc_testcancel();                                                                        \
        flockfile(f);                                                                           \
        tc_cleanup_push(unlock_canceled, f);                                                    \
        result_ = wait_input(f) < 0 ? (failed) : (call);                                        \
        tc_cleanup_pop(0);                                                                      \
        funlockfile(f);                                                                         \
        return result_;                                                                         \
    } while (0)

int tc_stdio_fgetc(FILE *f) { LOCKED_INPUT(f, int, getc_unlocked(f), EOF); }
char *tc_stdio_fgets(char *s, int n, FILE *f) { LOCKED_INPUT(f, char *, fgets(s, n, f), NULL); }
size_t tc_stdio_fread(void *p, size_t size, size_t count, FILE *f) {
    LOCKED_INPUT(f, size_t, fread(p, size, count, f), 0);
}
ssize_t tc_stdio_getdelim(char **line, size_t *cap, int delim, FILE *f) {
    LOCKED_INPUT(f, ssize_t, getdelim(line, cap, delim, f), -1);
}
int tc_stdio_vfscanf(FILE *f, const char *fmt, va_list ap) {
    LOCKED_INPUT(f, int, vfscanf(f, fmt, ap), EOF);
}

/* Output: a cancellation point at the call's entry; the write(2) the C library makes inside is
 * its own and is not interrupted (a stream to a full pipe blocks until the reader reads). */
size_t tc_stdio_fwrite(const void *p, size_t size, size_t count, FILE *f) {
    tc_testcancel();
    return fwrite(p, size, count, f);
}
int tc_stdio_fputc(int c, FILE *f) {
    tc_testcancel();
    return fputc(c, f);
}
int tc_stdio_fputs(const char *s, FILE *f) {
    tc_testcancel();
    return fputs(s, f);
}
int tc_stdio_puts(const char *s) {
    tc_testcancel();
    return puts(s);
}
int tc_stdio_vfprintf(FILE *f, const char *fmt, va_list ap) {
    tc_testcancel();
    return vfprintf(f, fmt, ap);
}
int tc_stdio_vdprintf(int fd, const char *fmt, va_list ap) {
    tc_testcancel();
    return vdprintf(fd, fmt, ap);
}
int tc_stdio_fflush(FILE *f) {
    tc_testcancel();
    return fflush(f);
}
int tc_stdio_fclose(FILE *f) {
    tc_testcancel();
    return fclose(f);
}
void tc_stdio_perror(const char *s) {
    tc_testcancel();
    perror(s);
}

#endif /* __GLIBC__ */

/* fopen: glibc opens with its cancellable open(2) (unless the mode has 'c'); here the open is
 * ours (tc_open, a point: opening a FIFO waits for the other end), then fdopen makes the stream.
 * A mode this does not parse (a ",ccs=" encoding, 'c') is the system's fopen. */
FILE *tc_stdio_fopen(const char *path, const char *mode) {
    int flags, plus = strchr(mode, '+') != NULL;
    switch (mode[0]) {
    case 'r': flags = plus ? O_RDWR : O_RDONLY; break;
    case 'w': flags = (plus ? O_RDWR : O_WRONLY) | O_CREAT | O_TRUNC; break;
    case 'a': flags = (plus ? O_RDWR : O_WRONLY) | O_CREAT | O_APPEND; break;
    default: errno = EINVAL; return NULL;
    }
    if (strchr(mode, ',') || strchr(mode, 'c')) return fopen(path, mode);
    if (strchr(mode, 'x')) flags |= O_EXCL;
    if (strchr(mode, 'e')) flags |= O_CLOEXEC;
    int fd = tc_open(path, flags, 0666);
    if (fd < 0) return NULL;
    char m[3] = {mode[0], plus ? '+' : '\0', '\0'};
    FILE *f = fdopen(fd, m);
    if (f == NULL) {
        int e = errno;
        close(fd);
        errno = e;
    }
    return f;
}
