/* The fast engine's reductions by a known monoid (add, multiply, maximum,
 * minimum, and, or; reduce.c recognises the computation).
 *
 * reduce: the input's dimensions in its physical order, size-1 ones
 * dropped, neighbours of one kind (reduced or kept) merged when contiguous.
 * When the innermost is kept ("columns"), a strip of it (up to
 * REDUCE_STRIP_MAX elements: whole rows, read sequentially) accumulates
 * the reduced rows, eight at a time combined as a pairwise tree, then
 * added to the strip in row order; when there are fewer strips than
 * threads could share, the rows are cut into fixed blocks whose partial
 * strips are combined in block order. When the innermost is reduced
 * ("rows"), each result element folds its contiguous runs with four sets
 * of eight partial accumulators; a reduction of one run to one element
 * cuts it into fixed blocks combined in order. Blocks depend only on the
 * shapes, so results never depend on the number of threads.
 *
 * Float add accumulates in double (as XLA's evaluator does), rounded once to
 * the result type; the other ops compute in the element type with
 * eval/scalar/scalar.h's semantics. Integer, pred, max and min results equal the
 * reference engine's (max and min up to which NaN comes out when several
 * are reduced); float add, combined in another order, agrees within the
 * tolerance doc/semantics.md documents. Float multiply keeps XLA's order
 * ("ordered": a row at a time into the strip, a run element by element,
 * no blocks), because a product in another order overflows or underflows
 * elsewhere (inf * 0 = NaN where the reference gives 0): its results are
 * the reference engine's bit for bit.
 *
 * reduce-window: by max, min, and, or over at most two windowed
 * dimensions (no base dilation, the input's layout for the result), two
 * separable passes per thread through a ring of slices in cache (see
 * "separable passes" below; a NaN result recomputed in XLA's order).
 * Otherwise strips along the result's innermost dimension; each window
 * position (in row-major order) combines its valid range of the strip at
 * once. Combined in XLA's order in the element type. Both bit for bit the
 * reference engine's values. */
#include <stdatomic.h>
#include <string.h>

#include "core/half.h"
#include "core/index.h"
#include "eval/fast/fast.h"
#include "eval/fast/fx.h"
#include "eval/fast/reduce.h"
#include "eval/scalar/clones.h"
#include "eval/scalar/scalar.h"
#include "util/alloc.h"
#include "util/checked.h"

/* Fewer input elements per thread do not get another thread. */
#define RF_MIN_PER_THREAD ((int64_t)1 << 16)
/* A reduction to one element: blocks of its run reduced in parallel. */
#define RF_RUN_BLOCK ((int64_t)1 << 15)
/* Columns: fewer strips than this share their rows out in blocks of at
 * least RF_BLOCK_ROWS rows, at most RF_MAX_BLOCKS of them. */
#define RF_FEW_UNITS 8
#define RF_BLOCK_ROWS 256
#define RF_MAX_BLOCKS 16
/* Contiguous loops run in multiples of this many elements, then a tail
 * (gcc -O2's very cheap cost model vectorises them so). */
#define RF_VEC 32
#define RF_LANES 8

/* --- kernels per (op, element type) --------------------------------------------- */

/* The loops are compiled for several instruction sets (eval/scalar/clones.h):
 * the conversions of float add to double run at twice the rate with AVX2
 * (measured 9.4 -> 4.3 ms for a column sum of f32 4096x4096 on one core; a
 * row fold 22 -> 2.5 ms). */
#define RF_CLONES HLOI_CLONES

typedef struct rf_kernels {
	int asize;  /* bytes of an accumulator */
	/* acc[0..n) = init (one element of the input type) */
	void (*init)(void *acc, const void *init, int64_t n);
	/* acc[j] = x[j * sx], converted to the accumulator */
	void (*load)(void *acc, const void *x, int64_t n, int64_t sx);
	/* acc[j] = op(acc[j], x[j * sx]) */
	void (*col)(void *acc, const void *x, int64_t n, int64_t sx);
	/* acc[j] = op(acc[j], (r0[j] op r1[j]) op ... op (r6[j] op r7[j])), a
	 * pairwise tree of 8 contiguous rows */
	void (*col8)(void *acc, const void *const *rows, int64_t n);
	/* acc[j] = op(acc[j], b[j]), b accumulators */
	void (*merge)(void *acc, const void *b, int64_t n);
	/* *acc = op(*acc, x[0] op ... op x[(n - 1) * sx]), in partial lanes */
	void (*row)(void *acc, const void *x, int64_t n, int64_t sx);
	/* *acc = op(...op(op(*acc, x[0]), x[sx])..., x[(n - 1) * sx]), in order */
	void (*rowseq)(void *acc, const void *x, int64_t n, int64_t sx);
	/* out[j * so] = acc[j] */
	void (*store)(void *out, int64_t so, const void *acc, int64_t n);
} rf_kernels;

