/* The kernel of custom-call: the target's kernel from the registry
 * (ir/custom_calls.def, one cc_kernel_<rule> each, in this file and in
 * eval/lib/lapack.c), else the embedder's evaluate callback
 * (hloi_custom_call_register). Both engines run these kernels. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "core/float8.h"
#include "core/half.h"
#include "core/literal.h"
#include "util/diag.h"
#include "util/strbuf.h"
#include "eval/kernels/kernel.h"
#include "eval/lib/lapack.h"

/* --- StableHLO's check dialect -------------------------------------------- */

/* Element k of an array as a double (the real part of a complex; *im its
 * imaginary part). */
static double elem_f64(etype t, const void *p, double *im)
{
	*im = 0;
	switch (t) {
	case ET_F32: return *(const float *)p;
	case ET_F64: return *(const double *)p;
	case ET_F16: return f16_to_f32(*(const uint16_t *)p);
	case ET_BF16: return bf16_to_f32(*(const uint16_t *)p);
	case ET_C64: {
		const float *c = p;
		*im = c[1];
		return c[0];
	}
	case ET_C128: {
		const double *c = p;
		*im = c[1];
		return c[0];
	}
	default: {
		const f8_format *f = f8_format_of(t);
		return f ? f8_to_f64(f, *(const uint8_t *)p) : 0;
	}
	}
}

/* The float's bits as a sign-magnitude ordinal (StableHLO's ULP distance:
 * the number of floats between two finite values). */
static uint64_t float_bits(etype t, const void *p, int *neg)
{
	uint64_t u = 0;
	int w = etype_byte_width(t);
	memcpy(&u, p, (size_t)w);
	int bits = etype_bit_width(t);
	uint64_t sign = (uint64_t)1 << (bits - 1);
	*neg = (u & sign) != 0;
	return u & (sign - 1);
}

static uint64_t ulp_diff(etype t, const void *a, const void *b, double x, double y)
{
	int w = etype_byte_width(t);
	if (memcmp(a, b, (size_t)w) == 0)
		return 0;
	if (isnan(x) && isnan(y))
		return 0;
	if (!isfinite(x) || !isfinite(y))
		return UINT64_MAX;
	int na, nb;
	uint64_t ua = float_bits(t, a, &na), ub = float_bits(t, b, &nb);
	if (na != nb)
		return ua + ub;
	return ua > ub ? ua - ub : ub - ua;
}

/* Whether one element pair passes the check `target`. */
static int check_element(cc_target target, etype t, const void *a, const void *b, int64_t max_ulp, double tol)
{
	etype_kind k = etype_get_kind(t);
	if (k != KIND_FLOAT && k != KIND_COMPLEX)
		return memcmp(a, b, (size_t)etype_byte_width(t)) == 0;
	double xi, yi;
	double x = elem_f64(t, a, &xi), y = elem_f64(t, b, &yi);
	if (target == CC_CHECK_EXPECT_CLOSE) {
		if (k == KIND_COMPLEX) {
			etype pt = t == ET_C64 ? ET_F32 : ET_F64;
			int pw = etype_byte_width(pt);
			uint64_t d0 = ulp_diff(pt, a, b, x, y);
			uint64_t d1 = ulp_diff(pt, (const char *)a + pw, (const char *)b + pw, xi, yi);
			return (d0 > d1 ? d0 : d1) <= (uint64_t)max_ulp;
		}
		return ulp_diff(t, a, b, x, y) <= (uint64_t)max_ulp;
	}
	if (target == CC_CHECK_EXPECT_ALMOST_EQ) {
		/* equal, both NaN, or finite within the tolerance */
		double p[2][2] = { { x, y }, { xi, yi } };
		for (int j = 0; j < 2; j++) {
			double u = p[j][0], v = p[j][1];
			if (u == v || (isnan(u) && isnan(v)))
				continue;
			if (!isfinite(u) || !isfinite(v) || fabs(u - v) > tol)
				return 0;
		}
		return 1;
	}
	/* expect_eq and eq: equal values (NaN equals NaN) */
	return (x == y || (isnan(x) && isnan(y))) && (xi == yi || (isnan(xi) && isnan(yi)));
}

/* Compares the operands element by element; *first the first linear index
 * that differs, or -1. */
