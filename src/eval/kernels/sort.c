/* Kernels of sort and topk.
 *
 * Order. Every row (the elements along the sort dimension, all other
 * indices fixed) is sorted by the same merge sort as XLA's evaluator
 * (xla/hlo/evaluator/hlo_evaluator.cc HandleSort at openxla/xla 841f8d2d):
 * a range of fewer than 9 elements by binary insertion (each element goes
 * after the last one it is not less than), a longer one split at n/2, both
 * halves sorted, then merged taking the right half's element only when
 * comparator(right, left) holds. The sequence of comparator calls depends
 * only on their answers, so the permutation is XLA's for any comparator,
 * even one that is no strict weak order (LE, or a float LT meeting NaN).
 * The sort is stable whatever is_stable says (deterministic, as XLA's
 * evaluator).
 *
 * The reference engine calls the comparator (eval/kernels/apply.h) for every
 * comparison. The fast engine recognises a comparator that is one compare
 * of the two parameters of one operand (LT or GT, FLOAT or TOTALORDER, or
 * the integer default) and compares 8-byte keys built once per element
 * instead, and so for the comparator JAX writes for floats (each side
 * canonicalised, -0 as +0 and NaNs as one NaN, then a TOTALORDER compare);
 * a comparison of keys answers what the comparator would, so the
 * permutation is the same. Keys of a strict weak order (all but FLOAT
 * compares meeting a NaN) make the merge sort's permutation the one of
 * any stable sort: rows of SORT_RADIX_MIN elements or more are radix
 * sorted (stable, 8 bits a pass, only over the bytes where keys differ).
 * A sort of one operand of 4-byte keys (f32 FLOAT or TOTALORDER, s32,
 * u32) sorts the keys alone when they map the row's values one to one
 * (a FLOAT row without NaN or -0, whose keys it shares with others) and
 * maps them back: equal keys are then equal values, so the stable sort's
 * result is the same, at half the bytes a pass and with no gather.
 * Other comparators run as in the reference engine; rows go to threads
 * (when the comparator compiles to a program).
 *
 * topk sorts each row along the last dimension by GtTotalOrder (largest)
 * or LtTotalOrder (smallest) as XLA's TopkDecomposer does (a stable sort
 * of the values and an iota), and keeps the first k: ties keep the lower
 * index first, and NaNs sort by their sign as TOTALORDER says (+NaN is the
 * largest value, -NaN the smallest). The fast engine selects the first k
 * (k <= TOPK_SELECT_MAX) through a heap of (key, index) pairs, which is
 * the same answer: ties by lower index first.
 *
 * Scratch (positions, permutations, merge buffers) is one value of the
 * engine's budget per kernel, never per element. */
#include <math.h>
#include <string.h>
#include <unistd.h>

#include "core/index.h"
#include "eval/kernels/apply.h"
#include "eval/scalar/scalar.h"
#include "util/alloc.h"
#include "util/checked.h"

/* XLA's threshold below which a range is sorted by insertion. */
#define SORT_SMALL 9
/* Rows of fewer elements per thread than this stay on one thread. */
#define SORT_MIN_PER_THREAD 16384
#define SORT_MAX_CHUNKS 64
/* topk of at most this k selects through a heap instead of sorting. */
#define TOPK_SELECT_MAX 1024

/* --- the merge sort, once per kind of element and comparison ----------- */

#define DEFINE_MSORT(NAME, T, LESS)                                                       \
	static void NAME##_insert(void *cx, T *a, int64_t n)                              \
	{                                                                                 \
		for (int64_t i = 1; i < n; i++) {                                         \
			T needle = a[i];                                                  \
			int64_t lo = 0, len = i;                                          \
			while (len != 0) {                                                \
				int64_t half = len / 2, mid = lo + half;                  \
				if (LESS(cx, needle, a[mid])) {                           \
					len = half;                                       \
				} else {                                                  \
					lo = mid + 1;                                     \
					len -= half + 1;                                  \
				}                                                         \
			}                                                                 \
			memmove(&a[lo + 1], &a[lo], (size_t)(i - lo) * sizeof(T));        \
			a[lo] = needle;                                                   \
		}                                                                         \
	}                                                                                 \
	static void NAME(void *cx, T *a, T *tmp, int64_t n)                               \
	{                                                                                 \
		if (n < 2)                                                                \
			return;                                                           \
		if (n < SORT_SMALL) {                                                     \
			NAME##_insert(cx, a, n);                                          \
			return;                                                           \
		}                                                                         \
		int64_t h = n / 2, i = 0, j = h, o = 0;                                   \
		NAME(cx, a + h, tmp, n - h);                                              \
		NAME(cx, a, tmp, h);                                                      \
		while (i < h && j < n) {                                                  \
			if (LESS(cx, a[j], a[i]))                                         \
				tmp[o++] = a[j++];                                        \
			else                                                              \
				tmp[o++] = a[i++];                                        \
		}                                                                         \
		while (i < h)                                                             \
			tmp[o++] = a[i++];                                                \
		memcpy(a, tmp, (size_t)o * sizeof(T));                                    \
	}

/* Keys: the element's order as an unsigned integer (fast engine). */
typedef uint64_t (*key_fn)(const void *p);
typedef struct srec {
	uint64_t key;
	int64_t idx;
} srec;

/* FLOAT compare: a NaN is less than nothing and nothing is less than it. */
#define KEY_NAN UINT64_MAX
#define LESS_KLT(cx, a, b) ((void)(cx), (a).key < (b).key)
#define LESS_KGT(cx, a, b) ((void)(cx), (a).key > (b).key)
#define LESS_NLT(cx, a, b) ((void)(cx), (a).key < (b).key && (b).key != KEY_NAN)
#define LESS_NGT(cx, a, b) ((void)(cx), (a).key > (b).key && (a).key != KEY_NAN)
DEFINE_MSORT(msort_klt, srec, LESS_KLT)
DEFINE_MSORT(msort_kgt, srec, LESS_KGT)
DEFINE_MSORT(msort_nlt, srec, LESS_NLT)
DEFINE_MSORT(msort_ngt, srec, LESS_NGT)

/* Rows at least this long are radix sorted (shorter: the merge sort). */
#define SORT_RADIX_MIN 64

