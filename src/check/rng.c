/* Shape rules of the random-number ops: rng, rng-bit-generator and
 * rng-get-and-update-state. Their result shapes are written (XLA's parser
 * cannot infer them); the messages are XLA's verifier's where it has one
 * (hlo_verifier.cc), and where it has none they say what XLA's expansion
 * of the op needs (doc/semantics.md, "Random numbers"). */
#include <string.h>

#include "check/check_internal.h"

/* The word attribute `id` is there, or an error at the opcode. */
static const char *needs_word(checker *c, const instr *in, attr_id id, const char *name)
{
	const char *w = instr_text(in, id);
	if (!w)
		ck_error(c, in->op_at, "attribute %s is expected but not seen", name);
	return w;
}

static loc attr_at(checker *c, const instr *in, attr_id id, const char *name)
{
	const attr *a = instr_attr(in, id);
	return a ? ck_attr_loc(c, a->vat, name) : in->op_at;
}

/* Whether XLA's CPU backend expands rng of type t: RngExpander turns f16
 * and bf16 into f32, and its distributions take f32, f64 and the 32- and
 * 64-bit integers (uniform only). */
static int rng_runs(etype t, int normal)
{
	switch (t) {
	case ET_F16:
	case ET_BF16:
	case ET_F32:
	case ET_F64:
		return 1;
	case ET_S32:
	case ET_U32:
	case ET_S64:
	case ET_U64:
		return !normal;
	default:
		return 0;
	}
}

int infer_rng(checker *c, instr *in, shape *inf)
{
	char a[CK_SHAPE_TEXT];
	if (in->nops != 2) {
		ck_error(c, in->op_at, "Expected 2 operands for rng instruction: %s", in->name);
		return 1;
	}
	if (!ck_array_operand(c, in, 0) || !ck_array_operand(c, in, 1) || !ck_needs_shape(c, in))
		return 1;
	const shape *s0 = in->ops[0].def->result, *s1 = in->ops[1].def->result;
	const char *dist = needs_word(c, in, ATTR_DISTRIBUTION, "distribution");
	if (!dist)
		return 1;
	if (!shape_is_scalar(s0) || !shape_is_scalar(s1)) {
		ck_error(c, in->op_at, "Expected scalar types for the two operands of Rng instruction: %s", in->name);
		return 1;
	}
	etype t = in->shape->type;
	if (s0->type != s1->type || s0->type != t) {
		ck_error(c, in->op_at,
			 "Expected compatible element types for the result and the two operands of Rng instruction: %s",
			 in->name);
		return 1;
	}
	int normal = strcmp(dist, "rng_normal") == 0;
	etype_kind k = etype_get_kind(t);
	if (!normal && k != KIND_FLOAT && k != KIND_SINT && k != KIND_UINT && k != KIND_PRED) {
		ck_error(c, in->op_at,
			 "Element type not supported. Expected element to be of floating point type, integral type or predicate type for RngUniform: %s",
			 in->name);
		return 1;
	}
	if (normal && k != KIND_FLOAT) {
		ck_error(c, in->op_at,
			 "Element type not supported. Expected element to be FloatingPointType for RngNormal: %s",
			 in->name);
		return 1;
	}
	if (c->report_unsupported && !rng_runs(t, normal))
		ck_unsupported(c, in->op_at,
			       "unsupported rng of %s: XLA's CPU backend expands rng_uniform of f16, bf16, f32, f64, s32, u32, s64 and u64, rng_normal of the four float types",
			       ck_shape(a, in->shape));
	*inf = *in->shape;
	c->keep_layout = 1;
	return 0;
}

int infer_rng_bit_generator(checker *c, instr *in, shape *inf)
{
	char a[CK_SHAPE_TEXT], b[CK_SHAPE_TEXT];
	if (!ck_array_operand(c, in, 0))
		return 1;
	if (!in->has_shape) {
		ck_error(c, in->op_at, "cannot infer shape for opcode: %s", opcode_name(in->op));
		return 1;
	}
	const shape *st = in->ops[0].def->result, *rs = in->shape;
	const char *alg = needs_word(c, in, ATTR_ALGORITHM, "algorithm");
	if (!alg)
		return 1;
	int three_fry = strcmp(alg, "rng_three_fry") == 0;
	if (!three_fry && strcmp(alg, "rng_philox") != 0 && strcmp(alg, "rng_default") != 0) {
		ck_error(c, attr_at(c, in, ATTR_ALGORITHM, "algorithm"),
			 "Unknown algorithm: %s (expected rng_default, rng_three_fry or rng_philox)", alg);
		return 1;
	}
	if (!shape_is_tuple(rs) || rs->ntuple != 2) {
		ck_error(c, in->op_at, "Expected tuple shape with 2 elements for RngBitGenerator. Got: %s",
			 ck_shape(a, rs));
		return 1;
	}
	if (!shape_compatible(st, &rs->tuple[0])) {
		ck_error(c, in->op_at,
			 "Expected state shape to match between input and output for RngBitGenerator. Got %s vs. %s",
			 ck_shape(a, st), ck_shape(b, &rs->tuple[0]));
		return 1;
	}
	/* XLA's expansion reads the key and counter as u64 words: ThreeFry
	 * (key, counter), Philox (key, counter) or (key, counter low, high) */
	int64_t n = st->rank == 1 ? st->dims[0] : 0;
	if (st->type != ET_U64 || st->rank != 1 || (three_fry ? n != 2 : n != 2 && n != 3)) {
		ck_error(c, in->op_at, "the state of rng-bit-generator with algorithm=%s must be %s; got %s", alg,
			 three_fry ? "u64[2]" : "u64[2] or u64[3]", ck_shape(a, st));
		return 1;
	}
	const shape *bits = &rs->tuple[1];
	etype_kind k = etype_get_kind(bits->type);
	if (shape_is_tuple(bits) || (k != KIND_SINT && k != KIND_UINT)) {
		ck_error(c, in->op_at, "rng-bit-generator makes integer bits; its second result is %s",
			 ck_shape(a, bits));
		return 1;
	}
	*inf = *rs;
	c->keep_layout = 1;
	return 0;
}

int infer_rng_state(checker *c, instr *in, shape *inf)
{
	char a[CK_SHAPE_TEXT];
	if (!in->has_shape) {
		ck_error(c, in->op_at, "cannot infer shape for opcode: %s", opcode_name(in->op));
		return 1;
	}
	const shape *rs = in->shape;
	if (shape_is_tuple(rs) || rs->type != ET_U64 || rs->rank != 1 || rs->dims[0] != 2) {
		ck_error(c, in->op_at, "Invalid RngGetAndUpdateState, expect result to have shape u64[2], got %s",
			 ck_shape(a, rs));
		return 1;
	}
	int64_t delta;
	if (!instr_int(in, ATTR_DELTA, &delta)) {
		ck_error(c, in->op_at, "attribute delta is expected but not seen");
		return 1;
	}
	*inf = *rs;
	c->keep_layout = 1;
	return 0;
}
