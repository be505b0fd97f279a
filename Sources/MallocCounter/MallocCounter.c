// Counts heap allocations per thread, for tests that prove rendering allocates nothing.
//
// Linked into the test executable, these definitions interpose the C library's allocator for
// the whole process (the executable's symbols come first in the dynamic lookup). Each one
// forwards to glibc's own entry points (__libc_malloc and friends), which avoids dlsym's
// bootstrap recursion, and counts only while the calling thread has counting switched on,
// so tests running in parallel on other threads do not disturb each other.
#include <errno.h>
#include <stddef.h>
#include "MallocCounter.h"

extern void *__libc_malloc(size_t size);
extern void *__libc_calloc(size_t count, size_t size);
extern void *__libc_realloc(void *pointer, size_t size);
extern void *__libc_memalign(size_t alignment, size_t size);
extern void __libc_free(void *pointer);

static __thread int counting;
static __thread long allocations;
static __thread long deallocations;

void malloc_counter_start(void) {
    allocations = 0;
    deallocations = 0;
    counting = 1;
}

long malloc_counter_frees(void) {
    return deallocations;
}

long malloc_counter_stop(void) {
    counting = 0;
    return allocations;
}

void *malloc(size_t size) {
    if (counting) allocations++;
    return __libc_malloc(size);
}

void *calloc(size_t count, size_t size) {
    if (counting) allocations++;
    return __libc_calloc(count, size);
}

void *realloc(void *pointer, size_t size) {
    if (counting) allocations++;
    return __libc_realloc(pointer, size);
}

void *memalign(size_t alignment, size_t size) {
    if (counting) allocations++;
    return __libc_memalign(alignment, size);
}

void *aligned_alloc(size_t alignment, size_t size) {
    if (counting) allocations++;
    return __libc_memalign(alignment, size);
}

int posix_memalign(void **result, size_t alignment, size_t size) {
    if (counting) allocations++;
    void *pointer = __libc_memalign(alignment, size);
    if (pointer == NULL) return ENOMEM;
    *result = pointer;
    return 0;
}

void free(void *pointer) {
    if (counting && pointer != NULL) deallocations++;
    __libc_free(pointer);
}