/* A stable sort of rec[0..n) by key, ascending (desc: descending), by
 * least significant digit radix sort, 8 bits a pass, over the bytes in
 * which the keys differ only. For keys of a strict weak order (no FLOAT
 * NaN keys), the merge sort's permutation: both are stable. Only the
 * indices are meaningful afterwards (keys may be complemented or not
 * moved). */
static void radix_sort(srec *rec, srec *tmp, int64_t n, int desc)
{
	if (n < 2)
		return;
	uint64_t ors = 0, ands = ~(uint64_t)0;
	for (int64_t i = 0; i < n; i++) {
		ors |= rec[i].key;
		ands &= rec[i].key;
	}
	uint64_t diff = ors ^ ands;  /* the bits in which keys differ */
	if (ors >> 32 == 0 && n <= (int64_t)UINT32_MAX) {
		/* keys of 32 bits: (key << 32 | index) items of 8 bytes, the
		 * histograms of every digit counted while they are built;
		 * digits of 8 bits for keys of up to 16, else of 11 (3 passes) */
		uint64_t *a = (uint64_t *)tmp, *b = a + n;
		uint64_t flip = desc ? 0xffffffffu : 0;
		int span = 0;
		while (span < 32 && diff >> span)
			span++;
		int bits = span <= 16 ? 8 : 11;
		uint32_t dmask = ((uint32_t)1 << bits) - 1;
		uint32_t cnt[3][2048];
		int digits[4], nd = 0;
		for (int d = 0; d * bits < span; d++)
			if ((diff >> (bits * d)) & dmask)
				digits[nd++] = d;
		for (int d = 0; d < nd; d++)
			memset(cnt[d], 0, sizeof(uint32_t) << bits);
		for (int64_t i = 0; i < n; i++) {
			uint64_t k = rec[i].key ^ flip;
			a[i] = k << 32 | (uint64_t)i;
			for (int d = 0; d < nd; d++)
				cnt[d][(k >> (bits * digits[d])) & dmask]++;
		}
		for (int d = 0; d < nd; d++) {
			uint32_t sum = 0, *c = cnt[d];
			for (uint32_t v = 0; v <= dmask; v++) {
				uint32_t t = c[v];
				c[v] = sum;
				sum += t;
			}
			int sh = 32 + bits * digits[d];
			for (int64_t i = 0; i < n; i++)
				b[c[(a[i] >> sh) & dmask]++] = a[i];
			uint64_t *t = a;
			a = b;
			b = t;
		}
		for (int64_t i = 0; i < n; i++)
			rec[i].idx = (int64_t)(a[i] & 0xffffffffu);  /* (the keys are left as they were) */
		return;
	}
	if (desc)
		for (int64_t i = 0; i < n; i++)
			rec[i].key = ~rec[i].key;
	srec *a = rec, *b = tmp;
	for (int sh = 0; sh < 64; sh += 8) {
		if (((diff >> sh) & 0xff) == 0)
			continue;
		int64_t cnt[256] = { 0 };
		for (int64_t i = 0; i < n; i++)
			cnt[(a[i].key >> sh) & 0xff]++;
		int64_t sum = 0;
		for (int d = 0; d < 256; d++) {
			int64_t c = cnt[d];
			cnt[d] = sum;
			sum += c;
		}
		for (int64_t i = 0; i < n; i++)
			b[cnt[(a[i].key >> sh) & 0xff]++] = a[i];
		srec *t = a;
		a = b;
		b = t;
	}
	if (a != rec)
		memcpy(rec, a, (size_t)n * sizeof *rec);
}

/* Whether (a.key, a.idx) comes before (b.key, b.idx). */
static inline int rec_before(srec a, srec b)
{
	return a.key < b.key || (a.key == b.key && a.idx < b.idx);
}

/* The first k (1 <= k < n) of the stable sort by key (ascending; desc:
 * descending) of the n elements of w bytes at data + pos[i] * w, in
 * order, into sel[0..k) (key, index): the k least (key, index) pairs
 * through a max-heap, then sorted. */
static void select_first(const unsigned char *data, const int64_t *pos, int w, key_fn key, int64_t n, int64_t k,
			 int desc, srec *sel)
{
	uint64_t flip = desc ? ~(uint64_t)0 : 0;
	int64_t m = 0;
	for (int64_t i = 0; i < n; i++) {
		srec x = { key(data + pos[i] * w) ^ flip, i };
		if (m == k) {
			/* later indices lose ties: only a smaller key enters */
			if (x.key >= sel[0].key)
				continue;
			/* replace the top, sift down */
			int64_t p = 0;
			for (;;) {
				int64_t c = 2 * p + 1;
				if (c >= k)
					break;
				if (c + 1 < k && rec_before(sel[c], sel[c + 1]))
					c++;
				if (!rec_before(x, sel[c]))
					break;
				sel[p] = sel[c];
				p = c;
			}
			sel[p] = x;
			continue;
		}
		/* sift up */
		int64_t c = m++;
		while (c > 0) {
			int64_t p = (c - 1) / 2;
			if (!rec_before(sel[p], x))
				break;
			sel[c] = sel[p];
			c = p;
		}
		sel[c] = x;
	}
	/* heap order to ascending: repeatedly move the top to the end */
	for (int64_t e = k - 1; e > 0; e--) {
		srec top = sel[0], x = sel[e];
		int64_t p = 0;
		for (;;) {
			int64_t c = 2 * p + 1;
			if (c >= e)
				break;
			if (c + 1 < e && rec_before(sel[c], sel[c + 1]))
				c++;
			if (!rec_before(x, sel[c]))
				break;
			sel[p] = sel[c];
			p = c;
		}
		sel[p] = x;
		sel[e] = top;
	}
}

/* The comparator computation on the elements at row positions i and j. */
typedef struct gen_ctx {
	applier *ap;
	uint64_t *st;
	int n;                        /* operands */
	hloi_literal *const *x;       /* operands */
	const int64_t *pos;           /* n x len buffer positions of the row */
	int64_t len;
	hloi_status status;           /* the first failure; later calls answer 0 */
} gen_ctx;

static inline const unsigned char *elem_at(const hloi_literal *lit, int64_t pos)
{
	return (const unsigned char *)lit->data + pos * etype_byte_width(lit->shape.type);
}

