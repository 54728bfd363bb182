/* Unit tests for the checker: every broadcasting rule of doc/spec.md §3.1 with
 * doc/sources.md A's examples (accepted result shapes, each rejection's exact
 * message), NumPy mode with doc/sources.md C and D's examples, --strict, element
 * type gates, compare types, names, parameters, declared shapes, layouts,
 * the broadcast instruction and unsupported features. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check/check.h"
#include "text/parse.h"
#include "unit.h"

/* --- helpers ------------------------------------------------------------------ */

typedef struct checked {
	hloi_context *ctx;
	module *m;
	hloi_status st;
} checked;

/* Set by tests of ops hloi checks but does not evaluate: check shapes only. */
static int shapes_only;

static hloi_status run_mode(checked *r, const char *text, int strict, hloi_broadcast_mode mode)
{
	memset(r, 0, sizeof *r);
	CU_ASSERT_FATAL(hloi_context_new(&r->ctx) == HLOI_OK);
	hloi_status st = text_parse_module(&r->m, r->ctx, "t.hlo", text, strlen(text));
	if (st != HLOI_OK) {
		hloi_context_print_diagnostics(r->ctx, stderr, 0);
		fprintf(stderr, "in:\n%s\n", text);
	}
	CU_ASSERT_EQUAL_FATAL(st, HLOI_OK);
	hloi_check_options o = { HLOI_CHECK_OPTIONS_VERSION, strict, mode, shapes_only };
	r->st = check_module(r->m, r->ctx, &o);
	return r->st;
}

static hloi_status run(checked *r, const char *text)
{
	return run_mode(r, text, 0, HLOI_BROADCAST_DEFAULT);
}

static void done(checked *r)
{
	module_destroy(r->m);
	hloi_context_free(r->ctx);
}

/* The i-th diagnostic's message (any severity), or "" past the end. */
static const char *diag_msg(const checked *r, size_t i)
{
	return i < r->ctx->ndiags ? r->ctx->diags[i].message : "";
}

static int diag_sev(const checked *r, size_t i)
{
	return i < r->ctx->ndiags ? (int)r->ctx->diags[i].severity : -1;
}

/* Everything hloi_context_print_diagnostics prints (caller frees). */
static char *printed(checked *r)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);
	CU_ASSERT_FATAL(f != NULL);
	hloi_context_print_diagnostics(r->ctx, f, HLOI_DIAG_BASENAME);
	fclose(f);
	return buf;
}

static instr *find(const checked *r, const char *name)
{
	computation *c = r->m->entry;
	for (int i = 0; i < c->ninstrs; i++)
		if (strcmp(c->instrs[i]->name, name) == 0)
			return c->instrs[i];
	return NULL;
}

static char *shape_text(const shape *s, int with_layout)
{
	static char buf[256];
	strbuf b = STRBUF_INIT;
	shape_print(&b, s, with_layout);
	snprintf(buf, sizeof buf, "%s", sb_str(&b));
	sb_free(&b);
	return buf;
}

/* A program `r = OP(a, b)` with a: lhs, b: rhs and an optional attribute. */
static void binary_program(char *buf, size_t size, const char *op, const char *lhs, const char *rhs,
			   const char *attr)
{
	snprintf(buf, size,
		 "ENTRY e {\n  a = %s parameter(0)\n  b = %s parameter(1)\n  ROOT r = %s(a, b)%s%s\n}\n", lhs,
		 rhs, op, attr ? ", " : "", attr ? attr : "");
}

/* The binary op type-checks and its result is `expect` (printed without layout). */
static void accept_mode(hloi_broadcast_mode mode, const char *op, const char *lhs, const char *rhs,
			const char *attr, const char *expect)
{
	char text[512];
	checked r;
	binary_program(text, sizeof text, op, lhs, rhs, attr);
	run_mode(&r, text, 0, mode);
	CU_ASSERT_EQUAL(r.st, HLOI_OK);
	if (r.st != HLOI_OK) {
		fprintf(stderr, "\nrejected:\n%s", text);
		hloi_context_print_diagnostics(r.ctx, stderr, 0);
	} else {
		const char *got = shape_text(find(&r, "r")->result, 0);
		CU_ASSERT_STRING_EQUAL(got, expect);
		if (strcmp(got, expect) != 0)
			fprintf(stderr, "\n%s: got %s, expected %s\n", text, got, expect);
	}
	done(&r);
}

static void accept(const char *lhs, const char *rhs, const char *attr, const char *expect)
{
	accept_mode(HLOI_BROADCAST_XLA, "add", lhs, rhs, attr, expect);
}

/* Rejected with exactly `msg` as the first error, followed by the note
 * naming the operands when `note` is set. */
static void reject_full(hloi_broadcast_mode mode, int strict, const char *op, const char *lhs,
			const char *rhs, const char *attr, const char *msg, int note)
{
	char text[512];
	checked r;
	binary_program(text, sizeof text, op, lhs, rhs, attr);
	run_mode(&r, text, strict, mode);
	CU_ASSERT_EQUAL(r.st, HLOI_ETYPE);
	CU_ASSERT_STRING_EQUAL(diag_msg(&r, 0), msg);
	if (strcmp(diag_msg(&r, 0), msg) != 0)
		fprintf(stderr, "\n%s: got '%s'\n  expected '%s'\n", text, diag_msg(&r, 0), msg);
	if (note) {
		char expect[512];
		snprintf(expect, sizeof expect, "operands of %s: %s and %s", op, lhs, rhs);
		CU_ASSERT_EQUAL(diag_sev(&r, 1), DIAG_NOTE);
		CU_ASSERT_STRING_EQUAL(diag_msg(&r, 1), expect);
	}
	done(&r);
}

static void reject(const char *lhs, const char *rhs, const char *attr, const char *msg)
{
	reject_full(HLOI_BROADCAST_XLA, 0, "add", lhs, rhs, attr, msg, 1);
}

static void reject_numpy(const char *lhs, const char *rhs, const char *msg)
{
	reject_full(HLOI_BROADCAST_NUMPY, 0, "add", lhs, rhs, NULL, msg, 1);
}

static void accept_numpy(const char *lhs, const char *rhs, const char *expect)
{
	accept_mode(HLOI_BROADCAST_NUMPY, "add", lhs, rhs, NULL, expect);
}

/* --- XLA's rules (doc/spec.md §3.1, doc/sources.md A) ------------------------------------- */

static void test_sources_a_accepted(void)
{
	/* matrix plus vector with broadcast_dimensions = (1) */
	accept("f32[2,3]", "f32[3]", "broadcast_dimensions={1}", "f32[2,3]");
	accept("f32[3]", "f32[2,3]", "broadcast_dimensions={1}", "f32[2,3]");
	/* scalars need no specification */
	accept("f32[2,3]", "f32[]", NULL, "f32[2,3]");
	accept("f32[]", "f32[2,3]", NULL, "f32[2,3]");
	accept("f32[]", "f32[2,3]", "broadcast_dimensions={}", "f32[2,3]");
	accept("f32[]", "f32[]", NULL, "f32[]");
	/* 3-vector and 3x3 matrix, both ways */
	accept("f32[3,3]", "f32[3]", "broadcast_dimensions={1}", "f32[3,3]");
	accept("f32[3,3]", "f32[3]", "broadcast_dimensions={0}", "f32[3,3]");
	/* cuboid and matrix with a tuple */
	accept("f32[2,3,4]", "f32[3,4]", "broadcast_dimensions={1,2}", "f32[2,3,4]");
	/* the formal definition: MxNxPxQ with a vector and with TxV matrices */
	accept("f32[2,3,4,5]", "f32[5]", "broadcast_dimensions={3}", "f32[2,3,4,5]");
	accept("f32[2,3,4,5]", "f32[4]", "broadcast_dimensions={2}", "f32[2,3,4,5]");
	accept("f32[2,3,4,5]", "f32[3]", "broadcast_dimensions={1}", "f32[2,3,4,5]");
	accept("f32[2,3,4,5]", "f32[2]", "broadcast_dimensions={0}", "f32[2,3,4,5]");
	accept("f32[2,3,4,5]", "f32[4,5]", "broadcast_dimensions={2,3}", "f32[2,3,4,5]");
	accept("f32[2,3,4,5]", "f32[3,4]", "broadcast_dimensions={1,2}", "f32[2,3,4,5]");
	accept("f32[2,3,4,5]", "f32[2,5]", "broadcast_dimensions={0,3}", "f32[2,3,4,5]");
	/* degenerate dimensions */
	accept("f32[2,1]", "f32[2,3]", NULL, "f32[2,3]");
	accept("f32[1,2,5]", "f32[7,2,5]", NULL, "f32[7,2,5]");
	accept("f32[7,2,5]", "f32[7,1,5]", NULL, "f32[7,2,5]");
	accept("f32[2,1]", "f32[1,3]", NULL, "f32[2,3]");  /* outer operation */
	accept("f32[2,3]", "f32[2,3]", "broadcast_dimensions={0,1}", "f32[2,3]");
	/* composition */
	accept("s32[4]", "s32[1,2]", "broadcast_dimensions={0}", "s32[4,2]");
	accept("f32[1,2]", "f32[4,3,1]", "broadcast_dimensions={1,2}", "f32[4,3,2]");
	/* shape inference's own table */
	accept("f32[3]", "f32[4,3]", "broadcast_dimensions={1}", "f32[4,3]");
	accept("f32[2,3]", "f32[2,3,4]", "broadcast_dimensions={0,1}", "f32[2,3,4]");
	accept("f32[2,1]", "f32[2,3,4]", "broadcast_dimensions={0,2}", "f32[2,3,4]");
	accept("f32[2,3]", "f32[2,1,4]", "broadcast_dimensions={0,1}", "f32[2,3,4]");
	/* size-0 dims: 1 stretches to 0 */
	accept("f32[0]", "f32[1]", NULL, "f32[0]");
	accept("f32[2,0]", "f32[0]", "broadcast_dimensions={1}", "f32[2,0]");
	accept("f32[1,0]", "f32[2,1]", NULL, "f32[2,0]");
	/* every binary op and compare share the rules */
	accept_mode(HLOI_BROADCAST_XLA, "multiply", "s32[2,3]", "s32[2]", "broadcast_dimensions={0}",
		    "s32[2,3]");
	accept_mode(HLOI_BROADCAST_XLA, "compare", "f32[2,3]", "f32[3]",
		    "broadcast_dimensions={1}, direction=LT", "pred[2,3]");
}

static void test_sources_a_rejected(void)
{
	reject("f32[7,2,5]", "f32[7,2,6]", NULL, "Binary op add with incompatible shapes: f32[7,2,5] and f32[7,2,6].");
	reject("f32[3]", "f32[4,3]", "broadcast_dimensions={0}",
	       "Broadcast dimension 0 mismatch: 3 != 4; f32[3] and f32[4,3].");
	reject("f32[4,3]", "f32[3]", "broadcast_dimensions={0}",
	       "Broadcast dimension 0 mismatch: 3 != 4; f32[3] and f32[4,3].");
	reject("f32[2,1]", "f32[2,3,4]", "broadcast_dimensions={1,2}",
	       "Broadcast dimension 0 mismatch: 2 != 3; f32[2,1] and f32[2,3,4].");
	/* matching V to N and T to P; V to both P and N */
	reject("f32[2,3,4,5]", "f32[4,3]", "broadcast_dimensions={2,1}",
	       "Broadcast dimensions order is wrong: 1 comes after 2.");
	reject("f32[2,3,3,5]", "f32[3,3]", "broadcast_dimensions={2,2}",
	       "Broadcast dimensions order is wrong: 2 comes after 2.");
	reject("f32[2,3]", "f32[3]", "broadcast_dimensions={0,1}",
	       "Size of broadcast_dimensions has to match lower-rank operand's rank; lower-rank operand's rank is 1, size of broadcast_dimensions is 2.");
	reject("f32[2,3]", "f32[]", "broadcast_dimensions={0}",
	       "Size of broadcast_dimensions has to match lower-rank operand's rank; lower-rank operand's rank is 0, size of broadcast_dimensions is 1.");
	reject("f32[2,3,4]", "f32[4]", "broadcast_dimensions={3}",
	       "Broadcast dimension number (3) too large; higher-rank operand has rank 3.");
	reject("f32[2,3,4]", "f32[4]", "broadcast_dimensions={-1}",
	       "Broadcast dimension number (-1) cannot be negative.");
	/* checks run in XLA's order: the count, then per entry its range,
	 * its size, its order after the previous one */
	reject("f32[2,3,4]", "f32[4,9]", "broadcast_dimensions={2,5}",
	       "Broadcast dimension number (5) too large; higher-rank operand has rank 3.");
	reject("f32[2,3,4]", "f32[4,9]", "broadcast_dimensions={2,1}",
	       "Broadcast dimension 1 mismatch: 9 != 3; f32[4,9] and f32[2,3,4].");
	reject("f32[2,3,4]", "f32[4,3]", "broadcast_dimensions={2,1}",
	       "Broadcast dimensions order is wrong: 1 comes after 2.");
	reject("f32[2,3,4]", "f32[9,3]", "broadcast_dimensions={0,5}",
	       "Broadcast dimension 0 mismatch: 9 != 2; f32[9,3] and f32[2,3,4].");
	/* XLA's shape_inference_test BinOpBroadcastBadDimension */
	reject("f32[16,8,4]", "f32[8,4]", "broadcast_dimensions={2,1}",
	       "Broadcast dimension 0 mismatch: 8 != 4; f32[8,4] and f32[16,8,4].");
	reject("f32[2,3]", "f32[2,3]", "broadcast_dimensions={1,0}",
	       "Broadcast dimensions field must either be not set or be the identity on binary operations with operands of the same rank.");
	reject("f32[2,3]", "f32[2,3]", "broadcast_dimensions={0}",
	       "Broadcast dimensions field must either be not set or be the identity on binary operations with operands of the same rank.");
	reject("f32[3]", "f32[4,3]", NULL,
	       "Shapes must be equal rank, but are f32[3] and f32[4,3]; did you mean broadcast_dimensions={1}?");
	reject("f32[2,3]", "f32[2,3,4]", NULL, "Shapes must be equal rank, but are f32[2,3] and f32[2,3,4].");
	reject("f32[3,4]", "f32[2,3,4]", NULL,
	       "Shapes must be equal rank, but are f32[3,4] and f32[2,3,4]; did you mean broadcast_dimensions={1,2}?");
	reject("f32[1]", "f32[5,4]", NULL,
	       "Shapes must be equal rank, but are f32[1] and f32[5,4]; did you mean broadcast_dimensions={1}?");
	reject("f32[3]", "f32[4,5]", NULL, "Shapes must be equal rank, but are f32[3] and f32[4,5].");
	reject("f32[4,3]", "f32[4]", NULL, "Shapes must be equal rank, but are f32[4] and f32[4,3].");
	reject("f32[0]", "f32[2]", NULL, "Binary op add with incompatible shapes: f32[0] and f32[2].");
	reject_full(HLOI_BROADCAST_XLA, 0, "compare", "f32[2]", "f32[3]", "direction=EQ",
		    "Binary op compare with incompatible shapes: f32[2] and f32[3].", 1);
}

