/* The facts of ir/opcodes.def's `flags` and `types` columns, held against
 * what can be known apart from them: the other columns (category, infer
 * rule, kernel), the opcode names, and the kind lists of eval/scalar/scalar.h the
 * engines instantiate. A wrong row fails here. */
#include <stdio.h>
#include <string.h>

#include "eval/scalar/scalar.h"
#include "ir/ir.h"
#include "unit.h"

static const struct {
	const char *infer, *eval;
} cols[] = {
#define X(E, text, arity, cat, infer, ev, flags, types) { #infer, #ev },
#include "ir/opcodes.def"
#undef X
};

static int is(const char *a, const char *b)
{
	return strcmp(a, b) == 0;
}

/* The kinds eval/scalar/scalar.h instantiates each op for (the binary lists, the
 * unary ones with their pred- and part-result lists). */
static unsigned sc_binary[OP_COUNT], sc_unary[OP_COUNT], sc_pred[OP_COUNT], sc_part[OP_COUNT];

static void collect(void)
{
	memset(sc_binary, 0, sizeof sc_binary);
	memset(sc_unary, 0, sizeof sc_unary);
	memset(sc_pred, 0, sizeof sc_pred);
	memset(sc_part, 0, sizeof sc_part);
#define MARK(OPC, fn, E, T) set[OP_##OPC] |= E;
	unsigned *set = sc_binary;
	SC_OPS_KIND_PRED(MARK, TK_PRED, x)
	SC_OPS_KIND_SINT(MARK, TK_SINT, x)
	SC_OPS_KIND_UINT(MARK, TK_UINT, x)
	SC_OPS_KIND_FLOAT(MARK, TK_FLOAT, x)
	SC_OPS_KIND_COMPLEX(MARK, TK_COMPLEX, x)
	set = sc_unary;
	SC_UNARY_OPS_KIND_PRED(MARK, TK_PRED, x)
	SC_UNARY_OPS_KIND_SINT(MARK, TK_SINT, x)
	SC_UNARY_OPS_KIND_UINT(MARK, TK_UINT, x)
	SC_UNARY_OPS_KIND_FLOAT(MARK, TK_FLOAT, x)
	SC_UNARY_OPS_KIND_COMPLEX(MARK, TK_COMPLEX, x)
	set = sc_pred;
	SC_UNARY_PRED_OPS_KIND_PRED(MARK, TK_PRED, x)
	SC_UNARY_PRED_OPS_KIND_SINT(MARK, TK_SINT, x)
	SC_UNARY_PRED_OPS_KIND_UINT(MARK, TK_UINT, x)
	SC_UNARY_PRED_OPS_KIND_FLOAT(MARK, TK_FLOAT, x)
	SC_UNARY_PRED_OPS_KIND_COMPLEX(MARK, TK_COMPLEX, x)
	set = sc_part;
	SC_UNARY_PART_OPS_KIND_PRED(MARK, TK_PRED, x)
	SC_UNARY_PART_OPS_KIND_SINT(MARK, TK_SINT, x)
	SC_UNARY_PART_OPS_KIND_UINT(MARK, TK_UINT, x)
	SC_UNARY_PART_OPS_KIND_FLOAT(MARK, TK_FLOAT, x)
	SC_UNARY_PART_OPS_KIND_COMPLEX(MARK, TK_COMPLEX, x)
#undef MARK
}

