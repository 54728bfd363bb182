/* Broadcasting rules of the checker: binary ops and compare under XLA's
 * client-level rules (doc/spec.md §3.1: scalars, degenerate size-1 dims,
 * broadcast_dimensions), NumPy mode (§3.2) and --strict; and the HLO
 * broadcast instruction's `dimensions=`. */
#include <stdio.h>
#include <string.h>

#include "check/check_internal.h"
#include "util/strbuf.h"

/* `{1,2}` */
static void list_text(strbuf *b, const int64_t *v, int n)
{
	sb_putc(b, '{');
	for (int i = 0; i < n; i++)
		sb_printf(b, i ? ",%lld" : "%lld", (long long)v[i]);
	sb_putc(b, '}');
}

/* NumPy's shape tuple: `(4,3)`, `(4,)`, `()`. */
static void numpy_tuple(strbuf *b, const shape *s)
{
	sb_putc(b, '(');
	for (int i = 0; i < s->rank; i++)
		sb_printf(b, i ? ",%lld" : "%lld", (long long)s->dims[i]);
	if (s->rank == 1)
		sb_putc(b, ',');
	sb_putc(b, ')');
}

static void operands_note(checker *c, const instr *in, const shape *lhs, const shape *rhs)
{
	char a[CK_SHAPE_TEXT], b[CK_SHAPE_TEXT];
	ck_note(c, in->op_at, "operands of %s: %s and %s", opcode_name(in->op), ck_shape(a, lhs),
		ck_shape(b, rhs));
}

/* Degenerate rule: equal sizes, or one of them 1 (the result takes the other). */
static int degenerate(int64_t a, int64_t b, int64_t *out)
{
	if (a == b || b == 1) {
		*out = a;
		return 1;
	}
	if (a == 1) {
		*out = b;
		return 1;
	}
	return 0;
}

/* A `?` in either dimension (XLA's InferMostSpecificDimAndBound): against
 * `?` or a static 1 it stays `?`, against a size or a bound it takes that.
 * 0 when neither is `?`. */
static int unbounded_pair(const shape *x, int i, const shape *y, int j, shape *result, int d)
{
	int xu = x->dim_kind[i] == DIM_UNBOUNDED, yu = y->dim_kind[j] == DIM_UNBOUNDED;
	if (!xu && !yu)
		return 0;
	const shape *o = xu ? y : x;
	int k = xu ? j : i;
	if ((xu && yu) || (o->dim_kind[k] == DIM_STATIC && o->dims[k] == 1)) {
		result->dims[d] = -1;
		result->dim_kind[d] = DIM_UNBOUNDED;
	} else {
		result->dims[d] = o->dims[k];
		result->dim_kind[d] = o->dim_kind[k];
	}
	return 1;
}

static void set_identity(operand *op, int rank, int offset)
{
	for (int j = 0; j < rank; j++)
		op->out_dim[j] = (int8_t)(j + offset);
}

/* Same rank, no broadcast_dimensions (or the identity). */
static int same_rank(checker *c, instr *in, const shape *lhs, const shape *rhs, shape *result)
{
	const int_list *bd = ck_ints(in, ATTR_BROADCAST_DIMENSIONS);
	char a[CK_SHAPE_TEXT], b[CK_SHAPE_TEXT];
	if (bd->present) {
		int identity = bd->n == lhs->rank;
		for (int i = 0; identity && i < bd->n; i++)
			identity = bd->v[i] == i;
		if (!identity) {
			ck_error(c, ck_attr_loc(c, bd->at, "broadcast_dimensions"),
				 "Broadcast dimensions field must either be not set or be the identity on binary operations with operands of the same rank.");
			return 1;
		}
	}
	result->rank = lhs->rank;
	for (int d = 0; d < lhs->rank; d++) {
		if (!unbounded_pair(lhs, d, rhs, d, result, d) &&
		    !degenerate(lhs->dims[d], rhs->dims[d], &result->dims[d])) {
			ck_error(c, in->op_at, "Binary op %s with incompatible shapes: %s and %s.",
				 opcode_name(in->op), ck_shape(a, lhs), ck_shape(b, rhs));
			return 1;
		}
	}
	set_identity(&in->ops[0], lhs->rank, 0);
	set_identity(&in->ops[1], rhs->rank, 0);
	return 0;
}

/* Whether NumPy's trailing alignment of `lo` into `hi` would be valid. */
static int numpy_aligned(const shape *lo, const shape *hi)
{
	int off = hi->rank - lo->rank;
	int64_t unused;
	for (int i = 0; i < lo->rank; i++)
		if (!degenerate(lo->dims[i], hi->dims[off + i], &unused))
			return 0;
	return 1;
}

/* Different ranks under XLA's rule: InDim broadcast of the lower-rank
 * operand through broadcast_dimensions, then the degenerate rule. */
