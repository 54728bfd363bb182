/* The engine's internal interface, shared by the files of src/eval/:
 *
 *   plan.c       the plan of a computation: schedule, fused regions,
 *                liveness, buffer reuse, peak memory (plan.h)
 *   run.c        the driver: runs a plan step by step, a fused region
 *                through the executor of eval/fast/, any other instruction
 *                through the kernel table; frees every value after its last
 *                use; writes aliased results in place
 *   values.c     memory: the budget, value buffers, the spare buffer, shared
 *                values (tuples, views), copies between layouts
 *   control.c    kernels of parameters, constants, calls, while,
 *                conditional and scan; the step count (eval_step)
 *   reduce.c     reduce, reduce-window and map in XLA's order of combination
 *   reduce_fast.c   the fast engine's reductions by a known monoid
 *   apply.c      a computation applied to scalars, element by element
 *   data.c       kernels of the data-movement ops and of tuples
 *   movement.c   slice, pad, concatenate, dynamic slices, reverse ... as
 *                strided copies (fast_copy where the engine is the fast one)
 *   elementwise.c   the kernel of the elementwise ops outside regions
 *   dynamic.c    set-dimension-size and dynamic-reshape (`<=N` sizes)
 *   feeds.c      infeed and outfeed: the run's queue and callbacks
 *   fast/        the fast engine: row kernels, the region executor, the
 *                strided copy of the data-movement ops
 *   reference.c  the per-element oracle (SPEC §9)
 *   scalar.h     the semantics of every element operation, written once
 *
 * A kernel is named by the `eval` column of ir/opcodes.def; the driver
 * never knows which engine computed a value.
 */
#ifndef HLOI_EVAL_ENGINE_H
#define HLOI_EVAL_ENGINE_H

#include <stdint.h>

#include "eval/eval.h"
#include "eval/fast.h"
#include "eval/limits.h"
#include "ir/ir.h"

/* Calls nested deeper than this are refused (the checker rejects recursion,
 * so only very deep chains of computations reach it). */
#define EVAL_MAX_DEPTH 64

/* The state of one rng-get-and-update-state or rng instruction in a run
 * (eval/rng.c). */
typedef struct eval_rng_state {
	const instr *in;
	uint64_t lo, hi;     /* the 128-bit state, low word first */
} eval_rng_state;

/* The infeed queue and the callbacks of a run (hloi_run_options version
 * 4), with the values taken and given so far (eval/feeds.c). */
typedef struct eval_feeds {
	hloi_literal *const *queue;
	size_t nqueue;
	hloi_infeed_fn infeed;
	hloi_outfeed_fn outfeed;
	void *data;
	uint64_t taken, given;
	hloi_host_recv_fn host_recv; /* transfers with the host (version 5) */
	hloi_host_send_fn host_send;
	void *host_data;
} eval_feeds;

typedef struct engine {
	module *m;
	hloi_context *ctx;
	uint64_t budget;     /* bytes the engine may hold at once */
	uint64_t live;       /* bytes it holds now */
	int fast;            /* try the fast engine first */
	int threads;
	int depth;           /* computations being evaluated */
	hloi_literal *spare; /* a freed array kept for the next value of its size */
	uint64_t peak;       /* the most `live` has been */
	const fast_tuning *tuning; /* the fast engine's sizes (NULL: defaults) */
	struct eval_plan **plans; /* plans of the computations run so far */
	int nplans, cap_plans;
	eval_limits limits;  /* stop flag and step limit (hloi_run_options) */
	int uncounted;       /* per-element applications of a computation (reduce,
			      * reduce-window, map) being run, one inside another:
			      * the steps of the outermost (1) do not count */
	uint64_t held;       /* bytes held before the run made anything: inputs,
			      * the caller's result buffer, constants */
	const instr *cur;    /* the instruction being evaluated (eval_step), or NULL */
	const computation *cur_comp;  /* ... and its computation */
	const instr *loop;   /* the innermost while loop running, or NULL */
	const computation *loop_comp;  /* ... the computation it is in */
	int64_t loop_iter;   /* ... and its iteration (from 1) */
	eval_rng_state *rng; /* the random-number states of the run so far */
	int nrng, cap_rng;
	struct spmd_member *spmd; /* the participant this engine runs, with the
				   * others of the run (spmd.h); NULL on one device */
	struct p2p_state *p2p;    /* send and recv under way (sendrecv.c) */
	eval_feeds feeds;    /* infeed and outfeed (feeds.c) */
} engine;

/* How a frame holds a value (frame.owned). */
enum {
	VAL_BORROWED = 0, /* not the frame's to free (parameters, constants, tuple elements) */
	VAL_OWNED = 1,    /* value_new made it; value_drop frees it */
	VAL_SHELL = 2     /* a tuple of other values, or a view of another value's
			   * buffer: only the container is the frame's (value_shell_free) */
};