static int64_t check_first_diff(const instr *in, cc_target target, hloi_literal *const *ops)
{
	const shape *s = &ops[0]->shape;
	int64_t n = 1, idx[HLOI_MAX_RANK] = { 0 };
	for (int d = 0; d < s->rank; d++)
		n *= s->dims[d];
	int64_t max_ulp = 1;
	double tol = 1e-4;
	const char *cfg = instr_text(in, ATTR_BACKEND_CONFIG);
	if (cfg) {
		custom_call_config_int(cfg, "max_ulp_difference", &max_ulp);
		const char *t = strstr(cfg, "tolerance = ");
		if (t)
			tol = strtod(t + 12, NULL);
	}
	for (int64_t k = 0; k < n; k++) {
		if (!check_element(target, s->type, literal_element(ops[0], idx), literal_element(ops[1], idx), max_ulp, tol))
			return k;
		for (int d = s->rank - 1; d >= 0; d--) {
			if (++idx[d] < s->dims[d])
				break;
			idx[d] = 0;
		}
	}
	return -1;
}

static hloi_status cc_kernel_check_expect(engine *e, frame *f, const instr *in, hloi_literal *const *ops, etype t)
{
	(void)t;
	cc_target target = (cc_target)custom_call_builtin(instr_text(in, ATTR_CUSTOM_CALL_TARGET));
	int64_t k = check_first_diff(in, target, ops);
	if (k >= 0) {
		const shape *s = &ops[0]->shape;
		int64_t idx[HLOI_MAX_RANK];
		for (int d = s->rank - 1, r = 0; d >= 0; d--) {
			idx[d] = k % s->dims[d];
			k /= s->dims[d];
			(void)r;
		}
		strbuf b = STRBUF_INIT;
		sb_putc(&b, '{');
		for (int d = 0; d < s->rank; d++)
			sb_printf(&b, "%s%lld", d ? ", " : "", (long long)idx[d]);
		sb_puts(&b, "}: ");
		literal_print_element(&b, s->type, literal_element(ops[0], idx));
		sb_puts(&b, " (actual) vs ");
		literal_print_element(&b, s->type, literal_element(ops[1], idx));
		sb_puts(&b, " (expected)");
		size_t wn = 0;
		const char *what = custom_call_unquote(instr_text(in, ATTR_CUSTOM_CALL_TARGET), &wn);
		diag_error(e->ctx, e->m->src, in->at, "%.*s failed at index %s", (int)wn, what, b.s ? b.s : "");
		sb_free(&b);
		return HLOI_ECHECK;
	}
	hloi_literal *res;
	return value_result(e, f, in, &res);
}

static hloi_status cc_kernel_check_eq(engine *e, frame *f, const instr *in, hloi_literal *const *ops, etype t)
{
	(void)t;
	hloi_literal *res;
	hloi_status st = value_result(e, f, in, &res);
	if (st == HLOI_OK)
		*(uint8_t *)literal_element(res, NULL) = check_first_diff(in, CC_CHECK_EQ, ops) < 0;
	return st;
}

static hloi_status cc_kernel_identity(engine *e, frame *f, const instr *in, hloi_literal *const *ops, etype t)
{
	(void)t;
	return kernel_identity(&(kernel_ctx){ e, f, in, ops, NULL, NULL });
}

static hloi_status cc_kernel_allocate_buffer(engine *e, frame *f, const instr *in, hloi_literal *const *ops,
					     etype t)
{
	(void)ops;
	(void)t;
	hloi_literal *res;
	hloi_status st = value_result(e, f, in, &res);
	if (st == HLOI_OK)
		value_zero(res);
	return st;
}

/* CreateBuffer: a buffer of zeros (XLA leaves its contents undefined). */
static hloi_status cc_kernel_create_buffer(engine *e, frame *f, const instr *in, hloi_literal *const *ops, etype t)
{
	return cc_kernel_allocate_buffer(e, f, in, ops, t);
}

/* Pin and Unpin: the operand's elements, as a buffer or as an array. */
static hloi_status pin_unpin(engine *e, frame *f, const instr *in, hloi_literal *const *ops)
{
	hloi_literal *res;
	hloi_status st = value_result(e, f, in, &res);
	if (st == HLOI_OK)
		value_copy(res, ops[0]);
	return st;
}

static hloi_status cc_kernel_pin(engine *e, frame *f, const instr *in, hloi_literal *const *ops, etype t)
{
	(void)t;
	return pin_unpin(e, f, in, ops);
}

static hloi_status cc_kernel_unpin(engine *e, frame *f, const instr *in, hloi_literal *const *ops, etype t)
{
	(void)t;
	return pin_unpin(e, f, in, ops);
}