static void test_element_types(void)
{
	reject_full(HLOI_BROADCAST_XLA, 0, "add", "f32[]", "s32[]", NULL,
		    "Binary op add with different element types: f32[] and s32[].", 0);
	reject_full(HLOI_BROADCAST_XLA, 0, "compare", "f32[2]", "f16[2]", "direction=EQ",
		    "Binary op compare with different element types: f32[2] and f16[2].", 0);
}

static void test_out_dims(void)
{
	checked r;
	char text[512];
	binary_program(text, sizeof text, "add", "f32[2,1]", "f32[2,3,4]", "broadcast_dimensions={0,2}");
	CU_ASSERT_EQUAL_FATAL(run(&r, text), HLOI_OK);
	instr *in = find(&r, "r");
	CU_ASSERT_STRING_EQUAL(shape_text(in->result, 1), "f32[2,3,4]{2,1,0}");
	CU_ASSERT_EQUAL(in->ops[0].out_dim[0], 0);
	CU_ASSERT_EQUAL(in->ops[0].out_dim[1], 2);
	for (int j = 0; j < 3; j++)
		CU_ASSERT_EQUAL(in->ops[1].out_dim[j], j);
	CU_ASSERT_PTR_EQUAL(in->ops[0].def, find(&r, "a"));
	CU_ASSERT_PTR_EQUAL(in->ops[1].def, find(&r, "b"));
	done(&r);

	binary_program(text, sizeof text, "add", "f32[4,1]", "f32[3]", NULL);
	CU_ASSERT_EQUAL_FATAL(run_mode(&r, text, 0, HLOI_BROADCAST_NUMPY), HLOI_OK);
	in = find(&r, "r");
	CU_ASSERT_STRING_EQUAL(shape_text(in->result, 0), "f32[4,3]");
	CU_ASSERT_EQUAL(in->ops[0].out_dim[0], 0);
	CU_ASSERT_EQUAL(in->ops[0].out_dim[1], 1);
	CU_ASSERT_EQUAL(in->ops[1].out_dim[0], 1);
	done(&r);
}

/* --- NumPy mode (doc/spec.md §3.2, doc/sources.md C and D) --------------------------------- */

static void test_numpy_mode(void)
{
	accept_numpy("f32[3]", "f32[3]", "f32[3]");
	accept_numpy("f32[3]", "f32[]", "f32[3]");
	accept_numpy("f32[256,256,3]", "f32[3]", "f32[256,256,3]");
	accept_numpy("f32[8,1,6,1]", "f32[7,1,5]", "f32[8,7,6,5]");
	accept_numpy("f32[5,1]", "f32[1,6]", "f32[5,6]");
	accept_numpy("f32[5,1]", "f32[6]", "f32[5,6]");
	accept_numpy("f32[1,6]", "f32[]", "f32[1,6]");
	accept_numpy("f32[5,4]", "f32[1]", "f32[5,4]");
	accept_numpy("f32[5,4]", "f32[4]", "f32[5,4]");
	accept_numpy("f32[15,3,5]", "f32[15,1,5]", "f32[15,3,5]");
	accept_numpy("f32[15,3,5]", "f32[3,5]", "f32[15,3,5]");
	accept_numpy("f32[15,3,5]", "f32[3,1]", "f32[15,3,5]");
	accept_numpy("f32[4,3]", "f32[3]", "f32[4,3]");
	accept_numpy("f32[4,1]", "f32[3]", "f32[4,3]");  /* a[:, np.newaxis] + b */
	accept_numpy("f32[5,7,3]", "f32[5,7,3]", "f32[5,7,3]");
	accept_numpy("f32[5,3,4,1]", "f32[3,1,1]", "f32[5,3,4,1]");
	accept_numpy("f32[5,1,4,1]", "f32[3,1,1]", "f32[5,3,4,1]");
	accept_numpy("f32[1]", "f32[3,1,7]", "f32[3,1,7]");
	accept_numpy("f32[5,1,4,1]", "f32[3,1,2]", "f32[5,3,4,2]");
	accept_numpy("f32[1,0]", "f32[2,1]", "f32[2,0]");
	reject_numpy("f32[3]", "f32[4]", "operands could not be broadcast together with shapes (3,) (4,)");
	reject_numpy("f32[2,1]", "f32[8,4,3]", "operands could not be broadcast together with shapes (2,1) (8,4,3)");
	reject_numpy("f32[4,3]", "f32[4]", "operands could not be broadcast together with shapes (4,3) (4,)");
	reject_numpy("f32[0]", "f32[2,2]", "operands could not be broadcast together with shapes (0,) (2,2)");
	reject_numpy("f32[0]", "f32[2]", "operands could not be broadcast together with shapes (0,) (2,)");
	reject_numpy("f32[5,2,4,1]", "f32[3,1,1]",
		     "operands could not be broadcast together with shapes (5,2,4,1) (3,1,1)");
	/* an explicit broadcast_dimensions still means XLA's rule */
	accept_mode(HLOI_BROADCAST_NUMPY, "add", "f32[4,3]", "f32[4]", "broadcast_dimensions={0}", "f32[4,3]");
	reject_full(HLOI_BROADCAST_NUMPY, 0, "add", "f32[3]", "f32[4,3]", "broadcast_dimensions={0}",
		    "Broadcast dimension 0 mismatch: 3 != 4; f32[3] and f32[4,3].", 1);
}

static void test_mode_selection(void)
{
	const char *numpy = "HloModule m, broadcast_mode=numpy\n"
			    "ENTRY e {\n  a = f32[4,3] parameter(0)\n  b = f32[3] parameter(1)\n"
			    "  ROOT r = add(a, b)\n}\n";
	checked r;
	CU_ASSERT_EQUAL(run(&r, numpy), HLOI_OK);
	CU_ASSERT_EQUAL(r.m->checked, 1);
	CU_ASSERT_EQUAL(r.m->checked_mode, HLOI_BROADCAST_NUMPY);
	done(&r);
	/* the options override the header */
	CU_ASSERT_EQUAL(run_mode(&r, numpy, 0, HLOI_BROADCAST_XLA), HLOI_ETYPE);
	CU_ASSERT_STRING_EQUAL(diag_msg(&r, 0),
			       "Shapes must be equal rank, but are f32[3] and f32[4,3]; did you mean broadcast_dimensions={1}?");
	CU_ASSERT_EQUAL(r.m->checked, 0);
	done(&r);
	const char *plain = "ENTRY e {\n  a = f32[4,3] parameter(0)\n  ROOT r = add(a, a)\n}\n";
	CU_ASSERT_EQUAL(run(&r, plain), HLOI_OK);
	CU_ASSERT_EQUAL(r.m->checked_mode, HLOI_BROADCAST_XLA);
	done(&r);
}

/* --- --strict --------------------------------------------------------------------- */

static void test_strict(void)
{
	reject_full(HLOI_BROADCAST_XLA, 1, "add", "f32[2,3]", "f32[3]", "broadcast_dimensions={1}",
		    "Implicit broadcast is not allowed in HLO. Found different shapes for instruction r; output: f32[2,3], operand: f32[3]",
		    1);
	reject_full(HLOI_BROADCAST_XLA, 1, "add", "f32[2,3]", "f32[]", NULL,
		    "Implicit broadcast is not allowed in HLO. Found different shapes for instruction r; output: f32[2,3], operand: f32[]",
		    1);
	reject_full(HLOI_BROADCAST_XLA, 1, "compare", "f32[2,1]", "f32[2,3]", "direction=LT",
		    "Implicit broadcast is not allowed in HLO. Found different shapes for instruction r; output: pred[2,3], operand: f32[2,1]",
		    1);
	checked r;
	char text[512];
	binary_program(text, sizeof text, "add", "f32[2,3]", "f32[2,3]", NULL);
	CU_ASSERT_EQUAL(run_mode(&r, text, 1, HLOI_BROADCAST_DEFAULT), HLOI_OK);
	done(&r);
	/* broadcast may not stretch under --strict */
	const char *stretch = "ENTRY e {\n  a = f32[1] parameter(0)\n"
			      "  ROOT r = f32[2,3] broadcast(a), dimensions={1}\n}\n";
	CU_ASSERT_EQUAL(run(&r, stretch), HLOI_OK);
	done(&r);
	CU_ASSERT_EQUAL(run_mode(&r, stretch, 1, HLOI_BROADCAST_DEFAULT), HLOI_ETYPE);
	CU_ASSERT_STRING_EQUAL(diag_msg(&r, 0),
			       "broadcast operand dimension 0 (size 1) does not match result dimension 1 (size 3)");
	done(&r);
}

/* --- element type gates and compare (doc/spec.md §4) ------------------------------------- */

static void gate(const char *op, const char *type, const char *msg)
{
	char t[64];
	snprintf(t, sizeof t, "%s[2]", type);
	if (msg)
		reject_full(HLOI_BROADCAST_XLA, 0, op, t, t, NULL, msg, 0);
	else
		accept_mode(HLOI_BROADCAST_XLA, op, t, t, NULL, t);
}

static void test_type_gates(void)
{
	static const char *const all[] = { "pred", "s8", "s16", "s32", "s64", "u8", "u16",
					   "u32", "u64", "f16", "bf16", "f32", "f64" };
	for (size_t i = 0; i < sizeof all / sizeof *all; i++) {
		gate("add", all[i], NULL);
		gate("multiply", all[i], NULL);
		gate("maximum", all[i], NULL);
		gate("minimum", all[i], NULL);
	}
	static const char *const arith[] = { "subtract", "divide", "remainder", "power", "atan2",
					     "shift-left", "shift-right-arithmetic", "shift-right-logical" };
	for (size_t i = 0; i < sizeof arith / sizeof *arith; i++) {
		char msg[200];
		snprintf(msg, sizeof msg,
			 "Expected element type in shape to be arithmetic type for operation %s; got PRED.", arith[i]);
		gate(arith[i], "pred", msg);
	}
	gate("subtract", "u8", NULL);
	gate("divide", "bf16", NULL);
	gate("remainder", "f64", NULL);
	gate("power", "s64", NULL);
	gate("and", "pred", NULL);
	gate("or", "s8", NULL);
	gate("xor", "u64", NULL);
	gate("and", "f32", "Expected pred or integral type in argument to and/or/xor operation; got f32.");
	gate("xor", "bf16", "Expected pred or integral type in argument to and/or/xor operation; got bf16.");
	gate("shift-left", "s32", NULL);
	gate("shift-right-logical", "u16", NULL);
	gate("shift-left", "f32", "Expected integral type for operation shift-left; got f32.");
	gate("shift-right-arithmetic", "f64",
	     "Expected integral type for operation shift-right-arithmetic; got f64.");
	gate("atan2", "f32", NULL);
	gate("atan2", "f16", NULL);
	gate("atan2", "s32", "Expected floating-point type for operation atan2; got s32.");
	gate("atan2", "u8", "Expected floating-point type for operation atan2; got u8.");
}

static void compare_case(const char *type, const char *attrs, const char *msg)
{
	char t[64];
	snprintf(t, sizeof t, "%s[2]", type);
	if (msg) {
		reject_full(HLOI_BROADCAST_XLA, 0, "compare", t, t, attrs, msg, 0);
	} else {
		char p[64];
		snprintf(p, sizeof p, "pred[2]");
		accept_mode(HLOI_BROADCAST_XLA, "compare", t, t, attrs, p);
	}
}

static void test_compare(void)
{
	compare_case("f32", "direction=LT", NULL);
	compare_case("f32", "direction=LT, type=FLOAT", NULL);
	compare_case("f32", "direction=LT, type=TOTALORDER", NULL);
	compare_case("bf16", "direction=EQ, type=TOTALORDER", NULL);
	compare_case("s32", "direction=GE, type=SIGNED", NULL);
	compare_case("u32", "direction=GE, type=UNSIGNED", NULL);
	compare_case("pred", "direction=NE, type=UNSIGNED", NULL);
	compare_case("pred", "direction=NE", NULL);
	compare_case("f32", "direction=LT, type=SIGNED",
		     "Expected comparison type FLOAT or TOTALORDER; actual: SIGNED, operand: f32[2].");
	compare_case("s32", "direction=LT, type=UNSIGNED",
		     "Expected comparison type SIGNED; actual: UNSIGNED, operand: s32[2].");
	compare_case("s8", "direction=LT, type=FLOAT",
		     "Expected comparison type SIGNED; actual: FLOAT, operand: s8[2].");
	compare_case("u32", "direction=LT, type=SIGNED",
		     "Expected comparison type UNSIGNED; actual: SIGNED, operand: u32[2].");
	compare_case("pred", "direction=LT, type=TOTALORDER",
		     "Expected comparison type UNSIGNED; actual: TOTALORDER, operand: pred[2].");
	compare_case("f32", NULL, "attribute direction is expected but not seen");

	/* the result is pred; a declared shape must say so */
	checked r;
	const char *bad = "ENTRY e {\n  a = f32[2] parameter(0)\n  ROOT r = f32[2] compare(a, a), direction=EQ\n}\n";
	CU_ASSERT_EQUAL(run(&r, bad), HLOI_ETYPE);
	CU_ASSERT_STRING_EQUAL(diag_msg(&r, 0), "declared shape f32[2] does not match the inferred shape pred[2]");
	done(&r);
}

/* --- names, operands, parameters --------------------------------------------------- */

