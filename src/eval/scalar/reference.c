/* The reference engine (doc/spec.md §9): every output element is computed on its
 * own — its buffer position becomes a multi-index through the result's
 * layout, each operand's multi-index follows from out_dim (size-1 operand
 * dims read index 0), and goes back to a buffer position through the
 * operand's layout; then the scalar op of eval/scalar/scalar.h. Slow and plainly
 * right: the oracle other engines are tested against. Also the data-movement
 * ops (iota, reshape, transpose) element by element. */
#include <string.h>

#include "core/index.h"
#include "eval/scalar/reference.h"
#include "eval/scalar/scalar.h"
#include "eval/scalar/unary.h"

/* --- element kernels, one per (op, evaluated type) ------------------------- */

typedef void (*binop_fn)(void *out, const void *a, const void *b);
typedef uint8_t (*cmp_fn)(const void *a, const void *b, cmp_direction d, cmp_type t);

#define KERNEL(OPC, fn, E, T)                                                     \
	static void el_##fn##_##E(void *o, const void *a, const void *b)          \
	{                                                                         \
		T x, y, r;                                                        \
		memcpy(&x, a, sizeof x);                                          \
		memcpy(&y, b, sizeof y);                                          \
		r = sc_##fn##_##E(x, y);                                          \
		memcpy(o, &r, sizeof r);                                          \
	}
#define COMPARE_KERNEL(E, T)                                                      \
	static uint8_t el_compare_##E(const void *a, const void *b, cmp_direction d, \
				      cmp_type t)                                 \
	{                                                                         \
		T x, y;                                                           \
		memcpy(&x, a, sizeof x);                                          \
		memcpy(&y, b, sizeof y);                                          \
		return sc_compare_##E(x, y, d, t);                                \
	}
#define ROW_EVAL(E, T, kind) SC_OPS_##kind(KERNEL, E, T) COMPARE_KERNEL(E, T)
#define ROW_NOEVAL(E, T, kind)
#define X(E, name, num, width, kind, ctype, ev, npy) ROW_##ev(E, ctype, kind)
#include "core/types.def"
#undef X
#undef ROW_EVAL
#undef ROW_NOEVAL

static binop_fn binop_lookup(opcode op, etype t)
{
#define CASE(OPC, fn, E, T) \
	case OP_##OPC:      \
		return el_##fn##_##E;
	SC_LOOKUP_BY_OP_TYPE(op, t, SC_OPS, CASE)
#undef CASE
}

static cmp_fn compare_lookup(etype t)
{
	SC_LOOKUP_BY_TYPE(t, el_compare_)
}

/* The unary family (eval/scalar/unary.h): one function per (op, operand type)
 * taking the operands' element pointers. */
typedef void (*elem_fn)(void *out, const void *const *a, const ew_params *p);

#define U_KERNEL(OPC, fn, E, T, R)                                                \
	static void eu_##fn##_##E(void *o, const void *const *a, const ew_params *p) \
	{                                                                         \
		T x;                                                              \
		R r;                                                              \
		(void)p;                                                          \
		memcpy(&x, a[0], sizeof x);                                       \
		r = sc_##fn##_##E(x);                                             \
		memcpy(o, &r, sizeof r);                                          \
	}
#define U_SAME(OPC, fn, E, T) U_KERNEL(OPC, fn, E, T, T)
#define U_PRED(OPC, fn, E, T) U_KERNEL(OPC, fn, E, T, uint8_t)
#define U_PART(OPC, fn, E, T) U_KERNEL(OPC, fn, E, T, SC_CPART_##E)
#define U_CLAMP(OPC, fn, E, T)                                                    \
	static void eu_clamp_##E(void *o, const void *const *a, const ew_params *p) \
	{                                                                         \
		T l, x, h, r;                                                     \
		(void)p;                                                          \
		memcpy(&l, a[0], sizeof l);                                       \
		memcpy(&x, a[1], sizeof x);                                       \
		memcpy(&h, a[2], sizeof h);                                       \
		r = sc_clamp_##E(l, x, h);                                        \
		memcpy(o, &r, sizeof r);                                          \
	}
/* floats: reduce-precision, and stochastic-convert into p->to (the random
 * operand is the unsigned type of the same width, in as many bytes) */
