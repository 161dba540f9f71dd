/* The C half of r07_cxx_c_frames_interleave.cpp: a C frame (no exception tables of its own
 * beyond the default unwind information) between two C++ frames, holding a cleanup handler. */
#include <pthread.h>

void c_layer(void (*handler)(void *), void *arg, void (*callback)(void)) {
    pthread_cleanup_push(handler, arg);
    callback();
    pthread_cleanup_pop(0);
}