static void test_names(void)
{
	checked r;
	char *out;
	CU_ASSERT_EQUAL(run(&r, "ENTRY e {\n  x = f32[2] parameter(0)\n  ROOT r = add(x, %aparam)\n}\n"),
			HLOI_ETYPE);
	out = printed(&r);
	CU_ASSERT_STRING_EQUAL(out, "t.hlo:3:19: error: instruction does not exist: aparam\n"
				    "  ROOT r = add(x, %aparam)\n"
				    "                  ^~~~~~~\n");
	free(out);
	done(&r);

	CU_ASSERT_EQUAL(run(&r, "ENTRY e {\n  x = f32[2] parameter(0)\n  x = f32[2] parameter(1)\n"
				"  ROOT r = add(x, x)\n}\n"),
			HLOI_ETYPE);
	out = printed(&r);
	CU_ASSERT_STRING_EQUAL(out, "t.hlo:3:3: error: instruction already exists: x\n"
				    "  x = f32[2] parameter(1)\n"
				    "  ^\n"
				    "t.hlo:2:3: note: previous definition of 'x' is here\n"
				    "  x = f32[2] parameter(0)\n"
				    "  ^\n");
	free(out);
	done(&r);

	CU_ASSERT_EQUAL(run(&r, "ENTRY e {\n  x = f32[2] parameter(0)\n  z = add(x, y)\n"
				"  ROOT y = add(x, x)\n}\n"),
			HLOI_ETYPE);
	out = printed(&r);
	CU_ASSERT_STRING_EQUAL(out, "t.hlo:3:14: error: instruction 'y' is used before its definition\n"
				    "  z = add(x, y)\n"
				    "             ^\n"
				    "t.hlo:4:8: note: 'y' is defined here\n"
				    "  ROOT y = add(x, x)\n"
				    "       ^\n");
	free(out);
	done(&r);

	CU_ASSERT_EQUAL(run(&r, "ENTRY e {\n  x = f32[2] parameter(0)\n  ROOT r = add(x, x, x)\n}\n"),
			HLOI_ETYPE);
	out = printed(&r);
	CU_ASSERT_STRING_EQUAL(out, "t.hlo:3:12: error: add expects 2 operands, but has 3 operands\n"
				    "  ROOT r = add(x, x, x)\n"
				    "           ^~~\n");
	free(out);
	done(&r);

	/* callees must exist (reported once, at the callee's name) */
	CU_ASSERT_EQUAL(run(&r, "ENTRY e {\n  x = f32[2] parameter(0)\n"
				"  ROOT r = f32[2] call(x), to_apply=nowhere\n}\n"),
			HLOI_ETYPE);
	CU_ASSERT_STRING_EQUAL(diag_msg(&r, 0), "computation does not exist: nowhere");
	CU_ASSERT_EQUAL(hloi_context_error_count(r.ctx), 1);
	done(&r);

	/* several errors in one run */
	CU_ASSERT_EQUAL(run(&r, "ENTRY e {\n  x = f32[2] parameter(0)\n  a = add(x, nope)\n"
				"  b = add(x, also)\n  ROOT r = add(x, x)\n}\n"),
			HLOI_ETYPE);
	CU_ASSERT_EQUAL(hloi_context_error_count(r.ctx), 2);
	CU_ASSERT_STRING_EQUAL(diag_msg(&r, 1), "instruction does not exist: also");
	done(&r);
}

static void test_parameters(void)
{
	checked r;
	CU_ASSERT_EQUAL(run(&r, "ENTRY e {\n  b = f32[2] parameter(1)\n  a = s32[3] parameter(0)\n"
				"  ROOT r = add(b, b)\n}\n"),
			HLOI_OK);
	CU_ASSERT_EQUAL(r.m->entry->nparams, 2);
	CU_ASSERT_STRING_EQUAL(r.m->entry->params[0]->name, "a");
	CU_ASSERT_STRING_EQUAL(r.m->entry->params[1]->name, "b");
	CU_ASSERT_STRING_EQUAL(shape_text(r.m->entry->params[0]->result, 1), "s32[3]{0}");
	done(&r);

	char *out;
	CU_ASSERT_EQUAL(run(&r, "ENTRY e {\n  a = f32[2] parameter(0)\n  b = f32[2] parameter(2)\n"
				"  ROOT r = add(a, b)\n}\n"),
			HLOI_ETYPE);
	out = printed(&r);
	CU_ASSERT_STRING_EQUAL(out, "t.hlo:1:7: error: parameter numbers must be dense from 0: parameter 1 is missing\n"
				    "ENTRY e {\n"
				    "      ^\n");
	free(out);
	done(&r);

	CU_ASSERT_EQUAL(run(&r, "ENTRY e {\n  a = f32[2] parameter(0)\n  b = f32[2] parameter(0)\n"
				"  ROOT r = add(a, b)\n}\n"),
			HLOI_ETYPE);
	out = printed(&r);
	CU_ASSERT_STRING_EQUAL(out, "t.hlo:3:14: error: parameter number 0 is used twice\n"
				    "  b = f32[2] parameter(0)\n"
				    "             ^~~~~~~~~\n");
	free(out);
	done(&r);

	/* a duplicate and a real gap */
	CU_ASSERT_EQUAL(run(&r, "ENTRY e {\n  a = f32[2] parameter(0)\n  b = f32[2] parameter(0)\n"
				"  c = f32[2] parameter(2)\n  ROOT r = add(a, b)\n}\n"),
			HLOI_ETYPE);
	CU_ASSERT_EQUAL(hloi_context_error_count(r.ctx), 2);
	CU_ASSERT_STRING_EQUAL(diag_msg(&r, 1), "parameter numbers must be dense from 0: parameter 1 is missing");
	done(&r);

	CU_ASSERT_EQUAL(run(&r, "ENTRY e {\n  ROOT c = f32[] constant(1)\n}\n"), HLOI_OK);
	CU_ASSERT_EQUAL(r.m->entry->nparams, 0);
	done(&r);
}

/* --- declared shapes and layouts ---------------------------------------------------- */

static void test_declared_shapes(void)
{
	checked r;
	char *out;
	CU_ASSERT_EQUAL(run(&r, "ENTRY e {\n  a = f32[2,3] parameter(0)\n  ROOT r = f32[3,2]{0,1} add(a, a)\n}\n"),
			HLOI_ETYPE);
	out = printed(&r);
	CU_ASSERT_STRING_EQUAL(out, "t.hlo:3:12: error: declared shape f32[3,2] does not match the inferred shape f32[2,3]\n"
				    "  ROOT r = f32[3,2]{0,1} add(a, a)\n"
				    "           ^~~~~~~~~~~~~\n");
	free(out);
	done(&r);

	CU_ASSERT_EQUAL(run(&r, "ENTRY e {\n  a = f32[2] parameter(0)\n  ROOT r = s32[2] add(a, a)\n}\n"),
			HLOI_ETYPE);
	CU_ASSERT_STRING_EQUAL(diag_msg(&r, 0), "declared shape s32[2] does not match the inferred shape f32[2]");
	done(&r);

	/* a written operand shape must match its definition */
	CU_ASSERT_EQUAL(run(&r, "ENTRY e {\n  a = f32[2] parameter(0)\n  ROOT r = add(f32[3] a, f32[2]{0} a)\n}\n"),
			HLOI_ETYPE);
	CU_ASSERT_EQUAL(hloi_context_error_count(r.ctx), 1);
	CU_ASSERT_STRING_EQUAL(diag_msg(&r, 0),
			       "The declared operand shape f32[3] is not compatible with the shape of the operand instruction f32[2].");
	done(&r);

	/* layouts: written ones become the result's, else the default */
	CU_ASSERT_EQUAL(run(&r, "ENTRY e {\n  a = f32[2,3]{0,1} parameter(0)\n  b = add(a, a)\n"
				"  ROOT r = f32[2,3]{0,1:pad(3,5)} add(a, b)\n}\n"),
			HLOI_OK);
	CU_ASSERT_STRING_EQUAL(shape_text(find(&r, "a")->result, 1), "f32[2,3]{0,1}");
	CU_ASSERT_STRING_EQUAL(shape_text(find(&r, "b")->result, 1), "f32[2,3]{1,0}");
	CU_ASSERT_STRING_EQUAL(shape_text(find(&r, "r")->result, 1), "f32[2,3]{0,1:pad(3,5)}");
	done(&r);

	CU_ASSERT_EQUAL(run(&r, "ENTRY e {\n  a = f32[2,2]{0,0} parameter(0)\n  ROOT r = add(a, a)\n}\n"),
			HLOI_ETYPE);
	out = printed(&r);
	CU_ASSERT_STRING_EQUAL(out, "t.hlo:2:7: error: layout minor_to_major field has duplicate values: {0,0}; shape: f32[2,2]\n"
				    "  a = f32[2,2]{0,0} parameter(0)\n"
				    "      ^~~~~~~~~~~~~\n");
	free(out);
	done(&r);

	/* the computation's signature */
	CU_ASSERT_EQUAL(run(&r, "ENTRY e (a: f32[2]) -> f32[3] {\n  a = f32[2] parameter(0)\n  ROOT r = add(a, a)\n}\n"),
			HLOI_ETYPE);
	CU_ASSERT_STRING_EQUAL(diag_msg(&r, 0),
			       "Shape of computation e, f32[3], is not compatible with that of its root instruction r, f32[2]");
	done(&r);
	CU_ASSERT_EQUAL(run(&r, "ENTRY e (a: f32[2]) -> f32[2] {\n  a = f32[2] parameter(0)\n  ROOT r = add(a, a)\n}\n"),
			HLOI_OK);
	done(&r);
}

static void test_constants(void)
{
	checked r;
	CU_ASSERT_EQUAL(run(&r, "ENTRY e {\n  c = s32[2,2]{0,1} constant({{1, 2}, {3, 4}})\n"
				"  d = f32[] constant(1.5)\n  ROOT r = add(c, c)\n}\n"),
			HLOI_OK);
	instr *c = find(&r, "c");
	CU_ASSERT_PTR_NOT_NULL_FATAL(c->value);
	CU_ASSERT_EQUAL(r.m->nvalues, 2);
	CU_ASSERT_STRING_EQUAL(shape_text(&c->value->shape, 1), "s32[2,2]{0,1}");
	const int32_t *v = c->value->data;
	CU_ASSERT_EQUAL(v[0], 1);  /* column-major buffer: 1 3 2 4 */
	CU_ASSERT_EQUAL(v[1], 3);
	CU_ASSERT_EQUAL(v[2], 2);
	CU_ASSERT_EQUAL(v[3], 4);
	/* checking again converts nothing twice */
	CU_ASSERT_EQUAL(check_module(r.m, r.ctx, NULL), HLOI_OK);
	CU_ASSERT_EQUAL(r.m->nvalues, 2);
	done(&r);

	CU_ASSERT_EQUAL(run(&r, "ENTRY e {\n  ROOT c = u8[2] constant({1, 300})\n}\n"), HLOI_ETYPE);
	CU_ASSERT_EQUAL(r.m->checked, 0);
	done(&r);
}

/* --- the broadcast instruction -------------------------------------------------------- */

static void test_broadcast_instr(void)
{
	checked r;
	CU_ASSERT_EQUAL(run(&r, "ENTRY e {\n  a = f32[3] parameter(0)\n  s = f32[] parameter(1)\n"
				"  b = f32[2,3] broadcast(a), dimensions={1}\n"
				"  c = f32[2,3] broadcast(s), dimensions={}\n"
				"  d = f32[2,3] broadcast(s)\n"
				"  e = f32[3,2]{0,1} broadcast(a), dimensions={0}\n"
				"  ROOT r = add(b, c)\n}\n"),
			HLOI_OK);
	CU_ASSERT_EQUAL(find(&r, "b")->ops[0].out_dim[0], 1);
	CU_ASSERT_EQUAL(find(&r, "e")->ops[0].out_dim[0], 0);
	CU_ASSERT_STRING_EQUAL(shape_text(find(&r, "e")->result, 1), "f32[3,2]{0,1}");
	CU_ASSERT_STRING_EQUAL(shape_text(find(&r, "d")->result, 0), "f32[2,3]");
	done(&r);

	static const struct {
		const char *line, *msg;
	} bad[] = {
		{ "f32[2,3] broadcast(a), dimensions={0,1}",
		  "broadcast dimensions={0,1} has 2 entries but the operand f32[3] has rank 1" },
		{ "f32[2,3] broadcast(a), dimensions={2}", "broadcast dimension 2 out of range for result f32[2,3]" },
		{ "f32[2,3] broadcast(a), dimensions={-1}", "broadcast dimension -1 out of range for result f32[2,3]" },
		{ "f32[2,3] broadcast(a), dimensions={0}",
		  "broadcast operand dimension 0 (size 3) does not match result dimension 0 (size 2)" },
		{ "f32[2,3] broadcast(a)", "attribute dimensions is expected but not seen" },
		{ "s32[2,3] broadcast(a), dimensions={1}",
		  "declared shape s32[2,3] does not match the inferred shape f32[2,3]" },
	};
	for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
		char text[256];
		snprintf(text, sizeof text, "ENTRY e {\n  a = f32[3] parameter(0)\n  ROOT r = %s\n}\n", bad[i].line);
		CU_ASSERT_EQUAL(run(&r, text), HLOI_ETYPE);
		CU_ASSERT_STRING_EQUAL(diag_msg(&r, 0), bad[i].msg);
		done(&r);
	}
	/* the caret covers the whole attribute */
	CU_ASSERT_EQUAL(run(&r, "ENTRY e {\n  a = f32[3] parameter(0)\n"
				"  ROOT r = f32[2,3] broadcast(a), dimensions={0}\n}\n"),
			HLOI_ETYPE);
	char *out = printed(&r);
	CU_ASSERT_STRING_EQUAL(out, "t.hlo:3:35: error: broadcast operand dimension 0 (size 3) does not match result dimension 0 (size 2)\n"
				    "  ROOT r = f32[2,3] broadcast(a), dimensions={0}\n"
				    "                                  ^~~~~~~~~~~~~~\n");
	free(out);
	done(&r);
}

/* --- carets of broadcasting errors ------------------------------------------------------ */

