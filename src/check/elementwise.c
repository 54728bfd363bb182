/* Shape rules of the elementwise ops (XLA's shape_inference.cc: binary and
 * unary ops, compare, select, convert, bitcast-convert, copy) and the
 * element-type gates of doc/spec.md §4. */
#include <string.h>

#include "check/check_internal.h"

/* The message of type_message m for element type t of `in` (XLA's
 * shape inference words). */
static void type_message_error(checker *c, const instr *in, type_message m, etype t)
{
	const char *on = opcode_name(in->op), *tn = etype_name(t);
	char up[32];
	ck_type_upper(up, sizeof up, t);
	switch (m) {
	case TM_FLOATING:
		ck_error(c, in->op_at, "Expected element type in shape to be floating for %s operation; got %s.", on, up);
		break;
	case TM_FLOATING_OR_COMPLEX:
		ck_error(c, in->op_at, "Expected element type in shape to be floating or complex for %s operation; got %s.",
			 on, up);
		break;
	case TM_NUMBER:
		ck_error(c, in->op_at,
			 "Expected element type in shape to be integral, floating or complex for %s operation; got %s.", on,
			 up);
		break;
	case TM_SIGNED:
		ck_error(c, in->op_at, "Expected element type in shape to be signed or complex for %s operation; got %s.", on,
			 up);
		break;
	case TM_CLZ:
		ck_error(c, in->op_at, "Expected an integral element type in argument to Clz operation; got %s.", up);
		break;
	case TM_POPCNT:
		ck_error(c, in->op_at, "Expected an integral element type in argument to PopulationCount operation; got %s.",
			 up);
		break;
	case TM_NOT:
		ck_error(c, in->op_at, "Expected pred or an integral element type in argument to Not operation; got %s.", up);
		break;
	case TM_IS_FINITE:
		ck_error(c, in->op_at, "Expected element type in shape to be floating point for IsFinite operation; got %s.",
			 up);
		break;
	case TM_LOGICAL:
		ck_error(c, in->op_at, "Expected pred or integral type in argument to and/or/xor operation; got %s.", tn);
		break;
	case TM_INTEGRAL:
		ck_error(c, in->op_at, "Expected integral type for operation %s; got %s.", on, tn);
		break;
	case TM_FLOATING_POINT:
		ck_error(c, in->op_at, "Expected floating-point type for operation %s; got %s.", on, tn);
		break;
	case TM_COMPLEX_COMPOSE:
		ck_error(c, in->op_at,
			 "Expected element type in shape to be floating for complex compose operation; got %s.", up);
		break;
	case TM_NONE:
		ck_error(c, in->op_at, "Unknown operation for unary shape inference: \"%s\".", on);
		break;
	}
}

/* doc/spec.md §4's gates, from the opcode's `types` column (ir/opcodes.def): a
 * PRED operand of an arithmetic op, then a kind XLA's shape inference
 * does not take, then one its evaluator does not compute; 1 when refused.
 * The kinds computed are eval/scalar/scalar.h's (tests/unit/test_opcodes.c). */
static int type_gate(checker *c, const instr *in, etype t)
{
	const op_types *g = opcode_types(in->op);
	etype_kind k = etype_get_kind(t);
	char up[32];
	if (k == KIND_PRED && opcode_has(in->op, OPF_ARITHMETIC)) {
		ck_error(c, in->op_at, "Expected element type in shape to be arithmetic type for operation %s; got PRED.",
			 opcode_name(in->op));
		return 1;
	}
	if (!(g->takes & TK_OF(k))) {
		type_message_error(c, in, g->message, t);
		return 1;
	}
	if (!(g->evaluates & TK_OF(k))) {
		ck_error(c, in->op_at, "Unsupported type for %s: %s", opcode_name(in->op), ck_type_upper(up, sizeof up, t));
		return 1;
	}
	/* op-specific: complex(re, im) is built for f32 and f64 parts only */
	if (in->op == OP_COMPLEX && t != ET_F32 && t != ET_F64) {
		ck_unsupported(c, in->op_at, "Complex component type is not implemented.");
		return 1;
	}
	return 0;
}

cmp_type ck_default_cmp_type(etype t)
{
	switch (etype_get_kind(t)) {
	case KIND_SINT: return CMPT_SIGNED;
	case KIND_FLOAT:
	case KIND_COMPLEX: return CMPT_FLOAT;
	default: return CMPT_UNSIGNED;
	}
}

