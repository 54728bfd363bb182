/* Literals: creation (arrays and tuples, with padding filled), copies and
 * relayout, conversion from the untyped text tree with located errors, and
 * printing exactly as XLA's Literal::ToString(). */
#include "core/literal.h"

#include <errno.h>
#include <float.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/float8.h"
#include "core/half.h"
#include "core/index.h"
#include "util/alloc.h"
#include "util/checked.h"

#define LIT_MAX_DEPTH 1000

/* --- creation and destruction ---------------------------------------------- */

/* What create_rec puts in an array's buffer. */
enum { FILL_NONE, FILL_ZERO, NO_BUFFER };

static hloi_status create_rec(hloi_literal **out, const shape *s, int depth, int zero);

/* Zeroes the logical elements (a tiled buffer after literal_fill_padding,
 * which fills it all with the padding value). */
static void zero_elements(hloi_literal *lit)
{
	const shape *s = &lit->shape;
	int64_t n, idx[HLOI_MAX_RANK] = { 0 };
	size_t w = (size_t)etype_byte_width(s->type);
	if (shape_element_count(s, &n) || n == 0 || !w)
		return;
	unsigned char zero[16] = { 0 };
	literal_padding_bits(s, zero);
	int all_zero = 1;
	for (size_t i = 0; i < w; i++)
		all_zero &= zero[i] == 0;
	if (all_zero)
		return; /* the fill was a memset */
	do
		memset(literal_element(lit, idx), 0, w);
	while (index_next(s->rank, s->dims, idx));
}

uint64_t literal_buffer_bytes(const hloi_literal *lit)
{
	if (!lit)
		return 0;
	uint64_t n = lit->nbytes;
	for (size_t i = 0; i < lit->nelems && lit->elems; i++)
		n += literal_buffer_bytes(lit->elems[i]);
	return n;
}

void literal_destroy(hloi_literal *lit)
{
	if (!lit)
		return;
	if (lit->elems) {
		for (size_t i = 0; i < lit->nelems; i++)
			literal_destroy(lit->elems[i]);
		hloi_free(lit->elems);
	}
	hloi_free(lit->tuple_shapes);
	if (!lit->borrowed)
		hloi_aligned_free(lit->data);
	else if (lit->release)
		lit->release(lit->release_user, lit->data);
	hloi_free(lit);
}

static hloi_status create_tuple(hloi_literal *lit, const shape *s, int depth, int zero)
{
	size_t n = s->ntuple > 0 ? (size_t)s->ntuple : 0;
	lit->shape.ntuple = (int)n;
	lit->shape.tuple = NULL;
	lit->nelems = n;
	if (n == 0)
		return HLOI_OK;
	lit->elems = hloi_calloc(n, sizeof *lit->elems);
	lit->tuple_shapes = hloi_calloc(n, sizeof *lit->tuple_shapes);
	if (!lit->elems || !lit->tuple_shapes)
		return HLOI_ENOMEM;
	for (size_t i = 0; i < n; i++) {
		hloi_status st = create_rec(&lit->elems[i], &s->tuple[i], depth + 1, zero);
		if (st != HLOI_OK)
			return st;
		/* the element's own shape copy points at the element's storage */
		lit->tuple_shapes[i] = lit->elems[i]->shape;
	}
	lit->shape.tuple = lit->tuple_shapes;
	return HLOI_OK;
}

static hloi_status create_rec(hloi_literal **out, const shape *s, int depth, int zero)
{
	*out = NULL;
	if (depth > LIT_MAX_DEPTH)
		return HLOI_EINVAL;
	hloi_literal *lit = hloi_calloc(1, sizeof *lit);
	if (!lit)
		return HLOI_ENOMEM;
	lit->shape = *s;
	hloi_status st = HLOI_OK;
	if (shape_is_tuple(s)) {
		st = create_tuple(lit, s, depth, zero);
		goto cleanup;
	}
	lit->shape.ntuple = 0;
	lit->shape.tuple = NULL;
	for (int i = 0; i < s->rank && i < HLOI_MAX_RANK; i++)
		lit->dynamic_size[i] = s->dims[i];
	if (!lit->shape.has_layout)
		layout_set_default(&lit->shape);
	int64_t bytes;
	if (lit->shape.rank < 0 || lit->shape.rank > HLOI_MAX_RANK) {
		st = HLOI_EINVAL;
		goto cleanup;
	}
	if (lit->shape.layout.n_minor_to_major != lit->shape.rank) {
		st = HLOI_EINVAL;
		goto cleanup;
	}
	unsigned seen = 0; /* minor_to_major must be a permutation */
	for (int i = 0; i < lit->shape.rank; i++) {
		int64_t m = lit->shape.layout.minor_to_major[i];
		if (m < 0 || m >= lit->shape.rank || (seen & (1u << m)) || lit->shape.dims[i] < 0 ||
		    shape_padded_dim(&lit->shape, i) < lit->shape.dims[i]) {
			st = HLOI_EINVAL;
			goto cleanup;
		}
		seen |= 1u << m;
	}
	/* elements are addressed in whole bytes: E(n) must be the storage width */
	if (shape_element_bits(&lit->shape) != 8 * (int64_t)etype_byte_width(lit->shape.type) ||
	    shape_byte_size(&lit->shape, &bytes) || (uint64_t)bytes > (uint64_t)(SIZE_MAX / 2)) {
		st = HLOI_EINVAL;
		goto cleanup;
	}
	lit->nbytes = (size_t)bytes;
	if (bytes > 0 && zero != NO_BUFFER) {
		lit->data = hloi_aligned_alloc(lit->nbytes);
		if (!lit->data) {
			st = HLOI_ENOMEM;
			goto cleanup;
		}
		if (zero == FILL_ZERO)
			memset(lit->data, 0, lit->nbytes);
		literal_fill_padding(lit);
		if (zero == FILL_ZERO && !index_is_strided(&lit->shape))
			zero_elements(lit);
	}
cleanup:
	if (st != HLOI_OK) {
		literal_destroy(lit);
		return st;
	}
	*out = lit;
	return HLOI_OK;
}

hloi_status literal_create(hloi_literal **out, const shape *s)
{
	return create_rec(out, s, 0, FILL_ZERO);
}

hloi_status literal_create_uninit(hloi_literal **out, const shape *s)
{
	return create_rec(out, s, 0, FILL_NONE);
}

hloi_status literal_wrap(hloi_literal **out, const shape *s, void *data, size_t nbytes,
			 void (*release)(void *user, void *data), void *user)
{
	*out = NULL;
	if (!shape_is_array(s))
		return HLOI_EINVAL;
	hloi_literal *lit;
	hloi_status st = create_rec(&lit, s, 0, NO_BUFFER);
	if (st != HLOI_OK)
		return st;
	if (lit->nbytes != nbytes || (nbytes && !data)) {
		literal_destroy(lit);
		return HLOI_EINVAL;
	}
	lit->data = nbytes ? data : NULL;
	lit->borrowed = 1;
	lit->release = release;
	lit->release_user = user;
	*out = lit;
	return HLOI_OK;
}

/* An elided array literal (`{...}`): its values are unknown, so it has no
 * buffer at all, whatever its shape's size. */
hloi_status literal_create_elided(hloi_literal **out, const shape *s)
{
	hloi_literal *lit = hloi_calloc(1, sizeof *lit);
	*out = lit;
	if (!lit)
		return HLOI_ENOMEM;
	lit->shape = *s;
	lit->elided = 1;
	return HLOI_OK;
}

