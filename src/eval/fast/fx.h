/* The fast engine's executor of fused elementwise regions (doc/spec.md §9).
 *
 * A region is a small program over one iteration space, the domain (the
 * dims of its outputs): members computed in order, each from earlier
 * members or from inputs (buffers read through strides in the domain, 0 on
 * broadcast dimensions), some of them written to outputs. The executor
 * walks the domain in the physical order of output 0, a row segment at a
 * time (or, when an input's layout disagrees, in tiles whose strided inputs
 * are gathered first), computes every member of the segment into a
 * per-thread row in L1 and writes only the outputs: intermediates never
 * reach memory. Each member is one scalar op of eval/scalar/scalar.h applied to
 * values of its own type, in the reference engine's order, so the results
 * are bit-identical to the reference engine for any split into threads,
 * rows or tiles.
 *
 *   rows.c   the row kernels: one per (op, element type), from scalar.h
 *   exec.c   the executor: domain, merged dimensions, tiles, threads; and
 *            fast_elementwise (eval/fast/fast.h), a single op as a region
 */
#ifndef HLOI_EVAL_FAST_FX_H
#define HLOI_EVAL_FAST_FX_H

#include <stdint.h>

#include "eval/fast/fast.h"
#include "eval/scalar/unary.h"
#include "ir/ir.h"

#define FX_MAX_ARGS 3
/* Rows of generic (per element) kernels and conversions are processed in
 * pieces of this many elements through a carrier on the stack. */
#define FX_PIECE 64

typedef enum fx_kind {
	FX_KERNEL, /* fn computes the row from its arguments' rows */
	FX_ALIAS,  /* the row is argument 0's row (copy, broadcast, transpose,
		    * bitcast-convert, convert to the same type: the bits as read) */
	FX_IOTA    /* iota_fn writes the index along iota_dim */
} fx_kind;

typedef struct fx_member fx_member;

/* A row kernel: n elements into o (contiguous) from the argument rows a[k],
 * each with element stride s[k] of 0 (one value for the whole row) or 1. */
typedef void (*fx_row_fn)(void *restrict o, const void *const *a, const int64_t *s, int64_t n,
			  const fx_member *m);
/* An iota row: the values start, start + step, ... (step 0 or 1). */
typedef void (*fx_iota_fn)(void *restrict o, int64_t start, int64_t step, int64_t n);

struct fx_member {
	fx_kind kind;
	fx_row_fn fn;              /* FX_KERNEL */
	fx_iota_fn iota;           /* FX_IOTA */
	int iota_dim;              /* FX_IOTA: the domain dimension it counts */
	int nargs;
	int arg[FX_MAX_ARGS];      /* >= 0: an earlier member; < 0: input -1 - arg */
	int w;                     /* element bytes of its result */
	etype type;                /* its result type */
	etype from;                /* the type of argument 0 (convert, compare) */
	cmp_direction dir;         /* compare */
	cmp_type cmp;              /* compare */
	int slot;                  /* row buffer of its result, -1 for none */
	int out;                   /* the output it is, or -1 */
	const instr *in;           /* the instruction (the generic kernel reads it) */
	ew_row_fn unary;           /* the unary family's kernel (fast/unary.c) */
	ew_params prm;             /* and its parameters */
};

/* A buffer the region reads: element strides per domain dimension (logical
 * numbering, 0 where it is broadcast). */
typedef struct fx_input {
	const char *base;
	int w;
	int64_t st[HLOI_MAX_RANK];
} fx_input;

/* A buffer the region writes (a member's value at every domain element). */
typedef struct fx_output {
	char *base;
	int w;
	int64_t st[HLOI_MAX_RANK];
	int member;
	int64_t bytes;             /* its buffer's size (streaming stores from FAST_STREAM_BYTES) */
} fx_output;

typedef struct fx_region {
	int rank;
	int64_t dims[HLOI_MAX_RANK];
	int64_t order[HLOI_MAX_RANK]; /* the domain's physical order, minor to major (output 0's) */
	int nin;
	fx_input *in;
	int nmem;
	const fx_member *mem;
	int nout;
	fx_output *out;
	int nslots;                   /* row buffers the members' slots number */
} fx_region;

/* How the executor walks a region: fx_setup's decisions, and the state
 * fx_run needs (strides in the walk's order, per input how its rows are
 * read, per member whether it writes straight into its output). */