static int compare_attrs(checker *c, const instr *in, const shape *lhs)
{
	int err = 0;
	char a[CK_SHAPE_TEXT];
	cmp_direction dir = instr_direction(in);
	if (dir == CMP_NONE) {
		ck_error(c, in->op_at, "attribute direction is expected but not seen");
		err = 1;
	}
	if (etype_get_kind(lhs->type) == KIND_COMPLEX && dir != CMP_NONE && dir != CMP_EQ && dir != CMP_NE) {
		ck_error(c, instr_attr_loc(in, ATTR_DIRECTION),
			 "Complex types only support EQ and NE comparisons; got %s for %s.", cmp_direction_name(dir),
			 ck_shape(a, lhs));
		err = 1;
	}
	cmp_type t = instr_comparison_type(in);
	if (t != CMPT_NONE) {
		cmp_type def = ck_default_cmp_type(lhs->type);
		if (etype_get_kind(lhs->type) == KIND_COMPLEX && t != CMPT_FLOAT) {
			ck_error(c, instr_attr_loc(in, ATTR_TYPE), "Expected comparison type FLOAT; actual: %s, operand: %s.",
				 cmp_type_name(t), ck_shape(a, lhs));
			err = 1;
		} else if (def == CMPT_FLOAT && t != CMPT_FLOAT && t != CMPT_TOTALORDER) {
			ck_error(c, instr_attr_loc(in, ATTR_TYPE),
				 "Expected comparison type FLOAT or TOTALORDER; actual: %s, operand: %s.",
				 cmp_type_name(t), ck_shape(a, lhs));
			err = 1;
		} else if (def != CMPT_FLOAT && t != def) {
			ck_error(c, instr_attr_loc(in, ATTR_TYPE),
				 "Expected comparison type %s; actual: %s, operand: %s.", cmp_type_name(def),
				 cmp_type_name(t), ck_shape(a, lhs));
			err = 1;
		}
	}
	return err;
}

/* --- binary ops and compare ---------------------------------------------------- */

int infer_binary(checker *c, instr *in, shape *inf)
{
	for (int k = 0; k < in->nops; k++)
		if (!ck_array_operand(c, in, k))
			return 1;
	const shape *lhs = in->ops[0].def->result, *rhs = in->ops[1].def->result;
	char a[CK_SHAPE_TEXT], b[CK_SHAPE_TEXT];
	int err = 0;
	etype lt = lhs->type;
	if (c->mixed && lhs->type != rhs->type && etype_get_kind(lhs->type) == KIND_FLOAT &&
	    etype_get_kind(rhs->type) == KIND_FLOAT) {
		/* allow_mixed_precision: the higher precision (XLA's
		 * HigherPrecisionElementType); compare too, as XLA's
		 * InferBinaryOpShape checks it as the other binary ops */
		lt = etype_higher_precision(lhs->type, rhs->type);
		err = in->op == OP_COMPARE ? compare_attrs(c, in, lhs) : type_gate(c, in, lt);
	} else if (lhs->type != rhs->type) {
		ck_error(c, in->op_at, "Binary op %s with different element types: %s and %s.",
			 opcode_name(in->op), ck_shape(a, lhs), ck_shape(b, rhs));
		err = 1;
	} else if (in->op == OP_COMPARE) {
		err = compare_attrs(c, in, lhs);
	} else {
		err = type_gate(c, in, lhs->type);
	}
	if (check_binary_shapes(c, in, lhs, rhs, inf))
		err = 1;
	inf->type = in->op == OP_COMPARE ? ET_PRED : lt;
	/* a dimension `<=N` in both operands stays so; one static in either is
	 * static (XLA's InferMostSpecificDimAndBound) */
	if (!err && lhs->rank == rhs->rank && inf->rank == lhs->rank)
		for (int d = 0; d < inf->rank; d++)
			if (lhs->dim_kind[d] == DIM_BOUNDED && rhs->dim_kind[d] == DIM_BOUNDED)
				inf->dim_kind[d] = DIM_BOUNDED;
	if (in->op == OP_COMPLEX)
		inf->type = lhs->type == ET_F64 ? ET_C128 : ET_C64;
	return err;
}

