/* The kernels of the built-in custom-call targets (ir/custom_calls.def)
 * that live outside eval/kernels/custom_call.c: the LAPACK ones
 * (eval/lib/lapack.c).
 * Each gets the instruction, its operands and the element type the target
 * works in, and sets the instruction's value as a kernel does. */
#ifndef HLOI_EVAL_LIB_LAPACK_H
#define HLOI_EVAL_LIB_LAPACK_H

#include "eval/base/engine.h"

hloi_status cc_kernel_getrf(engine *e, frame *f, const instr *in, hloi_literal *const *ops, etype t);
hloi_status cc_kernel_potrf(engine *e, frame *f, const instr *in, hloi_literal *const *ops, etype t);
hloi_status cc_kernel_geqrf(engine *e, frame *f, const instr *in, hloi_literal *const *ops, etype t);
hloi_status cc_kernel_geqp3(engine *e, frame *f, const instr *in, hloi_literal *const *ops, etype t);
hloi_status cc_kernel_orgqr(engine *e, frame *f, const instr *in, hloi_literal *const *ops, etype t);
hloi_status cc_kernel_ormqr(engine *e, frame *f, const instr *in, hloi_literal *const *ops, etype t);
hloi_status cc_kernel_gesdd(engine *e, frame *f, const instr *in, hloi_literal *const *ops, etype t);
hloi_status cc_kernel_gesvd(engine *e, frame *f, const instr *in, hloi_literal *const *ops, etype t);
hloi_status cc_kernel_trsm(engine *e, frame *f, const instr *in, hloi_literal *const *ops, etype t);
hloi_status cc_kernel_syevd(engine *e, frame *f, const instr *in, hloi_literal *const *ops, etype t);
hloi_status cc_kernel_geev(engine *e, frame *f, const instr *in, hloi_literal *const *ops, etype t);
hloi_status cc_kernel_gees(engine *e, frame *f, const instr *in, hloi_literal *const *ops, etype t);
hloi_status cc_kernel_gehrd(engine *e, frame *f, const instr *in, hloi_literal *const *ops, etype t);
hloi_status cc_kernel_sytrd(engine *e, frame *f, const instr *in, hloi_literal *const *ops, etype t);
hloi_status cc_kernel_gtsv(engine *e, frame *f, const instr *in, hloi_literal *const *ops, etype t);

#endif
