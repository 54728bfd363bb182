/* State shared by the checker's files: the module being checked, where its
 * errors go and the options in force (the checker struct); the helpers
 * every shape rule uses (common.c); the driver's entry points the rules call
 * back (check.c); and the shape rules themselves, one per `infer` name of
 * ir/opcodes.def. An op-family file includes this header only. */
#ifndef HLOI_CHECK_INTERNAL_H
#define HLOI_CHECK_INTERNAL_H

#include <stddef.h>
#include <stdint.h>

#include "hloi.h"
#include "ir/ir.h"
#include "util/diag.h"
#include "util/strbuf.h"

/* Large enough for any shape printed without layout (16 dims of 20 digits). */
#define CK_SHAPE_TEXT 512

typedef struct checker {
	module *m;
	hloi_context *ctx;
	const source *text;        /* m's source in ctx, or NULL */
	int strict;
	int mixed;                 /* allow_mixed_precision */
	size_t nmixed;             /* instructions whose declared float type is not the inferred one */
	hloi_broadcast_mode mode;  /* XLA or NUMPY */
	int report_unsupported;    /* report what hloi does not evaluate (for run/check) */
	int keep_layout;           /* set by a shape rule: the inferred shape's layouts
				    * are the result's (tuple elements, callees' roots) */
	size_t nerrors;            /* type errors */
	size_t nunsupported;       /* things hloi does not evaluate */
	int oom;
	int64_t replicas, partitions; /* the participants a run simulates */
	/* per computation (index in m->comps): 0 not checked, 1 being
	 * checked, 2 checked with a usable root, 3 checked with errors */
	uint8_t *comp_state;
	int depth;                 /* nesting of callee checks */
	/* what is being checked, to name it where there is no source text */
	const computation *cur_comp;
	const instr *cur_instr;
	/* a run's inputs (check_module_sized): each `?` dimension of an entry
	 * parameter takes its input's size; NULL for a check without them */
	const shape *const *input_shapes;
	size_t ninputs;
	/* a run: the async-start whose computation its chain's last
	 * async-update sizes (an operand of the chain defined after the
	 * start), so the start's own check does not check it unsized */
	const instr *async_deferred;
} checker;

/* --- common.c: the helpers every shape rule uses -------------------------- */

/* A type error / an unsupported feature at `at`; notes follow the error. */
void ck_error(checker *c, loc at, const char *fmt, ...) DIAG_PRINTF(3, 4);
void ck_unsupported(checker *c, loc at, const char *fmt, ...) DIAG_PRINTF(3, 4);
void ck_note(checker *c, loc at, const char *fmt, ...) DIAG_PRINTF(3, 4);
/* Reports the message built in m at `at` (or the out-of-memory state);
 * frees m. Returns 1, for `return ck_report(...)`. */
int ck_report(checker *c, loc at, strbuf *m);

/* The int list attribute `id` of `in`, or an empty one (present = 0). */
static inline const int_list *ck_ints(const instr *in, attr_id id)
{
	static const int_list none = { 0, 0, NULL, { 0, 0 } };
	const int_list *l = instr_ints(in, id);
	return l ? l : &none;
}

/* The shape as text without layout (`f32[2,3]`) in buf. Returns buf. */
const char *ck_shape(char *buf, const shape *s);
/* XLA's PrimitiveType_Name of t (`F32`, `PRED`, `F8E4M3FN`) in buf. */
const char *ck_type_upper(char *buf, size_t size, etype t);
/* Appends v[0..n) separated by sep (XLA's StrJoin). */
void ck_join_ints(strbuf *b, const int64_t *v, int n, const char *sep);
/* The written result as XLA's HloInstruction::ToString prints it, without
 * attributes: `%name = f32[2]{0} opcode(f32[2]{0} %a)`. */
void ck_instr_text(strbuf *b, const instr *in);

/* The span of an attribute `name={...}` given the span of its value (the
 * span is returned as is when the text before it is not `name=`). */
loc ck_attr_loc(const checker *c, loc value, const char *name);
/* The span of `name={...}` of attribute id, else the opcode. */
loc ck_attr_at(const checker *c, const instr *in, attr_id id);
/* The span of `to_apply=NAME`, where reducer and comparator errors point,
 * else the opcode. */
loc ck_to_apply_loc(const checker *c, const instr *in);

/* Operand k must be an array (not a tuple); reports and returns 0 if not. */
int ck_array_operand(checker *c, const instr *in, int k);
/* "Expected array argument for WHAT, but got SHAPE." when operand k is a
 * tuple (XLA's ExpectArray); returns 1 then. */
