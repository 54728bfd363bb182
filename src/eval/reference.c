/* The reference engine (SPEC §9): every output element is computed on its
 * own — its buffer position becomes a multi-index through the result's
 * layout, each operand's multi-index follows from out_dim (size-1 operand
 * dims read index 0), and goes back to a buffer position through the
 * operand's layout; then the scalar op of eval/scalar.h. Slow and plainly
 * right: the oracle other engines are tested against. Also evaluates the
 * data-movement ops (iota, reshape, transpose, copy, convert, select,
 * tuples), runs call/fusion callees inline, and writes an aliased result
 * (input_output_alias, SPEC §3.3) into its parameter's buffer. */
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "core/index.h"
#include "eval/eval.h"
#include "eval/fast.h"
#include "eval/limits.h"
#include "eval/scalar.h"
#include "util/alloc.h"

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

static binop_fn binop_lookup(opcode op, etype t)
{
#define CASE(OPC, fn, E, T) \
	case OP_##OPC:      \
		return el_##fn##_##E;
#define ROW_EVAL(E, T, kind)                   \
	case ET_##E:                           \
		switch (op) {                  \
			SC_OPS_##kind(CASE, E, T) \
		default:                       \
			return NULL;           \
		}
	switch (t) {
#define X(E, name, num, width, kind, ctype, ev, npy) ROW_##ev(E, ctype, kind)
#include "core/types.def"
#undef X
	default:
		return NULL;
	}
#undef ROW_EVAL
#undef CASE
}

static cmp_fn compare_lookup(etype t)
{
#define ROW_EVAL(E, T, kind) \
	case ET_##E:         \
		return el_compare_##E;
	switch (t) {
#define X(E, name, num, width, kind, ctype, ev, npy) ROW_##ev(E, ctype, kind)
#include "core/types.def"
#undef X
	default:
		return NULL;
	}
#undef ROW_EVAL
}

/* --- engine state ------------------------------------------------------------ */

/* Calls nested deeper than this are refused (the checker rejects recursion,
 * so only very deep chains of computations reach it). */
#define EVAL_MAX_DEPTH 64

typedef struct engine {
	module *m;
	hloi_context *ctx;
	uint64_t budget;     /* bytes the engine may hold at once */
	uint64_t live;       /* bytes it holds now */
	int fast;            /* try the fast engine first */
	int threads;
	int depth;           /* computations being evaluated */
	hloi_literal *spare; /* a freed array kept for the next value of its size */
	eval_limits limits;  /* stop flag and step limit (hloi_run_options) */
} engine;

/* Freed arrays at least this large are kept for reuse (smaller ones cost
 * malloc nothing to get back). */
#define EVAL_SPARE_MIN ((int64_t)64 << 10)

/* One evaluation of a computation: a value per instruction position. */
typedef struct frame {
	const computation *comp;
	hloi_literal **vals;
	uint8_t *owned;
	const int *last_use; /* position of each value's last reader */
} frame;

uint64_t eval_default_budget(void)
{
	long pages = sysconf(_SC_PHYS_PAGES), size = sysconf(_SC_PAGE_SIZE);
	if (pages <= 0 || size <= 0)
		return UINT64_MAX;
	return (uint64_t)pages / 2 * (uint64_t)size;
}

/* Reserves `bytes` of the budget. */
static hloi_status reserve(engine *e, int64_t bytes)
{
	uint64_t need = e->live + (uint64_t)bytes;
	if (bytes < 0 || need < e->live || need > e->budget) {
		if (bytes < 0 || need < e->live)
			diag_error_where(e->ctx, NULL, "memory budget exceeded: need more than %llu bytes, budget %llu bytes",
					 (unsigned long long)INT64_MAX, (unsigned long long)e->budget);
		else
			diag_error_where(e->ctx, NULL, "memory budget exceeded: need %llu bytes, budget %llu bytes",
					 (unsigned long long)need, (unsigned long long)e->budget);
		return HLOI_ENOMEM;
	}
	e->live = need;
	return HLOI_OK;
}

/* Buffer bytes of a value (tuples: the sum over their elements); -1 on overflow. */
static int64_t value_bytes(const shape *s)
{
	if (shape_is_tuple(s)) {
		int64_t total = 0;
		for (int i = 0; i < s->ntuple; i++) {
			int64_t b = value_bytes(&s->tuple[i]);
			if (b < 0 || total > INT64_MAX - b)
				return -1;
			total += b;
		}
		return total;
	}
	int64_t bytes;
	return shape_byte_size(s, &bytes) ? -1 : bytes;
}