/* TopK: the k largest along the last dimension, k the result's, by total
 * order, the lower index first among equals. A comparator (to_apply) is not
 * consulted: XLA's TopkRewriter makes the call only from a sort by a
 * greater-than comparator, and XLA's CPU kernel does not read it either. */
static hloi_status cc_kernel_topk(engine *e, frame *f, const instr *in, hloi_literal *const *ops, etype t)
{
	(void)t;
	const shape *v = &in->result->tuple[0];
	return eval_topk(e, f, in, ops[0], v->dims[v->rank - 1], 1);
}

static hloi_status cc_kernel_slice_to_dynamic(engine *e, frame *f, const instr *in, hloi_literal *const *ops, etype t)
{
	(void)t;
	return eval_slice_to_dynamic(e, f, in, ops);
}

static hloi_status cc_kernel_pad_to_static(engine *e, frame *f, const instr *in, hloi_literal *const *ops, etype t)
{
	(void)t;
	return eval_pad_to_static(e, f, in, ops);
}

static hloi_status cc_kernel_dynamic_conv_forward(engine *e, frame *f, const instr *in, hloi_literal *const *ops,
						   etype t)
{
	(void)t;
	return eval_dynamic_conv_forward(e, f, in, ops);
}

static hloi_status cc_kernel_dynamic_reduce_window_same(engine *e, frame *f, const instr *in,
							hloi_literal *const *ops, etype t)
{
	(void)t;
	return eval_dynamic_reduce_window_same(e, f, in, ops);
}

static hloi_status cc_kernel_dynamic_select_and_scatter_same(engine *e, frame *f, const instr *in,
							 hloi_literal *const *ops, etype t)
{
	(void)t;
	return eval_dynamic_select_and_scatter_same(e, f, in, ops);
}

static hloi_status cc_kernel_dynamic_conv_input_grad(engine *e, frame *f, const instr *in,
						       hloi_literal *const *ops, etype t)
{
	(void)t;
	return eval_dynamic_conv_input_grad(e, f, in, ops);
}

static hloi_status cc_kernel_dynamic_conv_kernel_grad(engine *e, frame *f, const instr *in,
							hloi_literal *const *ops, etype t)
{
	(void)t;
	return eval_dynamic_conv_kernel_grad(e, f, in, ops);
}

typedef hloi_status (*cc_kernel)(engine *e, frame *f, const instr *in, hloi_literal *const *ops, etype t);

static const cc_kernel kernels[CC_COUNT] = {
#define X(E, text, rule, type) [E] = cc_kernel_##rule,
#include "ir/custom_calls.def"
#undef X
};

static hloi_status call_user(engine *e, frame *f, const instr *in, hloi_literal *const *ops,
			     const hloi_custom_call *u)
{
	hloi_literal *res = NULL;
	hloi_status st = value_new(e, in->result, &res);
	if (st != HLOI_OK)
		return st;
	size_t before = hloi_context_error_count(e->ctx);
	st = u->evaluate(u->user_data, e->ctx, ops, (size_t)in->nops, res, instr_text(in, ATTR_BACKEND_CONFIG));
	if (st != HLOI_OK) {
		if (st > HLOI_OK || st < HLOI_ECHECK)
			st = HLOI_EINVAL;
		if (hloi_context_error_count(e->ctx) == before)
			diag_error_where(e->ctx, NULL, "custom-call target '%s' failed (instruction '%s'): %s", u->target,
					 in->name, hloi_status_name(st));
		value_drop(e, res);
		return st;
	}
	f->vals[in->position] = res;
	f->owned[in->position] = VAL_OWNED;
	return HLOI_OK;
}

hloi_status kernel_custom_call(const kernel_ctx *kc)
{
	engine *e = kc->e;
	frame *f = kc->f;
	const instr *in = kc->in;
	hloi_literal *const *ops = kc->ops;
	const char *t = instr_text(in, ATTR_CUSTOM_CALL_TARGET);
	int id = custom_call_builtin(t);
	if (id >= 0)
		return kernels[id](e, f, in, ops, custom_call_builtin_type((cc_target)id));
	const hloi_custom_call *u = custom_call_user(t);
	if (u)
		return call_user(e, f, in, ops, u);
	if (custom_call_runs_callee(in))
		return kernel_call_computation(e, f, in, in->called[0], ops, kc->dest);
	/* the checker refuses every other target; only a caller that skipped it gets here */
	diag_error_where(e->ctx, NULL, "unsupported custom-call target %s (instruction '%s')", t ? t : "(none)",
			 in->name);
	return HLOI_EUNSUPPORTED;
}
