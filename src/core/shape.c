/* Shapes and layouts: construction, validation, sizes, printing. */
#include "core/shape.h"

#include <stdio.h>
#include <string.h>

#include "core/index.h"
#include "util/checked.h"

void layout_set_default(shape *s)
{
	memset(&s->layout, 0, sizeof s->layout);
	s->layout.n_minor_to_major = s->rank;
	for (int i = 0; i < s->rank; i++)
		s->layout.minor_to_major[i] = s->rank - 1 - i;
	s->layout.padding_value = PAD_ZERO;
	s->has_layout = 1;
}

void shape_make_array(shape *s, etype t, int rank, const int64_t *dims)
{
	memset(s, 0, sizeof *s);
	s->type = t;
	s->rank = rank;
	for (int i = 0; i < rank; i++)
		s->dims[i] = dims[i];
	layout_set_default(s);
}

int layout_is_default(const shape *s)
{
	const layout *l = &s->layout;
	if (l->n_minor_to_major != s->rank || l->n_padded || l->ntiles ||
	    l->tail_padding_alignment || l->element_size_in_bits || l->memory_space ||
	    l->dynamic_shape_metadata_prefix_bytes)
		return 0;
	for (int i = 0; i < s->rank; i++)
		if (l->minor_to_major[i] != s->rank - 1 - i)
			return 0;
	return 1;
}

int shape_is_tuple(const shape *s)
{
	return s->type == ET_TUPLE;
}

int shape_is_array(const shape *s)
{
	etype_kind k = etype_get_kind(s->type);
	return k != KIND_TUPLE && k != KIND_TOKEN && k != KIND_OPAQUE;
}

int shape_is_scalar(const shape *s)
{
	return shape_is_array(s) && s->rank == 0;
}

int shape_is_static(const shape *s)
{
	if (shape_is_tuple(s)) {
		for (int i = 0; i < s->ntuple; i++)
			if (!shape_is_static(&s->tuple[i]))
				return 0;
		return 1;
	}
	for (int i = 0; i < s->rank; i++)
		if (s->dim_kind[i] != DIM_STATIC)
			return 0;
	return 1;
}

int64_t shape_padded_dim(const shape *s, int d)
{
	if (s->layout.n_padded == s->rank && s->rank > 0)
		return s->layout.padded_dimensions[d];
	return s->dims[d];
}

int shape_element_count(const shape *s, int64_t *out)
{
	int64_t n = 1;
	for (int i = 0; i < s->rank; i++)
		if (checked_mul_i64(n, s->dims[i], &n))
			return 1;
	*out = n;
	return 0;
}

int shape_buffer_elements(const shape *s, int64_t *out)
{
	int64_t n = 1;
	if (s->layout.ntiles) {
		index_tiling t;
		if (index_tiling_init(&t, s))
			return 1;
		n = t.elements;
	} else {
		for (int i = 0; i < s->rank; i++)
			if (checked_mul_i64(n, shape_padded_dim(s, i), &n))
				return 1;
	}
	int64_t a = s->layout.tail_padding_alignment;
	if (a > 1 && n % a) {
		if (checked_add_i64(n, a - n % a, &n))
			return 1;
	}
	*out = n;
	return 0;
}

int64_t shape_element_bits(const shape *s)
{
	/* E(n) at a sub-byte type's own width (s4 with E(4)) is how XLA marks
	 * packed device buffers; values hloi holds are one element per byte,
	 * as XLA's literals are */
	if (s->has_layout && s->layout.element_size_in_bits > 0 &&
	    s->layout.element_size_in_bits != etype_bit_width(s->type))
		return s->layout.element_size_in_bits;
	return 8 * (int64_t)etype_byte_width(s->type);
}

int shape_byte_size(const shape *s, int64_t *out)
{
	int64_t n, bits = shape_element_bits(s);
	if (shape_buffer_elements(s, &n))
		return 1;
	if (bits % 8 == 0)
		return checked_mul_i64(n, bits / 8, out);
	/* packed sub-byte elements: whole bytes */
	if (checked_mul_i64(n, bits, &n) || checked_add_i64(n, 7, &n))
		return 1;
	*out = n / 8;
	return 0;
}