static hloi_status oom(engine *e, int64_t bytes)
{
	diag_error_where(e->ctx, NULL, "out of memory allocating %lld bytes", (long long)bytes);
	return HLOI_ENOMEM;
}

static void free_spare(engine *e)
{
	if (!e->spare)
		return;
	e->live -= (uint64_t)e->spare->nbytes;
	literal_destroy(e->spare);
	e->spare = NULL;
}

/* A new value of shape `s`, within the budget: the spare array when its
 * buffer has the size asked for (it is still counted in e->live). Its
 * elements are left unset; padding holds the padding value. */
static hloi_status new_value(engine *e, const shape *s, hloi_literal **out)
{
	int64_t bytes = value_bytes(s);
	if (e->spare && !shape_is_tuple(s) && s->has_layout && bytes == (int64_t)e->spare->nbytes) {
		hloi_literal *lit = e->spare;
		e->spare = NULL;
		lit->shape = *s;
		lit->elided = 0;
		literal_fill_padding(lit);
		*out = lit;
		return HLOI_OK;
	}
	/* the spare's memory is better spent on this value than refused */
	if (e->spare && (bytes < 0 || e->live + (uint64_t)bytes > e->budget))
		free_spare(e);
	hloi_status st = reserve(e, bytes);
	if (st != HLOI_OK)
		return st;
	st = literal_create_uninit(out, s);
	if (st != HLOI_OK) {
		e->live -= (uint64_t)bytes;
		return st == HLOI_ENOMEM ? oom(e, bytes) : st;
	}
	return HLOI_OK;
}

/* Frees a value new_value made, or keeps it as the spare. */
static void drop_value(engine *e, hloi_literal *lit)
{
	if (!lit)
		return;
	if (!shape_is_tuple(&lit->shape) && lit->data && !lit->elided && (int64_t)lit->nbytes >= EVAL_SPARE_MIN &&
	    value_bytes(&lit->shape) == (int64_t)lit->nbytes) {
		free_spare(e);
		e->spare = lit;
		return;
	}
	int64_t bytes = value_bytes(&lit->shape);
	e->live -= bytes > 0 ? (uint64_t)bytes : 0;
	literal_destroy(lit);
}

static void release(engine *e, frame *f, int pos)
{
	if (f->vals[pos] && f->owned[pos])
		drop_value(e, f->vals[pos]);
	f->vals[pos] = NULL;
	f->owned[pos] = 0;
}

/* Equal layouts everywhere (tuples element by element). */
static int same_layouts(const shape *a, const shape *b)
{
	if (shape_is_tuple(a) || shape_is_tuple(b)) {
		if (!shape_is_tuple(a) || !shape_is_tuple(b) || a->ntuple != b->ntuple)
			return 0;
		for (int i = 0; i < a->ntuple; i++)
			if (!same_layouts(&a->tuple[i], &b->tuple[i]))
				return 0;
		return 1;
	}
	return layout_equal(&a->layout, &b->layout);
}

/* Copies the values of src into dst (same type and dims; any layouts). */
static void copy_values(hloi_literal *dst, const hloi_literal *src)
{
	if (shape_is_tuple(&dst->shape)) {
		for (size_t i = 0; i < dst->nelems && i < src->nelems; i++)
			copy_values(dst->elems[i], src->elems[i]);
		return;
	}
	if (dst->data == src->data)
		return;
	if (layout_equal(&dst->shape.layout, &src->shape.layout)) {
		if (dst->nbytes && dst->nbytes == src->nbytes)
			memcpy(dst->data, src->data, dst->nbytes);
		return;
	}
	int64_t n;
	if (shape_element_count(&dst->shape, &n) || n == 0)
		return;
	size_t w = (size_t)etype_byte_width(dst->shape.type);
	int64_t idx[HLOI_MAX_RANK] = { 0 };
	do
		memcpy(literal_element(dst, idx), literal_element(src, idx), w);
	while (index_next(dst->shape.rank, dst->shape.dims, idx));
}

/* Copies the array src into dst (same type and dims, another layout) with
 * the fast engine's copy kernel, which tiles disagreeing layouts; nonzero
 * when it does not cover the case. */
static int relayout_fast(const engine *e, hloi_literal *dst, hloi_literal *src)
{
	if (!e->fast || shape_is_tuple(&dst->shape) || shape_is_tuple(&src->shape) ||
	    dst->shape.rank != src->shape.rank || dst->shape.type != src->shape.type)
		return 1;
	/* a broadcast with the identity dimension map is a copy */
	instr in;
	operand op;
	memset(&in, 0, sizeof in);
	memset(&op, 0, sizeof op);
	in.op = OP_BROADCAST;
	in.nops = 1;
	in.ops = &op;
	in.result = dst->shape;
	for (int j = 0; j < src->shape.rank; j++)
		op.out_dim[j] = (int8_t)j;
	hloi_literal *ops[1] = { src };
	return fast_elementwise(&in, dst, ops, e->threads, NULL);
}

