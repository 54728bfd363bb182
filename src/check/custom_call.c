/* The shape rule of custom-call. The target is looked up in the registry
 * (ir/custom_calls.def, then the embedder's hloi_custom_call_register): a
 * known target's operands are checked and the result it gives is compared
 * with the written one (custom-call always has its result written, as in
 * XLA); an unknown target is refused naming it when a run needs it. The
 * messages are hloi's: XLA's verifier leaves custom-calls to their targets. */
#include <stdio.h>
#include <string.h>

#include "check/check_internal.h"

/* A built-in target's rule: checks the operands of `in` and sets *want to
 * the result the target gives. 0 when it can, 1 after a type error, 2 when
 * hloi cannot run the call (reported by the caller as unsupported). */
typedef int (*cc_rule)(checker *c, instr *in, const char *name, etype t, shape *want);

static const shape *opnd(const instr *in, int k)
{
	return in->ops[k].def->result;
}

static int count_operands(checker *c, const instr *in, const char *name, int n)
{
	if (in->nops == n)
		return 1;
	ck_error(c, in->op_at, "custom-call target '%s' takes %d operand%s, but has %d", name, n, n == 1 ? "" : "s",
		 in->nops);
	return 0;
}

static shape *tuple_want(checker *c, shape *want, int n)
{
	shape *el = arena_array(&c->m->arena, (size_t)n, sizeof *el);
	if (!el) {
		c->oom = 1;
		return NULL;
	}
	memset(want, 0, sizeof *want);
	want->type = ET_TUPLE;
	want->ntuple = n;
	want->tuple = el;
	return el;
}

static int cc_check_identity(checker *c, instr *in, const char *name, etype t, shape *want)
{
	(void)c;
	(void)name;
	(void)t;
	if (in->nops != 1)
		return 2;
	*want = *opnd(in, 0);
	return 0;
}

/* The check dialect's (actual, expected): two arrays of one type and
 * dimensions. */
static int check_pair(checker *c, instr *in, const char *name)
{
	char a[CK_SHAPE_TEXT], b[CK_SHAPE_TEXT];
	if (!count_operands(c, in, name, 2))
		return 1;
	const shape *x = opnd(in, 0), *y = opnd(in, 1);
	if (!shape_is_array(x) || !shape_is_array(y) || x->type != y->type || !shape_same_dims(x, y)) {
		ck_error(c, in->op_at, "custom-call target '%s' compares arrays of one type and shape, not %s and %s",
			 name, ck_shape(a, x), ck_shape(b, y));
		return 1;
	}
	return 0;
}

static int cc_check_check_expect(checker *c, instr *in, const char *name, etype t, shape *want)
{
	(void)t;
	if (check_pair(c, in, name))
		return 1;
	memset(want, 0, sizeof *want);
	want->type = ET_TUPLE;
	return 0;
}

static int cc_check_check_eq(checker *c, instr *in, const char *name, etype t, shape *want)
{
	(void)t;
	if (check_pair(c, in, name))
		return 1;
	shape_make_array(want, ET_PRED, 0, NULL);
	return 0;
}

/* AllocateBuffer(): no operand; the written shape, which it needs. */
static int cc_check_allocate_buffer(checker *c, instr *in, const char *name, etype t, shape *want)
{
	(void)t;
	if (!count_operands(c, in, name, 0))
		return 1;
	if (!in->has_shape) {
		ck_error(c, in->op_at, "custom-call target '%s' takes its shape from the result written", name);
		return 1;
	}
	*want = *in->shape;
	return 0;
}

/* Pin(x): the buffer b(x) holding x's array; Unpin(b(x)): the array. */
static int pin_unpin(checker *c, instr *in, const char *name, int pin, shape *want)
{
	char a[CK_SHAPE_TEXT];
	if (!count_operands(c, in, name, 1))
		return 1;
	const shape *x = opnd(in, 0);
	if (!shape_is_array(x) || x->type == ET_TOKEN || x->is_buffer == pin) {
		ck_error(c, in->ops[0].at, "custom-call target '%s' takes %s, but operand 0 is %s", name,
			 pin ? "an array" : "a buffer b(...)", ck_shape(a, x));
		return 1;
	}
	*want = *x;
	want->is_buffer = pin;
	return 0;
}

static int cc_check_pin(checker *c, instr *in, const char *name, etype t, shape *want)
{
	(void)t;
	return pin_unpin(c, in, name, 1, want);
}

static int cc_check_unpin(checker *c, instr *in, const char *name, etype t, shape *want)
{
	(void)t;
	return pin_unpin(c, in, name, 0, want);
}

/* CreateBuffer(): no operand; the written buffer shape b(...). */
static int cc_check_create_buffer(checker *c, instr *in, const char *name, etype t, shape *want)
{
	char a[CK_SHAPE_TEXT];
	if (cc_check_allocate_buffer(c, in, name, t, want))
		return 1;
	if (!want->is_buffer) {
		ck_error(c, in->op_at, "custom-call target '%s' gives a buffer b(...), but the result is declared %s",
			 name, ck_shape(a, in->shape));
		return 1;
	}
	return 0;
}

/* SliceToDynamic(x, size...): x with one s32 scalar size per dimension; the
 * result is x's type and bounds, its `<=N` dimensions the written ones. */