static void test_carets(void)
{
	checked r;
	char *out;
	CU_ASSERT_EQUAL(run(&r, "ENTRY e {\n  a = f32[4,3] parameter(0)\n  b = f32[3] parameter(1)\n"
				"  ROOT r = add(a, b), broadcast_dimensions={0}\n}\n"),
			HLOI_ETYPE);
	out = printed(&r);
	CU_ASSERT_STRING_EQUAL(out, "t.hlo:4:23: error: Broadcast dimension 0 mismatch: 3 != 4; f32[3] and f32[4,3].\n"
				    "  ROOT r = add(a, b), broadcast_dimensions={0}\n"
				    "                      ^~~~~~~~~~~~~~~~~~~~~~~~\n"
				    "t.hlo:4:12: note: operands of add: f32[4,3] and f32[3]\n"
				    "  ROOT r = add(a, b), broadcast_dimensions={0}\n"
				    "           ^~~\n");
	free(out);
	done(&r);

	CU_ASSERT_EQUAL(run(&r, "ENTRY e {\n  a = f32[4,3] parameter(0)\n  b = f32[3] parameter(1)\n"
				"  ROOT r = multiply(b, a)\n}\n"),
			HLOI_ETYPE);
	out = printed(&r);
	CU_ASSERT_STRING_EQUAL(out, "t.hlo:4:12: error: Shapes must be equal rank, but are f32[3] and f32[4,3]; did you mean broadcast_dimensions={1}?\n"
				    "  ROOT r = multiply(b, a)\n"
				    "           ^~~~~~~~\n"
				    "t.hlo:4:12: note: operands of multiply: f32[3] and f32[4,3]\n"
				    "  ROOT r = multiply(b, a)\n"
				    "           ^~~~~~~~\n");
	free(out);
	done(&r);
}

/* --- unsupported features ------------------------------------------------------------------ */

static void test_unsupported(void)
{
	checked r;
	char *out;
	/* an op of a type hloi does not evaluate (as XLA's CPU backend) */
	CU_ASSERT_EQUAL(run(&r, "ENTRY e {\n  a = s8[] parameter(0)\n  ROOT d = s8[2,2] rng(a, a), distribution=rng_uniform\n}\n"),
			HLOI_EUNSUPPORTED);
	out = printed(&r);
	CU_ASSERT_STRING_EQUAL(out, "t.hlo:3:20: error: unsupported rng of s8[2,2]: XLA's CPU backend expands rng_uniform "
				    "of f16, bf16, f32, f64, s32, u32, s64 and u64, rng_normal of the four float types\n"
				    "  ROOT d = s8[2,2] rng(a, a), distribution=rng_uniform\n"
				    "                   ^~~\n");
	free(out);
	done(&r);

	/* a token parameter of the entry is given a token (run_hlo_module's
	 * way): accepted */
	CU_ASSERT_EQUAL(run(&r, "ENTRY e {\n  a = token[] parameter(0)\n  ROOT r = token[] after-all(a)\n}\n"),
			HLOI_OK);
	done(&r);

	/* an entry parameter may be `<=N` or `?` (its input gives the size);
	 * a parameter of another computation may be `<=N` (its caller's
	 * operand gives the size) or `?` (a run sizes it per call site) */
	CU_ASSERT_EQUAL(run(&r, "ENTRY e {\n  a = f32[<=4] parameter(0)\n  ROOT r = add(a, a)\n}\n"), HLOI_OK);
	done(&r);
	CU_ASSERT_EQUAL(run(&r, "ENTRY e {\n  a = f32[2,?] parameter(0)\n  ROOT r = add(a, a)\n}\n"), HLOI_OK);
	done(&r);
	/* a `?` in a called computation checks; a run checks a copy of it
	 * sized by the call site (check_module_sized) */
	CU_ASSERT_EQUAL(run(&r, "c {\n  p = f32[?] parameter(0)\n  ROOT n = f32[?] negate(p)\n}\n\n"
				"ENTRY e {\n  a = f32[4] parameter(0)\n  ROOT r = f32[4] call(a), to_apply=c\n}\n"),
			HLOI_OK);
	{
		shape in4;
		int64_t four = 4;
		shape_make_array(&in4, ET_F32, 1, &four);
		const shape *ins[1] = { &in4 };
		CU_ASSERT_EQUAL(check_module_sized(r.m, r.ctx, ins, 1), HLOI_OK);
		const computation *cp = find(&r, "r")->callee;
		CU_ASSERT_PTR_NOT_NULL_FATAL(cp);
		CU_ASSERT_PTR_EQUAL(cp->sized_from, module_find_computation(r.m, "c"));
		CU_ASSERT_EQUAL(cp->root->result->dims[0], 4);
		CU_ASSERT_EQUAL(cp->root->result->dim_kind[0], DIM_STATIC);
	}
	done(&r);
	CU_ASSERT_EQUAL(run(&r, "ENTRY e {\n  a = f32[?] parameter(0)\n  ROOT r = f32[?] negate(a)\n}\n"), HLOI_OK);
	{
		shape in3;
		int64_t three = 3;
		shape_make_array(&in3, ET_F32, 1, &three);
		const shape *ins[1] = { &in3 };
		CU_ASSERT_EQUAL(check_module_sized(r.m, r.ctx, ins, 1), HLOI_OK);
		CU_ASSERT_EQUAL(find(&r, "r")->result->dims[0], 3);
		CU_ASSERT_EQUAL(find(&r, "r")->result->dim_kind[0], DIM_STATIC);
		CU_ASSERT_EQUAL(find(&r, "a")->result->dims[0], 3);
		/* sized again with another size: the written `?` stays */
		in3.dims[0] = 7;
		CU_ASSERT_EQUAL(check_module_sized(r.m, r.ctx, ins, 1), HLOI_OK);
		CU_ASSERT_EQUAL(find(&r, "r")->result->dims[0], 7);
	}
	done(&r);
	CU_ASSERT_EQUAL(run(&r, "c {\n  p = f32[<=4] parameter(0)\n  ROOT n = f32[<=4] negate(p)\n}\n\n"
				"ENTRY e {\n  a = f32[4] parameter(0)\n  ROOT r = f32[4] call(a), to_apply=c\n}\n"),
			HLOI_OK);
	done(&r);

	/* tiled layouts check; packed elements (E(n) below the storage width) do not */
	CU_ASSERT_EQUAL(run(&r, "ENTRY e {\n  a = f32[8,128]{1,0:T(8,128)} parameter(0)\n  ROOT r = add(a, a)\n}\n"),
			HLOI_OK);
	done(&r);
	CU_ASSERT_EQUAL(run(&r, "ENTRY e {\n  a = s8[8]{0:E(4)} parameter(0)\n  ROOT r = add(a, a)\n}\n"),
			HLOI_EUNSUPPORTED);
	CU_ASSERT_STRING_EQUAL(diag_msg(&r, 0), "unsupported element size in bits E(4) for s8 (elements are stored in 8 bits)");
	done(&r);

	/* several unsupported things are all reported; a type error makes it ETYPE */
	CU_ASSERT_EQUAL(run(&r, "ENTRY e {\n  a = s8[2,2] parameter(0)\n  c = u2[2]{0:E(4)} parameter(1)\n"
				"  s = s8[] parameter(2)\n  d = s8[2,2] rng(s, s), distribution=rng_uniform\n  ROOT r = add(d, a)\n}\n"),
			HLOI_EUNSUPPORTED);
	CU_ASSERT_EQUAL(hloi_context_error_count(r.ctx), 2);
	done(&r);
	CU_ASSERT_EQUAL(run(&r, "ENTRY e {\n  a = s8[2,2] parameter(0)\n  s = s8[] parameter(1)\n"
				"  d = s8[2,2] rng(s, s), distribution=rng_uniform\n"
				"  ROOT r = add(d, a), broadcast_dimensions={1,0}\n}\n"),
			HLOI_ETYPE);
	CU_ASSERT_EQUAL(hloi_context_error_count(r.ctx), 2);
	done(&r);
}

/* --- data-movement ops, tuples, calls (issue 3 part 2) ------------------------ */

/* The program checks and `name`'s inferred shape prints as `expect` (with layout). */
static void expect_shape(const char *text, const char *name, const char *expect)
{
	checked r;
	run(&r, text);
	CU_ASSERT_EQUAL(r.st, HLOI_OK);
	if (r.st != HLOI_OK) {
		hloi_context_print_diagnostics(r.ctx, stderr, 0);
	} else {
		const char *got = shape_text(find(&r, name)->result, 1);
		CU_ASSERT_STRING_EQUAL(got, expect);
		if (strcmp(got, expect) != 0)
			fprintf(stderr, "\n%s: got %s, expected %s\n", text, got, expect);
	}
	done(&r);
}

/* The program fails with status `st` and `msg` as its first diagnostic. */
static void expect_error(const char *text, hloi_status st, const char *msg)
{
	checked r;
	run(&r, text);
	CU_ASSERT_EQUAL(r.st, st);
	CU_ASSERT_STRING_EQUAL(diag_msg(&r, 0), msg);
	if (strcmp(diag_msg(&r, 0), msg) != 0)
		fprintf(stderr, "\n%s: got '%s'\nexpected '%s'\n", text, diag_msg(&r, 0), msg);
	done(&r);
}

static void test_data_ops(void)
{
	expect_shape("ENTRY e {\n  ROOT i = s32[2,3]{0,1} iota(), iota_dimension=1\n}\n", "i", "s32[2,3]{0,1}");
	expect_error("ENTRY e {\n  ROOT i = s32[2,3] iota(), iota_dimension=2\n}\n", HLOI_ETYPE,
		     "The iota dimension cannot go beyond the operation rank or be negative: iota_dimension=2, rank 2.");
	expect_shape("ENTRY e {\n  x = f32[2,3] parameter(0)\n  ROOT r = f32[3,1,2] reshape(x)\n}\n", "r",
		     "f32[3,1,2]{2,1,0}");
	expect_error("ENTRY e {\n  x = f32[2,3] parameter(0)\n  ROOT r = f32[5] reshape(x)\n}\n", HLOI_ETYPE,
		     "Reshape operation has mismatched element counts: from=6 (f32[2,3]) to=5 (f32[5]).");
	expect_shape("ENTRY e {\n  x = f32[2,3,4] parameter(0)\n  ROOT t = f32[4,2,3] transpose(x), dimensions={2,0,1}\n}\n",
		     "t", "f32[4,2,3]{2,1,0}");
	expect_error("ENTRY e {\n  x = f32[2,3] parameter(0)\n  ROOT t = f32[2,3] transpose(x), dimensions={0,0}\n}\n",
		     HLOI_ETYPE,
		     "Transpose dimensions [0,0] are not a permutation of the operand dimensions (operand shape is f32[2,3]).");
	expect_shape("ENTRY e {\n  x = f32[2,3] parameter(0)\n  ROOT c = f32[2,3]{0,1} copy(x)\n}\n", "c", "f32[2,3]{0,1}");
	expect_shape("ENTRY e {\n  x = f32[2,3] parameter(0)\n  ROOT c = u8[2,3] convert(x)\n}\n", "c", "u8[2,3]{1,0}");
	expect_error("ENTRY e {\n  x = f32[2,3] parameter(0)\n  ROOT c = u8[3,2] convert(x)\n}\n", HLOI_ETYPE,
		     "declared shape u8[3,2] does not match the inferred shape u8[2,3]");
	expect_shape("ENTRY e {\n  x = f32[2] parameter(0)\n  ROOT c = s32[2] bitcast-convert(x)\n}\n", "c", "s32[2]{0}");
	/* between widths (XLA's InferBitcastConvertShape): a last dimension
	 * of the ratio added (most minor) or removed */
	expect_shape("ENTRY e {\n  x = f32[2] parameter(0)\n  ROOT c = s16[2,2] bitcast-convert(x)\n}\n", "c",
		     "s16[2,2]{1,0}");
	expect_shape("ENTRY e {\n  x = f64[] parameter(0)\n  ROOT c = u8[8] bitcast-convert(x)\n}\n", "c", "u8[8]{0}");
	expect_shape("ENTRY e {\n  x = u8[3,4] parameter(0)\n  ROOT c = f32[3] bitcast-convert(x)\n}\n", "c", "f32[3]{0}");
	expect_error("ENTRY e {\n  x = u8[4,3] parameter(0)\n  ROOT c = f32[4] bitcast-convert(x)\n}\n", HLOI_ETYPE,
		     "Last dimension of input shape=3 is not equal to ratio of bit-widths=4 for bitcast-convert from u8[4,3] to F32");
	expect_error("ENTRY e {\n  x = f32[2] parameter(0)\n  ROOT c = s16[2] bitcast-convert(x)\n}\n", HLOI_ETYPE,
		     "declared shape s16[2] does not match the inferred shape s16[2,2]");
	expect_error("ENTRY e {\n  x = u8[2] parameter(0)\n  ROOT c = s4[2,2] bitcast-convert(x)\n}\n", HLOI_EUNSUPPORTED,
		     "unsupported bitcast-convert between element types of different widths: u8[2] (8 bits) to s4[2,2] (4 bits)");
	/* select: pred of the same dims or a scalar */
	expect_shape("ENTRY e {\n  p = pred[] parameter(0)\n  a = f32[2] parameter(1)\n  ROOT s = select(p, a, a)\n}\n",
		     "s", "f32[2]{0}");
	expect_error("ENTRY e {\n  p = pred[3] parameter(0)\n  a = f32[2] parameter(1)\n  ROOT s = select(p, a, a)\n}\n",
		     HLOI_ETYPE, "Operands to select and predicate must be the same shape; got pred[3] and f32[2].");
	/* the scalar pred is an extension: --strict refuses it */
	checked r;
	run_mode(&r, "ENTRY e {\n  p = pred[] parameter(0)\n  a = f32[2] parameter(1)\n  ROOT s = f32[2] select(p, a, a)\n}\n",
		 1, HLOI_BROADCAST_DEFAULT);
	CU_ASSERT_EQUAL(r.st, HLOI_ETYPE);
	CU_ASSERT_STRING_EQUAL(diag_msg(&r, 0), "Operands to select and predicate must be the same shape; got pred[] and f32[2].");
	done(&r);
}