/* `lit` in the layouts of `target`: lit itself (*owned = 0) when they agree,
 * else a converted copy (*owned = 1). */
static hloi_status conform(engine *e, hloi_literal *lit, const shape *target, hloi_literal **out, int *owned)
{
	*owned = 0;
	*out = lit;
	if (same_layouts(&lit->shape, target))
		return HLOI_OK;
	hloi_status st = new_value(e, target, out);
	if (st != HLOI_OK) {
		*out = NULL;
		return st;
	}
	if (lit->elided || relayout_fast(e, *out, lit) != 0)
		copy_values(*out, lit);
	(*out)->elided = lit->elided;
	*owned = 1;
	return HLOI_OK;
}

/* A copy of `lit` of its own, within the budget. */
static hloi_status clone_value(engine *e, const hloi_literal *lit, hloi_literal **out)
{
	hloi_status st = new_value(e, &lit->shape, out);
	if (st != HLOI_OK)
		return st;
	copy_values(*out, lit);
	return HLOI_OK;
}

/* --- evaluation ---------------------------------------------------------------- */

typedef enum ew_kind { EW_BINARY, EW_COMPARE, EW_COPY, EW_SELECT, EW_CONVERT } ew_kind;

/* out[i] = f(operands at i) for every logical position of out's buffer;
 * padding positions keep the padding value new_value put there.
 * EW_COPY copies operand 0 (broadcast, copy, bitcast-convert), EW_SELECT
 * picks operand 1 or 2 by operand 0, EW_CONVERT converts operand 0. */
static void elementwise(const instr *in, hloi_literal *out, hloi_literal *const *ops, ew_kind kind, binop_fn fn,
			cmp_fn cf, cmp_type ct)
{
	const shape *s = &out->shape;
	int64_t n;
	if (shape_buffer_elements(s, &n) || !out->data)
		return;
	size_t w = (size_t)etype_byte_width(s->type);
	size_t wk[3] = { 0, 0, 0 };
	int nops = in->nops < 3 ? in->nops : 3;
	for (int k = 0; k < nops; k++)
		wk[k] = (size_t)etype_byte_width(ops[k]->shape.type);
	etype from = nops ? ops[0]->shape.type : s->type;
	unsigned char *o = out->data;
	int64_t idx[HLOI_MAX_RANK], oi[HLOI_MAX_RANK];
	for (int64_t lin = 0; lin < n; lin++) {
		if (index_from_linear(s, lin, idx))
			continue;
		const unsigned char *p[3] = { NULL, NULL, NULL };
		for (int k = 0; k < nops; k++) {
			const shape *os = &ops[k]->shape;
			for (int j = 0; j < os->rank; j++)
				oi[j] = os->dims[j] == 1 ? 0 : idx[in->ops[k].out_dim[j]];
			p[k] = (const unsigned char *)ops[k]->data + (size_t)index_to_linear(os, oi) * wk[k];
		}
		unsigned char *dst = o + (size_t)lin * w;
		switch (kind) {
		case EW_BINARY:
			fn(dst, p[0], p[1]);
			break;
		case EW_COMPARE:
			*dst = cf(p[0], p[1], in->direction, ct);
			break;
		case EW_COPY:
			memcpy(dst, p[0], w);
			break;
		case EW_SELECT:
			memcpy(dst, *p[0] ? p[1] : p[2], w);
			break;
		case EW_CONVERT:
			sc_convert(s->type, dst, from, p[0]);
			break;
		}
	}
}

/* reshape: the operand's elements in logical row-major order, refilled in
 * the result's row-major order. */
static void reshape_values(hloi_literal *out, const hloi_literal *op)
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
static void transpose_values(const instr *in, hloi_literal *out, const hloi_literal *op)
{
	int64_t n;
	if (shape_element_count(&out->shape, &n) || n == 0)
		return;
	size_t w = (size_t)etype_byte_width(out->shape.type);
	int64_t oi[HLOI_MAX_RANK] = { 0 }, si[HLOI_MAX_RANK];
	do {
		for (int i = 0; i < out->shape.rank; i++)
			si[in->dimensions.v[i]] = oi[i];
		memcpy(literal_element(out, oi), literal_element(op, si), w);
	} while (index_next(out->shape.rank, out->shape.dims, oi));
}