static int cc_check_slice_to_dynamic(checker *c, instr *in, const char *name, etype t, shape *want)
{
	(void)t;
	char a[CK_SHAPE_TEXT];
	if (in->nops < 1) {
		ck_error(c, in->op_at, "custom-call target '%s' takes an operand and an s32[] size per dimension, but has no operand",
			 name);
		return 1;
	}
	if (!ck_array_operand(c, in, 0))
		return 1;
	const shape *x = opnd(in, 0);
	if (!count_operands(c, in, name, 1 + x->rank))
		return 1;
	for (int k = 1; k < in->nops; k++) {
		const shape *s = opnd(in, k);
		if (shape_is_tuple(s) || s->rank != 0 || s->type != ET_S32) {
			ck_error(c, in->ops[k].at, "custom-call target '%s' takes an s32[] size per dimension; operand %d is %s",
				 name, k, ck_shape(a, s));
			return 1;
		}
	}
	*want = *x;
	const shape *r = in->shape;
	if (shape_is_array(r) && r->rank == x->rank)
		for (int d = 0; d < x->rank; d++)
			want->dim_kind[d] = r->dim_kind[d];
	return 0;
}

/* PadToStatic(x): the tuple of x with its bounds as static dimensions and
 * an s32[] size per dimension. */
static int cc_check_pad_to_static(checker *c, instr *in, const char *name, etype t, shape *want)
{
	(void)t;
	if (!count_operands(c, in, name, 1) || !ck_array_operand(c, in, 0))
		return 1;
	const shape *x = opnd(in, 0);
	shape *el = tuple_want(c, want, 1 + x->rank);
	if (!el)
		return 1;
	shape_make_array(&el[0], x->type, x->rank, x->dims);
	for (int d = 0; d < x->rank; d++)
		shape_make_array(&el[1 + d], ET_S32, 0, NULL);
	return 0;
}

/* TopK(x): (T[..., k], s32[..., k]), k the written result's last dimension,
 * x of rank 1 or more and an ordered type. */
static int cc_check_topk(checker *c, instr *in, const char *name, etype t, shape *want)
{
	(void)t;
	char a[CK_SHAPE_TEXT];
	if (!count_operands(c, in, name, 1) || !ck_array_operand(c, in, 0))
		return 1;
	const shape *x = opnd(in, 0);
	if (x->rank < 1 || etype_get_kind(x->type) == KIND_COMPLEX || x->type == ET_PRED) {
		ck_error(c, in->ops[0].at, "custom-call target '%s' needs an operand of rank 1 or more of an ordered type; got %s",
			 name, ck_shape(a, x));
		return 1;
	}
	const shape *r = in->shape;
	if (!shape_is_tuple(r) || r->ntuple != 2 || shape_is_tuple(&r->tuple[0]) || r->tuple[0].rank != x->rank) {
		ck_error(c, in->op_at, "custom-call target '%s' gives a tuple of the values and their s32 indices, of the operand's rank %d; the result is declared %s",
			 name, x->rank, ck_shape(a, r));
		return 1;
	}
	int64_t k = r->tuple[0].dims[x->rank - 1];
	if (k > x->dims[x->rank - 1]) {
		ck_error(c, in->op_at, "custom-call target '%s': k=%lld (the result's last dimension) is larger than the operand's last dimension, %lld",
			 name, (long long)k, (long long)x->dims[x->rank - 1]);
		return 1;
	}
	shape *el = tuple_want(c, want, 2);
	if (!el)
		return 1;
	int64_t d[HLOI_MAX_RANK];
	memcpy(d, x->dims, sizeof(int64_t) * (size_t)x->rank);
	d[x->rank - 1] = k;
	shape_make_array(&el[0], x->type, x->rank, d);
	shape_make_array(&el[1], ET_S32, x->rank, d);
	return 0;
}

/* A LAPACK target's one matrix operand: of the target's type, rank 2 or
 * more (the leading dimensions are a batch), square when asked. */
static int lapack_operand(checker *c, const instr *in, const char *name, etype t, int square)
{
	char a[CK_SHAPE_TEXT];
	if (!ck_array_operand(c, in, 0))
		return 0;
	const shape *x = opnd(in, 0);
	if (x->type != t || x->rank < 2) {
		ck_error(c, in->ops[0].at, "custom-call target '%s' takes %s matrices (rank 2 or more, the leading dimensions a batch); got %s",
			 name, etype_name(t), ck_shape(a, x));
		return 0;
	}
	if (square && x->dims[x->rank - 1] != x->dims[x->rank - 2]) {
		ck_error(c, in->ops[0].at, "custom-call target '%s' takes square matrices; got %s", name, ck_shape(a, x));
		return 0;
	}
	return 1;
}

/* the operand's batch dimensions and `extra` more */
static void batch_shape(shape *s, etype t, const shape *x, int nextra, const int64_t *extra)
{
	int64_t d[HLOI_MAX_RANK];
	int nb = x->rank - 2;
	memcpy(d, x->dims, sizeof(int64_t) * (size_t)nb);
	for (int i = 0; i < nextra; i++)
		d[nb + i] = extra[i];
	shape_make_array(s, t, nb + nextra, d);
}

/* The start of a rule of a LAPACK target of one matrix operand giving a
 * tuple of `n` results, the first the operand's shape: the elements of
 * *want, or NULL after an error. */
static shape *one_matrix(checker *c, instr *in, const char *name, etype t, int square, int n, shape *want)
{
	if (!count_operands(c, in, name, 1) || !lapack_operand(c, in, name, t, square))
		return NULL;
	shape *el = tuple_want(c, want, n);
	if (el) {
		el[0] = *opnd(in, 0);
		el[0].has_layout = 0;
	}
	return el;
}

/* The real type of a LAPACK type (eigenvalues, singular values). */
static etype real_of(etype t)
{
	return t == ET_C64 ? ET_F32 : t == ET_C128 ? ET_F64 : t;
}