#define U_FLOAT_EXTRA(E, T)                                                       \
	static void eu_reduce_precision_##E(void *o, const void *const *a, const ew_params *p) \
	{                                                                         \
		T x, r;                                                           \
		memcpy(&x, a[0], sizeof x);                                       \
		r = sc_reduce_precision_##E(x, p->exponent_bits, p->mantissa_bits); \
		memcpy(o, &r, sizeof r);                                          \
	}                                                                         \
	static void eu_stochastic_convert_##E(void *o, const void *const *a, const ew_params *p) \
	{                                                                         \
		T x;                                                              \
		uint64_t u = 0;                                                   \
		memcpy(&x, a[0], sizeof x);                                       \
		memcpy(&u, a[1], sizeof x);                                       \
		int64_t v = sc_stochastic_convert_##E(x, u, etype_bit_width(p->to)); \
		sc_write(p->to, o, sc_num_int(v));                                \
	}
#define U_EXTRA_KIND_FLOAT(E, T) U_FLOAT_EXTRA(E, T)
#define U_EXTRA_KIND_PRED(E, T)
#define U_EXTRA_KIND_SINT(E, T)
#define U_EXTRA_KIND_UINT(E, T)
/* complex(re, im): keyed by the complex result type */
#define U_EXTRA_KIND_COMPLEX(E, T)                                                \
	static void eu_complex_##E(void *o, const void *const *a, const ew_params *p) \
	{                                                                         \
		SC_CPART_##E re, im;                                              \
		T r;                                                              \
		(void)p;                                                          \
		memcpy(&re, a[0], sizeof re);                                     \
		memcpy(&im, a[1], sizeof im);                                     \
		r = sc_complex_##E(re, im);                                       \
		memcpy(o, &r, sizeof r);                                          \
	}
#define U_ROW_EVAL(E, T, kind)                                                    \
	SC_UNARY_OPS_##kind(U_SAME, E, T) SC_UNARY_PRED_OPS_##kind(U_PRED, E, T)     \
	SC_UNARY_PART_OPS_##kind(U_PART, E, T) SC_CLAMP_##kind(U_CLAMP, E, T)        \
	U_EXTRA_##kind(E, T)
#define U_ROW_NOEVAL(E, T, kind)
#define X(E, name, num, width, kind, ctype, ev, npy) U_ROW_##ev(E, ctype, kind)
#include "core/types.def"
#undef X

/* The element function of `in` for operand type t (the result type for
 * complex), or NULL when there is none. */
static elem_fn unary_lookup(opcode op, etype t)
{
#define CASE(OPC, fn, E, T) \
	case OP_##OPC:      \
		return eu_##fn##_##E;
	SC_LOOKUP_BY_OP_TYPE(op, t, SC_UNARY_FAMILY_OPS, CASE)
#undef CASE
}

int ew_is_unary_family(opcode op)
{
	return opcode_category(op) == OPC_UNARY || op == OP_CLAMP || op == OP_COMPLEX || op == OP_REDUCE_PRECISION ||
	       op == OP_STOCHASTIC_CONVERT;
}

void ew_params_of(const instr *in, ew_params *p)
{
	int64_t v;
	memset(p, 0, sizeof *p);
	if (instr_int(in, ATTR_EXPONENT_BITS, &v))
		p->exponent_bits = (int)v;
	if (instr_int(in, ATTR_MANTISSA_BITS, &v))
		p->mantissa_bits = (int)v;
	p->to = in->result->type;
}

typedef enum ew_kind { EW_BINARY, EW_COMPARE, EW_COPY, EW_SELECT, EW_CONVERT, EW_UNARY } ew_kind;

/* What one elementwise instruction computes, resolved once. */
typedef struct ew_op {
	const instr *in;
	hloi_literal *const *ops;
	ew_kind kind;
	binop_fn fn;
	cmp_fn cf;
	cmp_type ct;
	cmp_direction dir;
	etype to, from;
	size_t w, wk[3];
	int nops;
	int low_bits;  /* bitcast-convert to a sub-byte type takes the source's low bits */
	elem_fn uf;    /* EW_UNARY */
	ew_params prm;
} ew_op;

