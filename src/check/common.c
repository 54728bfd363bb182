/* Helpers every shape rule uses, whatever its op family: located error
 * reports, shapes, types and instructions printed the way the messages need
 * them, attribute spans, operand checks, the verifier's mixed-precision
 * rule, `?` dimensions merged, and XLA's reducer and window rules (reduce,
 * reduce-window, the collectives, scatter, select-and-scatter). Declared in
 * check/check_internal.h. */
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "check/check_internal.h"
#include "text/attr_text.h"
#include "util/alloc.h"
#include "util/checked.h"
#include "util/strbuf.h"

/* --- reporting ------------------------------------------------------------ */

static void emit(checker *c, diag_severity sev, loc at, const char *fmt, va_list ap)
{
	strbuf b = STRBUF_INIT;
	sb_vprintf(&b, fmt, ap);
	if (b.oom) {
		c->oom = 1;
	} else if (c->text) {
		diag_emit(c->ctx, sev, c->m->src, at, "%s", sb_str(&b));
	} else {
		/* a module loaded from a proto: name the file, computation and
		 * instruction instead (doc/spec.md §7) */
		strbuf w = STRBUF_INIT;
		sb_puts(&w, c->m->filename ? c->m->filename : "<module>");
		if (c->cur_comp)
			sb_printf(&w, ": computation '%s'", c->cur_comp->name);
		if (c->cur_instr)
			sb_printf(&w, ", instruction '%s'", c->cur_instr->name);
		if (w.oom) {
			c->oom = 1;
		} else {
			diag_emit_where(c->ctx, sev, sb_str(&w), "%s", sb_str(&b));
		}
		sb_free(&w);
	}
	sb_free(&b);
}

void ck_error(checker *c, loc at, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	emit(c, DIAG_ERROR, at, fmt, ap);
	va_end(ap);
	c->nerrors++;
}

void ck_unsupported(checker *c, loc at, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	emit(c, DIAG_ERROR, at, fmt, ap);
	va_end(ap);
	c->nunsupported++;
}

void ck_note(checker *c, loc at, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	emit(c, DIAG_NOTE, at, fmt, ap);
	va_end(ap);
}

int ck_report(checker *c, loc at, strbuf *m)
{
	if (m->oom)
		c->oom = 1;
	else
		ck_error(c, at, "%s", sb_str(m));
	sb_free(m);
	return 1;
}

/* --- text for messages ---------------------------------------------------- */

const char *ck_shape(char *buf, const shape *s)
{
	strbuf b = STRBUF_INIT;
	shape_print(&b, s, 0);
	snprintf(buf, CK_SHAPE_TEXT, "%s", b.oom ? "?" : sb_str(&b));
	sb_free(&b);
	return buf;
}

/* XLA's PrimitiveType_Name of t (`F32`, `PRED`, `F8E4M3FN`) in buf. */
const char *ck_type_upper(char *buf, size_t size, etype t)
{
	const char *tn = etype_name(t);
	size_t i = 0;
	for (; tn && tn[i] && i + 1 < size; i++)
		buf[i] = (char)(tn[i] >= 'a' && tn[i] <= 'z' ? tn[i] - 'a' + 'A' : tn[i]);
	buf[i] = '\0';
	return buf;
}

void ck_join_ints(strbuf *b, const int64_t *v, int n, const char *sep)
{
	for (int i = 0; i < n; i++)
		sb_printf(b, "%s%lld", i ? sep : "", (long long)v[i]);
}

void ck_instr_text(strbuf *b, const instr *in)
{
	shape r = in->has_shape ? *in->shape : *in->result;
	if (!shape_is_tuple(&r) && (!r.has_layout || r.layout.n_minor_to_major != r.rank))
		layout_set_default(&r);
	sb_printf(b, "%%%s = ", in->name);
	shape_print(b, &r, 1);
	sb_printf(b, " %s(", opcode_name(in->op));
	for (int k = 0; k < in->nops; k++) {
		if (k)
			sb_puts(b, ", ");
		shape_print(b, in->ops[k].def->result, 1);
		sb_printf(b, " %%%s", in->ops[k].def->name);
	}
	sb_putc(b, ')');
}