/* iota: each element is its index along iota_dimension, converted. */
static void iota_values(const instr *in, hloi_literal *out)
{
	int64_t n;
	if (shape_element_count(&out->shape, &n) || n == 0)
		return;
	int64_t oi[HLOI_MAX_RANK] = { 0 };
	do
		sc_write(out->shape.type, literal_element(out, oi), sc_num_int(oi[in->iota_dimension]));
	while (index_next(out->shape.rank, out->shape.dims, oi));
}

static cmp_type effective_cmp_type(const instr *in, etype t)
{
	if (in->comparison_type != CMPT_NONE)
		return in->comparison_type;
	switch (etype_get_kind(t)) {
	case KIND_SINT: return CMPT_SIGNED;
	case KIND_FLOAT: return CMPT_FLOAT;
	default: return CMPT_UNSIGNED;
	}
}

static int reads_in_place(const instr *in)
{
	switch (in->op) {
	case OP_BROADCAST:
	case OP_SELECT:
	case OP_CONVERT:
	case OP_BITCAST_CONVERT:
	case OP_COPY:
		return 1;
	default:
		return opcode_category(in->op) == OPC_BINARY || opcode_category(in->op) == OPC_COMPARE;
	}
}

/* Whether `in` may write straight into dest although an operand lives in
 * dest's buffer: only elementwise ops reading that operand at the position
 * they write (same dims and layout, identity dimension map). */
static int dest_is_safe(const instr *in, hloi_literal *const *ops, const hloi_literal *dest)
{
	for (int k = 0; k < in->nops; k++) {
		const hloi_literal *op = ops[k];
		if (!op || shape_is_tuple(&op->shape) || !op->data || op->data != dest->data)
			continue;
		if (!reads_in_place(in) || !shape_same_dims(&op->shape, &dest->shape) ||
		    !layout_equal(&op->shape.layout, &dest->shape.layout) ||
		    etype_byte_width(op->shape.type) != etype_byte_width(dest->shape.type))
			return 0;
		for (int j = 0; j < op->shape.rank; j++)
			if (in->ops[k].out_dim[j] != j)
				return 0;
	}
	return 1;
}

static hloi_status eval_computation(engine *e, const computation *comp, hloi_literal *const *args,
				    hloi_literal *dest, hloi_literal **out, int *out_owned);

/* The operand whose buffer `in` may take over for its result, or -1: a
 * value the frame owns, read here for the last time, of the result's exact
 * type, dims and layout, and read at the position written (dest_is_safe). */
static int reusable_operand(const frame *f, const instr *in, hloi_literal *const *ops)
{
	if (!reads_in_place(in) || shape_is_tuple(&in->result))
		return -1;
	for (int k = 0; k < in->nops && k < 3; k++) {
		int d = in->ops[k].def->position;
		const hloi_literal *op = ops[k];
		if (!f->owned[d] || f->last_use[d] != in->position || !op || shape_is_tuple(&op->shape) ||
		    !op->data || op->elided || op->shape.type != in->result.type ||
		    !shape_same_dims(&op->shape, &in->result) || !layout_equal(&op->shape.layout, &in->result.layout))
			continue;
		/* the other operands that share the buffer (dims, layout, map) */
		if (dest_is_safe(in, ops, op))
			return k;
	}
	return -1;
}

/* Runs a call or fusion: the callee with the operand values as its
 * parameters. The result is owned by the frame (or is dest). */
static hloi_status eval_call(engine *e, frame *f, const instr *in, hloi_literal *const *ops, hloi_literal *dest)
{
	int pos = in->position;
	if (e->depth >= EVAL_MAX_DEPTH) {
		diag_error_where(e->ctx, NULL, "calls nested deeper than %d (instruction '%s')", EVAL_MAX_DEPTH,
				 in->name);
		return HLOI_EUNSUPPORTED;
	}
	hloi_literal *r = NULL;
	int owned = 0;
	e->depth++;
	hloi_status st = eval_computation(e, in->callee, ops, dest, &r, &owned);
	e->depth--;
	if (st != HLOI_OK)
		return st;
	if (dest && r == dest) {
		f->vals[pos] = dest;
		return HLOI_OK;
	}
	if (!owned) {
		/* a parameter or constant of the callee: the caller's value may
		 * be released after this instruction */
		hloi_literal *c = NULL;
		st = clone_value(e, r, &c);
		if (st != HLOI_OK)
			return st;
		r = c;
	}
	hloi_literal *conf = NULL;
	int cowned = 0;
	st = conform(e, r, &in->result, &conf, &cowned);
	if (st != HLOI_OK) {
		drop_value(e, r);
		return st;
	}
	if (cowned)
		drop_value(e, r);
	f->vals[pos] = conf;
	f->owned[pos] = 1;
	return HLOI_OK;
}