static void test_tuples_and_calls(void)
{
	/* tuple keeps the operands' layouts; get-tuple-element takes the element's */
	const char *t = "ENTRY e {\n  a = f32[2,3]{0,1} parameter(0)\n  b = s32[] parameter(1)\n"
			"  t = tuple(a, b)\n  ROOT g = get-tuple-element(t), index=0\n}\n";
	expect_shape(t, "t", "(f32[2,3]{0,1}, s32[])");
	expect_shape(t, "g", "f32[2,3]{0,1}");
	expect_error("ENTRY e {\n  a = (f32[2], s32[]) parameter(0)\n  ROOT g = get-tuple-element(a), index=5\n}\n",
		     HLOI_ETYPE, "Cannot infer shape: attempt to index out of tuple bounds: 5 > (f32[2], s32[])");
	/* call: callee checked first even when defined later; the result is its root's */
	expect_shape("ENTRY e {\n  a = f32[2] parameter(0)\n  ROOT c = f32[2] call(a), to_apply=f\n}\n"
		     "f {\n  p = f32[2] parameter(0)\n  ROOT r = f32[2]{0} add(p, p)\n}\n",
		     "c", "f32[2]{0}");
	expect_error("f {\n  p = f32[2] parameter(0)\n  ROOT r = f32[2] call(p), to_apply=f\n}\n"
		     "ENTRY e {\n  a = f32[2] parameter(0)\n  ROOT c = f32[2] call(a), to_apply=f\n}\n",
		     HLOI_ETYPE, "computation f calls itself (recursion is not supported)");
	expect_error("f {\n  p = f32[2] parameter(0)\n  ROOT r = f32[2] add(p, p)\n}\n"
		     "ENTRY e {\n  a = f32[3] parameter(0)\n  ROOT c = f32[2] fusion(a), kind=kLoop, calls=f\n}\n",
		     HLOI_ETYPE, "operand 0 of fusion has shape f32[3], but parameter 0 of computation f is f32[2]");
	/* a chain of calls deeper than 64 is refused, not a stack overflow */
	strbuf b = STRBUF_INIT;
	for (int i = 0; i < 70; i++)
		sb_printf(&b, "chain%d {\n  p = f32[] parameter(0)\n  ROOT r = f32[] call(p), to_apply=chain%d\n}\n", i, i + 1);
	sb_printf(&b, "chain70 {\n  ROOT p = f32[] parameter(0)\n}\nENTRY e {\n  a = f32[] parameter(0)\n"
		      "  ROOT r = f32[] call(a), to_apply=chain0\n}\n");
	checked r;
	run(&r, sb_str(&b));
	CU_ASSERT_EQUAL(r.st, HLOI_EUNSUPPORTED);
	done(&r);
	sb_free(&b);
}

/* --- shape rules of ops checked but not evaluated (fft, linear algebra,
 * batch norm, select-and-scatter, set-dimension-size, domain, ragged-dot):
 * the result shape may be left out, as XLA's parser allows ---------------- */

#define BN_PARAMS "  x = f32[4,8] parameter(0)\n  s = f32[8] parameter(1)\n"

static void test_inferred_rules(void)
{
	shapes_only = 1;
	/* fft: FFT keeps the complex shape; RFFT halves the last dim (+1) into
	 * complex; IRFFT back to real */
	expect_shape("ENTRY e {\n  x = c64[4,8] parameter(0)\n  ROOT f = fft(x), fft_type=FFT, fft_length={8}\n}\n", "f",
		     "c64[4,8]{1,0}");
	expect_shape("ENTRY e {\n  x = f32[4,8] parameter(0)\n  ROOT f = fft(x), fft_type=RFFT, fft_length={4,8}\n}\n",
		     "f", "c64[4,5]{1,0}");
	expect_shape("ENTRY e {\n  x = f64[8] parameter(0)\n  ROOT f = fft(x), fft_type=RFFT, fft_length={8}\n}\n", "f",
		     "c128[5]{0}");
	expect_shape("ENTRY e {\n  x = c64[4,8] parameter(0)\n  ROOT f = fft(x), fft_type=IRFFT, fft_length={14}\n}\n",
		     "f", "f32[4,14]{1,0}");
	expect_error("ENTRY e {\n  x = f32[4,8] parameter(0)\n  ROOT f = fft(x), fft_type=RFFT, fft_length={6}\n}\n",
		     HLOI_ETYPE,
		     "RFFT requires innermost dimensions match fft_length but dimension 1 is 8 and should be 6.");
	expect_error("ENTRY e {\n  x = c64[4,8] parameter(0)\n  ROOT f = fft(x), fft_type=IRFFT, fft_length={8}\n}\n",
		     HLOI_ETYPE,
		     "IRFFT requires innermost dimension matches fft_length/2+1, but dimension 1 is 8 and should be 5.");
	expect_error("ENTRY e {\n  x = f32[8] parameter(0)\n  ROOT f = fft(x), fft_type=FFT, fft_length={8}\n}\n",
		     HLOI_ETYPE, "FFT requires complex input type, found F32.");
	expect_error("ENTRY e {\n  x = c64[8] parameter(0)\n  ROOT f = fft(x), fft_type=FFT, fft_length={2,4,8,8}\n}\n",
		     HLOI_ETYPE, "FFT only supports ranks 1-3; got 4.");
	expect_error("ENTRY e {\n  x = f32[4,8] parameter(0)\n  ROOT f = c64[4,8] fft(x), fft_type=RFFT, fft_length={8}\n}\n",
		     HLOI_ETYPE, "declared shape c64[4,8] does not match the inferred shape c64[4,5]");
	/* cholesky and triangular-solve */
	expect_shape("ENTRY e {\n  a = f32[3,5,5]{1,2,0} parameter(0)\n  ROOT c = cholesky(a), lower=true\n}\n", "c",
		     "f32[3,5,5]{2,1,0}");
	expect_error("ENTRY e {\n  a = f32[5,4] parameter(0)\n  ROOT c = cholesky(a), lower=true\n}\n", HLOI_ETYPE,
		     "The two minor dimensions of 'a' must have compatible size, got f32[5,4].");
	expect_error("ENTRY e {\n  a = s32[5,5] parameter(0)\n  ROOT c = cholesky(a), lower=true\n}\n", HLOI_ETYPE,
		     "Expected element type in shape to be floating or complex for Cholesky; got S32.");
	const char *ts = "ENTRY e {\n  a = f32[3,5,5] parameter(0)\n  b = f32[3,5,7] parameter(1)\n"
			 "  c = f32[3,7,5] parameter(2)\n"
			 "  l = triangular-solve(a, b), left_side=true, lower=true, transpose_a=NO_TRANSPOSE\n"
			 "  r = triangular-solve(a, c), left_side=false, lower=false, transpose_a=ADJOINT\n"
			 "  ROOT t = tuple(l, r)\n}\n";
	expect_shape(ts, "l", "f32[3,5,7]{2,1,0}");
	expect_shape(ts, "r", "f32[3,7,5]{2,1,0}");
	expect_error("ENTRY e {\n  a = f32[5,5] parameter(0)\n  b = f32[7,5] parameter(1)\n"
		     "  ROOT l = triangular-solve(a, b), left_side=true, transpose_a=NO_TRANSPOSE\n}\n",
		     HLOI_ETYPE, "The shared dimension of 'a' and 'b' does not match, got shapes f32[5,5] and f32[7,5]");
	expect_error("ENTRY e {\n  a = f32[5,5] parameter(0)\n  b = f64[5,5] parameter(1)\n"
		     "  ROOT l = triangular-solve(a, b), left_side=true, transpose_a=NO_TRANSPOSE\n}\n",
		     HLOI_ETYPE,
		     "Expected element types in shape to be floating or complex and identical for TriangularSolve; got F32 and F64.");
	expect_error("ENTRY e {\n  a = f32[2,5,5] parameter(0)\n  b = f32[3,5,5] parameter(1)\n"
		     "  ROOT l = triangular-solve(a, b), left_side=true, transpose_a=NO_TRANSPOSE\n}\n",
		     HLOI_ETYPE,
		     "The leading batch dimensions of the arguments to triangular solve must be equal; got f32[3,5,5] and f32[2,5,5].");
	/* batch norm: the per-feature operands are rank 1 of the feature count */
	expect_shape("ENTRY e {\n" BN_PARAMS
		     "  ROOT t = batch-norm-training(x, s, s), epsilon=0.001, feature_index=1\n}\n",
		     "t", "(f32[4,8]{1,0}, f32[8]{0}, f32[8]{0})");
	expect_shape("ENTRY e {\n" BN_PARAMS
		     "  ROOT i = batch-norm-inference(x, s, s, s, s), epsilon=0.001, feature_index=1\n}\n",
		     "i", "f32[4,8]{1,0}");
	expect_shape("ENTRY e {\n" BN_PARAMS
		     "  ROOT g = batch-norm-grad(x, s, s, s, x), epsilon=0.001, feature_index=1\n}\n",
		     "g", "(f32[4,8]{1,0}, f32[8]{0}, f32[8]{0})");
	expect_error("ENTRY e {\n" BN_PARAMS
		     "  ROOT t = batch-norm-training(x, s, s), epsilon=0.001, feature_index=2\n}\n",
		     HLOI_ETYPE,
		     "Expected feature_index of batch-norm-training to be smaller than the rank of operand_shape; got feature_index 2, and rank 2.");
	expect_error("ENTRY e {\n" BN_PARAMS
		     "  ROOT t = batch-norm-training(x, s, s), epsilon=0.001, feature_index=0\n}\n",
		     HLOI_ETYPE,
		     "The size of scale factor should be compatible with feature count, but the size of scale factor is 8 and the feature count is 4.");
	expect_error("ENTRY e {\n  x = s32[4,8] parameter(0)\n  s = f32[8] parameter(1)\n"
		     "  ROOT t = batch-norm-training(x, s, s), epsilon=0.001, feature_index=1\n}\n",
		     HLOI_ETYPE,
		     "The operand to batch-norm-training must have a floating point element type, but the shape is S32.");
	expect_error("ENTRY e {\n" BN_PARAMS "  m = f32[8,1] parameter(2)\n"
		     "  ROOT i = batch-norm-inference(x, s, s, m, s), epsilon=0.001, feature_index=1\n}\n",
		     HLOI_ETYPE, "Mean input of batch-norm-inference must have rank 1, but has rank 2.");
	expect_error("ENTRY e {\n" BN_PARAMS "  y = f32[4,9] parameter(2)\n"
		     "  ROOT g = batch-norm-grad(x, s, s, s, y), epsilon=0.001, feature_index=1\n}\n",
		     HLOI_ETYPE,
		     "Expected output_grad_shape of batch-norm-grad to have the same dimensions as operand_shape; got f32[4,9] and f32[4,8].");
	/* select-and-scatter: source is the window-reduced operand */
	const char *sas_comps = "ge {\n  a = f32[] parameter(0)\n  b = f32[] parameter(1)\n"
				"  ROOT r = pred[] compare(a, b), direction=GE\n}\n"
				"add {\n  a = f32[] parameter(0)\n  b = f32[] parameter(1)\n  ROOT r = f32[] add(a, b)\n}\n";
	char text[1024];
	snprintf(text, sizeof text,
		 "%sENTRY e {\n  x = f32[4,8] parameter(0)\n  src = f32[2,4] parameter(1)\n  z = f32[] constant(0)\n"
		 "  ROOT s = select-and-scatter(x, src, z), window={size=2x2 stride=2x2}, select=ge, scatter=add\n}\n",
		 sas_comps);
	expect_shape(text, "s", "f32[4,8]{1,0}");
	snprintf(text, sizeof text,
		 "%sENTRY e {\n  x = f32[4,8] parameter(0)\n  src = f32[2,3] parameter(1)\n  z = f32[] constant(0)\n"
		 "  ROOT s = select-and-scatter(x, src, z), window={size=2x2 stride=2x2}, select=ge, scatter=add\n}\n",
		 sas_comps);
	expect_error(text, HLOI_ETYPE,
		     "Source shape does not match the shape of window-reduced operand: source(f32[2,3]), window-reduced operand(f32[2,4]).");
	snprintf(text, sizeof text,
		 "%sENTRY e {\n  x = f32[4,8] parameter(0)\n  src = f32[2,4] parameter(1)\n  z = f32[] constant(0)\n"
		 "  ROOT s = select-and-scatter(x, src, z), window={size=2x2 stride=2x2}, select=add, scatter=add\n}\n",
		 sas_comps);
	expect_error(text, HLOI_ETYPE, "Select function must have rank-0 PRED result.");
	/* set-dimension-size makes the dimension dynamic; domain passes its operand on */
	expect_shape("ENTRY e {\n  x = f32[4,8] parameter(0)\n  n = s32[] parameter(1)\n"
		     "  ROOT d = set-dimension-size(x, n), dimensions={1}\n}\n",
		     "d", "f32[4,<=8]{1,0}");
	expect_error("ENTRY e {\n  x = f32[4,8] parameter(0)\n  n = s64[] parameter(1)\n"
		     "  ROOT d = set-dimension-size(x, n), dimensions={1}\n}\n",
		     HLOI_ETYPE, "SetDimensionSize's value has to be S32 scalar, got s64[]");
	expect_error("ENTRY e {\n  x = f32[4,8] parameter(0)\n  n = s32[] parameter(1)\n"
		     "  ROOT d = set-dimension-size(x, n), dimensions={2}\n}\n",
		     HLOI_ETYPE, "SetDimensionSize dimension out of bounds: 2.");
	/* `<=N` dimensions through elementwise ops: a unary op keeps them; a
	 * binary op keeps one `<=N` in both operands, and one static in either
	 * is static (XLA's InferMostSpecificDimAndBound); a written `<=N` where
	 * the inferred is static is accepted (XLA compares ignoring which
	 * dimensions are dynamic), a written static one refused */
	const char *dyn = "ENTRY e {\n  x = f32[4,8] parameter(0)\n  n = s32[] parameter(1)\n"
			  "  d = f32[4,<=8] set-dimension-size(x, n), dimensions={1}\n";
	char t[512];
	snprintf(t, sizeof t, "%s  ROOT r = negate(d)\n}\n", dyn);
	expect_shape(t, "r", "f32[4,<=8]{1,0}");
	snprintf(t, sizeof t, "%s  ROOT r = add(d, d)\n}\n", dyn);
	expect_shape(t, "r", "f32[4,<=8]{1,0}");
	snprintf(t, sizeof t, "%s  ROOT r = add(d, x)\n}\n", dyn);
	expect_shape(t, "r", "f32[4,8]{1,0}");
	snprintf(t, sizeof t, "%s  ROOT r = f32[<=4,<=8] add(d, x)\n}\n", dyn);
	expect_shape(t, "r", "f32[<=4,<=8]{1,0}");
	expect_shape("ENTRY e {\n  x = f32[4,8]{0,1} parameter(0)\n"
		     "  ROOT d = domain(x), domain={kind=\"sharding\", entry={replicated}, exit={maximal device=0}}\n}\n",
		     "d", "f32[4,8]{0,1}");
	/* ragged-dot, each mode of the lhs ragged dimension */
	const char *rd = "ENTRY e {\n  l = f32[11,5] parameter(0)\n  r = f32[3,5,7] parameter(1)\n"
			 "  g = s32[3] parameter(2)\n  r2 = f32[5,7] parameter(3)\n"
			 "  lb = f32[2,11,5] parameter(4)\n  rb = f32[2,5,7] parameter(5)\n  g2 = s32[2] parameter(6)\n"
			 "  m = ragged-dot(l, r, g), lhs_contracting_dims={1}, rhs_contracting_dims={1}, "
			 "lhs_ragged_dims={0}, rhs_group_dims={0}\n"
			 "  k = ragged-dot(l, r2, g), lhs_contracting_dims={1}, rhs_contracting_dims={0}, lhs_ragged_dims={1}\n"
			 "  b = ragged-dot(lb, rb, g2), lhs_batch_dims={0}, rhs_batch_dims={0}, lhs_contracting_dims={2}, "
			 "rhs_contracting_dims={1}, lhs_ragged_dims={0}\n"
			 "  ROOT t = tuple(m, k, b)\n}\n";
	expect_shape(rd, "m", "f32[11,7]{1,0}");
	expect_shape(rd, "k", "f32[3,11,7]{2,1,0}");
	expect_shape(rd, "b", "f32[2,11,7]{2,1,0}");
	expect_error("ENTRY e {\n  l = f32[11,5] parameter(0)\n  r = f32[4,5,7] parameter(1)\n  g = s32[3] parameter(2)\n"
		     "  ROOT m = ragged-dot(l, r, g), lhs_contracting_dims={1}, rhs_contracting_dims={1}, "
		     "lhs_ragged_dims={0}, rhs_group_dims={0}\n}\n",
		     HLOI_ETYPE,
		     "Cannot infer shape for ragged dot operation: f32[11,5] <ragged_dot> f32[4,5,7]. rhs group dimension is expected to have size=3, got 4");
	expect_error("ENTRY e {\n  l = f32[11,5] parameter(0)\n  r = f32[3,5,7] parameter(1)\n  g = s32[3] parameter(2)\n"
		     "  ROOT m = ragged-dot(l, r, g), lhs_contracting_dims={1}, rhs_contracting_dims={1}, lhs_ragged_dims={0}\n}\n",
		     HLOI_ETYPE,
		     "Cannot infer shape for ragged dot operation: f32[11,5] <ragged_dot> f32[3,5,7]. There must be exactly one group dimension in the rhs when the lhs ragged dimension is non-contracting.");
	expect_error("ENTRY e {\n  l = f32[11,5] parameter(0)\n  r = f32[3,5,7] parameter(1)\n  g = s32[3] parameter(2)\n"
		     "  ROOT m = ragged-dot(l, r, g), lhs_contracting_dims={1}, rhs_contracting_dims={2}, "
		     "lhs_ragged_dims={0}, rhs_group_dims={0}\n}\n",
		     HLOI_ETYPE,
		     "Cannot infer shape for ragged dot operation: f32[11,5] <ragged_dot> f32[3,5,7]. Contracting dimension sizes are not compatible.");
	expect_error("ENTRY e {\n  l = f32[2,11,5] parameter(0)\n  r = f32[3,5,7] parameter(1)\n  g = s32[4,3] parameter(2)\n"
		     "  ROOT m = ragged-dot(l, r, g), lhs_contracting_dims={2}, rhs_contracting_dims={1}, "
		     "lhs_ragged_dims={1}, rhs_group_dims={0}\n}\n",
		     HLOI_ETYPE,
		     "Cannot infer shape for ragged dot operation: f32[2,11,5] <ragged_dot> f32[3,5,7]. group_sizes is expected to have shape [2, 3], got [4, 3]");
	/* without shapes_only, a dynamic value is refused where it is used
	 * other than by the ops that pass sizes on; a written static
	 * dimension where the inferred is `<=N` is `<=N` (XLA's dynamic
	 * dimension inference); slice keeps a dimension taken whole */
	shapes_only = 0;
	const char *dv = "ENTRY e {\n  a = f32[] parameter(0)\n  n = s32[] parameter(1)\n  x = f32[4] broadcast(a), dimensions={}\n"
			 "  d = set-dimension-size(x, n), dimensions={0}\n";
	snprintf(t, sizeof t, "%s  ROOT r = fft(d), fft_type=RFFT, fft_length={4}\n}\n", dv);
	expect_error(t, HLOI_EUNSUPPORTED,
		     "unsupported dynamic dimension in f32[<=4] (operand 0 of fft): only the elementwise ops, broadcast, transpose, reshape, slice, dot, reduce, concatenate, pad, reverse, sort, reduce-window, convolution, gather, dynamic-slice, dynamic-update-slice, select-and-scatter, scatter, tuple, get-tuple-element, while, conditional, call, fusion, the async ops, map, opt-barrier, reduce-precision, copy-start, copy-done, all-reduce, set-dimension-size, dynamic-reshape, get-dimension-size and the custom-calls PadToStatic, DynamicConvolutionForward, DynamicConvolutionInputGrad, DynamicConvolutionKernelGrad, DynamicReduceWindowSamePadding and DynamicSelectAndScatterSamePadding take one");
	snprintf(t, sizeof t, "%s  ROOT r = f32[2] dynamic-slice(d, n), dynamic_slice_sizes={2}\n}\n", dv);
	expect_error(t, HLOI_EUNSUPPORTED,
		     "unsupported dynamic dimension in f32[<=4] (operand 0 of dynamic-slice): Dynamic dimension propagation on DynamicSlice where a partial dimension is selected (XLA's dynamic dimension inference)");
	/* pad: lo + size + hi + interior * (size - 1) on the bounds, `<=N` */
	snprintf(t, sizeof t, "%s  ROOT r = pad(d, a), padding=1_2_1\n}\n", dv);
	expect_shape(t, "r", "f32[<=10]{0}");
	snprintf(t, sizeof t, "%s  ROOT r = concatenate(d, x), dimensions={0}\n}\n", dv);
	expect_shape(t, "r", "f32[<=8]{0}");
	snprintf(t, sizeof t, "%s  ROOT r = f32[1] slice(d), slice={[0:1]}\n}\n", dv);
	expect_shape(t, "r", "f32[1]{0}");
	snprintf(t, sizeof t, "%s  ROOT r = f32[4] slice(d), slice={[0:4]}\n}\n", dv);
	expect_shape(t, "r", "f32[<=4]{0}");
	snprintf(t, sizeof t, "%s  ROOT r = f32[4] negate(d)\n}\n", dv);
	expect_shape(t, "r", "f32[<=4]{0}");
	snprintf(t, sizeof t, "%s  y = f32[4,3] broadcast(a), dimensions={}\n  ROOT r = f32[3] dot(d, y), lhs_contracting_dims={0}, rhs_contracting_dims={0}\n}\n", dv);
	expect_shape(t, "r", "f32[3]{0}");
	snprintf(t, sizeof t, "%s  y = f32[3] broadcast(a), dimensions={}\n  ROOT r = dot(d, y)\n}\n", dv);
	expect_shape(t, "r", "f32[<=4,3]{1,0}");
	snprintf(t, sizeof t, "%s  ROOT r = f32[2,2] reshape(d), inferred_dimension=1\n}\n", dv);
	expect_shape(t, "r", "f32[2,<=2]{1,0}");
	snprintf(t, sizeof t, "%s  ROOT r = f32[1,4,1] reshape(d)\n}\n", dv);
	expect_shape(t, "r", "f32[1,<=4,1]{2,1,0}");
	snprintf(t, sizeof t, "%s  ROOT r = negate(d)\n}\n", dv);
	expect_shape(t, "r", "f32[<=4]{0}");
}

