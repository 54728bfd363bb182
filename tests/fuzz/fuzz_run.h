/* Running a parsed module the way the run targets do: check, random
 * inputs (programs whose inputs would be large are only checked), the
 * reference engine on one thread under a 64 MiB budget, then the default
 * fast engine on two threads under the same limits, compared as `hloi run
 * --compare` compares (floats within abs 1e-3 or rel 1e-3, NaN equal to
 * NaN, integers exactly).
 *
 * What aborts (a finding), by the contract between the engines (doc/semantics.md):
 * - one engine fails where the other succeeds, unless the failure is the
 *   budget (HLOI_ENOMEM: the engines hold different scratch) or the step
 *   limit (HLOI_ESTOPPED: the engines need not reach either at the same
 *   instruction);
 * - results of different types, dimensions or tuple structure;
 * - elements that differ beyond the tolerance in a program without an
 *   instruction whose fast kernel may combine in another order (dot,
 *   convolution, reduce, reduce-window: BLAS and the vectorised reductions
 *   agree only "within rounding", and a chain of later instructions, a
 *   compare or a convert may amplify that without bound). The fast
 *   engine's vector math (f32 tanh, exp, log within a few ULP) is turned
 *   off (vmath_enable(0), as HLOI_VECTOR_MATH=0), so that every other
 *   instruction must give the reference's values. */
#ifndef HLOI_FUZZ_RUN_H
#define HLOI_FUZZ_RUN_H

#include "fuzz_common.h"
#include "eval/fast/vmath.h"
#include "ir/ir.h"

#define FUZZ_MAX_INPUT_BYTES (1u << 20)
#define FUZZ_MAX_MEMORY (64u << 20)
/* Loops that never end stop soon (HLOI_ESTOPPED): 25,000 steps per
 * engine, so that both engines together take about what one took with
 * 100,000 steps under ASan on a loaded machine (libFuzzer's 10 s). */
#define FUZZ_MAX_STEPS 25000u
#define FUZZ_FAST_THREADS 2

/* Whether the entry parameters together fit in FUZZ_MAX_INPUT_BYTES. */
static inline int fuzz_inputs_are_small(const hloi_module *m)
{
	uint64_t total = 0;
	size_t n = hloi_module_parameter_count(m);

	for (size_t i = 0; i < n; i++) {
		const hloi_shape *s = hloi_module_parameter_shape(m, i);
		if (!s || hloi_shape_rank(s) < 0)
			return 0;
		int64_t elems = hloi_shape_buffer_elements(s);
		int64_t bytes = hloi_shape_element_bytes(s);
		if (elems < 0 || bytes <= 0 || elems > (int64_t)FUZZ_MAX_INPUT_BYTES / bytes)
			return 0;
		total += (uint64_t)(elems * bytes);
		if (total > FUZZ_MAX_INPUT_BYTES)
			return 0;
	}
	return 1;
}

/* Whether the module holds an instruction whose fast kernel may combine
 * elements in another order than the reference's (see above). */
static inline int fuzz_order_may_differ(const module *m)
{
	for (int c = 0; c < m->ncomps; c++) {
		const computation *comp = m->comps[c];
		for (int i = 0; i < comp->ninstrs; i++) {
			switch (comp->instrs[i]->op) {
			case OP_DOT:
			case OP_CONVOLUTION:
			case OP_REDUCE:
			case OP_REDUCE_WINDOW:
				return 1;
			default:
				break;
			}
		}
	}
	return 0;
}

/* A failure the other engine need not share: the budget or the step limit. */
static inline int fuzz_limit_status(hloi_status st)
{
	return st == HLOI_ENOMEM || st == HLOI_ESTOPPED;
}

/* Runs `m` on `in` with `engine`; an aliased input is copied first, as
 * `hloi run --compare` does, so that each engine gets the same inputs. */