/* Computes the element at result index idx into dst. */
static void ew_element(const ew_op *e, const int64_t *idx, unsigned char *dst)
{
	int64_t oi[HLOI_MAX_RANK];
	const unsigned char *p[3] = { NULL, NULL, NULL };
	for (int k = 0; k < e->nops; k++) {
		const shape *os = &e->ops[k]->shape;
		for (int j = 0; j < os->rank; j++)
			oi[j] = os->dims[j] == 1 ? 0 : idx[e->in->ops[k].out_dim[j]];
		p[k] = (const unsigned char *)e->ops[k]->data + (size_t)index_to_linear(os, oi) * e->wk[k];
	}
	switch (e->kind) {
	case EW_BINARY:
		e->fn(dst, p[0], p[1]);
		break;
	case EW_COMPARE:
		*dst = e->cf(p[0], p[1], e->dir, e->ct);
		break;
	case EW_COPY:
		if (e->low_bits)
			*dst = e->to == ET_PRED ? *p[0] != 0 : etype_from_low_bits(e->to, *p[0]);
		else
			memcpy(dst, p[0], e->w);
		break;
	case EW_SELECT:
		memcpy(dst, *p[0] ? p[1] : p[2], e->w);
		break;
	case EW_CONVERT:
		sc_convert(e->to, dst, e->from, p[0]);
		break;
	case EW_UNARY: {
		const void *pa[3] = { p[0], p[1], p[2] };
		e->uf(dst, pa, &e->prm);
		break;
	}
	}
}

/* out[i] = f(operands at i) for every logical position of out's buffer;
 * padding positions keep the padding value new_value put there.
 * EW_COPY copies operand 0 (broadcast, copy, bitcast-convert), EW_SELECT
 * picks operand 1 or 2 by operand 0, EW_CONVERT converts operand 0. */
static void elementwise(const instr *in, hloi_literal *out, hloi_literal *const *ops, ew_kind kind, binop_fn fn,
			cmp_fn cf, cmp_type ct, elem_fn uf)
{
	const shape *s = &out->shape;
	int64_t n;
	if (shape_buffer_elements(s, &n) || !out->data)
		return;
	ew_op e = { .in = in, .ops = ops, .kind = kind, .fn = fn, .cf = cf, .ct = ct,
		    .dir = instr_direction(in), .to = s->type, .uf = uf };
	ew_params_of(in, &e.prm);
	e.w = (size_t)etype_byte_width(s->type);
	e.nops = in->nops < 3 ? in->nops : 3;
	for (int k = 0; k < e.nops; k++)
		e.wk[k] = (size_t)etype_byte_width(ops[k]->shape.type);
	e.from = e.nops ? ops[0]->shape.type : s->type;
	/* a byte bitcast to pred is true where it is not zero (pred holds 0/1) */
	e.low_bits = in->op == OP_BITCAST_CONVERT &&
		     (s->type == ET_PRED ? e.from != ET_PRED : etype_bit_width(s->type) < 8);
	unsigned char *o = out->data;
	int64_t idx[HLOI_MAX_RANK] = { 0 };
	if (!index_is_strided(s)) {
		/* tiled: walk the elements in logical order (finding the padding
		 * of a tiled buffer costs more than placing an element) */
		int64_t count;
		if (shape_element_count(s, &count) || count == 0)
			return;
		do
			ew_element(&e, idx, o + (size_t)index_to_linear(s, idx) * e.w);
		while (index_next(s->rank, s->dims, idx));
		return;
	}
	for (int64_t lin = 0; lin < n; lin++)
		if (!index_from_linear(s, lin, idx))
			ew_element(&e, idx, o + (size_t)lin * e.w);
}

/* reshape: the operand's elements in logical row-major order, refilled in
 * the result's row-major order. */
void ref_reshape(hloi_literal *out, const hloi_literal *op)
{
	int64_t n;
	if (shape_element_count(&out->shape, &n) || n == 0)
		return;
	size_t w = (size_t)etype_byte_width(out->shape.type);
	int64_t oi[HLOI_MAX_RANK] = { 0 }, si[HLOI_MAX_RANK] = { 0 };
	for (int64_t k = 0; k < n; k++) {
		memcpy(literal_element(out, oi), literal_element(op, si), w);
		index_next(out->shape.rank, out->shape.dims, oi);
		index_next(op->shape.rank, op->shape.dims, si);
	}
}