/* --- unary ops --------------------------------------------------------------- */

/* XLA's InferUnaryOpShape: which element types each unary op takes and what
 * it returns (OPF_PRED_RESULT: pred; OPF_PART_RESULT, of complex: the part
 * type), with its messages; then what XLA's evaluator refuses (expm1 and
 * log1p of complex): the gate of the opcode's row. */
static int unary_type(checker *c, const instr *in, etype t, etype *rt)
{
	if (type_gate(c, in, t))
		return 1;
	*rt = t;
	if (opcode_has(in->op, OPF_PRED_RESULT))
		*rt = ET_PRED;
	else if (opcode_has(in->op, OPF_PART_RESULT) && etype_get_kind(t) == KIND_COMPLEX)
		*rt = t == ET_C64 ? ET_F32 : ET_F64;
	return 0;
}

/* The operand's dims; the element type by XLA's rules for the opcode. */
int infer_unary(checker *c, instr *in, shape *inf)
{
	if (!ck_array_operand(c, in, 0))
		return 1;
	const shape *op = in->ops[0].def->result;
	etype rt;
	if (unary_type(c, in, op->type, &rt))
		return 1;
	shape_make_array(inf, rt, op->rank, op->dims);
	memcpy(inf->dim_kind, op->dim_kind, sizeof inf->dim_kind);  /* `<=N` stays (XLA: the operand's shape) */
	ck_identity_out_dims(in);
	return 0;
}

/* reduce-precision(x), exponent_bits=, mantissa_bits=: a float x, at least
 * one exponent bit, no negative mantissa bits (XLA's
 * InferReducePrecisionShape); the written shape is required, as XLA's
 * parser requires it. */
int infer_reduce_precision(checker *c, instr *in, shape *inf)
{
	if (!ck_array_operand(c, in, 0))
		return 1;
	const shape *op = in->ops[0].def->result;
	int64_t eb = 0, mb = 0;
	int err = 0;
	char up[32];
	if (!instr_int(in, ATTR_EXPONENT_BITS, &eb)) {
		ck_error(c, in->op_at, "attribute exponent_bits is expected but not seen");
		err = 1;
	}
	if (!instr_int(in, ATTR_MANTISSA_BITS, &mb)) {
		ck_error(c, in->op_at, "attribute mantissa_bits is expected but not seen");
		err = 1;
	}
	if (err)
		return 1;
	if (etype_get_kind(op->type) != KIND_FLOAT) {
		ck_error(c, in->op_at,
			 "Expected element type in shape to be floating point for ReducePrecision operation; got %s.",
			 ck_type_upper(up, sizeof up, op->type));
		return 1;
	}
	if (eb < 1) {
		ck_error(c, instr_attr_loc(in, ATTR_EXPONENT_BITS), "Expected exponent_bits >= 1; got %lld.", (long long)eb);
		return 1;
	}
	if (mb < 0) {
		ck_error(c, instr_attr_loc(in, ATTR_MANTISSA_BITS), "Expected non-negative mantissa_bits; got %lld.",
			 (long long)mb);
		return 1;
	}
	if (eb > INT32_MAX || mb > INT32_MAX) {
		/* XLA keeps them in an int32 field */
		ck_error(c, instr_attr_loc(in, eb > INT32_MAX ? ATTR_EXPONENT_BITS : ATTR_MANTISSA_BITS),
			 "%s %lld is out of range (at most %d)", eb > INT32_MAX ? "exponent_bits" : "mantissa_bits",
			 (long long)(eb > INT32_MAX ? eb : mb), INT32_MAX);
		return 1;
	}
	if (!ck_needs_shape(c, in))
		return 1;
	shape_make_array(inf, op->type, op->rank, op->dims);
	ck_identity_out_dims(in);
	return 0;
}

/* stochastic-convert(x, random): x float, random unsigned of x's bit width
 * and dims; the result takes the written type, a signed integer (XLA's
 * InferStochasticConvertShape, then what its evaluator implements). */
