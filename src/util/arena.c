/* Arena allocator: a list of zeroed blocks, from 16 KiB, each new one twice
 * the previous up to 4 MiB (large IRs make few allocations; a block of
 * fresh pages costs no memset). Blocks of 4 MiB are two whole transparent
 * huge pages (hloi_huge_alloc): a million-instruction IR is walked several
 * times, and with 4 KiB pages most of that time goes to page faults and
 * TLB misses. */
#include "util/arena.h"

#include <stdint.h>
#include <string.h>

#include "util/alloc.h"

enum { BLOCK_MIN = 16 * 1024, BLOCK_MAX = 4 * 1024 * 1024 };

struct arena_block {
	arena_block *next;
	size_t used, cap;
	int huge;               /* from hloi_huge_alloc, BLOCK_MAX bytes in all */
	_Alignas(16) unsigned char data[];
};

static void block_free(arena_block *b)
{
	if (b->huge)
		hloi_huge_free(b, BLOCK_MAX);
	else
		hloi_free(b);
}


void arena_init(arena *a)
{
	a->head = NULL;
}

void arena_release(arena *a)
{
	arena_block *b = a->head;
	while (b) {
		arena_block *next = b->next;
		block_free(b);
		b = next;
	}
	a->head = NULL;
}

void arena_reset(arena *a)
{
	arena_block *b = a->head;
	if (!b)
		return;
	arena_block *rest = b->next;
	while (rest) {
		arena_block *next = rest->next;
		block_free(rest);
		rest = next;
	}
	if (b->cap > BLOCK_MAX) {
		/* one large allocation's block (a constant's data) is not kept */
		block_free(b);
		a->head = NULL;
		return;
	}
	memset(b->data, 0, b->used);
	b->used = 0;
	b->next = NULL;
}

void *arena_alloc(arena *a, size_t n)
{
	if (n > SIZE_MAX / 2)
		return NULL;
	n = (n + 15) & ~(size_t)15;
	arena_block *b = a->head;
	if (!b || b->cap - b->used < n) {
		size_t cap = b ? (b->cap >= BLOCK_MAX / 2 ? BLOCK_MAX : 2 * b->cap) : BLOCK_MIN;
		int huge = cap == BLOCK_MAX && n <= BLOCK_MAX - sizeof *b;
		if (huge) {
			b = hloi_huge_alloc(BLOCK_MAX);
			cap = BLOCK_MAX - sizeof *b;
		} else {
			if (cap < n)
				cap = n;
			b = hloi_calloc(1, sizeof *b + cap);
		}
		if (!b)
			return NULL;
		b->huge = huge;
		b->used = 0;
		b->cap = cap;
		b->next = a->head;
		a->head = b;
	}
	void *p = b->data + b->used;
	b->used += n;
	return p;
}

void *arena_array(arena *a, size_t count, size_t size)
{
	if (size && count > SIZE_MAX / 2 / size)
		return NULL;
	return arena_alloc(a, count * size);
}

char *arena_strndup(arena *a, const char *s, size_t n)
{
	char *d = arena_alloc(a, n + 1);
	if (!d)
		return NULL;
	memcpy(d, s, n);
	d[n] = '\0';
	return d;
}

char *arena_strdup(arena *a, const char *s)
{
	return arena_strndup(a, s, strlen(s));
}
