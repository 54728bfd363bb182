/* A computation applied to scalars, once per element or per pair of
 * elements: the reducer of reduce and reduce-window, the function of map.
 *
 * A computation of scalar instructions (parameters, constants, the binary
 * ops, compare, select, convert, bitcast-convert, copy, reshape and
 * broadcast of scalars, tuples of scalars and their elements) is compiled
 * into a short program over a state of 8-byte slots: a call writes the
 * parameters into their slots, runs the program, and reads the results from
 * theirs, with no allocation and no shared state, so threads may apply it
 * at once, each with its own state. Any other computation is evaluated by
 * the engine's driver per call (eval_computation), on one thread. Both give
 * the same values: the program computes each instruction with
 * eval/scalar/scalar.h, as the kernels do.
 */
#ifndef HLOI_EVAL_APPLY_H
#define HLOI_EVAL_APPLY_H

#include <stdint.h>

#include "eval/kernels/kernel.h"

typedef struct apply_prog apply_prog;

typedef struct applier {
	engine *e;
	const computation *comp;
	int nparams, nresults;
	etype *ptype;          /* each parameter's element type */
	etype *rtype;          /* each result's element type */
	apply_prog *prog;      /* the compiled program, or NULL: the driver per call */
	int nslots;            /* 8-byte words of a state */
	hloi_literal **args;   /* driver: the parameters' values */
} applier;

/* Prepares comp (scalar parameters; a scalar or a tuple of scalars as its
 * result) for per-element application. HLOI_ENOMEM with a message. */
hloi_status applier_init(applier *a, engine *e, const computation *comp);
void applier_free(applier *a);

/* Whether calls may run on several threads at once (each with its state). */
static inline int applier_parallel(const applier *a)
{
	return a->prog != NULL;
}

/* A new state (a->nslots words at st): constants in place. */
void applier_start(const applier *a, uint64_t *st);
/* Parameter k of the next call: the element of type t at p, converted to
 * the parameter's type when they differ (floating-point precision). */
void applier_param(const applier *a, uint64_t *st, int k, etype t, const void *p);
/* One element of type st at in written as type dt at out (the bytes when
 * the types are one, else eval/scalar/scalar.h's convert): how an operand's
 * element enters a computation of another floating-point precision and
 * how its result is stored back. */
void apply_convert(etype dt, void *out, etype st, const void *in);
/* The same, copying result r of the last call (same type). */
void applier_param_from_result(const applier *a, uint64_t *st, int k, int r);
/* Runs the computation on the parameters set. Only the driver path can fail
 * (an error inside the computation, memory). */
hloi_status applier_run(applier *a, uint64_t *st);
/* Result r of the last call (of type a->rtype[r]). */
const void *applier_result(const applier *a, const uint64_t *st, int r);
/* Result r of the last call written at out as type t (converted when the
 * computation's result type is another). */
void applier_result_to(const applier *a, const uint64_t *st, int r, etype t, void *out);

#endif
