/* pthread_join and pthread_detach of a DETACHED thread return EINVAL, as glibc: while it runs and
 * after it has ended, whichever way it was detached (attribute or pthread_detach). The glibc
 * variants agree: pthread_tryjoin_np is EBUSY while the thread runs (glibc looks at "ended"
 * before "detached") and EINVAL once it has ended, pthread_timedjoin_np is EINVAL. POSIX leaves
 * the ended case undefined; glibc (2.36 here) answers EINVAL as long as no new thread has reused
 * the ended thread's descriptor, so the program creates no thread between the end and the
 * calls. Through the header the answer does not depend on how far the thread has gone (it used
 * to be ESRCH once it had ended); ids that were never valid and joined ids stay ESRCH
 * (r18_esrch_for_stale_ids.c), and so do cancel and kill of an ended detached thread (R18,
 * not compared: glibc's is undefined).
 *
 * TC_COMPARE_WITH_GLIBC: the runner also builds this against plain glibc; both print the same. */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <pthread.h>
#include <signal.h>
#include "tc_test.h"

static atomic_int tid, hold;

static void *body(void *arg) {
    atomic_store(&tid, test_gettid());
    test_wait_ge(&hold, 1);
    return arg;
}

static const char *name(int e) {
    switch (e) {
    case 0: return "0";
    case EINVAL: return "EINVAL";
    case ESRCH: return "ESRCH";
    case EBUSY: return "EBUSY";
    case ETIMEDOUT: return "ETIMEDOUT";
    default: return "other";
    }
}

/* Every join and detach on `t`, printed on one line. */
static void calls(pthread_t t, const char *what) {
    void *ret = (void *)5;
    struct timespec soon;
    CHECK(clock_gettime(CLOCK_REALTIME, &soon) == 0);
    soon.tv_nsec += 10 * 1000000L;
    if (soon.tv_nsec >= 1000000000L) {
        soon.tv_sec++;
        soon.tv_nsec -= 1000000000L;
    }
    int j = pthread_join(t, &ret);
    int d = pthread_detach(t);
    int tj = pthread_tryjoin_np(t, &ret);
    int tm = pthread_timedjoin_np(t, &ret, &soon);
    int d2 = pthread_detach(t);
    int j2 = pthread_join(t, NULL);
    printf("%s: join %s, detach %s, tryjoin %s, timedjoin %s, detach %s, join %s; value %s\n",
           what, name(j), name(d), name(tj), name(tm), name(d2), name(j2),
           ret == (void *)5 ? "untouched" : "written");
}

/* Waits until the thread whose kernel id was published has left the kernel's task list (its
 * ending is complete, the library's and the C library's book-keeping included). */
static void wait_gone(void) {
    while (atomic_load(&tid) == 0) test_usleep(100);
    while (test_thread_state(atomic_load(&tid)) != '?') test_usleep(200);
    atomic_store(&tid, 0);
}

static void detached(int by_attribute) {
    const char *how = by_attribute ? "detached by attribute" : "detached by pthread_detach";
    char what[96];
    pthread_attr_t a;
    CHECK(pthread_attr_init(&a) == 0);
    if (by_attribute) CHECK(pthread_attr_setdetachstate(&a, PTHREAD_CREATE_DETACHED) == 0);
    atomic_store(&hold, 0);
    atomic_store(&tid, 0);
    pthread_t t;
    CHECK(pthread_create(&t, &a, body, NULL) == 0);
    CHECK(pthread_attr_destroy(&a) == 0);
    if (!by_attribute) CHECK(pthread_detach(t) == 0);
    while (atomic_load(&tid) == 0) test_usleep(100);
    snprintf(what, sizeof what, "%s, running", how);
    calls(t, what);
    atomic_store(&hold, 1);
    wait_gone();
    snprintf(what, sizeof what, "%s, ended", how);
    calls(t, what);
#ifndef TC_PLAIN_GLIBC
    /* R18: cancel and kill of an ended detached thread stay ESRCH through the header. */
    CHECK(pthread_cancel(t) == ESRCH && pthread_kill(t, 0) == ESRCH);
#endif
}

int main(void) {
    alarm(60);
    for (int round = 0; round < 3; round++) {
        detached(1);
        detached(0);
    }
    return 0;
}
