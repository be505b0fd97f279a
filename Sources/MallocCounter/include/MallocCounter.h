#ifndef MALLOC_COUNTER_H
#define MALLOC_COUNTER_H

/// Starts counting heap allocations made by the calling thread (malloc, calloc, realloc,
/// posix_memalign, aligned_alloc, memalign), from zero.
void malloc_counter_start(void);

/// Stops counting on the calling thread and returns the number of allocations seen.
long malloc_counter_stop(void);

/// The number of blocks the calling thread freed during the last counting window (from
/// malloc_counter_start to malloc_counter_stop, or until now while counting).
long malloc_counter_frees(void);

#endif