static void list_print(strbuf *b, const int64_t *v, int n)
{
	for (int i = 0; i < n; i++)
		sb_printf(b, i ? ",%lld" : "%lld", (long long)v[i]);
}

static const char *padval_name(pad_value p)
{
	switch (p) {
	case PAD_ONE: return "one";
	case PAD_LOWEST: return "lowest";
	case PAD_HIGHEST: return "highest";
	default: return "zero";
	}
}

int layout_has_extras(const layout *l)
{
	return l->n_padded || l->ntiles || (l->tail_padding_alignment && l->tail_padding_alignment != 1) ||
	       l->element_size_in_bits || l->memory_space || l->dynamic_shape_metadata_prefix_bytes > 0;
}

void layout_print(strbuf *b, const shape *s)
{
	const layout *l = &s->layout;
	sb_putc(b, '{');
	list_print(b, l->minor_to_major, l->n_minor_to_major);
	if (layout_has_extras(l)) {
		sb_putc(b, ':');
		if (l->n_padded) {
			sb_puts(b, "pad(");
			list_print(b, l->padded_dimensions, l->n_padded);
			sb_putc(b, ')');
			if (l->padding_value != PAD_ZERO && l->padding_value != PAD_INVALID)
				sb_printf(b, "padval(%s)", padval_name(l->padding_value));
		}
		if (l->ntiles) {
			sb_putc(b, 'T');
			for (int t = 0; t < l->ntiles; t++) {
				sb_putc(b, '(');
				for (int i = 0; i < l->tiles[t].n; i++) {
					if (i)
						sb_putc(b, ',');
					if (l->tiles[t].dims[i] < 0)
						sb_putc(b, '*');
					else
						sb_printf(b, "%lld", (long long)l->tiles[t].dims[i]);
				}
				sb_putc(b, ')');
			}
		}
		if (l->tail_padding_alignment && l->tail_padding_alignment != 1)
			sb_printf(b, "L(%lld)", (long long)l->tail_padding_alignment);
		if (l->element_size_in_bits)
			sb_printf(b, "E(%lld)", (long long)l->element_size_in_bits);
		if (l->memory_space)
			sb_printf(b, "S(%lld)", (long long)l->memory_space);
		if (l->dynamic_shape_metadata_prefix_bytes > 0)
			sb_printf(b, "M(%lld)", (long long)l->dynamic_shape_metadata_prefix_bytes);
	}
	sb_putc(b, '}');
}

void shape_print(strbuf *b, const shape *s, int with_layout)
{
	if (shape_is_tuple(s)) {
		sb_putc(b, '(');
		for (int i = 0; i < s->ntuple; i++) {
			if (i)
				sb_puts(b, ", ");
			if (i && i % 5 == 0)
				sb_printf(b, "/*index=%d*/", i);
			shape_print(b, &s->tuple[i], with_layout);
		}
		sb_putc(b, ')');
		return;
	}
	if (s->is_buffer) {
		shape inner = *s;
		inner.is_buffer = 0;
		sb_puts(b, "b(");
		shape_print(b, &inner, with_layout);
		sb_putc(b, ')');
		return;
	}
	const char *name = etype_name(s->type);
	sb_puts(b, name ? name : "invalid");
	sb_putc(b, '[');
	for (int i = 0; i < s->rank; i++) {
		if (i)
			sb_putc(b, ',');
		if (s->dim_kind[i] == DIM_UNBOUNDED)
			sb_putc(b, '?');
		else
			sb_printf(b, "%s%lld", s->dim_kind[i] == DIM_BOUNDED ? "<=" : "",
				  (long long)s->dims[i]);
	}
	sb_putc(b, ']');
	if (with_layout && s->has_layout && shape_is_array(s) && (s->rank > 0 || layout_has_extras(&s->layout)))
		layout_print(b, s);
}