int ck_expect_array(checker *c, const instr *in, int k, const char *what);
/* The result shape must have been written (and be an array). */
int ck_needs_shape(checker *c, const instr *in);
/* Every operand's dimension j feeds result dimension j. */
void ck_identity_out_dims(instr *in);
/* The verifier's CheckMixedPrecisionOperands: operands whose floating-point
 * element types differ are refused (unless c->mixed); reports and returns 1. */
int ck_mixed_precision(checker *c, const instr *in);
/* `?` dimensions (XLA's unbounded dynamic size) in the ops whose operands
 * must agree (select, clamp, concatenate, a variadic reduce): acc takes
 * s's size or bound where acc is `?`; nonzero when a dimension that is `?`
 * in neither differs (in size or in being `<=N`), or the ranks do. */
int ck_unbounded_merge(shape *acc, const shape *s);
/* Keeps a value the checker made (a constant's, an attribute's literal)
 * with the module, which frees it; 1 when out of memory. */
int ck_store_value(checker *c, hloi_literal *lit);

/* XLA's VerifyReducerShape for reducer f of n inputs (their element types)
 * and init values; reports at to_apply= and returns nonzero on an error. */
int ck_verify_reducer(checker *c, const instr *in, const computation *f, const shape *const *inits,
		      const etype *input_types, int n);
/* XLA's InferWindowOutputShape: the dims of window w over `base` into out;
 * reports and returns nonzero when the window does not fit. */
int ck_window_output(checker *c, const instr *in, const window *w, const shape *base, int64_t *out);
/* (bound - 1) * dilation + 1 (0 for 0), or -1 on overflow. */
int64_t ck_dilated_bound(int64_t bound, int64_t dilation);
/* Reports and returns nonzero when a window dimension (the window printed
 * as ws) has a non-positive size, stride or dilation, in XLA's words. */
int ck_window_dim_invalid(checker *c, loc at, const window_dim *d, const char *ws);

/* --- check.c: the driver, called back by the rules ------------------------ */

/* The participant counts of a run: the options' (version >= 3), else the
 * module header's replica_count and num_partitions. Reports a count out of
 * range and returns nonzero. */
int ck_participants(checker *c, const hloi_check_options *opts);
/* Checks a callee before its caller (called from shape rules); 0 when its
 * root and parameters are usable. `at` locates a recursion error. */
int ck_ensure_checked(checker *c, instr *in, computation *callee, loc at);
int ck_check_computation(checker *c, computation *comp);
/* The shape rule of `op` (the table's) applied to `in`: for a custom call
 * that stands for that op (XLA's dynamic padder's convolutions and
 * windows), so that no rule calls another family's rule by name. */
int ck_infer_as(checker *c, opcode op, instr *in, shape *inf);

/* --- the shape rules ------------------------------------------------------ */

/* The shape rules named by ir/opcodes.def's `infer` column: each infers
 * the result of `in` from its operands and attributes into *inf (element
 * type, dims; layouts only where c->keep_layout says so), reporting errors;
 * 0 when fine. infer_declared (the written shape) is in common.c. */
#define X(E, text, arity, cat, infer, ev, flags, types) int infer_##infer(checker *c, instr *in, shape *inf);
#include "ir/opcodes.def"
#undef X

/* What a family's rules share among themselves, declared here as the rule
 * files have no headers of their own. */

/* compare's default type= for an element type. (elementwise.c) */
cmp_type ck_default_cmp_type(etype t);
/* Without allow_mixed_precision: parameter k of f has the element type of
 * operand k of `in`, k < n (XLA's verifier for reduce, reduce-window and
 * map); reports at to_apply= and returns nonzero otherwise. (reduce.c) */
int ck_to_apply_types(checker *c, const instr *in, const computation *f, int n);
/* A computation's signature as XLA prints a ProgramShape:
 * `(p: f32[], q: f32[]) -> f32[]`, appended to b. (control.c) */
void ck_program_shape(strbuf *b, const computation *comp);

/* The broadcasting rules (broadcast.c), for binary ops and compare
 * (elementwise.c) and the broadcast instruction (shape_ops.c). */

/* Binary op or compare: infers the result dims into `result` (element type
 * and layout are the caller's business) and fills both operands' out_dim,
 * following c->mode and c->strict. Reports errors; returns 0 when the shapes
 * are fine. */
int check_binary_shapes(checker *c, instr *in, const shape *lhs, const shape *rhs, shape *result);
/* Dimension d's size as text, `?` for an unbounded one. */
void ck_dim_text(char out[24], const shape *s, int d);
/* broadcast: checks `dimensions=` of `in` (operand shape `opnd`) against the
 * result dims in `result` and fills the operand's out_dim. Returns 0 when
 * fine. */
int check_broadcast_shapes(checker *c, instr *in, const shape *opnd, const shape *result);

#endif
