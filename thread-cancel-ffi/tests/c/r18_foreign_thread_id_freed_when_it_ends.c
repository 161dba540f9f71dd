/* R18 for threads the library did not create. pthread_self (tc_self) in such a thread (here:
 * created with the C library's own pthread_create, as a thread pool of another library would be)
 * makes the library know it: a registry record and a control block, which must be freed when the
 * thread ends (they used to leak forever: one slot and about 320 bytes per thread). Its id is
 * the C library's own pthread_t (a thread the C library made keeps the C library's ids, reused
 * as the C library reuses them: REQUIREMENTS, "ids"), the same in its thread-specific-data
 * destructors.
 *
 * The program runs N foreign threads, at most W alive at a time (each joined with the system's
 * pthread_join, which returns after the thread's thread-local destructors have run); half of
 * them also call pthread_self from a thread-specific-data destructor (which may run after the
 * record was freed), and half call it for the first time there: the id must be the one the
 * thread's body saw, and nothing may leak. A leak is measured as the bytes the allocator has
 * handed out and not got back (glibc's mallinfo2, or the sanitizer's count under ASan), after
 * 1,000 threads and after N more: 320 bytes per thread would be 16 MB at N = 50,000; the bound
 * is 32 KiB + 8 bytes per thread. N is THREAD_CANCEL_STRESS if set (default 50,000). */
#include <malloc.h>
#include <pthread.h>
#include "tc_test.h"
#ifdef __SANITIZE_ADDRESS__
size_t __sanitizer_get_current_allocated_bytes(void); /* the sanitizer's runtime */
#endif

/* The C library's own calls, whatever the header maps: these threads are not the library's. */
extern int plain_pthread_create(pthread_t *, const pthread_attr_t *, void *(*)(void *),
                                void *) __asm__("pthread_create");
extern int plain_pthread_join(pthread_t, void **) __asm__("pthread_join");

#define W 4

static pthread_key_t key;
static atomic_int wrong_id_in_destructor, wrong_id_in_body;

/* Bytes handed out by the allocator and not given back. */
static size_t allocated(void) {
#ifdef __SANITIZE_ADDRESS__
    return __sanitizer_get_current_allocated_bytes();
#else
    struct mallinfo2 m = mallinfo2();
    return m.uordblks + m.hblkhd;
#endif
}

/* A key destructor: pthread_self there is the thread's id (the one its body got, if any). */
static void destructor(void *v) {
    pthread_t self = pthread_self();
    pthread_t *seen = v;
    if (*seen != 0 && !pthread_equal(*seen, self)) atomic_store(&wrong_id_in_destructor, 1);
    free(seen);
}

/* arg: 0 = pthread_self in the body and the destructor; 1 = only in the destructor. */
static void *foreign(void *arg) {
    long mode = (long)arg;
    pthread_t self = 0;
    if (mode != 1) {
        self = pthread_self();
        /* The system's id (the C library's own pthread_t). */
        if (self != tc_native(self)) atomic_store(&wrong_id_in_body, 1);
    }
    pthread_t *v = malloc(sizeof *v);
    CHECK(v != NULL);
    *v = self;
    CHECK(pthread_setspecific(key, v) == 0);
    return NULL;
}

static void run(long n) {
    for (long i = 0; i < n; i += W) {
        pthread_t t[W];
        for (int j = 0; j < W; j++)
            CHECK(plain_pthread_create(&t[j], NULL, foreign, (void *)(long)((i + j) % 2)) == 0);
        for (int j = 0; j < W; j++) CHECK(plain_pthread_join(t[j], NULL) == 0);
    }
}

int main(void) {
    alarm(120);
    const char *env = getenv("THREAD_CANCEL_STRESS");
    long n = env ? atol(env) : 50000;
    CHECK(pthread_key_create(&key, destructor) == 0);
    (void)pthread_self(); /* main is known throughout */
    run(1000);
    size_t before = allocated();
    run(n);
    size_t after = allocated();
    long grew = (long)after - (long)before, bound = 32 * 1024 + 8 * n;
    if (grew > bound) {
        fprintf(stderr, "%ld foreign threads (%d at a time): the allocator's bytes in use grew by "
                        "%ld (bound %ld): the records of ended threads are not freed\n",
                n, W, grew, bound);
        return 1;
    }
    CHECK(!atomic_load(&wrong_id_in_destructor));
    CHECK(!atomic_load(&wrong_id_in_body));
    printf("ok: %ld foreign threads (%d at a time): bytes in use grew by %ld (bound %ld)\n", n, W,
           grew, bound);
    return 0;
}
