/* W04, never both in the threads of other libraries: a library built without the header
 * (tests/c/lib/ of the same name, TC_PLAIN_LIBRARY) runs the never-both race — a thread of its
 * own blocked in read, a byte written, the thread canceled with the library's own
 * pthread_cancel, joined with its own pthread_join — inside a program through the header. The
 * thread is the C library's (its cancel, cleanup and unwind are glibc's), and its read is the
 * library's point: a canceled read either returned the byte or left it in the pipe. Every byte
 * written is accounted for (the library's half fails otherwise). Before, the read was glibc's
 * and lost the byte in a third to a half of the races. R10_RACES sets the count (default
 * 2,000; the harness runs 2,000 under emulation). */
#include <dlfcn.h>
#include "tc_test.h"

int main(void) {
    void *lib = dlopen(TC_TEST_LIB, RTLD_NOW | RTLD_LOCAL);
    CHECK(lib != NULL);
    int (*lib_races)(void) = (int (*)(void))dlsym(lib, "lib_races");
    CHECK(lib_races != NULL);
    return lib_races();
}