int infer_stochastic_convert(checker *c, instr *in, shape *inf)
{
	char a[CK_SHAPE_TEXT], b[CK_SHAPE_TEXT], up[32], up2[32];
	for (int k = 0; k < 2; k++)
		if (!ck_array_operand(c, in, k))
			return 1;
	const shape *x = in->ops[0].def->result, *r = in->ops[1].def->result;
	if (etype_get_kind(r->type) != KIND_UINT) {
		ck_error(c, in->op_at, "Random numbers for stochastic convert must be unsigned integers, but got: %s",
			 ck_shape(a, r));
		return 1;
	}
	if (etype_get_kind(x->type) != KIND_FLOAT) {
		/* (XLA prints the random operand's shape here) */
		ck_error(c, in->op_at, "Stochastic convert supports only floating point operand conversion, but got: %s",
			 ck_shape(a, r));
		return 1;
	}
	if (etype_bit_width(x->type) != etype_bit_width(r->type)) {
		ck_error(c, in->op_at,
			 "The random number is required to have same bits as the operand. But got random bits: %d, operand bits: %d",
			 etype_bit_width(r->type), etype_bit_width(x->type));
		return 1;
	}
	if (!shape_same_dims(x, r)) {
		ck_error(c, in->op_at, "Stochastic convert operand shape does not match random tensor shape: %s vs %s.",
			 ck_shape(a, x), ck_shape(b, r));
		return 1;
	}
	if (!ck_needs_shape(c, in))
		return 1;
	if (etype_get_kind(in->shape->type) != KIND_SINT) {
		ck_unsupported(c, in->op_at, "Stochastically converting from type %s to type %s is not implemented.",
			       ck_type_upper(up, sizeof up, x->type), ck_type_upper(up2, sizeof up2, in->shape->type));
		return 1;
	}
	shape_make_array(inf, in->shape->type, x->rank, x->dims);
	ck_identity_out_dims(in);
	return 0;
}

/* clamp(min, x, max): one element type (pred too, as XLA's evaluator
 * computes it; not complex, which its evaluator refuses); min and max
 * scalars or of x's dims (XLA's InferClampShape). */
int infer_clamp(checker *c, instr *in, shape *inf)
{
	char a[CK_SHAPE_TEXT], b[CK_SHAPE_TEXT], d[CK_SHAPE_TEXT], up[32];
	for (int k = 0; k < 3; k++)
		if (!ck_array_operand(c, in, k))
			return 1;
	const shape *lo = in->ops[0].def->result, *x = in->ops[1].def->result, *hi = in->ops[2].def->result;
	/* allow_mixed_precision: float bounds of another float type (XLA's
	 * SameElementTypeIgnoringFpPrecision); the result is x's */
	int fp = c->mixed && etype_get_kind(lo->type) == KIND_FLOAT && etype_get_kind(x->type) == KIND_FLOAT &&
		 etype_get_kind(hi->type) == KIND_FLOAT;
	if (!fp && (lo->type != x->type || hi->type != x->type)) {
		ck_error(c, in->op_at, "Clamp with incompatible element types: %s, %s, %s.", ck_shape(a, lo),
			 ck_shape(b, x), ck_shape(d, hi));
		return 1;
	}
	/* with `?` dimensions the non-scalar operands agree pairwise, `?`
	 * matching anything, and the result is x's shape (XLA's unbounded
	 * clamp cases: clamp(f32[], f32[?], f32[2]) is f32[?]) */
	int unbounded = shape_has_unbounded(lo) || shape_has_unbounded(x) || shape_has_unbounded(hi);
	shape m = *x;
	if (unbounded ? (lo->rank != 0 && ck_unbounded_merge(&m, lo)) || (hi->rank != 0 && ck_unbounded_merge(&m, hi))
		      : (lo->rank != 0 && !shape_same_dims(lo, x)) || (hi->rank != 0 && !shape_same_dims(hi, x))) {
		ck_error(c, in->op_at, "Clamp with incompatible shapes: %s, %s, %s.", ck_shape(a, lo), ck_shape(b, x),
			 ck_shape(d, hi));
		return 1;
	}
	if (etype_get_kind(x->type) == KIND_COMPLEX) {
		ck_error(c, in->op_at, "Unsupported type for clamp: %s", ck_type_upper(up, sizeof up, x->type));
		return 1;
	}
	shape_make_array(inf, x->type, x->rank, x->dims);
	if (unbounded)
		memcpy(inf->dim_kind, x->dim_kind, sizeof inf->dim_kind);
	ck_identity_out_dims(in);
	return 0;
}

