/* A thread that a library built without the header (lib/ of the same name, TC_PLAIN_LIBRARY)
 * creates while the dynamic loader's lock is held (its destructor, run by dlclose) reaches its
 * start routine and is joined: on glibc the library's pthread_create is libthread_cancel's,
 * which makes the thread known from its start, and that must not take the loader's lock
 * (registering a thread-local destructor does): the thread would wait for dlclose, which waits
 * for the join — a hang, caught by alarm(). The program is dlclose_destructor_creates_and_joins_a_thread.c's.
 * TC_COMPARE_WITH_GLIBC */
#include "dlclose_destructor_creates_and_joins_a_thread.c"