/* A tuple literal of shape `s` whose elements are still NULL (the caller
 * fills elems[i] and tuple_shapes[i]); on failure *out is NULL. */
static hloi_status tuple_shell(hloi_literal **out, const shape *s)
{
	*out = NULL;
	size_t n = s->ntuple > 0 ? (size_t)s->ntuple : 0;
	hloi_literal *lit = hloi_calloc(1, sizeof *lit);
	if (!lit)
		return HLOI_ENOMEM;
	lit->shape = *s;
	lit->shape.ntuple = (int)n;
	lit->shape.tuple = NULL;
	lit->nelems = n;
	if (n) {
		lit->elems = hloi_calloc(n, sizeof *lit->elems);
		lit->tuple_shapes = hloi_calloc(n, sizeof *lit->tuple_shapes);
		if (!lit->elems || !lit->tuple_shapes) {
			literal_destroy(lit);
			return HLOI_ENOMEM;
		}
		lit->shape.tuple = lit->tuple_shapes;
	}
	*out = lit;
	return HLOI_OK;
}

static hloi_status clone_rec(hloi_literal **out, const hloi_literal *lit)
{
	*out = NULL;
	if (lit->elided && !shape_is_tuple(&lit->shape))
		return literal_create_elided(out, &lit->shape);
	hloi_literal *c = NULL;
	hloi_status st;
	if (shape_is_tuple(&lit->shape)) {
		/* elements are cloned one by one, never created first */
		st = tuple_shell(&c, &lit->shape);
		for (size_t i = 0; i < lit->nelems && st == HLOI_OK; i++) {
			st = clone_rec(&c->elems[i], lit->elems[i]);
			if (st == HLOI_OK)
				c->tuple_shapes[i] = c->elems[i]->shape;
		}
		if (st != HLOI_OK) {
			literal_destroy(c);
			return st;
		}
		c->elided = lit->elided;
		*out = c;
		return HLOI_OK;
	}
	/* an array's bytes are all copied below: no need to zero them first */
	int copied = lit->nbytes && lit->data;
	st = create_rec(&c, &lit->shape, 0, !copied);
	if (st != HLOI_OK)
		return st;
	c->elided = lit->elided;
	memcpy(c->dynamic_size, lit->dynamic_size, sizeof c->dynamic_size);
	if (copied && c->data) {
		if (c->nbytes == lit->nbytes)
			memcpy(c->data, lit->data, lit->nbytes);
		else
			memset(c->data, 0, c->nbytes); /* not reached: same shape */
	}
	*out = c;
	return HLOI_OK;
}

hloi_status literal_clone(hloi_literal **out, const hloi_literal *lit)
{
	return clone_rec(out, lit);
}

void literal_sizes(const hloi_literal *lit, int64_t *dims)
{
	const shape *s = &lit->shape;
	for (int d = 0; d < s->rank; d++)
		dims[d] = s->dim_kind[d] == DIM_BOUNDED ? lit->dynamic_size[d] : s->dims[d];
}

int literal_is_dynamic(const hloi_literal *lit)
{
	return shape_is_array(&lit->shape) && !shape_is_static(&lit->shape);
}

hloi_status literal_compact(hloi_literal **out, const hloi_literal *lit)
{
	int64_t dims[HLOI_MAX_RANK], n;
	literal_sizes(lit, dims);
	shape s;
	shape_make_array(&s, lit->shape.type, lit->shape.rank, dims);
	hloi_status st = literal_create_uninit(out, &s);
	if (st != HLOI_OK || shape_element_count(&s, &n) || n == 0 || !lit->data)
		return st;
	size_t w = (size_t)etype_byte_width(s.type);
	int64_t idx[HLOI_MAX_RANK] = { 0 };
	do
		memcpy(literal_element(*out, idx), literal_element(lit, idx), w);
	while (index_next(s.rank, s.dims, idx));
	return HLOI_OK;
}

int literal_fits_bounds(const hloi_literal *lit, const shape *s)
{
	if (!shape_is_array(&lit->shape) || !shape_is_array(s) || lit->shape.type != s->type ||
	    lit->shape.rank != s->rank)
		return 0;
	int64_t sizes[HLOI_MAX_RANK];
	literal_sizes(lit, sizes);
	for (int d = 0; d < s->rank; d++) {
		if (s->dim_kind[d] == DIM_UNBOUNDED)
			continue;  /* `?`: any size (a run is sized from its inputs) */
		if (s->dim_kind[d] == DIM_BOUNDED ? sizes[d] > s->dims[d] : sizes[d] != s->dims[d])
			return 0;
	}
	return 1;
}

void literal_copy_within_sizes(hloi_literal *dst, const hloi_literal *src)
{
	int64_t sizes[HLOI_MAX_RANK], n = 1;
	literal_sizes(src, sizes);
	const shape *s = &dst->shape;
	for (int d = 0; d < s->rank; d++) {
		n *= sizes[d];
		dst->dynamic_size[d] = s->dim_kind[d] == DIM_BOUNDED ? sizes[d] : s->dims[d];
	}
	if (n == 0 || !dst->data || !src->data)
		return;
	size_t w = (size_t)etype_byte_width(s->type);
	int64_t idx[HLOI_MAX_RANK] = { 0 };
	do
		memcpy(literal_element(dst, idx), literal_element(src, idx), w);
	while (index_next(s->rank, sizes, idx));
}

void *literal_element(const hloi_literal *lit, const int64_t *idx)
{
	int64_t lin = index_to_linear(&lit->shape, idx);
	return (char *)lit->data + lin * etype_byte_width(lit->shape.type);
}

/* --- padding -------------------------------------------------------------- */

static void put_float_bits(etype t, double v, void *out)
{
	switch (t) {
	case ET_F16: {
		uint16_t h = f64_to_f16(v);
		memcpy(out, &h, 2);
		break;
	}
	case ET_BF16: {
		uint16_t h = f64_to_bf16(v);
		memcpy(out, &h, 2);
		break;
	}
	case ET_F32: {
		float f = (float)v;
		memcpy(out, &f, 4);
		break;
	}
	case ET_F64:
		memcpy(out, &v, 8);
		break;
	case ET_C64: {
		float f[2] = { (float)v, 0.0f };
		memcpy(out, f, 8);
		break;
	}
	case ET_C128: {
		double d[2] = { v, 0.0 };
		memcpy(out, d, 16);
		break;
	}
	default: {
		const f8_format *f = f8_format_of(t);
		if (f)
			*(uint8_t *)out = f8_from_f64(f, v);
		break;
	}
	}
}

static void put_int_bits(etype t, int64_t v, uint64_t uv, void *out)
{
	int w = etype_byte_width(t);
	if (etype_get_kind(t) == KIND_UINT || etype_get_kind(t) == KIND_PRED)
		v = (int64_t)uv;
	switch (w) {
	case 1: {
		uint8_t x = (uint8_t)v;
		memcpy(out, &x, 1);
		break;
	}
	case 2: {
		uint16_t x = (uint16_t)v;
		memcpy(out, &x, 2);
		break;
	}
	case 4: {
		uint32_t x = (uint32_t)v;
		memcpy(out, &x, 4);
		break;
	}
	case 8:
		memcpy(out, &v, 8);
		break;
	default:
		break;
	}
}

