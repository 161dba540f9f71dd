/* W04 / R10 through the interposed symbol: a read made by code built without the compatibility
 * header (here the symbol `read` itself, as another library calls it: the library defines it) is
 * a cancellation point that either returned its data or had no effect — never both.
 *
 * The never-both stress of r10_read_either_data_or_cancel.c, with its reads made that way,
 * 100,000 races by default (20,000 under AddressSanitizer). Each race: a thread blocks in read(2) on an empty pipe; main writes one byte and cancels the
 * thread at once. Afterwards every byte written must be accounted for: returned by the read, or
 * still in the pipe. Built twice by the test runner: through pthread_compat.h (ours: 0 bytes
 * lost, or the program fails) and, with TC_PLAIN_GLIBC, against the system's glibc alone (its
 * losses are printed for comparison, not failed on). R10_RACES sets the count. */
/* The C library's symbol `read`, as a library built without the header calls it (the header
 * redirects the name `read` itself to tc_read). */
#include <sys/types.h>
extern ssize_t foreign_read(int, void *, size_t) __asm__("read");

#define R10_READ foreign_read
#define R10_ALARM 600
#ifdef __SANITIZE_ADDRESS__
#define R10_DEFAULT_RACES 20000
#else
#define R10_DEFAULT_RACES 100000
#endif
#define R10_WHO "thread-cancel, the interposed read"
#include "r10_read_either_data_or_cancel.c"