typedef struct fx_exec {
	const fx_region *r;
	int rank;                     /* merged dimensions of the walk */
	int64_t n[HLOI_MAX_RANK];     /* their sizes, innermost first */
	int tiled;                    /* dims 0 and 1 in tiles of block x block1 */
	int64_t block, block1;
	int64_t chunk;                /* elements per row segment */
	int ngathered, nstrided;      /* inputs gathered per tile / copied row by row */
	int nstreamed;                /* outputs written with non-temporal stores */
	int inplace;                  /* an output shares its buffer with an input */
	int threads;
	int64_t units;                /* row segments or tiles, split between threads */
	int64_t scratch_bytes;        /* per thread: rows, tiles */
	int64_t wslot;                /* bytes per element of a row buffer */
	int64_t min_per_thread;
	int prefetch;
	/* arrays (one allocation, fx_exec_free) */
	int64_t (*ist)[HLOI_MAX_RANK]; /* per input: strides in the walk's order */
	int64_t (*ost)[HLOI_MAX_RANK]; /* per output */
	int8_t *mode;                  /* per input: 0 direct, 1 gathered, 2 strided copy */
	int8_t *stream;                /* per output */
	int8_t *direct;                /* per member: computes into its output's row */
	int8_t *iota_at;               /* per member: the walk's dimension of its iota_dim, -1 none */
	int64_t *row_off;              /* per input: scratch offset of its row or tile */
	int64_t slots_off, ptrs_off;   /* scratch offsets of the row buffers, the row pointers */
	int8_t wdim[HLOI_MAX_RANK];    /* runs (fx_runs_setup): the domain dimension of each walk dimension */
	void *mem;
} fx_exec;

/* --- row kernels (rows.c) ---------------------------------------------------- */

fx_row_fn fx_binary_row(opcode op, etype t);
fx_row_fn fx_compare_row(etype t);
fx_row_fn fx_select_row(int width);
/* Conversions between any two evaluated types (NULL otherwise). */
fx_row_fn fx_convert_row(etype to, etype from);
fx_iota_fn fx_iota_row(etype t);
/* Any op the reference engine's ref_elementwise evaluates, element by
 * element on the row (the fallback for ops without a kernel of their own). */
void fx_generic_row(void *restrict o, const void *const *a, const int64_t *s, int64_t n, const fx_member *m);

/* Moving bits (never values, so NaN payloads survive). */
void fx_copy_row(char *dst, const char *src, int64_t n, int w, int stream);
void fx_fill_row(char *dst, const char *val, int64_t n, int w);
void fx_scatter_row(char *dst, int64_t dst_stride, const char *src, int64_t src_stride, int64_t n, int w);
/* dst[j * ld + i] = src[i * s0 + j * s1] for i < ni, j < nj. */
void fx_gather(char *dst, const char *src, int w, int64_t ni, int64_t nj, int64_t s0, int64_t s1, int64_t ld);
void fx_stream_fence(void);
int fx_can_stream(void);

/* --- the executor (exec.c) ------------------------------------------------------ */

/* Plans the walk of region r with up to `threads` threads (0: the
 * machine's cores) and `tuning` (may be NULL). Returns 0; 1 when an output
 * shares its buffer with an input read at other positions than it is
 * written (the caller then computes into a buffer of its own); -1 when out
 * of memory. Free x with fx_exec_free in every case. */
int fx_setup(fx_exec *x, const fx_region *r, int threads, const fast_tuning *tuning);
/* Runs the region as planned: x->threads threads, each with
 * x->scratch_bytes of scratch. Nonzero when that scratch cannot be
 * allocated (nothing was written then). */
int fx_run(const fx_exec *x);
void fx_exec_free(fx_exec *x);

/* A region whose last member is read by a reduction (fast/reduce.c)
 * rather than written: it is computed a run at a time where the
 * reduction reads, and never materialised (XLA's input fusion). The
 * member has out -1; the region's outputs are the other members it
 * writes on the way. fx_runs_setup plans runs along domain dimension
 * `dim` (rows of at most x->chunk elements, x->scratch_bytes of scratch
 * per thread); 0, or -1 when out of memory (free x in every case). */
int fx_runs_setup(fx_exec *x, const fx_region *r, int dim, const fast_tuning *tuning);
/* Computes the run of n <= x->chunk elements from the domain index idx
 * along x's dimension, in `scratch` (x->scratch_bytes, the calling
 * thread's), writes the region's outputs there, and returns the last
 * member's row (*stride: 0, one value for the whole run, or 1). */
const char *fx_run_at(const fx_exec *x, char *scratch, const int64_t *idx, int64_t n, int64_t *stride);
/* The row kernel of an elementwise instruction as a member (kind, fn, types;
 * the caller sets args, slot and out). `generic` forces the reference
 * element loop (tests). Nonzero when the fast engine has none. */
int fx_member_init(fx_member *m, const instr *in, int generic);
/* Operand k of `in` read in the domain of in's result: map[j] = the result
 * dimension of operand dimension j. Nonzero when it is not an elementwise
 * read (an operand that is not an array, a dimension map missing). */
int fx_operand_map(const instr *in, int k, int8_t *map);
/* Strides in a domain of `rank` dims for a buffer of shape s read through
 * map (0 where broadcast or of size 1). Nonzero when a dimension of s is
 * neither 1 nor the domain's. */
int fx_input_strides(const shape *s, const int8_t *map, int rank, const int64_t *dims, int64_t *st);
/* The machine's cores (at most the executor's thread limit). */
int fx_machine_threads(void);

#endif