/* One evaluation of a computation: a value per instruction position. */
typedef struct frame {
	const computation *comp;
	hloi_literal **vals;
	uint8_t *owned;      /* VAL_* */
	const int *last_use; /* position of each value's last reader */
	const struct eval_plan *plan;
} frame;

/* --- values (values.c) ------------------------------------------------------ */

/* Buffer bytes of a value (tuples: the sum over their elements); -1 on overflow. */
int64_t value_bytes(const shape *s);
/* Reports an allocation failure of `bytes`; returns HLOI_ENOMEM. */
hloi_status value_oom(engine *e, int64_t bytes);
/* A new value of shape `s` within the budget (the spare array when its
 * buffer has the size asked for). Its elements are unset; padding holds the
 * padding value. */
hloi_status value_new(engine *e, const shape *s, hloi_literal **out);
/* Frees a value value_new made, or keeps it as the spare. */
void value_drop(engine *e, hloi_literal *lit);
void value_free_spare(engine *e);
/* Drops the frame's value at `pos` if it owns it (or its container). */
void value_release(engine *e, frame *f, int pos);
/* Counts the executor's scratch in the engine's memory (its peak), without
 * refusing it: the budget bounds values. value_unreserve gives it back. */
hloi_status value_reserve(engine *e, int64_t bytes);
void value_unreserve(engine *e, int64_t bytes);
/* A tuple whose elements are the given values (borrowed, not copied), and
 * a view of an array's buffer with another shape: containers only, freed
 * with value_shell_free (the frame marks them VAL_SHELL). */
hloi_status value_tuple_shell(engine *e, const shape *s, hloi_literal *const *elems, int n, hloi_literal **out);
hloi_status value_view(engine *e, const shape *s, const hloi_literal *of, hloi_literal **out);
void value_shell_free(hloi_literal *lit);
/* Equal layouts everywhere (tuples element by element). */
int value_same_layouts(const shape *a, const shape *b);
/* Copies the values of src into dst (same type and dims; any layouts). */
void value_copy(hloi_literal *dst, const hloi_literal *src);
/* `lit` in the layouts of `target`: lit itself (*owned = 0) when they agree,
 * else a converted copy (*owned = 1). */
hloi_status value_conform(engine *e, hloi_literal *lit, const shape *target, hloi_literal **out, int *owned);
/* A new value of the result shape of `in`, the frame's (VAL_OWNED) at
 * its position. */
hloi_status value_result(engine *e, frame *f, const instr *in, hloi_literal **res);
/* Zeros in every element of v (tuples deeply). */
void value_zero(hloi_literal *v);
/* A copy of `lit` of its own, within the budget. */
hloi_status value_clone(engine *e, const hloi_literal *lit, hloi_literal **out);

/* A kernel's result value (dest when given) and a scratch of `bytes`
 * within the budget (eval_scratch_begin; on failure everything is given
 * back), and the end of such a kernel: the scratch freed and the result set
 * as the instruction's value (eval_scratch_finish). */
hloi_status eval_scratch_begin(engine *e, const instr *in, hloi_literal *dest, int64_t bytes, hloi_literal **res,
			       void **scratch);
hloi_status eval_scratch_finish(engine *e, frame *f, const instr *in, hloi_literal *dest, hloi_literal *res,
				void *scratch, int64_t bytes);

/* --- the driver (run.c) ----------------------------------------------------- */

/* Evaluates comp on args. The root's value comes back in *out: owned by the
 * caller when *out_owned, else borrowed (an argument, a constant, or dest).
 * With dest, the root's result is written into dest and *out is dest. */
hloi_status eval_computation(engine *e, const computation *comp, hloi_literal *const *args, hloi_literal *dest,
			     hloi_literal **out, int *out_owned);

/* eval_module for one participant of a run of several (spmd.c): the
 * driver with `member` set in the engine. */
hloi_status eval_module_member(module *m, hloi_context *ctx, hloi_literal *const *inputs, size_t ninputs,
			       const hloi_run_options *opts, struct spmd_member *member, hloi_literal **out);

/* --- steps (control.c) ------------------------------------------------------ */

/* Called before instruction `in` of `comp` is evaluated, and by a while loop
 * once per iteration: counts one step against the run's limit (unless in a
 * per-element application that is not inside another, e->uncounted == 1)
 * and returns HLOI_ESTOPPED with an
 * error naming the innermost loop and its computation when the limit is
 * reached or the run was stopped. */
hloi_status eval_step(engine *e, const computation *comp, const instr *in);

/* --- infeed and outfeed (feeds.c) ------------------------------------------- */

/* Reads the queue and callbacks of `opts` (version 4 and later; else none). */
void eval_feeds_init(eval_feeds *f, const hloi_run_options *opts);
/* Whether a value has elements whose values are unknown ({...}) or none:
 * what an infeed or a host recv refuses from the host. */
int eval_value_incomplete(const hloi_literal *v);
/* A host callback's failure status st for `in`; one that recorded no error
 * in the context (its count was `errors` before the call) gets one naming
 * the callback (`which`). Returns st. */
