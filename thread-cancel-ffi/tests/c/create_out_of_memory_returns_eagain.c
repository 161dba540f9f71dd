/* Out of memory: pthread_create when memory is exhausted returns EAGAIN, as glibc does; the
 * process is not aborted (Rust's allocator aborts on failure: the library's allocations on the
 * C paths must fail softly). In a child process: the address space is capped just above what is
 * used, malloc is drained, then threads are created (and kept) until pthread_create fails, and
 * it is called again and again; then memory is given back and a thread is created and joined.
 * Through the header only, key creation and pthread_setspecific under the same conditions
 * return 0 or EAGAIN / ENOMEM, never abort. The child ends with pthread_exit in main, its last
 * thread ending the process. (Built with AddressSanitizer, it only says so: the
 * sanitizer's allocator ends the process when memory runs out.)
 *
 * TC_COMPARE_WITH_GLIBC: the runner also builds this against plain glibc; both print the same. */
#include <pthread.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>
#include "tc_test.h"

static atomic_int release;

static void *body(void *arg) {
    return arg;
}

static void *held(void *arg) {
    test_wait_ge(&release, 1);
    return arg;
}

/* The process's address-space size in bytes (VmSize). */
static long vm_size(void) {
    FILE *f = fopen("/proc/self/status", "r");
    char line[256];
    long kb = -1;
    while (f && fgets(line, sizeof line, f))
        if (sscanf(line, "VmSize: %ld kB", &kb) == 1) break;
    if (f) fclose(f);
    return kb * 1024;
}

static void say(const char *s) {
    CHECK((write)(1, s, strlen(s)) == (ssize_t)strlen(s));
}

static int child(void) {
    alarm(60); /* not inherited from the parent: a hang ends here too, not only the parent */
    pthread_t t;
    CHECK(pthread_create(&t, NULL, body, NULL) == 0); /* first-use set-up done */
    CHECK(pthread_join(t, NULL) == 0);
    struct rlimit old, low;
    CHECK(getrlimit(RLIMIT_AS, &old) == 0);
    low = old;
    low.rlim_cur = (rlim_t)vm_size() + (1 << 20);
    CHECK(setrlimit(RLIMIT_AS, &low) == 0);
    void *head = NULL;
    for (size_t size = 1 << 20; size >= sizeof(void *); size /= 2) {
        void *p;
        while ((p = malloc(size)) != NULL) {
            *(void **)p = head;
            head = p;
        }
    }
    /* Threads that stay alive (a joined thread's stack would be reused) until one fails. */
    static pthread_t live[1000];
    int n = 0, e = 0;
    while (n < 1000 && (e = pthread_create(&live[n], NULL, held, NULL)) == 0) n++;
    int eagain = e == EAGAIN, other = e != EAGAIN;
    for (int i = 0; i < 50; i++) {
        e = pthread_create(&t, NULL, body, NULL);
        if (e == EAGAIN)
            eagain++;
        else {
            other++;
            if (e == 0) pthread_join(t, NULL);
        }
    }
#ifndef TC_PLAIN_GLIBC
    int keys = 0, key_failed = 0, set_failed = 0;
    for (int i = 0; i < 50; i++) {
        pthread_key_t k;
        int e = pthread_key_create(&k, NULL);
        CHECK(e == 0 || e == EAGAIN || e == ENOMEM);
        key_failed += e != 0;
        if (e == 0) {
            keys++;
            int s = pthread_setspecific(k, (void *)1);
            CHECK(s == 0 || s == ENOMEM);
            set_failed += s != 0;
            CHECK(pthread_getspecific(k) == (s == 0 ? (void *)1 : NULL));
        }
    }
    fprintf(stderr, "without memory: %d keys created, %d key_create and %d setspecific failed\n",
            keys, key_failed, set_failed);
#endif
    while (head) {
        void *next = *(void **)head;
        free(head);
        head = next;
    }
    CHECK(setrlimit(RLIMIT_AS, &old) == 0);
    atomic_store(&release, 1);
    for (int i = 0; i < n; i++) CHECK(pthread_join(live[i], NULL) == 0);
    say(eagain == 51 ? "without memory: pthread_create EAGAIN every time" : "without memory: not EAGAIN");
    void *ret = NULL;
    int c = pthread_create(&t, NULL, body, (void *)4);
    int j = c == 0 ? pthread_join(t, &ret) : -1;
    say(c == 0 && j == 0 && ret == (void *)4 ? "; memory back: create and join work\n"
                                             : "; memory back: create or join failed\n");
    if (other != 0 || c != 0) return 1;
    /* Main's pthread_exit leaves the process to the last thread created: its end exits with
     * status 0, which needs every failed creation above counted out (one that was not would
     * keep the process waiting, until the alarm). */
    CHECK(pthread_create(&t, NULL, body, NULL) == 0);
    pthread_exit(NULL);
}

#if defined __SANITIZE_ADDRESS__
#define TC_ASAN 1
#elif defined __has_feature
#if __has_feature(address_sanitizer)
#define TC_ASAN 1
#endif
#endif

int main(void) {
#ifdef TC_ASAN
    /* AddressSanitizer's own allocator cannot run out of memory: it reports the failed malloc
     * and ends the process (or hangs, its report needing memory too). Nothing to test there. */
    say("skipped under AddressSanitizer\n");
    return 0;
#endif
    alarm(60);
    fflush(stdout);
    pid_t pid = fork();
    CHECK(pid >= 0);
    if (pid == 0) _exit(child());
    int st;
    CHECK((waitpid)(pid, &st, 0) == pid);
    if (WIFSIGNALED(st)) printf("the process was killed by signal %d\n", WTERMSIG(st));
    return WIFEXITED(st) && WEXITSTATUS(st) == 0 ? 0 : 1;
}
