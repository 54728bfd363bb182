/* The reference engine (SPEC §9): every output element is computed on its
 * own — its buffer position becomes a multi-index through the result's
 * layout, each operand's multi-index follows from out_dim (size-1 operand
 * dims read index 0), and goes back to a buffer position through the
 * operand's layout; then the scalar op of eval/scalar.h. Slow and plainly
 * right: the oracle other engines are tested against. */
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "core/index.h"
#include "eval/eval.h"
#include "eval/fast.h"
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

typedef struct engine {
	module *m;
	hloi_context *ctx;
	uint64_t budget;     /* bytes the engine may hold at once */
	uint64_t live;       /* bytes it holds now */
	hloi_literal **vals; /* per instruction position */
	uint8_t *owned;
	int fast;            /* try the fast engine first */
	int threads;
} engine;

static uint64_t default_budget(void)
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

static int64_t value_bytes(const shape *s)
{
	int64_t bytes;
	return shape_byte_size(s, &bytes) ? -1 : bytes;
}

static hloi_status oom(engine *e, int64_t bytes)
{
	diag_error_where(e->ctx, NULL, "out of memory allocating %lld bytes", (long long)bytes);
	return HLOI_ENOMEM;
}

/* A new intermediate of shape `s`, within the budget. */
static hloi_status new_value(engine *e, const shape *s, hloi_literal **out)
{
	int64_t bytes = value_bytes(s);
	hloi_status st = reserve(e, bytes);
	if (st != HLOI_OK)
		return st;
	st = literal_create(out, s);
	if (st != HLOI_OK) {
		e->live -= (uint64_t)bytes;
		return st == HLOI_ENOMEM ? oom(e, bytes) : st;
	}
	return HLOI_OK;
}

static void release(engine *e, int pos)
{
	if (e->vals[pos] && e->owned[pos]) {
		int64_t bytes = value_bytes(&e->vals[pos]->shape);
		e->live -= bytes > 0 ? (uint64_t)bytes : 0;
		literal_destroy(e->vals[pos]);
	}
	e->vals[pos] = NULL;
	e->owned[pos] = 0;
}

/* --- evaluation ---------------------------------------------------------------- */

/* out[i] = f(operands at i) for every logical position of out's buffer;
 * padding positions keep the padding value literal_create put there.
 * With neither fn nor cf this copies (broadcast). */
static void elementwise(const instr *in, hloi_literal *out, hloi_literal *const *ops, binop_fn fn, cmp_fn cf,
			cmp_direction dir, cmp_type ct)
{
	const shape *s = &out->shape;
	int64_t n;
	if (shape_buffer_elements(s, &n) || !out->data)
		return;
	size_t w = (size_t)etype_byte_width(s->type);
	size_t wk[2] = { 0, 0 };
	for (int k = 0; k < in->nops; k++)
		wk[k] = (size_t)etype_byte_width(ops[k]->shape.type);
	unsigned char *o = out->data;
	int64_t idx[HLOI_MAX_RANK], oi[HLOI_MAX_RANK];
	for (int64_t lin = 0; lin < n; lin++) {
		if (index_from_linear(s, lin, idx))
			continue;
		const unsigned char *p[2] = { NULL, NULL };
		for (int k = 0; k < in->nops; k++) {
			const shape *os = &ops[k]->shape;
			for (int j = 0; j < os->rank; j++)
				oi[j] = os->dims[j] == 1 ? 0 : idx[in->ops[k].out_dim[j]];
			p[k] = (const unsigned char *)ops[k]->data + (size_t)index_to_linear(os, oi) * wk[k];
		}
		if (cf)
			o[lin] = cf(p[0], p[1], dir, ct);
		else if (fn)
			fn(o + (size_t)lin * w, p[0], p[1]);
		else
			memcpy(o + (size_t)lin * w, p[0], w);
	}
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

static hloi_status eval_instr(engine *e, const instr *in, hloi_literal *const *inputs)
{
	int pos = in->position;
	hloi_literal *ops[2] = { NULL, NULL };
	switch (in->op) {
	case OP_PARAMETER: {
		hloi_literal *input = inputs[in->parameter_number];
		if (layout_equal(&input->shape.layout, &in->result.layout)) {
			e->vals[pos] = input;
			return HLOI_OK;
		}
		int64_t bytes = value_bytes(&in->result);
		hloi_status st = reserve(e, bytes);
		if (st != HLOI_OK)
			return st;
		st = literal_relayout(&e->vals[pos], input, &in->result);
		if (st != HLOI_OK) {
			e->live -= (uint64_t)bytes;
			return st == HLOI_ENOMEM ? oom(e, bytes) : st;
		}
		e->owned[pos] = 1;
		return HLOI_OK;
	}
	case OP_CONSTANT:
		e->vals[pos] = in->value;
		return HLOI_OK;
	default:
		break;
	}
	binop_fn fn = NULL;
	cmp_fn cf = NULL;
	cmp_type ct = CMPT_NONE;
	if (in->op == OP_COMPARE) {
		etype t = in->ops[0].def->result.type;
		cf = compare_lookup(t);
		ct = effective_cmp_type(in, t);
	} else if (in->op != OP_BROADCAST) {
		fn = binop_lookup(in->op, in->result.type);
	}
	if (in->op != OP_BROADCAST && !fn && !cf) {
		const char *tn = etype_name(in->result.type);
		diag_error_where(e->ctx, NULL, "cannot evaluate %s on %s (instruction '%s')", opcode_name(in->op),
				 tn ? tn : "?", in->name);
		return HLOI_EUNSUPPORTED;
	}
	for (int k = 0; k < in->nops && k < 2; k++)
		ops[k] = e->vals[in->ops[k].def->position];
	hloi_status st = new_value(e, &in->result, &e->vals[pos]);
	if (st != HLOI_OK)
		return st;
	e->owned[pos] = 1;
	if (!e->fast || fast_elementwise(in, e->vals[pos], ops, e->threads) != 0)
		elementwise(in, e->vals[pos], ops, fn, cf, in->direction, ct);
	return HLOI_OK;
}

static int supported(const instr *in)
{
	switch (in->op) {
	case OP_PARAMETER:
	case OP_CONSTANT:
	case OP_BROADCAST:
		return 1;
	default:
		return (opcode_category(in->op) == OPC_BINARY || opcode_category(in->op) == OPC_COMPARE) &&
		       opcode_is_evaluated(in->op) && in->nops == 2;
	}
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
		}
	}
	return st;
}