/* A backend_config integer `key` that is one of a and b, else an error
 * naming them. */
static int config_char(checker *c, const instr *in, const char *name, const char *key, int64_t a, int64_t b,
		       const char *meaning)
{
	int64_t v;
	if (custom_call_config_int(instr_text(in, ATTR_BACKEND_CONFIG), key, &v) && (v == a || v == b))
		return 1;
	ck_error(c, instr_attr_loc(in, ATTR_BACKEND_CONFIG), "custom-call target '%s' needs backend_config={%s = %lld : ui8} or %lld (%s)",
		 name, key, (long long)a, (long long)b, meaning);
	return 0;
}

/* getrf(a [..., m, n]): (lu [..., m, n], s32 ipiv [..., min(m, n)], s32 info [...]) */
static int cc_check_getrf(checker *c, instr *in, const char *name, etype t, shape *want)
{
	shape *el = one_matrix(c, in, name, t, 0, 3, want);
	if (!el)
		return 1;
	const shape *x = opnd(in, 0);
	int64_t m = x->dims[x->rank - 2], n = x->dims[x->rank - 1], k = m < n ? m : n;
	batch_shape(&el[1], ET_S32, x, 1, &k);
	batch_shape(&el[2], ET_S32, x, 0, NULL);
	return 0;
}

/* potrf(a [..., n, n]), uplo: (l or u [..., n, n], s32 info [...]) */
static int cc_check_potrf(checker *c, instr *in, const char *name, etype t, shape *want)
{
	shape *el = one_matrix(c, in, name, t, 1, 2, want);
	if (!el || !config_char(c, in, name, "uplo", 'L', 'U', "L, the lower triangle, or U, the upper"))
		return 1;
	batch_shape(&el[1], ET_S32, opnd(in, 0), 0, NULL);
	return 0;
}

/* geqrf(a [..., m, n]): (a [..., m, n], tau [..., min(m, n)]) */
static int cc_check_geqrf(checker *c, instr *in, const char *name, etype t, shape *want)
{
	shape *el = one_matrix(c, in, name, t, 0, 2, want);
	if (!el)
		return 1;
	const shape *x = opnd(in, 0);
	int64_t m = x->dims[x->rank - 2], n = x->dims[x->rank - 1], k = m < n ? m : n;
	batch_shape(&el[1], t, x, 1, &k);
	return 0;
}

/* geqp3(a [..., m, n], s32 jpvt [..., n]): (a [..., m, n], s32 jpvt
 * [..., n], tau [..., min(m, n)]) */
static int cc_check_geqp3(checker *c, instr *in, const char *name, etype t, shape *want)
{
	char a[CK_SHAPE_TEXT], b[CK_SHAPE_TEXT];
	if (!count_operands(c, in, name, 2) || !lapack_operand(c, in, name, t, 0) || !ck_array_operand(c, in, 1))
		return 1;
	const shape *x = opnd(in, 0), *jpvt = opnd(in, 1);
	int64_t m = x->dims[x->rank - 2], n = x->dims[x->rank - 1], k = m < n ? m : n;
	if (jpvt->type != ET_S32 || jpvt->rank != x->rank - 1 || jpvt->dims[jpvt->rank - 1] != n ||
	    memcmp(jpvt->dims, x->dims, sizeof(int64_t) * (size_t)(x->rank - 2)) != 0) {
		ck_error(c, in->ops[1].at, "custom-call target '%s' takes s32 jpvt of the matrices' batch and %lld elements each; got %s for %s",
			 name, (long long)n, ck_shape(a, jpvt), ck_shape(b, x));
		return 1;
	}
	shape *el = tuple_want(c, want, 3);
	if (!el)
		return 1;
	el[0] = *x;
	el[0].has_layout = 0;
	batch_shape(&el[1], ET_S32, x, 1, &n);
	batch_shape(&el[2], t, x, 1, &k);
	return 0;
}

/* orgqr(a [..., m, n], tau [..., k]) with k <= n <= m: q [..., m, n] */
static int cc_check_orgqr(checker *c, instr *in, const char *name, etype t, shape *want)
{
	char a[CK_SHAPE_TEXT], b[CK_SHAPE_TEXT];
	if (!count_operands(c, in, name, 2) || !lapack_operand(c, in, name, t, 0) || !ck_array_operand(c, in, 1))
		return 1;
	const shape *x = opnd(in, 0), *tau = opnd(in, 1);
	int64_t m = x->dims[x->rank - 2], n = x->dims[x->rank - 1];
	int ok = tau->type == t && tau->rank == x->rank - 1 && tau->dims[tau->rank - 1] <= n &&
		 memcmp(tau->dims, x->dims, sizeof(int64_t) * (size_t)(x->rank - 2)) == 0;
	if (!ok) {
		ck_error(c, in->ops[1].at, "custom-call target '%s' takes tau of the matrices' batch and at most %lld elements each, of type %s; got %s for %s",
			 name, (long long)n, etype_name(t), ck_shape(a, tau), ck_shape(b, x));
		return 1;
	}
	if (n > m) {
		ck_error(c, in->ops[0].at, "custom-call target '%s' takes matrices with no more columns than rows; got %s",
			 name, ck_shape(a, x));
		return 1;
	}
	*want = *x;
	want->has_layout = 0;
	return 0;
}