/* Reports the opcode a failed check is about. */
#define CHECK_OP(cond, op)                                                          \
	do {                                                                       \
		if (!(cond))                                                       \
			fprintf(stderr, "\n  %s: %s\n", opcode_name(op), #cond);   \
		CU_ASSERT(cond);                                                   \
	} while (0)

/* The elementwise categories carry the elementwise flags; the other rows
 * that do are the elementwise kernel's or pure data movement. */
static void test_elementwise_flags(void)
{
	for (int i = 0; i < OP_COUNT; i++) {
		opcode op = (opcode)i;
		op_category c = opcode_category(op);
		if (c == OPC_BINARY || c == OPC_UNARY)
			CHECK_OP(opcode_has(op, OPF_EW), op);
		if (c == OPC_COMPARE)
			CHECK_OP(opcode_has(op, OPF_ELEMENTWISE | OPF_FOLLOWS_SIZES | OPF_TILED | OPF_PRED_RESULT) &&
					 !opcode_has(op, OPF_MIXED),
				 op);
		if (opcode_has(op, OPF_ELEMENTWISE)) {
			CHECK_OP(opcode_has(op, OPF_TILED), op);
			CHECK_OP(is(cols[i].eval, "elementwise") || is(cols[i].eval, "iota") || is(cols[i].eval, "copy") ||
					 is(cols[i].eval, "transpose") || is(cols[i].eval, "bitcast_convert"),
				 op);
		}
		if (opcode_has(op, OPF_ARITHMETIC))
			CHECK_OP(c == OPC_BINARY, op);
		if (opcode_has(op, OPF_PART_RESULT))
			CHECK_OP(c == OPC_UNARY, op);
	}
}

/* A `declared` shape rule takes the written shape, so it needs one. */
static void test_shape_required(void)
{
	for (int i = 0; i < OP_COUNT; i++)
		if (is(cols[i].infer, "declared"))
			CHECK_OP(opcode_has((opcode)i, OPF_SHAPE_REQUIRED), (opcode)i);
}

/* Each dynamic-size rule is one of three: follows the operands, computes
 * within the sizes, or one of its own (or passing them on). */
static void test_size_rules(void)
{
	for (int i = 0; i < OP_COUNT; i++) {
		unsigned f = opcode_flags((opcode)i);
		int n = !!(f & OPF_FOLLOWS_SIZES) + !!(f & OPF_ON_SIZES) + !!(f & OPF_PASSES_SIZES);
		CHECK_OP(n <= 1, (opcode)i);
		if (f & OPF_FOLLOWS_SIZES)
			CHECK_OP(!(f & OPF_SIDE_EFFECT), (opcode)i);
	}
}

/* Side effects: the transfers to and from the host and the point-to-point
 * ops (their kernels say so). */
static void test_side_effects(void)
{
	for (int i = 0; i < OP_COUNT; i++) {
		int io = is(cols[i].eval, "infeed") || is(cols[i].eval, "outfeed") || is(cols[i].eval, "p2p");
		CHECK_OP(io == opcode_has((opcode)i, OPF_SIDE_EFFECT), (opcode)i);
	}
}

/* `<op>-start` stands for an async-start wrapping op unless op has a
 * -start or -done of its own, or is one of the async ops. */
static void test_own_async(void)
{
	for (int i = 0; i < OP_COUNT; i++) {
		const char *name = opcode_name((opcode)i);
		char buf[64];
		int own = strncmp(name, "async-", 6) == 0;
		snprintf(buf, sizeof buf, "%s-start", name);
		own |= opcode_from_name(buf, strlen(buf)) != OP_COUNT;
		snprintf(buf, sizeof buf, "%s-done", name);
		own |= opcode_from_name(buf, strlen(buf)) != OP_COUNT;
		CHECK_OP(own == opcode_has((opcode)i, OPF_OWN_ASYNC), (opcode)i);
		CHECK_OP(own == !opcode_async_wrappable((opcode)i), (opcode)i);
	}
	CU_ASSERT(!opcode_async_wrappable(OP_COUNT));
}

/* The type gates: every elementwise-category op has one, no other op does;
 * the kinds evaluated are kinds taken; and they are exactly the kinds
 * eval/scalar/scalar.h instantiates the op for (complex, keyed by its result
 * type, is the one elementwise op built apart). */
static void test_type_gates(void)
{
	collect();
	for (int i = 0; i < OP_COUNT; i++) {
		opcode op = (opcode)i;
		op_category c = opcode_category(op);
		const op_types *g = opcode_types(op);
		int gated = c == OPC_BINARY || c == OPC_UNARY;
		CHECK_OP(gated == (g->takes != 0), op);
		CHECK_OP((g->evaluates & ~g->takes) == 0, op);
		CHECK_OP((g->takes == TK_ALL) == (g->message == TM_NONE) || !gated, op);
		if (opcode_has(op, OPF_ARITHMETIC))
			CHECK_OP(!(g->evaluates & TK_PRED), op);
		if (c == OPC_BINARY && op != OP_COMPLEX)
			CHECK_OP(g->evaluates == sc_binary[op], op);
		else
			CHECK_OP(sc_binary[op] == 0, op);
		if (c == OPC_UNARY)
			CHECK_OP(g->evaluates == (sc_unary[op] | sc_pred[op] | sc_part[op]), op);
		else
			CHECK_OP((sc_unary[op] | sc_pred[op] | sc_part[op]) == 0, op);
		if (c == OPC_UNARY) {
			CHECK_OP(opcode_has(op, OPF_PRED_RESULT) == (sc_pred[op] != 0), op);
			CHECK_OP(opcode_has(op, OPF_PART_RESULT) == (sc_part[op] != 0), op);
			CHECK_OP(!opcode_has(op, OPF_PRED_RESULT) || sc_unary[op] == 0, op);
		}
	}
	CU_ASSERT(opcode_types(OP_COUNT)->takes == 0);
	CU_ASSERT(opcode_flags(OP_COUNT) == 0);
}

/* The proto writer's opcode classes. XLA's HloCollectiveInstructions are
 * collectives (kernel `collective`) but for the permutes and
 * collective-reduce, classes of their own; an opcode's own `-start` is of
 * its class; to_apply= is never the callee of the opcodes whose callee
 * attributes are their own, and dimensions= never prints on elementwise
 * ops. */
static void test_proto_classes(void)
{
	for (int i = 0; i < OP_COUNT; i++) {
		opcode op = (opcode)i;
		int other = is(cols[i].infer, "collective_permute") || is(cols[i].infer, "collective_reduce");
		if (opcode_has(op, OPF_COLLECTIVE))
			CHECK_OP(is(cols[i].eval, "collective") && !other, op);
		if (is(cols[i].eval, "collective") && !other)
			CHECK_OP(opcode_has(op, OPF_COLLECTIVE), op);
		if (opcode_has(op, OPF_OWN_ASYNC)) {
			char buf[64];
			snprintf(buf, sizeof buf, "%s-start", opcode_name(op));
			opcode st = opcode_from_name(buf, strlen(buf));
			unsigned cls = OPF_COLLECTIVE | OPF_TO_APPLY | OPF_DIMENSIONS;
			if (st != OP_COUNT)
				CHECK_OP((opcode_flags(op) & cls) == (opcode_flags(st) & cls), op);
		}
		if (opcode_has(op, OPF_TO_APPLY))
			CHECK_OP(opcode_arity(op) < 0 && op != OP_WHILE && op != OP_CONDITIONAL &&
					 op != OP_SELECT_AND_SCATTER && op != OP_CUSTOM_CALL && op != OP_FUSION,
				 op);
		if (opcode_has(op, OPF_DIMENSIONS))
			CHECK_OP(!opcode_is_elementwise_category(op), op);
		/* the cost model's transcendentals: elementwise float math */
		if (opcode_has(op, OPF_TRANSCENDENTAL))
			CHECK_OP(opcode_has(op, OPF_ELEMENTWISE) && opcode_category(op) != OPC_COMPARE &&
					 (opcode_types(op)->takes & TK_FLOAT),
				 op);
	}
	CU_ASSERT_TRUE(opcode_has(OP_EXP, OPF_TRANSCENDENTAL));
	CU_ASSERT_TRUE(opcode_has(OP_TANH, OPF_TRANSCENDENTAL));
	CU_ASSERT_FALSE(opcode_has(OP_ADD, OPF_TRANSCENDENTAL));
	CU_ASSERT_FALSE(opcode_has(OP_ABS, OPF_TRANSCENDENTAL));
}

static const unit_test opcode_tests[] = {
	{ "elementwise_flags", test_elementwise_flags },
	{ "shape_required", test_shape_required },
	{ "size_rules", test_size_rules },
	{ "side_effects", test_side_effects },
	{ "own_async", test_own_async },
	{ "type_gates", test_type_gates },
	{ "proto_classes", test_proto_classes },
	{ NULL, NULL },
};

const unit_suite unit_suites[] = {
	{ "opcodes", opcode_tests },
	{ NULL, NULL },
};
