/* The fast engine (SPEC §9): per operand, strides in the output's physical
 * order (0 on broadcast dimensions), adjacent dimensions merged while every
 * array stays contiguous, inner loops specialised per (op, type) for the
 * common stride patterns from eval/scalar.h's per-element semantics, cache
 * tiles when an operand's layout disagrees with the result's, and threads
 * over the outermost dimension. Bit-identical to the reference engine. */
#include <pthread.h>
#include <stdatomic.h>
#include <string.h>
#include <unistd.h>

#include "core/index.h"
#include "eval/engine.h"
#include "eval/fast.h"
#include "eval/scalar.h"
#include "util/alloc.h"

/* Below this many elements per thread, another thread does not pay. */
#define FAST_MIN_PER_THREAD ((int64_t)1 << 16)
/* Results at least this large are written with non-temporal stores: larger
 * than a core's share of the last-level cache, they would only evict the
 * operands on their way to memory. */
#define FAST_STREAM_BYTES ((int64_t)8 << 20)
/* Tiles when an operand's layout disagrees with the result's: FAST_TILE
 * elements along the result's innermost dimension (runs of the result and
 * of operands in its layout), as many along the strided operand's dense
 * dimension as fit FAST_TILE_BYTES (its runs: 1024 elements of 4 bytes), so
 * that a gathered tile stays in L2. Chosen by measurement (64 x 1024 beat
 * square tiles of 64 to 256 and streaming stores). */
#define FAST_TILE 64
#define FAST_TILE_BYTES ((int64_t)256 << 10)
/* In tiles, the rows this many ahead are prefetched: each row is a short
 * run (FAST_TILE elements) far from the last, too short for the hardware
 * prefetcher; measured 21 -> 16 ms on one thread for colmajor. */
#define FAST_PREFETCH_ROWS 8
/* The staging chunk of a thread, in bytes. */
#define FAST_CHUNK_MAX 4096
#define FAST_MAX_THREADS 64
/* Contiguous loops run in multiples of this many elements, then a tail, so
 * that gcc -O2 (very cheap cost model) vectorises them. */
#define FAST_VEC 32

/* An inner loop: n elements, element strides so/sa/sb (b unused for copies,
 * d and t only for compare). */
typedef void (*fk_fn)(void *o, const void *a, const void *b, int64_t n, int64_t so, int64_t sa, int64_t sb,
		      cmp_direction d, cmp_type t);

/* --- kernels ---------------------------------------------------------------- */

/* The four stride patterns: all contiguous, a broadcast lhs (stride 0), a
 * broadcast rhs, anything else. EXPR(x, y) computes one element. */
#define FK_LOOPS(EXPR)                                                         \
	do {                                                                   \
		int64_t nv = n & ~(int64_t)(FAST_VEC - 1), i = 0;              \
		if (so == 1 && sa == 1 && sb == 1) {                           \
			for (i = 0; i < nv; i++)                               \
				o[i] = EXPR(a[i], b[i]);                       \
			for (; i < n; i++)                                     \
				o[i] = EXPR(a[i], b[i]);                       \
		} else if (so == 1 && sa == 0 && sb == 1) {                    \
			const T x0 = a[0];                                     \
			for (i = 0; i < nv; i++)                               \
				o[i] = EXPR(x0, b[i]);                         \
			for (; i < n; i++)                                     \
				o[i] = EXPR(x0, b[i]);                         \
		} else if (so == 1 && sa == 1 && sb == 0) {                    \
			const T y0 = b[0];                                     \
			for (i = 0; i < nv; i++)                               \
				o[i] = EXPR(a[i], y0);                         \
			for (; i < n; i++)                                     \
				o[i] = EXPR(a[i], y0);                         \
		} else {                                                       \
			for (i = 0; i < n; i++)                                \
				o[i * so] = EXPR(a[i * sa], b[i * sb]);        \
		}                                                              \
	} while (0)

