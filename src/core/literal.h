/* Literals: typed buffers with a shape and layout, and their text form.
 *
 * The text front end parses literal text into a tree of lit_node (no types
 * yet); literal_from_tree then converts it for a given shape, with located
 * errors. Printing follows XLA's Literal::ToString exactly.
 */
#ifndef HLOI_CORE_LITERAL_H
#define HLOI_CORE_LITERAL_H

#include <stddef.h>
#include <stdint.h>

#include "core/shape.h"
#include "hloi.h"
#include "util/diag.h"
#include "util/strbuf.h"

/* --- literal text, untyped ------------------------------------------------- */

typedef enum lit_kind {
	LIT_LIST,    /* { a, b, ... } */
	LIT_TUPLE,   /* ( a, b, ... ) */
	LIT_NUMBER,  /* an integer or decimal token; text holds it with its sign */
	LIT_WORD,    /* true false inf -inf nan -nan nan(0x..) -nan(0x..) */
	LIT_ELIDED   /* {...} */
} lit_kind;

typedef struct lit_node {
	lit_kind kind;
	loc at;
	const char *text;            /* LIT_NUMBER and LIT_WORD */
	int n;                       /* LIT_LIST and LIT_TUPLE */
	struct lit_node **kids;
} lit_node;

/* --- typed literals -------------------------------------------------------- */

struct hloi_literal {
	shape shape;            /* shape.tuple points at `tuple_shapes` */
	void *data;             /* arrays: hloi_aligned_alloc'd buffer; NULL if empty or elided */
	size_t nbytes;          /* bytes of the buffer, padding included */
	size_t nelems;          /* tuples: element count */
	struct hloi_literal **elems; /* tuples: elements (owned) */
	shape *tuple_shapes;    /* tuples: a copy of the element shapes (owned) */
	int elided;             /* from `{...}`: the values are unknown (tuples:
				 * some element's, which has no buffer) */
	/* arrays with `<=N` dimensions: each such dimension's size at run time
	 * (set-dimension-size, dynamic-reshape); literal_create sets the bound.
	 * The buffer is the bound's; elements past a size are padding, never
	 * printed, saved or compared (XLA's Literal::GetDynamicSize). */
	int64_t dynamic_size[HLOI_MAX_RANK];
	/* a buffer the caller lent (hloi_literal_wrap): never written by a
	 * run, and given back through release (may be NULL) instead of freed */
	void (*release)(void *user, void *data);
	void *release_user;
	int borrowed;
};

/* The sizes a literal's elements span: the dynamic size of each `<=N`
 * dimension, the static size of the others. */
void literal_sizes(const hloi_literal *lit, int64_t *dims);
/* Whether an array literal has a `<=N` dimension. */
int literal_is_dynamic(const hloi_literal *lit);
/* Whether array literal `lit` may be the value of array shape `s` with
 * `<=N` dimensions (an input for such a parameter): the same type and rank,
 * each dimension's size (literal_sizes) at most the bound where `s` has
 * `<=N`, equal to the dimension where `s` is static. */
int literal_fits_bounds(const hloi_literal *lit, const shape *s);
/* Copies the elements of `src` within its sizes to the same indices of
 * `dst`, whose bounds hold them (literal_fits_bounds), and sets dst's sizes
 * to src's. dst's other elements are left as they are. */
void literal_copy_within_sizes(hloi_literal *dst, const hloi_literal *src);
/* A static copy of a dynamic array literal: its shape's dims are the
 * dynamic sizes and it holds the elements within them (the default layout).
 * HLOI_ENOMEM. */
hloi_status literal_compact(hloi_literal **out, const hloi_literal *lit);

/* Allocates a literal of shape `s` (arrays or tuples, recursively): data is
 * zero, padding holds the padding value. The shape (including tuple element
 * shapes, deeply) is copied. HLOI_ENOMEM / HLOI_EINVAL (size overflow). */
hloi_status literal_create(hloi_literal **out, const shape *s);
/* The same, but the logical elements are left unset (padding is filled):
 * for engines that write every element, so a result costs no extra pass. */
hloi_status literal_create_uninit(hloi_literal **out, const shape *s);
void literal_destroy(hloi_literal *lit);
/* An array literal of shape `s` over the caller's buffer `data` (exactly
 * the shape's byte size, `nbytes`): borrowed = 1; literal_destroy calls
 * release(user, data) when it is not NULL. HLOI_EINVAL for a tuple, a
 * size that differs or a layout literal_create refuses; HLOI_ENOMEM. */
hloi_status literal_wrap(hloi_literal **out, const shape *s, void *data, size_t nbytes,
			 void (*release)(void *user, void *data), void *user);
/* The bytes of a literal's buffers (tuples: their elements'); 0 for NULL. */
uint64_t literal_buffer_bytes(const hloi_literal *lit);
/* An elided array literal (`{...}`): elided = 1 and no buffer (data NULL,
 * nbytes 0), whatever the size of `s`. */
hloi_status literal_create_elided(hloi_literal **out, const shape *s);
/* Deep copy. */
hloi_status literal_clone(hloi_literal **out, const hloi_literal *lit);
/* A copy of an array literal with another layout (same dims and type). */
hloi_status literal_relayout(hloi_literal **out, const hloi_literal *lit, const shape *target);

/* Address of the element at multi-index idx (logical coordinates). */
void *literal_element(const hloi_literal *lit, const int64_t *idx);
/* Writes the padding value into every padding position of the buffer; for
 * a tiled layout into the whole buffer, elements included (it is called on
 * fresh buffers). */
void literal_fill_padding(hloi_literal *lit);
/* The padding value of the shape's type, stored into `out` (element width). */
void literal_padding_bits(const shape *s, void *out);

/* Converts a literal tree for shape `s`. Errors are reported in ctx at the
 * offending node (source `src`), e.g. "expects 3 elements on the minor-most
 * dimension, but sees 2", "value 300 is out of range for literal's primitive
 * type u8 namely [0, 255]". Returns HLOI_EPARSE on such errors. */
hloi_status literal_from_tree(hloi_literal **out, hloi_context *ctx, int src, const lit_node *tree,
			      const shape *s);

/* Appends the literal as XLA's Literal::ToString() prints it (shape prefix,
 * multi-line) — or, with oneline and no shape, the form HLO text uses inside
 * constant(...): `{ { 1, 2 }, { 3, 4 } }`, `{1, 2}`, `1`. */
void literal_print(strbuf *b, const hloi_literal *lit, int with_shape, int oneline);
/* How many sub-arrays (all empty) literal_print writes inside a
 * zero-element array: at each depth up to the first zero dimension, one per
 * index of the dimensions before it (f32[100000000,0] prints 100000000, as
 * XLA does; f32[2,3,0] 2 + 6; f32[0] none); tuples sum their elements; 0
 * for an array with elements. Saturates at UINT64_MAX. The public printers
 * refuse more than HLOI_PRINT_MAX_EMPTY_SUBARRAYS. */
uint64_t literal_print_empty_count(const hloi_literal *lit);
/* Appends one element (pred as true/false, floats shortest round trip as
 * XLA's RoundTripFpToString). */
void literal_print_element(strbuf *b, etype t, const void *p);

#endif
