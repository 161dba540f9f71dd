/* P4c's driver: what its two halves share (see p4c_main.c). */
#ifndef THREAD_CANCEL_BENCH_P4C_H
#define THREAD_CANCEL_BENCH_P4C_H

#include <stdint.h>

/* Waits until thread `tid` of this process is asleep in read(2), stays so for 100 us (P3's
 * SETTLE) and still is: 0, or ETIMEDOUT after 10 s. */
int p4c_wait_blocked(int tid);

/* One sample (p4c_target.c): the latency in ns, or a negated error number. */
int64_t p4c_sample_ours(int fd, int cpu);
int64_t p4c_sample_glibc(int fd, int cpu);

#endif
