/* Random numbers as XLA's CPU backend makes them (doc/semantics.md, "Random
 * numbers"): rng-bit-generator (ThreeFry or Philox, rng_default being
 * Philox as on CPU), rng (uniform or normal values from Philox, as
 * xla/service/rng_expander.cc expands it) and rng-get-and-update-state (a
 * 128-bit state per instruction, from 0x7012395 at the start of each run,
 * as the CPU runtime's RngGetAndUpdateStateThunk). Both engines use these
 * kernels. The generators follow xla/hlo/builder/lib/prng.cc. */
#include <math.h>
#include <string.h>

#include "core/half.h"
#include "core/index.h"
#include "core/literal.h"
#include "eval/kernels/kernel.h"
#include "eval/kernels/rng.h"
#include "util/alloc.h"

/* --- the generators ------------------------------------------------------------ */

static uint32_t rotl32(uint32_t v, int d)
{
	return (v << d) | (v >> (32 - d));
}

void rng_threefry2x32(uint32_t x[2], const uint32_t k[2])
{
	static const int rot[8] = { 13, 15, 26, 6, 17, 29, 16, 24 };
	/* the key schedule: the two words and their parity with 0x1BD11BDA */
	uint32_t ks[3] = { k[0], k[1], 0x1BD11BDAu ^ k[0] ^ k[1] };
	uint32_t x0 = x[0] + ks[0], x1 = x[1] + ks[1];
	/* 5 groups of 4 rounds, each followed by a key injection */
	for (int g = 0; g < 5; g++) {
		for (int r = 0; r < 4; r++) {
			x0 += x1;
			x1 = rotl32(x1, rot[(g & 1) * 4 + r]);
			x1 ^= x0;
		}
		x0 += ks[(g + 1) % 3];
		x1 += ks[(g + 2) % 3] + (uint32_t)(g + 1);
	}
	x[0] = x0;
	x[1] = x1;
}

void rng_philox4x32(uint32_t x[4], const uint32_t k[2])
{
	uint32_t k0 = k[0], k1 = k[1];
	for (int r = 0; r < 10; r++) {
		uint64_t p0 = (uint64_t)x[0] * 0xD2511F53u, p1 = (uint64_t)x[2] * 0xCD9E8D57u;
		uint32_t y0 = (uint32_t)(p1 >> 32) ^ x[1] ^ k0, y1 = (uint32_t)p1;
		uint32_t y2 = (uint32_t)(p0 >> 32) ^ x[3] ^ k1, y3 = (uint32_t)p0;
		x[0] = y0;
		x[1] = y1;
		x[2] = y2;
		x[3] = y3;
		k0 += 0x9E3779B9u;
		k1 += 0xBB67AE85u;
	}
}

int rng_split_dim(int rank, const int64_t *dims)
{
	for (int d = 0; d < rank; d++)
		if (dims[d] % 2 == 0)
			return d;
	int best = -1;
	for (int d = 0; d < rank; d++)
		if (best < 0 || dims[d] > dims[best])
			best = d;
	return best;
}

/* The two words of a 64-bit value, low first (XLA's Uint64ToUint32s). */
static void split64(uint64_t v, uint32_t w[2])
{
	w[0] = (uint32_t)v;
	w[1] = (uint32_t)(v >> 32);
}

uint64_t rng_threefry_fill(uint64_t key, uint64_t ctr, int bits, int rank, const int64_t *dims, uint64_t *out)
{
	uint32_t k[2], x[2];
	split64(key, k);
	int64_t n = 1;
	for (int d = 0; d < rank; d++)
		n *= dims[d];
	if (bits == 64) {
		/* one counter per element, in row-major order; the two words make
		 * the value, the first the low half */
		for (int64_t i = 0; i < n; i++) {
			split64(ctr + (uint64_t)i, x);
			rng_threefry2x32(x, k);
			out[i] = (uint64_t)x[0] | (uint64_t)x[1] << 32;
		}
		return ctr + (uint64_t)n;
	}
	/* 32 bits and narrower: the counters number the elements of the shape
	 * halved along the split dimension (rounded up); the two words of a
	 * counter go to the elements 2h and 2h+1 of that dimension */
	int s = rng_split_dim(rank, dims);
	if (s < 0) {
		split64(ctr, x);
		rng_threefry2x32(x, k);
		out[0] = x[0];
		return ctr + 1;
	}
	int64_t outer = 1, inner = 1, len = dims[s], half = (len + 1) / 2;
	for (int d = 0; d < s; d++)
		outer *= dims[d];
	for (int d = s + 1; d < rank; d++)
		inner *= dims[d];
	for (int64_t o = 0; o < outer; o++)
		for (int64_t h = 0; h < half; h++)
			for (int64_t i = 0; i < inner; i++) {
				split64(ctr + (uint64_t)((o * half + h) * inner + i), x);
				rng_threefry2x32(x, k);
				int64_t at = (o * len + 2 * h) * inner + i;
				out[at] = x[0];
				if (2 * h + 1 < len)
					out[at + inner] = x[1];
			}
	return ctr + (uint64_t)(outer * half * inner);
}