static void fmt_msg(char *msg, size_t size, const shape *s, const char *fmt, long long a,
		    long long b2, const char *list)
{
	strbuf b = STRBUF_INIT;
	shape_print(&b, s, 0);
	char head[256];
	snprintf(head, sizeof head, fmt, a, b2);
	snprintf(msg, size, "%s%s%s%s", head, list ? list : "", list ? "}; shape: " : "", sb_str(&b));
	sb_free(&b);
}

/* `{1,0` as the layout errors show minor_to_major (the caller closes it). */
static void m2m_text(char *list, size_t size, const layout *l)
{
	strbuf b = STRBUF_INIT;
	sb_putc(&b, '{');
	list_print(&b, l->minor_to_major, l->n_minor_to_major);
	snprintf(list, size, "%s", sb_str(&b));
	sb_free(&b);
}

int shape_validate(const shape *s, char *msg, size_t msgsize)
{
	if (shape_is_tuple(s)) {
		for (int i = 0; i < s->ntuple; i++)
			if (shape_validate(&s->tuple[i], msg, msgsize))
				return 1;
		return 0;
	}
	if (!shape_is_array(s))
		return 0;
	for (int i = 0; i < s->rank; i++) {
		if (s->dim_kind[i] == DIM_STATIC && s->dims[i] < 0) {
			fmt_msg(msg, msgsize, s, "Negative dimension at index %lld: %lld; shape: ", i,
				(long long)s->dims[i], NULL);
			return 1;
		}
	}
	int64_t n;
	if (shape_is_static(s) && shape_element_count(s, &n)) {
		fmt_msg(msg, msgsize, s, "Dimensions overflow; shape: ", 0, 0, NULL);
		return 1;
	}
	if (!s->has_layout)
		return 0;
	const layout *l = &s->layout;
	char list[HLOI_MAX_RANK * 24 + 4];
	if (l->n_minor_to_major != s->rank) {
		m2m_text(list, sizeof list, l);
		char head[160];
		snprintf(head, sizeof head,
			 "layout minor_to_major field contains %d elements, but shape has %d dimensions: ",
			 l->n_minor_to_major, s->rank);
		strbuf b = STRBUF_INIT;
		shape_print(&b, s, 0);
		snprintf(msg, msgsize, "%s%s}; shape: %s", head, list, sb_str(&b));
		sb_free(&b);
		return 1;
	}
	int seen[HLOI_MAX_RANK] = { 0 };
	for (int i = 0; i < s->rank; i++) {
		int64_t d = l->minor_to_major[i];
		if (d < 0 || d >= s->rank) {
			m2m_text(list, sizeof list, l);
			fmt_msg(msg, msgsize, s, "layout minor_to_major field has out-of-bounds value: ", 0, 0,
				list);
			return 1;
		}
	}
	for (int i = 0; i < s->rank; i++) {
		int64_t d = l->minor_to_major[i];
		if (seen[d]++) {
			m2m_text(list, sizeof list, l);
			fmt_msg(msg, msgsize, s, "layout minor_to_major field has duplicate values: ", 0, 0,
				list);
			return 1;
		}
	}
	if (l->n_padded) {
		if (l->n_padded != s->rank) {
			fmt_msg(msg, msgsize, s, "layout has %lld padded dimensions, but shape is rank %lld; shape: ",
				l->n_padded, s->rank, NULL);
			return 1;
		}
		for (int i = 0; i < s->rank; i++) {
			if (l->padded_dimensions[i] < s->dims[i]) {
				char head[200];
				snprintf(head, sizeof head,
					 "for dimension %d, dimension padding (%lld) is smaller than the dimension size (%lld) of the shape ",
					 i, (long long)l->padded_dimensions[i], (long long)s->dims[i]);
				strbuf b = STRBUF_INIT;
				shape_print(&b, s, 0);
				snprintf(msg, msgsize, "%s%s", head, sb_str(&b));
				sb_free(&b);
				return 1;
			}
		}
	}
	for (int t = 0; t < l->ntiles; t++) {
		const tile *tl = &l->tiles[t];
		int bad = tl->n < 1;
		for (int i = 0; i < tl->n; i++)
			if (tl->dims[i] == 0 || tl->dims[i] < -1)
				bad = 1;
		if (bad) {
			strbuf b = STRBUF_INIT;
			shape_print(&b, s, 0);
			snprintf(msg, msgsize, "layout has invalid tiles: %s", sb_str(&b));
			sb_free(&b);
			return 1;
		}
		if (tl->dims[tl->n - 1] < 0) {
			strbuf b = STRBUF_INIT;
			shape_print(&b, s, 1);
			snprintf(msg, msgsize,
				 "layout has invalid tiles: the most minor entry of tile %d is the combine dimension '*', which combines a dimension with the next more minor one: %s",
				 t + 1, sb_str(&b));
			sb_free(&b);
			return 1;
		}
	}
	if (l->tail_padding_alignment < 0) {
		snprintf(msg, msgsize, "layout tail_padding_alignment_in_elements field is <= 0: {%lld}",
			 (long long)l->tail_padding_alignment);
		return 1;
	}
	if (l->element_size_in_bits < 0) {
		snprintf(msg, msgsize, "layout element_size_in_bits field is negative: %lld",
			 (long long)l->element_size_in_bits);
		return 1;
	}
	int64_t bytes;
	if (shape_is_static(s) && shape_byte_size(s, &bytes)) {
		strbuf b = STRBUF_INIT;
		shape_print(&b, s, 1);
		snprintf(msg, msgsize, "Shape %s size may overflow int64_t.", sb_str(&b));
		sb_free(&b);
		return 1;
	}
	return 0;
}