/* --- where errors point --------------------------------------------------- */

loc ck_attr_loc(const checker *c, loc value, const char *name)
{
	size_t k = strlen(name);
	if (!c->text || value.end > c->text->len || value.start > value.end)
		return value;
	const char *t = c->text->text;
	if (value.end - value.start > k && memcmp(t + value.start, name, k) == 0)
		return value;  /* already the whole attribute */
	if (value.start > k && t[value.start - 1] == '=' &&
	    memcmp(t + value.start - k - 1, name, k) == 0)
		value.start -= k + 1;
	return value;
}

loc ck_attr_at(const checker *c, const instr *in, attr_id id)
{
	const attr *a = instr_attr(in, id);
	if (!a)
		return in->op_at;
	return ck_attr_loc(c, a->vat, attr_name(id));
}

/* The span of `to_apply=NAME`, where reducer errors point. */
loc ck_to_apply_loc(const checker *c, const instr *in)
{
	const attr *a = instr_attr(in, ATTR_TO_APPLY);
	return a ? ck_attr_loc(c, a->vat, "to_apply") : in->op_at;
}

/* --- operands and results ------------------------------------------------- */

void ck_identity_out_dims(instr *in)
{
	for (int k = 0; k < in->nops; k++)
		for (int j = 0; j < in->ops[k].def->result->rank && j < HLOI_MAX_RANK; j++)
			in->ops[k].out_dim[j] = (int8_t)j;
}

/* An operand that must be an array (not a tuple). */
int ck_array_operand(checker *c, const instr *in, int k)
{
	char a[CK_SHAPE_TEXT];
	const shape *s = in->ops[k].def->result;
	if (shape_is_tuple(s)) {
		ck_error(c, in->op_at, "%s expects an array operand, but operand %d is the tuple %s",
			 opcode_name(in->op), k, ck_shape(a, s));
		return 0;
	}
	return 1;
}

int ck_expect_array(checker *c, const instr *in, int k, const char *what)
{
	char a[CK_SHAPE_TEXT];
	const shape *s = in->ops[k].def->result;
	if (!shape_is_tuple(s))
		return 0;
	ck_error(c, in->ops[k].at, "Expected array argument for %s, but got %s.", what, ck_shape(a, s));
	return 1;
}

int ck_needs_shape(checker *c, const instr *in)
{
	if (!in->has_shape) {
		ck_error(c, in->op_at, "cannot infer shape for opcode: %s", opcode_name(in->op));
		return 0;
	}
	if (shape_is_tuple(in->shape)) {
		char a[CK_SHAPE_TEXT];
		ck_error(c, in->op_at, "%s cannot produce the tuple shape %s", opcode_name(in->op),
			 ck_shape(a, in->shape));
		return 0;
	}
	return 1;
}

static int is_fp(etype t)
{
	return etype_get_kind(t) == KIND_FLOAT;
}

int ck_mixed_precision(checker *c, const instr *in)
{
	if (c->mixed)
		return 0;
	etype fp = ET_INVALID;
	for (int k = 0; k < in->nops; k++) {
		const shape *s = in->ops[k].def->result;
		if (shape_is_tuple(s) || !is_fp(s->type))
			continue;
		if (fp == ET_INVALID) {
			fp = s->type;
		} else if (fp != s->type) {
			strbuf m = STRBUF_INIT;
			sb_puts(&m, "Seen floating point types of different precisions in ");
			ck_instr_text(&m, in);
			sb_puts(&m, ", but mixed precision is disallowed.");
			return ck_report(c, in->op_at, &m);
		}
	}
	return 0;
}

int ck_unbounded_merge(shape *acc, const shape *s)
{
	if (acc->rank != s->rank)
		return 1;
	for (int d = 0; d < s->rank; d++) {
		if (s->dim_kind[d] == DIM_UNBOUNDED)
			continue;
		if (acc->dim_kind[d] == DIM_UNBOUNDED) {
			acc->dims[d] = s->dims[d];
			acc->dim_kind[d] = s->dim_kind[d];
		} else if (acc->dims[d] != s->dims[d] || acc->dim_kind[d] != s->dim_kind[d]) {
			return 1;
		}
	}
	return 0;
}