/* The type's name as XLA's PrimitiveType_Name spells it (F32). */
static void type_upper(etype t, char up[16])
{
	const char *tn = etype_name(t);
	size_t i = 0;
	for (; tn && tn[i] && i + 1 < 16; i++)
		up[i] = (char)(tn[i] >= 'a' && tn[i] <= 'z' ? tn[i] - 'a' + 'A' : tn[i]);
	up[i] = '\0';
}

/* bitcast-convert between element types of different widths, as XLA's
 * InferBitcastConvertShape: to a narrower type a new most-minor dimension
 * of the ratio of the widths is appended, to a wider one the operand's last
 * dimension must be that ratio and is removed. Sub-byte types and dynamic
 * operands are not evaluated. */
static int bitcast_resize_shape(checker *c, instr *in, const shape *op, etype t, int bo, int br, shape *inf)
{
	char a[CK_SHAPE_TEXT], b[CK_SHAPE_TEXT];
	if (bo < 8 || br < 8) {
		ck_unsupported(c, in->op_at,
			       "unsupported bitcast-convert between element types of different widths: %s (%d bit%s) to %s (%d bit%s)",
			       ck_shape(a, op), bo, bo == 1 ? "" : "s", ck_shape(b, in->shape), br, br == 1 ? "" : "s");
		return 1;
	}
	char fup[16], tup[16];
	type_upper(op->type, fup);
	type_upper(t, tup);
	int hi = bo > br ? bo : br, lo = bo > br ? br : bo;
	if (hi % lo) {
		ck_error(c, in->op_at, "Cannot bitcast types with undivisible bit-widths: %s => %s.", fup, tup);
		return 1;
	}
	int ratio = hi / lo;
	if (!shape_is_static(op)) {
		ck_unsupported(c, in->op_at, "unsupported bitcast-convert of the dynamic shape %s to a type of another width",
			       ck_shape(a, op));
		return 1;
	}
	int64_t dims[HLOI_MAX_RANK + 1];
	int rank = op->rank;
	for (int d = 0; d < rank; d++)
		dims[d] = op->dims[d];
	if (bo > br) {
		if (rank >= HLOI_MAX_RANK) {
			ck_unsupported(c, in->op_at, "unsupported bitcast-convert of %s: the result would have more than %d dimensions",
				       ck_shape(a, op), HLOI_MAX_RANK);
			return 1;
		}
		dims[rank++] = ratio;
	} else {
		if (rank < 1 || op->dims[rank - 1] != ratio) {
			if (rank < 1)
				ck_error(c, in->op_at,
					 "Last dimension of input shape is missing (a scalar) for the ratio of bit-widths=%d for bitcast-convert from %s to %s",
					 ratio, ck_shape(a, op), tup);
			else
				ck_error(c, in->op_at,
					 "Last dimension of input shape=%lld is not equal to ratio of bit-widths=%d for bitcast-convert from %s to %s",
					 (long long)op->dims[rank - 1], ratio, ck_shape(a, op), tup);
			return 1;
		}
		rank--;
	}
	shape_make_array(inf, t, rank, dims);
	for (int j = 0; j < op->rank && j < HLOI_MAX_RANK; j++)
		in->ops[0].out_dim[j] = (int8_t)(j < rank ? j : -1);
	return 0;
}

/* copy, convert, bitcast-convert: the operand's dims; copy keeps the type,
 * the others take the written one. */