/* --- input_output_alias: PyTorch's in-place rule (issue 3 part 4) -------------- */

static void test_alias(void)
{
	const char *ok = "HloModule m, input_output_alias={ {}: (0, {}, must-alias) }, broadcast_mode=numpy\n"
			 "ENTRY e {\n  x = f32[5,3,4,1] parameter(0)\n  y = f32[3,1,1] parameter(1)\n"
			 "  ROOT r = add(x, y)\n}\n";
	expect_shape(ok, "r", "f32[5,3,4,1]{3,2,1,0}");
	expect_error("HloModule m, input_output_alias={ {}: (0, {}, must-alias) }, broadcast_mode=numpy\n"
		     "ENTRY e {\n  x = f32[1,3,1] parameter(0)\n  y = f32[3,1,7] parameter(1)\n"
		     "  ROOT r = add(x, y)\n}\n",
		     HLOI_ETYPE,
		     "output with shape f32[1,3,1] doesn't match the broadcast shape f32[3,3,7]: the expanded size of the tensor (7) must match the existing size (1) at non-singleton dimension 2");
	/* rank growth: no dimension differs from the trailing end */
	expect_error("HloModule m, input_output_alias={ {}: (0, {}, may-alias) }, broadcast_mode=numpy\n"
		     "ENTRY e {\n  x = s32[3] parameter(0)\n  y = s32[2,3] parameter(1)\n  ROOT r = add(x, y)\n}\n",
		     HLOI_ETYPE, "output with shape s32[3] doesn't match the broadcast shape s32[2,3]");
	expect_error("HloModule m, input_output_alias={ {}: (0, {}, must-alias) }\n"
		     "ENTRY e {\n  x = s32[3] parameter(0)\n  ROOT r = compare(x, x), direction=EQ\n}\n",
		     HLOI_ETYPE, "result type pred can't be cast to the desired output type s32");
	expect_error("HloModule m, input_output_alias={ {}: (0, {}, must-alias) }\n"
		     "ENTRY e {\n  x = s32[2,2]{0,1} parameter(0)\n  ROOT r = s32[2,2]{1,0} add(x, x)\n}\n",
		     HLOI_ETYPE, "output with layout s32[2,2]{0,1} doesn't match the result layout s32[2,2]{1,0}");
	/* a result without a written layout takes the destination's */
	expect_shape("HloModule m, input_output_alias={ {}: (0, {}, must-alias) }\n"
		     "ENTRY e {\n  x = s32[2,2]{0,1} parameter(0)\n  ROOT r = add(x, x)\n}\n",
		     "r", "s32[2,2]{0,1}");
	expect_error("HloModule m, input_output_alias={ {}: (1, {}, must-alias) }\n"
		     "ENTRY e {\n  x = s32[2] parameter(0)\n  ROOT r = add(x, x)\n}\n",
		     HLOI_ETYPE, "input_output_alias: parameter 1 does not exist (the entry computation has 1 parameter)");
}

static const unit_test xla_tests[] = {
	{ "sources_a_accepted", test_sources_a_accepted },
	{ "sources_a_rejected", test_sources_a_rejected },
	{ "element_types", test_element_types },
	{ "out_dims", test_out_dims },
	{ "carets", test_carets },
	{ NULL, NULL },
};

static const unit_test mode_tests[] = {
	{ "numpy_mode", test_numpy_mode },
	{ "mode_selection", test_mode_selection },
	{ "strict", test_strict },
	{ NULL, NULL },
};

/* --- `?` (unbounded dynamic) dimensions ------------------------------------ */

/* One of XLA's unbounded shape-inference cases (openxla/xla
 * xla/service/shape_inference_test.cc, the "Unbounded..." tests and their
 * UnboundedDynamism instantiations): parameters of the shapes given, a root
 * `op` whose shape is inferred (or written, for reshape and broadcast), and
 * the inferred root shape, or "error: " and XLA's message (a prefix of the
 * checker's). */
static void unbounded_case(const char *params, const char *op, const char *want)
{
	char text[2048];
	int n = snprintf(text, sizeof text, "add {\n  x = f32[] parameter(0)\n  y = f32[] parameter(1)\n  ROOT s = f32[] add(x, y)\n}\n\nENTRY e {\n");
	int k = 0;
	for (const char *p = params; *p;) {
		const char *end = strchr(p, ';');
		size_t len = end ? (size_t)(end - p) : strlen(p);
		n += snprintf(text + n, sizeof text - (size_t)n, "  p%d = %.*s parameter(%d)\n", k, (int)len, p, k);
		k++;
		p += len + (end ? 1 : 0);
	}
	snprintf(text + n, sizeof text - (size_t)n, "  ROOT r = %s\n}\n", op);
	checked r;
	hloi_status st = run(&r, text);
	if (strncmp(want, "error: ", 7) == 0) {
		CU_ASSERT_EQUAL(st, HLOI_ETYPE);
		if (strncmp(diag_msg(&r, 0), want + 7, strlen(want + 7)) != 0)
			fprintf(stderr, "\n%s: want %s, got %s\n", op, want + 7, diag_msg(&r, 0));
		CU_ASSERT_EQUAL(strncmp(diag_msg(&r, 0), want + 7, strlen(want + 7)), 0);
	} else {
		CU_ASSERT_EQUAL(st, HLOI_OK);
		instr *root = st == HLOI_OK ? find(&r, "r") : NULL;
		strbuf b = STRBUF_INIT;
		if (root)
			shape_print(&b, root->result, 0);
		if (!root || strcmp(sb_str(&b), want) != 0)
			fprintf(stderr, "\n%s: want %s, got %s (%s)\n", op, want, root ? sb_str(&b) : "-", diag_msg(&r, 0));
		CU_ASSERT_STRING_EQUAL(root ? sb_str(&b) : "", want);
		sb_free(&b);
	}
	done(&r);
}