/* A backend_config boolean `key`, else an error saying what it means. */
static int config_bool(checker *c, const instr *in, const char *name, const char *key, const char *meaning, int *v)
{
	if (custom_call_config_bool(instr_text(in, ATTR_BACKEND_CONFIG), key, v))
		return 1;
	ck_error(c, instr_attr_loc(in, ATTR_BACKEND_CONFIG), "custom-call target '%s' needs backend_config={%s = true} or false (%s)",
		 name, key, meaning);
	return 0;
}

/* ormqr(a [..., m, n], tau [..., k], c [..., p, q]) with left (p = m) or
 * not (q = m) and k <= min(m, n) (LAPACK's K <= M, A of K columns):
 * c's shape. The rows rule and its words are jax.lax.linalg.ormqr's. */
static int cc_check_ormqr(checker *c, instr *in, const char *name, etype t, shape *want)
{
	char a[CK_SHAPE_TEXT], b[CK_SHAPE_TEXT];
	int left, tr;
	if (!count_operands(c, in, name, 3) || !lapack_operand(c, in, name, t, 0) || !ck_array_operand(c, in, 1) ||
	    !ck_array_operand(c, in, 2))
		return 1;
	const shape *x = opnd(in, 0), *tau = opnd(in, 1), *cm = opnd(in, 2);
	int nb = x->rank - 2;
	int64_t m = x->dims[nb], n = x->dims[nb + 1], mn = m < n ? m : n;
	size_t bb = sizeof(int64_t) * (size_t)nb;
	if (tau->type != t || tau->rank != nb + 1 || tau->dims[nb] > mn || memcmp(tau->dims, x->dims, bb) != 0) {
		ck_error(c, in->ops[1].at, "custom-call target '%s' takes tau of the matrices' batch and at most %lld elements each, of type %s; got %s for %s",
			 name, (long long)mn, etype_name(t), ck_shape(a, tau), ck_shape(b, x));
		return 1;
	}
	if (cm->type != t || cm->rank != x->rank || memcmp(cm->dims, x->dims, bb) != 0) {
		ck_error(c, in->ops[2].at, "custom-call target '%s' takes c of the matrices' type and batch; got %s for %s",
			 name, ck_shape(a, cm), ck_shape(b, x));
		return 1;
	}
	if (!config_bool(c, in, name, "left", "true: q c, false: c q", &left) ||
	    !config_bool(c, in, name, "transpose", "true: q^T, or q^H of complex types, for q", &tr))
		return 1;
	if (left && cm->dims[nb] != m) {
		ck_error(c, in->ops[2].at, "ormqr with left=True expects c to have the same number of rows as the Householder matrix a. Got a shape %s and c shape %s.",
			 ck_shape(a, x), ck_shape(b, cm));
		return 1;
	}
	if (!left && cm->dims[nb + 1] != m) {
		ck_error(c, in->ops[2].at, "ormqr with left=False expects c to have the same number of columns as the Householder matrix a has rows. Got a shape %s and c shape %s.",
			 ck_shape(a, x), ck_shape(b, cm));
		return 1;
	}
	*want = *cm;
	want->has_layout = 0;
	return 0;
}

/* syevd(a [..., n, n]), uplo, mode: (vectors [..., n, n], real values
 * [..., n], s32 info [...]) */
static int cc_check_syevd(checker *c, instr *in, const char *name, etype t, shape *want)
{
	shape *el = one_matrix(c, in, name, t, 1, 3, want);
	if (!el || !config_char(c, in, name, "uplo", 'L', 'U', "L, the lower triangle, or U, the upper") ||
	    !config_char(c, in, name, "mode", 'V', 'N', "V, with eigenvectors, or N, without"))
		return 1;
	const shape *x = opnd(in, 0);
	int64_t n = x->dims[x->rank - 1];
	batch_shape(&el[1], real_of(t), x, 1, &n);
	batch_shape(&el[2], ET_S32, x, 0, NULL);
	return 0;
}

/* trsm(a [..., k, k], b [..., m, n][, alpha scalar]), side, uplo, trans_x,
 * diag: x [..., m, n], k = m (side L) or n (side R) */
static int cc_check_trsm(checker *c, instr *in, const char *name, etype t, shape *want)
{
	char a[CK_SHAPE_TEXT], b[CK_SHAPE_TEXT];
	if (in->nops != 2 && in->nops != 3) {
		ck_error(c, in->op_at, "custom-call target '%s' takes 2 operands (a, b) or 3 (a, b, alpha), but has %d", name,
			 in->nops);
		return 1;
	}
	if (!lapack_operand(c, in, name, t, 1) || !ck_array_operand(c, in, 1) ||
	    (in->nops == 3 && !ck_array_operand(c, in, 2)))
		return 1;
	int64_t side;
	if (!config_char(c, in, name, "side", 'L', 'R', "L, op(a) x = b, or R, x op(a) = b") ||
	    !config_char(c, in, name, "uplo", 'L', 'U', "L, the lower triangle, or U, the upper") ||
	    !config_char(c, in, name, "diag", 'N', 'U', "N, the diagonal read, or U, taken as ones"))
		return 1;
	int64_t tr;
	if (!custom_call_config_int(instr_text(in, ATTR_BACKEND_CONFIG), "trans_x", &tr) ||
	    (tr != 'N' && tr != 'T' && tr != 'C')) {
		ck_error(c, instr_attr_loc(in, ATTR_BACKEND_CONFIG),
			 "custom-call target '%s' needs backend_config={trans_x = 78 : ui8}, 84 or 67 (N, a; T, a^T; C, a^H)",
			 name);
		return 1;
	}
	custom_call_config_int(instr_text(in, ATTR_BACKEND_CONFIG), "side", &side);
	const shape *x = opnd(in, 0), *y = opnd(in, 1);
	int64_t k = x->dims[x->rank - 1];
	int ok = y->type == t && y->rank == x->rank &&
		 memcmp(x->dims, y->dims, sizeof(int64_t) * (size_t)(x->rank - 2)) == 0 &&
		 y->dims[side == 'L' ? y->rank - 2 : y->rank - 1] == k;
	if (!ok) {
		ck_error(c, in->ops[1].at, "custom-call target '%s' with side %c takes b of a's batch and type with %lld %s; got %s for a %s",
			 name, (int)side, (long long)k, side == 'L' ? "rows" : "columns", ck_shape(a, y), ck_shape(b, x));
		return 1;
	}
	if (in->nops == 3 && (opnd(in, 2)->rank != 0 || opnd(in, 2)->type != t)) {
		ck_error(c, in->ops[2].at, "custom-call target '%s' takes alpha as a %s scalar; got %s", name, etype_name(t),
			 ck_shape(a, opnd(in, 2)));
		return 1;
	}
	*want = *y;
	want->has_layout = 0;
	return 0;
}

