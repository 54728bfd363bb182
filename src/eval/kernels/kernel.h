/* What every kernel of eval/kernels/ and eval/runtime/ shares: the
 * kernel's signature, the kernel of each opcode (ir/opcodes.def's `eval`
 * column: kernel_<eval>), the common ends of a kernel (kernel_array,
 * kernel_none: kernels/kernel.c) and the helpers kernels call one another
 * through. The table of kernels by opcode is the driver's (eval/run.c): it
 * names the kernels of every role. */
#ifndef HLOI_EVAL_KERNELS_KERNEL_H
#define HLOI_EVAL_KERNELS_KERNEL_H

#include "eval/base/engine.h"
#include "eval/scalar/reference.h"

/* What a kernel gets: the engine, the frame of the computation being
 * evaluated, the instruction, its operands' values (in->nops of them), the
 * computation's arguments (for parameters) and, for the root of an aliased
 * computation, where its result must end up (or NULL). A kernel sets
 * f->vals[in->position] and f->owned[in->position]. */
typedef struct kernel_ctx {
	engine *e;
	frame *f;
	const instr *in;
	hloi_literal *const *ops;
	hloi_literal *const *args;
	hloi_literal *dest;
} kernel_ctx;

typedef hloi_status (*kernel_fn)(const kernel_ctx *kc);

/* The kernels named by ir/opcodes.def's `eval` column; kernel_none
 * reports an opcode hloi does not evaluate. */
#define X(E, text, arity, cat, infer, ev, flags, types) hloi_status kernel_##ev(const kernel_ctx *);
#include "ir/opcodes.def"
#undef X
/* (declared apart: no row of the table may name it) */
hloi_status kernel_none(const kernel_ctx *kc);

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

/* --- steps (control.c) ------------------------------------------------------ */

/* Called before instruction `in` of `comp` is evaluated, and by a while loop
 * once per iteration: counts one step against the run's limit (unless in a
 * per-element application that is not inside another, e->uncounted == 1)
 * and returns HLOI_ESTOPPED with an
 * error naming the innermost loop and its computation when the limit is
 * reached or the run was stopped. */
hloi_status eval_step(engine *e, const computation *comp, const instr *in);

/* Runs comp on args as instruction `in` of frame f (call, fusion, a
 * conditional's branch, a custom-call's called computation): its result,
 * conformed to in's layout, is the frame's value (or is dest). */
hloi_status kernel_call_computation(engine *e, frame *f, const instr *in, const computation *comp,
				    hloi_literal *const *args, hloi_literal *dest);

/* Frees the run's random-number states (rng.c). */
void eval_rng_free(engine *e);

#endif