static void test_unbounded(void)
{
	/* UnboundedBinaryOpShapeInferenceTest (add), compare, logical, complex */
	unbounded_case("f32[1];f32[?]", "add(p0, p1)", "f32[?]");
	unbounded_case("f32[?];f32[1]", "add(p0, p1)", "f32[?]");
	unbounded_case("f32[2];f32[?]", "add(p0, p1)", "f32[2]");
	unbounded_case("f32[?];f32[2]", "subtract(p0, p1)", "f32[2]");
	unbounded_case("f32[<=2];f32[?]", "multiply(p0, p1)", "f32[<=2]");
	unbounded_case("f32[?];f32[<=2]", "maximum(p0, p1)", "f32[<=2]");
	unbounded_case("f32[?];f32[?]", "power(p0, p1)", "f32[?]");
	unbounded_case("f32[1];f32[?,3]", "add(p0, p1), broadcast_dimensions={0}", "f32[?,3]");
	unbounded_case("f32[2];f32[?,3]", "add(p0, p1), broadcast_dimensions={0}",
		       "error: Broadcast dimension 0 mismatch: 2 != ?; f32[2] and f32[?,3].");
	unbounded_case("f32[?,2];f32[?,3]", "add(p0, p1)",
		       "error: Binary op add with incompatible shapes: f32[?,2] and f32[?,3].");
	unbounded_case("f32[2];f32[?]", "compare(p0, p1), direction=LT", "pred[2]");
	unbounded_case("f32[?];f32[1]", "compare(p0, p1), direction=LT", "pred[?]");
	unbounded_case("s32[<=2];s32[?]", "and(p0, p1)", "s32[<=2]");
	unbounded_case("s32[1];s32[?,3]", "xor(p0, p1), broadcast_dimensions={0}", "s32[?,3]");
	unbounded_case("f32[?];f32[2]", "complex(p0, p1)", "c64[2]");
	/* UnboundedUnaryOpShapeInferenceTest, UnboundedConvert */
	unbounded_case("f32[?]", "negate(p0)", "f32[?]");
	unbounded_case("f32[?]", "is-finite(p0)", "pred[?]");
	unbounded_case("u32[?]", "popcnt(p0)", "u32[?]");
	unbounded_case("f32[?]", "f64[?] convert(p0)", "f64[?]");
	/* UnboundedSelectOpShapeInferenceTest */
	unbounded_case("pred[];f32[?];f32[2]", "select(p0, p1, p2)", "f32[2]");
	unbounded_case("pred[];f32[?];f32[<=2]", "select(p0, p1, p2)", "f32[<=2]");
	unbounded_case("pred[2];f32[?];f32[2]", "select(p0, p1, p2)", "f32[2]");
	unbounded_case("pred[?];f32[2];f32[?]", "select(p0, p1, p2)", "f32[2]");
	unbounded_case("pred[?];f32[<=2];f32[?]", "select(p0, p1, p2)", "f32[<=2]");
	unbounded_case("pred[<=2];f32[?];f32[<=2]", "select(p0, p1, p2)", "f32[<=2]");
	unbounded_case("pred[?];f32[?];f32[?]", "select(p0, p1, p2)", "f32[?]");
	unbounded_case("pred[3];s32[3];f32[3]", "select(p0, p1, p2)",
		       "error: Operands to select must be the same shape; got s32[3] and f32[3].");
	unbounded_case("pred[3];f32[?];f32[<=2]", "select(p0, p1, p2)",
		       "error: Operands to select and predicate must be the same shape; got f32[?] and f32[<=2] and pred[3].");
	unbounded_case("pred[3];f32[<=2];f32[3]", "select(p0, p1, p2)",
		       "error: Operands to select must be the same shape; got f32[<=2] and f32[3].");
	unbounded_case("pred[2];f32[?];f32[3]", "select(p0, p1, p2)",
		       "error: Operands to select and predicate must be the same shape; got f32[?] and f32[3] and pred[2].");
	unbounded_case("pred[?];f32[];f32[]", "select(p0, p1, p2)",
		       "error: Operands to select and predicate must be the same shape; got f32[] and f32[] and pred[?].");
	unbounded_case("pred[];f32[?];f32[]", "select(p0, p1, p2)",
		       "error: Operands to select must be the same shape; got f32[?] and f32[].");
	/* UnboundedClampOpShapeInferenceTest */
	unbounded_case("f32[];f32[?];f32[]", "clamp(p0, p1, p2)", "f32[?]");
	unbounded_case("f32[];f32[?];f32[2]", "clamp(p0, p1, p2)", "f32[?]");
	unbounded_case("f32[];f32[?];f32[<=2]", "clamp(p0, p1, p2)", "f32[?]");
	unbounded_case("f32[2];f32[?];f32[2]", "clamp(p0, p1, p2)", "f32[?]");
	unbounded_case("f32[?];f32[2];f32[2]", "clamp(p0, p1, p2)", "f32[2]");
	unbounded_case("f32[?];f32[<=2];f32[?]", "clamp(p0, p1, p2)", "f32[<=2]");
	unbounded_case("f32[<=2];f32[?];f32[<=2]", "clamp(p0, p1, p2)", "f32[?]");
	unbounded_case("f32[?];f32[?];f32[?]", "clamp(p0, p1, p2)", "f32[?]");
	unbounded_case("f32[?];f32[];f32[?]", "clamp(p0, p1, p2)",
		       "error: Clamp with incompatible shapes: f32[?], f32[], f32[?].");
	unbounded_case("s32[];f32[?];f32[?]", "clamp(p0, p1, p2)",
		       "error: Clamp with incompatible element types: s32[], f32[?], f32[?].");
	unbounded_case("f32[3];f32[<=2];f32[3]", "clamp(p0, p1, p2)",
		       "error: Clamp with incompatible shapes: f32[3], f32[<=2], f32[3].");
	unbounded_case("f32[2];f32[?];f32[3]", "clamp(p0, p1, p2)",
		       "error: Clamp with incompatible shapes: f32[2], f32[?], f32[3].");
	/* UnboundedConcatenateOpShapeInferenceTest (dimension 0) */
	unbounded_case("f32[2,3];f32[?,?]", "concatenate(p0, p1), dimensions={0}", "f32[?,3]");
	unbounded_case("f32[?,?];f32[?,?]", "concatenate(p0, p1), dimensions={0}", "f32[?,?]");
	/* (a `<=N` operand of concatenate does not run: shapes only) */
	shapes_only = 1;
	unbounded_case("f32[?,?];f32[<=2,<=3]", "concatenate(p0, p1), dimensions={0}", "f32[?,<=3]");
	unbounded_case("f32[2,?];f32[2,3];f32[2,4]", "concatenate(p0, p1, p2), dimensions={0}",
		       "error: Mismatched dimension sizes 3 and 4 in dimension 1");
	unbounded_case("f32[2,?];f32[2,<=3];f32[2,<=4]", "concatenate(p0, p1, p2), dimensions={0}",
		       "error: Mismatched bound sizes 3 and 4 in dimension 1");
	shapes_only = 0;
	/* UnboundedTranspose, UnboundedReshape(...), UnboundedSlice (a `?`
	 * dimension; hloi makes a part of a `<=N` one static, doc/dynamic.md), UnboundedPad */
	unbounded_case("f32[1,?,2,?,<=2]", "transpose(p0), dimensions={4,0,3,2,1}", "f32[<=2,1,?,2,?]");
	unbounded_case("f32[?]", "f32[2,3] reshape(p0)", "f32[2,3]");
	unbounded_case("f32[6]", "f32[?,?] reshape(p0)",
		       "error: Reshaping with unbounded result shape is not supported.");
	unbounded_case("f32[?,<=3]", "f32[3] reshape(p0)",
		       "error: Reshape operand with bounded and unbounded dynamism not supported.");
	unbounded_case("f32[1,?]", "slice(p0), slice={[0:1], [2:5]}", "f32[1,3]");
	unbounded_case("f32[?,10];f32[]", "pad(p0, p1), padding=1_1_1x1_1_1", "f32[?,21]");
	/* UnboundedDot, UnboundedDotGeneral */
	unbounded_case("f32[?,10];f32[?,10]", "dot(p0, p1), lhs_contracting_dims={1}, rhs_contracting_dims={0}",
		       "f32[?,10]");
	unbounded_case("f32[?,<=3,?];f32[2,4,5]",
		       "dot(p0, p1), lhs_batch_dims={0}, rhs_batch_dims={0}, lhs_contracting_dims={2}, rhs_contracting_dims={1}",
		       "f32[?,<=3,5]");
	/* UnboundedReduce (one operand at a time), UnboundedBroadcastInDim(...) */
	unbounded_case("f32[?,5];f32[]", "reduce(p0, p1), dimensions={1}, to_apply=add", "f32[?]");
	unbounded_case("f32[7,?];f32[]", "reduce(p0, p1), dimensions={1}, to_apply=add", "f32[7]");
	unbounded_case("f32[<=2,?]", "f32[<=2,3,4] broadcast(p0), dimensions={0,2}", "f32[<=2,3,4]");
	unbounded_case("f32[<=2,?]", "f32[<=2,3,<=4] broadcast(p0), dimensions={0,2}", "f32[<=2,3,<=4]");
	unbounded_case("f32[<=2,?]", "f32[<=2,3,?] broadcast(p0), dimensions={0,2}", "error: broadcast to f32[<=2,3,?]");
	/* written shapes are compared ignoring `?` (ShapeUtil::Compatible) */
	unbounded_case("f32[?,3]", "f32[4,3] negate(p0)", "f32[4,3]");
	unbounded_case("f32[4,3]", "f32[?,3] negate(p0)", "f32[4,3]");
	unbounded_case("f32[?,3]", "f32[?,4] negate(p0)",
		       "error: declared shape f32[?,4] does not match the inferred shape f32[?,3]");
}

/* Checks r's module again with the one-dimensional f32 inputs of sizes n
 * (check_module_sized). */
static hloi_status sized_1d(checked *r, const int64_t *n, int count)
{
	shape in[4];
	const shape *ins[4];
	for (int i = 0; i < count && i < 4; i++) {
		shape_make_array(&in[i], ET_F32, 1, &n[i]);
		ins[i] = &in[i];
	}
	return check_module_sized(r->m, r->ctx, ins, (size_t)count);
}

/* text checks; checked again with the one-dimensional input of size n,
 * it is refused with status want and first message msg. */
static void sized_refused(const char *text, int64_t n, hloi_status want, const char *msg)
{
	checked r;
	CU_ASSERT_EQUAL(run(&r, text), HLOI_OK);
	CU_ASSERT_EQUAL(sized_1d(&r, &n, 1), want);
	CU_ASSERT_STRING_EQUAL(diag_msg(&r, 0), msg);
	done(&r);
}

/* `?` into called computations' parameters: accepted by the check as XLA's
 * ShapeUtil::Compatible; a run checks one copy of the callee per distinct
 * signature of sizes its call sites give, kept for later runs */
static void test_unbounded_callees(void)
{
	checked r;
	static const char two_sites[] = "c {\n  p = f32[?] parameter(0)\n  ROOT n = f32[?] negate(p)\n}\n\n"
					"ENTRY e {\n  a = f32[?] parameter(0)\n  b = f32[?] parameter(1)\n"
					"  x = f32[?] call(a), to_apply=c\n  y = f32[?] call(b), to_apply=c\n"
					"  z = f32[?] call(a), to_apply=c\n  ROOT t = (f32[?], f32[?], f32[?]) tuple(x, y, z)\n}\n";
	CU_ASSERT_EQUAL(run(&r, two_sites), HLOI_OK);
	{
		int64_t n[2] = { 3, 5 };
		CU_ASSERT_EQUAL_FATAL(sized_1d(&r, n, 2), HLOI_OK);
		computation *cx = find(&r, "x")->callee, *cy = find(&r, "y")->callee, *cz = find(&r, "z")->callee;
		CU_ASSERT_PTR_NOT_EQUAL(cx, cy);
		CU_ASSERT_PTR_EQUAL(cx, cz); /* one copy per signature */
		CU_ASSERT_EQUAL(cx->root->result->dims[0], 3);
		CU_ASSERT_EQUAL(cy->root->result->dims[0], 5);
		CU_ASSERT_EQUAL(find(&r, "y")->result->dims[0], 5);
		/* the original keeps its `?` */
		CU_ASSERT_EQUAL(module_find_computation(r.m, "c")->root->result->dim_kind[0], DIM_UNBOUNDED);
		/* a later run with the same sizes takes the same copies */
		int64_t m[2] = { 5, 3 };
		CU_ASSERT_EQUAL_FATAL(sized_1d(&r, m, 2), HLOI_OK);
		CU_ASSERT_PTR_EQUAL(find(&r, "x")->callee, cy);
		CU_ASSERT_PTR_EQUAL(find(&r, "y")->callee, cx);
	}
	done(&r);

	/* a `?` operand into a while, its body's `?` state: checked; a run
	 * whose body changes the size is refused with XLA's message */
	static const char grows[] = "cond {\n  s = f32[?] parameter(0)\n  ROOT t = pred[] constant(false)\n}\n\n"
				    "body {\n  s = f32[?] parameter(0)\n  ROOT c = f32[?] concatenate(s, s), dimensions={0}\n}\n\n"
				    "ENTRY e {\n  x = f32[?] parameter(0)\n  ROOT w = f32[?] while(x), condition=cond, body=body\n}\n";
	sized_refused(grows, 2, HLOI_ETYPE,
		      "The parameter of condition and body, the result of the body, and init must all have the same shape; got Condition: (s: f32[2]) -> pred[]; body: (s: f32[2]) -> f32[4]; init: f32[2]..");

	/* a static parameter against a `?` operand: checked, sized by the run */
	static const char fixed[] = "c {\n  p = f32[3] parameter(0)\n  ROOT n = f32[3] negate(p)\n}\n\n"
				    "ENTRY e {\n  a = f32[?] parameter(0)\n  ROOT r = f32[3] call(a), to_apply=c\n}\n";
	CU_ASSERT_EQUAL(run(&r, fixed), HLOI_OK);
	{
		int64_t n[1] = { 3 };
		CU_ASSERT_EQUAL(sized_1d(&r, n, 1), HLOI_OK);
		n[0] = 4;
		CU_ASSERT_EQUAL(sized_1d(&r, n, 1), HLOI_ETYPE);
		CU_ASSERT_STRING_EQUAL(diag_msg(&r, 0), "operand 0 of call has shape f32[4], but parameter 0 of computation c is f32[3]");
	}
	done(&r);

	/* conditional branches sized by their own operands */
	static const char branches[] = "b0 {\n  p = f32[?] parameter(0)\n  ROOT n = f32[] constant(0)\n}\n\n"
				       "b1 {\n  p = f32[?] parameter(0)\n  ROOT n = f32[] constant(1)\n}\n\n"
				       "ENTRY e {\n  a = f32[?] parameter(0)\n  b = f32[?] parameter(1)\n  i = s32[] constant(0)\n"
				       "  ROOT r = f32[] conditional(i, a, b), branch_computations={b0, b1}\n}\n";
	CU_ASSERT_EQUAL(run(&r, branches), HLOI_OK);
	{
		int64_t n[2] = { 2, 6 };
		CU_ASSERT_EQUAL_FATAL(sized_1d(&r, n, 2), HLOI_OK);
		const instr *c = find(&r, "r");
		CU_ASSERT_EQUAL(instr_called(c, ATTR_BRANCH_COMPUTATIONS, 0)->params[0]->result->dims[0], 2);
		CU_ASSERT_EQUAL(instr_called(c, ATTR_BRANCH_COMPUTATIONS, 1)->params[0]->result->dims[0], 6);
	}
	done(&r);
}