/* gesdd(a [..., m, n]), mode: (a [..., m, n], s [..., k] real, u [..., m,
 * m or k], vt [..., n or k, n], s32 info [...]), k = min(m, n); with mode N
 * u and vt are not computed and may have either shape */
static int cc_check_gesdd(checker *c, instr *in, const char *name, etype t, shape *want)
{
	shape *el = one_matrix(c, in, name, t, 0, 5, want);
	if (!el)
		return 1;
	int64_t mode;
	if (!custom_call_config_int(instr_text(in, ATTR_BACKEND_CONFIG), "mode", &mode) ||
	    (mode != 'A' && mode != 'S' && mode != 'N')) {
		ck_error(c, instr_attr_loc(in, ATTR_BACKEND_CONFIG),
			 "custom-call target '%s' needs backend_config={mode = 65 : ui8}, 83 or 78 (A, full u and vt; S, reduced; N, none)",
			 name);
		return 1;
	}
	const shape *x = opnd(in, 0);
	int64_t m = x->dims[x->rank - 2], n = x->dims[x->rank - 1], k = m < n ? m : n;
	int64_t ud[2] = { m, mode == 'A' ? m : k }, vd[2] = { mode == 'A' ? n : k, n };
	const shape *r = in->shape;
	if (mode == 'N' && shape_is_tuple(r) && r->ntuple == 5) {
		/* u and vt are not computed: either shape is taken */
		const shape *u = &r->tuple[2], *v = &r->tuple[3];
		if (!shape_is_tuple(u) && u->rank == x->rank && u->dims[u->rank - 1] == m)
			ud[1] = m;
		if (!shape_is_tuple(v) && v->rank == x->rank && v->dims[v->rank - 2] == n)
			vd[0] = n;
	}
	batch_shape(&el[1], real_of(t), x, 1, &k);
	batch_shape(&el[2], t, x, 2, ud);
	batch_shape(&el[3], t, x, 2, vd);
	batch_shape(&el[4], ET_S32, x, 0, NULL);
	return 0;
}

/* gesvd: gesdd's operands and results (jaxlib's SVD by QR iteration) */
static int cc_check_gesvd(checker *c, instr *in, const char *name, etype t, shape *want)
{
	return cc_check_gesdd(c, in, name, t, want);
}

/* The complex type of a real LAPACK type (geev's eigenvectors). */
static etype complex_of(etype t)
{
	return t == ET_F32 ? ET_C64 : t == ET_F64 ? ET_C128 : t;
}

/* A square matrix operand of order 1 or more (the targets whose results
 * have n - 1 elements a matrix). */
static int order_one(checker *c, const instr *in, const char *name)
{
	char a[CK_SHAPE_TEXT];
	const shape *x = opnd(in, 0);
	if (x->dims[x->rank - 1] >= 1)
		return 1;
	ck_error(c, in->ops[0].at, "custom-call target '%s' takes matrices of order 1 or more; got %s", name,
		 ck_shape(a, x));
	return 0;
}

/* geev(a [..., n, n]), compute_left, compute_right: real types (wr, wi
 * [..., n], vl, vr [..., n, n] complex, s32 info [...]); complex types (w,
 * vl, vr, info) */
static int cc_check_geev(checker *c, instr *in, const char *name, etype t, shape *want)
{
	int cplx = t == ET_C64 || t == ET_C128, nres = cplx ? 4 : 5;
	shape *el = one_matrix(c, in, name, t, 1, nres, want);
	if (!el || !config_char(c, in, name, "compute_left", 'V', 'N', "V, the left eigenvectors, or N, none") ||
	    !config_char(c, in, name, "compute_right", 'V', 'N', "V, the right eigenvectors, or N, none"))
		return 1;
	const shape *x = opnd(in, 0);
	int64_t n = x->dims[x->rank - 1];
	int k = 0;
	batch_shape(&el[k++], t, x, 1, &n);
	if (!cplx)
		batch_shape(&el[k++], t, x, 1, &n);
	el[k] = *x;
	el[k].type = complex_of(t);
	el[k].has_layout = 0;
	el[k + 1] = el[k];
	batch_shape(&el[k + 2], ET_S32, x, 0, NULL);
	return 0;
}

/* gees(a [..., n, n]), mode, sort: real types (t, vs, wr, wi [..., n],
 * s32 sdim [...], s32 info [...]); complex types (t, vs, w, sdim, info) */