static int gen_less(void *v, int64_t i, int64_t j)
{
	gen_ctx *c = v;
	if (c->status != HLOI_OK)
		return 0;
	for (int k = 0; k < c->n; k++) {
		const hloi_literal *x = c->x[k];
		applier_param(c->ap, c->st, 2 * k, x->shape.type, elem_at(x, c->pos[k * c->len + i]));
		applier_param(c->ap, c->st, 2 * k + 1, x->shape.type, elem_at(x, c->pos[k * c->len + j]));
	}
	hloi_status s = applier_run(c->ap, c->st);
	if (s != HLOI_OK) {
		c->status = s;
		return 0;
	}
	return *(const uint8_t *)applier_result(c->ap, c->st, 0) != 0;
}
DEFINE_MSORT(msort_gen, int64_t, gen_less)

/* topk's comparison in the reference engine: compare of eval/scalar/scalar.h. */
typedef uint8_t (*cmp_fn)(const void *a, const void *b, cmp_direction d, cmp_type t);
#define TK_CMP(E, T)                                                                      \
	static uint8_t tk_compare_##E(const void *a, const void *b, cmp_direction d, cmp_type t) \
	{                                                                                 \
		T x, y;                                                                   \
		memcpy(&x, a, sizeof x);                                                  \
		memcpy(&y, b, sizeof y);                                                  \
		return sc_compare_##E(x, y, d, t);                                        \
	}
#define ROW_EVAL(E, T, kind) TK_CMP(E, T)
#define ROW_NOEVAL(E, T, kind)
#define X(E, name, num, width, kind, ctype, ev, npy) ROW_##ev(E, ctype, kind)
#include "core/types.def"
#undef X
#undef ROW_EVAL
#undef ROW_NOEVAL

static cmp_fn tk_lookup(etype t)
{
	SC_LOOKUP_BY_TYPE(t, tk_compare_)
}

typedef struct tk_ctx {
	cmp_fn cmp;
	cmp_direction dir;
	cmp_type ct;
	const hloi_literal *x;
	const int64_t *pos;
} tk_ctx;

static int tk_less(void *v, int64_t i, int64_t j)
{
	const tk_ctx *c = v;
	return c->cmp(elem_at(c->x, c->pos[i]), elem_at(c->x, c->pos[j]), c->dir, c->ct) != 0;
}
DEFINE_MSORT(msort_tk, int64_t, tk_less)

/* --- keys ---------------------------------------------------------------- */

#define SIGN64 ((uint64_t)1 << 63)
/* (within the type's width: the radix sort skips the bytes no key uses) */
#define KEY_INT(name, T, UT)                                                      \
	static uint64_t key_##name(const void *p)                                 \
	{                                                                         \
		UT v;                                                             \
		memcpy(&v, p, sizeof v);                                          \
		return (uint64_t)(UT)(v ^ (UT)((UT)1 << (8 * sizeof(UT) - 1))); \
	}
#define KEY_UINT(name, T)                          \
	static uint64_t key_##name(const void *p)  \
	{                                          \
		T v;                               \
		memcpy(&v, p, sizeof v);           \
		return (uint64_t)v;                \
	}
/* TOTALORDER (sc_key_total) and FLOAT (NaN: KEY_NAN; -0 as +0) keys of a
 * float of UT bits: sign bit S, exponent mask EXP. */
#define KEY_FLOAT(name, UT, S, EXP)                                                   \
	static uint64_t key_total_##name(const void *p)                               \
	{                                                                             \
		UT b;                                                                 \
		memcpy(&b, p, sizeof b);                                              \
		return sc_key_total(b, S, (UT) ~(UT)0);                               \
	}                                                                             \
	static uint64_t key_float_##name(const void *p)                               \
	{                                                                             \
		UT b;                                                                 \
		memcpy(&b, p, sizeof b);                                              \
		UT mag = (UT)(b & (UT) ~(UT)(S));                                     \
		if (mag > (UT)(EXP))                                                  \
			return KEY_NAN;                                               \
		if (mag == 0)                                                         \
			b = 0;                                                        \
		return sc_key_total(b, S, (UT) ~(UT)0);                               \
	}
KEY_INT(s8, int8_t, uint8_t)
KEY_INT(s16, int16_t, uint16_t)
KEY_INT(s32, int32_t, uint32_t)
KEY_INT(s64, int64_t, uint64_t)
KEY_UINT(u8, uint8_t)
KEY_UINT(u16, uint16_t)
KEY_UINT(u32, uint32_t)
KEY_UINT(u64, uint64_t)
KEY_FLOAT(f16, uint16_t, 0x8000u, 0x7c00u)
KEY_FLOAT(bf16, uint16_t, 0x8000u, 0x7f80u)
KEY_FLOAT(f32, uint32_t, 0x80000000u, 0x7f800000u)
KEY_FLOAT(f64, uint64_t, SIGN64, 0x7ff0000000000000ull)

static uint64_t key_pred(const void *p)
{
	return *(const uint8_t *)p != 0;
}

/* The key of type t under compare type ct (NULL: no key for it); *nan when
 * keys may be KEY_NAN. */
static key_fn key_for(etype t, cmp_type ct, int *nan)
{
	*nan = 0;
	int dflt_int = 0;
	switch (etype_get_kind(t)) {
	case KIND_SINT:
		dflt_int = ct == CMPT_SIGNED;
		break;
	case KIND_UINT:
	case KIND_PRED:
		dflt_int = ct == CMPT_UNSIGNED;
		break;
	default:
		break;
	}
	switch (t) {
	case ET_PRED: return dflt_int ? key_pred : NULL;
	case ET_S8: return dflt_int ? key_s8 : NULL;
	case ET_S16: return dflt_int ? key_s16 : NULL;
	case ET_S32: return dflt_int ? key_s32 : NULL;
	case ET_S64: return dflt_int ? key_s64 : NULL;
	case ET_U8: return dflt_int ? key_u8 : NULL;
	case ET_U16: return dflt_int ? key_u16 : NULL;
	case ET_U32: return dflt_int ? key_u32 : NULL;
	case ET_U64: return dflt_int ? key_u64 : NULL;
#define FKEY(E, n)                                                           \
	case ET_##E:                                                         \
		if (ct == CMPT_TOTALORDER)                                   \
			return key_total_##n;                                \
		if (ct == CMPT_FLOAT) {                                      \
			*nan = 1;                                            \
			return key_float_##n;                                \
		}                                                            \
		return NULL;
	FKEY(F16, f16)
	FKEY(BF16, bf16)
	FKEY(F32, f32)
	FKEY(F64, f64)
#undef FKEY
	default:
		return NULL;
	}
}

