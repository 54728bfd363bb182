/* Overflow-checked size arithmetic: each returns nonzero on overflow.
 * (checked_: the checker owns ck_.) */
#ifndef HLOI_UTIL_CHECKED_H
#define HLOI_UTIL_CHECKED_H

#include <stdint.h>

static inline int checked_mul_i64(int64_t a, int64_t b, int64_t *out)
{
	return __builtin_mul_overflow(a, b, out);
}

static inline int checked_add_i64(int64_t a, int64_t b, int64_t *out)
{
	return __builtin_add_overflow(a, b, out);
}

#endif
