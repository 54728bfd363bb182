/* Row kernels of the fast engine: one function per (op, element type) made
 * from eval/scalar/scalar.h's per-element semantics, over a row of n elements whose
 * arguments have stride 0 or 1. Contiguous loops run in multiples of FX_VEC
 * elements and then a tail, so that gcc -O2 (its very cheap cost model)
 * vectorises them. Also the bit movers of the executor: copies, fills,
 * strided scatters, tile gathers with register transposes, streaming stores.
 *
 * The same scalar functions serve the reference engine, so results agree
 * bit for bit; a conversion without a kernel of its own goes through the
 * sc_read/sc_write carrier, and an op without any through the reference
 * engine's element loop on the row (fx_generic_row). */
#include <stdatomic.h>
#include <string.h>

#include "core/index.h"
#include "eval/fast/fx.h"
#include "eval/scalar/clones.h"
#include "eval/scalar/reference.h"
#include "eval/scalar/scalar.h"

#define FX_VEC 32

/* --- binary ops --------------------------------------------------------------- */

/* The four stride patterns of two arguments (strides are 0 or 1). */
#define RB_LOOPS(EXPR)                                                         \
	do {                                                                   \
		int64_t nv = n & ~(int64_t)(FX_VEC - 1), i = 0;                \
		if (sa == 1 && sb == 1) {                                      \
			for (i = 0; i < nv; i++)                               \
				o[i] = EXPR(a[i], b[i]);                       \
			for (; i < n; i++)                                     \
				o[i] = EXPR(a[i], b[i]);                       \
		} else if (sa == 0 && sb == 1) {                               \
			const T x0 = a[0];                                     \
			for (i = 0; i < nv; i++)                               \
				o[i] = EXPR(x0, b[i]);                         \
			for (; i < n; i++)                                     \
				o[i] = EXPR(x0, b[i]);                         \
		} else if (sa == 1 && sb == 0) {                               \
			const T y0 = b[0];                                     \
			for (i = 0; i < nv; i++)                               \
				o[i] = EXPR(a[i], y0);                         \
			for (; i < n; i++)                                     \
				o[i] = EXPR(a[i], y0);                         \
		} else {                                                       \
			const OT v = EXPR(a[0], b[0]);                         \
			for (i = 0; i < n; i++)                                \
				o[i] = v;                                      \
		}                                                              \
	} while (0)