/* A comparator the fast engine compares by keys: root = compare(p_a, p_b)
 * with {a, b} = {2k, 2k+1}, LT or GT. Fills the key operand, the
 * direction of less(a, b) and the key function. */
static int recognise(const computation *f, hloi_literal *const *ops, int *kop, int *gt, key_fn *fn, int *nan)
{
	const instr *r = f->root;
	if (!r || r->op != OP_COMPARE || r->nops != 2)
		return 0;
	const instr *a = r->ops[0].def, *b = r->ops[1].def;
	if (a->op != OP_PARAMETER || b->op != OP_PARAMETER)
		return 0;
	int64_t pa = a->parameter_number, pb = b->parameter_number;
	if (pa == pb || pa / 2 != pb / 2 || pa < 0 || pb < 0)
		return 0;
	cmp_direction d = instr_direction(r);
	if (d != CMP_LT && d != CMP_GT)
		return 0;
	*kop = (int)(pa / 2);
	*gt = (d == CMP_GT) ^ (pa > pb);
	etype t = ops[*kop]->shape.type;
	if (a->result->type != t || b->result->type != t)
		return 0;
	*fn = key_for(t, eval_cmp_type(r, t), nan);
	return *fn != NULL;
}

/* JAX's float comparator: each side canonicalised before a compare,
 *   s0 = select(compare(p, Z1), direction=EQ, Z2, p)
 *   s1 = select(compare(p, p), direction=NE, N, s0)
 * (-0 as +0 and every NaN as one NaN), then compare(s1(a), s1(b)) LT or GT.
 * The key of x is then the key of N if x is a NaN, of Z2 if x == Z1 (IEEE),
 * else of x: the compare of the canonical values, answered by keys. */
typedef struct canon {
	int on, zero;  /* zero: z1 is +0 or -0 */
	double z1;
	unsigned char nan[8], z2[8];
} canon;

static const instr *canon_const(const instr *c, etype t)
{
	if (c->op != OP_CONSTANT || shape_is_tuple(c->result) || c->result->rank != 0 || c->result->type != t ||
	    !c->value || c->value->elided || !c->value->data || c->value->nbytes < (size_t)etype_byte_width(t))
		return NULL;
	return c;
}

static int float_cmp(const instr *c, cmp_direction d, etype t)
{
	return c->op == OP_COMPARE && c->nops == 2 && instr_direction(c) == d && eval_cmp_type(c, t) == CMPT_FLOAT;
}

/* The parameter a canonicalising side reads (its constants in *k), or NULL. */
static const instr *canon_side(const instr *s1, etype t, const instr **n, const instr **z1, const instr **z2)
{
	if (s1->op != OP_SELECT || s1->nops != 3)
		return NULL;
	const instr *ne = s1->ops[0].def, *s0 = s1->ops[2].def;
	*n = canon_const(s1->ops[1].def, t);
	if (!*n || !float_cmp(ne, CMP_NE, t) || ne->ops[0].def != ne->ops[1].def)
		return NULL;
	const instr *p = ne->ops[0].def;
	if (p->op != OP_PARAMETER || s0->op != OP_SELECT || s0->nops != 3 || s0->ops[2].def != p)
		return NULL;
	const instr *eq = s0->ops[0].def;
	*z2 = canon_const(s0->ops[1].def, t);
	if (!*z2 || !float_cmp(eq, CMP_EQ, t) || eq->ops[0].def != p)
		return NULL;
	*z1 = canon_const(eq->ops[1].def, t);
	return *z1 ? p : NULL;
}

static int same_const(const instr *a, const instr *b, etype t)
{
	return memcmp(a->value->data, b->value->data, (size_t)etype_byte_width(t)) == 0;
}

static int recognise_canon(const computation *f, hloi_literal *const *ops, int *kop, int *gt, key_fn *fn,
			   canon *cn)
{
	const instr *r = f->root;
	if (!r || r->op != OP_COMPARE || r->nops != 2)
		return 0;
	cmp_direction d = instr_direction(r);
	etype t = r->ops[0].def->result->type;
	if ((d != CMP_LT && d != CMP_GT) || eval_cmp_type(r, t) != CMPT_TOTALORDER)
		return 0;
	const instr *na, *z1a, *z2a, *nb, *z1b, *z2b;
	const instr *a = canon_side(r->ops[0].def, t, &na, &z1a, &z2a);
	const instr *b = canon_side(r->ops[1].def, t, &nb, &z1b, &z2b);
	if (!a || !b || !same_const(na, nb, t) || !same_const(z1a, z1b, t) || !same_const(z2a, z2b, t))
		return 0;
	int64_t pa = a->parameter_number, pb = b->parameter_number;
	if (pa == pb || pa / 2 != pb / 2 || pa < 0 || pb < 0)
		return 0;
	*kop = (int)(pa / 2);
	*gt = (d == CMP_GT) ^ (pa > pb);
	if (ops[*kop]->shape.type != t || a->result->type != t)
		return 0;
	int nan;
	*fn = key_for(t, CMPT_TOTALORDER, &nan);
	if (!*fn)
		return 0;
	int w = etype_byte_width(t);
	cn->on = 1;
	cn->z1 = sc_read(t, z1a->value->data).f;
	cn->zero = cn->z1 == 0.0 && (t == ET_F16 || t == ET_BF16 || t == ET_F32 || t == ET_F64);
	memcpy(cn->nan, na->value->data, (size_t)w);
	memcpy(cn->z2, z2a->value->data, (size_t)w);
	return 1;
}

static inline const void *canon_elem(const canon *cn, etype t, const void *p)
{
	double v = sc_read(t, p).f;
	if (isnan(v))
		return cn->nan;
	if (v == cn->z1)
		return cn->z2;
	return p;
}

/* --- rows ------------------------------------------------------------------ */

/* Buffer positions of the row starting at idx (idx[dim] = 0) along dim. */
static void row_positions(const shape *s, int strided, const int64_t *strides, const int64_t *idx, int dim,
			  int64_t len, int64_t *pos)
{
	if (strided) {
		int64_t base = 0;
		for (int d = 0; d < s->rank; d++)
			base += idx[d] * strides[d];
		for (int64_t j = 0; j < len; j++)
			pos[j] = base + j * strides[dim];
		return;
	}
	int64_t i2[HLOI_MAX_RANK];
	memcpy(i2, idx, sizeof(int64_t) * (size_t)s->rank);
	for (int64_t j = 0; j < len; j++) {
		i2[dim] = j;
		pos[j] = index_to_linear(s, i2);
	}
}

