/* R18 (the other side): a live thread is never ESRCH. pthread_kill(t, 0) right after
 * pthread_create returned must be 0 — the thread exists, whether or not it has been scheduled
 * yet. 200 tries, each on a thread that waits for main before it ends.
 *
 * A regression test: the first C ABI returned ESRCH here (the new thread recorded its system id
 * itself, once scheduled, and tc_kill took a missing id for "no such thread"); fixed in
 * 1cf2c8b (tc_create records the id). */
#include <pthread.h>
#include <signal.h>
#include "tc_test.h"

#define TRIES 200

static atomic_int hold;

static void *held(void *arg) {
    test_wait_ge(&hold, 1);
    return arg;
}

int main(void) {
    alarm(20);
    int esrch = 0, first_rc = 0;
    for (int i = 0; i < TRIES; i++) {
        atomic_store(&hold, 0);
        pthread_t t;
        CHECK(pthread_create(&t, NULL, held, NULL) == 0);
        int rc = pthread_kill(t, 0);
        if (rc != 0) {
            esrch++;
            if (!first_rc) first_rc = rc;
        }
        atomic_store(&hold, 1);
        CHECK(pthread_join(t, NULL) == 0);
    }
    if (esrch) {
        fprintf(stderr,
                "pthread_kill(t, 0) on a live, just-created thread returned %d (%s) in %d of "
                "%d tries\n",
                first_rc, strerror(first_rc), esrch, TRIES);
        return 1;
    }
    printf("ok: pthread_kill(t, 0) == 0 on %d just-created threads\n", TRIES);
    return 0;
}
