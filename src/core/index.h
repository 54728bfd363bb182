/* Index conversion (XLA's IndexUtil and LayoutUtil::LinearIndex):
 * multi-index <-> position in the buffer, through minor_to_major over the
 * padded sizes, then through the layout's tiles (XLA's tiled layouts,
 * docs/tiled_layout.md).
 *
 * Tiling, as hloi implements it. The array's physical dimensions (most
 * major first, doc/sources.md B's padded sizes where the layout has pad(...))
 * are tiled by each tile in turn; tile T(t1..tk) covers the k most minor
 * dimensions of the current shape:
 *  - a tile longer than the shape sees it with leading dimensions of size 1
 *    (so s32[]{:T(128)} has a 128-element buffer, as ShapeUtil::ArraySize);
 *  - `*` in a tile combines that dimension into the next more minor one
 *    (bound d_i * d_{i+1}, index e_i * d_{i+1} + e_{i+1}) before tiling;
 *  - dimensions (d1..dk) with index (e1..ek) become tile indices
 *    (ceil(d/t)) and within-tile indices (t), in that order:
 *    (..., ceil(d1/t1), .., ceil(dk/tk), t1, .., tk) and
 *    (..., e1/t1, .., ek/tk, e1%t1, .., ek%tk).
 * The next tile applies to the result (T(8,128)(2,1): the 2x1 tiles lie
 * inside each 8x128 tile). The position is the row-major linear index in
 * the final shape; every position whose index falls outside the array is
 * padding, as are the positions L(n) adds at the end of the buffer.
 */
#ifndef HLOI_CORE_INDEX_H
#define HLOI_CORE_INDEX_H

#include <stdint.h>

#include "core/shape.h"

/* The most dimensions a tiled shape reaches: each tile adds at most
 * HLOI_MAX_RANK (a tile has at most that many entries). */
#define INDEX_MAX_TILED (HLOI_MAX_RANK * (HLOI_MAX_TILES + 1))
_Static_assert(INDEX_MAX_TILED == HLOI_MAX_TILED_RANK, "hloi.h's HLOI_MAX_TILED_RANK");

/* Whether positions are a dot product of the index with strides (no
 * tiles): index_strides applies. Tail padding L(n) does not change that. */
int index_is_strided(const shape *s);
/* strides[d] = elements between neighbours along logical dimension d: the
 * product of the padded sizes of the dimensions more minor than d.
 * Untiled layouts only (index_is_strided). */
void index_strides(const shape *s, int64_t *strides);
/* Buffer position of a multi-index (entries may reach into the padding). */
int64_t index_to_linear(const shape *s, const int64_t *idx);
/* Multi-index of a buffer position (0 <= linear < buffer elements): 0 for
 * an element; for padding, 1 when idx is the index the position would have
 * in an array as large as the padded extent (some idx[d] >= dims[d]:
 * doc/sources.md B's padding or a tile's), 2 for tail padding (L(n), beyond the
 * tiled shape; idx all zeros), 3 for padding of a tile longer than the
 * shape outside the shape's dimensions (s32[]{:T(128)} at 5; idx is not
 * meaningful). */
int index_from_linear(const shape *s, int64_t linear, int64_t *idx);
/* Advances idx in logical row-major order (last dimension fastest) within
 * dims; returns 0 after the last index (idx is then all zeros). */
int index_next(int rank, const int64_t *dims, int64_t *idx);
/* Advances idx in the layout's memory order of an untiled buffer (the most
 * minor dimension fastest); 0 after the last index. */
int index_next_minor_to_major(const shape *s, int64_t *idx);

/* --- tiled layouts, step by step ------------------------------------------ */

/* One tile applied (the shapes it maps between, for index_tiling_*). */
typedef struct index_level {
	int ext;      /* leading size-1 dimensions added (the tile is longer) */
	int n;        /* rank with them */
	int k;        /* tile entries, `*` included */
	int kc;       /* tile entries without `*` */
	int64_t d[INDEX_MAX_TILED];  /* dimensions with ext, before combining */
	int64_t t[HLOI_MAX_RANK];    /* the tile without `*` */
	unsigned char star[HLOI_MAX_RANK]; /* entry j of the tile is `*` */
	int out_rank;
	int64_t out[INDEX_MAX_TILED]; /* dimensions after this tile */
} index_level;

/* A shape's tiling, computed once for many conversions. */
typedef struct index_tiling {
	int nlevels;
	int rank0;                       /* physical rank */
	int64_t d0[HLOI_MAX_RANK];       /* physical (padded) dimensions, major first */
	index_level lv[HLOI_MAX_TILES];
	int64_t elements;                /* product of the final dimensions */
	int overflow;                    /* the product does not fit int64_t */
} index_tiling;

/* Computes s's tiling; nonzero when a size overflows, or a tile is invalid
 * (empty, a zero or negative size, `*` last). Untiled shapes have 0 levels. */
int index_tiling_init(index_tiling *t, const shape *s);
/* The dimensions after `level` tiles (0: the physical dimensions); returns
 * their count. */
int index_tiling_dims(const index_tiling *t, int level, const int64_t **dims);
/* The coordinates of buffer position `linear` (< t->elements) after `level`
 * tiles (0: physical coordinates, most major first); returns their count.
 * Coordinates may be beyond the bounds of that level (padding). */
int index_tiling_coords(const index_tiling *t, int64_t linear, int level, int64_t *coords);
/* index_from_linear with a precomputed tiling of s. */
int index_tiling_from_linear(const index_tiling *t, const shape *s, int64_t linear, int64_t *idx);

#endif