static int different_rank(checker *c, instr *in, const shape *lhs, const shape *rhs, shape *result)
{
	const int_list *bd = ck_ints(in, ATTR_BROADCAST_DIMENSIONS);
	int lo_is_lhs = lhs->rank < rhs->rank;
	const shape *lo = lo_is_lhs ? lhs : rhs, *hi = lo_is_lhs ? rhs : lhs;
	operand *lo_op = &in->ops[lo_is_lhs ? 0 : 1], *hi_op = &in->ops[lo_is_lhs ? 1 : 0];
	char a[CK_SHAPE_TEXT], b[CK_SHAPE_TEXT];
	loc bd_at = ck_attr_loc(c, bd->at, "broadcast_dimensions");

	if (!bd->present) {
		if (lo->rank != 0) {
			strbuf m = STRBUF_INIT;
			/* XLA names the lower-rank operand first. */
			sb_printf(&m, "Shapes must be equal rank, but are %s and %s", ck_shape(a, lo),
				  ck_shape(b, hi));
			if (numpy_aligned(lo, hi)) {
				int64_t hint[HLOI_MAX_RANK];
				for (int i = 0; i < lo->rank; i++)
					hint[i] = hi->rank - lo->rank + i;
				sb_puts(&m, "; did you mean broadcast_dimensions=");
				list_text(&m, hint, lo->rank);
				sb_putc(&m, '?');
			} else {
				sb_putc(&m, '.');
			}
			if (m.oom)
				c->oom = 1;
			else
				ck_error(c, in->op_at, "%s", sb_str(&m));
			sb_free(&m);
			return 1;
		}
	} else {
		if (bd->n != lo->rank) {
			ck_error(c, bd_at,
				 "Size of broadcast_dimensions has to match lower-rank operand's rank; lower-rank operand's rank is %d, size of broadcast_dimensions is %d.",
				 lo->rank, bd->n);
			return 1;
		}
		/* one pass in XLA's order (InferInDimBroadcastShape): for each
		 * dimension its range, its size, then its order after the last */
		for (int i = 0; i < bd->n; i++) {
			if (bd->v[i] < 0) {
				ck_error(c, bd_at, "Broadcast dimension number (%lld) cannot be negative.",
					 (long long)bd->v[i]);
				return 1;
			}
			if (bd->v[i] >= hi->rank) {
				ck_error(c, bd_at,
					 "Broadcast dimension number (%lld) too large; higher-rank operand has rank %d.",
					 (long long)bd->v[i], hi->rank);
				return 1;
			}
			int64_t unused, hs = hi->dims[bd->v[i]];
			/* a `?` takes 1 or `?` (XLA's unbounded cases: f32[1] and
			 * f32[?,3] give f32[?,3], f32[2] and f32[?,3] a mismatch) */
			int hu = hi->dim_kind[bd->v[i]] == DIM_UNBOUNDED, lu = lo->dim_kind[i] == DIM_UNBOUNDED;
			if (hu ? !lu && lo->dims[i] != 1 : !lu && !degenerate(lo->dims[i], hs, &unused)) {
				char ls[24], hstext[24];
				ck_dim_text(ls, lo, i);
				ck_dim_text(hstext, hi, (int)bd->v[i]);
				ck_error(c, bd_at, "Broadcast dimension %d mismatch: %s != %s; %s and %s.", i, ls, hstext,
					 ck_shape(a, lo), ck_shape(b, hi));
				return 1;
			}
			if (i > 0 && bd->v[i] <= bd->v[i - 1]) {
				ck_error(c, bd_at, "Broadcast dimensions order is wrong: %lld comes after %lld.",
					 (long long)bd->v[i], (long long)bd->v[i - 1]);
				return 1;
			}
		}
	}
	result->rank = hi->rank;
	for (int d = 0; d < hi->rank; d++) {
		result->dims[d] = hi->dims[d];
		if (hi->dim_kind[d] == DIM_UNBOUNDED)
			result->dim_kind[d] = DIM_UNBOUNDED;
	}
	for (int i = 0; i < lo->rank; i++) {
		int t = (int)bd->v[i];
		if (!unbounded_pair(lo, i, hi, t, result, t))
			degenerate(lo->dims[i], hi->dims[t], &result->dims[t]);
		lo_op->out_dim[i] = (int8_t)t;
	}
	set_identity(hi_op, hi->rank, 0);
	return 0;
}

/* NumPy: align trailing dims, pad the shorter with leading 1s, then the
 * degenerate rule; NumPy's error text. */