static int cc_check_gees(checker *c, instr *in, const char *name, etype t, shape *want)
{
	int cplx = t == ET_C64 || t == ET_C128, nres = cplx ? 5 : 6;
	shape *el = one_matrix(c, in, name, t, 1, nres, want);
	if (!el || !config_char(c, in, name, "mode", 'V', 'N', "V, with the Schur vectors, or N, without"))
		return 1;
	int64_t sort;
	if (!custom_call_config_int(instr_text(in, ATTR_BACKEND_CONFIG), "sort", &sort) || sort != 'N') {
		ck_error(c, instr_attr_loc(in, ATTR_BACKEND_CONFIG),
			 "custom-call target '%s' needs backend_config={sort = 78 : ui8} (N: ordering the eigenvalues is not implemented, as in jaxlib)",
			 name);
		return 1;
	}
	const shape *x = opnd(in, 0);
	int64_t n = x->dims[x->rank - 1];
	el[1] = el[0];
	int k = 2;
	batch_shape(&el[k++], t, x, 1, &n);
	if (!cplx)
		batch_shape(&el[k++], t, x, 1, &n);
	batch_shape(&el[k], ET_S32, x, 0, NULL);
	batch_shape(&el[k + 1], ET_S32, x, 0, NULL);
	return 0;
}

/* gehrd(a [..., n, n]), low, high with 1 <= low <= high <= n: (a, tau
 * [..., n - 1], s32 info [...]) */
static int cc_check_gehrd(checker *c, instr *in, const char *name, etype t, shape *want)
{
	shape *el = one_matrix(c, in, name, t, 1, 3, want);
	if (!el || !order_one(c, in, name))
		return 1;
	const shape *x = opnd(in, 0);
	int64_t n = x->dims[x->rank - 1], lo, hi, n1 = n - 1;
	const char *config = instr_text(in, ATTR_BACKEND_CONFIG);
	if (!custom_call_config_int(config, "low", &lo) || !custom_call_config_int(config, "high", &hi) || lo < 1 ||
	    lo > hi || hi > n) {
		ck_error(c, instr_attr_loc(in, ATTR_BACKEND_CONFIG),
			 "custom-call target '%s' needs backend_config={high = H : i32, low = L : i32} with 1 <= L <= H <= %lld (the order)",
			 name, (long long)n);
		return 1;
	}
	batch_shape(&el[1], t, x, 1, &n1);
	batch_shape(&el[2], ET_S32, x, 0, NULL);
	return 0;
}

/* sytrd(a [..., n, n]), uplo: (a, real d [..., n], real e [..., n - 1],
 * tau [..., n - 1], s32 info [...]) */
static int cc_check_sytrd(checker *c, instr *in, const char *name, etype t, shape *want)
{
	shape *el = one_matrix(c, in, name, t, 1, 5, want);
	if (!el || !order_one(c, in, name) ||
	    !config_char(c, in, name, "uplo", 'L', 'U', "L, the lower triangle, or U, the upper"))
		return 1;
	const shape *x = opnd(in, 0);
	int64_t n = x->dims[x->rank - 1], n1 = n - 1;
	batch_shape(&el[1], real_of(t), x, 1, &n);
	batch_shape(&el[2], real_of(t), x, 1, &n1);
	batch_shape(&el[3], t, x, 1, &n1);
	batch_shape(&el[4], ET_S32, x, 0, NULL);
	return 0;
}

/* gtsv(dl, d, du [..., m], b [..., m, n]): (dl, d, du, b, s32 info [...]) */
static int cc_check_gtsv(checker *c, instr *in, const char *name, etype t, shape *want)
{
	char a[CK_SHAPE_TEXT], b[CK_SHAPE_TEXT];
	if (!count_operands(c, in, name, 4))
		return 1;
	for (int k = 0; k < 4; k++)
		if (!ck_array_operand(c, in, k))
			return 1;
	const shape *y = opnd(in, 3);
	if (y->type != t || y->rank < 2) {
		ck_error(c, in->ops[3].at, "custom-call target '%s' takes b as %s matrices (rank 2 or more, the leading dimensions a batch); got %s",
			 name, etype_name(t), ck_shape(a, y));
		return 1;
	}
	int64_t m = y->dims[y->rank - 2];
	for (int k = 0; k < 3; k++) {
		const shape *v = opnd(in, k);
		if (v->type != t || v->rank != y->rank - 1 || v->dims[v->rank - 1] != m ||
		    memcmp(v->dims, y->dims, sizeof(int64_t) * (size_t)(y->rank - 2)) != 0) {
			ck_error(c, in->ops[k].at, "custom-call target '%s' takes %s of b's batch and %lld elements each (b's rows), of type %s; got %s for b %s",
				 name, k == 0 ? "dl" : k == 1 ? "d" : "du", (long long)m, etype_name(t), ck_shape(a, v),
				 ck_shape(b, y));
			return 1;
		}
	}
	shape *el = tuple_want(c, want, 5);
	if (!el)
		return 1;
	for (int k = 0; k < 4; k++) {
		el[k] = *opnd(in, k);
		el[k].has_layout = 0;
	}
	batch_shape(&el[4], ET_S32, y, 0, NULL);
	return 0;
}

/* XLA's DynamicConvolutionForward(input, kernel) and
 * DynamicReduceWindowSamePadding(input, init), which its dynamic padder
 * rewrites into a convolution or reduce-window whose window is padded for
 * the input's sizes: the shape rule of that op on the bounds (XLA's
 * messages); where the padding is recomputed (PADDING_SAME, a `<=N` input
 * dimension) the written size stands, as the written window pads for
 * another size. */
