/* The engine's state, shared by every role of src/eval/ from base/ up:
 * the engine of a run (budget, limits, plans, participants, feeds), the
 * frame of a computation being evaluated, and the values it holds
 * (base/values.c). The role map of src/eval/ is in eval/eval.h.
 *
 * The driver (eval/run.c) evaluates computations; the roles below it reach
 * it only through the engine's `computation` hook (eval_computation
 * below), which the driver sets when it makes an engine.
 */
#ifndef HLOI_EVAL_ENGINE_H
#define HLOI_EVAL_ENGINE_H

#include <stdint.h>

#include "eval/base/limits.h"
#include "eval/fast/fast.h"
#include "hloi.h"
#include "ir/ir.h"

/* Calls nested deeper than this are refused (the checker rejects recursion,
 * so only very deep chains of computations reach it). */
#define EVAL_MAX_DEPTH 64

/* Freed arrays an engine keeps for reuse at most (values.c). */
#define EVAL_POOL_MAX 1024

/* The state of one rng-get-and-update-state or rng instruction in a run
 * (eval/kernels/rng.c). */
typedef struct eval_rng_state {
	const instr *in;
	uint64_t lo, hi;     /* the 128-bit state, low word first */
} eval_rng_state;

/* The infeed queue and the callbacks of a run (hloi_run_options version
 * 4), with the values taken and given so far (eval/runtime/feeds.c). */
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

typedef struct engine engine;

/* Evaluates comp on args: the driver's evaluation of a computation (see
 * eval_computation). */
typedef hloi_status (*eval_computation_fn)(engine *e, const computation *comp, hloi_literal *const *args,
					   hloi_literal *dest, hloi_literal **out, int *out_owned);

struct engine {
	module *m;
	hloi_context *ctx;
	uint64_t budget;     /* bytes the engine may hold at once */
	uint64_t live;       /* bytes it holds now */
	int fast;            /* try the fast engine first */
	int threads;
	int depth;           /* computations being evaluated */
	/* freed arrays kept for the next values of their sizes, oldest
	 * first; counted in `live` (values.c) */
	hloi_literal *pool[EVAL_POOL_MAX];
	int npool;
	/* arrays the module's previous run kept (value_pool_take), not
	 * counted in `live` until a value takes one */
	hloi_literal *kept[EVAL_POOL_MAX];
	int nkept;
	uint64_t kept_bytes;
	uint64_t peak;       /* the most `live` has been */
	const fast_tuning *tuning; /* the fast engine's sizes (NULL: defaults) */
	struct eval_plan **plans; /* plans of the computations run so far */
	int nplans, cap_plans;
	/* the same plans by computation, open addressing (run.c's plan_for):
	 * a loop body's plan is found in one probe, whatever the module's
	 * number of computations */
	int *plan_index;          /* 0: empty, else 1 + a place in plans */
	int index_bits;
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
	eval_feeds feeds;    /* infeed and outfeed (runtime/feeds.c) */
	eval_computation_fn computation; /* the driver's (run.c), set with the engine */
	struct hloi_profile *prof;        /* hloi_run_options.profile, or NULL */
	struct prof_shard *prof_shard;    /* this participant's part of it */
	uint64_t prof_child;              /* ns the steps of called computations took
					   * (the caller's self time leaves them out) */
	int prof_hold;                    /* inside a per-element application:
					   * its steps are the caller's time */
	int prof_depth;                   /* computations being profiled, nested */
	int64_t loop_trips;               /* body runs of the while loop that ended last */
	/* probes (hloi_run_options version 7; run.c): the callback, the names
	 * it selects (NULL: every instruction), and per plan (plans[i]) the
	 * instructions probed and the values each gave so far */
	hloi_probe_fn probe;
	void *probe_data;
	const char *const *probe_names;
	size_t nprobe_names;
	struct eval_probed *probed;       /* cap_plans of them, or NULL */
};

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

/* --- the driver, through the engine ---------------------------------------- */

/* Evaluates comp on args. The root's value comes back in *out: owned by the
 * caller when *out_owned, else borrowed (an argument, a constant, or dest).
 * With dest, the root's result is written into dest and *out is dest.
 * Calls, loops, conditionals and per-element applications evaluate their
 * computations so; the driver does the work (e->computation). */
static inline hloi_status eval_computation(engine *e, const computation *comp, hloi_literal *const *args,
					   hloi_literal *dest, hloi_literal **out, int *out_owned)
{
	return e->computation(e, comp, args, dest, out, out_owned);
}

/* --- values (values.c) ------------------------------------------------------ */

/* Buffer bytes of a value (tuples: the sum over their elements); -1 on overflow. */
int64_t value_bytes(const shape *s);
/* Reports an allocation failure of `bytes`; returns HLOI_ENOMEM. */
hloi_status value_oom(engine *e, int64_t bytes);
/* A new value of shape `s` within the budget (a pooled array when one has
 * the size asked for). Its elements are unset; padding holds the padding
 * value. */
hloi_status value_new(engine *e, const shape *s, hloi_literal **out);
/* Frees a value value_new made, or keeps it in the pool. */
void value_drop(engine *e, hloi_literal *lit);
/* Frees the pooled arrays (at the end of a run, or to make room). */
void value_free_spare(engine *e);
/* At the start of a run: takes the arrays the module's last run kept. At
 * its end: keeps the pooled arrays in the module for the next run (at most
 * EVAL_POOL_MAX, at most the run's peak of values in bytes) and frees the
 * rest. */
void value_pool_take(engine *e);
void value_pool_keep(engine *e);
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

#endif
