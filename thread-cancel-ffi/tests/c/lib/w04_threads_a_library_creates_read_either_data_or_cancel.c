/* The library half of w04_threads_a_library_creates_read_either_data_or_cancel.c: the
 * never-both race program (r10_read_either_data_or_cancel.c) as a library of the distribution
 * would run it, built without the compatibility header and without libthread_cancel
 * (TC_PLAIN_LIBRARY): its threads are created, canceled and joined with the C library's own
 * calls, and block in the C library's read. Its main is the library's lib_races. */
/* Built plain (TC_PLAIN_GLIBC), but this half checks its count: 0 bytes lost. */
#undef TC_PLAIN_GLIBC
#define main lib_races
#define R10_WHO "threads of a library built without the header"
#include "../r10_read_either_data_or_cancel.c"
