/* pthread_once misused: a clear error, never a crash or a hang.
 *   - a null once-control or init routine, or a misaligned once-control: EINVAL;
 *   - pthread_once on a once-control whose init routine the calling thread is running (glibc
 *     hangs forever), directly or from the init routine of another once-control: EDEADLK, and
 *     the outer calls go on and complete (each init routine ran once). */
#include <pthread.h>
#include <stdint.h>
#include "tc_test.h"

static void init(void) {
}

static pthread_once_t self_once = PTHREAD_ONCE_INIT;
static int self_runs, self_rc = -1;

static void init_calls_itself(void) {
    self_runs++;
    self_rc = pthread_once(&self_once, init_calls_itself);
}

static pthread_once_t x = PTHREAD_ONCE_INIT, y = PTHREAD_ONCE_INIT;
static int x_runs, y_runs, y_on_x_rc = -1, x_on_y_rc = -1;

static void init_y(void);

static void init_x(void) {
    x_runs++;
    x_on_y_rc = pthread_once(&y, init_y);
}

static void init_y(void) {
    y_runs++;
    y_on_x_rc = pthread_once(&x, init_x); /* x's init routine is running two frames up */
}

int main(void) {
    alarm(20);
    /* The null arguments go to tc_once by its own name: the header's pthread_once keeps the C
     * library's declaration, and glibc's says nonnull (UBSan stops a null passed there). */
    pthread_once_t *volatile null_once = NULL; /* volatile: past the compiler's nonnull check */
    void (*volatile null_init)(void) = NULL;
    CHECK(tc_once(null_once, init) == EINVAL);
    pthread_once_t o = PTHREAD_ONCE_INIT;
    CHECK(tc_once(&o, null_init) == EINVAL);
    _Alignas(8) char raw[2 * sizeof(pthread_once_t)] = {0};
    CHECK(pthread_once((pthread_once_t *)(uintptr_t)(raw + 1), init) == EINVAL);
    CHECK(pthread_once(&o, init) == 0);

    CHECK(pthread_once(&self_once, init_calls_itself) == 0);
    CHECK(self_rc == EDEADLK && self_runs == 1);
    CHECK(pthread_once(&self_once, init_calls_itself) == 0 && self_runs == 1);

    CHECK(pthread_once(&x, init_x) == 0);
    CHECK(y_on_x_rc == EDEADLK && x_on_y_rc == 0 && x_runs == 1 && y_runs == 1);
    CHECK(pthread_once(&y, init_y) == 0 && pthread_once(&x, init_x) == 0);
    CHECK(x_runs == 1 && y_runs == 1);
    printf("ok: EINVAL for null or misaligned arguments; EDEADLK for a recursive call, the outer "
           "calls completing\n");
    return 0;
}