static int windowed_rule(checker *c, instr *in, const char *name, shape *want, int conv)
{
	if (!count_operands(c, in, name, 2))
		return 1;
	if (conv ? ck_infer_as(c, OP_CONVOLUTION, in, want) : ck_infer_as(c, OP_REDUCE_WINDOW, in, want))
		return 1;
	const char *pt = instr_text(in, ATTR_PADDING_TYPE);
	const shape *x = opnd(in, 0), *r = in->shape;
	if (!shape_is_array(want) || !shape_is_array(r) || r->rank != want->rank)
		return 0;
	const attr *la = instr_attr(in, ATTR_DIM_LABELS);
	int n = conv ? la->conv->nspatial : x->rank;
	for (int i = 0; i < n; i++) {
		int64_t xd = conv ? la->conv->input_spatial[i] : i, od = conv ? la->conv->output_spatial[i] : i;
		if (x->dim_kind[xd] != DIM_BOUNDED)
			continue;
		if (!conv || (pt && strcmp(pt, "PADDING_SAME") == 0))
			want->dims[od] = r->dims[od];
		want->dim_kind[od] = r->dim_kind[od];
	}
	return 0;
}

static int cc_check_dynamic_conv_forward(checker *c, instr *in, const char *name, etype t, shape *want)
{
	(void)t;
	return windowed_rule(c, in, name, want, 1);
}

static int cc_check_dynamic_reduce_window_same(checker *c, instr *in, const char *name, etype t, shape *want)
{
	(void)t;
	return windowed_rule(c, in, name, want, 0);
}

/* XLA's DynamicSelectAndScatterSamePadding(operand, source, init),
 * called_computations={select, scatter}: select-and-scatter's rule on the
 * bounds (XLA's messages); the result has the operand's shape, `<=N` where
 * it is. */
static int cc_check_dynamic_select_and_scatter_same(checker *c, instr *in, const char *name, etype t, shape *want)
{
	(void)t;
	if (!count_operands(c, in, name, 3) || ck_infer_as(c, OP_SELECT_AND_SCATTER, in, want))
		return 1;
	const shape *x = opnd(in, 0);
	for (int d = 0; d < x->rank && d < want->rank; d++)
		want->dim_kind[d] = x->dim_kind[d];
	return 0;
}

/* padding_type of XLA's dynamic convolution gradients: PADDING_SAME or
 * PADDING_VALID, the two its dynamic padder knows (TensorFlow writes no
 * other); 1 when given. */
static int grad_padding_type(checker *c, const instr *in, const char *name)
{
	const char *pt = instr_text(in, ATTR_PADDING_TYPE);
	if (pt && (strcmp(pt, "PADDING_SAME") == 0 || strcmp(pt, "PADDING_VALID") == 0))
		return 1;
	if (pt)
		ck_error(c, instr_attr_loc(in, ATTR_PADDING_TYPE),
			 "custom-call target '%s' takes padding_type=PADDING_SAME or PADDING_VALID, got %s", name, pt);
	else
		ck_error(c, in->op_at, "custom-call target '%s' takes padding_type=PADDING_SAME or PADDING_VALID, but has none",
			 name);
	return 0;
}

/* XLA's DynamicConvolutionInputGrad(input_sizes, grad, kernel): the
 * convolution of grad and kernel with the window and dim_labels written
 * (XLA's messages), input_sizes one s32 per dimension of the result, the
 * kernel static (XLA's dynamic padder checks it); the result is `<=N`
 * where the convolution's shape rule makes it (InferConvolveShape: the
 * output batch and spatial dimensions of grad's `<=N` ones), the sizes
 * input_sizes gives. */
static int cc_check_dynamic_conv_input_grad(checker *c, instr *in, const char *name, etype t, shape *want)
{
	char a[CK_SHAPE_TEXT];
	(void)t;
	if (!count_operands(c, in, name, 3) || !grad_padding_type(c, in, name))
		return 1;
	instr conv = *in;
	conv.ops = in->ops + 1;
	conv.nops = 2;
	if (ck_infer_as(c, OP_CONVOLUTION, &conv, want))
		return 1;
	const shape *sz = opnd(in, 0), *g = opnd(in, 1), *k = opnd(in, 2);
	if (!shape_is_array(sz) || sz->type != ET_S32 || sz->rank != 1 || !shape_is_static(sz) ||
	    sz->dims[0] != want->rank) {
		ck_error(c, in->ops[0].at,
			 "custom-call target '%s' takes the input sizes as s32[%d], one per dimension of the result; got %s",
			 name, want->rank, ck_shape(a, sz));
		return 1;
	}
	if (!shape_is_static(k)) {
		ck_error(c, in->ops[2].at, "custom-call target '%s' takes a static kernel (XLA's dynamic padder); got %s",
			 name, ck_shape(a, k));
		return 1;
	}
	const conv_dims *cd = instr_attr(in, ATTR_DIM_LABELS)->conv;
	if (g->dim_kind[cd->input_batch] == DIM_BOUNDED)
		want->dim_kind[cd->output_batch] = DIM_BOUNDED;
	for (int i = 0; i < cd->nspatial; i++)
		if (g->dim_kind[cd->input_spatial[i]] == DIM_BOUNDED)
			want->dim_kind[cd->output_spatial[i]] = DIM_BOUNDED;
	return 0;
}

/* XLA's DynamicConvolutionKernelGrad(activations, grad): the convolution
 * of the two with the window and dim_labels written (XLA's messages), a
 * static result (XLA's builder clears its dynamic dimensions); a spatial
 * dimension is `<=N` in both or in neither (XLA's dynamic padder checks
 * it: the window recomputed from the activations' size slides over the
 * gradient's elements within its size). */