/* The multi-index of row r (row-major over the dimensions but dim). */
static void row_index(const shape *s, int dim, int64_t r, int64_t *idx)
{
	for (int d = s->rank - 1; d >= 0; d--) {
		if (d == dim) {
			idx[d] = 0;
			continue;
		}
		idx[d] = r % s->dims[d];
		r /= s->dims[d];
	}
}

static inline void copy_elem(unsigned char *dst, const unsigned char *src, int w)
{
	switch (w) {
	case 1: *dst = *src; break;
	case 2: memcpy(dst, src, 2); break;
	case 4: memcpy(dst, src, 4); break;
	case 8: memcpy(dst, src, 8); break;
	default: memcpy(dst, src, (size_t)w); break;
	}
}

/* dst[op[i]] = src[ip[order[i]]] for i < len, elements of w bytes (a
 * loop per width: the copy inlined). */
static void gather_row(void *dst, const int64_t *op, const void *src, const int64_t *ip, const int64_t *order,
		       int64_t len, int w)
{
#define GATHER(T)                                                          \
	do {                                                               \
		T *d = dst;                                                \
		const T *sr = src;                                         \
		for (int64_t i = 0; i < len; i++)                          \
			d[op[i]] = sr[ip[order[i]]];                       \
	} while (0)
	switch (w) {
	case 1: GATHER(uint8_t); break;
	case 2: GATHER(uint16_t); break;
	case 4: GATHER(uint32_t); break;
	case 8: GATHER(uint64_t); break;
	default:
		for (int64_t i = 0; i < len; i++)
			copy_elem((unsigned char *)dst + op[i] * w, (const unsigned char *)src + ip[order[i]] * w, w);
		break;
	}
#undef GATHER
}

/* --- one operand of 4-byte keys, sorted by its keys alone ---------------- */

enum { K32_NONE, K32_FLOAT, K32_TOTAL, K32_S32, K32_U32 };

static int key32_kind(key_fn k)
{
	return k == key_float_f32 ? K32_FLOAT : k == key_total_f32 ? K32_TOTAL
	       : k == key_s32 ? K32_S32 : k == key_u32 ? K32_U32 : K32_NONE;
}

/* a[0..n) ascending by LSD radix sort, 11-bit digits (8 when the keys
 * differ only in their low 16 bits), passes only over digits in which
 * the keys differ; b is scratch of n. Returns where the result is. */
static uint32_t *radix_sort_u32(uint32_t *a, uint32_t *b, int64_t n, uint32_t diff)
{
	int span = 0;
	while (span < 32 && diff >> span)
		span++;
	int bits = span <= 16 ? 8 : 11;
	uint32_t dmask = ((uint32_t)1 << bits) - 1;
	uint32_t cnt[3][2048];
	int digits[3], nd = 0;
	for (int d = 0; d * bits < span && nd < 3; d++)
		if ((diff >> (bits * d)) & dmask)
			digits[nd++] = d;
	for (int d = 0; d < nd; d++)
		memset(cnt[d], 0, sizeof(uint32_t) << bits);
	for (int64_t i = 0; i < n; i++)
		for (int d = 0; d < nd; d++)
			cnt[d][(a[i] >> (bits * digits[d])) & dmask]++;
	for (int d = 0; d < nd; d++) {
		uint32_t sum = 0, *c = cnt[d];
		for (uint32_t v = 0; v <= dmask; v++) {
			uint32_t t = c[v];
			c[v] = sum;
			sum += t;
		}
		int sh = bits * digits[d];
		for (int64_t i = 0; i < n; i++)
			b[c[(a[i] >> sh) & dmask]++] = a[i];
		uint32_t *t = a;
		a = b;
		b = t;
	}
	return a;
}

#define K32_SIGN 0x80000000u
/* f32 bits to their TOTALORDER key and back */
static inline uint32_t k32_total(uint32_t v)
{
	return (v & K32_SIGN) ? ~v : (v | K32_SIGN);
}

static inline uint32_t k32_total_inverse(uint32_t k)
{
	return (k & K32_SIGN) ? (k ^ K32_SIGN) : ~k;
}

/* The row of `len` elements of one operand at src (positions ip) sorted
 * into dst (positions op) by its 4-byte keys of `kind`, ascending or (desc)
 * descending; a and b scratch of len each. Returns 0, having written
 * nothing, when the keys do not map the row's values one to one. */
static int sort_row_keys32(int kind, const uint32_t *src, const int64_t *ip, uint32_t *dst, const int64_t *op,
			   int64_t len, int desc, uint32_t *a, uint32_t *b)
{
	uint32_t flip = desc ? 0xffffffffu : 0, ors = 0, ands = 0xffffffffu;
#define K32_BUILD(expr)                                     	for (int64_t i = 0; i < len; i++) {                 		uint32_t v = src[ip[i]];                    		uint32_t k = (expr) ^ flip;                 		a[i] = k;                                   		ors |= k;                                   		ands &= k;                                  	}
	switch (kind) {
	case K32_FLOAT: {
		uint32_t bad = 0;
		for (int64_t i = 0; i < len; i++) {
			uint32_t v = src[ip[i]];
			/* NaN (FLOAT compares meet it unordered) or -0 (the key of +0) */
			bad |= (uint32_t)((v & ~K32_SIGN) > 0x7f800000u) | (uint32_t)(v == K32_SIGN);
		}
		if (bad)
			return 0;
		K32_BUILD(k32_total(v))
		break;
	}
	case K32_TOTAL: K32_BUILD(k32_total(v)) break;
	case K32_S32: K32_BUILD(v ^ K32_SIGN) break;
	default: K32_BUILD(v) break;
	}
#undef K32_BUILD
	const uint32_t *r = radix_sort_u32(a, b, len, ors ^ ands);
#define K32_OUT(expr)                                       	for (int64_t i = 0; i < len; i++) {                 		uint32_t k = r[i] ^ flip;                   		dst[op[i]] = (expr);                        	}
	switch (kind) {
	case K32_FLOAT:
	case K32_TOTAL: K32_OUT(k32_total_inverse(k)) break;
	case K32_S32: K32_OUT(k ^ K32_SIGN) break;
	default: K32_OUT(k) break;
	}
#undef K32_OUT
	return 1;
}