/* ctr (lo, hi) + v as a 128-bit sum */
static void add128(uint64_t ctr[2], uint64_t v)
{
	uint64_t lo = ctr[0] + v;
	if (lo < ctr[0])
		ctr[1]++;
	ctr[0] = lo;
}

void rng_philox_fill(uint64_t key, uint64_t ctr[2], int bits, int64_t n, uint64_t *out)
{
	uint32_t k[2];
	split64(key, k);
	/* a block of 4 words per counter: 4 values of 32 bits, or 2 of 64
	 * (words 0,1 and 2,3, the first of each the low half) */
	int per = bits == 64 ? 2 : 4;
	int64_t blocks = (n + per - 1) / per;
	for (int64_t b = 0; b < blocks; b++) {
		uint64_t c[2] = { ctr[0], ctr[1] };
		add128(c, (uint64_t)b);
		uint32_t x[4];
		split64(c[0], x);
		split64(c[1], x + 2);
		rng_philox4x32(x, k);
		for (int j = 0; j < per && b * per + j < n; j++)
			out[b * per + j] = per == 2 ? (uint64_t)x[2 * j] | (uint64_t)x[2 * j + 1] << 32 : x[j];
	}
	add128(ctr, (uint64_t)blocks);
}

void rng_store_bits(etype t, void *p, uint64_t v)
{
	int w = etype_bit_width(t);
	if (w < 8) {
		uint8_t u = (uint8_t)(v & ((1u << w) - 1));
		if (etype_get_kind(t) == KIND_SINT && (u >> (w - 1)))
			u = (uint8_t)(u | (0xFFu << w));
		memcpy(p, &u, 1);
		return;
	}
	switch (w) {
	case 8: { uint8_t u = (uint8_t)v; memcpy(p, &u, 1); break; }
	case 16: { uint16_t u = (uint16_t)v; memcpy(p, &u, 2); break; }
	case 32: { uint32_t u = (uint32_t)v; memcpy(p, &u, 4); break; }
	default: memcpy(p, &v, 8); break;
	}
}

/* --- per-run state ------------------------------------------------------------- */

/* The state of rng-get-and-update-state (and of each rng, which XLA
 * expands with one of its own): 0x7012395 the first time the instruction
 * runs in a run, then advanced by delta (a signed 128-bit sum) each time. */
static hloi_status get_and_update(engine *e, const instr *in, int64_t delta, uint64_t out[2])
{
	eval_rng_state *s = NULL;
	for (int i = 0; i < e->nrng; i++)
		if (e->rng[i].in == in)
			s = &e->rng[i];
	if (!s) {
		if (e->nrng == e->cap_rng) {
			int cap = e->cap_rng ? 2 * e->cap_rng : 8;
			eval_rng_state *v = hloi_malloc((size_t)cap * sizeof *v);
			if (!v)
				return value_oom(e, (int64_t)((size_t)cap * sizeof *v));
			if (e->nrng)
				memcpy(v, e->rng, (size_t)e->nrng * sizeof *v);
			hloi_free(e->rng);
			e->rng = v;
			e->cap_rng = cap;
		}
		s = &e->rng[e->nrng++];
		s->in = in;
		s->lo = 0x7012395u;
		s->hi = 0;
	}
	out[0] = s->lo;
	out[1] = s->hi;
	uint64_t lo = s->lo + (uint64_t)delta;
	s->hi += (lo < s->lo) + (delta < 0 ? UINT64_MAX : 0);
	s->lo = lo;
	return HLOI_OK;
}

void eval_rng_free(engine *e)
{
	hloi_free(e->rng);
	e->rng = NULL;
	e->nrng = e->cap_rng = 0;
}

/* --- kernels ------------------------------------------------------------------- */

