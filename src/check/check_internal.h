/* State shared by the checker's files: the module being checked, where its
 * errors go, the options in force, and helpers that report located errors
 * with shapes printed the way the messages need them. */
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

/* The participant counts of a run: the options' (version >= 3), else the
 * module header's replica_count and num_partitions. Reports a count out of
 * range and returns nonzero. (collectives.c) */
int ck_participants(checker *c, const hloi_check_options *opts);

/* A type error / an unsupported feature at `at`; notes follow the error. */
void ck_error(checker *c, loc at, const char *fmt, ...) DIAG_PRINTF(3, 4);
void ck_unsupported(checker *c, loc at, const char *fmt, ...) DIAG_PRINTF(3, 4);
void ck_note(checker *c, loc at, const char *fmt, ...) DIAG_PRINTF(3, 4);

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
/* The span of an attribute `name={...}` given the span of its value (the
 * span is returned as is when the text before it is not `name=`). */
loc ck_attr_loc(const checker *c, loc value, const char *name);

/* --- shared by the shape rules --------------------------------------------- */

/* Operand k must be an array (not a tuple); reports and returns 0 if not. */
int ck_array_operand(checker *c, const instr *in, int k);
/* The result shape must have been written (and be an array). */
int ck_needs_shape(checker *c, const instr *in);
/* Every operand's dimension j feeds result dimension j. */
void ck_identity_out_dims(instr *in);
/* compare's default type= for an element type. */
cmp_type ck_default_cmp_type(etype t);
/* Checks a callee before its caller (called from shape rules); 0 when its
 * root and parameters are usable. `at` locates a recursion error. */
int ck_ensure_checked(checker *c, instr *in, computation *callee, loc at);
int ck_check_computation(checker *c, computation *comp);

/* XLA's VerifyReducerShape for reducer f of n inputs (their element types)
 * and init values; reports at to_apply= and returns nonzero on an error. */
int ck_verify_reducer(checker *c, const instr *in, const computation *f, const shape *const *inits,
		      const etype *input_types, int n);
/* Without allow_mixed_precision: parameter k of f has the element type of
 * operand k of `in`, k < n (XLA's verifier for reduce, reduce-window and
 * map); reports at to_apply= and returns nonzero otherwise. */
int ck_to_apply_types(checker *c, const instr *in, const computation *f, int n);
/* XLA's InferWindowOutputShape: the dims of window w over `base` into out;
 * reports and returns nonzero when the window does not fit. */
int ck_window_output(checker *c, const instr *in, const window *w, const shape *base, int64_t *out);
/* A computation's signature as XLA prints a ProgramShape:
 * `(p: f32[], q: f32[]) -> f32[]`, appended to b. */
void ck_program_shape(strbuf *b, const computation *comp);

/* The shape rules named by ir/opcodes.def's `infer` column: each infers
 * the result of `in` from its operands and attributes into *inf (element
 * type, dims; layouts only where c->keep_layout says so), reporting errors;
 * 0 when fine. */
/* Keeps a value the checker made (a constant's, an attribute's literal)
 * with the module, which frees it; 1 when out of memory. */
int ck_store_value(checker *c, hloi_literal *lit);
#define X(E, text, arity, cat, infer, ev) int infer_##infer(checker *c, instr *in, shape *inf);
#include "ir/opcodes.def"
#undef X

/* Binary op or compare: infers the result dims into `result` (element type
 * and layout are the caller's business) and fills both operands' out_dim,
 * following c->mode and c->strict. Reports errors; returns 0 when the shapes
 * are fine. */
int check_binary_shapes(checker *c, instr *in, const shape *lhs, const shape *rhs, shape *result);
/* `?` dimensions (XLA's unbounded dynamic size) in the ops whose operands
 * must agree (select, clamp, concatenate, a variadic reduce): acc takes
 * s's size or bound where acc is `?`; nonzero when a dimension that is `?`
 * in neither differs (in size or in being `<=N`), or the ranks do. */
int ck_unbounded_merge(shape *acc, const shape *s);
/* Dimension d's size as text, `?` for an unbounded one. */
void ck_dim_text(char out[24], const shape *s, int d);

/* broadcast: checks `dimensions=` of `in` (operand shape `opnd`) against the
 * result dims in `result` and fills the operand's out_dim. Returns 0 when
 * fine. */
int check_broadcast_shapes(checker *c, instr *in, const shape *opnd, const shape *result);

#endif
