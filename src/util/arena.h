/* Arena allocator: the IR of a module lives in one arena and is freed at once. */
#ifndef HLOI_UTIL_ARENA_H
#define HLOI_UTIL_ARENA_H

#include <stddef.h>

typedef struct arena_block arena_block;
typedef struct arena {
	arena_block *head;
} arena;

void arena_init(arena *a);
void arena_release(arena *a);
/* Frees everything allocated but keeps the newest block for reuse (unless
 * it holds one allocation larger than the blocks grow to): a scratch arena
 * emptied once per item of a long loop. */
void arena_reset(arena *a);
/* Zeroed, 16-byte aligned; NULL when allocation fails. */
void *arena_alloc(arena *a, size_t n);
/* arena_alloc(count * size) with an overflow check. */
void *arena_array(arena *a, size_t count, size_t size);
char *arena_strndup(arena *a, const char *s, size_t n);
char *arena_strdup(arena *a, const char *s);

#endif