/* A scratch array of n 64-bit words counted in the engine's memory. */
static hloi_status scratch(engine *e, int64_t n, uint64_t **out, int64_t *bytes)
{
	*bytes = n > 0 ? n * (int64_t)sizeof(uint64_t) : 0;
	if (n > INT64_MAX / 16)
		return value_oom(e, INT64_MAX);
	hloi_status st = value_reserve(e, *bytes);
	if (st != HLOI_OK)
		return st;
	*out = hloi_malloc(n > 0 ? (size_t)*bytes : 1);
	if (!*out) {
		value_unreserve(e, *bytes);
		return value_oom(e, *bytes);
	}
	return HLOI_OK;
}

static void scratch_free(engine *e, uint64_t *w, int64_t bytes)
{
	hloi_free(w);
	value_unreserve(e, bytes);
}

/* Writes the row-major values v[0..n) into the array lit, each by `put`. */
typedef void (*put_fn)(etype t, void *p, uint64_t v);

static void place(hloi_literal *lit, const uint64_t *v, put_fn put)
{
	const shape *s = &lit->shape;
	int64_t n;
	if (shape_element_count(s, &n) || n == 0)
		return;
	etype t = s->type;
	if (layout_is_default(s)) {
		int64_t w = etype_byte_width(t);
		for (int64_t i = 0; i < n; i++)
			put(t, (char *)lit->data + i * w, v[i]);
		return;
	}
	int64_t idx[HLOI_MAX_RANK] = { 0 }, i = 0;
	do
		put(t, literal_element(lit, idx), v[i++]);
	while (index_next(s->rank, s->dims, idx));
}

static uint64_t read_u64(const hloi_literal *lit, int64_t i)
{
	int64_t idx[HLOI_MAX_RANK] = { i };
	uint64_t v;
	memcpy(&v, literal_element(lit, idx), sizeof v);
	return v;
}

/* The algorithm= of rng-bit-generator: 't' ThreeFry, 'p' Philox (also
 * rng_default, the CPU backend's choice), 0 if unknown. */
static int algorithm(const instr *in)
{
	const char *a = instr_text(in, ATTR_ALGORITHM);
	if (!a)
		return 0;
	if (strcmp(a, "rng_three_fry") == 0)
		return 't';
	if (strcmp(a, "rng_philox") == 0 || strcmp(a, "rng_default") == 0)
		return 'p';
	return 0;
}

/* rng-bit-generator(state): (new state, bits). ThreeFry: key state[0],
 * counter state[1]. Philox: key state[0], counter (state[1], state[2]) of
 * a u64[3] state, (state[1], state[0]) of a u64[2] one, whose new state
 * keeps only the counter's low word (XLA's RngBitGeneratorExpander). */
hloi_status kernel_rng_bit_generator(const kernel_ctx *kc)
{
	engine *e = kc->e;
	frame *f = kc->f;
	const instr *in = kc->in;
	hloi_literal *const *ops = kc->ops;
	hloi_literal *dest = kc->dest;
	const hloi_literal *st0 = ops[0];
	int alg = algorithm(in);
	const shape *rs = in->result;
	if (!alg || !shape_is_tuple(rs) || rs->ntuple != 2 || st0->shape.rank != 1 ||
	    st0->shape.dims[0] != (alg == 't' ? 2 : st0->shape.dims[0] == 3 ? 3 : 2))
		return kernel_none(kc);
	const shape *bs = &rs->tuple[1];
	int bits = etype_bit_width(bs->type) == 64 ? 64 : 32;
	int64_t n;
	if (shape_element_count(bs, &n))
		return value_oom(e, INT64_MAX);
	uint64_t *w, key = read_u64(st0, 0), next[3];
	int64_t bytes;
	hloi_status st = scratch(e, n, &w, &bytes);
	if (st != HLOI_OK)
		return st;
	int nstate = (int)st0->shape.dims[0];
	next[0] = key;
	if (alg == 't') {
		next[1] = rng_threefry_fill(key, read_u64(st0, 1), bits, bs->rank, bs->dims, w);
	} else {
		uint64_t ctr[2] = { read_u64(st0, 1), read_u64(st0, nstate == 3 ? 2 : 0) };
		rng_philox_fill(key, ctr, bits, n, w);
		next[1] = ctr[0];
		next[2] = ctr[1];
	}
	hloi_literal *res = dest;
	if (!res)
		st = value_new(e, rs, &res);
	if (st == HLOI_OK) {
		for (int i = 0; i < nstate; i++) {
			int64_t idx[1] = { i };
			memcpy(literal_element(res->elems[0], idx), &next[i], sizeof next[i]);
		}
		place(res->elems[1], w, rng_store_bits);
		f->vals[in->position] = res;
		f->owned[in->position] = res != dest ? VAL_OWNED : VAL_BORROWED;
	}
	scratch_free(e, w, bytes);
	return st;
}