static int unary_shape(checker *c, instr *in, shape *inf)
{
	char a[CK_SHAPE_TEXT];
	if (in->op == OP_COPY && shape_is_tuple(in->ops[0].def->result)) {
		*inf = *in->ops[0].def->result;  /* a tuple copy keeps its elements' layouts */
		return 0;
	}
	if (!ck_array_operand(c, in, 0))
		return 1;
	const shape *op = in->ops[0].def->result;
	etype t = op->type;
	if (in->op != OP_COPY) {
		if (!ck_needs_shape(c, in))
			return 1;
		t = in->shape->type;
	}
	int cfrom = etype_get_kind(op->type) == KIND_COMPLEX, cto = etype_get_kind(t) == KIND_COMPLEX;
	if ((in->op == OP_CONVERT && cfrom && !cto) || (in->op == OP_BITCAST_CONVERT && cfrom != cto)) {
		char up[16];
		type_upper(t, up);
		if (in->op == OP_CONVERT)
			ck_error(c, in->op_at, "Conversion from complex to real type %s => %s is not implemented.",
				 ck_shape(a, op), up);
		else
			ck_error(c, in->op_at, "Conversion between complex and real type %s => %s.", ck_shape(a, op), up);
		return 1;
	}
	if (in->op == OP_BITCAST_CONVERT) {
		/* widths as XLA's StorageBitWidth: pred is a byte, so pred <->
		 * s8/u8/f8 is a same-width bitcast (a byte to pred: not zero) */
		int bo = op->type == ET_PRED ? 8 : etype_bit_width(op->type);
		int br = t == ET_PRED ? 8 : etype_bit_width(t);
		if (bo != br)
			return bitcast_resize_shape(c, in, op, t, bo, br, inf);
	}
	shape_make_array(inf, t, op->rank, op->dims);
	memcpy(inf->dim_kind, op->dim_kind, sizeof inf->dim_kind);
	ck_identity_out_dims(in);
	return 0;
}

int infer_same(checker *c, instr *in, shape *inf)
{
	return unary_shape(c, in, inf);
}

int infer_convert(checker *c, instr *in, shape *inf)
{
	return unary_shape(c, in, inf);
}

int infer_bitcast_convert(checker *c, instr *in, shape *inf)
{
	return unary_shape(c, in, inf);
}

/* select with `?` dimensions (XLA's unbounded select cases): on_true and
 * on_false agree, `?` matching anything, and the result is the more
 * specific of the two; a non-scalar pred agrees with that, its dimensions
 * only (its element type is PRED). */
static int select_unbounded(checker *c, instr *in, const shape *p, const shape *t, const shape *f, shape *inf)
{
	char a[CK_SHAPE_TEXT], b[CK_SHAPE_TEXT], d[CK_SHAPE_TEXT];
	shape m = *t;
	if (t->type != f->type || ck_unbounded_merge(&m, f)) {
		ck_error(c, in->op_at, "Operands to select must be the same shape; got %s and %s.", ck_shape(a, t),
			 ck_shape(b, f));
		return 1;
	}
	shape pm = m;
	if (p->rank != 0 || c->strict) {
		pm.type = p->type;
		if (ck_unbounded_merge(&pm, p)) {
			ck_error(c, in->op_at,
				 "Operands to select and predicate must be the same shape; got %s and %s and %s.",
				 ck_shape(a, t), ck_shape(b, f), ck_shape(d, p));
			return 1;
		}
	}
	shape_make_array(inf, m.type, m.rank, m.dims);
	memcpy(inf->dim_kind, m.dim_kind, sizeof inf->dim_kind);
	ck_identity_out_dims(in);
	return 0;
}

/* select(pred, on_true, on_false): pred is PRED with the others' dims, or a
 * scalar (an extension, as newer XLA allows; not under --strict); on_true
 * and on_false have the same shape. */
int infer_select(checker *c, instr *in, shape *inf)
{
	char a[CK_SHAPE_TEXT], b[CK_SHAPE_TEXT];
	for (int k = 0; k < 3; k++)
		if (!ck_array_operand(c, in, k))
			return 1;
	const shape *p = in->ops[0].def->result, *t = in->ops[1].def->result, *f = in->ops[2].def->result;
	if (p->type != ET_PRED) {
		ck_error(c, in->op_at, "Select's pred operand must have PRED element type; got %s.", ck_shape(a, p));
		return 1;
	}
	if (shape_has_unbounded(p) || shape_has_unbounded(t) || shape_has_unbounded(f))
		return select_unbounded(c, in, p, t, f, inf);
	if (!shape_compatible(t, f)) {
		ck_error(c, in->op_at, "Operands to select must be the same shape; got %s and %s.", ck_shape(a, t),
			 ck_shape(b, f));
		return 1;
	}
	if ((p->rank != 0 || c->strict) && !shape_same_dims(p, t)) {
		ck_error(c, in->op_at, "Operands to select and predicate must be the same shape; got %s and %s.",
			 ck_shape(a, p), ck_shape(b, t));
		return 1;
	}
	shape_make_array(inf, t->type, t->rank, t->dims);
	ck_identity_out_dims(in);
	return 0;
}