int shape_same_dims(const shape *a, const shape *b)
{
	if (a->rank != b->rank)
		return 0;
	for (int i = 0; i < a->rank; i++)
		if (a->dims[i] != b->dims[i] || a->dim_kind[i] != b->dim_kind[i])
			return 0;
	return 1;
}

int shape_same_bounds(const shape *a, const shape *b)
{
	if (a->rank != b->rank)
		return 0;
	for (int i = 0; i < a->rank; i++)
		if (!shape_dim_compatible(a, i, b, i))
			return 0;
	return 1;
}

int shape_dim_compatible(const shape *a, int i, const shape *b, int j)
{
	return a->dims[i] == b->dims[j] || a->dim_kind[i] == DIM_UNBOUNDED || b->dim_kind[j] == DIM_UNBOUNDED;
}

int shape_has_dim_kind(const shape *s, dim_kind kind)
{
	if (shape_is_tuple(s)) {
		for (int i = 0; i < s->ntuple; i++)
			if (shape_has_dim_kind(&s->tuple[i], kind))
				return 1;
		return 0;
	}
	for (int d = 0; d < s->rank; d++)
		if (s->dim_kind[d] == kind)
			return 1;
	return 0;
}

int shape_has_unbounded(const shape *s)
{
	return shape_has_dim_kind(s, DIM_UNBOUNDED);
}

static int compatible_rec(const shape *a, const shape *b, int bounds)
{
	/* a buffer b(T) and the array T are different values (XLA's
	 * Shape::Equal compares them unless told to ignore buffers) */
	if (a->type != b->type || a->is_buffer != b->is_buffer)
		return 0;
	if (shape_is_tuple(a)) {
		if (a->ntuple != b->ntuple)
			return 0;
		for (int i = 0; i < a->ntuple; i++)
			if (!compatible_rec(&a->tuple[i], &b->tuple[i], bounds))
				return 0;
		return 1;
	}
	return bounds ? shape_same_bounds(a, b) : shape_same_dims(a, b);
}

