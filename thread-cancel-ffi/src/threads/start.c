/* glibc (64-bit Linux): the start of a thread that the C library's `pthread_create` or
 * `thrd_create` creates for code built without the header (`system_owned.rs`). The thread's
 * cancellation stays the C library's; the library links a control block to it first, so that
 * the blocking calls the library defines are made through its trampoline (a canceled call
 * completed or had no effect), and unlinks it when the thread ends — however it ends: a return,
 * the C library's `pthread_exit`, or its cancel, whose forced unwind runs the cleanup below (C
 * with `-fexceptions`: a cleanup attribute runs during an unwind, which a Rust frame holding
 * something to drop must not be asked to do). Built without the library's header. */
#include <stdlib.h>

void thread_cancel_system_thread_begins(void *block);
void thread_cancel_system_thread_ends(void);

struct thread_cancel_start {
    void *(*start)(void *);
    int (*c11_start)(void *);
    void *arg;
    void *block; /* the thread's control block, which the library made before creating it */
};

static void ends(int *unused) {
    (void)unused;
    thread_cancel_system_thread_ends();
}

/* The start routine given to the C library's `pthread_create` (`p`: a `malloc`ed
 * `struct thread_cancel_start`, freed here). */
void *thread_cancel_system_start(void *p) {
    struct thread_cancel_start s = *(struct thread_cancel_start *)p;
    free(p);
    thread_cancel_system_thread_begins(s.block);
    __attribute__((cleanup(ends))) int guard = 0;
    (void)guard;
    return s.start(s.arg);
}

/* The same for `thrd_create` (a C11 thread's start returns an `int`). */
int thread_cancel_system_c11_start(void *p) {
    struct thread_cancel_start s = *(struct thread_cancel_start *)p;
    free(p);
    thread_cancel_system_thread_begins(s.block);
    __attribute__((cleanup(ends))) int guard = 0;
    (void)guard;
    return s.c11_start(s.arg);
}
