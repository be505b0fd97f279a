// Counts heap allocations and frees per thread, for tests that prove rendering allocates and
// frees nothing.
//
// Linked into the test executable, these definitions interpose the C library's allocator for
// the whole process (the executable's symbols come first in the dynamic lookup). Each one
// forwards to glibc's own entry points (__libc_malloc and friends), which avoids dlsym's
// bootstrap recursion, and counts only while the calling thread has counting switched on,
// so tests running in parallel on other threads do not disturb each other.
#include <errno.h>
#include <stddef.h>
#include "MallocCounter.h"

// Under AddressSanitizer or ThreadSanitizer the sanitizer owns the allocator: interposing
// malloc would hand it memory it did not allocate. There the counts come from the
// sanitizer's own allocation hooks instead.
#if defined(__has_feature)
#  if __has_feature(address_sanitizer) || __has_feature(thread_sanitizer)
#    define MALLOC_COUNTER_SANITIZED 1
#  endif
#endif
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
#  define MALLOC_COUNTER_SANITIZED 1
#endif

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

#ifdef MALLOC_COUNTER_SANITIZED
#include <sanitizer/allocator_interface.h>

// The sanitizer runtime calls these weak hooks on every allocation and free. (Installing
// hooks with __sanitizer_install_malloc_and_free_hooks from a constructor fails: it runs
// before the runtime is initialized.)
void __sanitizer_malloc_hook(const volatile void *pointer, size_t size) {
    (void)pointer;
    (void)size;
    if (counting) allocations++;
}

void __sanitizer_free_hook(const volatile void *pointer) {
    if (counting && pointer != NULL) deallocations++;
}
#else
extern void *__libc_malloc(size_t size);
extern void *__libc_calloc(size_t count, size_t size);
extern void *__libc_realloc(void *pointer, size_t size);
extern void *__libc_memalign(size_t alignment, size_t size);
extern void __libc_free(void *pointer);

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
#endif