/* Evaluates one instruction into f->vals; `dest` (the root of an aliased
 * computation) is where its result must end up, or NULL. */
static hloi_status eval_instr(engine *e, frame *f, const instr *in, hloi_literal *const *args, hloi_literal *dest)
{
	int pos = in->position;
	hloi_literal *ops[3] = { NULL, NULL, NULL };
	hloi_status st = HLOI_OK;
	for (int k = 0; k < in->nops && k < 3; k++)
		ops[k] = f->vals[in->ops[k].def->position];

	switch (in->op) {
	case OP_PARAMETER: {
		hloi_literal *v = NULL;
		int owned = 0;
		st = conform(e, args[in->parameter_number], &in->result, &v, &owned);
		if (st != HLOI_OK)
			return st;
		f->vals[pos] = v;
		f->owned[pos] = (uint8_t)owned;
		return HLOI_OK;
	}
	case OP_CONSTANT:
		if (!in->value || in->value->elided) {
			diag_error_where(e->ctx, NULL, "constant '%s' is elided ({...}) and cannot be evaluated",
					 in->name);
			return HLOI_EUNSUPPORTED;
		}
		f->vals[pos] = in->value;
		return HLOI_OK;
	case OP_CALL:
	case OP_FUSION: {
		hloi_literal *args2[64];
		hloi_literal **a = in->nops <= 64 ? args2 : hloi_calloc((size_t)in->nops, sizeof *a);
		if (!a)
			return oom(e, (int64_t)in->nops * (int64_t)sizeof *a);
		for (int k = 0; k < in->nops; k++)
			a[k] = f->vals[in->ops[k].def->position];
		st = eval_call(e, f, in, a, dest && !shape_is_tuple(&in->result) ? dest : NULL);
		if (a != args2)
			hloi_free(a);
		return st;
	}
	case OP_TUPLE: {
		st = new_value(e, &in->result, &f->vals[pos]);
		if (st != HLOI_OK)
			return st;
		f->owned[pos] = 1;
		for (int k = 0; k < in->nops; k++)
			copy_values(f->vals[pos]->elems[k], f->vals[in->ops[k].def->position]);
		return HLOI_OK;
	}
	case OP_COPY:
		if (!shape_is_tuple(&in->result))
			break;
		st = new_value(e, &in->result, &f->vals[pos]);
		if (st != HLOI_OK)
			return st;
		f->owned[pos] = 1;
		copy_values(f->vals[pos], ops[0]);
		return HLOI_OK;
	case OP_GET_TUPLE_ELEMENT: {
		const hloi_literal *t = ops[0];
		if (!t || in->index < 0 || (size_t)in->index >= t->nelems)
			return HLOI_EINVAL;
		st = new_value(e, &in->result, &f->vals[pos]);
		if (st != HLOI_OK)
			return st;
		f->owned[pos] = 1;
		copy_values(f->vals[pos], t->elems[in->index]);
		return HLOI_OK;
	}
	default:
		break;
	}

	/* Array results. */
	binop_fn fn = NULL;
	cmp_fn cf = NULL;
	cmp_type ct = CMPT_NONE;
	ew_kind kind = EW_COPY;
	int hook = 0;  /* the fast engine covers it */
	switch (in->op) {
	case OP_BROADCAST:
		hook = 1;
		break;
	case OP_COPY:
	case OP_BITCAST_CONVERT:
		break;
	case OP_SELECT:
		kind = EW_SELECT;
		break;
	case OP_CONVERT:
		kind = EW_CONVERT;
		break;
	case OP_COMPARE: {
		etype t = in->ops[0].def->result.type;
		cf = compare_lookup(t);
		ct = effective_cmp_type(in, t);
		kind = EW_COMPARE;
		hook = 1;
		break;
	}
	case OP_IOTA:
	case OP_RESHAPE:
	case OP_TRANSPOSE:
		break;
	default:
		if (opcode_category(in->op) == OPC_BINARY) {
			fn = binop_lookup(in->op, in->result.type);
			kind = EW_BINARY;
			hook = 1;
		}
		break;
	}
	if ((kind == EW_BINARY && !fn) || (kind == EW_COMPARE && !cf) ||
	    (!reads_in_place(in) && in->op != OP_IOTA && in->op != OP_RESHAPE && in->op != OP_TRANSPOSE)) {
		const char *tn = etype_name(in->result.type);
		diag_error_where(e->ctx, NULL, "cannot evaluate %s on %s (instruction '%s')", opcode_name(in->op),
				 tn ? tn : "?", in->name);
		return HLOI_EUNSUPPORTED;
	}
	hloi_literal *res = NULL;
	int direct = dest && dest_is_safe(in, ops, dest);
	int k = dest ? -1 : reusable_operand(f, in, ops);
	if (direct) {
		res = dest;
	} else if (k >= 0) {
		/* in place: the operand's buffer becomes this value */
		res = ops[k];
		f->owned[in->ops[k].def->position] = 0;
	} else {
		st = new_value(e, &in->result, &res);
		if (st != HLOI_OK)
			return st;
	}
	switch (in->op) {
	case OP_IOTA:
		iota_values(in, res);
		break;
	case OP_RESHAPE:
		reshape_values(res, ops[0]);
		break;
	case OP_TRANSPOSE:
		transpose_values(in, res, ops[0]);
		break;
	default:
		if (!hook || !e->fast || fast_elementwise(in, res, ops, e->threads, NULL) != 0)
			elementwise(in, res, ops, kind, fn, cf, ct);
		break;
	}
	if (dest && !direct) {
		/* computed aside because it reads dest out of place */
		copy_values(dest, res);
		drop_value(e, res);
		res = dest;
	}
	f->vals[pos] = res;
	f->owned[pos] = res != dest;
	return HLOI_OK;
}