/* transpose: result index i reads operand dimension dims[i]. */
void ref_transpose(const instr *in, hloi_literal *out, const hloi_literal *op)
{
	int64_t n;
	if (shape_element_count(&out->shape, &n) || n == 0)
		return;
	size_t w = (size_t)etype_byte_width(out->shape.type);
	const int_list *perm = instr_ints(in, ATTR_DIMENSIONS);
	int64_t oi[HLOI_MAX_RANK] = { 0 }, si[HLOI_MAX_RANK];
	do {
		for (int i = 0; i < out->shape.rank; i++)
			si[perm->v[i]] = oi[i];
		memcpy(literal_element(out, oi), literal_element(op, si), w);
	} while (index_next(out->shape.rank, out->shape.dims, oi));
}

/* iota: each element is its index along iota_dimension, converted. */
void ref_iota(const instr *in, hloi_literal *out)
{
	int64_t n;
	if (shape_element_count(&out->shape, &n) || n == 0)
		return;
	int64_t dim = 0, oi[HLOI_MAX_RANK] = { 0 };
	instr_int(in, ATTR_IOTA_DIMENSION, &dim);
	do
		sc_write(out->shape.type, literal_element(out, oi), sc_num_int(oi[dim]));
	while (index_next(out->shape.rank, out->shape.dims, oi));
}

cmp_type eval_cmp_type(const instr *in, etype t)
{
	cmp_type ct = instr_comparison_type(in);
	if (ct != CMPT_NONE)
		return ct;
	switch (etype_get_kind(t)) {
	case KIND_SINT: return CMPT_SIGNED;
	case KIND_FLOAT:
	case KIND_COMPLEX: return CMPT_FLOAT;
	default: return CMPT_UNSIGNED;
	}
}


/* The elementwise op `in` and the element function it needs. */
static int classify(const instr *in, ew_kind *kind, binop_fn *fn, cmp_fn *cf, cmp_type *ct, elem_fn *uf)
{
	*uf = NULL;
	if (ew_is_unary_family(in->op)) {
		/* the operand's type; x's for clamp; the result's for complex */
		etype t = ET_INVALID;
		if (in->op == OP_COMPLEX)
			t = in->result->type;
		else if (in->op == OP_CLAMP && in->nops == 3)
			t = in->ops[1].def->result->type;
		else if (in->nops >= 1)
			t = in->ops[0].def->result->type;
		*kind = EW_UNARY;
		*fn = NULL;
		*cf = NULL;
		*ct = CMPT_NONE;
		*uf = unary_lookup(in->op, t);
		return *uf != NULL;
	}
	*fn = NULL;
	*cf = NULL;
	*ct = CMPT_NONE;
	/* op-specific: this engine's way with each non-scalar elementwise op */
	switch (in->op) {
	case OP_BROADCAST:
	case OP_COPY:
	case OP_BITCAST_CONVERT:
		*kind = EW_COPY;
		return 1;
	case OP_SELECT:
		*kind = EW_SELECT;
		return 1;
	case OP_CONVERT:
		*kind = EW_CONVERT;
		return 1;
	case OP_COMPARE: {
		etype t = in->ops[0].def->result->type;
		*kind = EW_COMPARE;
		*cf = compare_lookup(t);
		*ct = eval_cmp_type(in, t);
		return *cf != NULL;
	}
	default:
		if (opcode_category(in->op) != OPC_BINARY)
			return 0;
		*kind = EW_BINARY;
		*fn = binop_lookup(in->op, in->result->type);
		return *fn != NULL;
	}
}

int ref_elementwise_supported(const instr *in)
{
	ew_kind kind;
	binop_fn fn;
	cmp_fn cf;
	cmp_type ct;
	elem_fn uf;
	return classify(in, &kind, &fn, &cf, &ct, &uf);
}

void ref_elementwise(const instr *in, hloi_literal *out, hloi_literal *const *ops)
{
	ew_kind kind;
	binop_fn fn;
	cmp_fn cf;
	cmp_type ct;
	elem_fn uf;
	if (classify(in, &kind, &fn, &cf, &ct, &uf))
		elementwise(in, out, ops, kind, fn, cf, ct, uf);
}