void literal_padding_bits(const shape *s, void *out)
{
	etype t = s->type;
	int w = etype_byte_width(t);
	if (w <= 0)
		return;
	memset(out, 0, (size_t)w);
	pad_value pv = s->layout.padding_value;
	if (pv != PAD_ONE && pv != PAD_LOWEST && pv != PAD_HIGHEST)
		return;
	etype_kind k = etype_get_kind(t);
	int bits = etype_bit_width(t);
	if (k == KIND_PRED) {
		put_int_bits(t, 0, pv == PAD_LOWEST ? 0 : 1, out);
	} else if (k == KIND_SINT) {
		int64_t max = bits >= 64 ? INT64_MAX : (int64_t)((UINT64_C(1) << (bits - 1)) - 1);
		int64_t v = pv == PAD_ONE ? 1 : pv == PAD_LOWEST ? -max - 1 : max;
		put_int_bits(t, v, 0, out);
	} else if (k == KIND_UINT) {
		uint64_t max = bits >= 64 ? UINT64_MAX : (UINT64_C(1) << bits) - 1;
		uint64_t v = pv == PAD_ONE ? 1 : pv == PAD_LOWEST ? 0 : max;
		put_int_bits(t, 0, v, out);
	} else if (k == KIND_FLOAT || k == KIND_COMPLEX) {
		const f8_format *f = f8_format_of(t);
		if (f && !f->has_inf && pv != PAD_ONE) {
			/* no infinity: the lowest / highest finite value */
			uint8_t lo = f->is_signed ? f8_negate(f, f->max) : 0;
			*(uint8_t *)out = pv == PAD_LOWEST ? lo : f->max;
			return;
		}
		double v = pv == PAD_ONE ? 1.0 : pv == PAD_LOWEST ? -INFINITY : INFINITY;
		put_float_bits(t, v, out);
	}
}

/* Tiled layouts: the whole buffer, elements included (finding every
 * padding position of a tiled buffer costs an index conversion each, and
 * a tile longer than the shape can make nearly all of it padding). */
static void fill_tiled(hloi_literal *lit, const unsigned char *pad, int w, int64_t nbuf)
{
	int zero = 1;
	for (int i = 0; i < w; i++)
		zero &= pad[i] == 0;
	unsigned char *p = lit->data;
	if (zero) {
		memset(p, 0, (size_t)nbuf * (size_t)w);
		return;
	}
	for (int64_t k = 0; k < nbuf; k++)
		memcpy(p + k * w, pad, (size_t)w);
}

void literal_fill_padding(hloi_literal *lit)
{
	const shape *s = &lit->shape;
	if (!lit->data || shape_is_tuple(s))
		return;
	int w = etype_byte_width(s->type);
	int64_t nbuf;
	if (w <= 0 || shape_buffer_elements(s, &nbuf) || nbuf == 0 ||
	    (int64_t)lit->nbytes < nbuf * w)
		return;
	unsigned char pad[16];
	literal_padding_bits(s, pad);
	if (s->layout.ntiles) {
		fill_tiled(lit, pad, w, nbuf);
		return;
	}
	/* the positions L(n) adds after the padded shape */
	int64_t body = 1;
	for (int i = 0; i < s->rank; i++)
		body *= shape_padded_dim(s, i);
	for (int64_t k = body; k < nbuf; k++)
		memcpy((unsigned char *)lit->data + k * w, pad, (size_t)w);
	if (s->rank == 0 || s->layout.n_padded != s->rank || body == 0)
		return;
	/* Walk the buffer a physical row (the most minor dimension) at a time
	 * with a counter per outer minor_to_major position: a row whose outer
	 * coordinates reach into the padding is all padding, any other row
	 * has padding after its logical elements. Logical elements are not
	 * touched. */
	int64_t ctr[HLOI_MAX_RANK] = { 0 };
	int64_t psize[HLOI_MAX_RANK], lsize[HLOI_MAX_RANK];
	int outside = 0; /* outer coordinates currently in the padding */
	for (int i = 0; i < s->rank; i++) {
		int d = (int)s->layout.minor_to_major[i];
		psize[i] = shape_padded_dim(s, d);
		lsize[i] = s->dims[d];
		if (i > 0 && lsize[i] == 0)
			outside++;
	}
	int64_t rowlen = psize[0], rows = body / rowlen;
	unsigned char *p = lit->data;
	for (int64_t r = 0; r < rows; r++) {
		int64_t from = outside ? 0 : lsize[0];
		unsigned char *row = p + r * rowlen * w;
		for (int64_t k = from; k < rowlen; k++)
			memcpy(row + k * w, pad, (size_t)w);
		for (int i = 1; i < s->rank; i++) {
			int64_t old = ctr[i];
			ctr[i] = old + 1 < psize[i] ? old + 1 : 0;
			int was = old >= lsize[i], now = ctr[i] >= lsize[i];
			outside += now - was;
			if (ctr[i])
				break;
		}
	}
}

hloi_status literal_relayout(hloi_literal **out, const hloi_literal *lit, const shape *target)
{
	*out = NULL;
	if (shape_is_tuple(&lit->shape) || shape_is_tuple(target) ||
	    target->type != lit->shape.type || !shape_same_dims(target, &lit->shape))
		return HLOI_EINVAL;
	if (lit->elided)
		return literal_create_elided(out, target);
	hloi_literal *r = NULL;
	hloi_status st = literal_create(&r, target);
	if (st != HLOI_OK)
		return st;
	r->elided = lit->elided;
	memcpy(r->dynamic_size, lit->dynamic_size, sizeof r->dynamic_size);
	int64_t n;
	if (shape_element_count(&lit->shape, &n) || n == 0) {
		*out = r;
		return HLOI_OK;
	}
	size_t w = (size_t)etype_byte_width(target->type);
	int64_t idx[HLOI_MAX_RANK] = { 0 };
	if (w) {
		do {
			memcpy(literal_element(r, idx), literal_element(lit, idx), w);
		} while (index_next(target->rank, target->dims, idx));
	}
	*out = r;
	return HLOI_OK;
}

/* --- element formatting ---------------------------------------------------- */

/* NaN payload suffix, as XLA's RoundTripNanPayload: the fraction bits when
 * they differ from the default quiet NaN. */
static void nan_payload_suffix(strbuf *b, uint64_t frac, uint64_t quiet)
{
	if (frac != quiet)
		sb_printf(b, "(0x%" PRIx64 ")", frac);
}

static void print_f32(strbuf *b, float f)
{
	char buf[64];
	snprintf(buf, sizeof buf, "%.6g", (double)f);
	if (strtof(buf, NULL) != f)
		snprintf(buf, sizeof buf, "%.9g", (double)f);
	sb_puts(b, buf);
	if (isnan(f)) {
		uint32_t u;
		memcpy(&u, &f, 4);
		nan_payload_suffix(b, u & 0x7fffffu, 0x400000u);
	}
}

static void print_f64(strbuf *b, double d)
{
	char buf[64];
	snprintf(buf, sizeof buf, "%.15g", d);
	if (strtod(buf, NULL) != d)
		snprintf(buf, sizeof buf, "%.17g", d);
	sb_puts(b, buf);
	if (isnan(d)) {
		uint64_t u;
		memcpy(&u, &d, 8);
		nan_payload_suffix(b, u & UINT64_C(0xfffffffffffff), UINT64_C(0x8000000000000));
	}
}

/* f16 and bf16: the value as f32 with 6 significant digits (which always
 * round-trips for these types), 9 if it ever did not. */
