/* R18 for threads the library did not create. pthread_self (tc_self) in such a thread (here:
 * created with the system's own pthread_create, as a thread pool of another library would be)
 * gives it an id. That id's registry slot and control block must be freed when the thread ends
 * (they used to leak forever: one slot and about 320 bytes per thread), and the id must then be
 * stale: pthread_cancel and pthread_kill return ESRCH, even while a new thread uses the same
 * slot (the ids are generation-tagged).
 *
 * An id's low 32 bits are its slot's number (slot index + 1). The program runs N foreign
 * threads, at most W alive at a time (each joined with the system's pthread_join, which returns
 * after the thread's thread-local destructors have run), and the main thread and an attacker
 * thread (below) hold one id each: with the slots freed no slot number ever exceeds W + 2; a leak
 * reaches N. Half the threads also call
 * pthread_self from a thread-specific-data destructor (which may run after the slot was freed),
 * and half call it for the first time there: the id must be the same one, and nothing leak.
 * Meanwhile an attacker thread sends pthread_kill(SIGUSR1) and pthread_cancel to the id of the
 * latest ended thread, whose slot the next threads reuse: every call must be ESRCH and no signal
 * delivered. N is THREAD_CANCEL_STRESS if set (default 50,000). */
#include <pthread.h>
#include <signal.h>
#include "tc_test.h"

/* The system's calls: these threads are not ours. */
#undef pthread_create
#undef pthread_join

#define W 4

static pthread_key_t key;
static atomic_ulong max_slot;
static atomic_int wrong_id_in_destructor;

static void note(pthread_t id) {
    unsigned long slot = (unsigned long)id & 0xffffffffUL, seen = atomic_load(&max_slot);
    while (slot > seen && !atomic_compare_exchange_weak(&max_slot, &seen, slot)) {
    }
}

/* A key destructor: pthread_self there is the thread's id (the one its body got, if any). */
static void destructor(void *v) {
    pthread_t self = pthread_self();
    note(self);
    pthread_t *seen = v;
    if (*seen != 0 && !pthread_equal(*seen, self)) atomic_store(&wrong_id_in_destructor, 1);
    free(seen);
}

/* arg: 0 = pthread_self in the body and the destructor; 1 = only in the destructor; 2 = only in
 * the body, the id returned. */
static void *foreign(void *arg) {
    long mode = (long)arg;
    pthread_t self = 0;
    if (mode != 1) {
        self = pthread_self();
        note(self);
    }
    if (mode != 2) {
        pthread_t *v = malloc(sizeof *v);
        CHECK(v != NULL);
        *v = self;
        CHECK(pthread_setspecific(key, v) == 0);
    }
    return (void *)self;
}

static atomic_ulong stale_id;
static atomic_int attack_done, attacks, attack_reached, signals_delivered;

static void on_sigusr1(int sig) {
    (void)sig;
    atomic_fetch_add(&signals_delivered, 1);
}

static void *attacker(void *arg) {
    (void)arg;
    while (!atomic_load(&attack_done)) {
        pthread_t id = atomic_load(&stale_id);
        if (id == 0) continue;
        int k = pthread_kill(id, SIGUSR1), c = pthread_cancel(id);
        if (k != ESRCH || c != ESRCH) atomic_fetch_add(&attack_reached, 1);
        atomic_fetch_add(&attacks, 1);
        test_usleep(10);
    }
    return NULL;
}

static atomic_int hold;

static void *held(void *arg) {
    *(pthread_t *)arg = pthread_self();
    atomic_store(&hold, 1);
    test_wait_ge(&hold, 2);
    return NULL;
}

/* The id a new foreign thread gets, after it has ended. */
static pthread_t ended_foreign_id(void) {
    pthread_t t;
    void *id;
    CHECK(pthread_create(&t, NULL, foreign, (void *)2) == 0);
    CHECK(pthread_join(t, &id) == 0);
    return (pthread_t)id;
}

int main(void) {
    alarm(120);
    const char *env = getenv("THREAD_CANCEL_STRESS");
    long n = env ? atol(env) : 50000;
    CHECK(pthread_key_create(&key, destructor) == 0);
    note(pthread_self()); /* main holds a slot throughout */

    struct sigaction sa = {.sa_handler = on_sigusr1};
    sigemptyset(&sa.sa_mask);
    CHECK(sigaction(SIGUSR1, &sa, NULL) == 0);
    tc_thread_t att;
    CHECK(tc_create(&att, NULL, attacker, NULL) == 0);
    for (long i = 0; i < n; i += W) {
        pthread_t t[W];
        for (int j = 0; j < W; j++)
            CHECK(pthread_create(&t[j], NULL, foreign, (void *)(long)((i + j) % 2)) == 0);
        void *id;
        CHECK(pthread_join(t[0], &id) == 0); /* mode 0: it returns its id */
        atomic_store(&stale_id, (unsigned long)id);
        for (int j = 1; j < W; j++) CHECK(pthread_join(t[j], NULL) == 0);
    }
    atomic_store(&attack_done, 1);
    CHECK(tc_join(att, NULL) == 0);
    if (atomic_load(&attack_reached) || atomic_load(&signals_delivered)) {
        fprintf(stderr, "%d of %d calls on stale ids did not return ESRCH; %d signals delivered\n",
                atomic_load(&attack_reached), atomic_load(&attacks),
                atomic_load(&signals_delivered));
        return 1;
    }
    unsigned long max = atomic_load(&max_slot);
    if (max > W + 2) {
        fprintf(stderr, "%ld foreign threads (%d at a time) used slot numbers up to %lu: the slots of "
                        "ended threads are not freed\n", n, W, max);
        return 1;
    }
    CHECK(!atomic_load(&wrong_id_in_destructor));

    /* A stale id: ESRCH, also while a new foreign thread uses its slot. */
    pthread_t stale = ended_foreign_id();
    CHECK(pthread_cancel(stale) == ESRCH);
    CHECK(pthread_kill(stale, 0) == ESRCH);
    pthread_t t, fresh;
    CHECK(pthread_create(&t, NULL, held, &fresh) == 0);
    test_wait_ge(&hold, 1);
    CHECK(((unsigned long)fresh & 0xffffffffUL) == ((unsigned long)stale & 0xffffffffUL));
    CHECK(!pthread_equal(fresh, stale));
    CHECK(pthread_cancel(stale) == ESRCH);
    CHECK(pthread_kill(stale, 0) == ESRCH);
    CHECK(pthread_kill(fresh, 0) == 0); /* the live thread is reachable by its own id */
    atomic_store(&hold, 2);
    CHECK(pthread_join(t, NULL) == 0);
    CHECK(pthread_kill(fresh, 0) == ESRCH);

    printf("ok: %ld foreign threads (%d at a time) used slot numbers up to %lu; stale ids ESRCH "
           "while their slot is reused (%d attacks)\n", n, W, max, atomic_load(&attacks));
    return 0;
}
