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
static atomic_size_t last_failure;  /* bytes of the last refused request */

/* HLOI_ALLOC_FAIL_AFTER=N (tests of a whole program): read once, before the
 * first allocation; alloc_fail_after overrides it. */
static atomic_int env_read;

static void read_env(void)
{
	if (atomic_exchange_explicit(&env_read, 1, memory_order_relaxed))
		return;
	const char *v = getenv("HLOI_ALLOC_FAIL_AFTER");
	if (v && *v) {
		char *end;
		long n = strtol(v, &end, 10);
		if (!*end && n >= 0)
			atomic_store_explicit(&fail_after, n, memory_order_relaxed);
	}
}

void alloc_fail_after(long n)
{
	atomic_store_explicit(&env_read, 1, memory_order_relaxed);
	atomic_store_explicit(&fail_after, n, memory_order_relaxed);
	atomic_store_explicit(&attempts, 0, memory_order_relaxed);
}

size_t alloc_last_failure(void)
{
	return atomic_load_explicit(&last_failure, memory_order_relaxed);
}

static void *failed(size_t n)
{
	atomic_store_explicit(&last_failure, n ? n : 1, memory_order_relaxed);
	return NULL;
}

long alloc_count(void)
{
	return atomic_load_explicit(&attempts, memory_order_relaxed);
}

static int should_fail(void)
{
	if (!atomic_load_explicit(&env_read, memory_order_relaxed))
		read_env();
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
	void *p = should_fail() ? NULL : malloc(n ? n : 1);
	return p ? p : failed(n);
}

void *hloi_calloc(size_t count, size_t size)
{
	void *p = should_fail() ? NULL : count == 0 || size == 0 ? calloc(1, 1) : calloc(count, size);
	return p ? p : failed(size && count > SIZE_MAX / size ? SIZE_MAX : count * size);
}

void *hloi_realloc(void *p, size_t n)
{
	void *q = should_fail() ? NULL : realloc(p, n ? n : 1);
	return q ? q : failed(n);
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
		return failed(n);
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