/* XLA prints f16 and bf16 with `%.*g` at the type's max_digits10 (5 for
 * f16, 4 for bf16), which always reads back as the same value: bf16
 * 3.140625 prints as `3.141`. */
static void print_half(strbuf *b, uint16_t h, int is_bf16)
{
	float f = is_bf16 ? bf16_to_f32(h) : f16_to_f32(h);
	char buf[64];
	snprintf(buf, sizeof buf, "%.*g", is_bf16 ? 4 : 5, (double)f);
	sb_puts(b, buf);
	if (isnan(f)) {
		if (is_bf16)
			nan_payload_suffix(b, h & 0x7fu, 0x40u);
		else
			nan_payload_suffix(b, h & 0x3ffu, 0x200u);
	}
}

/* The f8/f4 types as f16 and bf16: `%.*g` at the format's max_digits10
 * (2 or 3), via double, and a NaN payload where the format has payloads
 * (the IEEE-like e5m2, e4m3, e3m4). The fnuz NaN (0x80) prints `-nan`. */
static void print_small_float(strbuf *b, const f8_format *f, uint8_t v)
{
	double d = f8_to_f64(f, v);
	char buf[64];
	snprintf(buf, sizeof buf, "%.*g", f->max_digits10, d);
	sb_puts(b, buf);
	if (isnan(d) && f->payload_bits > 0)
		nan_payload_suffix(b, v & ((1u << f->payload_bits) - 1u), 1u << (f->payload_bits - 1));
}

void literal_print_element(strbuf *b, etype t, const void *p)
{
	switch (t) {
	case ET_PRED: {
		uint8_t v;
		memcpy(&v, p, 1);
		sb_puts(b, v ? "true" : "false");
		return;
	}
	case ET_F16:
	case ET_BF16: {
		uint16_t h;
		memcpy(&h, p, 2);
		print_half(b, h, t == ET_BF16);
		return;
	}
	case ET_F32: {
		float f;
		memcpy(&f, p, 4);
		print_f32(b, f);
		return;
	}
	case ET_F64: {
		double d;
		memcpy(&d, p, 8);
		print_f64(b, d);
		return;
	}
	case ET_C64: {
		float f[2];
		memcpy(f, p, 8);
		sb_putc(b, '(');
		print_f32(b, f[0]);
		sb_puts(b, ", ");
		print_f32(b, f[1]);
		sb_putc(b, ')');
		return;
	}
	case ET_C128: {
		double d[2];
		memcpy(d, p, 16);
		sb_putc(b, '(');
		print_f64(b, d[0]);
		sb_puts(b, ", ");
		print_f64(b, d[1]);
		sb_putc(b, ')');
		return;
	}
	default:
		break;
	}
	etype_kind k = etype_get_kind(t);
	int w = etype_byte_width(t);
	if (k == KIND_SINT) {
		int64_t v = 0;
		if (w == 1) {
			int8_t x;
			memcpy(&x, p, 1);
			v = x;
		} else if (w == 2) {
			int16_t x;
			memcpy(&x, p, 2);
			v = x;
		} else if (w == 4) {
			int32_t x;
			memcpy(&x, p, 4);
			v = x;
		} else if (w == 8) {
			memcpy(&v, p, 8);
		}
		sb_printf(b, "%" PRId64, v);
	} else if (k == KIND_UINT) {
		uint64_t v = 0;
		if (w == 1) {
			uint8_t x;
			memcpy(&x, p, 1);
			v = x;
		} else if (w == 2) {
			uint16_t x;
			memcpy(&x, p, 2);
			v = x;
		} else if (w == 4) {
			uint32_t x;
			memcpy(&x, p, 4);
			v = x;
		} else if (w == 8) {
			memcpy(&v, p, 8);
		}
		sb_printf(b, "%" PRIu64, v);
	} else if (f8_format_of(t)) {
		uint8_t x;
		memcpy(&x, p, 1);
		print_small_float(b, f8_format_of(t), x);
	} else {
		sb_puts(b, "?");
	}
}

/* --- printing (XLA's DenseArrayPrintHelper / TuplePrintHelper) -------------- */

typedef struct print_state {
	strbuf *b;
	const hloi_literal *lit;
	const char *lb; /* "\n" or " " */
	int oneline;
	int rank;
	int64_t sizes[HLOI_MAX_RANK]; /* literal_sizes: a dynamic dimension prints its size's elements */
	int64_t idx[HLOI_MAX_RANK];
	/* braces and separators are collected here and appended to b in
	 * pieces: a zero-element array can have millions of sub-arrays
	 * (literal_print_empty_count) and nothing else */
	size_t used;
	char text[512]; /* small: print_rec recurses into nested tuples */
} print_state;

/* Appends string t at q; returns the new end. */
static char *put_str(char *q, const char *t)
{
	while (*t)
		*q++ = *t++;
	return q;
}

/* Appends the decimal digits of v >= 0 at q; returns the new end. */
static char *put_decimal(char *q, int64_t v)
{
	char digits[24];
	int k = 0;
	do {
		digits[k++] = (char)('0' + v % 10);
		v /= 10;
	} while (v > 0);
	while (k > 0)
		*q++ = digits[--k];
	return q;
}

/* The brace texts of the sub-array at `depth` (n elements), written at q
 * (at most 40 bytes each); they return the new end. */
static char *open_text(const print_state *ps, int depth, int64_t n, char *q)
{
	int remaining = ps->rank - depth;
	if (ps->rank == 1)
		return put_str(q, "{");
	if (remaining == 1)
		return put_str(put_str(q, ps->oneline ? "{" : "  {"), n > 1 ? " " : "");
	if (ps->rank > 3 && depth > 0) {
		q = put_decimal(put_str(q, "{ /*i"), depth - 1);
		q = put_decimal(put_str(q, "="), ps->idx[depth - 1]);
		return put_str(put_str(q, "*/"), n > 0 ? ps->lb : "");
	}
	return put_str(put_str(q, "{"), ps->lb);
}

static char *close_text(const print_state *ps, int depth, int64_t n, char *q)
{
	if (ps->rank == 1)
		return put_str(q, "}");
	if (ps->rank - depth == 1)
		return put_str(q, n > 1 ? " }" : "}");
	return put_str(put_str(q, ps->lb), "}");
}

/* What follows every element of the sub-array at `depth` but its last. */
static char *separator_text(const print_state *ps, int depth, char *q)
{
	return put_str(put_str(q, ","), ps->rank - depth > 1 ? ps->lb : " ");
}

/* Appends the collected text to the output. */
static void text_flush(print_state *ps)
{
	sb_putn(ps->b, ps->text, ps->used);
	ps->used = 0;
}

/* Takes the text written at ps->text + ps->used up to `end`; flushes when
 * less room than one brace text (40 bytes) and a separator remains. */
static void text_took(print_state *ps, const char *end)
{
	ps->used = (size_t)(end - ps->text);
	if (ps->used > sizeof ps->text - 64)
		text_flush(ps);
}

