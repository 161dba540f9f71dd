/* The library half of r18_ids_never_reused_and_are_the_system_ids.c: a library of the
 * distribution, built without the compatibility header and without libthread_cancel
 * (TC_PLAIN_LIBRARY), that tells the program the C library's pthread_self() of the calling
 * thread. */
#include <pthread.h>

pthread_t lib_self(void) { return pthread_self(); }