typedef struct sort_job {
	engine *e;
	int n;                       /* operands */
	hloi_literal *const *x;
	hloi_literal **out;
	int dim;
	int64_t len, rows, nchunks;
	int64_t per;                 /* scratch int64 words per chunk */
	int64_t *scratch;
	int strided_in[64], strided_out[64];
	int64_t *ist, *ost;          /* n x HLOI_MAX_RANK */
	/* the comparator */
	applier *ap;
	int keyed, kop, gt, nan;
	key_fn key;
	int k32;                     /* K32_*: one operand sorted by its keys alone */
	canon cn;
	hloi_status status;
} sort_job;

/* Rows [lo, hi) of the chunk with its scratch. */
static hloi_status sort_rows(sort_job *j, int64_t chunk)
{
	int n = j->n;
	int64_t len = j->len;
	int64_t *sc = j->scratch + chunk * j->per;
	int64_t *pos = sc;                        /* n x len */
	int64_t *opos = pos + (int64_t)n * len;   /* n x len */
	int64_t *perm = opos + (int64_t)n * len;  /* 2 x len: srec or int64 */
	int64_t *tmp = perm + 2 * len;            /* 2 x len */
	uint64_t *st = (uint64_t *)(tmp + 2 * len);
	int64_t lo = j->rows * chunk / j->nchunks, hi = j->rows * (chunk + 1) / j->nchunks;
	int64_t idx[HLOI_MAX_RANK];
	gen_ctx g = { j->ap, st, n, j->x, pos, len, HLOI_OK };
	if (!j->keyed)
		applier_start(j->ap, st);
	for (int64_t r = lo; r < hi; r++) {
		row_index(&j->x[0]->shape, j->dim, r, idx);
		for (int k = 0; k < n; k++) {
			row_positions(&j->x[k]->shape, j->strided_in[k], j->ist + k * HLOI_MAX_RANK, idx, j->dim, len,
				      pos + k * len);
			row_positions(&j->out[k]->shape, j->strided_out[k], j->ost + k * HLOI_MAX_RANK, idx, j->dim,
				      len, opos + k * len);
		}
		const int64_t *order = perm;
		if (j->k32 && len >= SORT_RADIX_MIN &&
		    sort_row_keys32(j->k32, (const uint32_t *)j->x[0]->data, pos, (uint32_t *)j->out[0]->data, opos,
				    len, j->gt, (uint32_t *)perm, (uint32_t *)tmp))
			continue;
		if (j->keyed) {
			srec *rec = (srec *)perm;
			const hloi_literal *kx = j->x[j->kop];
			const int64_t *kp = pos + j->kop * len;
			if (j->cn.on && j->cn.zero) {
				/* z1 is +-0: by the bits, no conversion */
				etype kt = kx->shape.type;
				int w = etype_byte_width(kt);
				uint64_t kn = j->key(j->cn.nan), kz = j->key(j->cn.z2);
				uint64_t mag = w == 2 ? 0x7fffu : w == 4 ? 0x7fffffffu : ~SIGN64;
				uint64_t sign = mag + 1, all = mag | sign;
				uint64_t inf = kt == ET_F16 ? 0x7c00u : kt == ET_BF16 ? 0x7f80u
					       : kt == ET_F32 ? 0x7f800000u : 0x7ff0000000000000ull;
				const unsigned char *kd = kx->data;
				for (int64_t i = 0; i < len; i++) {
					const unsigned char *e = kd + kp[i] * w;
					uint64_t b;
					if (w == 2) {
						uint16_t h;
						memcpy(&h, e, 2);
						b = h;
					} else if (w == 4) {
						uint32_t f;
						memcpy(&f, e, 4);
						b = f;
					} else {
						memcpy(&b, e, 8);
					}
					uint64_t m = b & mag;
					/* key_total_* inline: the TOTALORDER key of b */
					rec[i].key = m > inf ? kn : m == 0 ? kz : sc_key_total(b, sign, all);
					rec[i].idx = i;
				}
			} else if (j->cn.on) {
				for (int64_t i = 0; i < len; i++) {
					rec[i].key = j->key(canon_elem(&j->cn, kx->shape.type, elem_at(kx, kp[i])));
					rec[i].idx = i;
				}
			} else {
				const unsigned char *kd = kx->data;
				int64_t w = etype_byte_width(kx->shape.type);
				for (int64_t i = 0; i < len; i++) {
					rec[i].key = j->key(kd + kp[i] * w);
					rec[i].idx = i;
				}
			}
			int nans = 0;
			if (j->nan)
				for (int64_t i = 0; i < len; i++)
					nans |= rec[i].key == KEY_NAN;
			if (nans)  /* FLOAT compares meeting NaN: no strict weak order */
				(j->gt ? msort_ngt : msort_nlt)(NULL, rec, (srec *)tmp, len);
			else if (len >= SORT_RADIX_MIN)
				radix_sort(rec, (srec *)tmp, len, j->gt);
			else
				(j->gt ? msort_kgt : msort_klt)(NULL, rec, (srec *)tmp, len);
			/* the indices, packed in place */
			for (int64_t i = 0; i < len; i++)
				perm[i] = rec[i].idx;
		} else {
			for (int64_t i = 0; i < len; i++)
				perm[i] = i;
			msort_gen(&g, perm, tmp, len);
			if (g.status != HLOI_OK)
				return g.status;
		}
		for (int k = 0; k < n; k++) {
			const hloi_literal *x = j->x[k];
			int w = etype_byte_width(x->shape.type);
			gather_row(j->out[k]->data, opos + k * len, x->data, pos + k * len, order, len, w);
		}
	}
	return HLOI_OK;
}

static void sort_range(void *ctx, int64_t lo, int64_t hi)
{
	sort_job *j = ctx;
	for (int64_t c = lo; c < hi; c++) {
		hloi_status s = sort_rows(j, c);
		if (s != HLOI_OK)
			j->status = s;  /* only the driver path fails, on one thread */
	}
}

static int64_t cores(engine *e)
{
	if (e->threads > 0)
		return e->threads;
	long c = sysconf(_SC_NPROCESSORS_ONLN);
	return c < 1 ? 1 : c;
}