static void print_dims(print_state *ps, int depth)
{
	strbuf *b = ps->b;
	const shape *s = &ps->lit->shape;
	int rank = ps->rank;
	if (depth == rank) {
		text_flush(ps);
		const void *p = literal_element(ps->lit, ps->idx);
		if (s->type == ET_PRED && rank > 0) {
			uint8_t v;
			memcpy(&v, p, 1);
			sb_putc(b, v ? '1' : '0');
		} else {
			literal_print_element(b, s->type, p);
		}
		return;
	}
	int64_t n = ps->sizes[depth];
	text_took(ps, open_text(ps, depth, n, ps->text + ps->used));
	int empty_kids = depth + 1 < rank && ps->sizes[depth + 1] == 0;
	for (int64_t i = 0; i < n; i++) {
		ps->idx[depth] = i;
		if (empty_kids) {
			/* print_dims(ps, depth + 1) without the call */
			char *q = open_text(ps, depth + 1, 0, ps->text + ps->used);
			q = close_text(ps, depth + 1, 0, q);
			text_took(ps, i < n - 1 ? separator_text(ps, depth, q) : q);
			continue;
		}
		print_dims(ps, depth + 1);
		if (i < n - 1)
			text_took(ps, separator_text(ps, depth, ps->text + ps->used));
	}
	ps->idx[depth] = 0;
	text_took(ps, close_text(ps, depth, n, ps->text + ps->used));
}

static void print_rec(strbuf *b, const hloi_literal *lit, int with_shape, int oneline)
{
	const shape *s = &lit->shape;
	if (shape_is_tuple(s)) {
		sb_puts(b, oneline ? "( " : "(\n");
		for (size_t i = 0; i < lit->nelems; i++) {
			if (i > 0)
				sb_puts(b, oneline ? ", " : ",\n");
			print_rec(b, lit->elems[i], with_shape, oneline);
		}
		sb_puts(b, oneline ? " )" : "\n)");
		return;
	}
	if (s->type == ET_TOKEN) {
		sb_puts(b, "token");
		return;
	}
	int64_t sizes[HLOI_MAX_RANK];
	literal_sizes(lit, sizes);
	if (with_shape) {
		shape_print(b, s, 0);
		if (literal_is_dynamic(lit)) {
			/* XLA's DenseArrayPrintHelper: the sizes after the shape */
			sb_putc(b, '(');
			for (int d = 0; d < s->rank; d++)
				sb_printf(b, d ? ",%lld" : "%lld", (long long)sizes[d]);
			sb_putc(b, ')');
		}
		sb_putc(b, ' ');
	}
	if (lit->elided) {
		sb_puts(b, "{...}");
		return;
	}
	if (etype_byte_width(s->type) <= 0 || (!lit->data && lit->nbytes)) {
		sb_puts(b, "{}");
		return;
	}
	print_state ps;
	memset(&ps, 0, sizeof ps);
	ps.b = b;
	ps.lit = lit;
	ps.lb = oneline ? " " : "\n";
	ps.oneline = oneline;
	ps.rank = s->rank;
	memcpy(ps.sizes, sizes, sizeof sizes);
	int64_t n;
	if (!shape_element_count(s, &n) && n > 0 && !lit->data) {
		sb_puts(b, "{}");
		return;
	}
	print_dims(&ps, 0);
	text_flush(&ps);
}

void literal_print(strbuf *b, const hloi_literal *lit, int with_shape, int oneline)
{
	print_rec(b, lit, with_shape, oneline);
}

uint64_t literal_print_empty_count(const hloi_literal *lit)
{
	const shape *s = &lit->shape;
	if (shape_is_tuple(s)) {
		uint64_t sum = 0;
		for (size_t i = 0; i < lit->nelems; i++) {
			uint64_t k = literal_print_empty_count(lit->elems[i]);
			sum = k > UINT64_MAX - sum ? UINT64_MAX : sum + k;
		}
		return sum;
	}
	if (s->type == ET_TOKEN || lit->elided)
		return 0;
	/* print_dims prints, at each depth up to the first zero dimension,
	 * one sub-array per index of the dimensions before it */
	uint64_t level = 1, total = 0;
	for (int d = 0; d < s->rank; d++) {
		uint64_t n = s->dims[d] > 0 ? (uint64_t)s->dims[d] : 0;
		if (n == 0)
			return total;
		level = level > UINT64_MAX / n ? UINT64_MAX : level * n;
		total = level > UINT64_MAX - total ? UINT64_MAX : total + level;
	}
	return 0;
}

/* --- conversion from the untyped tree --------------------------------------- */

typedef struct conv {
	hloi_context *ctx;
	int src;
	hloi_status st;  /* first failure */
} conv;

static void conv_fail(conv *c, hloi_status st)
{
	if (c->st == HLOI_OK)
		c->st = st;
}

/* A span covering just the last byte of a node (its closing bracket). */
static loc close_loc(loc at)
{
	loc l = at;
	if (l.end > l.start)
		l.start = l.end - 1;
	return l;
}

static int is_int_token(const char *t)
{
	if (*t == '-' || *t == '+')
		t++;
	if (!*t)
		return 0;
	for (; *t; t++)
		if (*t < '0' || *t > '9')
			return 0;
	return 1;
}

/* Writes an integer value (already range checked) into p. */
static void store_int(etype t, int neg, uint64_t mag, void *p)
{
	uint64_t bits = neg ? (uint64_t)0 - mag : mag;
	int w = etype_byte_width(t);
	if (w == 1) {
		uint8_t x = (uint8_t)bits;
		memcpy(p, &x, 1);
	} else if (w == 2) {
		uint16_t x = (uint16_t)bits;
		memcpy(p, &x, 2);
	} else if (w == 4) {
		uint32_t x = (uint32_t)bits;
		memcpy(p, &x, 4);
	} else if (w == 8) {
		memcpy(p, &bits, 8);
	}
}

static void store_float(etype t, double d, void *p)
{
	put_float_bits(t, d, p);
}

/* NaN with sign and fraction bits (payload) for a float type. */
static void store_nan(etype t, int neg, uint64_t frac, void *p)
{
	switch (t) {
	case ET_F16: {
		uint16_t h = (uint16_t)((neg ? 0x8000u : 0u) | 0x7c00u | (uint16_t)frac);
		memcpy(p, &h, 2);
		break;
	}
	case ET_BF16: {
		uint16_t h = (uint16_t)((neg ? 0x8000u : 0u) | 0x7f80u | (uint16_t)frac);
		memcpy(p, &h, 2);
		break;
	}
	case ET_F32: {
		uint32_t u = (neg ? 0x80000000u : 0u) | 0x7f800000u | (uint32_t)frac;
		memcpy(p, &u, 4);
		break;
	}
	case ET_F64: {
		uint64_t u = (neg ? UINT64_C(0x8000000000000000) : 0) | UINT64_C(0x7ff0000000000000) | frac;
		memcpy(p, &u, 8);
		break;
	}
	default: {
		const f8_format *f = f8_format_of(t);
		if (!f)
			break;
		if (f->payload_bits == 0) {
			/* one NaN encoding: what a NaN converts to (f4e2m1fn: -0 / +0) */
			*(uint8_t *)p = f8_from_f64(f, neg ? -(double)NAN : (double)NAN);
			break;
		}
		unsigned emax = ((1u << f->ebits) - 1u) << f->mbits;
		*(uint8_t *)p = (uint8_t)((neg ? 0x80u : 0u) | emax | (unsigned)frac);
		break;
	}
	}
}

/* NaN payload bits of a float type (0: it has no payloads). */
static int frac_bits(etype t)
{
	const f8_format *f = f8_format_of(t);
	if (f)
		return f->payload_bits;
	switch (t) {
	case ET_F16:
		return 10;
	case ET_BF16:
		return 7;
	case ET_F32:
		return 23;
	case ET_F64:
		return 52;
	default:
		return 0;
	}
}