static int cc_check_dynamic_conv_kernel_grad(checker *c, instr *in, const char *name, etype t, shape *want)
{
	char a[CK_SHAPE_TEXT], b[CK_SHAPE_TEXT];
	(void)t;
	if (!count_operands(c, in, name, 2) || !grad_padding_type(c, in, name) ||
	    ck_infer_as(c, OP_CONVOLUTION, in, want))
		return 1;
	const shape *x = opnd(in, 0), *g = opnd(in, 1);
	const conv_dims *cd = instr_attr(in, ATTR_DIM_LABELS)->conv;
	for (int i = 0; i < cd->nspatial; i++)
		if ((x->dim_kind[cd->input_spatial[i]] == DIM_BOUNDED) !=
		    (g->dim_kind[cd->kernel_spatial[i]] == DIM_BOUNDED)) {
			ck_error(c, in->ops[1].at,
				 "custom-call target '%s' takes a spatial dimension `<=N` in both operands or in neither: spatial dimension %d is dimension %lld of the activations %s and %lld of the gradient %s",
				 name, i, (long long)cd->input_spatial[i], ck_shape(a, x), (long long)cd->kernel_spatial[i],
				 ck_shape(b, g));
			return 1;
		}
	for (int d = 0; d < want->rank; d++)
		want->dim_kind[d] = DIM_STATIC;
	return 0;
}

static const cc_rule rules[CC_COUNT] = {
#define X(E, text, rule, type) [E] = cc_check_##rule,
#include "ir/custom_calls.def"
#undef X
};

/* An embedder's target: its check callback, when it has one. */
static int check_user(checker *c, instr *in, const hloi_custom_call *u)
{
	enum { MAX_OPS = 64 };
	const hloi_shape *small[MAX_OPS];
	const hloi_shape **ops = small;
	if (!u->check)
		return 0;
	if (in->nops > MAX_OPS && !(ops = arena_array(&c->m->arena, (size_t)in->nops, sizeof *ops))) {
		c->oom = 1;
		return 1;
	}
	for (int k = 0; k < in->nops; k++)
		ops[k] = opnd(in, k);
	char msg[512] = "";
	if (u->check(u->user_data, ops, (size_t)in->nops, in->shape, instr_text(in, ATTR_BACKEND_CONFIG), msg,
		     sizeof msg) == 0)
		return 0;
	msg[sizeof msg - 1] = 0;
	ck_error(c, in->op_at, "custom-call target '%s': %s", u->target, msg[0] ? msg : "its check refused the call");
	return 1;
}

int infer_custom_call(checker *c, instr *in, shape *inf)
{
	const char *t = instr_text(in, ATTR_CUSTOM_CALL_TARGET);
	if (!t) {
		ck_error(c, in->op_at, "attribute custom_call_target is expected but not seen");
		return 1;
	}
	if (!in->has_shape)
		return infer_declared(c, in, inf);
	const attr *a = instr_attr(in, ATTR_CUSTOM_CALL_TARGET);
	loc tat = ck_attr_loc(c, a->vat, "custom_call_target");
	size_t n;
	const char *s = custom_call_unquote(t, &n);
	char name[HLOI_CUSTOM_CALL_NAME_MAX + 1];
	snprintf(name, sizeof name, "%.*s", (int)n, s);
	int id = custom_call_builtin(t);
	if (id < 0) {
		const hloi_custom_call *u = custom_call_user(t);
		if (u)
			return check_user(c, in, u) ? 1 : infer_declared(c, in, inf);
		if (c->report_unsupported && custom_call_runs_callee(in)) {
			ck_note(c, tat, "custom-call target '%.*s' is not known: runs its called computation '%s', whose signature is the call's",
				(int)n, s, in->called[0]->name);
			return infer_declared(c, in, inf);
		}
		if (c->report_unsupported) {
			ck_unsupported(c, tat, "unsupported custom-call target '%.*s'", (int)n, s);
			return 1;
		}
		return infer_declared(c, in, inf);
	}
	for (int k = 0; k < in->nops; k++)
		if (opnd(in, k)->type == ET_TOKEN) {
			ck_error(c, in->ops[k].at, "custom-call target '%s' takes no token operand", name);
			return 1;
		}
	if (id != CC_PIN && id != CC_UNPIN && id != CC_CREATE_BUFFER) {
		for (int k = 0; k < in->nops; k++)
			if (shape_has_buffer(opnd(in, k))) {
				char x[CK_SHAPE_TEXT];
				ck_error(c, in->ops[k].at, "custom-call target '%s' takes no buffer: operand %d is %s", name,
					 k, ck_shape(x, opnd(in, k)));
				return 1;
			}
	}
	shape want;
	int r = rules[id](c, in, name, custom_call_builtin_type((cc_target)id), &want);
	if (r == 1)
		return 1;
	if (r == 2) {
		if (!c->report_unsupported)
			return infer_declared(c, in, inf);
		ck_unsupported(c, tat, "unsupported custom-call target '%s' with %d operands (hloi runs it as the identity of one)",
			       name, in->nops);
		return 1;
	}
	if (!shape_compatible(in->shape, &want)) {
		char x[CK_SHAPE_TEXT], y[CK_SHAPE_TEXT];
		ck_error(c, in->op_at, "custom-call target '%s' gives %s, but the result is declared %s", name,
			 ck_shape(x, &want), ck_shape(y, in->shape));
		return 1;
	}
	return infer_declared(c, in, inf);
}
