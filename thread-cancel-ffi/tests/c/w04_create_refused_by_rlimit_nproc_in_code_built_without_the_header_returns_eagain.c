/* create_refused_by_rlimit_nproc_returns_eagain.c with its threads created and joined by the C
 * library's names, as a library built without the header creates and joins them: on glibc
 * those reach libthread_cancel's pthread_create, which adopts each thread at its start. A
 * creation refused by RLIMIT_NPROC returns EAGAIN, again and again, and frees what it had
 * allocated for the thread (AddressSanitizer's leak check runs at the end of the ASan build);
 * the program goes on, and a thread created once the limit is raised is canceled in a read by
 * its system id and joined (the C library's pthread_join) with PTHREAD_CANCELED.
 *
 * TC_COMPARE_WITH_GLIBC: the runner also builds this against plain glibc; both print the same. */
#include <pthread.h>

extern int plain_pthread_create(pthread_t *, const pthread_attr_t *, void *(*)(void *),
                                void *) __asm__("pthread_create");
extern int plain_pthread_join(pthread_t, void **) __asm__("pthread_join");
#define pthread_create plain_pthread_create
#define pthread_join plain_pthread_join
#include "create_refused_by_rlimit_nproc_returns_eagain.c"