static double float_max(etype t);

/* Lowest finite value of a float type (f8e8m0fnu: its smallest, 2^-127). */
static double float_lowest(etype t)
{
	const f8_format *f = f8_format_of(t);
	if (f && !f->is_signed)
		return f8_to_f64(f, 0);
	return -float_max(t);
}

/* Largest finite value of a float type, as a double. */
static double float_max(etype t)
{
	const f8_format *f = f8_format_of(t);
	if (f)
		return f8_to_f64(f, f->max);
	switch (t) {
	case ET_F16:
		return 65504.0;
	case ET_BF16:
		return (double)bf16_to_f32(0x7f7f);
	case ET_F32:
		return (double)FLT_MAX;
	default:
		return DBL_MAX;
	}
}

/* Whether the double rounds to infinity in type t (for the f8/f4 types:
 * to anything but a finite value, as XLA's parser checks: the fn/fnuz
 * formats overflow to NaN, f8e8m0fnu has no zero or negative values). */
static int float_overflows(etype t, double d)
{
	const f8_format *f = f8_format_of(t);
	if (f)
		return !isfinite(f8_to_f64(f, f8_from_f64(f, d)));
	switch (t) {
	case ET_F16:
		return (f64_to_f16(d) & 0x7fffu) == 0x7c00u;
	case ET_BF16:
		return (f64_to_bf16(d) & 0x7fffu) == 0x7f80u;
	case ET_F32:
		return isinf((float)d);
	default:
		return isinf(d);
	}
}

static void conv_word_float(conv *c, const lit_node *n, etype t, void *p)
{
	const char *w = n->text;
	int neg = 0;
	if (*w == '-' || *w == '+') {
		neg = *w == '-';
		w++;
	}
	if (!strcmp(w, "inf")) {
		store_float(t, neg ? -INFINITY : INFINITY, p);
		return;
	}
	if (!strncmp(w, "nan", 3) && frac_bits(t) == 0) {
		if (w[3] == '\0') {
			store_nan(t, neg, 0, p);
			return;
		}
		if (w[3] == '(') {
			diag_error(c->ctx, c->src, n->at, "%s does not support NaN payloads", etype_name(t));
			conv_fail(c, HLOI_EPARSE);
			return;
		}
	} else if (!strncmp(w, "nan", 3)) {
		int fb = frac_bits(t);
		uint64_t quiet = UINT64_C(1) << (fb - 1);
		uint64_t mask = (UINT64_C(1) << fb) - 1;
		if (w[3] == '\0') {
			store_nan(t, neg, quiet, p);
			return;
		}
		const char *h = w + 3;
		if (h[0] == '(' && h[1] == '0' && (h[2] == 'x' || h[2] == 'X')) {
			const char *digits = h + 3;
			uint64_t payload = 0;
			int nd = 0, big = 0;
			for (; *digits && *digits != ')'; digits++, nd++) {
				int v;
				char ch = *digits;
				if (ch >= '0' && ch <= '9')
					v = ch - '0';
				else if (ch >= 'a' && ch <= 'f')
					v = ch - 'a' + 10;
				else if (ch >= 'A' && ch <= 'F')
					v = ch - 'A' + 10;
				else
					break;
				if (payload >> 60)
					big = 1;
				payload = (payload << 4) | (uint64_t)v;
			}
			if (nd > 0 && digits[0] == ')' && digits[1] == '\0') {
				if (big || payload > mask) {
					diag_error(c->ctx, c->src, n->at,
						   "NaN payload %.*s does not fit in the %d fraction bits of %s",
						   nd + 2, h + 1, fb, etype_name(t));
					conv_fail(c, HLOI_EPARSE);
					return;
				}
				if (payload == 0) {
					diag_error(c->ctx, c->src, n->at,
						   "NaN payload must not be zero (that is infinity)");
					conv_fail(c, HLOI_EPARSE);
					return;
				}
				store_nan(t, neg, payload, p);
				return;
			}
		}
	}
	diag_error(c->ctx, c->src, n->at, "expect floating point value for primitive type: %s",
		   etype_name(t));
	conv_fail(c, HLOI_EPARSE);
}

static void conv_number_float(conv *c, const lit_node *n, etype t, void *p)
{
	const char *txt = n->text;
	char *end = NULL;
	errno = 0;
	double d = strtod(txt, &end);
	if (end == txt || *end != '\0') {
		diag_error(c->ctx, c->src, n->at, "expect floating point value for primitive type: %s",
			   etype_name(t));
		conv_fail(c, HLOI_EPARSE);
		return;
	}
	if (errno == ERANGE && isinf(d)) {
		diag_error(c->ctx, c->src, n->at,
			   "Constant is out of range for double (+/-%g) and so is unparsable.", DBL_MAX);
		conv_fail(c, HLOI_EPARSE);
		return;
	}
	if (float_overflows(t, d)) {
		diag_error(c->ctx, c->src, n->at,
			   "value %g is out of range for literal's primitive type %s namely [%g, %g].", d,
			   etype_name(t), float_lowest(t), float_max(t));
		conv_fail(c, HLOI_EPARSE);
		return;
	}
	store_float(t, d, p);
}

/* Integer token -> sign and magnitude; 0 when it does not fit 64 bits. */
static int parse_int_token(const char *t, int *neg, uint64_t *mag)
{
	*neg = 0;
	if (*t == '-' || *t == '+') {
		*neg = *t == '-';
		t++;
	}
	uint64_t v = 0;
	for (; *t; t++) {
		uint64_t dgt = (uint64_t)(*t - '0');
		if (v > (UINT64_MAX - dgt) / 10)
			return 0;
		v = v * 10 + dgt;
	}
	*mag = v;
	return 1;
}

static void conv_int(conv *c, const lit_node *n, etype t, void *p)
{
	if (n->kind == LIT_WORD && (!strcmp(n->text, "true") || !strcmp(n->text, "false"))) {
		store_int(t, 0, n->text[0] == 't', p);
		return;
	}
	if (n->kind != LIT_NUMBER || !is_int_token(n->text)) {
		diag_error(c->ctx, c->src, n->at, "expects integer for primitive type: %s", etype_name(t));
		conv_fail(c, HLOI_EPARSE);
		return;
	}
	int neg = 0;
	uint64_t mag = 0; /* left alone by parse_int_token when it does not fit */
	int fits = parse_int_token(n->text, &neg, &mag);
	if (neg && mag == 0)
		neg = 0;
	if (t == ET_PRED) {
		store_int(t, 0, fits && mag == 0 ? 0 : 1, p);
		return;
	}
	int bits = etype_bit_width(t);
	int ok;
	char lo[32], hi[32];
	if (etype_is_signed(t)) {
		uint64_t maxpos = (UINT64_C(1) << (bits - 1)) - 1;
		ok = fits && (neg ? mag <= maxpos + 1 : mag <= maxpos);
		snprintf(lo, sizeof lo, "-%" PRIu64, maxpos + 1);
		snprintf(hi, sizeof hi, "%" PRIu64, maxpos);
	} else {
		uint64_t max = bits >= 64 ? UINT64_MAX : (UINT64_C(1) << bits) - 1;
		ok = fits && !neg && mag <= max;
		snprintf(lo, sizeof lo, "0");
		snprintf(hi, sizeof hi, "%" PRIu64, max);
	}
	if (!ok) {
		const char *shown = n->text[0] == '+' ? n->text + 1 : n->text;
		diag_error(c->ctx, c->src, n->at,
			   "value %s is out of range for literal's primitive type %s namely [%s, %s].",
			   shown, etype_name(t), lo, hi);
		conv_fail(c, HLOI_EPARSE);
		return;
	}
	store_int(t, neg, mag, p);
}