/* rng-get-and-update-state: the state before this run of the instruction. */
hloi_status kernel_rng_state(const kernel_ctx *kc)
{
	engine *e = kc->e;
	frame *f = kc->f;
	const instr *in = kc->in;
	hloi_literal *dest = kc->dest;
	int64_t delta;
	if (!instr_int(in, ATTR_DELTA, &delta) || shape_is_tuple(in->result))
		return kernel_none(kc);
	uint64_t s[2];
	hloi_status st = get_and_update(e, in, delta, s);
	hloi_literal *res = dest;
	if (st == HLOI_OK && !res)
		st = value_new(e, in->result, &res);
	if (st != HLOI_OK)
		return st;
	for (int i = 0; i < 2; i++) {
		int64_t idx[1] = { i };
		memcpy(literal_element(res, idx), &s[i], sizeof s[i]);
	}
	f->vals[in->position] = res;
	f->owned[in->position] = res != dest ? VAL_OWNED : VAL_BORROWED;
	return HLOI_OK;
}

/* --- rng --------------------------------------------------------------------------- */

/* The scalar operand as a double (f16/bf16 widen to f32 exactly, as XLA
 * converts them before it expands the op) or as its 64 bits. */
static double scalar_f(const hloi_literal *lit)
{
	const void *p = lit->data;
	switch (lit->shape.type) {
	case ET_F16: { uint16_t h; memcpy(&h, p, 2); return f16_to_f32(h); }
	case ET_BF16: { uint16_t h; memcpy(&h, p, 2); return bf16_to_f32(h); }
	case ET_F32: { float v; memcpy(&v, p, 4); return v; }
	default: { double v; memcpy(&v, p, 8); return v; }
	}
}

static uint64_t scalar_bits(const hloi_literal *lit)
{
	uint64_t v = 0;
	memcpy(&v, lit->data, (size_t)etype_byte_width(lit->shape.type));
	return v;
}

/* A float result held in a scratch word as the bits of a double (an f32
 * value, which the rng of f16 and bf16 makes too, converts exactly). */
static uint64_t dword(double v)
{
	uint64_t u;
	memcpy(&u, &v, 8);
	return u;
}

static double wdouble(uint64_t w)
{
	double v;
	memcpy(&v, &w, 8);
	return v;
}

/* Stores a float result: into f32, f16 or bf16 (rounded to nearest even
 * from f32, as XLA converts the f32 rng of those types), or f64. */
static void put_float(etype t, void *p, uint64_t w)
{
	double d = wdouble(w);
	float f = (float)d;
	switch (t) {
	case ET_F16: { uint16_t h = f32_to_f16(f); memcpy(p, &h, 2); break; }
	case ET_BF16: { uint16_t h = f32_to_bf16(f); memcpy(p, &h, 2); break; }
	case ET_F32: memcpy(p, &f, 4); break;
	default: memcpy(p, &d, 8); break;
	}
}

/* The uniform floats in [0, 1) of the raw bits: the top mantissa-width
 * bits scaled by 2^-mantissa (XLA's ConvertRandomBitsToUniformFloatingPoint). */
static float unit_f32(uint64_t b)
{
	return (float)((uint32_t)b >> 9) * 0x1p-23f;
}

static double unit_f64(uint64_t b)
{
	return (double)(b >> 12) * 0x1p-52;
}

/* Normal values over dims: uniform values in [0, 1) over the shape
 * doubled along the split dimension, paired by Box-Muller (XLA's
 * NormalFloatingPointDistribution); w has room for the doubled shape. */