hloi_status eval_callback_failed(engine *e, const instr *in, size_t errors, hloi_status st, const char *which);

/* --- random numbers (rng.c) ------------------------------------------------- */

/* Frees the run's random-number states. */
void eval_rng_free(engine *e);
/* Frees the state of send and recv (sendrecv.c). */
void eval_p2p_free(engine *e);

/* --- kernels ------------------------------------------------------------------ */

/* What a kernel gets: the instruction, its operands' values (in->nops of
 * them), the computation's arguments (for parameters) and, for the root of
 * an aliased computation, where its result must end up (or NULL). It sets
 * f->vals[in->position] and f->owned[in->position]. */
typedef hloi_status (*kernel_fn)(engine *e, frame *f, const instr *in, hloi_literal *const *ops,
				 hloi_literal *const *args, hloi_literal *dest);

/* The kernels named by ir/opcodes.def's `eval` column; kernel_none
 * reports an opcode hloi does not evaluate. */
#define X(E, text, arity, cat, infer, ev, flags, types) hloi_status kernel_##ev(engine *, frame *, const instr *, \
	hloi_literal *const *, hloi_literal *const *, hloi_literal *);
#include "ir/opcodes.def"
#undef X
/* (declared apart: no row of the table may name it) */
hloi_status kernel_none(engine *e, frame *f, const instr *in, hloi_literal *const *ops, hloi_literal *const *args,
			hloi_literal *dest);

/* An array result computed by `fill` into a buffer of in->result's shape:
 * dest when it is safe to write there, an operand's buffer when this is its
 * last use and the op reads every element where it writes it (`in_place`),
 * else a new value. */
typedef void (*fill_fn)(engine *e, const instr *in, hloi_literal *const *ops, hloi_literal *out);
hloi_status kernel_array(engine *e, frame *f, const instr *in, hloi_literal *const *ops, hloi_literal *dest,
			 int in_place, fill_fn fill);

/* Dynamic dimensions (dynamic.c): whether evaluating `in` on `ops`
 * involves `<=N` sizes, and its evaluation then: kernel k on the operands
 * (a reduce's padding set to its init value first; a reshape laid out
 * anew), the result's sizes taken from its operands'. */
int eval_is_dynamic(const instr *in, hloi_literal *const *ops);
hloi_status eval_dynamic(engine *e, frame *f, const instr *in, hloi_literal *const *ops, hloi_literal *const *args,
			 hloi_literal *dest, kernel_fn k);
/* XLA's SliceToDynamic and PadToStatic custom-calls (dynamic.c). */
hloi_status eval_slice_to_dynamic(engine *e, frame *f, const instr *in, hloi_literal *const *ops);
hloi_status eval_pad_to_static(engine *e, frame *f, const instr *in, hloi_literal *const *ops);
/* XLA's DynamicConvolutionForward and DynamicReduceWindowSamePadding
 * custom-calls: the op on the elements within the input's sizes, its
 * window padded for them (dynamic.c). */
hloi_status eval_dynamic_conv_forward(engine *e, frame *f, const instr *in, hloi_literal *const *ops);
hloi_status eval_dynamic_reduce_window_same(engine *e, frame *f, const instr *in, hloi_literal *const *ops);
/* XLA's DynamicSelectAndScatterSamePadding custom-call (dynamic.c). */
hloi_status eval_dynamic_select_and_scatter_same(engine *e, frame *f, const instr *in, hloi_literal *const *ops);
/* XLA's DynamicConvolutionInputGrad and DynamicConvolutionKernelGrad
 * custom-calls: the convolution of the gradients, the padding masked and
 * the window padded for the sizes (dynamic.c). */
hloi_status eval_dynamic_conv_input_grad(engine *e, frame *f, const instr *in, hloi_literal *const *ops);
hloi_status eval_dynamic_conv_kernel_grad(engine *e, frame *f, const instr *in, hloi_literal *const *ops);

/* top-k of x along its last dimension into a new (values, s32 indices)
 * tuple of in->result's shape: the k largest (or smallest) by total order,
 * the lower index first among equals (topk and the TopK custom-call). */
hloi_status eval_topk(engine *e, frame *f, const instr *in, const hloi_literal *x, int64_t k, int largest);

/* compare's type=, or the default for the operands' element type. */
cmp_type eval_cmp_type(const instr *in, etype t);

/* --- the reference engine (reference.c) --------------------------------------- */

/* out[i] = op(operands at i) through index conversion, for every elementwise
 * op (binary, compare, select, convert, copy, broadcast, bitcast-convert). */
void ref_elementwise(const instr *in, hloi_literal *out, hloi_literal *const *ops);
/* Whether ref_elementwise evaluates `in` for its operand and result types. */
int ref_elementwise_supported(const instr *in);
void ref_reshape(hloi_literal *out, const hloi_literal *op);
void ref_transpose(const instr *in, hloi_literal *out, const hloi_literal *op);
void ref_iota(const instr *in, hloi_literal *out);

#endif
