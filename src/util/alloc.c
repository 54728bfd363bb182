/* Allocation hook: plain malloc with a fail-after-N switch for tests. */
#define _DEFAULT_SOURCE /* MADV_HUGEPAGE */
#include "util/alloc.h"

#include <malloc.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

/* Atomic: the fast engine's worker threads allocate (their tiles) while
 * the thread that started them may too. Relaxed ordering is enough, as the
 * counters order nothing else. */
static atomic_long fail_after = -1;
static atomic_long attempts;
static atomic_size_t last_failure;  /* bytes of the last refused request */
/* The memory ceiling: bytes held through these hooks (as malloc counts
 * them, malloc_usable_size), and the most they may reach (0: no ceiling).
 * Signed: a block malloc'd elsewhere and given to hloi_free takes the count
 * below what is held, never under zero. */
static atomic_llong live;
static atomic_llong peak;
static atomic_size_t ceiling;
static atomic_int ceiling_hit;      /* the last failure was the ceiling's */
static atomic_size_t held_at_failure; /* what was held then */

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

static void *failed_by(size_t n, int by_ceiling)
{
	atomic_store_explicit(&last_failure, n ? n : 1, memory_order_relaxed);
	atomic_store_explicit(&ceiling_hit, by_ceiling, memory_order_relaxed);
	atomic_store_explicit(&held_at_failure, alloc_live(), memory_order_relaxed);
	return NULL;
}

static void *failed(size_t n)
{
	return failed_by(n, 0);
}

void alloc_set_ceiling(size_t bytes)
{
	atomic_store_explicit(&ceiling, bytes, memory_order_relaxed);
}

size_t alloc_ceiling(void)
{
	return atomic_load_explicit(&ceiling, memory_order_relaxed);
}

size_t alloc_live(void)
{
	long long n = atomic_load_explicit(&live, memory_order_relaxed);
	return n > 0 ? (size_t)n : 0;
}

int alloc_ceiling_hit(void)
{
	return atomic_load_explicit(&ceiling_hit, memory_order_relaxed);
}

size_t alloc_held_at_failure(void)
{
	return atomic_load_explicit(&held_at_failure, memory_order_relaxed);
}

void alloc_failure_text(char *buf, size_t n)
{
	size_t bytes = alloc_last_failure();
	if (!n)
		return;
	buf[0] = '\0';
	if (!bytes)
		return;
	if (alloc_ceiling_hit())
		snprintf(buf, n, "an allocation of %zu bytes would pass the memory ceiling of %zu bytes (%zu held)",
			 bytes, alloc_ceiling(), alloc_held_at_failure());
	else
		snprintf(buf, n, "an allocation of %zu bytes failed", bytes);
}

/* Whether growing a block of `old` bytes to `n` would pass the ceiling. */
static int over_ceiling(size_t n, size_t old)
{
	size_t cap = atomic_load_explicit(&ceiling, memory_order_relaxed);
	if (!cap || n <= old)
		return 0;
	size_t more = n - old;
	return more > cap || alloc_live() > cap - more;
}

/* Adds `delta` to the bytes held and raises the peak to the new total. */
static void add_live(long long delta)
{
	long long now = atomic_fetch_add_explicit(&live, delta, memory_order_relaxed) + delta;
	long long top = atomic_load_explicit(&peak, memory_order_relaxed);
	while (now > top &&
	       !atomic_compare_exchange_weak_explicit(&peak, &top, now, memory_order_relaxed, memory_order_relaxed))
		;
}

static void count(void *p, size_t old)
{
	add_live((long long)malloc_usable_size(p) - (long long)old);
}

size_t alloc_peak(void)
{
	long long n = atomic_load_explicit(&peak, memory_order_relaxed);
	return n > 0 ? (size_t)n : 0;
}

void alloc_reset_peak(void)
{
	atomic_store_explicit(&peak, atomic_load_explicit(&live, memory_order_relaxed), memory_order_relaxed);
}