static void normal(uint64_t *w, int wide, int rank, const int64_t *dims, uint64_t ctr[2], int64_t n)
{
	int s = rng_split_dim(rank, dims);
	int64_t outer = 1, inner = 1, len = s < 0 ? 1 : dims[s], half = (len + 1) / 2;
	for (int d = 0; d < s; d++)
		outer *= dims[d];
	for (int d = s + 1; d < rank; d++)
		inner *= dims[d];
	/* the uniform values of the doubled shape [.., half, 2, ..] go to the
	 * end of w, the normal ones of the shape to its start */
	int64_t m = outer * half * 2 * inner;
	uint64_t *u = w + n;
	rng_philox_fill(0, ctr, wide ? 64 : 32, m, u);
	for (int64_t o = 0; o < outer; o++)
		for (int64_t h = 0; h < half; h++)
			for (int64_t i = 0; i < inner; i++) {
				int64_t a = ((o * half + h) * 2) * inner + i, at = (o * len + 2 * h) * inner + i;
				uint64_t z0, z1;
				if (wide) {
					double x0 = unit_f64(u[a]), x1 = unit_f64(u[a + inner]);
					double u1 = fmax(x0, (double)1.0e-7f), v1 = 6.283185307179586 * x1;
					double u2 = sqrt(-2.0 * log(u1));
					z0 = dword(sin(v1) * u2);
					z1 = dword(cos(v1) * u2);
				} else {
					float x0 = unit_f32(u[a]), x1 = unit_f32(u[a + inner]);
					float u1 = fmaxf(x0, 1.0e-7f), v1 = (float)6.283185307179586 * x1;
					float u2 = sqrtf(-2.0f * logf(u1));
					z0 = dword(sinf(v1) * u2);
					z1 = dword(cosf(v1) * u2);
				}
				w[at] = z0;
				if (2 * h + 1 < len)
					w[at + inner] = z1;
			}
}

/* rng(a, b), distribution=rng_uniform: values in [a, b) (floats; integers
 * a + bits mod (b - a)); rng_normal: mean a, deviation b. The Philox
 * stream with key 0 and the instruction's own state, as XLA's CPU backend
 * (doc/semantics.md, "Random numbers"). */
hloi_status kernel_rng(const kernel_ctx *kc)
{
	engine *e = kc->e;
	frame *f = kc->f;
	const instr *in = kc->in;
	hloi_literal *const *ops = kc->ops;
	hloi_literal *dest = kc->dest;
	const char *dist = instr_text(in, ATTR_DISTRIBUTION);
	const shape *rs = in->result;
	etype t = rs->type;
	int fl = etype_is_float(t), wide = etype_bit_width(t) == 64, norm = dist && strcmp(dist, "rng_normal") == 0;
	if (!dist || shape_is_tuple(rs) || (norm && !fl))
		return kernel_none(kc);
	int64_t n;
	if (shape_element_count(rs, &n) || n > INT64_MAX / 16)
		return value_oom(e, INT64_MAX);
	/* normal values need the doubled shape's uniform ones too */
	int64_t words = norm ? 3 * n + 2 : n;
	uint64_t *w, ctr[2];
	int64_t bytes;
	hloi_status st = scratch(e, words, &w, &bytes);
	if (st != HLOI_OK)
		return st;
	st = get_and_update(e, in, n * (wide ? 2 : 1), ctr);
	if (st != HLOI_OK) {
		scratch_free(e, w, bytes);
		return st;
	}
	if (norm) {
		normal(w, wide, rs->rank, rs->dims, ctr, n);
		for (int64_t i = 0; i < n; i++)
			w[i] = wide ? dword(scalar_f(ops[0]) + scalar_f(ops[1]) * wdouble(w[i]))
				    : dword((float)scalar_f(ops[0]) + (float)scalar_f(ops[1]) * (float)wdouble(w[i]));
	} else {
		rng_philox_fill(0, ctr, wide ? 64 : 32, n, w);
		if (fl) {
			double a = scalar_f(ops[0]), b = scalar_f(ops[1]);
			float af = (float)a, span = (float)b - af;
			for (int64_t i = 0; i < n; i++)
				w[i] = dword(wide ? unit_f64(w[i]) * (b - a) + a : (double)(unit_f32(w[i]) * span + af));
		} else {
			uint64_t a = scalar_bits(ops[0]), range = scalar_bits(ops[1]) - a;
			if (!wide)
				range = (uint32_t)range;
			/* x % 0 is x in HLO */
			for (int64_t i = 0; i < n; i++)
				w[i] = a + (range ? w[i] % range : w[i]);
		}
	}
	hloi_literal *res = dest;
	if (!res)
		st = value_new(e, rs, &res);
	if (st == HLOI_OK) {
		place(res, w, fl ? put_float : rng_store_bits);
		f->vals[in->position] = res;
		f->owned[in->position] = res != dest ? VAL_OWNED : VAL_BORROWED;
	}
	scratch_free(e, w, bytes);
	return st;
}