#define FK_BIN(OPC, fn, E, T_)                                                              \
	static void fk_##fn##_##E(void *restrict vo, const void *restrict va, const void *restrict vb, int64_t n, int64_t so, \
				  int64_t sa, int64_t sb, cmp_direction d, cmp_type t)     \
	{                                                                                   \
		typedef T_ T;                                                               \
		T *restrict o = vo;                                                         \
		const T *restrict a = va;                                                   \
		const T *restrict b = vb;                                                   \
		(void)d;                                                                    \
		(void)t;                                                                    \
		FK_LOOPS(sc_##fn##_##E);                                                    \
	}

/* Compare: the direction and the usual comparison types are made compile-time
 * constants so the loops vectorise; anything else takes the generic loop. */
#define FK_CMP_SWITCH(E, TT)                                                   \
	switch (d) {                                                           \
	case CMP_EQ: FK_LOOPS(FKC_##TT##_EQ_##E); return;                      \
	case CMP_NE: FK_LOOPS(FKC_##TT##_NE_##E); return;                      \
	case CMP_LT: FK_LOOPS(FKC_##TT##_LT_##E); return;                      \
	case CMP_LE: FK_LOOPS(FKC_##TT##_LE_##E); return;                      \
	case CMP_GT: FK_LOOPS(FKC_##TT##_GT_##E); return;                      \
	case CMP_GE: FK_LOOPS(FKC_##TT##_GE_##E); return;                      \
	default: break;                                                        \
	}

/* One inline function per (type, comparison type, direction). */
#define FKC_DEF1(E, T_, TT, D)                                                 \
	static inline uint8_t FKC_##TT##_##D##_##E(T_ x, T_ y)                 \
	{                                                                      \
		return sc_compare_##E(x, y, CMP_##D, CMPT_##TT);               \
	}
#define FKC_DEFS(E, T_, TT)                                                    \
	FKC_DEF1(E, T_, TT, EQ) FKC_DEF1(E, T_, TT, NE) FKC_DEF1(E, T_, TT, LT) \
	FKC_DEF1(E, T_, TT, LE) FKC_DEF1(E, T_, TT, GT) FKC_DEF1(E, T_, TT, GE)

#define FK_CMP_HEAD(E, T_)                                                     \
	static void fkc_##E(void *restrict vo, const void *restrict va, const void *restrict vb, int64_t n, int64_t so, \
			    int64_t sa, int64_t sb, cmp_direction d, cmp_type t) \
	{                                                                      \
		typedef T_ T;                                                  \
		uint8_t *restrict o = vo;                                      \
		const T *restrict a = va;                                      \
		const T *restrict b = vb;
#define FK_CMP_TAIL(E)                                                         \
		if (so == 1 && sa == 1 && sb == 1) {                           \
			for (int64_t i = 0; i < n; i++)                        \
				o[i] = sc_compare_##E(a[i], b[i], d, t);       \
		} else {                                                       \
			for (int64_t i = 0; i < n; i++)                        \
				o[i * so] = sc_compare_##E(a[i * sa], b[i * sb], d, t); \
		}                                                              \
	}

#define FK_CMP_KIND_FLOAT(E, T_)                                               \
	FKC_DEFS(E, T_, FLOAT) FKC_DEFS(E, T_, TOTALORDER)                      \
	FK_CMP_HEAD(E, T_)                                                     \
		if (t == CMPT_FLOAT)                                           \
			FK_CMP_SWITCH(E, FLOAT)                                \
		if (t == CMPT_TOTALORDER)                                      \
			FK_CMP_SWITCH(E, TOTALORDER)                           \
	FK_CMP_TAIL(E)
#define FK_CMP_KIND_SINT(E, T_)                                                \
	FKC_DEFS(E, T_, SIGNED)                                                \
	FK_CMP_HEAD(E, T_)                                                     \
		if (t == CMPT_SIGNED)                                          \
			FK_CMP_SWITCH(E, SIGNED)                               \
	FK_CMP_TAIL(E)
#define FK_CMP_KIND_UINT(E, T_)                                                \
	FKC_DEFS(E, T_, UNSIGNED)                                              \
	FK_CMP_HEAD(E, T_)                                                     \
		if (t == CMPT_UNSIGNED)                                        \
			FK_CMP_SWITCH(E, UNSIGNED)                             \
	FK_CMP_TAIL(E)
#define FK_CMP_KIND_PRED(E, T_) FK_CMP_KIND_UINT(E, T_)
#define FK_CMP_KIND_COMPLEX(E, T_)                                             \
	FKC_DEFS(E, T_, FLOAT)                                                 \
	FK_CMP_HEAD(E, T_)                                                     \
		if (t == CMPT_FLOAT)                                           \
			FK_CMP_SWITCH(E, FLOAT)                                \
	FK_CMP_TAIL(E)

#define FK_ROW_EVAL(E, T_, kind) SC_OPS_##kind(FK_BIN, E, T_) FK_CMP_##kind(E, T_)
#define FK_ROW_NOEVAL(E, T_, kind)
#define X(E, name, num, width, kind, ctype, ev, npy) FK_ROW_##ev(E, ctype, kind)
#include "core/types.def"
#undef X

/* Copies (the broadcast instruction), per element width. */
#define FK_COPY(W, T_)                                                                      \
	static void fk_copy_##W(void *restrict vo, const void *restrict va, const void *restrict vb, int64_t n, int64_t so,  \
				int64_t sa, int64_t sb, cmp_direction d, cmp_type t)      \
	{                                                                                   \
		T_ *restrict o = vo;                                                        \
		const T_ *restrict a = va;                                                  \
		(void)vb;                                                                   \
		(void)sb;                                                                   \
		(void)d;                                                                    \
		(void)t;                                                                    \
		if (so == 1 && sa == 1) {                                                   \
			memcpy(o, a, (size_t)n * sizeof *o);                                \
		} else if (so == 1 && sa == 0) {                                            \
			const T_ x0 = a[0];                                                 \
			for (int64_t i = 0; i < n; i++)                                     \
				o[i] = x0;                                                  \
		} else {                                                                    \
			for (int64_t i = 0; i < n; i++)                                     \
				o[i * so] = a[i * sa];                                      \
		}                                                                           \
	}
FK_COPY(1, uint8_t)
FK_COPY(2, uint16_t)
FK_COPY(4, uint32_t)
FK_COPY(8, uint64_t)
/* 16 bytes (c128), moved as a pair of words: bits, never values. */
typedef struct fk_w16 {
	uint64_t w[2];
} fk_w16;
FK_COPY(16, fk_w16)

static fk_fn binop_kernel(opcode op, etype t)
{
#define CASE(OPC, fn, E, T) \
	case OP_##OPC:      \
		return fk_##fn##_##E;
#define ROW_EVAL(E, T, kind)                      \
	case ET_##E:                              \
		switch (op) {                     \
			SC_OPS_##kind(CASE, E, T) \
		default:                          \
			return NULL;              \
		}
#define ROW_NOEVAL(E, T, kind)
	switch (t) {
#define X(E, name, num, width, kind, ctype, ev, npy) ROW_##ev(E, ctype, kind)
#include "core/types.def"
#undef X
	default:
		return NULL;
	}
#undef ROW_EVAL
#undef ROW_NOEVAL
#undef CASE
}

static fk_fn compare_kernel(etype t)
{
#define ROW_EVAL(E, T, kind) \
	case ET_##E:         \
		return fkc_##E;
#define ROW_NOEVAL(E, T, kind)
	switch (t) {
#define X(E, name, num, width, kind, ctype, ev, npy) ROW_##ev(E, ctype, kind)
#include "core/types.def"
#undef X
	default:
		return NULL;
	}
#undef ROW_EVAL
#undef ROW_NOEVAL
}

static fk_fn copy_kernel(int width)
{
	switch (width) {
	case 1: return fk_copy_1;
	case 2: return fk_copy_2;
	case 4: return fk_copy_4;
	case 8: return fk_copy_8;
	case 16: return fk_copy_16;
	default: return NULL;
	}
}

/* --- writing results --------------------------------------------------------- */

/* Non-temporal stores, where the compiler offers them: a result larger than
 * the caches is written without first reading its lines (no
 * read-for-ownership), which saves a third of the memory traffic of a
 * binary op. Elsewhere the staging copy is a memcpy. */
#if defined(__SSE2__)
#include <emmintrin.h>
#include <xmmintrin.h>
#define FAST_HAVE_STREAM 1
#else
#define FAST_HAVE_STREAM 0
#endif

static void copy_out(char *dst, const char *src, size_t bytes, int stream)
{
#if FAST_HAVE_STREAM
	if (stream) {
		while (bytes && ((uintptr_t)dst & 15)) {
			*dst++ = *src++;
			bytes--;
		}
		for (; bytes >= 16; bytes -= 16, dst += 16, src += 16)
			_mm_stream_si128((__m128i *)(void *)dst, _mm_loadu_si128((const __m128i *)(const void *)src));
		if (bytes)
			memcpy(dst, src, bytes);
		return;
	}
#else
	(void)stream;
#endif
	memcpy(dst, src, bytes);
}

static void stream_fence(void)
{
#if FAST_HAVE_STREAM
	_mm_sfence();
#endif
}

/* --- the plan: merged dimensions in the output's physical order ------------ */

typedef struct plan {
	int rank;                         /* >= 1 */
	int64_t n[HLOI_MAX_RANK];         /* dimension 0 is the innermost */
	int64_t st[3][HLOI_MAX_RANK];     /* element strides: out, a, b */
	int64_t w[3];                     /* element bytes */
	char *base[3];
	int tiled;                        /* dims 0 and 1 are traversed in tiles */
	int pack[3];                      /* tiled: operand x is gathered per tile */
	int64_t block;                    /* tile side along dimension 0 (elements) */
	int64_t block1;                   /* ... and along dimension 1 */
	int staged;                       /* rows go through a staging chunk */
	int stream;                       /* ... and out with non-temporal stores */
	int64_t chunk;                    /* staging chunk in output elements */
	fk_fn fn;
	cmp_direction d;
	cmp_type t;
} plan;

/* Per-thread scratch: the staging chunk and the tiles of gathered operands. */
typedef struct scratch {
	char *tile[3];
	char stage[FAST_CHUNK_MAX] __attribute__((aligned(64)));
} scratch;


/* n output elements at o (element stride so), operands at a and b with
 * element strides sa and sb. Staged plans (so is then 1) compute a chunk at a time into the
 * thread's staging buffer and copy it out, so the kernel never writes
 * memory an operand reads (in-place results) and large results can be
 * streamed. */
static void row(const plan *p, scratch *sc, char *o, const char *a, const char *b, int64_t n, int64_t so,
		int64_t sa, int64_t sb)
{
	if (!p->staged) {
		p->fn(o, a, b, n, so, sa, sb, p->d, p->t);
		return;
	}
	int64_t wo = p->w[0], wa = p->w[1], wb = p->w[2], c = p->chunk;
	for (int64_t i = 0; i < n; i += c) {
		int64_t len = n - i < c ? n - i : c;
		p->fn(sc->stage, a + i * sa * wa, b + i * sb * wb, len, 1, sa, sb, p->d, p->t);
		copy_out(o + i * wo, sc->stage, (size_t)(len * wo), p->stream);
	}
}

/* Gathers an ni x nj block of operand x (strides s0 along dimension 0, s1
 * along dimension 1) into dst[j * B + i]: reads follow the operand's own
 * memory order, the writes stay in the cache. */
#define FAST_GATHER(T_)                                                                        \
	do {                                                                                   \
		T_ *restrict t = (T_ *)(void *)dst;                                            \
		const T_ *restrict q = (const T_ *)(const void *)src;                          \
		for (int64_t i = 0; i < ni; i++)                                               \
			for (int64_t j = 0; j < nj; j++)                                       \
				t[j * B + i] = q[i * s0 + j * s1];                             \
	} while (0)

#if FAST_HAVE_STREAM
/* 4-byte elements contiguous along j (s1 == 1): 4 x 4 blocks transposed in
 * registers; the edges element by element. */
static void gather4_sse(char *dst, const char *src, int64_t ni, int64_t nj, int64_t s0, int64_t B)
{
	float *t = (float *)(void *)dst;
	const float *q = (const float *)(const void *)src;
	int64_t i = 0;
	for (; i + 4 <= ni; i += 4) {
		int64_t j = 0;
		for (; j + 4 <= nj; j += 4) {
			__m128 r0 = _mm_loadu_ps(q + (i + 0) * s0 + j);
			__m128 r1 = _mm_loadu_ps(q + (i + 1) * s0 + j);
			__m128 r2 = _mm_loadu_ps(q + (i + 2) * s0 + j);
			__m128 r3 = _mm_loadu_ps(q + (i + 3) * s0 + j);
			_MM_TRANSPOSE4_PS(r0, r1, r2, r3);
			_mm_storeu_ps(t + (j + 0) * B + i, r0);
			_mm_storeu_ps(t + (j + 1) * B + i, r1);
			_mm_storeu_ps(t + (j + 2) * B + i, r2);
			_mm_storeu_ps(t + (j + 3) * B + i, r3);
		}
		for (; j < nj; j++)
			for (int64_t k = 0; k < 4; k++)
				t[j * B + i + k] = q[(i + k) * s0 + j];
	}
	for (; i < ni; i++)
		for (int64_t j = 0; j < nj; j++)
			t[j * B + i] = q[i * s0 + j];
}

/* The same for 8-byte elements, 2 x 2 blocks. */
static void gather8_sse(char *dst, const char *src, int64_t ni, int64_t nj, int64_t s0, int64_t B)
{
	double *t = (double *)(void *)dst;
	const double *q = (const double *)(const void *)src;
	int64_t i = 0;
	for (; i + 2 <= ni; i += 2) {
		int64_t j = 0;
		for (; j + 2 <= nj; j += 2) {
			__m128d r0 = _mm_loadu_pd(q + i * s0 + j);
			__m128d r1 = _mm_loadu_pd(q + (i + 1) * s0 + j);
			_mm_storeu_pd(t + j * B + i, _mm_unpacklo_pd(r0, r1));
			_mm_storeu_pd(t + (j + 1) * B + i, _mm_unpackhi_pd(r0, r1));
		}
		for (; j < nj; j++) {
			t[j * B + i] = q[i * s0 + j];
			t[j * B + i + 1] = q[(i + 1) * s0 + j];
		}
	}
	for (; i < ni; i++)
		for (int64_t j = 0; j < nj; j++)
			t[j * B + i] = q[i * s0 + j];
}
#endif

/* Bits are moved, never values: floats (NaN payloads included) arrive as
 * they were. */
static void gather(char *dst, const char *src, int64_t w, int64_t ni, int64_t nj, int64_t s0, int64_t s1,
		   int64_t B)
{
#if FAST_HAVE_STREAM
	if (s1 == 1 && w == 4) {
		gather4_sse(dst, src, ni, nj, s0, B);
		return;
	}
	if (s1 == 1 && w == 8) {
		gather8_sse(dst, src, ni, nj, s0, B);
		return;
	}
#endif
	switch (w) {
	case 1: FAST_GATHER(uint8_t); break;
	case 2: FAST_GATHER(uint16_t); break;
	case 4: FAST_GATHER(uint32_t); break;
	case 8: FAST_GATHER(uint64_t); break;
	default: FAST_GATHER(fk_w16); break;
	}
}

/* Prefetches the cache lines of a run of n elements of w bytes at p
 * (for writing when `write`). */
static inline void prefetch_run(const char *p, int64_t n, int64_t w, int write)
{
#if defined(__GNUC__)
	for (int64_t k = 0; k < n * w; k += 64) {
		if (write)
			__builtin_prefetch(p + k, 1);
		else
			__builtin_prefetch(p + k, 0);
	}
#else
	(void)p, (void)n, (void)w, (void)write;
#endif
}

/* The innermost loop over dimension 0 (or, tiled, dimensions 0 and 1 with
 * dimension 1 restricted to [lo, hi)); pointers at the block's origin. */
static void leaf(const plan *p, scratch *sc, char *o, const char *a, const char *b, int64_t lo, int64_t hi)
{
	const int64_t *so = p->st[0], *sa = p->st[1], *sb = p->st[2];
	int64_t wo = p->w[0], wa = p->w[1], wb = p->w[2];
	if (!p->tiled) {
		row(p, sc, o + lo * so[0] * wo, a + lo * sa[0] * wa, b + lo * sb[0] * wb, hi - lo, so[0], sa[0],
		    sb[0]);
		return;
	}
	/* B x B1 tiles of dimensions 0 and 1. An operand strided along
	 * dimension 0 is gathered per tile (when its scratch exists) so that
	 * every row below is contiguous; the output is written row by row. */
	int64_t B = p->block, B1 = p->block1, n0 = p->n[0];
	const char *src[3] = { o, a, b };
	for (int64_t j0 = lo; j0 < hi; j0 += B1) {
		int64_t nj = j0 + B1 < hi ? B1 : hi - j0;
		for (int64_t i0 = 0; i0 < n0; i0 += B) {
			int64_t ni = i0 + B < n0 ? B : n0 - i0;
			int packed[3] = { 0, 0, 0 };
			for (int x = 1; x <= 2; x++) {
				if (p->pack[x] && sc->tile[x]) {
					gather(sc->tile[x], src[x] + (i0 * p->st[x][0] + j0 * p->st[x][1]) * p->w[x],
					       p->w[x], ni, nj, p->st[x][0], p->st[x][1], B);
					packed[x] = 1;
				}
			}
			for (int64_t j = 0; j < nj; j++) {
				int64_t jp = j0 + j + FAST_PREFETCH_ROWS;
				if (j + FAST_PREFETCH_ROWS < nj) {
					if (so[0] == 1)
						prefetch_run(o + (i0 * so[0] + jp * so[1]) * wo, ni, wo, 1);
					if (!packed[1] && sa[0] == 1)
						prefetch_run(a + (i0 * sa[0] + jp * sa[1]) * wa, ni, wa, 0);
					if (!packed[2] && sb[0] == 1)
						prefetch_run(b + (i0 * sb[0] + jp * sb[1]) * wb, ni, wb, 0);
				}
				const char *ra = packed[1] ? sc->tile[1] + j * B * wa
							   : a + (i0 * sa[0] + (j0 + j) * sa[1]) * wa;
				const char *rb = packed[2] ? sc->tile[2] + j * B * wb
							   : b + (i0 * sb[0] + (j0 + j) * sb[1]) * wb;
				row(p, sc, o + (i0 * so[0] + (j0 + j) * so[1]) * wo, ra, rb, ni, so[0],
				    packed[1] ? 1 : sa[0], packed[2] ? 1 : sb[0]);
			}
		}
	}
}

/* Runs the plan for the outermost dimension's indices [lo, hi). */
static void run_range(const plan *p, scratch *sc, int64_t lo, int64_t hi)
{
	int inner = p->tiled ? 2 : 1, top = p->rank - 1;
	if (lo >= hi)
		return;
	if (top < inner) {
		leaf(p, sc, p->base[0], p->base[1], p->base[2], lo, hi);
		return;
	}
	int64_t idx[HLOI_MAX_RANK];
	memset(idx, 0, sizeof idx);
	idx[top] = lo;
	for (;;) {
		int64_t off[3] = { 0, 0, 0 };
		for (int x = 0; x < 3; x++) {
			for (int d = inner; d <= top; d++)
				off[x] += idx[d] * p->st[x][d];
			off[x] *= p->w[x];
		}
		leaf(p, sc, p->base[0] + off[0], p->base[1] + off[1], p->base[2] + off[2], 0, p->n[inner - 1]);
		int d = inner;
		for (; d < top; d++) {
			if (++idx[d] < p->n[d])
				break;
			idx[d] = 0;
		}
		if (d == top && ++idx[top] >= hi)
			break;
	}
}

typedef struct job {
	const plan *p;
	int64_t lo, hi;
} job;

static void *worker(void *arg)
{
	const job *j = arg;
	const plan *p = j->p;
	scratch sc;
	/* a tile that cannot be allocated leaves its operand strided */
	for (int x = 0; x < 3; x++)
		sc.tile[x] = p->pack[x] ? hloi_aligned_alloc((size_t)(p->block * p->block1 * p->w[x])) : NULL;
	run_range(p, &sc, j->lo, j->hi);
	if (p->stream)
		stream_fence();
	for (int x = 0; x < 3; x++)
		hloi_aligned_free(sc.tile[x]);
	return NULL;
}

/* Asked once: sysconf reads a file each time, three system calls that
 * cost more than a small instruction (they dominated while loops). */
static int machine_threads(void)
{
	static _Atomic int cached;
	int c = atomic_load_explicit(&cached, memory_order_relaxed);
	if (c == 0) {
		long n = sysconf(_SC_NPROCESSORS_ONLN);
		c = n < 1 ? 1 : n > FAST_MAX_THREADS ? FAST_MAX_THREADS : (int)n;
		atomic_store_explicit(&cached, c, memory_order_relaxed);
	}
	return c;
}

/* Runs the plan on up to `threads` threads (fewer when there is too little
 * work); a thread that cannot be started has its share run here. */
static void run_threads(const plan *p, int64_t total, int threads, int64_t min_per_thread)
{
	int64_t top = p->n[p->rank - 1];
	int64_t nt = threads > 0 ? threads : machine_threads();
	if (nt > FAST_MAX_THREADS)
		nt = FAST_MAX_THREADS;
	if (min_per_thread < 1)
		min_per_thread = 1;
	if (nt > total / min_per_thread)
		nt = total / min_per_thread;
	/* Tiled plans whose outer dimension is a tile side split on tile edges. */
	int64_t unit = p->tiled && p->rank == 2 ? p->block1 : 1;
	int64_t units = (top + unit - 1) / unit;
	if (nt > units)
		nt = units;
	if (nt < 1)
		nt = 1;
	pthread_t tid[FAST_MAX_THREADS];
	job jobs[FAST_MAX_THREADS];
	int started[FAST_MAX_THREADS];
	for (int64_t k = 0; k < nt; k++) {
		int64_t lo = units * k / nt * unit, hi = units * (k + 1) / nt * unit;
		jobs[k].p = p;
		jobs[k].lo = lo;
		jobs[k].hi = hi < top ? hi : top;
		started[k] = 0;
	}
	for (int64_t k = 1; k < nt; k++)
		started[k] = pthread_create(&tid[k], NULL, worker, &jobs[k]) == 0;
	worker(&jobs[0]);
	for (int64_t k = 1; k < nt; k++) {
		if (started[k])
			pthread_join(tid[k], NULL);
		else
			worker(&jobs[k]);
	}
}

void fast_default_tuning(fast_tuning *t)
{
	t->stream_bytes = FAST_STREAM_BYTES;
	t->tile = FAST_TILE;
	t->tile_bytes = FAST_TILE_BYTES;
	t->chunk_bytes = FAST_CHUNK_MAX;
	t->min_per_thread = FAST_MIN_PER_THREAD;
}

int fast_elementwise(const instr *in, hloi_literal *out, hloi_literal *const *ops, int threads,
		     const fast_tuning *tuning)
{
	fast_tuning deflt;
	if (!tuning) {
		fast_default_tuning(&deflt);
		tuning = &deflt;
	}
	const shape *os = &out->shape;
	int nops = in->nops;
	plan p;
	memset(&p, 0, sizeof p);
	if (nops < 1 || nops > 2 || os->rank > HLOI_MAX_RANK || shape_is_tuple(os))
		return 1;
	for (int k = 0; k < nops; k++)
		if (!ops[k] || shape_is_tuple(&ops[k]->shape) || ops[k]->shape.rank > os->rank)
			return 1;
	/* not covered when tiled: positions are not strides (core/index.h) */
	if (!index_is_strided(os))
		return 1;
	for (int k = 0; k < nops; k++)
		if (!index_is_strided(&ops[k]->shape))
			return 1;
	if (in->op == OP_BROADCAST || in->op == OP_COPY ||
	    (in->op == OP_BITCAST_CONVERT && etype_byte_width(os->type) == etype_byte_width(ops[0]->shape.type) &&
	     etype_bit_width(os->type) == 8 * etype_byte_width(os->type))) {
		/* element copies: a broadcast, a copy into another layout, bits
		 * reinterpreted in place */
		if (nops != 1)
			return 1;
		p.fn = copy_kernel(etype_byte_width(os->type));
	} else if (in->op == OP_COMPARE) {
		etype t = ops[0]->shape.type;
		if (nops != 2 || os->type != ET_PRED)
			return 1;
		p.fn = compare_kernel(t);
		p.d = instr_direction(in);
		p.t = eval_cmp_type(in, t);
	} else {
		if (nops != 2)
			return 1;
		p.fn = binop_kernel(in->op, os->type);
	}
	if (!p.fn)
		return 1;
	int64_t total;
	if (shape_element_count(os, &total))
		return 1;
	if (total == 0)
		return 0;
	if (!out->data)
		return 1;

	/* Strides per result dimension: out, then each operand (0 where it is
	 * broadcast or has size 1). */
	int64_t full[3][HLOI_MAX_RANK];
	memset(full, 0, sizeof full);
	index_strides(os, full[0]);
	p.w[0] = etype_byte_width(os->type);
	p.base[0] = out->data;
	for (int k = 0; k < nops; k++) {
		const shape *s = &ops[k]->shape;
		int64_t st[HLOI_MAX_RANK];
		index_strides(s, st);
		for (int j = 0; j < s->rank; j++) {
			int d = in->ops[k].out_dim[j];
			if (d < 0 || d >= os->rank)
				return 1;
			if (s->dims[j] != 1) {
				if (s->dims[j] != os->dims[d])
					return 1;
				full[k + 1][d] = st[j];
			}
		}
		p.w[k + 1] = etype_byte_width(s->type);
		p.base[k + 1] = ops[k]->data;
		if (!ops[k]->data)
			return 1;
	}
	if (nops == 1) {
		p.w[2] = p.w[1];
		p.base[2] = p.base[1];
	}

	/* Physical order of the output, size-1 dims dropped, neighbours merged. */
	int r = 0;
	for (int i = 0; i < os->rank; i++) {
		int d = (int)os->layout.minor_to_major[i];
		if (os->dims[d] == 1)
			continue;
		if (r > 0) {
			int merge = 1;
			for (int x = 0; x < 3; x++)
				if (full[x][d] != p.st[x][r - 1] * p.n[r - 1])
					merge = 0;
			if (merge) {
				p.n[r - 1] *= os->dims[d];
				continue;
			}
		}
		p.n[r] = os->dims[d];
		for (int x = 0; x < 3; x++)
			p.st[x][r] = full[x][d];
		r++;
	}
	if (r == 0) {
		p.n[0] = 1;
		p.st[0][0] = p.st[1][0] = p.st[2][0] = 1;
		r = 1;
	}
	p.rank = r;

	/* An operand strided along the output's inner dimension (a layout that
	 * disagrees with the result's): traverse dimension 0 and the dimension
	 * along which that operand is densest in tiles, gathering each strided
	 * operand's tile so that rows are read and written contiguously. */
	if (r >= 2 && p.st[0][0] == 1) {
		int q = -1;
		for (int x = 1; x <= nops && q < 0; x++) {
			int64_t s0 = p.st[x][0];
			if (s0 == 0 || s0 == 1)
				continue;
			int64_t best = s0;
			for (int d = 1; d < r; d++)
				if (p.st[x][d] != 0 && p.st[x][d] < best) {
					best = p.st[x][d];
					q = d;
				}
		}
		if (q > 0) {
			/* Move dimension q to position 1, keeping the others' order. */
			int64_t n = p.n[q], s[3];
			for (int x = 0; x < 3; x++)
				s[x] = p.st[x][q];
			for (int d = q; d > 1; d--) {
				p.n[d] = p.n[d - 1];
				for (int x = 0; x < 3; x++)
					p.st[x][d] = p.st[x][d - 1];
			}
			p.n[1] = n;
			for (int x = 0; x < 3; x++)
				p.st[x][1] = s[x];
			p.tiled = 1;
			int64_t wmax = p.w[0] > p.w[1] ? p.w[0] : p.w[1];
			if (p.w[2] > wmax)
				wmax = p.w[2];
			p.block = tuning->tile > 0 ? tuning->tile : FAST_TILE;
			p.block1 = (tuning->tile_bytes > 0 ? tuning->tile_bytes : FAST_TILE_BYTES) / (p.block * wmax);
			if (p.block1 < 1)
				p.block1 = 1;
			for (int x = 1; x <= nops; x++)
				p.pack[x] = p.st[x][0] != 0 && p.st[x][0] != 1;
		}
	}

	/* A result that shares its buffer with an operand (in place) must be
	 * read at the position it is written: equal strides everywhere. Rows
	 * then go through the staging chunk, as do streamed results. */
	int inplace = 0;
	for (int x = 1; x <= nops; x++) {
		if (ops[x - 1]->data != out->data)
			continue;
		if (p.w[x] != p.w[0] || p.pack[x])
			return 1;
		for (int d = 0; d < p.rank; d++)
			if (p.st[x][d] != p.st[0][d])
				return 1;
		inplace = 1;
	}
	/* (Size-1 dimensions with padding leave the innermost stride above 1:
	 * such results are written directly.) */
	if (inplace && p.st[0][0] != 1)
		return 1;
	int64_t obytes = (int64_t)out->nbytes;
	/* Tiled plans write short runs of many rows: streaming stores lose
	 * there (measured), so they keep the cache's write-back. */
	p.stream = FAST_HAVE_STREAM && obytes >= tuning->stream_bytes && p.st[0][0] == 1 && !p.tiled;
	p.staged = inplace || p.stream;
	int64_t cb = tuning->chunk_bytes > 0 && tuning->chunk_bytes < FAST_CHUNK_MAX ? tuning->chunk_bytes
										     : FAST_CHUNK_MAX;
	p.chunk = cb / p.w[0] > 0 ? cb / p.w[0] : 1;
	run_threads(&p, total, threads, tuning->min_per_thread);
	return 0;
}

/* --- strided copies (the data-movement ops) ------------------------------------ */

int fast_copy(void *dst, const int64_t *ds, const void *src, const int64_t *ss, const int64_t *n, int rank, int w,
	      int threads, const fast_tuning *tuning)
{
	fast_tuning deflt;
	if (!tuning) {
		fast_default_tuning(&deflt);
		tuning = &deflt;
	}
	plan p;
	memset(&p, 0, sizeof p);
	p.fn = copy_kernel(w);
	if (!p.fn || rank < 0 || rank > HLOI_MAX_RANK)
		return 1;
	int64_t total = 1;
	for (int d = 0; d < rank; d++) {
		if (n[d] < 0)
			return 1;
		total *= n[d];
	}
	if (total == 0)
		return 0;
	char *o = dst;
	const char *a = src;
	/* Dimensions of more than one element in dst's memory order (a
	 * negative dst stride is turned around together with src's: a copy
	 * may visit its pairs in any order), neighbours merged. */
	int order[HLOI_MAX_RANK], r = 0;
	int64_t dsv[HLOI_MAX_RANK], ssv[HLOI_MAX_RANK];
	for (int d = 0; d < rank; d++) {
		dsv[d] = ds[d];
		ssv[d] = ss[d];
		if (n[d] == 1)
			continue;
		if (dsv[d] < 0) {
			o += (n[d] - 1) * dsv[d] * w;
			a += (n[d] - 1) * ssv[d] * w;
			dsv[d] = -dsv[d];
			ssv[d] = -ssv[d];
		}
		int k = r++;
		while (k > 0 && dsv[order[k - 1]] > dsv[d]) {
			order[k] = order[k - 1];
			k--;
		}
		order[k] = d;
	}
	int pr = 0;
	for (int i = 0; i < r; i++) {
		int d = order[i];
		if (pr > 0 && dsv[d] == p.st[0][pr - 1] * p.n[pr - 1] && ssv[d] == p.st[1][pr - 1] * p.n[pr - 1]) {
			p.n[pr - 1] *= n[d];
			continue;
		}
		p.n[pr] = n[d];
		p.st[0][pr] = dsv[d];
		p.st[1][pr] = p.st[2][pr] = ssv[d];
		pr++;
	}
	if (pr == 0) {
		p.n[0] = 1;
		p.st[0][0] = p.st[1][0] = p.st[2][0] = 1;
		pr = 1;
	}
	p.rank = pr;
	p.w[0] = p.w[1] = p.w[2] = w;
	p.base[0] = o;
	p.base[1] = p.base[2] = (char *)(uintptr_t)a;

	/* src strided along dst's inner dimension: tiles along the dimension
	 * where src is densest, gathered (as fast_elementwise does). */
	int64_t s0 = p.st[1][0] < 0 ? -p.st[1][0] : p.st[1][0];
	if (pr >= 2 && p.st[0][0] == 1 && s0 > 1) {
		int q = -1;
		int64_t best = s0;
		for (int d = 1; d < pr; d++) {
			int64_t sd = p.st[1][d] < 0 ? -p.st[1][d] : p.st[1][d];
			if (sd != 0 && sd < best) {
				best = sd;
				q = d;
			}
		}
		if (q > 0) {
			int64_t nq = p.n[q], sq[3];
			for (int x = 0; x < 3; x++)
				sq[x] = p.st[x][q];
			for (int d = q; d > 1; d--) {
				p.n[d] = p.n[d - 1];
				for (int x = 0; x < 3; x++)
					p.st[x][d] = p.st[x][d - 1];
			}
			p.n[1] = nq;
			for (int x = 0; x < 3; x++)
				p.st[x][1] = sq[x];
			p.tiled = 1;
			p.block = tuning->tile > 0 ? tuning->tile : FAST_TILE;
			p.block1 = (tuning->tile_bytes > 0 ? tuning->tile_bytes : FAST_TILE_BYTES) / (p.block * w);
			if (p.block1 < 1)
				p.block1 = 1;
			p.pack[1] = 1;
		}
	}
	/* No streaming stores: copies written through the cache measured 2-3x
	 * faster than staged non-temporal stores (tests/bench, 2-core EPYC). */
	p.stream = 0;
	p.staged = 0;
	p.chunk = FAST_CHUNK_MAX / w;
	run_threads(&p, total, threads, tuning->min_per_thread);
	return 0;
}
