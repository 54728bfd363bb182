/* The one allocation hook every part of hloi goes through, so that a test can
 * make the Nth allocation fail and check that nothing leaks (Lua's lua_Alloc,
 * SQLite's OOM loops). */
#ifndef HLOI_UTIL_ALLOC_H
#define HLOI_UTIL_ALLOC_H

#include <stddef.h>

void *hloi_malloc(size_t n);
void *hloi_calloc(size_t count, size_t size);
void *hloi_realloc(void *p, size_t n);
void hloi_free(void *p);
char *hloi_strdup(const char *s);
char *hloi_strndup(const char *s, size_t n);

/* 64-byte aligned buffers for array data; free with hloi_aligned_free. */
void *hloi_aligned_alloc(size_t n);
void hloi_aligned_free(void *p);
/* Block p (from hloi_aligned_alloc) made n bytes long, its contents lost;
 * NULL when that fails (p is then still held). A large block keeps its
 * pages (the C library remaps them), so a value that takes a spare array
 * of another size faults in only what it adds. */
void *hloi_aligned_resize(void *p, size_t n);

/* Test hook: after `n` more successful allocations, every allocation fails
 * (n < 0 disables). alloc_count() is the number of allocations attempted since
 * the process started or since the last alloc_fail_after call. */
void alloc_fail_after(long n);
long alloc_count(void);

/* The size of the last allocation that failed (forced or not), 0 if none:
 * for a message when a failure reached the top without one. */
size_t alloc_last_failure(void);
/* The memory ceiling (--max-memory): every allocation that would take the
 * bytes held through these hooks over `bytes` fails (0: none). alloc_live
 * is what is held now; alloc_ceiling_hit says whether the last failure was
 * the ceiling's. */
void alloc_set_ceiling(size_t bytes);
size_t alloc_ceiling(void);
size_t alloc_live(void);
int alloc_ceiling_hit(void);
/* The most bytes held at once since the last alloc_reset_peak (which
 * starts it at what is held now): the fuzz replays' memory limit. */
size_t alloc_peak(void);
void alloc_reset_peak(void);
/* The bytes held when the last allocation failed. */
size_t alloc_held_at_failure(void);
/* The last failure in words for a message, e.g. "an allocation of 4194304
 * bytes would pass the memory ceiling of 381681664 bytes (380164112 held)"
 * or "an allocation of 736 bytes failed"; "" when none was recorded. */
void alloc_failure_text(char *buf, size_t n);
/* Asks for transparent huge pages on the 2 MiB-aligned interior of
 * [p, p + n) when n is at least ALLOC_HUGE_MIN (smaller buffers: nothing):
 * only advice, failure is harmless. */
#define ALLOC_HUGE_MIN ((size_t)4 << 20)
void alloc_advise_huge(void *p, size_t n);
/* Zeroed memory of n bytes (a multiple of ALLOC_HUGE_PAGE) starting at a
 * huge-page boundary and advised huge, so that all of it can be huge pages
 * (a malloc'd block of the same size starts anywhere, and only its aligned
 * interior can); counted, capped and failed as the others. For the
 * arena's big blocks. Free with hloi_huge_free(p, n). */
#define ALLOC_HUGE_PAGE ((size_t)2 << 20)
void *hloi_huge_alloc(size_t n);
void hloi_huge_free(void *p, size_t n);

#endif