int shape_has_buffer(const shape *s)
{
	if (shape_is_tuple(s)) {
		for (int i = 0; i < s->ntuple; i++)
			if (shape_has_buffer(&s->tuple[i]))
				return 1;
		return 0;
	}
	return s->is_buffer;
}

int shape_compatible(const shape *a, const shape *b)
{
	return compatible_rec(a, b, 0);
}

int shape_compatible_bounds(const shape *a, const shape *b)
{
	return compatible_rec(a, b, 1);
}

int layout_equal(const layout *a, const layout *b)
{
	if (a->n_minor_to_major != b->n_minor_to_major || a->n_padded != b->n_padded ||
	    a->ntiles != b->ntiles || a->tail_padding_alignment != b->tail_padding_alignment ||
	    a->element_size_in_bits != b->element_size_in_bits || a->memory_space != b->memory_space ||
	    a->dynamic_shape_metadata_prefix_bytes != b->dynamic_shape_metadata_prefix_bytes)
		return 0;
	for (int i = 0; i < a->n_minor_to_major; i++)
		if (a->minor_to_major[i] != b->minor_to_major[i])
			return 0;
	if (a->n_padded) {
		if (a->padding_value != b->padding_value)
			return 0;
		for (int i = 0; i < a->n_padded; i++)
			if (a->padded_dimensions[i] != b->padded_dimensions[i])
				return 0;
	}
	for (int t = 0; t < a->ntiles; t++) {
		if (a->tiles[t].n != b->tiles[t].n)
			return 0;
		for (int i = 0; i < a->tiles[t].n; i++)
			if (a->tiles[t].dims[i] != b->tiles[t].dims[i])
				return 0;
	}
	return 1;
}

int shape_dim_index(const shape *s, int64_t d)
{
	if (d < 0)
		d += s->rank;
	if (d < 0 || d >= s->rank)
		return -1;
	return (int)d;
}

const shape shape_none;

static int layout_identical(const layout *a, const layout *b)
{
	return layout_equal(a, b) && a->padding_value == b->padding_value;
}

int shape_identical(const shape *a, const shape *b)
{
	if (a == b)
		return 1;
	if (a->type != b->type || a->rank != b->rank || a->has_layout != b->has_layout ||
	    a->is_buffer != b->is_buffer || a->ntuple != b->ntuple)
		return 0;
	int rank = a->rank < 0 || a->rank > HLOI_MAX_RANK ? 0 : a->rank;
	for (int i = 0; i < rank; i++)
		if (a->dims[i] != b->dims[i] || a->dim_kind[i] != b->dim_kind[i])
			return 0;
	if (!layout_identical(&a->layout, &b->layout))
		return 0;
	for (int i = 0; i < a->ntuple; i++)
		if (!shape_identical(&a->tuple[i], &b->tuple[i]))
			return 0;
	return 1;
}

static uint64_t mix(uint64_t h, uint64_t v)
{
	h ^= v + 0x9e3779b97f4a7c15u + (h << 6) + (h >> 2);
	return h;
}

uint64_t shape_hash(const shape *s)
{
	uint64_t h = mix((uint64_t)s->type, (uint64_t)s->rank);
	h = mix(h, (uint64_t)s->has_layout << 1 | (uint64_t)s->is_buffer);
	int rank = s->rank < 0 || s->rank > HLOI_MAX_RANK ? 0 : s->rank;
	for (int i = 0; i < rank; i++)
		h = mix(h, (uint64_t)s->dims[i] * 31 + s->dim_kind[i]);
	const layout *l = &s->layout;
	h = mix(h, (uint64_t)l->n_minor_to_major);
	for (int i = 0; i < l->n_minor_to_major && i < HLOI_MAX_RANK; i++)
		h = mix(h, (uint64_t)l->minor_to_major[i]);
	h = mix(h, (uint64_t)l->n_padded << 8 | (uint64_t)l->ntiles);
	h = mix(h, (uint64_t)s->ntuple);
	for (int i = 0; i < s->ntuple; i++)
		h = mix(h, shape_hash(&s->tuple[i]));
	return h;
}