/* The written result shape (parameter, constant, and the opcodes whose own
 * rule hloi does not have yet). */
int infer_declared(checker *c, instr *in, shape *inf)
{
	if (!in->has_shape) {
		ck_error(c, in->op_at, "cannot infer shape for opcode: %s", opcode_name(in->op));
		return 1;
	}
	*inf = *in->shape;
	c->keep_layout = 1;
	return 0;
}

int ck_store_value(checker *c, hloi_literal *lit)
{
	module *m = c->m;
	int n = m->nvalues;
	if (n == 0 || (n >= 4 && (n & (n - 1)) == 0)) {
		size_t cap = n == 0 ? 4 : 2 * (size_t)n;
		hloi_literal **v = hloi_realloc(m->values, cap * sizeof *v);
		if (!v)
			return -1;
		m->values = v;
	}
	m->values[m->nvalues++] = lit;
	return 0;
}

/* --- reducers and windows ------------------------------------------------- */

/* XLA's CompatibleIgnoringFpPrecision. */
static int compatible_ignoring_fp(const shape *a, const shape *b)
{
	if (shape_is_tuple(a) || shape_is_tuple(b)) {
		if (!shape_is_tuple(a) || !shape_is_tuple(b) || a->ntuple != b->ntuple)
			return 0;
		for (int i = 0; i < a->ntuple; i++)
			if (!compatible_ignoring_fp(&a->tuple[i], &b->tuple[i]))
				return 0;
		return 1;
	}
	return etype_same_ignoring_fp(a->type, b->type) && shape_same_dims(a, b);
}

static shape scalar_of(etype t)
{
	shape s;
	shape_make_array(&s, t, 0, NULL);
	return s;
}

/* VerifyReducerShape: f takes n accumulators and n elements and returns the
 * n new accumulators (a scalar, or a tuple of n scalars) of the init values'
 * types, the elements being of the inputs' types (floating-point precision
 * may differ). */
int ck_verify_reducer(checker *c, const instr *in, const computation *f, const shape *const *inits,
		      const etype *input_types, int n)
{
	char a[CK_SHAPE_TEXT], b[CK_SHAPE_TEXT];
	loc at = ck_to_apply_loc(c, in);
	if (f->nparams != 2 * n) {
		ck_error(c, at, "Reduction function must take %d parameters, but takes %d parameter(s).", 2 * n,
			 f->nparams);
		return 1;
	}
	const shape *acc = f->root->result;
	const shape **sub = arena_array(&c->m->arena, (size_t)n, sizeof *sub);
	if (!sub) {
		c->oom = 1;
		return 1;
	}
	if (!shape_is_tuple(acc)) {
		if (n != 1) {
			ck_error(c, at, "Reduction function must produce a tuple with %d elements, but produces a scalar",
				 n);
			return 1;
		}
		sub[0] = acc;
	} else {
		if (acc->ntuple != n) {
			ck_error(c, at, "Reduction function must produce a tuple with %d elements, but has %d elements", n,
				 acc->ntuple);
			return 1;
		}
		for (int i = 0; i < n; i++)
			sub[i] = &acc->tuple[i];
	}
	for (int i = 0; i < n; i++) {
		if (shape_is_tuple(sub[i]) || sub[i]->rank != 0) {
			ck_error(c, at, "Reduction function must return a scalar or tuple of scalars but returns shape: %s",
				 ck_shape(a, acc));
			return 1;
		}
	}
	for (int i = 0; i < n; i++) {
		const shape *pi = f->params[i]->result, *pn = f->params[n + i]->result;
		if (!shape_compatible(sub[i], pi)) {
			ck_error(c, at, "Reduction function's %d-th parameter shape differs from the result shape: %s vs %s",
				 i, ck_shape(a, pi), ck_shape(b, sub[i]));
			return 1;
		}
		if (!compatible_ignoring_fp(sub[i], inits[i])) {
			ck_error(c, at,
				 "Reduction function's accumulator shape at index %d differs from the init_value shape: %s vs %s",
				 i, ck_shape(a, sub[i]), ck_shape(b, inits[i]));
			return 1;
		}
		shape el = scalar_of(input_types[i]);
		if (!compatible_ignoring_fp(&el, pn)) {
			ck_error(c, at,
				 "Reduction function's %d-th parameter shape differs from the input type element type: %s vs %s",
				 n + i, ck_shape(a, pn), ck_shape(b, &el));
			return 1;
		}
		if (!compatible_ignoring_fp(sub[i], pn)) {
			ck_error(c, at, "Reduction function's %d-th parameter shape must match the result shape, but got %s vs %s.",
				 n + i, ck_shape(a, pn), ck_shape(b, sub[i]));
			return 1;
		}
	}
	return 0;
}