/* Scratch of `words` int64 words within the budget. */
static hloi_status scratch_new(engine *e, int64_t words, hloi_literal **out)
{
	shape s;
	if (words < 1)
		words = 1;
	shape_make_array(&s, ET_S64, 1, &words);
	return value_new(e, &s, out);
}

static int too_many_operands(engine *e, const instr *in, int n)
{
	if (n > 64) {
		diag_error_where(e->ctx, NULL, "sort '%s' of %d operands: at most 64 are evaluated", in->name, n);
		return 1;
	}
	return 0;
}

static hloi_status do_sort(engine *e, const instr *in, const computation *f, hloi_literal *const *ops,
			   hloi_literal **outs)
{
	sort_job j;
	applier ap;
	memset(&j, 0, sizeof j);
	int n = in->nops;
	const shape *s0 = &ops[0]->shape;
	const int_list *dims = instr_ints(in, ATTR_DIMENSIONS);
	j.e = e;
	j.n = n;
	j.x = ops;
	j.out = outs;
	j.dim = (int)dims->v[0];
	j.len = s0->dims[j.dim];
	j.rows = 1;
	for (int d = 0; d < s0->rank; d++)
		if (d != j.dim)
			j.rows *= s0->dims[d];
	if (j.rows == 0 || j.len == 0)
		return HLOI_OK;
	int64_t stbuf[2 * 64 * HLOI_MAX_RANK];
	j.ist = stbuf;
	j.ost = stbuf + 64 * HLOI_MAX_RANK;
	for (int k = 0; k < n; k++) {
		j.strided_in[k] = index_is_strided(&ops[k]->shape);
		j.strided_out[k] = index_is_strided(&outs[k]->shape);
		if (j.strided_in[k])
			index_strides(&ops[k]->shape, j.ist + k * HLOI_MAX_RANK);
		if (j.strided_out[k])
			index_strides(&outs[k]->shape, j.ost + k * HLOI_MAX_RANK);
	}
	int parallel = 0;
	if (e->fast && (recognise(f, ops, &j.kop, &j.gt, &j.key, &j.nan) ||
			recognise_canon(f, ops, &j.kop, &j.gt, &j.key, &j.cn))) {
		j.keyed = 1;
		parallel = 1;
		if (n == 1 && !j.cn.on && j.len <= (int64_t)UINT32_MAX)
			j.k32 = key32_kind(j.key);
	} else {
		hloi_status st = applier_init(&ap, e, f);
		if (st != HLOI_OK)
			return st;
		j.ap = &ap;
		parallel = e->fast && applier_parallel(&ap);
	}
	int64_t nslots = j.keyed ? 0 : ap.nslots;
	j.nchunks = 1;
	if (parallel) {
		int64_t total = j.rows * j.len, by_work = total / SORT_MIN_PER_THREAD;
		j.nchunks = cores(e);
		if (j.nchunks > SORT_MAX_CHUNKS)
			j.nchunks = SORT_MAX_CHUNKS;
		if (j.nchunks > j.rows)
			j.nchunks = j.rows;
		if (j.nchunks > by_work)
			j.nchunks = by_work;
		if (j.nchunks < 1)
			j.nchunks = 1;
	}
	hloi_literal *scratch = NULL;
	hloi_status st = HLOI_OK;
	int64_t words;
	if (checked_mul_i64(2 * (int64_t)n + 4, j.len, &j.per) || checked_add_i64(j.per, nslots + 1, &j.per) ||
	    checked_mul_i64(j.per, j.nchunks, &words)) {
		st = value_oom(e, INT64_MAX);
		goto done;
	}
	st = scratch_new(e, words, &scratch);
	if (st != HLOI_OK)
		goto done;
	j.scratch = scratch->data;
	j.status = HLOI_OK;
	if (j.nchunks > 1)
		eval_parallel(e->threads, j.nchunks, 1, sort_range, &j);
	else
		sort_range(&j, 0, 1);
	st = j.status;
done:
	if (scratch)
		value_drop(e, scratch);
	if (!j.keyed)
		applier_free(&ap);
	return st;
}

hloi_status kernel_sort(const kernel_ctx *kc)
{
	engine *e = kc->e;
	frame *f = kc->f;
	const instr *in = kc->in;
	hloi_literal *const *ops = kc->ops;
	/* (the driver copies an aliased root into kc->dest) */
	const computation *fn = instr_called(in, ATTR_TO_APPLY, 0);
	const int_list *dims = instr_ints(in, ATTR_DIMENSIONS);
	if (!fn || in->nops < 1 || !dims || dims->n != 1)
		return kernel_none(kc);
	if (too_many_operands(e, in, in->nops))
		return HLOI_EUNSUPPORTED;
	/* a single result straight into the destination (run into), unless
	 * an operand lives there (an aliased parameter: read while written) */
	hloi_literal *dest = shape_is_tuple(in->result) ? NULL : kc->dest;
	for (int k = 0; dest && k < in->nops; k++)
		if (ops[k] && !shape_is_tuple(&ops[k]->shape) && ops[k]->data == dest->data)
			dest = NULL;
	hloi_literal *res = dest, *outs[64];
	hloi_status st = dest ? HLOI_OK : value_new(e, in->result, &res);
	if (st != HLOI_OK)
		return st;
	for (int k = 0; k < in->nops; k++)
		outs[k] = shape_is_tuple(in->result) ? res->elems[k] : res;
	st = do_sort(e, in, fn, ops, outs);
	if (st != HLOI_OK) {
		if (res != dest)
			value_drop(e, res);
		return st;
	}
	f->vals[in->position] = res;
	f->owned[in->position] = res != dest ? VAL_OWNED : VAL_BORROWED;
	return HLOI_OK;
}

/* --- topk ------------------------------------------------------------------ */

typedef struct topk_job {
	const hloi_literal *x;
	hloi_literal *vals, *idxs;
	int64_t len, k, rows, nchunks, per;
	int64_t *scratch;
	int strided[3];
	int64_t st[3][HLOI_MAX_RANK];
	int largest;
	key_fn key;                  /* fast engine: TOTALORDER keys, or NULL */
	int select;                  /* the first k by a heap (keys, k small) */
	cmp_fn cmp;
	cmp_type ct;
} topk_job;