hloi_status eval_module(module *m, hloi_context *ctx, hloi_literal *const *inputs, size_t ninputs,
			const hloi_run_options *opts, hloi_literal **out)
{
	hloi_status st = HLOI_OK;
	engine e;
	int *last_use = NULL;
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

	int n = comp->ninstrs, rootpos = comp->root->position;
	e.m = m;
	e.ctx = ctx;
	e.budget = opts && opts->max_memory ? opts->max_memory : default_budget();
	e.fast = !opts || opts->engine != HLOI_ENGINE_REFERENCE;
	e.threads = opts ? opts->threads : 0;
	e.vals = hloi_calloc((size_t)n, sizeof *e.vals);
	e.owned = hloi_calloc((size_t)n, 1);
	last_use = hloi_calloc((size_t)n, sizeof *last_use);
	if (!e.vals || !e.owned || !last_use) {
		diag_error_where(ctx, NULL, "out of memory");
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
		if (!supported(in)) {
			diag_error_where(ctx, NULL, "unsupported opcode '%s'", opcode_name(in->op));
			st = HLOI_EUNSUPPORTED;
		} else if (in->op == OP_CONSTANT && (!in->value || in->value->elided)) {
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
	if (st != HLOI_OK)
		goto cleanup;

	for (int i = 0; i <= rootpos; i++) {
		const instr *in = comp->instrs[i];
		if (last_use[i] < 0)
			continue;
		st = eval_instr(&e, in, inputs);
		if (st != HLOI_OK)
			goto cleanup;
		for (int k = 0; k < in->nops; k++) {
			int d = in->ops[k].def->position;
			if (last_use[d] == i)
				release(&e, d);
		}
	}
	if (e.owned[rootpos]) {
		*out = e.vals[rootpos];
		e.vals[rootpos] = NULL;
		e.owned[rootpos] = 0;
	} else {
		/* A parameter or constant: the caller gets its own copy. */
		int64_t bytes = value_bytes(&e.vals[rootpos]->shape);
		st = reserve(&e, bytes);
		if (st == HLOI_OK) {
			st = literal_clone(out, e.vals[rootpos]);
			if (st == HLOI_ENOMEM)
				st = oom(&e, bytes);
		}
	}
cleanup:
	if (e.vals && e.owned)
		for (int i = 0; i < n; i++)
			release(&e, i);
	hloi_free(e.vals);
	hloi_free(e.owned);
	hloi_free(last_use);
	return st;
}