/* window_util::DilatedBound and StridedBound; -1 on overflow or a negative
 * bound (XLA stops on a CHECK there). */
int64_t ck_dilated_bound(int64_t bound, int64_t dilation)
{
	int64_t r;
	if (bound == 0)
		return 0;
	if (checked_mul_i64(bound - 1, dilation, &r) || checked_add_i64(r, 1, &r))
		return -1;
	return r;
}

/* Reports and returns nonzero when one dimension of a window (printed as
 * ws) is not positive: size, stride or a dilation factor, in XLA's words. */
int ck_window_dim_invalid(checker *c, loc at, const window_dim *d, const char *ws)
{
	if (d->size <= 0) {
		ck_error(c, at, "Window %s has a non-positive dimension.", ws);
		return 1;
	}
	if (d->stride <= 0) {
		ck_error(c, at, "Window %s has a non-positive stride.", ws);
		return 1;
	}
	if (d->lhs_dilate < 1) {
		ck_error(c, at, "Window %s has a non-positive base area dilation factor.", ws);
		return 1;
	}
	if (d->rhs_dilate < 1) {
		ck_error(c, at, "Window %s has a non-positive window dilation factor.", ws);
		return 1;
	}
	return 0;
}

/* The output dims of a window over base dims (XLA's InferWindowOutputShape);
 * reports and returns nonzero when the window is invalid. */
int ck_window_output(checker *c, const instr *in, const window *w, const shape *base, int64_t *out)
{
	char a[CK_SHAPE_TEXT];
	strbuf wt = STRBUF_INIT;
	attr_print_window(&wt, w);
	const char *ws = wt.oom ? "{...}" : sb_str(&wt);
	const attr *wa = instr_attr(in, ATTR_WINDOW);
	loc at = wa ? ck_attr_loc(c, wa->vat, "window") : in->op_at;
	int err = 1;
	if (w->n != base->rank) {
		ck_error(c, at, "Window has dimension %d but base shape has dimension %d.", w->n, base->rank);
		goto done;
	}
	for (int i = 0; i < w->n; i++) {
		const window_dim *d = &w->d[i];
		if (ck_window_dim_invalid(c, at, d, ws))
			goto done;
		int64_t base_d = ck_dilated_bound(base->dims[i], d->lhs_dilate);
		int64_t win = ck_dilated_bound(d->size, d->rhs_dilate);
		int64_t padded;
		if (base_d < 0 || win < 0 || checked_add_i64(base_d, d->pad_lo, &padded) ||
		    checked_add_i64(padded, d->pad_hi, &padded)) {
			ck_error(c, at, "Window %s is too large for dimension %d of %s.", ws, i, ck_shape(a, base));
			goto done;
		}
		if (padded < 0) {
			ck_error(c, at, "Window %s pads dimension %d of size %lld to a negative size (%lld).", ws, i,
				 (long long)base->dims[i], (long long)padded);
			goto done;
		}
		out[i] = padded == 0 || win > padded ? 0 : (padded - win) / d->stride + 1;
	}
	err = 0;
done:
	sb_free(&wt);
	return err;
}