#define RF_DEF(NAME, T_, A_, LOAD, COMB, STORE)                                                         \
	static void rf_init_##NAME(void *vacc, const void *vinit, int64_t n)                            \
	{                                                                                               \
		A_ *acc = vacc;                                                                         \
		T_ x;                                                                                   \
		memcpy(&x, vinit, sizeof x);                                                            \
		A_ a = LOAD(x);                                                                         \
		for (int64_t j = 0; j < n; j++)                                                         \
			acc[j] = a;                                                                     \
	}                                                                                               \
	static void rf_load_##NAME(void *restrict vacc, const void *restrict vx, int64_t n, int64_t sx) \
	{                                                                                               \
		A_ *restrict acc = vacc;                                                                \
		const T_ *restrict x = vx;                                                              \
		for (int64_t j = 0; j < n; j++)                                                         \
			acc[j] = LOAD(x[j * sx]);                                                       \
	}                                                                                               \
	RF_CLONES static void rf_col_##NAME(void *restrict vacc, const void *restrict vx, int64_t n,    \
					    int64_t sx)                                                 \
	{                                                                                               \
		A_ *restrict acc = vacc;                                                                \
		const T_ *restrict x = vx;                                                              \
		if (sx == 1) {                                                                          \
			int64_t nv = n & ~(int64_t)(RF_VEC - 1), j = 0;                                 \
			for (; j < nv; j++)                                                             \
				acc[j] = COMB(acc[j], LOAD(x[j]));                                      \
			for (; j < n; j++)                                                              \
				acc[j] = COMB(acc[j], LOAD(x[j]));                                      \
		} else {                                                                                \
			for (int64_t j = 0; j < n; j++)                                                 \
				acc[j] = COMB(acc[j], LOAD(x[j * sx]));                                 \
		}                                                                                       \
	}                                                                                               \
	RF_CLONES static void rf_col8_##NAME(void *restrict vacc, const void *const *vr, int64_t n)     \
	{                                                                                               \
		A_ *restrict acc = vacc;                                                                \
		const T_ *restrict r0 = vr[0], *restrict r1 = vr[1], *restrict r2 = vr[2];              \
		const T_ *restrict r3 = vr[3], *restrict r4 = vr[4], *restrict r5 = vr[5];              \
		const T_ *restrict r6 = vr[6], *restrict r7 = vr[7];                                    \
		int64_t nv = n & ~(int64_t)(RF_VEC - 1), j = 0;                                         \
		for (; j < nv; j++)                                                                     \
			acc[j] = COMB(acc[j], COMB(COMB(COMB(LOAD(r0[j]), LOAD(r1[j])), COMB(LOAD(r2[j]), LOAD(r3[j]))), \
						   COMB(COMB(LOAD(r4[j]), LOAD(r5[j])), COMB(LOAD(r6[j]), LOAD(r7[j]))))); \
		for (; j < n; j++)                                                                      \
			acc[j] = COMB(acc[j], COMB(COMB(COMB(LOAD(r0[j]), LOAD(r1[j])), COMB(LOAD(r2[j]), LOAD(r3[j]))), \
						   COMB(COMB(LOAD(r4[j]), LOAD(r5[j])), COMB(LOAD(r6[j]), LOAD(r7[j]))))); \
	}                                                                                               \
	RF_CLONES static void rf_merge_##NAME(void *restrict vacc, const void *restrict vb, int64_t n)  \
	{                                                                                               \
		A_ *restrict acc = vacc;                                                                \
		const A_ *restrict b = vb;                                                              \
		int64_t nv = n & ~(int64_t)(RF_VEC - 1), j = 0;                                         \
		for (; j < nv; j++)                                                                     \
			acc[j] = COMB(acc[j], b[j]);                                                    \
		for (; j < n; j++)                                                                      \
			acc[j] = COMB(acc[j], b[j]);                                                    \
	}                                                                                               \
	RF_CLONES static void rf_row_##NAME(void *vacc, const void *restrict vx, int64_t n, int64_t sx) \
	{                                                                                               \
		A_ *acc = vacc;                                                                         \
		const T_ *restrict x = vx;                                                              \
		int64_t i = 0;                                                                          \
		if (sx == 1 && n >= 8 * RF_LANES) {                                                     \
			/* four independent sets of lanes: no chain through memory */                    \
			A_ l0[RF_LANES], l1[RF_LANES], l2[RF_LANES], l3[RF_LANES];                      \
			for (int k = 0; k < RF_LANES; k++) {                                            \
				l0[k] = LOAD(x[k]);                                                     \
				l1[k] = LOAD(x[RF_LANES + k]);                                          \
				l2[k] = LOAD(x[2 * RF_LANES + k]);                                      \
				l3[k] = LOAD(x[3 * RF_LANES + k]);                                      \
			}                                                                               \
			for (i = 4 * RF_LANES; i + 4 * RF_LANES <= n; i += 4 * RF_LANES) {              \
				for (int k = 0; k < RF_LANES; k++)                                      \
					l0[k] = COMB(l0[k], LOAD(x[i + k]));                            \
				for (int k = 0; k < RF_LANES; k++)                                      \
					l1[k] = COMB(l1[k], LOAD(x[i + RF_LANES + k]));                 \
				for (int k = 0; k < RF_LANES; k++)                                      \
					l2[k] = COMB(l2[k], LOAD(x[i + 2 * RF_LANES + k]));             \
				for (int k = 0; k < RF_LANES; k++)                                      \
					l3[k] = COMB(l3[k], LOAD(x[i + 3 * RF_LANES + k]));             \
			}                                                                               \
			for (int k = 0; k < RF_LANES; k++) {                                            \
				l0[k] = COMB(l0[k], l1[k]);                                             \
				l2[k] = COMB(l2[k], l3[k]);                                             \
				l0[k] = COMB(l0[k], l2[k]);                                             \
			}                                                                               \
			for (int w = RF_LANES / 2; w >= 1; w /= 2)                                      \
				for (int k = 0; k < w; k++)                                             \
					l0[k] = COMB(l0[k], l0[k + w]);                                 \
			*acc = COMB(*acc, l0[0]);                                                       \
		}                                                                                       \
		for (; i < n; i++)                                                                      \
			*acc = COMB(*acc, LOAD(x[i * sx]));                                             \
	}                                                                                               \
	static void rf_rowseq_##NAME(void *vacc, const void *restrict vx, int64_t n, int64_t sx)        \
	{                                                                                               \
		A_ a;                                                                                   \
		const T_ *restrict x = vx;                                                              \
		memcpy(&a, vacc, sizeof a);                                                             \
		for (int64_t i = 0; i < n; i++)                                                         \
			a = COMB(a, LOAD(x[i * sx]));                                                   \
		memcpy(vacc, &a, sizeof a);                                                             \
	}                                                                                               \
	static void rf_store_##NAME(void *vout, int64_t so, const void *vacc, int64_t n)                \
	{                                                                                               \
		T_ *out = vout;                                                                         \
		const A_ *acc = vacc;                                                                   \
		for (int64_t j = 0; j < n; j++)                                                         \
			out[j * so] = STORE(acc[j]);                                                    \
	}                                                                                               \
	static const rf_kernels rf_##NAME = { (int)sizeof(A_), rf_init_##NAME, rf_load_##NAME,          \
					      rf_col_##NAME, rf_col8_##NAME, rf_merge_##NAME,           \
					      rf_row_##NAME, rf_rowseq_##NAME, rf_store_##NAME };

/* maximum and minimum of f32 and f64 without branches, so that they
 * vectorise: eval/scalar/scalar.h's semantics exactly (a NaN lhs wins, else a NaN
 * rhs; of two equal values the AND (max) or OR (min) of their bits, which
 * gives max(-0, +0) = +0 and min(-0, +0) = -0; else the larger/smaller). */
#define RF_FMINMAX(NAME, T_, U_, CMP, BITOP)                                    \
	static inline T_ NAME(T_ a, T_ b)                                       \
	{                                                                       \
		U_ ua, ub, uc;                                                  \
		T_ eq;                                                          \
		memcpy(&ua, &a, sizeof a);                                      \
		memcpy(&ub, &b, sizeof b);                                      \
		uc = ua BITOP ub;                                               \
		memcpy(&eq, &uc, sizeof eq);                                    \
		T_ r = a CMP b ? a : b;                                         \
		r = a == b ? eq : r;                                            \
		return a != a ? a : r;                                          \
	}
RF_FMINMAX(rf_fmax_F32, float, uint32_t, >, &)
RF_FMINMAX(rf_fmin_F32, float, uint32_t, <, |)
RF_FMINMAX(rf_fmax_F64, double, uint64_t, >, &)
RF_FMINMAX(rf_fmin_F64, double, uint64_t, <, |)
#define RF_FMAX_F32 rf_fmax_F32
#define RF_FMIN_F32 rf_fmin_F32
#define RF_FMAX_F64 rf_fmax_F64
#define RF_FMIN_F64 rf_fmin_F64
#define RF_FMAX_F16 sc_maximum_F16
#define RF_FMIN_F16 sc_minimum_F16

#define RF_SAME(x) (x)
#define RF_D_F32(x) ((double)(x))
#define RF_D_F64(x) (x)
#define RF_D_F16(x) ((double)f16_to_f32(x))
#define RF_D_BF16(x) ((double)bf16_to_f32(x))
#define RF_S_F32(a) ((float)(a))
#define RF_S_F64(a) (a)
#define RF_S_F16(a) f32_to_f16((float)(a))
#define RF_S_BF16(a) f32_to_bf16((float)(a))
#define RF_DADD(a, b) ((a) + (b))

/* bf16 maximum and minimum with f32 accumulators: widening is exact and
 * keeps the bits (a NaN's payload too), and the f32 result is one operand
 * or the AND/OR of two equal ones, so its top half is the element
 * sc_maximum/sc_minimum return; branch-free on f32 lanes, the rows
 * vectorise (mha_block's bf16 row maxima took 1.5 ms a run through the
 * branches of sc_maximum_BF16). The e- kernels keep accumulators of the
 * element type, for the callers that hand in such buffers. */
static inline uint16_t rf_top_BF16(float f)
{
	uint32_t u;
	memcpy(&u, &f, sizeof u);
	return (uint16_t)(u >> 16);
}
#define RF_MAXMIN_BF16_                                                                     \
	RF_DEF(maximum_BF16, uint16_t, float, bf16_to_f32, rf_fmax_F32, rf_top_BF16)        \
	RF_DEF(minimum_BF16, uint16_t, float, bf16_to_f32, rf_fmin_F32, rf_top_BF16)        \
	RF_DEF(emaximum_BF16, uint16_t, uint16_t, RF_SAME, sc_maximum_BF16, RF_SAME)         \
	RF_DEF(eminimum_BF16, uint16_t, uint16_t, RF_SAME, sc_minimum_BF16, RF_SAME)

#if defined(__GNUC__)
/* The bf16 rows in 16-lane f32 vectors (GCC's and clang's vector
 * extension): gcc -O2 leaves rf_row's lanes of rf_fmax_F32 scalar, with a
 * branch per element. Each lane computes rf_fmax_F32/rf_fmin_F32 with
 * masks; the lanes are then combined pairwise, as rf_row combines its
 * own. */
#define RF_VL 16
typedef float rf_vf __attribute__((vector_size(RF_VL * 4)));
typedef uint32_t rf_vu __attribute__((vector_size(RF_VL * 4)));
typedef uint16_t rf_vh __attribute__((vector_size(RF_VL * 2)));

