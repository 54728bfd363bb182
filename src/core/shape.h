/* Shapes and layouts (XLA's Shape and Layout, with doc/sources.md B's padding).
 *
 * A layout with both doc/sources.md B's padding and XLA's tiles pads first and
 * tiles the padded array (core/index.h): pad(...) gives the physical bounds
 * the tiles cover.
 *
 * A shape is an array (element type + dimensions + layout) or a tuple of
 * shapes. Dimensions are numbered 0..rank-1 in logical order; the layout's
 * minor_to_major lists them from fastest varying in memory to slowest.
 * Shapes are plain values; a tuple's elements live wherever the owner put
 * them (the module arena, or a heap block owned by a literal).
 */
#ifndef HLOI_CORE_SHAPE_H
#define HLOI_CORE_SHAPE_H

#include <stddef.h>
#include <stdint.h>

#include "core/types.h"
#include "hloi.h"
#include "util/strbuf.h"

#define HLOI_MAX_TILES 4

typedef enum dim_kind {
	DIM_STATIC = 0,
	DIM_BOUNDED,   /* `<=N`: dynamic with upper bound N (stored in dims) */
	DIM_UNBOUNDED  /* `?` (dims holds -1) */
} dim_kind;

/* doc/sources.md B: PaddingValue, with the old proto's numbers. */
typedef enum pad_value {
	PAD_INVALID = 0,
	PAD_ZERO = 1,
	PAD_ONE = 2,
	PAD_LOWEST = 3,
	PAD_HIGHEST = 4,
	PAD_UNKNOWN = 5
} pad_value;

typedef struct tile {
	int n;
	int64_t dims[HLOI_MAX_RANK];  /* -1 for `*` (combine dimension) */
} tile;

typedef struct layout {
	int n_minor_to_major;
	int64_t minor_to_major[HLOI_MAX_RANK];
	int n_padded;                    /* 0: no padding */
	int64_t padded_dimensions[HLOI_MAX_RANK];
	pad_value padding_value;         /* PAD_ZERO unless padval(...) */
	/* XLA's layout suffix. Tiles and L(n) place elements (core/index.h);
	 * E(n) sizes them; S(n) and M(n) are kept to print them back. */
	int ntiles;
	tile tiles[HLOI_MAX_TILES];
	int64_t tail_padding_alignment;  /* L(n): buffer elements rounded up to a multiple; 0 = not given (1) */
	int64_t element_size_in_bits;    /* E(n); 0 = not given (the type's storage width) */
	int64_t memory_space;            /* S(n) */
	int64_t dynamic_shape_metadata_prefix_bytes; /* M(n) */
} layout;

typedef struct hloi_shape {
	etype type;                /* ET_TUPLE for tuples */
	int rank;                  /* arrays; 0 for scalars and tuples */
	int64_t dims[HLOI_MAX_RANK];
	uint8_t dim_kind[HLOI_MAX_RANK];
	int has_layout;            /* a layout was written or filled in */
	layout layout;
	int is_buffer;             /* XLA's buffer shape `b(s32[4])` of this array
				    * shape (proto: BUFFER around it); kept to print back */
	int ntuple;                /* tuples: element count */
	struct hloi_shape *tuple;       /* tuples: elements (not owned by the shape) */
} shape;

/* An array shape with the default (descending, row-major) layout. */
void shape_make_array(shape *s, etype t, int rank, const int64_t *dims);
/* Sets the default layout {rank-1, ..., 0}, no padding. */
void layout_set_default(shape *s);
/* Whether the layout is {rank-1,...,0} with no padding and no extras. */
int layout_is_default(const shape *s);

int shape_is_tuple(const shape *s);
int shape_is_array(const shape *s);   /* not tuple, token or opaque */
int shape_is_scalar(const shape *s);  /* rank-0 array */
int shape_is_static(const shape *s);  /* no dynamic dimension anywhere */

/* Validates dims and layout. On failure writes XLA's message to msg (e.g.
 * "layout minor_to_major field has duplicate values: {0,0}; shape: f32[2,2]")
 * and returns nonzero. */
int shape_validate(const shape *s, char *msg, size_t msgsize);

/* Product of the logical dimensions; nonzero on overflow. */
int shape_element_count(const shape *s, int64_t *out);
/* Elements (positions) of the buffer: the product of the padded dimensions,
 * or of the tiled shape's, rounded up to L(n); nonzero on overflow or an
 * invalid tile. */
int shape_buffer_elements(const shape *s, int64_t *out);
/* Bits per element in the buffer: E(n) when given, else the type's storage
 * width (8 * etype_byte_width). */
int64_t shape_element_bits(const shape *s);
/* Bytes of the buffer: buffer elements times the element bits, rounded up
 * to whole bytes (as ShapeUtil::ArraySize); nonzero on overflow. */
int shape_byte_size(const shape *s, int64_t *out);
/* Buffer size of dimension d: padded size if padded, else dims[d]. */
int64_t shape_padded_dim(const shape *s, int d);

/* A zeroed shape (ET_INVALID): an instruction's shape before one is
 * written or inferred. */
extern const shape shape_none;
/* Every field that prints or places an element is equal (type, dims and
 * their kinds, the whole layout, the buffer mark, tuple elements): the test
 * behind interning (module_intern_shape). */
int shape_identical(const shape *a, const shape *b);
/* A hash consistent with shape_identical. */
uint64_t shape_hash(const shape *s);

/* Equal element type, dimensions and buffer mark (layouts ignored);
 * recurses into tuples. */
int shape_compatible(const shape *a, const shape *b);
/* Whether s is a buffer shape b(...) or a tuple holding one. */
int shape_has_buffer(const shape *s);
/* As shape_compatible, whichever dimensions are `<=N` (XLA's
 * ShapeUtil::Compatible, which ignores dynamic dimensions). */
int shape_compatible_bounds(const shape *a, const shape *b);
/* Equal dimensions only. */
int shape_same_dims(const shape *a, const shape *b);
/* The same rank and dims, whichever are `<=N`, a `?` matching any size
 * (XLA's ShapeUtil::Compatible ignores dynamic dimensions; its
 * SameDimensions lets an unbounded one match anything). */
int shape_same_bounds(const shape *a, const shape *b);
/* Dimension i of a and j of b: equal sizes or bounds, or either `?`. */
int shape_dim_compatible(const shape *a, int i, const shape *b, int j);
/* Whether an array (or a tuple element) has a dimension of that kind. */
int shape_has_dim_kind(const shape *s, dim_kind kind);
/* Whether an array (or a tuple element) has a `?` dimension. */
int shape_has_unbounded(const shape *s);
/* Equal layouts (minor_to_major, padding, extras). */
int layout_equal(const layout *a, const layout *b);

/* Maps a dimension number that may be negative (-1 = last) to 0..rank-1;
 * returns -1 when out of range (doc/sources.md B). */
int shape_dim_index(const shape *s, int64_t d);

/* Appends the shape's text: `f32[2,3]` or, with layout, `f32[2,3]{0,1:pad(3,5)}`.
 * Scalars never print `{}`, but do print a layout with more (`s32[]{:T(128)S(2)}`). Tuples print `(a, b)` with an `index=N` comment before
 * every fifth element as XLA does. */
void shape_print(strbuf *b, const shape *s, int with_layout);
/* Whether the layout has more than minor_to_major (padding, tiles, L, E, S, M). */
int layout_has_extras(const layout *l);
/* Appends just the layout `{1,0}` / `{0,1:pad(3,5)padval(one)T(8,128)}`. */
void layout_print(strbuf *b, const shape *s);

#endif
