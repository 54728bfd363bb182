/* Engines: evaluate a checked module's entry computation. The interface
 * the API (src/api/) uses: this header and the ones it includes.
 *
 * src/eval/ by role, lowest first; a file includes headers of its own role
 * and of lower roles only (tests/cli/layers_test.py checks it):
 *
 *   scalar/   element semantics, no engine: scalar.h (every element
 *             operation, written once), cplx.h, unary.h (the unary family's
 *             parameters), clones.h (per-CPU clones), reference.c/.h (the
 *             per-element oracle, doc/spec.md §9: elementwise ops, iota, reshape,
 *             transpose by index conversion)
 *   fast/     the fast executor, on literals, no engine: fast.h (its entry
 *             points), fx.h, exec.c (fused regions, strided copies,
 *             relayout), rows.c (row kernels), unary.c (the unary family),
 *             reduce.c/.h (reductions by a known monoid, their input
 *             read from a fused region where they read it), vmath
 *             (vector math), parallel.c (ranges of work on threads)
 *   base/     the engine's state: engine.h (engine, frame, the driver's
 *             hook), values.c (the budget, buffers, copies between layouts),
 *             limits (stop flag, step limit, default budget), random.c
 *             (pseudo-random inputs and constants)
 *   lib/      bindings of outside libraries: blas (OpenBLAS opened with
 *             dlopen), dnnl (oneDNN's convolution, opened with dlopen),
 *             lapack (the LAPACK custom-call targets)
 *   plan/     the plan of a computation: schedule, fused regions, liveness,
 *             buffer reuse, peak memory, and `hloi plan`'s text and DOT
 *   kernels/  the reference kernels, one file per op family: kernel.h (the
 *             kernel signature and the kernel of each opcode), kernel.c
 *             (kernel_array, kernel_none), apply (a computation applied to
 *             scalars), control (parameters, constants, call, while,
 *             conditional, scan, the step count), custom_call.c (the
 *             custom-call targets' registry), data, movement, dynamic, ...
 *   runtime/  participants and the host: spmd (participants on threads,
 *             rendezvous), collectives, sendrecv, feeds (infeed, outfeed),
 *             mpi (participants as MPI ranks)
 *   eval/     the driver: run.c runs a plan step by step, a fused region
 *             through fast/, any other instruction through the kernel table
 *             (ir/opcodes.def's `eval` column), frees values after their
 *             last use; eval.h.
 *
 * The roles below the driver evaluate a computation (call, while, map,
 * reduce's to_apply, ...) through the engine's `computation` hook
 * (base/engine.h), which the driver sets; the participants run through the
 * function the driver gives spmd_run.
 */
#ifndef HLOI_EVAL_EVAL_H
#define HLOI_EVAL_EVAL_H

#include <stdint.h>

#include "eval/base/limits.h"
#include "eval/base/profile.h"
#include "eval/base/random.h"
#include "eval/plan/machine.h"
#include "eval/plan/plan.h"
#include "eval/plan/report.h"
#include "hloi.h"
#include "ir/ir.h"
#include "util/strbuf.h"

/* Runs the checked module. inputs[i] must match parameter i in type and dims
 * (else HLOI_EINVAL with a message naming the parameter); an input in another
 * layout is converted. *out gets the result (caller frees). */
hloi_status eval_module(module *m, hloi_context *ctx, hloi_literal *const *inputs, size_t ninputs,
			const hloi_run_options *opts, hloi_literal **out);

/* The same, writing the result into `result`, the caller's literal with the
 * exact shape and layouts of the module's result (no result allocation).
 * HLOI_EINVAL when its shape differs, when it shares a buffer with an input,
 * or when the module aliases its result to an input. */
hloi_status eval_module_into(module *m, hloi_context *ctx, hloi_literal *const *inputs, size_t ninputs,
			     const hloi_run_options *opts, hloi_literal *result);

/* A new copy of `lit` (an array input of parameter i's type and dims) in
 * parameter i's layout, converted on `threads` threads (0: the cores) as a
 * run converts its inputs; a plain copy when the layouts agree or the
 * parameter is not a static array. */
hloi_status eval_conform_input(const module *m, const hloi_literal *lit, size_t i, int threads, hloi_literal **out);

/* How many instructions of the checked module a probe name selects
 * (hloi_module_probe_matches): `name` in any computation, or
 * `computation/name`. */
size_t eval_probe_matches(const module *m, const char *name);

struct fast_tuning;

/* What a run measured. */
typedef struct eval_stats {
	uint64_t peak_bytes;  /* the most the engine held at once: values it made
			       * (results included) and the executor's scratch */
} eval_stats;

/* eval_module (into == NULL) or eval_module_into, with the fast engine's
 * sizes (`tuning`, NULL: the defaults) and the run's measurements (`stats`,
 * may be NULL). For the tests. */
hloi_status eval_module_tuned(module *m, hloi_context *ctx, hloi_literal *const *inputs, size_t ninputs,
			      const hloi_run_options *opts, const struct fast_tuning *tuning, hloi_literal *into,
			      hloi_literal **out, eval_stats *stats);

/* The parameter a checked module's whole result is written into
 * (input_output_alias with output index {}), or -1. */
int eval_aliased_parameter(const module *m);

/* Runs the checked module as m->replicas x m->partitions participants:
 * inputs holds ninputs per participant, participant-major (by flattened
 * id); out[p] gets participant p's result. Each participant's diagnostics
 * come into ctx prefixed with the participant (runtime/spmd.c). */
hloi_status eval_module_participants(module *m, hloi_context *ctx, hloi_literal *const *inputs, size_t ninputs,
				     const hloi_run_options *opts, hloi_literal **out);

#endif