/* *a = max(*a, *b) (is_max) or min, lane by lane as rf_fmax_F32/rf_fmin_F32 */
static inline __attribute__((always_inline)) void rf_vminmax(rf_vf *a, const rf_vf *b, int is_max)
{
	rf_vf x = *a, y = *b;
	rf_vu ux, uy, r;
	memcpy(&ux, &x, sizeof ux);
	memcpy(&uy, &y, sizeof uy);
	rf_vu pick = (rf_vu)(is_max ? x > y : x < y), eq = (rf_vu)(x == y), nan = (rf_vu)(x != x);
	rf_vu both = is_max ? ux & uy : ux | uy;
	r = (ux & pick) | (uy & ~pick);
	r = (both & eq) | (r & ~eq);
	r = (ux & nan) | (r & ~nan);
	memcpy(a, &r, sizeof r);
}

static inline __attribute__((always_inline)) void rf_vload_BF16(rf_vf *v, const uint16_t *x)
{
	rf_vh h;
	memcpy(&h, x, sizeof h);
	rf_vu u = __builtin_convertvector(h, rf_vu) << 16;
	memcpy(v, &u, sizeof u);
}

#define RF_VROW_BF16(NAME, IS_MAX, COMB)                                                              \
	RF_CLONES static void rf_vrow_##NAME(void *vacc, const void *restrict vx, int64_t n, int64_t sx) \
	{                                                                                               \
		float *acc = vacc;                                                                      \
		const uint16_t *restrict x = vx;                                                        \
		int64_t i = 0;                                                                          \
		if (sx == 1 && n >= 4 * RF_VL) {                                                        \
			rf_vf l0, l1, l2, l3, v;                                                        \
			rf_vload_BF16(&l0, x);                                                          \
			rf_vload_BF16(&l1, x + RF_VL);                                                  \
			rf_vload_BF16(&l2, x + 2 * RF_VL);                                              \
			rf_vload_BF16(&l3, x + 3 * RF_VL);                                              \
			for (i = 4 * RF_VL; i + 4 * RF_VL <= n; i += 4 * RF_VL) {                       \
				rf_vload_BF16(&v, x + i);                                               \
				rf_vminmax(&l0, &v, IS_MAX);                                            \
				rf_vload_BF16(&v, x + i + RF_VL);                                       \
				rf_vminmax(&l1, &v, IS_MAX);                                            \
				rf_vload_BF16(&v, x + i + 2 * RF_VL);                                   \
				rf_vminmax(&l2, &v, IS_MAX);                                            \
				rf_vload_BF16(&v, x + i + 3 * RF_VL);                                   \
				rf_vminmax(&l3, &v, IS_MAX);                                            \
			}                                                                               \
			rf_vminmax(&l0, &l1, IS_MAX);                                                   \
			rf_vminmax(&l2, &l3, IS_MAX);                                                   \
			rf_vminmax(&l0, &l2, IS_MAX);                                                   \
			float f[RF_VL];                                                                 \
			memcpy(f, &l0, sizeof f);                                                       \
			for (int w = RF_VL / 2; w >= 1; w /= 2)                                         \
				for (int k = 0; k < w; k++)                                             \
					f[k] = COMB(f[k], f[k + w]);                                    \
			*acc = COMB(*acc, f[0]);                                                        \
		}                                                                                       \
		for (; i < n; i++)                                                                      \
			*acc = COMB(*acc, bf16_to_f32(x[i * sx]));                                      \
	}
#endif

/* One instance per (op, type): NAME_E with the element type's sc_<op>_E. */
#define RF_OP(OPN, E, T_) RF_DEF(OPN##_##E, T_, T_, RF_SAME, sc_##OPN##_##E, RF_SAME)
#define RF_KIND_INT(E, T_)                                                              \
	RF_OP(add, E, T_) RF_OP(multiply, E, T_) RF_OP(maximum, E, T_) RF_OP(minimum, E, T_) \
	RF_OP(and, E, T_) RF_OP(or, E, T_)