/* Evaluates comp on args. The root's value comes back in *out: owned by the
 * caller when *out_owned, else borrowed (an argument, a constant, or dest).
 * With dest, the root's result is written into dest and *out is dest. */
static hloi_status eval_computation(engine *e, const computation *comp, hloi_literal *const *args,
				    hloi_literal *dest, hloi_literal **out, int *out_owned)
{
	hloi_status st = HLOI_OK;
	frame f;
	int *last_use = NULL;
	int n = comp->ninstrs, rootpos = comp->root->position;
	*out = NULL;
	*out_owned = 0;
	f.comp = comp;
	f.vals = hloi_calloc((size_t)n, sizeof *f.vals);
	f.owned = hloi_calloc((size_t)n, 1);
	last_use = hloi_calloc((size_t)n, sizeof *last_use);
	f.last_use = last_use;
	if (!f.vals || !f.owned || !last_use) {
		diag_error_where(e->ctx, NULL, "out of memory");
		st = HLOI_ENOMEM;
		goto cleanup;
	}
	/* What the root needs (operands come before their users), and when each
	 * value is used for the last time; -1 marks instructions not needed. */
	for (int i = 0; i < n; i++)
		last_use[i] = -1;
	last_use[rootpos] = n;
	for (int i = rootpos; i >= 0; i--) {
		const instr *in = comp->instrs[i];
		if (last_use[i] < 0)
			continue;
		for (int k = 0; k < in->nops; k++) {
			int d = in->ops[k].def->position;
			if (last_use[d] < i)
				last_use[d] = i;
		}
	}
	for (int i = 0; i <= rootpos; i++) {
		const instr *in = comp->instrs[i];
		if (last_use[i] < 0)
			continue;
		st = eval_limits_step(&e->limits, e->ctx, comp, in);
		if (st == HLOI_OK)
			st = eval_instr(e, &f, in, args, i == rootpos ? dest : NULL);
		if (st != HLOI_OK)
			goto cleanup;
		for (int k = 0; k < in->nops; k++) {
			int d = in->ops[k].def->position;
			if (last_use[d] == i)
				release(e, &f, d);
		}
	}
	if (dest && f.vals[rootpos] != dest) {
		/* a parameter, constant, tuple element or call result */
		copy_values(dest, f.vals[rootpos]);
		release(e, &f, rootpos);
		f.vals[rootpos] = dest;
	}
	*out = f.vals[rootpos];
	*out_owned = f.owned[rootpos];
	f.vals[rootpos] = NULL;
	f.owned[rootpos] = 0;
cleanup:
	if (f.vals && f.owned)
		for (int i = 0; i < n; i++)
			release(e, &f, i);
	hloi_free(f.vals);
	hloi_free(f.owned);
	hloi_free(last_use);
	return st;
}