/* `?` parameters an async-update brings (XLA's newer async syntax): the
 * chain's computation is sized by the start's operands and then each
 * update's, one copy per chain's signature, which the start, the updates
 * and the done all refer to; sized at the update that brings an operand
 * defined after the start */
static void test_unbounded_async_chains(void)
{
	checked r;
	static const char chains[] = "f {\n  p0 = f32[?] parameter(0)\n  p1 = f32[?] parameter(1)\n  ROOT a = f32[?] add(p0, p1)\n}\n\n"
				     "ENTRY e {\n  x = f32[?] parameter(0)\n  y = f32[?] parameter(1)\n"
				     "  s = ((f32[?]), f32[?], s32[]) async-start(x), calls=f\n"
				     "  u = ((f32[?], f32[?]), f32[?], s32[]) async-update(s, x)\n  d = f32[?] async-done(u)\n"
				     "  st = ((), (), s32[]) async-start(), calls=f\n  z = f32[?] negate(y)\n"
				     "  ut = ((f32[?], f32[?]), (), s32[]) async-update(st, y, z)\n  dt = f32[?] async-done(ut)\n"
				     "  ROOT t = (f32[?], f32[?]) tuple(d, dt)\n}\n";
	CU_ASSERT_EQUAL(run(&r, chains), HLOI_OK);
	for (int pass = 0; pass < 2; pass++) {
		int64_t n[2] = { pass ? 4 : 3, 5 };
		CU_ASSERT_EQUAL_FATAL(sized_1d(&r, n, 2), HLOI_OK);
		const computation *f1 = instr_called(find(&r, "s"), ATTR_CALLS, 0);
		const computation *f2 = instr_called(find(&r, "st"), ATTR_CALLS, 0);
		CU_ASSERT_PTR_NOT_EQUAL_FATAL(f1, f2); /* a copy per chain's sizes */
		CU_ASSERT_PTR_EQUAL(f1->sized_from, module_find_computation(r.m, "f"));
		CU_ASSERT_PTR_EQUAL(f2->sized_from, module_find_computation(r.m, "f"));
		CU_ASSERT_PTR_EQUAL(find(&r, "st")->callee, f2);
		CU_ASSERT_EQUAL(f1->params[1]->result->dims[0], n[0]); /* brought by u */
		CU_ASSERT_EQUAL(f2->params[0]->result->dims[0], 5);
		CU_ASSERT_EQUAL(f2->params[1]->result->dims[0], 5); /* z, after st */
		const shape *su = find(&r, "u")->result;
		CU_ASSERT_EQUAL(su->tuple[0].tuple[1].dims[0], n[0]);
		CU_ASSERT_EQUAL(su->tuple[1].dims[0], n[0]);
		CU_ASSERT_EQUAL(su->tuple[1].dim_kind[0], DIM_STATIC);
		CU_ASSERT_EQUAL(find(&r, "d")->result->dims[0], n[0]);
		CU_ASSERT_EQUAL(find(&r, "dt")->result->dims[0], 5);
		CU_ASSERT_EQUAL(find(&r, "dt")->result->dim_kind[0], DIM_STATIC);
	}
	done(&r);

	/* a start whose written result is f's `?` before an update brings an
	 * operand defined after it: refused at the start */
	static const char late[] = "f {\n  p0 = f32[?] parameter(0)\n  p1 = f32[?] parameter(1)\n  ROOT a = f32[?] add(p0, p1)\n}\n\n"
				   "ENTRY e {\n  x = f32[?] parameter(0)\n  s = ((f32[?]), f32[?], s32[]) async-start(x), calls=f\n"
				   "  z = f32[?] negate(x)\n  u = ((f32[?], f32[?]), f32[?], s32[]) async-update(s, z)\n"
				   "  ROOT d = f32[?] async-done(u)\n}\n";
	sized_refused(late, 2, HLOI_EUNSUPPORTED,
		      "unsupported `?` in the result of this async-start: an async-update brings operands defined after it that size computation f, so its result must be written () until then");
}

/* dynamic-reshape with `?`: the check compares the element counts only
 * where both are known; a run makes a `?` result dimension static where
 * its size is known (a constant, get-dimension-size of a sized dimension),
 * else `<=E` over the known dimensions */
static void test_unbounded_dynamic_reshape(void)
{
	checked r;
	static const char text[] = "ENTRY e {\n  x = f32[?] parameter(0)\n  n = s32[] get-dimension-size(x), dimensions={0}\n"
				   "  two = s32[] constant(2)\n  h = s32[] divide(n, two)\n"
				   "  a = f32[?,?] dynamic-reshape(x, two, h)\n  b = f32[?,?] dynamic-reshape(x, n, two)\n"
				   "  ROOT t = (f32[?,?], f32[?,?]) tuple(a, b)\n}\n";
	CU_ASSERT_EQUAL(run(&r, text), HLOI_OK);
	CU_ASSERT_EQUAL(find(&r, "a")->result->dim_kind[1], DIM_UNBOUNDED);
	{
		int64_t n[1] = { 6 };
		CU_ASSERT_EQUAL(sized_1d(&r, n, 1), HLOI_ETYPE); /* b: 6 x 2 is not 6 */
		CU_ASSERT_STRING_EQUAL(diag_msg(&r, 0),
				       "Reshape operation has mismatched element counts: from=6 (f32[6]) to=12 (f32[6,2]).");
		const shape *a = find(&r, "a")->result;
		CU_ASSERT_EQUAL(a->dim_kind[0], DIM_STATIC);
		CU_ASSERT_EQUAL(a->dims[0], 2);
		CU_ASSERT_EQUAL(a->dim_kind[1], DIM_BOUNDED);
		CU_ASSERT_EQUAL(a->dims[1], 3);
	}
	done(&r);
	CU_ASSERT_EQUAL(run(&r, "ENTRY e {\n  x = f32[6] parameter(0)\n  two = s32[] constant(2)\n"
				"  ROOT r = f32[?,3] dynamic-reshape(x, two, two)\n}\n"),
			HLOI_OK);
	done(&r);
	CU_ASSERT_EQUAL(run(&r, "ENTRY e {\n  x = f32[6] parameter(0)\n  two = s32[] constant(2)\n"
				"  ROOT r = f32[2,4] dynamic-reshape(x, two, two)\n}\n"),
			HLOI_ETYPE);
	done(&r);
}

static const unit_test type_tests[] = {
	{ "type_gates", test_type_gates },
	{ "compare", test_compare },
	{ NULL, NULL },
};

/* Reducers of another float type (XLA's VerifyReducerShape ignores
 * floating-point precision; without allow_mixed_precision its verifier asks
 * reduce, reduce-window and map for the operands' exact types). */
#define MIXED_COMPS                                                                                    \
	"add16 {\n  a = bf16[] parameter(0)\n  b = bf16[] parameter(1)\n  ROOT r = bf16[] add(a, b)\n}\n" \
	"ge16 {\n  a = bf16[] parameter(0)\n  b = bf16[] parameter(1)\n"                                   \
	"  ROOT r = pred[] compare(a, b), direction=GE\n}\n"                                               \
	"adds {\n  a = s32[] parameter(0)\n  b = s32[] parameter(1)\n  ROOT r = s32[] add(a, b)\n}\n"    \
	"ENTRY e {\n  x = f32[4] parameter(0)\n  z = f32[] constant(0)\n  i = s32[2,1] parameter(1)\n"     \
	"  u = f32[2] parameter(2)\n  src = f32[2] parameter(3)\n"

static void mixed_case(int allow, const char *root, hloi_status want, const char *msg, const char *type,
		       etype mixed)
{
	char text[2048];
	snprintf(text, sizeof text, "%s  ROOT r = %s\n}\n", MIXED_COMPS, root);
	checked r;
	memset(&r, 0, sizeof r);
	CU_ASSERT_FATAL(hloi_context_new(&r.ctx) == HLOI_OK);
	CU_ASSERT_EQUAL_FATAL(text_parse_module(&r.m, r.ctx, "t.hlo", text, strlen(text)), HLOI_OK);
	hloi_check_options o = HLOI_CHECK_OPTIONS_INIT;
	o.allow_mixed_precision = allow;
	r.st = check_module(r.m, r.ctx, &o);
	CU_ASSERT_EQUAL(r.st, want);
	if (msg) {
		CU_ASSERT_STRING_EQUAL(diag_msg(&r, 0), msg);
	} else if (r.st == HLOI_OK) {
		const instr *in = find(&r, "r");
		CU_ASSERT_STRING_EQUAL(shape_text(in->result, 0), type);
		CU_ASSERT_EQUAL(in->mixed_type, mixed);
	}
	if (r.st != want || (msg && strcmp(diag_msg(&r, 0), msg) != 0))
		fprintf(stderr, "\n%s: status %d, '%s'\n", root, (int)r.st, diag_msg(&r, 0));
	done(&r);
}

static void test_mixed_reducers(void)
{
	/* refused without the option: parameter k against operand k */
	mixed_case(0, "bf16[] reduce(x, z), dimensions={0}, to_apply=add16", HLOI_ETYPE,
		   "Shape mismatch between to_apply computation parameter and operand 0 in %r = bf16[] reduce(f32[4]{0} %x, f32[] %z).",
		   NULL, ET_INVALID);
	mixed_case(0, "f32[2] reduce-window(x, z), window={size=2 stride=2}, to_apply=add16", HLOI_ETYPE,
		   "Shape mismatch between to_apply computation parameter and operand 0 in %r = f32[2]{0} reduce-window(f32[4]{0} %x, f32[] %z).",
		   NULL, ET_INVALID);
	mixed_case(0, "bf16[4] map(x, x), dimensions={0}, to_apply=add16", HLOI_ETYPE,
		   "Shape mismatch between to_apply computation parameter and operand 0 in %r = bf16[4]{0} map(f32[4]{0} %x, f32[4]{0} %x).",
		   NULL, ET_INVALID);
	/* accepted without it where XLA only infers shapes */
	mixed_case(0,
		   "f32[4] scatter(x, i, u), update_window_dims={}, inserted_window_dims={0}, "
		   "scatter_dims_to_operand_dims={0}, index_vector_dim=1, to_apply=add16",
		   HLOI_OK, NULL, "f32[4]", ET_INVALID);
	mixed_case(0, "f32[4] select-and-scatter(x, src, z), window={size=2 stride=2}, select=ge16, scatter=add16",
		   HLOI_OK, NULL, "f32[4]", ET_INVALID);
	mixed_case(0, "f32[4] sort(x), dimensions={0}, to_apply=ge16", HLOI_OK, NULL, "f32[4]", ET_INVALID);
	mixed_case(0, "f32[4] all-reduce(x), to_apply=add16", HLOI_OK, NULL, "f32[4]", ET_INVALID);
	/* with it: reduce has the reducer's type, reduce-window the init
	 * value's; a declared type of another precision stands */
	mixed_case(1, "bf16[] reduce(x, z), dimensions={0}, to_apply=add16", HLOI_OK, NULL, "bf16[]", ET_INVALID);
	mixed_case(1, "f32[] reduce(x, z), dimensions={0}, to_apply=add16", HLOI_OK, NULL, "f32[]", ET_BF16);
	mixed_case(1, "f32[2] reduce-window(x, z), window={size=2 stride=2}, to_apply=add16", HLOI_OK, NULL, "f32[2]",
		   ET_INVALID);
	mixed_case(1, "bf16[4] map(x, x), dimensions={0}, to_apply=add16", HLOI_OK, NULL, "bf16[4]", ET_INVALID);
	/* what stays refused with it: another kind of type */
	mixed_case(1, "s32[] reduce(x, z), dimensions={0}, to_apply=adds", HLOI_ETYPE,
		   "Reduction function's accumulator shape at index 0 differs from the init_value shape: s32[] vs f32[]", NULL,
		   ET_INVALID);
}

static const unit_test ir_tests[] = {
	{ "names", test_names },
	{ "parameters", test_parameters },
	{ "declared_shapes", test_declared_shapes },
	{ "constants", test_constants },
	{ "broadcast_instr", test_broadcast_instr },
	{ "unsupported", test_unsupported },
	{ "unbounded", test_unbounded },
	{ "unbounded_callees", test_unbounded_callees },
	{ "unbounded_async_chains", test_unbounded_async_chains },
	{ "unbounded_dynamic_reshape", test_unbounded_dynamic_reshape },
	{ NULL, NULL },
};

static const unit_test op_tests[] = {
	{ "data_ops", test_data_ops },
	{ "tuples_and_calls", test_tuples_and_calls },
	{ "inferred_rules", test_inferred_rules },
	{ "mixed_reducers", test_mixed_reducers },
	{ "alias", test_alias },
	{ NULL, NULL },
};

const unit_suite unit_suites[] = {
	{ "ops", op_tests },
	{ "broadcast_xla", xla_tests },
	{ "broadcast_modes", mode_tests },
	{ "types", type_tests },
	{ "ir", ir_tests },
	{ NULL, NULL },
};
