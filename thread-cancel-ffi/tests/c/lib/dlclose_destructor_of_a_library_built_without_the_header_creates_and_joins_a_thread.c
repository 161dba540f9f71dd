/* The shared library of dlclose_destructor_of_a_library_built_without_the_header_creates_and_joins_a_thread.c: a library of the distribution
 * (TC_PLAIN_LIBRARY: built without the header and without libthread_cancel) whose destructor, run by
 * dlclose with the dynamic loader's lock held, creates a thread and joins it. */
#include <pthread.h>
#include <stdio.h>

static void *worker(void *arg) {
    return arg;
}

__attribute__((destructor)) static void create_and_join_at_unload(void) {
    pthread_t t;
    void *value = NULL;
    int rc = pthread_create(&t, NULL, worker, (void *)42);
    if (rc == 0) rc = pthread_join(t, &value);
    printf("library destructor: create and join %d, value %ld\n", rc, (long)value);
    fflush(stdout);
}