/* Inputs: one per parameter, each with the parameter's type and dims. */
static hloi_status check_inputs(const computation *comp, hloi_context *ctx, hloi_literal *const *inputs,
				size_t ninputs)
{
	if ((size_t)comp->nparams != ninputs) {
		diag_error_where(ctx, NULL, "expected %d input%s, got %zu", comp->nparams,
				 comp->nparams == 1 ? "" : "s", ninputs);
		return HLOI_EINVAL;
	}
	hloi_status st = HLOI_OK;
	for (size_t i = 0; i < ninputs; i++) {
		const instr *p = comp->params[i];
		const hloi_literal *lit = inputs[i];
		if (!lit) {
			diag_error_where(ctx, NULL, "input %zu for parameter '%s' is missing", i, p->name);
			st = HLOI_EINVAL;
			continue;
		}
		if (!shape_compatible(&lit->shape, &p->result)) {
			strbuf a = STRBUF_INIT, b = STRBUF_INIT;
			shape_print(&a, &lit->shape, 0);
			shape_print(&b, &p->result, 0);
			diag_error_where(ctx, NULL, "input %zu for parameter '%s' has shape %s, but the parameter is %s",
					 i, p->name, sb_str(&a), sb_str(&b));
			sb_free(&a);
			sb_free(&b);
			st = HLOI_EINVAL;
		} else if (lit->elided) {
			diag_error_where(ctx, NULL, "input %zu for parameter '%s' is elided ({...}) and cannot be evaluated",
					 i, p->name);
			st = HLOI_EINVAL;
		} else if (!shape_is_tuple(&lit->shape) && !lit->data && value_bytes(&lit->shape) > 0) {
			diag_error_where(ctx, NULL,
					 "input %zu for parameter '%s' holds no data (an earlier in-place run moved it into its result)",
					 i, p->name);
			st = HLOI_EINVAL;
		}
	}
	return st;
}

/* The parameter the whole (array) result is written into, or -1. */
int eval_aliased_parameter(const module *m)
{
	const computation *comp = m->entry;
	if (!m->checked || !comp || !comp->root || shape_is_tuple(&comp->root->result))
		return -1;
	for (int i = 0; i < m->nalias; i++) {
		const alias_entry *a = &m->alias[i];
		if (a->n_output_index == 0 && a->n_parameter_index == 0 && a->parameter_number >= 0 &&
		    a->parameter_number < comp->nparams &&
		    !shape_is_tuple(&comp->params[a->parameter_number]->result))
			return (int)a->parameter_number;
	}
	return -1;
}

/* Whether `lit` shares a buffer with any of the inputs (tuples deeply). */
static int shares_buffer(const hloi_literal *lit, const hloi_literal *in)
{
	if (!lit || !in)
		return 0;
	if (shape_is_tuple(&lit->shape)) {
		for (size_t i = 0; i < lit->nelems; i++)
			if (shares_buffer(lit->elems[i], in))
				return 1;
		return 0;
	}
	if (shape_is_tuple(&in->shape)) {
		for (size_t i = 0; i < in->nelems; i++)
			if (shares_buffer(lit, in->elems[i]))
				return 1;
		return 0;
	}
	return lit->data && lit->data == in->data;
}

/* Runs the module into `into` (the caller's literal of the result's exact
 * shape) when given, else into a new literal in *out. */