static void topk_range(void *ctx, int64_t lo, int64_t hi)
{
	topk_job *j = ctx;
	int rank = j->x->shape.rank, dim = rank - 1;
	int w = etype_byte_width(j->x->shape.type);
	for (int64_t c = lo; c < hi; c++) {
		int64_t *pos = j->scratch + c * j->per, *vpos = pos + j->len, *ipos = vpos + j->k;
		/* select: perm k words, sel 2k; else perm and tmp 2 len each */
		int64_t *perm = ipos + j->k, *tmp = perm + (j->select ? j->k : 2 * j->len);
		int64_t r0 = j->rows * c / j->nchunks, r1 = j->rows * (c + 1) / j->nchunks;
		int64_t idx[HLOI_MAX_RANK];
		for (int64_t r = r0; r < r1; r++) {
			row_index(&j->x->shape, dim, r, idx);
			row_positions(&j->x->shape, j->strided[0], j->st[0], idx, dim, j->len, pos);
			row_positions(&j->vals->shape, j->strided[1], j->st[1], idx, dim, j->k, vpos);
			row_positions(&j->idxs->shape, j->strided[2], j->st[2], idx, dim, j->k, ipos);
			if (j->select) {
				srec *sel = (srec *)tmp;
				select_first(j->x->data, pos, w, j->key, j->len, j->k, j->largest, sel);
				for (int64_t i = 0; i < j->k; i++)
					perm[i] = sel[i].idx;
			} else if (j->key) {
				srec *rec = (srec *)perm;
				for (int64_t i = 0; i < j->len; i++) {
					rec[i].key = j->key(elem_at(j->x, pos[i]));
					rec[i].idx = i;
				}
				if (j->len >= SORT_RADIX_MIN)
					radix_sort(rec, (srec *)tmp, j->len, j->largest);
				else
					(j->largest ? msort_kgt : msort_klt)(NULL, rec, (srec *)tmp, j->len);
				for (int64_t i = 0; i < j->k; i++)
					perm[i] = rec[i].idx;
			} else {
				tk_ctx t = { j->cmp, j->largest ? CMP_GT : CMP_LT, j->ct, j->x, pos };
				for (int64_t i = 0; i < j->len; i++)
					perm[i] = i;
				msort_tk(&t, perm, tmp, j->len);
			}
			for (int64_t i = 0; i < j->k; i++) {
				int32_t v = (int32_t)perm[i];
				copy_elem((unsigned char *)j->vals->data + vpos[i] * w, elem_at(j->x, pos[perm[i]]), w);
				memcpy((unsigned char *)j->idxs->data + ipos[i] * 4, &v, 4);
			}
		}
	}
}

hloi_status kernel_topk(const kernel_ctx *kc)
{
	engine *e = kc->e;
	frame *f = kc->f;
	const instr *in = kc->in;
	hloi_literal *const *ops = kc->ops;
	int64_t k;
	if (!instr_int(in, ATTR_K, &k))
		return kernel_none(kc);
	return eval_topk(e, f, in, ops[0], k, instr_bool(in, ATTR_LARGEST, 1));
}

hloi_status eval_topk(engine *e, frame *f, const instr *in, const hloi_literal *x, int64_t k, int largest)
{
	etype t = x->shape.type;
	cmp_fn cmp = tk_lookup(t);
	if (x->shape.rank < 1 || !shape_is_tuple(in->result) || !cmp) {
		diag_error_where(e->ctx, NULL, "top-k of %s is not evaluated (instruction '%s')", etype_name(t), in->name);
		return HLOI_EUNSUPPORTED;
	}
	topk_job j;
	memset(&j, 0, sizeof j);
	j.x = x;
	j.k = k;
	j.largest = largest;
	j.cmp = cmp;
	j.ct = etype_is_float(t) ? CMPT_TOTALORDER : etype_get_kind(t) == KIND_SINT ? CMPT_SIGNED : CMPT_UNSIGNED;
	if (e->fast) {
		int nan;
		j.key = key_for(t, j.ct, &nan);
	}
	hloi_literal *res = NULL, *scratch = NULL;
	hloi_status st = value_new(e, in->result, &res);
	if (st != HLOI_OK)
		return st;
	j.vals = res->elems[0];
	j.idxs = res->elems[1];
	int rank = x->shape.rank;
	j.len = x->shape.dims[rank - 1];
	j.rows = 1;
	for (int d = 0; d < rank - 1; d++)
		j.rows *= x->shape.dims[d];
	const shape *sh[3] = { &x->shape, &j.vals->shape, &j.idxs->shape };
	for (int i = 0; i < 3; i++) {
		j.strided[i] = index_is_strided(sh[i]);
		if (j.strided[i])
			index_strides(sh[i], j.st[i]);
	}
	if (j.rows > 0 && j.k > 0) {
		j.nchunks = 1;
		if (e->fast) {
			int64_t by_work = j.rows * j.len / SORT_MIN_PER_THREAD;
			j.nchunks = cores(e);
			if (j.nchunks > SORT_MAX_CHUNKS)
				j.nchunks = SORT_MAX_CHUNKS;
			if (j.nchunks > j.rows)
				j.nchunks = j.rows;
			if (j.nchunks > by_work)
				j.nchunks = by_work;
			if (j.nchunks < 1)
				j.nchunks = 1;
		}
		int64_t words;
		j.select = j.key && j.k < j.len && j.k <= TOPK_SELECT_MAX;
		if (j.select)
			j.per = j.len + 5 * j.k;  /* pos, vpos, ipos, perm, sel */
		else if (checked_mul_i64(j.len, 5, &j.per) || checked_add_i64(j.per, 2 * j.k, &j.per))
			j.per = -1;
		if (j.per < 0 ||
		    checked_mul_i64(j.per, j.nchunks, &words)) {
			st = value_oom(e, INT64_MAX);
			goto fail;
		}
		st = scratch_new(e, words, &scratch);
		if (st != HLOI_OK)
			goto fail;
		j.scratch = scratch->data;
		if (j.nchunks > 1)
			eval_parallel(e->threads, j.nchunks, 1, topk_range, &j);
		else
			topk_range(&j, 0, 1);
		value_drop(e, scratch);
	}
	f->vals[in->position] = res;
	f->owned[in->position] = 1;
	return HLOI_OK;
fail:
	value_drop(e, res);
	return st;
}
