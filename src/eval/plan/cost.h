/* The cost model (doc/performance.md "Cost and floor"): what an
 * instruction or a fused region of the plan computes and moves, in the
 * terms of XLA's HloCostAnalysis — floating-point operations,
 * transcendentals (exp, log, tanh, sqrt, ...: OPF_TRANSCENDENTAL) and
 * bytes accessed (its operands read and its result written once) — and
 * the floor this puts on its time on a machine of a given GEMM speed and
 * memory bandwidth. `hloi plan --cost` prints it; profiles rate each
 * instruction against it. */
#ifndef HLOI_EVAL_COST_H
#define HLOI_EVAL_COST_H

#include <stdint.h>

#include "eval/plan/plan.h"
#include "ir/ir.h"

typedef struct op_cost {
	double flops;          /* multiply and add counted apart */
	double transcendentals;
	double bytes;          /* operands read + result written */
	double gemm_flops;     /* the part of flops in dot and convolution */
} op_cost;

/* A machine's limits: GEMM speed and memory bandwidth (hloi_machine). */
typedef struct cost_machine {
	double gflops;         /* GFLOP/s; 0: unknown */
	double gbps;           /* GB/s; 0: unknown */
} cost_machine;

/* The cost of one evaluation of `in` (its called computations' steps not
 * included: a call, while, conditional or fusion costs nothing itself;
 * a reduce's or sort's applied computation is counted in the op). */
void cost_instr(const instr *in, op_cost *c);
/* The cost of step s of plan p: a fused region's members' flops, and the
 * bytes of its inputs and outputs (its intermediates stay in cache). */
void cost_step(const eval_plan *p, int s, op_cost *c);
/* Seconds the cost needs at least on m: FLOPs at its GEMM speed or bytes at
 * its bandwidth, whichever is longer (a limit unknown counts 0). */
double cost_floor(const op_cost *c, const cost_machine *m);
/* The buffer bytes of a value (a tuple's arrays together). */
double cost_bytes(const shape *s);
/* Applied to one element's worth of its operands: the flops of the
 * computation `comp` (its arithmetic instructions; at least 1). */
double cost_applied(const computation *comp);

#endif