static hloi_status run_module(module *m, hloi_context *ctx, hloi_literal *const *inputs, size_t ninputs,
			      const hloi_run_options *opts, hloi_literal *into, hloi_literal **out)
{
	hloi_status st = HLOI_OK;
	engine e;
	hloi_literal **args = NULL;
	uint8_t *args_owned = NULL;
	if (out)
		*out = NULL;
	memset(&e, 0, sizeof e);
	computation *comp = m->entry;
	if (!m->checked || !comp || !comp->root) {
		diag_error_where(ctx, NULL, "the module must be checked before it runs");
		return HLOI_EINVAL;
	}
	st = check_inputs(comp, ctx, inputs, ninputs);
	if (st != HLOI_OK)
		return st;

	e.m = m;
	e.ctx = ctx;
	e.budget = opts && opts->max_memory ? opts->max_memory : eval_default_budget();
	e.fast = !opts || opts->engine != HLOI_ENGINE_REFERENCE;
	e.threads = opts ? opts->threads : 0;
	eval_limits_init(&e.limits, opts);

	/* Elided constants the entry needs are reported all at once, before
	 * anything runs. */
	uint8_t *needed = hloi_calloc((size_t)comp->ninstrs, 1);
	if (!needed) {
		diag_error_where(ctx, NULL, "out of memory");
		return HLOI_ENOMEM;
	}
	needed[comp->root->position] = 1;
	for (int i = comp->root->position; i >= 0; i--)
		for (int k = 0; needed[i] && k < comp->instrs[i]->nops; k++)
			needed[comp->instrs[i]->ops[k].def->position] = 1;
	for (int i = 0; i <= comp->root->position; i++) {
		const instr *in = comp->instrs[i];
		if (needed[i] && in->op == OP_CONSTANT && (!in->value || in->value->elided)) {
			loc at = in->literal ? in->literal->at : in->op_at;
			if (diag_source(ctx, m->src))
				diag_error(ctx, m->src, at, "constant '%s' is elided ({...}) and cannot be evaluated",
					   in->name);
			else
				diag_error_where(ctx, NULL, "constant '%s' is elided ({...}) and cannot be evaluated",
						 in->name);
			st = HLOI_EUNSUPPORTED;
		}
	}
	hloi_free(needed);
	if (st != HLOI_OK)
		return st;

	/* The inputs in their parameters' layouts. */
	size_t na = ninputs ? ninputs : 1;
	args = hloi_calloc(na, sizeof *args);
	args_owned = hloi_calloc(na, 1);
	if (!args || !args_owned) {
		diag_error_where(ctx, NULL, "out of memory");
		st = HLOI_ENOMEM;
		goto cleanup;
	}
	for (size_t i = 0; i < ninputs; i++) {
		int owned = 0;
		st = conform(&e, inputs[i], &comp->params[i]->result, &args[i], &owned);
		if (st != HLOI_OK)
			goto cleanup;
		args_owned[i] = (uint8_t)owned;
	}

	/* input_output_alias: the result goes into the parameter's buffer. */
	int ap = eval_aliased_parameter(m);
	hloi_literal *dest = ap >= 0 ? args[ap] : into;
	hloi_literal *r = NULL;
	int owned = 0;
	st = eval_computation(&e, comp, args, dest, &r, &owned);
	if (st != HLOI_OK)
		goto cleanup;
	if (into) {
		/* the result is in the caller's literal */
	} else if (dest) {
		if (args_owned[ap]) {
			/* the converted copy of the input is the result */
			*out = dest;
			args_owned[ap] = 0;
			args[ap] = NULL;
		} else {
			/* the caller's input buffer moves into the result */
			hloi_literal *res = hloi_calloc(1, sizeof *res);
			if (!res) {
				st = oom(&e, (int64_t)sizeof *res);
				goto cleanup;
			}
			res->shape = dest->shape;
			res->data = dest->data;
			res->nbytes = dest->nbytes;
			dest->data = NULL;
			dest->nbytes = 0;
			*out = res;
		}
	} else if (owned) {
		*out = r;
	} else {
		/* A parameter or constant: the caller gets its own copy. */
		st = clone_value(&e, r, out);
	}
cleanup:
	if (args && args_owned)
		for (size_t i = 0; i < ninputs; i++)
			if (args_owned[i])
				drop_value(&e, args[i]);
	free_spare(&e);
	hloi_free(args);
	hloi_free(args_owned);
	return st;
}

hloi_status eval_module(module *m, hloi_context *ctx, hloi_literal *const *inputs, size_t ninputs,
			const hloi_run_options *opts, hloi_literal **out)
{
	return run_module(m, ctx, inputs, ninputs, opts, NULL, out);
}

hloi_status eval_module_into(module *m, hloi_context *ctx, hloi_literal *const *inputs, size_t ninputs,
			     const hloi_run_options *opts, hloi_literal *result)
{
	const computation *comp = m->entry;
	if (!m->checked || !comp || !comp->root) {
		diag_error_where(ctx, NULL, "the module must be checked before it runs");
		return HLOI_EINVAL;
	}
	if (!result) {
		diag_error_where(ctx, NULL, "no result literal to run into");
		return HLOI_EINVAL;
	}
	int ap = eval_aliased_parameter(m);
	if (ap >= 0) {
		diag_error_where(ctx, NULL,
				 "the module writes its result into input %d (input_output_alias); run it without a result literal",
				 ap);
		return HLOI_EINVAL;
	}
	const shape *want = &comp->root->result;
	if (!shape_compatible(&result->shape, want) || !same_layouts(&result->shape, want) || result->elided ||
	    (!shape_is_tuple(want) && !result->data && value_bytes(want) > 0)) {
		strbuf a = STRBUF_INIT, b = STRBUF_INIT;
		shape_print(&a, &result->shape, 1);
		shape_print(&b, want, 1);
		diag_error_where(ctx, NULL, "the result literal is %s%s, but the module's result is %s", sb_str(&a),
				 result->elided ? " (elided)" : "", sb_str(&b));
		sb_free(&a);
		sb_free(&b);
		return HLOI_EINVAL;
	}
	for (size_t i = 0; i < ninputs; i++) {
		if (inputs && shares_buffer(result, inputs[i])) {
			diag_error_where(ctx, NULL, "the result literal shares its buffer with input %zu", i);
			return HLOI_EINVAL;
		}
	}
	return run_module(m, ctx, inputs, ninputs, opts, result, NULL);
}