#define RB_BIN(OPC, fn, E, T_)                                                                        \
	HLOI_CLONES static void rb_##fn##_##E(void *restrict vo, const void *const *va, const int64_t *s, int64_t n, \
				  const fx_member *m)                                                 \
	{                                                                                             \
		typedef T_ T;                                                                         \
		typedef T_ OT;                                                                        \
		OT *restrict o = vo;                                                                  \
		const T *restrict a = va[0];                                                          \
		const T *restrict b = va[1];                                                          \
		int64_t sa = s[0], sb = s[1];                                                         \
		(void)m;                                                                              \
		RB_LOOPS(sc_##fn##_##E);                                                              \
	}

/* --- compare: the direction and the usual comparison types as compile-time
 * constants, so that the loops vectorise ---------------------------------- */

#define RC_DEF1(E, T_, TT, D)                                                  \
	static inline uint8_t rc_##TT##_##D##_##E(T_ x, T_ y)                  \
	{                                                                      \
		return sc_compare_##E(x, y, CMP_##D, CMPT_##TT);               \
	}
#define RC_DEFS(E, T_, TT)                                                     \
	RC_DEF1(E, T_, TT, EQ) RC_DEF1(E, T_, TT, NE) RC_DEF1(E, T_, TT, LT)    \
	RC_DEF1(E, T_, TT, LE) RC_DEF1(E, T_, TT, GT) RC_DEF1(E, T_, TT, GE)
#define RC_SWITCH(E, TT)                                                       \
	switch (d) {                                                           \
	case CMP_EQ: RB_LOOPS(rc_##TT##_EQ_##E); return;                       \
	case CMP_NE: RB_LOOPS(rc_##TT##_NE_##E); return;                       \
	case CMP_LT: RB_LOOPS(rc_##TT##_LT_##E); return;                       \
	case CMP_LE: RB_LOOPS(rc_##TT##_LE_##E); return;                       \
	case CMP_GT: RB_LOOPS(rc_##TT##_GT_##E); return;                       \
	case CMP_GE: RB_LOOPS(rc_##TT##_GE_##E); return;                       \
	default: break;                                                        \
	}
#define RC_HEAD(E, T_)                                                                                \
	HLOI_CLONES static void rc_##E(void *restrict vo, const void *const *va, const int64_t *s, int64_t n,     \
			   const fx_member *m)                                                        \
	{                                                                                             \
		typedef T_ T;                                                                         \
		typedef uint8_t OT;                                                                   \
		OT *restrict o = vo;                                                                  \
		const T *restrict a = va[0];                                                          \
		const T *restrict b = va[1];                                                          \
		int64_t sa = s[0], sb = s[1];                                                         \
		cmp_direction d = m->dir;                                                             \
		cmp_type t = m->cmp;
#define RC_GENERIC(x, y) sc_compare_##GENERIC_E(x, y, d, t)
#define RC_TAIL(E)                                                             \
		for (int64_t i = 0; i < n; i++)                                \
			o[i] = sc_compare_##E(a[i * sa], b[i * sb], d, t);     \
	}
#define RC_KIND_FLOAT(E, T_)                                                   \
	RC_DEFS(E, T_, FLOAT) RC_DEFS(E, T_, TOTALORDER)                        \
	RC_HEAD(E, T_)                                                         \
		if (t == CMPT_FLOAT)                                           \
			RC_SWITCH(E, FLOAT)                                    \
		if (t == CMPT_TOTALORDER)                                      \
			RC_SWITCH(E, TOTALORDER)                               \
	RC_TAIL(E)
#define RC_KIND_SINT(E, T_)                                                    \
	RC_DEFS(E, T_, SIGNED)                                                 \
	RC_HEAD(E, T_)                                                         \
		if (t == CMPT_SIGNED)                                          \
			RC_SWITCH(E, SIGNED)                                   \
	RC_TAIL(E)
#define RC_KIND_UINT(E, T_)                                                    \
	RC_DEFS(E, T_, UNSIGNED)                                               \
	RC_HEAD(E, T_)                                                         \
		if (t == CMPT_UNSIGNED)                                        \
			RC_SWITCH(E, UNSIGNED)                                 \
	RC_TAIL(E)
#define RC_KIND_PRED(E, T_) RC_KIND_UINT(E, T_)
/* complex: EQ and NE of the float comparison (the only ones the checker
 * lets through) */
#define RC_KIND_COMPLEX(E, T_)                                                 \
	RC_DEFS(E, T_, FLOAT)                                                  \
	RC_HEAD(E, T_)                                                         \
		if (t == CMPT_FLOAT)                                           \
			RC_SWITCH(E, FLOAT)                                    \
	RC_TAIL(E)

/* --- iota: index -> element through the convert carrier ----------------------- */

#define RI_IOTA(E, T_)                                                                      \
	HLOI_CLONES static void ri_##E(void *restrict vo, int64_t start, int64_t step, int64_t n)       \
	{                                                                                   \
		T_ *restrict o = vo;                                                        \
		if (step == 0) {                                                            \
			T_ v;                                                               \
			sc_write_##E(&v, sc_num_int(start));                                \
			for (int64_t i = 0; i < n; i++)                                     \
				o[i] = v;                                                   \
			return;                                                             \
		}                                                                           \
		for (int64_t i = 0; i < n; i++)                                             \
			sc_write_##E(&o[i], sc_num_int(start + i));                         \
	}

/* --- conversions: every pair through the carrier of scalar.h, a piece at a
 * time (sc_read of the source type, sc_write of the destination type, as
 * sc_convert does) ------------------------------------------------------- */

#define RV_READ(E, T_)                                                                      \
	static void rv_read_##E(sc_num *restrict c, const void *va, int64_t sa, int64_t n)  \
	{                                                                                   \
		const T_ *a = va;                                                           \
		for (int64_t i = 0; i < n; i++)                                             \
			c[i] = sc_read_##E(&a[i * sa]);                                     \
	}
#define RV_WRITE(E, T_)                                                                     \
	static void rv_write_##E(void *vo, const sc_num *restrict c, int64_t n)             \
	{                                                                                   \
		T_ *o = vo;                                                                 \
		for (int64_t i = 0; i < n; i++)                                             \
			sc_write_##E(&o[i], c[i]);                                          \
	}

typedef void (*rv_read_fn)(sc_num *restrict c, const void *a, int64_t sa, int64_t n);
typedef void (*rv_write_fn)(void *o, const sc_num *restrict c, int64_t n);

/* --- every evaluated type ------------------------------------------------------ */

#define ROW_EVAL(E, T_, kind) SC_OPS_##kind(RB_BIN, E, T_) RC_##kind(E, T_) RI_IOTA(E, T_) RV_READ(E, T_) \
	RV_WRITE(E, T_)
#define ROW_NOEVAL(E, T_, kind)
#define X(E, name, num, width, kind, ctype, ev, npy) ROW_##ev(E, ctype, kind)
#include "core/types.def"
#undef X
#undef ROW_EVAL
#undef ROW_NOEVAL

fx_row_fn fx_binary_row(opcode op, etype t)
{
#define CASE(OPC, fn, E, T) \
	case OP_##OPC:      \
		return rb_##fn##_##E;
	SC_LOOKUP_BY_OP_TYPE(op, t, SC_OPS, CASE)
#undef CASE
}

fx_row_fn fx_compare_row(etype t)
{
	SC_LOOKUP_BY_TYPE(t, rc_)
}

/* Float iotas whose indices fit 32 bits: the same values (an int32 and the
 * int64 sc_num_int carries convert to the same float), in a loop that
 * vectorises. */
#define RI_FAST(E, T_)                                                                      \
	HLOI_CLONES static void rif_##E(void *restrict vo, int64_t start, int64_t step, int64_t n)      \
	{                                                                                   \
		T_ *restrict o = vo;                                                        \
		if (step == 0 || start < 0 || start > INT32_MAX - n) {                      \
			ri_##E(vo, start, step, n);                                         \
			return;                                                             \
		}                                                                           \
		int32_t s0 = (int32_t)start;                                                \
		int64_t nv = n & ~(int64_t)(FX_VEC - 1), i = 0;                             \
		for (; i < nv; i++)                                                         \
			o[i] = (T_)(s0 + (int32_t)i);                                       \
		for (; i < n; i++)                                                          \
			o[i] = (T_)(s0 + (int32_t)i);                                       \
	}
RI_FAST(F32, float)
RI_FAST(F64, double)

fx_iota_fn fx_iota_row(etype t)
{
	if (t == ET_F32)
		return rif_F32;
	if (t == ET_F64)
		return rif_F64;
	SC_LOOKUP_BY_TYPE(t, ri_)
}

static rv_read_fn convert_reader(etype t)
{
	SC_LOOKUP_BY_TYPE(t, rv_read_)
}

static rv_write_fn convert_writer(etype t)
{
	SC_LOOKUP_BY_TYPE(t, rv_write_)
}

/* The generic conversion: a piece at a time through the carrier. */
static void rv_generic(void *restrict vo, const void *const *va, const int64_t *s, int64_t n, const fx_member *m)
{
	rv_read_fn rd = convert_reader(m->from);
	rv_write_fn wr = convert_writer(m->type);
	int wi = etype_byte_width(m->from), wo = m->w;
	sc_num c[FX_PIECE];
	const char *a = va[0];
	char *o = vo;
	if (!rd || !wr)
		return;
	if (s[0] == 0) {
		rd(c, a, 0, 1);
		char v[16];
		wr(v, c, 1);
		fx_fill_row(o, v, n, wo);
		return;
	}
	for (int64_t i = 0; i < n; i += FX_PIECE) {
		int64_t k = n - i < FX_PIECE ? n - i : FX_PIECE;
		rd(c, a + i * wi, 1, k);
		wr(o + i * wo, c, k);
	}
}

/* Conversions common enough for a loop of their own: sc_write_D(sc_read_S)
 * inlined, so the carrier disappears and the loop vectorises where the
 * instruction set allows. The same functions as the carrier path, so the
 * same results. */
#define RV_PAIR(S, TS, D, TD)                                                                          \
	HLOI_CLONES static void rv_##S##_##D(void *restrict vo, const void *const *va, const int64_t *s, int64_t n,  \
				 const fx_member *m)                                                   \
	{                                                                                              \
		TD *restrict o = vo;                                                                   \
		const TS *restrict a = va[0];                                                          \
		(void)m;                                                                               \
		if (s[0] == 0) {                                                                       \
			TD v;                                                                          \
			sc_write_##D(&v, sc_read_##S(&a[0]));                                          \
			for (int64_t i = 0; i < n; i++)                                                \
				o[i] = v;                                                              \
			return;                                                                        \
		}                                                                                      \
		int64_t nv = n & ~(int64_t)(FX_VEC - 1), i = 0;                                        \
		for (; i < nv; i++)                                                                    \
			sc_write_##D(&o[i], sc_read_##S(&a[i]));                                       \
		for (; i < n; i++)                                                                     \
			sc_write_##D(&o[i], sc_read_##S(&a[i]));                                       \
	}
#define RV_PAIRS(Y)                                                                             \
	Y(F32, float, F64, double) Y(F64, double, F32, float) Y(S32, int32_t, F32, float)        \
	Y(S32, int32_t, F64, double) Y(F64, double, S32, int32_t) Y(S64, int64_t, F64, double)   \
	Y(S32, int32_t, S64, int64_t) Y(S64, int64_t, S32, int32_t) Y(F32, float, F16, uint16_t) \
	Y(F16, uint16_t, F32, float) Y(F32, float, BF16, uint16_t) Y(BF16, uint16_t, F32, float) \
	Y(PRED, uint8_t, F32, float) Y(F32, float, PRED, uint8_t) Y(U8, uint8_t, F32, float)     \
	Y(S8, int8_t, F32, float)
RV_PAIRS(RV_PAIR)

/* f32 -> s32: doc/spec.md §4's saturation (NaN -> 0) written on 32-bit lanes. For
 * every f32 x it equals sc_write_S32(sc_read_F32(x)): in range, truncation
 * of the double (an exact widening) and of the float agree. */
HLOI_CLONES static void rv_F32_S32(void *restrict vo, const void *const *va, const int64_t *s, int64_t n, const fx_member *m)
{
	int32_t *restrict o = vo;
	const float *restrict a = va[0];
	(void)m;
	if (s[0] == 0) {
		sc_write_S32(&o[0], sc_read_F32(&a[0]));
		for (int64_t i = 1; i < n; i++)
			o[i] = o[0];
		return;
	}
	int64_t nv = n & ~(int64_t)(FX_VEC - 1), i = 0;
	for (i = 0; i < nv; i++) {
		float x = a[i];
		int32_t t = x >= 2147483648.0f ? INT32_MAX : x > -2147483648.0f ? (int32_t)x : INT32_MIN;
		o[i] = x == x ? t : 0;
	}
	for (; i < n; i++)
		sc_write_S32(&o[i], sc_read_F32(&a[i]));
}

/* Pairs sc_convert maps directly (f16 <-> f8e5m2 keep NaN payloads: the
 * same sign and exponent widths), element by element. */
static void rv_direct(void *restrict vo, const void *const *va, const int64_t *s, int64_t n, const fx_member *m)
{
	int wi = etype_byte_width(m->from), wo = m->w;
	const char *a = va[0];
	char *o = vo;
	for (int64_t i = 0; i < n; i++)
		sc_convert(m->type, o + i * wo, m->from, a + i * s[0] * wi);
}

fx_row_fn fx_convert_row(etype to, etype from)
{
	if (!convert_reader(from) || !convert_writer(to))
		return NULL;
	if (from == ET_F32 && to == ET_S32)
		return rv_F32_S32;
	if ((from == ET_F16 && to == ET_F8E5M2) || (from == ET_F8E5M2 && to == ET_F16))
		return rv_direct;
#define CASE(S, TS, D, TD)                          \
	if (from == ET_##S && to == ET_##D)          \
		return rv_##S##_##D;
	RV_PAIRS(CASE)
#undef CASE
	return rv_generic;
}

/* --- select: the bits of on_true or on_false, by a pred (any nonzero byte is
 * true); per element width ---------------------------------------------- */

#define RS_SELECT(W, T_)                                                                              \
	HLOI_CLONES static void rs_##W(void *restrict vo, const void *const *va, const int64_t *s, int64_t n,     \
			   const fx_member *m)                                                        \
	{                                                                                             \
		T_ *restrict o = vo;                                                                  \
		const uint8_t *restrict p = va[0];                                                    \
		const T_ *restrict a = va[1];                                                         \
		const T_ *restrict b = va[2];                                                         \
		int64_t sa = s[1], sb = s[2];                                                         \
		(void)m;                                                                              \
		if (s[0] == 0) {                                                                      \
			const T_ *src = p[0] ? a : b;                                                 \
			int64_t ss = p[0] ? sa : sb;                                                  \
			if (ss == 1) {                                                                \
				memcpy(o, src, (size_t)n * sizeof *o);                                \
			} else {                                                                      \
				const T_ v = src[0];                                                  \
				for (int64_t i = 0; i < n; i++)                                       \
					o[i] = v;                                                     \
			}                                                                             \
			return;                                                                       \
		}                                                                                     \
		if (sa == 1 && sb == 1) {                                                             \
			/* as masks, so that the loop vectorises */                                    \
			int64_t nv = n & ~(int64_t)(FX_VEC - 1), i = 0;                                \
			for (; i < nv; i++) {                                                         \
				T_ mk = (T_)((T_)0 - (T_)(p[i] != 0));                                \
				o[i] = (T_)((a[i] & mk) | (b[i] & (T_)~mk));                          \
			}                                                                             \
			for (; i < n; i++)                                                            \
				o[i] = p[i] ? a[i] : b[i];                                            \
		} else {                                                                              \
			for (int64_t i = 0; i < n; i++)                                               \
				o[i] = p[i] ? a[i * sa] : b[i * sb];                                  \
		}                                                                                     \
	}
RS_SELECT(1, uint8_t)
RS_SELECT(2, uint16_t)
RS_SELECT(4, uint32_t)
RS_SELECT(8, uint64_t)

fx_row_fn fx_select_row(int width)
{
	switch (width) {
	case 1: return rs_1;
	case 2: return rs_2;
	case 4: return rs_4;
	case 8: return rs_8;
	default: return NULL;
	}
}

/* --- the generic kernel: the reference engine's element loop on the row ----- */

/* The row as rank-1 literals (arguments of stride 0 as scalars) and the
 * instruction with identity dimension maps; ref_elementwise then computes
 * every element with the op's scalar function. Pieces of FX_PIECE keep the
 * temporary shapes small. */
void fx_generic_row(void *restrict o, const void *const *a, const int64_t *s, int64_t n, const fx_member *m)
{
	const instr *in = m->in;
	instr copy = *in;
	operand ops[FX_MAX_ARGS];
	hloi_literal lits[FX_MAX_ARGS], res;
	hloi_literal *lp[FX_MAX_ARGS];
	int nops = in->nops < FX_MAX_ARGS ? in->nops : FX_MAX_ARGS;
	for (int k = 0; k < nops; k++) {
		ops[k] = in->ops[k];
		memset(ops[k].out_dim, 0, sizeof ops[k].out_dim);
	}
	copy.ops = ops;
	copy.nops = nops;
	for (int64_t i = 0; i < n; i += FX_PIECE) {
		int64_t k = n - i < FX_PIECE ? n - i : FX_PIECE;
		memset(&res, 0, sizeof res);
		shape_make_array(&res.shape, m->type, 1, &k);
		res.data = (char *)o + i * m->w;
		res.nbytes = (size_t)(k * m->w);
		copy.result = &res.shape;
		for (int j = 0; j < nops; j++) {
			etype t = in->ops[j].def->result->type;
			int w = etype_byte_width(t);
			memset(&lits[j], 0, sizeof lits[j]);
			if (s[j] == 0) {
				shape_make_array(&lits[j].shape, t, 0, NULL);
				lits[j].data = (void *)(uintptr_t)a[j];
				lits[j].nbytes = (size_t)w;
			} else {
				shape_make_array(&lits[j].shape, t, 1, &k);
				lits[j].data = (char *)(uintptr_t)a[j] + i * w;
				lits[j].nbytes = (size_t)(k * w);
			}
			lp[j] = &lits[j];
		}
		ref_elementwise(&copy, &res, lp);
	}
}

/* A member of the unary family: its kernel with its parameters. */
static void fx_unary_row(void *restrict o, const void *const *a, const int64_t *s, int64_t n, const fx_member *m)
{
	m->unary(o, a, s, n, &m->prm);
}

/* --- moving bits ------------------------------------------------------------- */

#if defined(__SSE2__)
#include <emmintrin.h>
#include <xmmintrin.h>
#define FX_HAVE_STREAM 1
#else
#define FX_HAVE_STREAM 0
#endif

int fx_can_stream(void)
{
	return FX_HAVE_STREAM;
}

void fx_stream_fence(void)
{
#if FX_HAVE_STREAM
	_mm_sfence();
#endif
}

/* Non-temporal copies of whole cache lines (dst 64-byte aligned, bytes a
 * multiple of 64), in the widest stores the machine has: a 64-byte store
 * fills a whole line in the write-combining buffer at once. */
static void stream_sse2(char *dst, const char *src, size_t bytes)
{
	for (; bytes >= 16; bytes -= 16, dst += 16, src += 16)
		_mm_stream_si128((__m128i *)(void *)dst, _mm_loadu_si128((const __m128i *)(const void *)src));
	if (bytes)
		memcpy(dst, src, bytes);
}

#if defined(__x86_64__) && defined(__GNUC__) && !defined(HLOI_NO_CLONES)
#include <immintrin.h>
#define FX_WIDE_STREAM 1
__attribute__((target("avx2"))) static void stream_avx2(char *dst, const char *src, size_t bytes)
{
	while (bytes >= 16 && ((uintptr_t)dst & 31)) {
		_mm_stream_si128((__m128i *)(void *)dst, _mm_loadu_si128((const __m128i *)(const void *)src));
		dst += 16, src += 16, bytes -= 16;
	}
	for (; bytes >= 32; bytes -= 32, dst += 32, src += 32)
		_mm256_stream_si256((__m256i *)(void *)dst, _mm256_loadu_si256((const __m256i *)(const void *)src));
	stream_sse2(dst, src, bytes);
}

__attribute__((target("avx512f"))) static void stream_avx512(char *dst, const char *src, size_t bytes)
{
	while (bytes >= 16 && ((uintptr_t)dst & 63)) {
		_mm_stream_si128((__m128i *)(void *)dst, _mm_loadu_si128((const __m128i *)(const void *)src));
		dst += 16, src += 16, bytes -= 16;
	}
	for (; bytes >= 64; bytes -= 64, dst += 64, src += 64)
		_mm512_stream_si512((void *)dst, _mm512_loadu_si512((const void *)src));
	stream_sse2(dst, src, bytes);
}
#else
#define FX_WIDE_STREAM 0
#endif

typedef void (*stream_fn)(char *dst, const char *src, size_t bytes);

static stream_fn stream_kernel(void)
{
	static _Atomic(stream_fn) chosen;
	stream_fn f = atomic_load_explicit(&chosen, memory_order_relaxed);
	if (!f) {
		f = stream_sse2;
#if FX_WIDE_STREAM
		if (__builtin_cpu_supports("avx512f"))
			f = stream_avx512;
		else if (__builtin_cpu_supports("avx2"))
			f = stream_avx2;
#endif
		atomic_store_explicit(&chosen, f, memory_order_relaxed);
	}
	return f;
}

/* n elements of w bytes from src to dst, with non-temporal stores when
 * `stream` (a result larger than the caches is written without first
 * reading its lines: a third less memory traffic for a binary op). */
void fx_copy_row(char *dst, const char *src, int64_t n, int w, int stream)
{
	size_t bytes = (size_t)(n * w);
#if FX_HAVE_STREAM
	if (stream) {
		/* Only whole cache lines are streamed: a line partly written
		 * with non-temporal stores (the ends of an unaligned run, where
		 * the neighbouring run or a pad value is stored the usual way)
		 * costs a partial write-combining flush and a read for the
		 * other stores, so the ends go through the cache. */
		size_t head = (64 - ((uintptr_t)dst & 63)) & 63;
		if (head > bytes)
			head = bytes;
		memcpy(dst, src, head);
		dst += head, src += head, bytes -= head;
		size_t body = bytes & ~(size_t)63;
		stream_kernel()(dst, src, body);
		memcpy(dst + body, src + body, bytes - body);
		return;
	}
#else
	(void)stream;
#endif
	memcpy(dst, src, bytes);
}

#define FILL(T_)                                                               \
	do {                                                                   \
		T_ v, *restrict d = (T_ *)(void *)dst;                         \
		memcpy(&v, val, sizeof v);                                     \
		for (int64_t i = 0; i < n; i++)                                \
			d[i] = v;                                              \
	} while (0)

void fx_fill_row(char *dst, const char *val, int64_t n, int w)
{
	switch (w) {
	case 1: FILL(uint8_t); break;
	case 2: FILL(uint16_t); break;
	case 4: FILL(uint32_t); break;
	case 8: FILL(uint64_t); break;
	default:
		for (int64_t i = 0; i < n; i++)
			memcpy(dst + i * w, val, (size_t)w);
		break;
	}
}

#define SCATTER(T_)                                                            \
	do {                                                                   \
		T_ *restrict d = (T_ *)(void *)dst;                            \
		const T_ *restrict q = (const T_ *)(const void *)src;          \
		for (int64_t i = 0; i < n; i++)                                \
			d[i * ds] = q[i * ss];                                 \
	} while (0)

/* Every other element into a dense row (a slice of stride 2, the most
 * common stride): with the stride a constant the compiler deinterleaves in
 * vector registers, where the general loop loads one element at a time. */
#define EVERY_OTHER(T_)                                                                           \
	HLOI_CLONES static void every_other_##T_(T_ *restrict d, const T_ *restrict q, int64_t n) \
	{                                                                                         \
		for (int64_t i = 0; i < n; i++)                                                   \
			d[i] = q[2 * i];                                                          \
	}
EVERY_OTHER(uint32_t)
EVERY_OTHER(uint64_t)
#undef EVERY_OTHER

void fx_scatter_row(char *dst, int64_t ds, const char *src, int64_t ss, int64_t n, int w)
{
	if (ds == 1 && ss == 2 && (w == 4 || w == 8)) {
		if (w == 4)
			every_other_uint32_t((uint32_t *)(void *)dst, (const uint32_t *)(const void *)src, n);
		else
			every_other_uint64_t((uint64_t *)(void *)dst, (const uint64_t *)(const void *)src, n);
		return;
	}
	switch (w) {
	case 1: SCATTER(uint8_t); break;
	case 2: SCATTER(uint16_t); break;
	case 4: SCATTER(uint32_t); break;
	case 8: SCATTER(uint64_t); break;
	default:
		for (int64_t i = 0; i < n; i++)
			memcpy(dst + i * ds * w, src + i * ss * w, (size_t)w);
		break;
	}
}

#define GATHER(T_)                                                                             \
	do {                                                                                   \
		T_ *restrict t = (T_ *)(void *)dst;                                            \
		const T_ *restrict q = (const T_ *)(const void *)src;                          \
		for (int64_t i = 0; i < ni; i++)                                               \
			for (int64_t j = 0; j < nj; j++)                                       \
				t[j * ld + i] = q[i * s0 + j * s1];                            \
	} while (0)

#if FX_HAVE_STREAM
/* 4-byte elements contiguous along j (s1 == 1): 4 x 4 blocks transposed in
 * registers; the edges element by element. */
static void gather4_sse(char *dst, const char *src, int64_t ni, int64_t nj, int64_t s0, int64_t ld)
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
			_mm_storeu_ps(t + (j + 0) * ld + i, r0);
			_mm_storeu_ps(t + (j + 1) * ld + i, r1);
			_mm_storeu_ps(t + (j + 2) * ld + i, r2);
			_mm_storeu_ps(t + (j + 3) * ld + i, r3);
		}
		for (; j < nj; j++)
			for (int64_t k = 0; k < 4; k++)
				t[j * ld + i + k] = q[(i + k) * s0 + j];
	}
	for (; i < ni; i++)
		for (int64_t j = 0; j < nj; j++)
			t[j * ld + i] = q[i * s0 + j];
}

/* The same for 8-byte elements, 2 x 2 blocks. */
static void gather8_sse(char *dst, const char *src, int64_t ni, int64_t nj, int64_t s0, int64_t ld)
{
	double *t = (double *)(void *)dst;
	const double *q = (const double *)(const void *)src;
	int64_t i = 0;
	for (; i + 2 <= ni; i += 2) {
		int64_t j = 0;
		for (; j + 2 <= nj; j += 2) {
			__m128d r0 = _mm_loadu_pd(q + i * s0 + j);
			__m128d r1 = _mm_loadu_pd(q + (i + 1) * s0 + j);
			_mm_storeu_pd(t + j * ld + i, _mm_unpacklo_pd(r0, r1));
			_mm_storeu_pd(t + (j + 1) * ld + i, _mm_unpackhi_pd(r0, r1));
		}
		for (; j < nj; j++) {
			t[j * ld + i] = q[i * s0 + j];
			t[j * ld + i + 1] = q[(i + 1) * s0 + j];
		}
	}
	for (; i < ni; i++)
		for (int64_t j = 0; j < nj; j++)
			t[j * ld + i] = q[i * s0 + j];
}
#endif

/* Reads follow the source's memory order (j fastest when s1 == 1); the
 * destination is a tile in the cache or rows of the result. Bits are moved,
 * never values (as _mm_loadu_ps/_mm_storeu_ps do: no float arithmetic). */
void fx_gather(char *dst, const char *src, int w, int64_t ni, int64_t nj, int64_t s0, int64_t s1, int64_t ld)
{
#if FX_HAVE_STREAM
	if (s1 == 1 && w == 4) {
		gather4_sse(dst, src, ni, nj, s0, ld);
		return;
	}
	if (s1 == 1 && w == 8) {
		gather8_sse(dst, src, ni, nj, s0, ld);
		return;
	}
#endif
	switch (w) {
	case 1: GATHER(uint8_t); break;
	case 2: GATHER(uint16_t); break;
	case 4: GATHER(uint32_t); break;
	case 8: GATHER(uint64_t); break;
	default:
		for (int64_t i = 0; i < ni; i++)
			for (int64_t j = 0; j < nj; j++)
				memcpy(dst + (j * ld + i) * w, src + (i * s0 + j * s1) * w, (size_t)w);
		break;
	}
}

/* --- an instruction as a member ------------------------------------------------ */

int fx_member_init(fx_member *m, const instr *in, int generic)
{
	memset(m, 0, sizeof *m);
	m->in = in;
	m->slot = -1;
	m->out = -1;
	/* tiled layouts: positions are not strides (core/index.h) */
	if (shape_is_tuple(in->result) || in->nops > FX_MAX_ARGS || !index_is_strided(in->result))
		return 1;
	m->type = in->result->type;
	m->w = etype_byte_width(m->type);
	m->nargs = in->nops;
	m->from = in->nops > 0 ? in->ops[0].def->result->type : m->type;
	if (m->w <= 0 || !fx_convert_row(m->type, m->type))
		return 1;  /* not an evaluated type */
	for (int k = 0; k < in->nops; k++)
		if (shape_is_tuple(in->ops[k].def->result) || !index_is_strided(in->ops[k].def->result))
			return 1;
	m->kind = FX_KERNEL;
	/* op-specific: this engine's way with each non-scalar elementwise op */
	switch (in->op) {
	case OP_IOTA: {
		int64_t d = 0;
		instr_int(in, ATTR_IOTA_DIMENSION, &d);
		m->kind = FX_IOTA;
		m->iota = fx_iota_row(m->type);
		m->iota_dim = (int)d;
		return !m->iota || d < 0 || d >= in->result->rank;
	}
	case OP_BROADCAST:
	case OP_COPY:
	case OP_TRANSPOSE:
		m->kind = FX_ALIAS;
		return in->nops != 1 || m->from != m->type;
	case OP_BITCAST_CONVERT:
		/* the bits as they are (the checker allows equal widths only);
		 * sub-byte types hold values, not bits, in their byte: the
		 * generic kernel */
		if (in->nops == 1 && etype_byte_width(m->from) == m->w && etype_bit_width(m->type) == 8 * m->w &&
		    etype_bit_width(m->from) == 8 * m->w) {
			m->kind = FX_ALIAS;
			return 0;
		}
		break;
	case OP_CONVERT:
		if (in->nops != 1)
			return 1;
		/* the same integer type is the same bits; pred is normalised to
		 * 0/1 and floats pass through double (quieting a signalling NaN),
		 * as sc_convert does */
		if (m->from == m->type && (etype_get_kind(m->type) == KIND_SINT || etype_get_kind(m->type) == KIND_UINT)) {
			m->kind = FX_ALIAS;
			return 0;
		}
		m->fn = fx_convert_row(m->type, m->from);
		break;
	case OP_SELECT:
		if (in->nops != 3 || in->ops[0].def->result->type != ET_PRED)
			return 1;
		m->fn = fx_select_row(m->w);
		break;
	case OP_COMPARE:
		if (in->nops != 2 || m->type != ET_PRED)
			return 1;
		m->fn = fx_compare_row(m->from);
		m->dir = instr_direction(in);
		m->cmp = eval_cmp_type(in, m->from);
		break;
	default:
		if (opcode_category(in->op) == OPC_BINARY && in->nops == 2 && m->from == m->type)
			m->fn = fx_binary_row(in->op, m->type);
		break;
	}
	/* The unary family: fast/unary.c's row kernels. */
	if (!generic && !m->fn && ew_is_unary_family(in->op) && (m->unary = fast_unary_row(in))) {
		ew_params_of(in, &m->prm);
		m->fn = fx_unary_row;
	}
	/* Without a kernel of its own (or when asked), any op the reference
	 * engine evaluates elementwise runs its element loop on the row. */
	if ((generic || !m->fn) && ref_elementwise_supported(in))
		m->fn = fx_generic_row;
	return m->fn == NULL;
}
