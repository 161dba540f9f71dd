/* R06: with type ASYNCHRONOUS a request is acted on at any instruction: a compute loop without
 * a single cancellation point (arithmetic and atomics only, no lock, no call into a library)
 * is canceled; its cleanup handler, pushed before the loop, runs; join reports
 * PTHREAD_CANCELED. Repeated, with the request landing after varying amounts of work, so it
 * interrupts the loop at varying instructions; the loop alternates integer and floating-point
 * work. */
#include <pthread.h>
#include "tc_test.h"

#define ROUNDS 100

struct ctl {
    atomic_long progress;
    atomic_int cleaned;
    atomic_int left_loop; /* must stay 0: the loop never ends by itself */
    volatile double sink;
};

static void cleanup(void *arg) {
    atomic_fetch_add(&((struct ctl *)arg)->cleaned, 1);
}

static void *compute(void *arg) {
    struct ctl *c = arg;
    int old = -1;
    pthread_cleanup_push(cleanup, c);
    CHECK(pthread_setcanceltype(PTHREAD_CANCEL_ASYNCHRONOUS, &old) == 0);
    CHECK(old == PTHREAD_CANCEL_DEFERRED);
    /* From here to the end of the loop: arithmetic and atomics only. */
    unsigned long x = 88172645463325252UL;
    double d = 1.0;
    for (long i = 1;; i++) {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        d = d * 1.0000001 + (double)(x & 0xff) * 1e-9;
        if ((i & 0xff) == 0) {
            atomic_store_explicit(&c->progress, i, memory_order_relaxed);
            c->sink = d;
        }
        if (x == 0) break; /* never: xorshift never reaches 0 */
    }
    atomic_store(&c->left_loop, 1);
    CHECK(pthread_setcanceltype(PTHREAD_CANCEL_DEFERRED, NULL) == 0);
    pthread_cleanup_pop(0);
    return NULL;
}

int main(void) {
    alarm(20);
    for (int r = 0; r < ROUNDS; r++) {
        struct ctl c = {0};
        pthread_t t;
        CHECK(pthread_create(&t, NULL, compute, &c) == 0);
        long want = 256L * (1 + r % 17); /* the loop is running, and has done some work */
        while (atomic_load(&c.progress) < want) test_msleep(0);
        for (volatile int spin = 0; spin < (r % 5) * 1000; spin++) {
        }
        CHECK(pthread_cancel(t) == 0);
        void *ret;
        CHECK(pthread_join(t, &ret) == 0);
        if (ret != PTHREAD_CANCELED || atomic_load(&c.cleaned) != 1 || atomic_load(&c.left_loop)) {
            fprintf(stderr, "round %d: ret %p, cleaned %d, left_loop %d\n", r, ret,
                    atomic_load(&c.cleaned), atomic_load(&c.left_loop));
            exit(1);
        }
    }
    printf("ok: %d asynchronous compute loops canceled mid-loop, cleanup ran each time\n", ROUNDS);
    return 0;
}
