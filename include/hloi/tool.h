/* hloi/tool.h — the calls the hloi command-line tool uses beside the
 * embedding API of hloi.h: the process's allocation ceiling and what an
 * allocation failure left behind, XLA's run_hlo_module literal files, and
 * the evaluation plan as text.
 *
 * Less stable than hloi.h: these calls follow what the command line needs
 * and may change or go between versions without notice. An embedding
 * program should need hloi.h alone; a tool built on hloi (a test driver, a
 * benchmark harness, another front end) may include this header too. The
 * conventions of hloi.h (statuses, contexts, ownership) hold here.
 */
#ifndef HLOI_TOOL_H
#define HLOI_TOOL_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "../hloi.h"

#ifdef __cplusplus
extern "C" {
#endif

/* --- Memory ceiling and allocation failures ------------------------------ */

/* The size in bytes of the last allocation hloi could not get (0 if none
 * failed): what to report when HLOI_ENOMEM comes back without a diagnostic.
 * For tests, HLOI_ALLOC_FAIL_AFTER=N in the environment makes every
 * allocation after the first N fail. */
HLOI_API size_t hloi_alloc_last_failure(void);

/* A ceiling on everything hloi allocates in this process (the program's
 * text and IR, inputs, values, scratch): an allocation that would take the
 * bytes hloi holds past `bytes` fails as out of memory (HLOI_ENOMEM);
 * 0 (the default) sets none. The command line sets it to the memory budget
 * (--max-memory, else half of physical memory) plus HLOI_MEMORY_SLACK. */
HLOI_API void hloi_set_memory_ceiling(uint64_t bytes);
/* The budget a run takes when its options give none: half of physical
 * memory. */
HLOI_API uint64_t hloi_default_memory_budget(void);
/* The ceiling, 0 if none. */
HLOI_API uint64_t hloi_memory_ceiling(void);
/* The bytes hloi holds now (its heap blocks, as malloc sizes them). */
HLOI_API uint64_t hloi_memory_held(void);
/* Whether the last allocation that failed was refused by the ceiling, and
 * what hloi held then. */
HLOI_API int hloi_alloc_failure_was_ceiling(void);
HLOI_API uint64_t hloi_alloc_failure_held(void);
/* What the command line adds to the budget for the ceiling: hloi's own
 * bookkeeping (IR, diagnostics, tiles) beside the buffers the budget
 * counts. */
#define HLOI_MEMORY_SLACK ((uint64_t)64 << 20)

/* --- XLA's run_hlo_module literals ---------------------------------------- */

/* Reads the arguments recorded in a RunHloModuleLiterals file (XLA's
 * xla/tools/run_hlo_module.proto; run_hlo_module --output_literals_file
 * writes one): binary, or protobuf text for a `.pbtxt`/`.txt` name or
 * content that is not binary; those of its first iteration. A file holding
 * a bare RunHloModuleIterationLiterals is read too (as run_hlo_module
 * does). *out gets *count literals; free with hloi_literal_array_free.
 * Errors: HLOI_EINVAL (cannot open), HLOI_EPARSE, HLOI_EIO, HLOI_ENOMEM. */
HLOI_API hloi_status hloi_run_literals_load(hloi_literal ***out, size_t *count, hloi_context *ctx,
					    const char *path);
/* Writes a RunHloModuleLiterals with one iteration: `args`, `result` and
 * `reference_result` (may be NULL), as protobuf text when `path` ends in
 * `.pbtxt`, else binary; like hloi_literal_save, a failed write leaves no
 * partial file. Errors: HLOI_EINVAL, HLOI_EIO, HLOI_ENOMEM. */
HLOI_API hloi_status hloi_run_literals_save(hloi_context *ctx, const char *path, hloi_literal *const *args,
					    size_t nargs, const hloi_literal *result,
					    const hloi_literal *reference_result);

/* --- Comparing values ------------------------------------------------------ */

/* hloi_literal_compare without the report, describing instead the mismatch
 * of largest absolute error (the first one for integers and pred) in
 * `worst` (`size` bytes, NUL-terminated, "" when none):
 * `index (1,2): expected 1.5, got 1.75 (error 0.25)`. */
HLOI_API hloi_status hloi_literal_compare_worst(const hloi_literal *expected, const hloi_literal *actual,
						hloi_context *ctx, double abs_tol, double rel_tol,
						size_t *mismatches, char *worst, size_t size);

/* --- Modules -------------------------------------------------------------- */

/* 1 when every instruction's result shape is known without a check (the
 * text wrote them all, or the module was read from a proto), else 0:
 * writing a proto then needs no shapes-only check first. */
HLOI_API int hloi_module_shapes_written(const hloi_module *m);

/* Writes the evaluation plan of the checked module as text (what `hloi
 * plan` prints): for its entry computation and each computation it calls,
 * the steps in order; each fused region with the instructions it computes
 * in one pass, the values it reads (and how: broadcast, another layout),
 * the values it writes (a new buffer, or in place over a dead input) and
 * how the engine walks it (rows or tiles, threads, scratch per thread);
 * then the planned peak memory. `opts` gives the engine (the reference
 * engine fuses nothing) and the threads (NULL: the defaults). Errors:
 * HLOI_EINVAL (not checked), HLOI_EUNSUPPORTED (`?` dimensions no run
 * has sized yet), HLOI_ENOMEM, HLOI_EIO (writing failed). */
HLOI_API hloi_status hloi_module_plan_print(const hloi_module *m, hloi_context *ctx,
					    const hloi_run_options *opts, FILE *f);

/* The planned peak memory of one run of the checked module, in bytes: its
 * parameters, the most its values hold at once (the result included) and
 * the engine's scratch (rows and tiles, per thread). Errors as above. */
HLOI_API hloi_status hloi_module_plan_peak_bytes(const hloi_module *m, hloi_context *ctx,
						 const hloi_run_options *opts, uint64_t *out);

/* --- Costs, profiles and the machine's limits ------------------------------ */

/* A machine's limits: the GEMM speed (GFLOP/s, OpenBLAS's sgemm) and the
 * memory bandwidth (GB/s, a plain C loop adding two arrays into a third)
 * on some number of threads. 0: unknown. */
typedef struct hloi_machine {
	double gflops;
	double gbps;
} hloi_machine;

/* Measures both on `threads` threads (0: the cores); takes a second or
 * two. Returns 0 when both were measured, 1 when only the bandwidth was
 * (OpenBLAS missing: `why` says so), -1 when neither (out of memory). */
HLOI_API int hloi_machine_calibrate(hloi_machine *out, int threads, char *why, size_t nwhy);

/* How a cost or profile report prints: JSON or text, the slowest `top`
 * steps (0: all), the machine's limits (NULL: unknown) and where they
 * came from (a file name, "flags"; NULL: "given"). */
typedef struct hloi_report_options {
	int json;
	int top;
	const hloi_machine *machine;
	const char *machine_from;
} hloi_report_options;

/* What `hloi plan --cost` prints: for each computation the checked module
 * runs (a while body once), the FLOPs, transcendentals and bytes of each
 * step of its plan (a fused region as one step) and its floor on the
 * machine; then the module's totals and its floor: dot and convolution
 * FLOPs at the GEMM speed, or the parameters' and result's bytes at the
 * bandwidth, whichever is longer (doc/performance.md "Cost and floor").
 * Errors as hloi_module_plan_print. */
HLOI_API hloi_status hloi_module_cost_print(const hloi_module *m, hloi_context *ctx, const hloi_run_options *opts,
					    const hloi_report_options *r, FILE *f);

/* The runs a profile holds. */
HLOI_API uint64_t hloi_profile_runs(const hloi_profile *p);
/* Prints what the profile's runs of m measured (doc/performance.md
 * "Profiles"): each step's time per run, share, calls, rates and their
 * fraction of the machine's limits, slowest first; totals by opcode; the
 * module's floor. HLOI_EINVAL when it holds no run; HLOI_ENOMEM; HLOI_EIO. */
HLOI_API hloi_status hloi_profile_print(const hloi_profile *p, const hloi_module *m, const hloi_report_options *r,
					FILE *f);
/* Writes the profile as a Chrome trace-event JSON file, which Perfetto
 * and chrome://tracing open: a process per participant, each step a
 * complete event. HLOI_EINVAL when made without HLOI_PROFILE_TRACE;
 * HLOI_EIO. */
HLOI_API hloi_status hloi_profile_write_trace(const hloi_profile *p, FILE *f);

/* --- Participants as MPI ranks (doc/mpi.md) -------------------------------- */

/* Whether the environment says this process is one of several ranks of an
 * MPI job (mpirun sets OMPI_COMM_WORLD_SIZE, or PMI_SIZE). */
HLOI_API int hloi_mpi_launched(void);
/* Opens Open MPI (libmpi.so.40, with dlopen) and initialises it: from then
 * on hloi_module_run_participants runs on this rank only the participants
 * it owns (np / ranks of them, in order: rank r the participants r * np /
 * ranks onwards), their collectives and send/recv going over MPI, and
 * leaves out[p] NULL for the others. HLOI_EUNSUPPORTED (no Open MPI,
 * MPICH) with a message in ctx. */
HLOI_API hloi_status hloi_mpi_start(hloi_context *ctx);
/* This rank and the job's ranks: 0 and 1 when MPI is not started. */
HLOI_API int hloi_mpi_rank(void);
HLOI_API int hloi_mpi_size(void);
/* Whether this rank runs participant p of np (always, without MPI). */
HLOI_API int hloi_mpi_owns(size_t p, size_t np);
/* After a run: every participant's result on rank 0 (out[p] made there
 * for the participants of other ranks, of out[0]'s shape); the other ranks
 * send theirs. Every rank calls it. */
HLOI_API hloi_status hloi_mpi_gather(hloi_context *ctx, hloi_literal **out, size_t np, const volatile int *stop);
/* After a run: waits until every participant on every rank has ended it
 * (each rank's participants tell the others when they end). */
HLOI_API hloi_status hloi_mpi_wait_run(hloi_context *ctx, const volatile int *stop);
/* Ends every rank of the job with exit code `code` (MPI_Abort); returns
 * only when MPI is not started. */
HLOI_API void hloi_mpi_abort(int code);
/* At the end: waits until every rank has finished, then finalizes MPI. */
HLOI_API hloi_status hloi_mpi_finish(hloi_context *ctx, const volatile int *stop);

#ifdef __cplusplus
}
#endif

#endif