#define RF_KIND_FLOAT(E, T_)                                                            \
	RF_OP(add, E, T_) RF_OP(multiply, E, T_) RF_MAXMIN_##E(E, T_)                   \
	RF_DEF(dadd_##E, T_, double, RF_D_##E, RF_DADD, RF_S_##E)
#define RF_MAXMIN_SAME(E, T_)                                                           \
	RF_DEF(maximum_##E, T_, T_, RF_SAME, RF_FMAX_##E, RF_SAME)                      \
	RF_DEF(minimum_##E, T_, T_, RF_SAME, RF_FMIN_##E, RF_SAME)
#define RF_MAXMIN_F16(E, T_) RF_MAXMIN_SAME(E, T_)
#define RF_MAXMIN_F32(E, T_) RF_MAXMIN_SAME(E, T_)
#define RF_MAXMIN_F64(E, T_) RF_MAXMIN_SAME(E, T_)
#define RF_MAXMIN_BF16(E, T_) RF_MAXMIN_BF16_
/* The types rf_lookup covers; the others (sub-byte integers, the f8/f4
 * family, complex) take the generic walk. */
RF_KIND_INT(PRED, uint8_t)
RF_KIND_INT(S8, int8_t)
RF_KIND_INT(S16, int16_t)
RF_KIND_INT(S32, int32_t)
RF_KIND_INT(S64, int64_t)
RF_KIND_INT(U8, uint8_t)
RF_KIND_INT(U16, uint16_t)
RF_KIND_INT(U32, uint32_t)
RF_KIND_INT(U64, uint64_t)
RF_KIND_FLOAT(F16, uint16_t)
RF_KIND_FLOAT(BF16, uint16_t)
#if defined(__GNUC__)
RF_VROW_BF16(maximum_BF16, 1, rf_fmax_F32)
RF_VROW_BF16(minimum_BF16, 0, rf_fmin_F32)
static const rf_kernels rf_vmaximum_BF16 = { (int)sizeof(float), rf_init_maximum_BF16, rf_load_maximum_BF16,
					     rf_col_maximum_BF16, rf_col8_maximum_BF16, rf_merge_maximum_BF16,
					     rf_vrow_maximum_BF16, rf_rowseq_maximum_BF16, rf_store_maximum_BF16 };
static const rf_kernels rf_vminimum_BF16 = { (int)sizeof(float), rf_init_minimum_BF16, rf_load_minimum_BF16,
					     rf_col_minimum_BF16, rf_col8_minimum_BF16, rf_merge_minimum_BF16,
					     rf_vrow_minimum_BF16, rf_rowseq_minimum_BF16, rf_store_minimum_BF16 };
#endif
RF_KIND_FLOAT(F32, float)
RF_KIND_FLOAT(F64, double)

/* The kernels of op on type t: `exact` asks for XLA's per-step semantics in
 * the element type (reduce-window), else reduce's (float add in double).
 * NULL when not covered. */
static const rf_kernels *rf_lookup(opcode op, etype t, int exact)
{
/* op-specific: the monoid kernels above (an optimisation) */
#define RF_CASE_INT(E)                                      \
	case ET_##E:                                        \
		switch (op) {                               \
		case OP_ADD: return &rf_add_##E;            \
		case OP_MULTIPLY: return &rf_multiply_##E;  \
		case OP_MAXIMUM: return &rf_maximum_##E;    \
		case OP_MINIMUM: return &rf_minimum_##E;    \
		case OP_AND: return &rf_and_##E;            \
		case OP_OR: return &rf_or_##E;              \
		default: return NULL;                       \
		}
#define RF_CASE_FLOAT(E)                                                       \
	case ET_##E:                                                           \
		switch (op) {                                                  \
		case OP_ADD: return exact ? &rf_add_##E : &rf_dadd_##E;        \
		case OP_MULTIPLY: return &rf_multiply_##E;                     \
		case OP_MAXIMUM: return &rf_maximum_##E;                       \
		case OP_MINIMUM: return &rf_minimum_##E;                       \
		default: return NULL;                                          \
		}
	/* accumulators of the element type (fast_combine, reduce-window) */
	if (exact && t == ET_BF16 && (op == OP_MAXIMUM || op == OP_MINIMUM))
		return op == OP_MAXIMUM ? &rf_emaximum_BF16 : &rf_eminimum_BF16;
#if defined(__GNUC__)
	if (t == ET_BF16 && (op == OP_MAXIMUM || op == OP_MINIMUM))
		return op == OP_MAXIMUM ? &rf_vmaximum_BF16 : &rf_vminimum_BF16;
#endif
	switch (t) {
	RF_CASE_INT(PRED)
	RF_CASE_INT(S8)
	RF_CASE_INT(S16)
	RF_CASE_INT(S32)
	RF_CASE_INT(S64)
	RF_CASE_INT(U8)
	RF_CASE_INT(U16)
	RF_CASE_INT(U32)
	RF_CASE_INT(U64)
	RF_CASE_FLOAT(F16)
	RF_CASE_FLOAT(BF16)
	RF_CASE_FLOAT(F32)
	RF_CASE_FLOAT(F64)
	default:
		return NULL;
	}
#undef RF_CASE_INT
#undef RF_CASE_FLOAT
}

/* Whether a reduce by op on type t keeps XLA's order: float products. */
static int rf_ordered(opcode op, etype t)
{
	return op == OP_MULTIPLY && etype_get_kind(t) == KIND_FLOAT;
}

/* --- reduce ---------------------------------------------------------------------- */

typedef struct rdim {
	int64_t n, is, os;  /* size, input stride, result stride (elements) */
} rdim;

typedef struct rplan {
	const rf_kernels *k;
	const char *x;
	char *out;
	const void *init;
	int64_t wx, wo;
	int nk, nr;               /* kept and reduced dimensions, innermost first */
	rdim kd[HLOI_MAX_RANK], rd[HLOI_MAX_RANK];
	int col;                  /* the innermost dimension is kept */
	int ordered;              /* XLA's order: no blocks, lanes or row trees */
	int64_t rtotal;           /* reduced elements (columns: rows) per result element */
	/* columns: the strip dimension kd[0] in strips of `strip` */
	int64_t strip, nstrips;
	/* columns with few strips, and a reduction to one element: the
	 * reduced rows (elements) in fixed blocks, whose partial results are
	 * combined in block order */
	int64_t block, nblocks;
	char *partial;
	/* x computed by a fused region (fast_reduce_fused), a run at a time
	 * where it is read: x's dense layout (strides xst, dimensions major
	 * to minor in xorder) turns an offset back into an index; runs go
	 * along d0, x's innermost dimension of more than one element */
	const fx_exec *fx;
	int nxorder, d0;
	int8_t xorder[HLOI_MAX_RANK];
	int64_t xst[HLOI_MAX_RANK], xdims[HLOI_MAX_RANK];
	atomic_int failed;        /* a thread's scratch could not be allocated */
} rplan;

/* A thread's scratch for the fused region (NULL without one; on failure
 * p->failed is set and the thread does nothing). */
static int rf_scratch(rplan *p, char **scratch)
{
	*scratch = NULL;
	if (!p->fx)
		return 0;
	*scratch = hloi_aligned_alloc((size_t)p->fx->scratch_bytes);
	if (!*scratch) {
		atomic_store(&p->failed, 1);
		return 1;
	}
	return 0;
}

/* The next piece of the run of n elements at element offset off of x
 * (element stride sx): in place, or computed by the fused region into the
 * thread's scratch (up to the end of d0 and to a row of the region). Its
 * start and stride in *at, *as; returns its length. */
static int64_t rf_piece(const rplan *p, char *scratch, int64_t off, int64_t n, int64_t sx, const char **at,
			int64_t *as)
{
	if (!p->fx) {
		*at = p->x + off * p->wx;
		*as = sx;
		return n;
	}
	int64_t idx[HLOI_MAX_RANK] = { 0 };
	for (int k = 0; k < p->nxorder; k++) {
		int d = p->xorder[k];
		idx[d] = off / p->xst[d];
		off -= idx[d] * p->xst[d];
	}
	int64_t m = p->xdims[p->d0] - idx[p->d0];
	if (m > n)
		m = n;
	if (m > p->fx->chunk)
		m = p->fx->chunk;
	*at = fx_run_at(p->fx, scratch, idx, m, as);
	return m;
}

/* The kernels on a run of x, piece by piece (rf_piece): col and load
 * into acc[0..n), row into *acc. */
enum { RK_COL, RK_LOAD, RK_ROW };
static void rf_apply(const rplan *p, char *scratch, int kind, void *acc, int64_t off, int64_t n, int64_t sx)
{
	for (int64_t j = 0; j < n;) {
		const char *at;
		int64_t as, m = rf_piece(p, scratch, off + j * sx, n - j, sx, &at, &as);
		char *a = (char *)acc + (kind == RK_ROW ? 0 : j * p->k->asize);
		if (kind == RK_COL)
			p->k->col(a, at, m, as);
		else if (kind == RK_LOAD)
			p->k->load(a, at, m, as);
		else if (p->ordered)
			p->k->rowseq(a, at, m, as);
		else
			p->k->row(a, at, m, as);
		j += m;
	}
}

/* Offsets of unit index u over dims d[0..n) (d[0] fastest). */
static void unravel(const rdim *d, int n, int64_t u, int64_t *ix, int64_t *ox)
{
	*ix = *ox = 0;
	for (int j = 0; j < n; j++) {
		int64_t i = u % d[j].n;
		u /= d[j].n;
		*ix += i * d[j].is;
		*ox += i * d[j].os;
	}
}

/* A walk over the combinations of reduced dims rd[from..nr) in XLA's order
 * (rd[from] fastest), from combination `start`; off is the input offset. */
typedef struct rwalk {
	int64_t cnt[HLOI_MAX_RANK];
	int64_t off;
} rwalk;

static void rwalk_seek(const rplan *p, int from, rwalk *w, int64_t start)
{
	w->off = 0;
	for (int j = from; j < p->nr; j++) {
		if (p->rd[j].n == 0) {  /* nothing to walk */
			w->cnt[j] = 0;
			continue;
		}
		w->cnt[j] = start % p->rd[j].n;
		start /= p->rd[j].n;
		w->off += w->cnt[j] * p->rd[j].is;
	}
}

static inline void rwalk_next(const rplan *p, int from, rwalk *w)
{
	for (int j = from; j < p->nr; j++) {
		w->off += p->rd[j].is;
		if (++w->cnt[j] < p->rd[j].n)
			return;
		w->off -= p->rd[j].n * p->rd[j].is;
		w->cnt[j] = 0;
	}
}

/* The strip of column unit u: input and result offsets and its length. */
static int64_t strip_of(const rplan *p, int64_t u, int64_t *ix, int64_t *ox)
{
	rdim strip = p->nk ? p->kd[0] : (rdim){ 1, 0, 0 };
	int64_t s = u % p->nstrips;
	unravel(p->kd + 1, p->nk > 1 ? p->nk - 1 : 0, u / p->nstrips, ix, ox);
	int64_t j0 = s * p->strip;
	*ix += j0 * strip.is;
	*ox += j0 * strip.os;
	return strip.n - j0 < p->strip ? strip.n - j0 : p->strip;
}

/* Rows [r, r1) of the walk (at row r) into the strip acc of len elements:
 * eight at a time where the strip is contiguous in memory; a row at a
 * time, computed where read, from a fused region. */
static void add_rows(const rplan *p, char *scratch, rwalk *w, int64_t r, int64_t r1, void *acc, int64_t ix,
		     int64_t len, int64_t is)
{
	if (is == 1 && !p->fx && !p->ordered) {
		const void *rows[8];
		for (; r + 8 <= r1; r += 8) {
			for (int k = 0; k < 8; k++) {
				rows[k] = p->x + (ix + w->off) * p->wx;
				rwalk_next(p, 0, w);
			}
			p->k->col8(acc, rows, len);
		}
	}
	for (; r < r1; r++) {
		rf_apply(p, scratch, RK_COL, acc, ix + w->off, len, is);
		rwalk_next(p, 0, w);
	}
}

/* Columns: each unit a strip, the reduced rows added in order. */
static void col_units(void *ctx, int64_t lo, int64_t hi)
{
	rplan *p = ctx;
	union {
		double d[REDUCE_STRIP_MAX];
		uint64_t u[REDUCE_STRIP_MAX];
	} acc;
	char *scratch;
	if (rf_scratch(p, &scratch))
		return;
	int64_t is = p->nk ? p->kd[0].is : 0, os = p->nk ? p->kd[0].os : 0;
	for (int64_t u = lo; u < hi; u++) {
		int64_t ix, ox, len = strip_of(p, u, &ix, &ox);
		p->k->init(acc.d, p->init, len);
		rwalk w;
		rwalk_seek(p, 0, &w, 0);
		add_rows(p, scratch, &w, 0, p->rtotal, acc.d, ix, len, is);
		p->k->store(p->out + ox * p->wo, os, acc.d, len);
	}
	hloi_aligned_free(scratch);
}

/* Columns in blocks: job u * nblocks + b sums block b of the rows of strip
 * u into its partial result (starting from the block's first row). */
static void col_blocks(void *ctx, int64_t lo, int64_t hi)
{
	rplan *p = ctx;
	char *scratch;
	if (rf_scratch(p, &scratch))
		return;
	int64_t is = p->nk ? p->kd[0].is : 0;
	for (int64_t q = lo; q < hi; q++) {
		int64_t u = q / p->nblocks, b = q % p->nblocks, ix, ox;
		int64_t len = strip_of(p, u, &ix, &ox);
		int64_t r0 = b * p->block, r1 = r0 + p->block < p->rtotal ? r0 + p->block : p->rtotal;
		char *acc = p->partial + q * p->strip * p->k->asize;
		rwalk w;
		rwalk_seek(p, 0, &w, r0);
		rf_apply(p, scratch, RK_LOAD, acc, ix + w.off, len, is);
		rwalk_next(p, 0, &w);
		add_rows(p, scratch, &w, r0 + 1, r1, acc, ix, len, is);
	}
	hloi_aligned_free(scratch);
}

/* ... then per strip: init, the blocks' results in order, stored. */
static void col_merge(void *ctx, int64_t lo, int64_t hi)
{
	const rplan *p = ctx;
	union {
		double d[REDUCE_STRIP_MAX];
		uint64_t u[REDUCE_STRIP_MAX];
	} acc;
	int64_t os = p->nk ? p->kd[0].os : 0;
	for (int64_t u = lo; u < hi; u++) {
		int64_t ix, ox, len = strip_of(p, u, &ix, &ox);
		p->k->init(acc.d, p->init, len);
		for (int64_t b = 0; b < p->nblocks; b++)
			p->k->merge(acc.d, p->partial + (u * p->nblocks + b) * p->strip * p->k->asize, len);
		p->k->store(p->out + ox * p->wo, os, acc.d, len);
	}
}

/* Rows: each unit a result element, its runs folded in lanes. */
static void row_units(void *ctx, int64_t lo, int64_t hi)
{
	rplan *p = ctx;
	uint64_t acc;
	char *scratch;
	if (rf_scratch(p, &scratch))
		return;
	int64_t rows = p->rtotal / (p->rd[0].n ? p->rd[0].n : 1);
	for (int64_t u = lo; u < hi; u++) {
		int64_t ix, ox;
		unravel(p->kd, p->nk, u, &ix, &ox);
		p->k->init(&acc, p->init, 1);
		rwalk w;
		rwalk_seek(p, 1, &w, 0);
		for (int64_t r = 0; r < rows && p->rtotal > 0; r++) {
			rf_apply(p, scratch, RK_ROW, &acc, ix + w.off, p->rd[0].n, p->rd[0].is);
			rwalk_next(p, 1, &w);
		}
		p->k->store(p->out + ox * p->wo, 0, &acc, 1);
	}
	hloi_aligned_free(scratch);
}

/* A reduction to one element of one run: block c into partial[c],
 * starting from the block's first element. */
static void run_blocks(void *ctx, int64_t lo, int64_t hi)
{
	rplan *p = ctx;
	char *scratch;
	if (rf_scratch(p, &scratch))
		return;
	int64_t n = p->rd[0].n, is = p->rd[0].is;
	for (int64_t c = lo; c < hi; c++) {
		int64_t i0 = c * p->block, len = n - i0 < p->block ? n - i0 : p->block;
		char *acc = p->partial + c * p->k->asize;
		const char *at;
		int64_t as, m = rf_piece(p, scratch, i0 * is, len, is, &at, &as);
		p->k->load(acc, at, 1, 0);
		p->k->row(acc, at + as * p->wx, m - 1, as);
		rf_apply(p, scratch, RK_ROW, acc, (i0 + m) * is, len - m, is);
	}
	hloi_aligned_free(scratch);
}

/* Whether the array shape s has a buffer of one byte or more. */
static int has_bytes(const shape *s)
{
	int64_t bytes;
	return !shape_byte_size(s, &bytes) && bytes > 0;
}

/* Plans the reduce `in` of an input of shape xs into out and runs it:
 * x read from p->x, or computed by p->fx. */
static int reduce_run(rplan *p, int threads, const instr *in, const shape *xs, const hloi_literal *init,
		      hloi_literal *out, const reduce_tuning *t)
{
	etype ty = xs->type;
	int64_t strip_max = t && t->strip > 0 && t->strip < REDUCE_STRIP_MAX ? t->strip : REDUCE_STRIP_MAX;
	int64_t min_per = t && t->min_per_thread > 0 ? t->min_per_thread : RF_MIN_PER_THREAD;
	int64_t block_rows = t && t->block > 0 ? t->block : RF_BLOCK_ROWS;
	const int_list *dims = instr_ints(in, ATTR_DIMENSIONS);
	int reduced[HLOI_MAX_RANK] = { 0 }, rdim_of[HLOI_MAX_RANK];
	for (int j = 0; dims && j < dims->n; j++)
		reduced[dims->v[j]] = 1;
	int64_t ist[HLOI_MAX_RANK], ost[HLOI_MAX_RANK];
	index_strides(xs, ist);
	index_strides(&out->shape, ost);
	for (int d = 0, j = 0; d < xs->rank; d++)
		rdim_of[d] = reduced[d] ? -1 : j++;
	int64_t nout = 1;
	p->rtotal = 1;
	int last = -1;  /* kind of the last dimension placed: 0 kept, 1 reduced */
	for (int i = 0; i < xs->rank; i++) {
		int d = (int)xs->layout.minor_to_major[i];
		int64_t n = xs->dims[d];
		if (reduced[d])
			p->rtotal *= n;
		else
			nout *= n;
		if (n == 1)
			continue;
		int kind = reduced[d];
		rdim *list = kind ? p->rd : p->kd;
		int *cnt = kind ? &p->nr : &p->nk;
		rdim nd = { n, ist[d], kind ? 0 : ost[rdim_of[d]] };
		if (last < 0)
			p->col = !kind;
		if (last == kind && *cnt > 0) {
			rdim *prev = &list[*cnt - 1];
			if (nd.is == prev->is * prev->n && (kind || nd.os == prev->os * prev->n)) {
				prev->n *= n;
				continue;
			}
		}
		list[(*cnt)++] = nd;
		last = kind;
	}
	if (nout == 0)
		return 0;
	p->out = out->data;
	p->init = init->data;
	p->wx = etype_byte_width(ty);
	p->wo = p->wx;
	if (p->nr == 0)
		p->col = 1;
	if (p->col) {
		rdim strip = p->nk ? p->kd[0] : (rdim){ 1, 0, 0 };
		int64_t outer = 1;
		for (int j = 1; j < p->nk; j++)
			outer *= p->kd[j].n;
		p->strip = strip.n < strip_max ? strip.n : strip_max;
		p->nstrips = (strip.n + p->strip - 1) / p->strip;
		int64_t units = outer * p->nstrips;
		/* Few strips and many rows: the rows in fixed blocks (the same
		 * for any number of threads) for the threads to share. */
		if (units < RF_FEW_UNITS && p->rtotal >= 2 * block_rows && !p->ordered) {
			p->nblocks = (p->rtotal + block_rows - 1) / block_rows;
			if (p->nblocks > RF_MAX_BLOCKS)
				p->nblocks = RF_MAX_BLOCKS;
			p->block = (p->rtotal + p->nblocks - 1) / p->nblocks;
			p->nblocks = (p->rtotal + p->block - 1) / p->block;
			p->partial = hloi_aligned_alloc((size_t)(units * p->nblocks * p->strip * p->k->asize));
			if (p->partial) {
				int64_t per = p->block * p->strip;
				eval_parallel(threads, units * p->nblocks, min_per / per + 1, col_blocks, p);
				if (!atomic_load(&p->failed))
					eval_parallel(threads, units, RF_FEW_UNITS, col_merge, p);
				hloi_aligned_free(p->partial);
				return atomic_load(&p->failed) ? -1 : 0;
			}
		}
		int64_t per = p->rtotal * p->strip;
		eval_parallel(threads, units, per ? min_per / per + 1 : units, col_units, p);
		return atomic_load(&p->failed) ? -1 : 0;
	}
	if (p->nk == 0 && p->nr == 1 && p->rd[0].n >= 2 * RF_RUN_BLOCK && !p->ordered) {
		/* one result element: fixed blocks of the run, their results in order */
		p->block = RF_RUN_BLOCK;
		p->nblocks = (p->rd[0].n + p->block - 1) / p->block;
		p->partial = hloi_aligned_alloc((size_t)(p->nblocks * p->k->asize));
		if (p->partial) {
			eval_parallel(threads, p->nblocks, min_per / p->block + 1, run_blocks, p);
			uint64_t acc;
			p->k->init(&acc, p->init, 1);
			for (int64_t c = 0; c < p->nblocks; c++)
				p->k->merge(&acc, p->partial + c * p->k->asize, 1);
			hloi_aligned_free(p->partial);
			if (atomic_load(&p->failed))
				return -1;
			p->k->store(p->out, 0, &acc, 1);
			return 0;
		}
	}
	int64_t per = p->rtotal;
	eval_parallel(threads, nout, per ? min_per / per + 1 : nout, row_units, p);
	return atomic_load(&p->failed) ? -1 : 0;
}

int fast_reduce(int threads, const instr *in, opcode op, const hloi_literal *x, const hloi_literal *init,
		hloi_literal *out, const reduce_tuning *t)
{
	rplan p;
	memset(&p, 0, sizeof p);
	atomic_init(&p.failed, 0);
	etype ty = x->shape.type;
	if (init->shape.type != ty || out->shape.type != ty || shape_is_tuple(&out->shape))
		return 1;
	p.k = rf_lookup(op, ty, 0);
	p.ordered = rf_ordered(op, ty);
	if (!p.k || (!x->data && has_bytes(&x->shape)) || !init->data)
		return 1;
	p.x = x->data;
	return reduce_run(&p, threads, in, &x->shape, init, out, t) != 0;
}

opcode fast_reduce_monoid(const computation *comp)
{
	const instr *r = comp->root;
	if (comp->nparams != 2 || !r || r->nops != 2 || shape_is_tuple(r->result) || r->result->rank != 0)
		return OP_COUNT;
	/* op-specific: the monoids of the kernels above */
	switch (r->op) {
	case OP_ADD:
	case OP_MULTIPLY:
	case OP_MAXIMUM:
	case OP_MINIMUM:
	case OP_AND:
	case OP_OR:
		break;
	default:
		return OP_COUNT;
	}
	const instr *a = r->ops[0].def, *b = r->ops[1].def;
	if (a->op != OP_PARAMETER || b->op != OP_PARAMETER || a == b)
		return OP_COUNT;
	for (int k = 0; k < 2; k++) {
		const shape *s = comp->params[k]->result;
		if (shape_is_tuple(s) || s->rank != 0 || s->type != r->result->type)
			return OP_COUNT;
	}
	return r->op;
}

/* A dense strided array: offsets turn back into indices. */
static int dense(const shape *s)
{
	int64_t n, bytes;
	return !shape_is_tuple(s) && s->rank <= HLOI_MAX_RANK && shape_is_static(s) && index_is_strided(s) &&
	       !s->layout.n_padded && !shape_element_count(s, &n) && !shape_byte_size(s, &bytes) &&
	       bytes == n * etype_byte_width(s->type);
}

int fast_reduce_fusible(const instr *in)
{
	if (in->op != OP_REDUCE || in->nops != 2 || shape_is_tuple(in->result) || !shape_is_static(in->result))
		return 0;
	const computation *fn = instr_called(in, ATTR_TO_APPLY, 0);
	const shape *xs = in->ops[0].def->result, *is = in->ops[1].def->result;
	if (!fn || shape_is_tuple(xs) || shape_is_tuple(is) || xs->type != is->type ||
	    in->result->type != xs->type || xs->rank < 1 || !dense(xs))
		return 0;
	opcode op = fast_reduce_monoid(fn);
	return op != OP_COUNT && fn->params[0]->result->type == xs->type && rf_lookup(op, xs->type, 0) != NULL;
}

int fast_reduce_run_dim(const shape *xs)
{
	int d0 = (int)xs->layout.minor_to_major[0];
	for (int i = xs->rank - 1; i >= 0; i--)
		if (xs->dims[xs->layout.minor_to_major[i]] > 1)
			d0 = (int)xs->layout.minor_to_major[i];
	return d0;
}

int fast_reduce_fused(int threads, const instr *in, opcode op, const fx_region *src, const hloi_literal *init,
		      hloi_literal *out, const reduce_tuning *t, const fast_tuning *ft)
{
	rplan p;
	fx_exec x;
	memset(&p, 0, sizeof p);
	atomic_init(&p.failed, 0);
	const shape *xs = in->ops[0].def->result;
	etype ty = xs->type;
	if (!fast_reduce_fusible(in) || init->shape.type != ty || out->shape.type != ty || !init->data ||
	    src->rank != xs->rank || (!out->data && has_bytes(&out->shape)))
		return 1;
	p.k = rf_lookup(op, ty, 0);
	p.ordered = rf_ordered(op, ty);
	if (!p.k)
		return 1;
	/* x's dimensions major to minor (an offset back into an index) */
	index_strides(xs, p.xst);
	p.d0 = fast_reduce_run_dim(xs);
	for (int i = xs->rank - 1; i >= 0; i--) {
		int d = (int)xs->layout.minor_to_major[i];
		p.xdims[d] = xs->dims[d];
		if (xs->dims[d] > 1)
			p.xorder[p.nxorder++] = (int8_t)d;
	}
	int rc = fx_runs_setup(&x, src, p.d0, ft);
	if (rc == 0) {
		p.fx = &x;
		rc = reduce_run(&p, threads, in, xs, init, out, t);
	}
	fx_exec_free(&x);
	return rc;
}

/* --- reduce-window ------------------------------------------------------------------ */

typedef struct wplan {
	const rf_kernels *k;
	const hloi_literal *x;
	hloi_literal *out;
	const void *init;
	int rank, d0;             /* d0: the result's innermost dimension */
	const window_dim *w;
	int64_t ist[HLOI_MAX_RANK], ost[HLOI_MAX_RANK];
	int64_t odims[HLOI_MAX_RANK];
	int64_t wn;               /* window positions */
	int64_t strip, nstrips;
	int64_t wx;
} wplan;

static int64_t floor_div(int64_t a, int64_t b)
{
	int64_t q = a / b;
	return (a % b != 0 && (a < 0) != (b < 0)) ? q - 1 : q;
}

static void win_units(void *ctx, int64_t lo, int64_t hi)
{
	const wplan *p = ctx;
	union {
		double d[REDUCE_STRIP_MAX];
		uint64_t u[REDUCE_STRIP_MAX];
	} acc;
	const window_dim *w0 = &p->w[p->d0];
	int64_t n0 = p->odims[p->d0], N0 = p->x->shape.dims[p->d0];
	for (int64_t u = lo; u < hi; u++) {
		/* the result index of every dimension but d0 */
		int64_t oi[HLOI_MAX_RANK], rest = u / p->nstrips, s = u % p->nstrips;
		for (int d = p->rank - 1; d >= 0; d--) {
			if (d == p->d0)
				continue;
			oi[d] = rest % p->odims[d];
			rest /= p->odims[d];
		}
		int64_t c0 = s * p->strip, len = n0 - c0 < p->strip ? n0 - c0 : p->strip;
		p->k->init(acc.d, p->init, len);
		int64_t wi[HLOI_MAX_RANK] = { 0 };
		for (int64_t q = 0; q < p->wn; q++) {
			int64_t base = 0;
			int valid = 1;
			for (int d = 0; d < p->rank && valid; d++) {
				if (d == p->d0)
					continue;
				const window_dim *w = &p->w[d];
				int64_t b = oi[d] * w->stride + wi[d] * w->rhs_dilate - w->pad_lo;
				if (w->lhs_dilate != 1) {
					if (b % w->lhs_dilate != 0) {
						valid = 0;
						break;
					}
					b /= w->lhs_dilate;
				}
				if (b < 0 || b >= p->x->shape.dims[d])
					valid = 0;
				base += b * p->ist[d];
			}
			if (valid) {
				/* b(o) = o * stride + off in [0, N0) */
				int64_t off = wi[p->d0] * w0->rhs_dilate - w0->pad_lo;
				int64_t olo = -floor_div(off, w0->stride);  /* ceil(-off / stride) */
				if (olo * w0->stride + off < 0)
					olo++;
				int64_t ohi = floor_div(N0 - 1 - off, w0->stride) + 1;
				if (olo < c0)
					olo = c0;
				if (ohi > c0 + len)
					ohi = c0 + len;
				if (olo < ohi)
					p->k->col((char *)acc.d + (olo - c0) * p->k->asize,
						  (const char *)p->x->data + (base + (olo * w0->stride + off) * p->ist[p->d0]) * p->wx,
						  ohi - olo, w0->stride * p->ist[p->d0]);
			}
			for (int d = p->rank - 1; d >= 0; d--) {
				if (++wi[d] < p->w[d].size)
					break;
				wi[d] = 0;
			}
		}
		int64_t ox = c0 * p->ost[p->d0];
		for (int d = 0; d < p->rank; d++)
			if (d != p->d0)
				ox += oi[d] * p->ost[d];
		p->k->store((char *)p->out->data + ox * p->wx, p->ost[p->d0], acc.d, len);
	}
}

/* --- reduce-window by separable passes ------------------------------------------------ */

/* max, min, and, or are idempotent, associative and commutative on the
 * values (max and min: -0 below +0), so a window of two dimensions is the
 * window of the outer one over the windows of the inner one, each partial
 * result starting from init: a pass along the inner windowed dimension
 * ("a") into a ring of slices, then one along the outer ("b") over the
 * ring, (wa - 1) + (wb - 1) combinations per element instead of wa * wb.
 * Only which NaN comes out depends on the order: a result that is a NaN
 * (it is one exactly when XLA's would be) is recomputed in XLA's order. */

/* Bytes of a thread's ring of pass-a slices at most (stays in L2). */
#define RW_RING_BYTES ((int64_t)256 << 10)
/* A ring larger than this even for one result slice: the direct walk. */
#define RW_RING_MAX ((int64_t)64 << 20)

typedef struct splan {
	const rf_kernels *k;
	const hloi_literal *x;
	hloi_literal *out;
	const void *init;
	etype ty;
	int64_t wx;
	int rank, has_a;
	const window_dim *w;
	int64_t ist[HLOI_MAX_RANK], ost[HLOI_MAX_RANK], odims[HLOI_MAX_RANK];
	/* pass a: within a slice of b, M groups of Na input / Oa result
	 * positions of A elements each */
	int64_t M, Na, Oa, A, sa, ra, pa, wa;
	/* pass b: G outer groups of Nb input / Ob result slices */
	int64_t G, Nb, Ob, sb, rb, pb, wb;
	int64_t inner, oinner;    /* elements of an input / result slice */
	int64_t block;            /* result slices per unit */
	int64_t chunk;            /* elements of a result slice combined at once */
	int64_t nblocks;
	_Atomic int failed;       /* a thread's ring could not be allocated */
} splan;

/* The valid result range [*olo, *ohi) of a pass whose position o reads
 * input o * s + off of [0, n), within [0, on). */
static void valid_range(int64_t s, int64_t off, int64_t n, int64_t on, int64_t *olo, int64_t *ohi)
{
	int64_t lo = -floor_div(off, s);
	if (lo * s + off < 0)
		lo++;
	int64_t hi = floor_div(n - 1 - off, s) + 1;
	*olo = lo < 0 ? 0 : lo;
	*ohi = hi > on ? on : hi;
}

/* Pass a of input slice xs into ring slot r (accumulators). */
static void sep_pass_a(const splan *p, const char *xs, char *r)
{
	const rf_kernels *k = p->k;
	int64_t as = k->asize;
	if (p->A == 1) {
		for (int64_t m = 0; m < p->M; m++) {
			char *row = r + m * p->Oa * as;
			const char *xr = xs + m * p->Na * p->wx;
			k->init(row, p->init, p->Oa);
			for (int64_t q = 0; q < p->wa; q++) {
				int64_t off = q * p->ra - p->pa, olo, ohi;
				valid_range(p->sa, off, p->Na, p->Oa, &olo, &ohi);
				if (olo < ohi)
					k->col(row + olo * as, xr + (olo * p->sa + off) * p->wx, ohi - olo, p->sa);
			}
		}
		return;
	}
	for (int64_t m = 0; m < p->M; m++)
		for (int64_t o = 0; o < p->Oa; o++) {
			char *v = r + (m * p->Oa + o) * p->A * as;
			k->init(v, p->init, p->A);
			for (int64_t q = 0; q < p->wa; q++) {
				int64_t i = o * p->sa + q * p->ra - p->pa;
				if (i >= 0 && i < p->Na)
					k->col(v, xs + (m * p->Na + i) * p->A * p->wx, p->A, 1);
			}
		}
}

/* Whether any of n elements of float type t is a NaN. */
static int any_nan(etype t, const void *v, int64_t n)
{
	int any = 0;
	switch (t) {
	case ET_F32: {
		const float *x = v;
		for (int64_t j = 0; j < n; j++)
			any |= x[j] != x[j];
		return any;
	}
	case ET_F64: {
		const double *x = v;
		for (int64_t j = 0; j < n; j++)
			any |= x[j] != x[j];
		return any;
	}
	case ET_F16:
	case ET_BF16: {
		const uint16_t *x = v;
		unsigned e = t == ET_F16 ? 0x7c00u : 0x7f80u;
		for (int64_t j = 0; j < n; j++)
			any |= (x[j] & 0x7fffu) > e;
		return any;
	}
	default:
		return 0;
	}
}

/* Result element at position pos recomputed in XLA's order (row-major
 * window positions from init). */
static void sep_exact(const splan *p, int64_t pos)
{
	int64_t oi[HLOI_MAX_RANK], wi[HLOI_MAX_RANK] = { 0 }, wn = 1;
	for (int d = 0; d < p->rank; d++) {
		oi[d] = pos / p->ost[d] % p->odims[d];
		wn *= p->w[d].size;
	}
	uint64_t acc;
	p->k->init(&acc, p->init, 1);
	for (int64_t q = 0; q < wn; q++) {
		int64_t off = 0;
		int valid = 1;
		for (int d = 0; d < p->rank; d++) {
			int64_t b = oi[d] * p->w[d].stride + wi[d] * p->w[d].rhs_dilate - p->w[d].pad_lo;
			valid &= b >= 0 && b < p->x->shape.dims[d];
			off += b * p->ist[d];
		}
		if (valid)
			p->k->col(&acc, (const char *)p->x->data + off * p->wx, 1, 1);
		for (int d = p->rank - 1; d >= 0; d--) {
			if (++wi[d] < p->w[d].size)
				break;
			wi[d] = 0;
		}
	}
	p->k->store((char *)p->out->data + pos * p->wx, 1, &acc, 1);
}

static void sep_units(void *ctx, int64_t lo, int64_t hi)
{
	splan *p = ctx;
	const rf_kernels *k = p->k;
	int64_t as = k->asize;
	union {
		double d[REDUCE_STRIP_MAX];
		uint64_t u[REDUCE_STRIP_MAX];
	} acc;
	char *ring = NULL;
	if (p->has_a) {
		int64_t nslots = (p->block - 1) * p->sb + (p->wb - 1) * p->rb + 1;
		ring = hloi_aligned_alloc((size_t)(nslots * p->oinner * as));
		if (!ring) {
			p->failed = 1;
			return;
		}
	}
	int is_float = etype_is_float(p->ty);
	for (int64_t u = lo; u < hi; u++) {
		int64_t g = u / p->nblocks, o0 = u % p->nblocks * p->block;
		int64_t o1 = o0 + p->block < p->Ob ? o0 + p->block : p->Ob;
		const char *xg = (const char *)p->x->data + g * p->Nb * p->inner * p->wx;
		/* the input slices the block reads: [ilo, ihi) */
		int64_t ilo = o0 * p->sb - p->pb, ihi = (o1 - 1) * p->sb + (p->wb - 1) * p->rb - p->pb + 1;
		ilo = ilo < 0 ? 0 : ilo;
		ihi = ihi > p->Nb ? p->Nb : ihi;
		if (ring)
			for (int64_t i = ilo; i < ihi; i++)
				sep_pass_a(p, xg + i * p->inner * p->wx, ring + (i - ilo) * p->oinner * as);
		for (int64_t o = o0; o < o1; o++) {
			int64_t opos = (g * p->Ob + o) * p->oinner;
			char *os = (char *)p->out->data + opos * p->wx;
			for (int64_t c0 = 0; c0 < p->oinner; c0 += p->chunk) {
				int64_t len = p->oinner - c0 < p->chunk ? p->oinner - c0 : p->chunk;
				char *oc = os + c0 * p->wx;
				/* the ring's slices hold init already: the first valid
				 * one starts the result (accumulators of the element
				 * type: the result itself is the accumulator) */
				int first = 1;
				if (!ring || as != p->wx)
					k->init(acc.d, p->init, len), first = 0;
				for (int64_t q = 0; q < p->wb; q++) {
					int64_t i = o * p->sb + q * p->rb - p->pb;
					if (i < 0 || i >= p->Nb)
						continue;
					if (!ring)
						k->col(acc.d, xg + (i * p->inner + c0) * p->wx, len, 1);
					else if (first)
						memcpy(oc, ring + ((i - ilo) * p->oinner + c0) * as, (size_t)(len * as)), first = 0;
					else
						k->merge(as == p->wx ? (void *)oc : acc.d, ring + ((i - ilo) * p->oinner + c0) * as,
							 len);
				}
				if (first)
					k->init(oc, p->init, len);  /* no valid slice: init (accumulators of the element type) */
				else if (!ring || as != p->wx)
					k->store(oc, 1, acc.d, len);
				if (is_float && any_nan(p->ty, oc, len))
					for (int64_t j = 0; j < len; j++)
						if (any_nan(p->ty, os + (c0 + j) * p->wx, 1))
							sep_exact(p, opos + c0 + j);
			}
		}
	}
	hloi_aligned_free(ring);
}

/* Whether s's elements are dense in its layout's order with strides st. */
static int dense_strides(const shape *s, const int64_t *st)
{
	int64_t want = 1;
	for (int i = 0; i < s->rank; i++) {
		int d = (int)s->layout.minor_to_major[i];
		if (st[d] != want)
			return 0;
		want *= s->dims[d];
	}
	return 1;
}

/* 0 when done, nonzero when the case is not one for separable passes. */
static int reduce_window_separable(int threads, opcode op, const window *win, const hloi_literal *x,
				   const hloi_literal *init, hloi_literal *out, const rf_kernels *k, int64_t min_per,
				   int64_t chunk)
{
	if (op != OP_MAXIMUM && op != OP_MINIMUM && op != OP_AND && op != OP_OR)
		return 1;
	const shape *xs = &x->shape, *os = &out->shape;
	if (!index_is_strided(xs) || !index_is_strided(os) || xs->rank != os->rank)
		return 1;
	splan p;
	memset(&p, 0, sizeof p);
	p.k = k;
	p.x = x;
	p.out = out;
	p.init = init->data;
	p.ty = xs->type;
	p.wx = etype_byte_width(p.ty);
	p.rank = xs->rank;
	p.w = win->d;
	index_strides(xs, p.ist);
	index_strides(os, p.ost);
	if (!dense_strides(xs, p.ist) || !dense_strides(os, p.ost))
		return 1;
	/* the windowed dimensions, innermost first in the (common) layout */
	int wd[2], nw = 0;
	for (int i = 0; i < p.rank; i++) {
		int d = (int)xs->layout.minor_to_major[i];
		const window_dim *w = &p.w[d];
		if (os->layout.minor_to_major[i] != d || w->lhs_dilate != 1 || w->size < 1 || w->stride < 1 ||
		    w->rhs_dilate < 1)
			return 1;
		p.odims[d] = os->dims[d];
		if (w->size == 1 && w->stride == 1 && w->pad_lo == 0 && w->pad_hi == 0 && os->dims[d] == xs->dims[d])
			continue;
		if (nw == 2)
			return 1;
		wd[nw++] = d;
	}
	if (nw == 0)
		return 1;
	int b = wd[nw - 1];
	p.Nb = xs->dims[b];
	p.Ob = os->dims[b];
	p.sb = p.w[b].stride;
	p.rb = p.w[b].rhs_dilate;
	p.pb = p.w[b].pad_lo;
	p.wb = p.w[b].size;
	p.inner = p.ist[b];
	p.oinner = p.ost[b];
	if (p.Nb == 0 || p.inner == 0 || p.oinner == 0)
		return 1;
	int64_t total;
	if (shape_element_count(xs, &total))
		return 1;
	p.G = total / (p.Nb * p.inner);
	p.block = 1;
	p.chunk = chunk;
	if (nw == 2) {
		int a = wd[0];
		p.has_a = 1;
		p.Na = xs->dims[a];
		p.Oa = os->dims[a];
		p.A = p.ist[a];
		if (p.A != p.ost[a] || p.Na == 0)
			return 1;
		p.M = p.inner / (p.Na * p.A);
		p.sa = p.w[a].stride;
		p.ra = p.w[a].rhs_dilate;
		p.pa = p.w[a].pad_lo;
		p.wa = p.w[a].size;
		/* result slices per block: the ring of their input slices within
		 * RW_RING_BYTES when it can */
		int64_t slot = p.oinner * k->asize, fit = RW_RING_BYTES / slot;
		int64_t span = (p.wb - 1) * p.rb + 1;
		if (span > RW_RING_MAX / slot)
			return 1;
		p.block = fit > span ? (fit - span) / p.sb + 1 : 1;
		if (p.block > p.Ob)
			p.block = p.Ob;
	}
	p.nblocks = (p.Ob + p.block - 1) / p.block;
	int64_t units = p.G * p.nblocks, per = p.block * p.oinner * (p.wb + (p.has_a ? p.wa : 0));
	eval_parallel(threads, units, per ? min_per / per + 1 : units, sep_units, &p);
	return p.failed;
}

int fast_reduce_window(int threads, const instr *in, opcode op, const hloi_literal *x, const hloi_literal *init,
		       hloi_literal *out, const reduce_tuning *t)
{
	wplan p;
	memset(&p, 0, sizeof p);
	etype ty = x->shape.type;
	if (init->shape.type != ty || out->shape.type != ty || shape_is_tuple(&out->shape) || x->shape.rank == 0)
		return 1;
	p.k = rf_lookup(op, ty, 1);
	const attr *wa = instr_attr(in, ATTR_WINDOW);
	if (!p.k || !wa || wa->kind != AK_WINDOW || wa->u.win.n != x->shape.rank || !init->data)
		return 1;
	p.x = x;
	p.out = out;
	p.init = init->data;
	p.rank = x->shape.rank;
	p.w = wa->u.win.d;
	p.d0 = (int)out->shape.layout.minor_to_major[0];
	if (p.w[p.d0].lhs_dilate != 1)
		return 1;
	int64_t nout;
	if (shape_element_count(&out->shape, &nout))
		return 1;
	if (nout == 0)
		return 0;
	if (!x->data || !out->data)
		return 1;
	index_strides(&x->shape, p.ist);
	index_strides(&out->shape, p.ost);
	p.wn = 1;
	for (int d = 0; d < p.rank; d++) {
		p.odims[d] = out->shape.dims[d];
		if (checked_mul_i64(p.wn, p.w[d].size, &p.wn))
			return 1;
	}
	p.wx = etype_byte_width(ty);
	int64_t min_per = t && t->min_per_thread > 0 ? t->min_per_thread : RF_MIN_PER_THREAD;
	int64_t strip_max = t && t->strip > 0 && t->strip < REDUCE_STRIP_MAX ? t->strip : REDUCE_STRIP_MAX;
	if (reduce_window_separable(threads, op, &wa->u.win, x, init, out, p.k, min_per, strip_max) == 0)
		return 0;
	int64_t n0 = p.odims[p.d0];
	p.strip = n0 < strip_max ? n0 : strip_max;
	p.nstrips = (n0 + p.strip - 1) / p.strip;
	int64_t units = nout / n0 * p.nstrips, per = p.strip * p.wn;
	eval_parallel(threads, units, per ? min_per / per + 1 : units, win_units, &p);
	return 0;
}

/* --- combining arrays ------------------------------------------------------------- */

int fast_combine(opcode op, etype t, void *acc, const void *x, int64_t n)
{
	const rf_kernels *k = rf_lookup(op, t, 1);
	if (!k)
		return 1;
	if (n > 0)
		k->col(acc, x, n, 1);
	return 0;
}