static int numpy_rule(checker *c, instr *in, const shape *lhs, const shape *rhs, shape *result)
{
	int rank = lhs->rank > rhs->rank ? lhs->rank : rhs->rank;
	int ol = rank - lhs->rank, orr = rank - rhs->rank;
	result->rank = rank;
	for (int d = 0; d < rank; d++) {
		int64_t a = d >= ol ? lhs->dims[d - ol] : 1;
		int64_t b = d >= orr ? rhs->dims[d - orr] : 1;
		if (!degenerate(a, b, &result->dims[d])) {
			strbuf m = STRBUF_INIT;
			sb_puts(&m, "operands could not be broadcast together with shapes ");
			numpy_tuple(&m, lhs);
			sb_putc(&m, ' ');
			numpy_tuple(&m, rhs);
			if (m.oom)
				c->oom = 1;
			else
				ck_error(c, in->op_at, "%s", sb_str(&m));
			sb_free(&m);
			return 1;
		}
	}
	set_identity(&in->ops[0], lhs->rank, ol);
	set_identity(&in->ops[1], rhs->rank, orr);
	return 0;
}

int check_binary_shapes(checker *c, instr *in, const shape *lhs, const shape *rhs, shape *result)
{
	int err;
	memset(result->dim_kind, 0, sizeof result->dim_kind);
	if (c->mode == HLOI_BROADCAST_NUMPY && !instr_ints(in, ATTR_BROADCAST_DIMENSIONS))
		err = numpy_rule(c, in, lhs, rhs, result);
	else if (lhs->rank == rhs->rank)
		err = same_rank(c, in, lhs, rhs, result);
	else
		err = different_rank(c, in, lhs, rhs, result);
	if (!err && c->strict) {
		/* XLA's verifier: operands must already have the result's dims
		 * (whichever are dynamic: ShapeUtil::Compatible). */
		for (int k = 0; k < 2 && !err; k++) {
			const shape *s = k ? rhs : lhs;
			if (shape_same_bounds(s, result))
				continue;
			char a[CK_SHAPE_TEXT], b[CK_SHAPE_TEXT];
			shape r = *result;
			r.type = in->op == OP_COMPARE ? ET_PRED : s->type;
			ck_error(c, in->op_at,
				 "Implicit broadcast is not allowed in HLO. Found different shapes for instruction %s; output: %s, operand: %s",
				 in->name, ck_shape(a, &r), ck_shape(b, s));
			err = 1;
		}
	}
	if (err)
		operands_note(c, in, lhs, rhs);
	return err;
}

void ck_dim_text(char out[24], const shape *s, int d)
{
	if (s->dim_kind[d] == DIM_UNBOUNDED)
		snprintf(out, 24, "?");
	else
		snprintf(out, 24, "%lld", (long long)s->dims[d]);
}

int check_broadcast_shapes(checker *c, instr *in, const shape *opnd, const shape *result)
{
	const int_list *dl = ck_ints(in, ATTR_DIMENSIONS);
	char a[CK_SHAPE_TEXT];
	/* the result needs sizes or bounds (XLA's InferBroadcastShape refuses
	 * an output that is_unbounded_dynamic) */
	if (shape_has_unbounded(result)) {
		ck_error(c, in->op_at, "broadcast to %s: a `?` dimension has no size to broadcast to (XLA: the output must not be is_unbounded_dynamic)",
			 ck_shape(a, result));
		return 1;
	}
	if (!dl->present) {
		if (opnd->rank != 0) {
			ck_error(c, in->op_at, "attribute dimensions is expected but not seen");
			return 1;
		}
		return 0;
	}
	loc at = ck_attr_loc(c, dl->at, "dimensions");
	if (dl->n != opnd->rank) {
		strbuf m = STRBUF_INIT;
		sb_puts(&m, "broadcast dimensions=");
		list_text(&m, dl->v, dl->n);
		sb_printf(&m, " has %d entries but the operand %s has rank %d", dl->n, ck_shape(a, opnd),
			  opnd->rank);
		if (m.oom)
			c->oom = 1;
		else
			ck_error(c, at, "%s", sb_str(&m));
		sb_free(&m);
		return 1;
	}
	for (int j = 0; j < dl->n; j++) {
		if (dl->v[j] < 0 || dl->v[j] >= result->rank) {
			ck_error(c, at, "broadcast dimension %lld out of range for result %s",
				 (long long)dl->v[j], ck_shape(a, result));
			return 1;
		}
	}
	for (int j = 0; j < dl->n; j++) {
		int64_t d = dl->v[j], os = opnd->dims[j], rs = result->dims[d];
		/* an operand's `?` takes the result's size or bound */
		if (opnd->dim_kind[j] == DIM_UNBOUNDED)
			continue;
		/* Size 1 stretching is StableHLO's broadcast_in_dim (an extension). */
		if (os != rs && (os != 1 || c->strict)) {
			ck_error(c, at,
				 "broadcast operand dimension %d (size %lld) does not match result dimension %lld (size %lld)",
				 j, (long long)os, (long long)d, (long long)rs);
			return 1;
		}
	}
	if (in->nops < 1 || !in->ops)
		return 1; /* not reached: the broadcast has its operand */
	int8_t *out_dim = in->ops[0].out_dim;
	for (int j = 0; j < dl->n && j < HLOI_MAX_RANK; j++)
		out_dim[j] = (int8_t)dl->v[j];
	return 0;
}