void alloc_advise_huge(void *p, size_t n)
{
	if (n < ALLOC_HUGE_MIN)
		return;
#ifdef MADV_HUGEPAGE
	const uintptr_t huge = (uintptr_t)2 << 20;
	uintptr_t lo = ((uintptr_t)p + huge - 1) & ~(huge - 1);
	uintptr_t hi = ((uintptr_t)p + n) & ~(huge - 1);
	if (hi > lo)
		(void)madvise((void *)lo, (size_t)(hi - lo), MADV_HUGEPAGE);
#else
	(void)p;
	(void)n;
#endif
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

void *hloi_huge_alloc(size_t n)
{
	if (should_fail())
		return failed(n);
	if (n == 0 || n % ALLOC_HUGE_PAGE || n > SIZE_MAX - ALLOC_HUGE_PAGE)
		return failed(n);
	if (over_ceiling(n, 0))
		return failed_by(n, 1);
	/* map a page more than asked and give back what lies outside the
	 * aligned n bytes */
	size_t span = n + ALLOC_HUGE_PAGE;
	unsigned char *raw = mmap(NULL, span, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (raw == MAP_FAILED)
		return failed(n);
	uintptr_t a = ((uintptr_t)raw + ALLOC_HUGE_PAGE - 1) & ~(uintptr_t)(ALLOC_HUGE_PAGE - 1);
	unsigned char *p = (unsigned char *)a;
	size_t head = (size_t)(p - raw), tail = span - head - n;
	if (head)
		(void)munmap(raw, head);
	if (tail)
		(void)munmap(p + n, tail);
#ifdef MADV_HUGEPAGE
	(void)madvise(p, n, MADV_HUGEPAGE);
#endif
	add_live((long long)n);
	return p;
}

void hloi_huge_free(void *p, size_t n)
{
	if (!p)
		return;
	atomic_fetch_sub_explicit(&live, (long long)n, memory_order_relaxed);
	(void)munmap(p, n);
}

void *hloi_malloc(size_t n)
{
	if (should_fail())
		return failed(n);
	if (over_ceiling(n, 0))
		return failed_by(n, 1);
	void *p = malloc(n ? n : 1);
	if (!p)
		return failed(n);
	count(p, 0);
	return p;
}

void *hloi_calloc(size_t n, size_t size)
{
	size_t bytes = size && n > SIZE_MAX / size ? SIZE_MAX : n * size;
	if (should_fail())
		return failed(bytes);
	if (over_ceiling(bytes, 0))
		return failed_by(bytes, 1);
	void *p = n == 0 || size == 0 ? calloc(1, 1) : calloc(n, size);
	if (!p)
		return failed(bytes);
	count(p, 0);
	return p;
}

void *hloi_realloc(void *p, size_t n)
{
	size_t old = p ? malloc_usable_size(p) : 0;
	if (should_fail())
		return failed(n);
	if (over_ceiling(n, old))
		return failed_by(n, 1);
	void *q = realloc(p, n ? n : 1);
	if (!q)
		return failed(n);
	count(q, old);
	return q;
}

void hloi_free(void *p)
{
	if (!p)
		return;
	atomic_fetch_sub_explicit(&live, (long long)malloc_usable_size(p), memory_order_relaxed);
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
	/* Large buffers (array values): ask for transparent huge pages, as
	 * NumPy does; page faults otherwise cost more than the elementwise
	 * work. */
	alloc_advise_huge(p, n);
	return p;
}

void *hloi_aligned_resize(void *p, size_t n)
{
	if (!p)
		return hloi_aligned_alloc(n);
	if (n > SIZE_MAX - 64)
		return failed(n);
	unsigned char *q = p;
	unsigned char *raw = hloi_realloc(q - q[-1], n + 64);
	if (!raw)
		return NULL;
	size_t off = 64 - (size_t)((uintptr_t)raw % 64);
	q = raw + off;
	q[-1] = (unsigned char)off;
	alloc_advise_huge(q, n);
	return q;
}

void hloi_aligned_free(void *p)
{
	if (!p)
		return;
	unsigned char *q = p;
	hloi_free(q - q[-1]);
}