static inline hloi_status fuzz_run_engine(hloi_module *m, hloi_context *ctx, hloi_literal **in, size_t nin,
					  hloi_engine engine, hloi_literal **out)
{
	hloi_run_options opts = HLOI_RUN_OPTIONS_INIT;
	opts.engine = engine;
	opts.threads = engine == HLOI_ENGINE_REFERENCE ? 1 : FUZZ_FAST_THREADS;
	opts.max_memory = FUZZ_MAX_MEMORY;
	opts.max_steps = FUZZ_MAX_STEPS;
	int aliased = hloi_module_aliased_input(m);
	hloi_literal *spare = NULL, *saved = NULL;
	if (aliased >= 0 && (size_t)aliased < nin) {
		if (hloi_literal_clone(&spare, in[aliased]) != HLOI_OK)
			return HLOI_ENOMEM;
		saved = in[aliased];
		in[aliased] = spare;
	}
	hloi_status st = hloi_module_run(m, ctx, in, nin, &opts, out);
	fuzz_check_status(ctx, st, *out);
	if (spare) {
		in[aliased] = saved;
		hloi_literal_free(spare);
	}
	return st;
}

/* Both engines agree on `m`'s result (see above), else abort. */
static inline void fuzz_compare_engines(hloi_module *m, hloi_context *ctx, hloi_status ref_st,
					const hloi_literal *ref, hloi_status fast_st, const hloi_literal *fast)
{
	if ((ref_st == HLOI_OK) != (fast_st == HLOI_OK)) {
		if (fuzz_limit_status(ref_st) || fuzz_limit_status(fast_st))
			return;
		fprintf(stderr, "fuzz: the reference engine returned status %d, the fast engine %d\n", (int)ref_st,
			(int)fast_st);
		hloi_context_print_diagnostics(ctx, stderr, HLOI_DIAG_BASENAME);
		abort();
	}
	if (ref_st != HLOI_OK)
		return;
	size_t bad = 0;
	int may_differ = fuzz_order_may_differ(m);
	hloi_status st = hloi_literal_compare(ref, fast, ctx, 1e-3, 1e-3, may_differ ? NULL : stderr, 10, &bad);
	if (st != HLOI_OK) {
		fprintf(stderr, "fuzz: the engines' results cannot be compared (status %d)\n", (int)st);
		hloi_context_print_diagnostics(ctx, stderr, HLOI_DIAG_BASENAME);
		abort();
	}
	if (bad && !may_differ) {
		fprintf(stderr, "fuzz: %zu elements differ between the reference and the fast engine\n", bad);
		abort();
	}
}

/* Checks `m`, makes random inputs, runs both engines and compares them. */
static inline void fuzz_run_module(hloi_module *m, hloi_context *ctx)
{
	hloi_literal **in = NULL;
	size_t nin = 0;
	hloi_literal *ref = NULL, *fast = NULL;

	vmath_enable(0);
	hloi_status st = hloi_module_check(m, ctx, NULL);
	fuzz_check_status(ctx, st, NULL);
	if (st != HLOI_OK || !fuzz_inputs_are_small(m))
		return;
	st = hloi_module_random_inputs(&in, &nin, m, ctx, 42);
	fuzz_check_status(ctx, st, in);
	if (st != HLOI_OK)
		return;
	if (nin != hloi_module_parameter_count(m)) {
		fprintf(stderr, "fuzz: %zu random inputs for %zu parameters\n", nin,
			hloi_module_parameter_count(m));
		abort();
	}
	hloi_status ref_st = fuzz_run_engine(m, ctx, in, nin, HLOI_ENGINE_REFERENCE, &ref);
	if (ref_st == HLOI_OK)
		fuzz_print(ref);
	fuzz_flush(ctx);
	hloi_status fast_st = fuzz_run_engine(m, ctx, in, nin, HLOI_ENGINE_FAST, &fast);
	fuzz_compare_engines(m, ctx, ref_st, ref, fast_st, fast);
	hloi_literal_free(ref);
	hloi_literal_free(fast);
	hloi_literal_array_free(in, nin);
}

#endif
