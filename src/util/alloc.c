/* Allocation hook: plain malloc with a fail-after-N switch for tests. */
#define _DEFAULT_SOURCE /* MADV_HUGEPAGE */
#include "util/alloc.h"

#include <stdatomic.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

/* Atomic: the fast engine's worker threads allocate (their tiles) while
 * the thread that started them may too. Relaxed ordering is enough, as the
 * counters order nothing else. */
static atomic_long fail_after = -1;
static atomic_long attempts;

void alloc_fail_after(long n)
{
	atomic_store_explicit(&fail_after, n, memory_order_relaxed);
	atomic_store_explicit(&attempts, 0, memory_order_relaxed);
}

long alloc_count(void)
{
	return atomic_load_explicit(&attempts, memory_order_relaxed);
}

static int should_fail(void)
{
	atomic_fetch_add_explicit(&attempts, 1, memory_order_relaxed);
	long left = atomic_load_explicit(&fail_after, memory_order_relaxed);
	/* take one from a positive count; a count that reached 0 stays there
	 * (every later allocation fails), a negative one means never */
	while (left > 0 &&
	       !atomic_compare_exchange_weak_explicit(&fail_after, &left, left - 1, memory_order_relaxed,
						      memory_order_relaxed))
		;
	return left == 0;
}

void *hloi_malloc(size_t n)
{
	if (should_fail())
		return NULL;
	return malloc(n ? n : 1);
}

void *hloi_calloc(size_t count, size_t size)
{
	if (should_fail())
		return NULL;
	if (count == 0 || size == 0)
		return calloc(1, 1);
	return calloc(count, size);
}

void *hloi_realloc(void *p, size_t n)
{
	if (should_fail())
		return NULL;
	return realloc(p, n ? n : 1);
}

void hloi_free(void *p)
{
	free(p);
}

char *hloi_strndup(const char *s, size_t n)
{
	char *d = hloi_malloc(n + 1);
	if (!d)
		return NULL;
	memcpy(d, s, n);
	d[n] = '\0';
	return d;
}

char *hloi_strdup(const char *s)
{
	return hloi_strndup(s, strlen(s));
}

/* The byte before the aligned block records how far back the malloc'd block
 * starts; the offset is always in 1..64. */
void *hloi_aligned_alloc(size_t n)
{
	if (n > SIZE_MAX - 64)
		return NULL;
	unsigned char *raw = hloi_malloc(n + 64);
	if (!raw)
		return NULL;
	uintptr_t addr = (uintptr_t)raw;
	size_t off = 64 - (size_t)(addr % 64);
	unsigned char *p = raw + off;
	p[-1] = (unsigned char)off;
#ifdef MADV_HUGEPAGE
	/* Large buffers (array values): ask for transparent huge pages on the
	 * 2 MiB-aligned interior, as NumPy does; page faults otherwise cost
	 * more than the elementwise work. Only advice: failure is harmless. */
	if (n >= ((size_t)4 << 20)) {
		const uintptr_t huge = (uintptr_t)2 << 20;
		uintptr_t lo = ((uintptr_t)p + huge - 1) & ~(huge - 1);
		uintptr_t hi = ((uintptr_t)p + n) & ~(huge - 1);
		if (hi > lo)
			(void)madvise((void *)lo, (size_t)(hi - lo), MADV_HUGEPAGE);
	}
#endif
	return p;
}

void hloi_aligned_free(void *p)
{
	if (!p)
		return;
	unsigned char *q = p;
	hloi_free(q - q[-1]);
}
