/* A thread created while the dynamic loader's lock is held (a library destructor run by
 * dlclose) reaches its start routine and can be joined: the library's destructor creates and
 * joins a thread (the library is lib/dlclose_destructor_creates_and_joins_a_thread.c, built as
 * a shared object through the same header; TC_TEST_LIB is its path). A new thread that took the
 * loader's lock before its start routine (registering a thread-local destructor does) would
 * wait for dlclose, which waits for the join: a hang, caught by alarm().
 * TC_COMPARE_WITH_GLIBC */
#include <dlfcn.h>
#include "tc_test.h"

/* Under AddressSanitizer: the library links libthread_cancel.a, whose process-wide tables
 * (the thread registry: a few hundred bytes) are unreachable once the library is unloaded (Rust
 * statics have no destructors); LeakSanitizer would report them. */
const char *__lsan_default_options(void) {
    return "detect_leaks=0";
}

int main(void) {
    alarm(20);
    void *lib = dlopen(TC_TEST_LIB, RTLD_NOW | RTLD_LOCAL);
    if (!lib) {
        fprintf(stderr, "dlopen: %s\n", dlerror());
        return 1;
    }
    printf("loaded\n");
    fflush(stdout);
    CHECK(dlclose(lib) == 0);
    printf("unloaded\n");
    return 0;
}
