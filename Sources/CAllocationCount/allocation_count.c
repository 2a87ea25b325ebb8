// malloc and its kin, counted and passed to glibc's own (its __libc_* entry points, which
// glibc exports for exactly this: no dlsym, which itself allocates, at the first call). glibc
// routes its own internal allocations through these symbols too, so a library's strdup or
// posix_memalign is counted as the program's malloc is. Counting is one relaxed atomic load
// per call while off: the harness times nothing while this is preloaded.
#include "CAllocationCount.h"
#include <errno.h>
#include <stdatomic.h>
#include <stddef.h>
#include <unistd.h>

extern void *__libc_malloc(size_t size);
extern void *__libc_calloc(size_t count, size_t size);
extern void *__libc_realloc(void *pointer, size_t size);
extern void *__libc_memalign(size_t alignment, size_t size);
extern void __libc_free(void *pointer);

enum { large_bytes = 16384 };
static atomic_bool counting;
static atomic_uint_least64_t total_count, large_count;

static inline void count(size_t size) {
    if (!atomic_load_explicit(&counting, memory_order_relaxed)) return;
    atomic_fetch_add_explicit(&total_count, 1, memory_order_relaxed);
    if (size > large_bytes) atomic_fetch_add_explicit(&large_count, 1, memory_order_relaxed);
}

void dualcam_allocations_zero(void) {
    atomic_store(&total_count, 0);
    atomic_store(&large_count, 0);
}

void dualcam_allocations_count(int on) { atomic_store(&counting, on != 0); }

void dualcam_allocations_read(uint64_t *total, uint64_t *large) {
    if (total) *total = atomic_load(&total_count);
    if (large) *large = atomic_load(&large_count);
}

void *malloc(size_t size) {
    count(size);
    return __libc_malloc(size);
}

void *calloc(size_t count_of, size_t size) {
    size_t bytes;
    // An overflowing product is glibc's to refuse (ENOMEM); counted as large.
    count(__builtin_mul_overflow(count_of, size, &bytes) ? (size_t)-1 : bytes);
    return __libc_calloc(count_of, size);
}

void *realloc(void *pointer, size_t size) {
    count(size);
    return __libc_realloc(pointer, size);
}

void free(void *pointer) { __libc_free(pointer); }

void *memalign(size_t alignment, size_t size) {
    count(size);
    return __libc_memalign(alignment, size);
}

void *aligned_alloc(size_t alignment, size_t size) {
    count(size);
    return __libc_memalign(alignment, size);
}

int posix_memalign(void **result, size_t alignment, size_t size) {
    // POSIX: a power of two and a multiple of sizeof(void *), else EINVAL and no allocation.
    if (alignment == 0 || (alignment & (alignment - 1)) != 0 || alignment % sizeof(void *) != 0) return EINVAL;
    count(size);
    void *pointer = __libc_memalign(alignment, size);
    if (!pointer) return ENOMEM;
    *result = pointer;
    return 0;
}

void *valloc(size_t size) {
    count(size);
    return __libc_memalign((size_t)sysconf(_SC_PAGESIZE), size);
}

void *pvalloc(size_t size) {
    size_t page = (size_t)sysconf(_SC_PAGESIZE);
    if (size > (size_t)-1 - page) {
        errno = ENOMEM;
        return NULL;
    }
    size_t rounded = size == 0 ? page : (size + page - 1) & ~(page - 1);
    count(rounded);
    return __libc_memalign(page, rounded);
}