/* One part of a complex literal into a float or double. XLA checks the
 * written value against the part type's finite range (no rounding first). */
static void conv_complex_part(conv *c, const lit_node *n, etype pt, const char *which, etype t, void *p)
{
	if (n->kind == LIT_WORD && (!strcmp(n->text, "true") || !strcmp(n->text, "false"))) {
		diag_error(c->ctx, c->src, n->at, "expect floating-point value for %s part of complex number", which);
		conv_fail(c, HLOI_EPARSE);
		return;
	}
	if (n->kind == LIT_WORD) {
		conv_word_float(c, n, pt, p);
		return;
	}
	if (n->kind != LIT_NUMBER) {
		diag_error(c->ctx, c->src, n->at, "expect floating-point value for %s part of complex number", which);
		conv_fail(c, HLOI_EPARSE);
		return;
	}
	char *end = NULL;
	errno = 0;
	double d = strtod(n->text, &end);
	if (end == n->text || *end != '\0') {
		diag_error(c->ctx, c->src, n->at, "expect floating-point value for %s part of complex number", which);
		conv_fail(c, HLOI_EPARSE);
		return;
	}
	if (errno == ERANGE && isinf(d)) {
		diag_error(c->ctx, c->src, n->at,
			   "Constant is out of range for double (+/-%g) and so is unparsable.", DBL_MAX);
		conv_fail(c, HLOI_EPARSE);
		return;
	}
	double m = float_max(pt);
	if (d > m || d < -m) {
		diag_error(c->ctx, c->src, n->at,
			   "%s part %g is out of range for literal's primitive type %s, namely [%g, %g].", which, d,
			   etype_name(t), -m, m);
		conv_fail(c, HLOI_EPARSE);
		return;
	}
	store_float(pt, d, p);
}

/* A complex value: `(real, imag)`, each part as a float. (XLA's parser
 * checks the real part twice for NaN, so it turns `(nan, 1)` into
 * `(nan, nan)`; hloi reads each part on its own.) */
static void conv_complex(conv *c, const lit_node *n, etype t, void *p)
{
	etype pt = t == ET_C64 ? ET_F32 : ET_F64;
	size_t w = t == ET_C64 ? 4 : 8;
	if (n->kind != LIT_TUPLE) {
		diag_error(c->ctx, c->src, n->at, "expects '(' before complex number (real, imag) for primitive type: %s",
			   etype_name(t));
		conv_fail(c, HLOI_EPARSE);
		return;
	}
	if (n->n != 2) {
		diag_error(c->ctx, c->src, n->at, "expects a complex number (real, imag) with 2 parts, but sees %d", n->n);
		conv_fail(c, HLOI_EPARSE);
		return;
	}
	unsigned char parts[16];
	conv_complex_part(c, n->kids[0], pt, "real", t, parts);
	if (c->st != HLOI_OK)
		return;
	conv_complex_part(c, n->kids[1], pt, "imaginary", t, parts + w);
	if (c->st != HLOI_OK)
		return;
	memcpy(p, parts, 2 * w);
}

static void conv_value(conv *c, const lit_node *n, etype t, void *p)
{
	if (etype_get_kind(t) == KIND_COMPLEX) {
		conv_complex(c, n, t, p);
		return;
	}
	if (n->kind == LIT_TUPLE) {
		diag_error(c->ctx, c->src, n->at,
			   "unexpected '(' in literal.  Parens are only valid for complex literals");
		conv_fail(c, HLOI_EPARSE);
		return;
	}
	if (t == ET_PRED || etype_is_integer(t)) {
		conv_int(c, n, t, p);
		return;
	}
	/* float types */
	if (n->kind == LIT_NUMBER) {
		conv_number_float(c, n, t, p);
	} else if (!strcmp(n->text, "true") || !strcmp(n->text, "false")) {
		store_float(t, n->text[0] == 't' ? 1.0 : 0.0, p);
	} else {
		conv_word_float(c, n, t, p);
	}
}

typedef struct arr_conv {
	conv *c;
	hloi_literal *lit;
	int rank;
	const int64_t *dims;
	int64_t idx[HLOI_MAX_RANK];
} arr_conv;

static void index_str(char *buf, size_t size, const int64_t *idx, int n)
{
	size_t len = 0;
	buf[0] = '\0';
	len += (size_t)snprintf(buf + len, size - len, "[");
	for (int i = 0; i < n && len < size; i++)
		len += (size_t)snprintf(buf + len, size - len, i ? ",%" PRId64 : "%" PRId64, idx[i]);
	if (len < size)
		snprintf(buf + len, size - len, "]");
}

/* Converts the list node `n` at nest level `level` (1 = outermost), which
 * stands for dimension level-1. Returns 0 on error. */
static int conv_list(arr_conv *a, const lit_node *n, int level)
{
	conv *c = a->c;
	int d = level - 1;
	int64_t want = a->dims[d];
	char ibuf[HLOI_MAX_RANK * 24 + 4];
	for (int i = 0; i < n->n; i++) {
		const lit_node *k = n->kids[i];
		a->idx[d] = i;
		if (k->kind == LIT_LIST) {
			if (level + 1 > a->rank) {
				diag_error(c->ctx, c->src, k->at,
					   "expects nested array in rank %d, but sees larger", a->rank);
				return 0;
			}
			if (i + 1 > want) {
				index_str(ibuf, sizeof ibuf, a->idx, d);
				diag_error(c->ctx, c->src, k->at,
					   "expects %" PRId64 " elements in the %sth element, but sees more",
					   want, ibuf);
				return 0;
			}
			if (!conv_list(a, k, level + 1))
				return 0;
		} else if (k->kind == LIT_ELIDED) {
			diag_error(c->ctx, c->src, k->at,
				   "expects `...` at nest level 1, but sees it at nest level %d", level + 1);
			return 0;
		} else if (k->kind == LIT_TUPLE && etype_get_kind(a->lit->shape.type) != KIND_COMPLEX) {
			diag_error(c->ctx, c->src, k->at,
				   "unexpected '(' in literal.  Parens are only valid for complex literals");
			return 0;
		} else {
			if (level != a->rank) {
				diag_error(c->ctx, c->src, k->at,
					   "expects nested array in rank %d, but sees %d", a->rank, level);
				return 0;
			}
			if (i + 1 > want) {
				diag_error(c->ctx, c->src, k->at,
					   "expects %" PRId64
					   " elements on the minor-most dimension, but sees more",
					   want);
				return 0;
			}
			/* A dry run (no buffer, see literal_from_tree) converts
			 * into scratch space only to report errors. */
			uint64_t scratch[2];
			conv_value(c, k, a->lit->shape.type,
				   a->lit->data ? literal_element(a->lit, a->idx) : (void *)scratch);
			if (c->st != HLOI_OK)
				return 0;
		}
	}
	a->idx[d] = 0;
	if (n->n != want) {
		index_str(ibuf, sizeof ibuf, a->idx, d);
		diag_error(c->ctx, c->src, close_loc(n->at),
			   "expects %" PRId64 " elements in the %sth element, but sees %d", want, ibuf, n->n);
		return 0;
	}
	return 1;
}

