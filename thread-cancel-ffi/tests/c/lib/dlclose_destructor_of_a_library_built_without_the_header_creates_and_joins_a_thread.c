/* The shared library of dlclose_destructor_of_a_library_built_without_the_header_creates_and_joins_a_thread.c:
 * the same library as dlclose_destructor_creates_and_joins_a_thread.c's (its destructor, run by
 * dlclose with the dynamic loader's lock held, creates a thread and joins it), built as a
 * library of the distribution is: without the header and without libthread_cancel
 * (TC_PLAIN_LIBRARY). */
#include "dlclose_destructor_creates_and_joins_a_thread.c"
