/* The library half of w04_the_main_thread_is_canceled_by_code_built_without_the_header.c: a
 * library of the distribution, built without the compatibility header and without
 * libthread_cancel (TC_PLAIN_LIBRARY), that takes the calling thread's id (the main thread's)
 * and cancels it from a thread of its own once main is blocked. */
#define _GNU_SOURCE
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <unistd.h>
#include "../tc_test.h"

static pthread_t main_id;
static atomic_int *handler_ran;

static void *canceler(void *arg) {
    (void)arg;
    test_wait_blocked(getpid()); /* main's kernel thread id is the process id */
    int rc = pthread_cancel(main_id);
    while (atomic_load(handler_ran) == 0)
        test_usleep(100);
    printf("the library's cancel of main, blocked in read: %d\n", rc);
    printf("main's cleanup handler ran: %d time(s)\n", atomic_load(handler_ran));
    fflush(stdout);
    return NULL;
}

/* Remembers the caller (main) and starts the canceler, detached. */
int lib_cancel_me_once_blocked(atomic_int *flag) {
    main_id = pthread_self();
    handler_ran = flag;
    pthread_t t;
    int e = pthread_create(&t, NULL, canceler, NULL);
    if (e == 0)
        pthread_detach(t);
    return e;
}