/* Fills the already created literal `lit` from node `n`. */
static void conv_fill(conv *c, hloi_literal *lit, const lit_node *n, int depth)
{
	const shape *s = &lit->shape;
	if (depth > LIT_MAX_DEPTH) {
		diag_error(c->ctx, c->src, n->at, "literal is nested too deeply");
		conv_fail(c, HLOI_EPARSE);
		return;
	}
	/* tuples are built element by element (from_tree_rec) */
	if (!etype_is_evaluated(s->type)) {
		diag_error(c->ctx, c->src, n->at, "unsupported element type '%s'",
			   etype_name(s->type) ? etype_name(s->type) : "?");
		conv_fail(c, HLOI_EUNSUPPORTED);
		return;
	}
	if (n->kind == LIT_TUPLE && (s->rank > 0 || etype_get_kind(s->type) != KIND_COMPLEX)) {
		diag_error(c->ctx, c->src, n->at,
			   "unexpected '(' in literal.  Parens are only valid for complex literals");
		conv_fail(c, HLOI_EPARSE);
		return;
	}
	if (s->rank == 0) {
		if (n->kind == LIT_LIST || n->kind == LIT_ELIDED) {
			diag_error(c->ctx, c->src, n->at, "expects nested array in rank 0, but sees larger");
			conv_fail(c, HLOI_EPARSE);
			return;
		}
		conv_value(c, n, s->type, lit->data);
		return;
	}
	if (n->kind == LIT_ELIDED) {
		lit->elided = 1;
		return;
	}
	if (n->kind != LIT_LIST) {
		diag_error(c->ctx, c->src, n->at, "expects nested array in rank %d, but sees 0", s->rank);
		conv_fail(c, HLOI_EPARSE);
		return;
	}
	arr_conv a;
	memset(&a, 0, sizeof a);
	a.c = c;
	a.lit = lit;
	a.rank = s->rank;
	a.dims = s->dims;
	if (!conv_list(&a, n, 1))
		conv_fail(c, HLOI_EPARSE);
}

/* Number of values (numbers and words) in the tree, counting at most
 * `limit`. */
static int64_t count_values(const lit_node *n, int64_t limit, int depth)
{
	if (n->kind == LIT_NUMBER || n->kind == LIT_WORD)
		return 1;
	if (depth > LIT_MAX_DEPTH || (n->kind != LIT_LIST && n->kind != LIT_TUPLE))
		return 0;
	int64_t total = 0;
	for (int i = 0; i < n->n && total < limit; i++)
		total += count_values(n->kids[i], limit - total, depth + 1);
	return total;
}

static hloi_status array_from_tree(hloi_literal **out, hloi_context *ctx, int src, const lit_node *tree,
				   const shape *s);

/* A tuple literal is built element by element, each checked as an array
 * literal is before its buffer is allocated: a tuple holding a huge shape
 * written with a few values (or elided) must not allocate either. */
static hloi_status from_tree_rec(hloi_literal **out, hloi_context *ctx, int src, const lit_node *tree,
				 const shape *s, int depth)
{
	*out = NULL;
	if (!shape_is_tuple(s))
		return array_from_tree(out, ctx, src, tree, s);
	if (depth > LIT_MAX_DEPTH) {
		diag_error(ctx, src, tree->at, "literal is nested too deeply");
		return HLOI_EPARSE;
	}
	if (tree->kind != LIT_TUPLE) {
		diag_error(ctx, src, tree->at, "expects '(' in front of tuple elements");
		return HLOI_EPARSE;
	}
	size_t n = s->ntuple > 0 ? (size_t)s->ntuple : 0;
	if ((size_t)tree->n != n) {
		diag_error(ctx, src, tree->at, "expects %zu elements in the tuple literal, but sees %d", n, tree->n);
		return HLOI_EPARSE;
	}
	hloi_literal *lit;
	hloi_status st = tuple_shell(&lit, s);
	for (size_t i = 0; i < n && st == HLOI_OK; i++) {
		st = from_tree_rec(&lit->elems[i], ctx, src, tree->kids[i], &s->tuple[i], depth + 1);
		if (st == HLOI_OK) {
			lit->tuple_shapes[i] = lit->elems[i]->shape;
			/* a tuple's values are unknown if any element's are */
			lit->elided |= lit->elems[i]->elided;
		}
	}
	if (st != HLOI_OK) {
		literal_destroy(lit);
		return st;
	}
	*out = lit;
	return HLOI_OK;
}

hloi_status literal_from_tree(hloi_literal **out, hloi_context *ctx, int src, const lit_node *tree,
			      const shape *s)
{
	return from_tree_rec(out, ctx, src, tree, s, 0);
}

static hloi_status array_from_tree(hloi_literal **out, hloi_context *ctx, int src, const lit_node *tree,
				   const shape *s)
{
	*out = NULL;
	hloi_literal *lit = NULL;
	/* Text with fewer values than the shape has elements cannot fill it:
	 * find the error in a dry run instead of allocating the buffer first
	 * (a huge shape written with a few values must not allocate). */
	int64_t elems;
	if (shape_is_array(s) && tree->kind != LIT_ELIDED && !shape_element_count(s, &elems) &&
	    count_values(tree, elems, 0) < elems) {
		hloi_literal dry;
		memset(&dry, 0, sizeof dry);
		dry.shape = *s;
		conv c = { ctx, src, HLOI_OK };
		conv_fill(&c, &dry, tree, 0);
		if (c.st != HLOI_OK)
			return c.st;
		diag_error(ctx, src, tree->at, "literal has fewer values than its shape has elements");
		return HLOI_EPARSE;
	}
	if (tree->kind == LIT_ELIDED && shape_is_array(s) && s->rank > 0 && etype_is_evaluated(s->type))
		return literal_create_elided(out, s);
	/* The values are in the text; only the layout's padding (pad(...),
	 * tiles, L(n)) can make the buffer much larger, and a few characters
	 * must not allocate gigabytes (the rule .pb literals follow). */
	int64_t bytes;
	if (shape_is_array(s) && !shape_element_count(s, &elems) && !shape_byte_size(s, &bytes) &&
	    bytes > ((int64_t)1 << 20) && bytes / 64 > elems * etype_byte_width(s->type)) {
		strbuf b = STRBUF_INIT;
		shape_print(&b, s, 1);
		diag_error(ctx, src, tree->at,
			   "literal of shape %s pads %" PRId64 " values to a %" PRId64
			   "-byte buffer; hloi refuses padding that large",
			   sb_str(&b), elems, bytes);
		sb_free(&b);
		return HLOI_EINVAL;
	}
	hloi_status st = literal_create(&lit, s);
	if (st != HLOI_OK) {
		if (st == HLOI_EINVAL) {
			strbuf b = STRBUF_INIT;
			shape_print(&b, s, 0);
			if (!shape_is_tuple(s) && !shape_byte_size(s, &bytes) && bytes >= 0)
				diag_error(ctx, src, tree->at, "literal of shape %s has an invalid layout",
					   sb_str(&b));
			else
				diag_error(ctx, src, tree->at, "literal of shape %s is too large", sb_str(&b));
			sb_free(&b);
		}
		return st;
	}
	conv c = { ctx, src, HLOI_OK };
	conv_fill(&c, lit, tree, 0);
	if (c.st != HLOI_OK) {
		literal_destroy(lit);
		return c.st;
	}
	*out = lit;
	return HLOI_OK;
}
