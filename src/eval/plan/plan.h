/* The evaluation plan of a computation (doc/spec.md §9), built before it runs:
 *
 * - the schedule: the instructions the root needs, in order;
 * - fused regions (fast engine): maximal groups of elementwise instructions
 *   (eval_is_elementwise) evaluated together, a row segment or tile at a
 *   time, by the executor of eval/fast/; a region's intermediates are never
 *   materialised, only its outputs (values used outside it, or the root);
 * - liveness: the step after which each value is dead, extended through
 *   values that share buffers (a tuple holds its operands, get-tuple-element,
 *   opt-barrier and a reshape that is a view hold their operand);
 * - buffer reuse: an output written over a dead input it reads exactly
 *   where it writes (in place), and input_output_alias / run-into results
 *   written straight into their destination;
 * - the peak memory this implies.
 *
 * The rule that decides fusion (doc/performance.md "The evaluation plan"): an
 * instruction joins the region of its users when every user it has in the
 * region reads it at the same element (same dims, identity dimension map),
 * and every user outside the region comes after the region's last
 * instruction (then it is an extra output, written in the same pass). A
 * value read through a broadcast or a transpose by a larger region is
 * materialised once and read by strides: nothing is ever computed twice.
 *
 * Input fusion: a region whose seed only a reduce by a known monoid reads
 * (fast_reduce_fusible) runs at the reduce, computed a run at a time where
 * the reduction reads it: the seed is never materialised. Its other
 * outputs are then read only after the reduce.
 */
#ifndef HLOI_EVAL_PLAN_H
#define HLOI_EVAL_PLAN_H

#include <stdint.h>

#include "eval/fast/fast.h"
#include "eval/fast/fx.h"
#include "ir/ir.h"
#include "util/strbuf.h"

/* A value a region reads: instruction position, and how its dimensions map
 * to the region's domain. */
typedef struct plan_input {
	int pos;
	int8_t map[HLOI_MAX_RANK];
} plan_input;

typedef struct plan_region {
	int seed;               /* its last instruction; the region runs there */
	int nmem;
	fx_member *mem;         /* in schedule order */
	int *mem_pos;           /* their instruction positions */
	int nin;
	plan_input *in;
	int sink;               /* the reduce reading the seed, which is then never
				 * materialised (input fusion), or -1 */
	int nout;
	int *out_member;        /* output o is member out_member[o] (output 0: the seed,
				 * unless the region has a sink) */
	int *reuse;             /* per output: the input position whose buffer it takes, or -1 */
	int nslots;             /* row buffers of the members */
} plan_region;

typedef enum plan_step_kind {
	STEP_INSTR,             /* one instruction through the kernel table */
	STEP_REGION,            /* a fused region */
	STEP_REDUCE             /* a reduce reading its input from a fused region (its sink) */
} plan_step_kind;

typedef struct plan_step {
	plan_step_kind kind;
	int pos;                /* the instruction, or the region's seed */
	int region;             /* STEP_REGION, STEP_REDUCE */
} plan_step;

/* Per instruction, how its value holds memory. */
typedef enum plan_value {
	PV_NONE = 0,            /* not needed, or an intermediate of a region */
	PV_OWNED,               /* a buffer of its own */
	PV_BORROWED,            /* a parameter or constant (not the run's memory) */
	PV_SHARED               /* its operands' buffers (tuple, get-tuple-element, reshape view,
				 * opt-barrier) */
} plan_value;

typedef struct eval_plan {
	const computation *comp;
	int fused;              /* built for the fast engine */
	int generic;            /* members through the reference element loop (tests) */
	int n;                  /* instructions of comp */
	int nsteps;
	plan_step *steps;
	int nregions;
	plan_region *regions;
	int *region_of;         /* per instruction: its region, or -1 */
	int *last_use;          /* per instruction: position of its last reader (n: the root), -1 not needed */
	int *rel_start;         /* rel_list[rel_start[i] .. rel_start[i + 1]): the values */
	int *rel_list;          /* ... whose last use is position i (released after it) */
	uint8_t *value;         /* per instruction: plan_value */
	uint8_t *view;          /* per instruction: a reshape evaluated as a view */
	void *mem;              /* every array above, one allocation */
} eval_plan;

/* Builds the plan of comp (checked). `fused`: the fast engine's plan
 * (regions); else every instruction is a step of its own. `keep` (NULL:
 * none), per instruction position: values that must exist once their step
 * has run (probes): a fused member so marked becomes an output of its
 * region, and a region whose seed is kept is not read by a reduce (input
 * fusion). HLOI_ENOMEM. */
hloi_status plan_build(eval_plan **out, const computation *comp, int fused, int generic, const uint8_t *keep);
void plan_free(eval_plan *p);

/* Whether an opcode computes each element of its result from the elements
 * at the same index of its operands (through their dimension maps): the
 * one predicate fusion starts from (eval/kernels/elementwise.c). Binary, compare
 * and unary ops, select, clamp, convert, bitcast-convert, copy, broadcast,
 * transpose, iota. An instruction of such an opcode is fused when the fast
 * engine has a row kernel for it (fx_member_init): its own, or the
 * reference engine's element loop for any op ref_elementwise evaluates. */
int eval_is_elementwise(opcode op);

/* Whether a reshape from `op` to `res` keeps every element at its buffer
 * position (the same bytes, no padding), so that its value can share the
 * operand's buffer. */
int plan_reshape_is_view(const shape *op, const shape *res);
/* Whether a transpose by `perm` from `op` to `res` keeps every element at
 * its buffer position (a transpose whose result layout undoes it, as XLA's
 * layout assignment writes for a dot's operand). */
int plan_transpose_is_view(const shape *op, const shape *res, const int_list *perm);
/* Whether `in` (a reshape or transpose) is such a view of its operand. */
int plan_instr_is_view(const instr *in);

/* The walk the executor would take for region r (strides from the
 * instructions' shapes): for the printed plan and the peak. */
int plan_region_walk(const eval_plan *p, int r, int threads, const fast_tuning *tuning, fx_exec *x);

/* The planned peak bytes of running p: `params` (the caller's inputs) plus
 * the most its values and the executor's scratch hold at once. */
int64_t plan_peak_bytes(const eval_plan *p, int threads, const fast_tuning *tuning);

/* Appends the plan in its text form (hloi plan). */
void plan_print(strbuf *b, const eval_plan *p, int threads, const fast_tuning *tuning);

/* --- what the API asks of the plan (plan.c) --------------------------------- */

/* The evaluation plan of the checked module (entry computation, then each
 * computation it calls) as text, as `hloi plan` prints it: steps, fused
 * regions with their instructions, inputs, outputs and buffers reused, the
 * executor's walk (rows or tiles, threads, scratch) and the peak memory.
 * opts: the engine (the reference engine fuses nothing) and threads. */
hloi_status eval_plan_text(strbuf *b, const module *m, const hloi_run_options *opts);
/* The planned peak bytes of one run: the parameters, the most the values
 * hold at once (the result included) and the executor's scratch. */
hloi_status eval_plan_peak(const module *m, const hloi_run_options *opts, uint64_t *out);
/* The module as Graphviz DOT (text/dot.h) with each fused region of two or
 * more instructions drawn as a cluster. */
hloi_status eval_plan_dot(strbuf *b, const module *m, const hloi_run_options *opts);

#endif
