/* Differential tests of the fast engine against the reference engine: random
 * programs (every op and evaluated type, scalars, degenerate and
 * broadcast_dimensions broadcasts, the broadcast instruction, size-0 and
 * size-1 dimensions, every layout permutation up to rank 4, padding, chains
 * of instructions) on random bits, with 1 and 2 threads; results must be
 * bit-identical, padding included. HLOI_FAST_CASES=N runs N cases (default
 * 2000), HLOI_FAST_SEED=S another seed. */
#include <stdio.h>
#include <stdlib.h>
#include <math.h>
#include <string.h>

#include "check/check.h"
#include "core/float8.h"
#include "core/literal.h"
#include "eval/eval.h"
#include "eval/fast/fast.h"
#include "eval/scalar/scalar.h"
#include "eval/scalar/unary.h"
#include "eval/fast/vmath.h"
#include "text/parse.h"
#include "unit.h"
#include "util/strbuf.h"

typedef struct rng {
	uint64_t s;
} rng;

static uint64_t next(rng *r)
{
	uint64_t z = (r->s += 0x9E3779B97F4A7C15ull);
	z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
	z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
	return z ^ (z >> 31);
}

static int rnd(rng *r, int n)
{
	return (int)(next(r) % (uint64_t)n);
}

static const etype all_types[] = { ET_PRED, ET_S8,  ET_S16, ET_S32, ET_S64, ET_U8,  ET_U16,
				   ET_U32,  ET_U64, ET_F16, ET_BF16, ET_F32, ET_F64,
				   ET_S1, ET_S2, ET_S4, ET_U1, ET_U2, ET_U4,
				   ET_F8E5M2, ET_F8E4M3, ET_F8E4M3FN, ET_F8E4M3B11FNUZ, ET_F8E3M4,
				   ET_F8E5M2FNUZ, ET_F8E4M3FNUZ, ET_F4E2M1FN, ET_F8E8M0FNU, ET_C64, ET_C128 };

static const char *const float_ops[] = { "add", "subtract", "multiply", "divide", "remainder",
					 "maximum", "minimum", "power", "atan2" };
static const char *const int_ops[] = { "add", "subtract", "multiply", "divide", "remainder", "maximum",
				       "minimum", "power", "and", "or", "xor", "shift-left",
				       "shift-right-arithmetic", "shift-right-logical", "mulhi" };
static const char *const pred_ops[] = { "add", "multiply", "maximum", "minimum", "and", "or", "xor" };
static const char *const complex_ops[] = { "add", "subtract", "multiply", "divide", "power", "atan2" };
static const char *const directions[] = { "EQ", "NE", "LT", "LE", "GT", "GE" };
static const char *const padvals[] = { "zero", "one", "lowest", "highest" };

#define N_OF(a) ((int)(sizeof a / sizeof a[0]))

/* The unary ops of each kind, from eval/scalar/scalar.h's rows. */
#define OPC_ROW(OPC, fn, E, T) OP_##OPC,
static const opcode pred_unary[] = { SC_UNARY_OPS_KIND_PRED(OPC_ROW, PRED, uint8_t) };
static const opcode sint_unary[] = { SC_UNARY_OPS_KIND_SINT(OPC_ROW, S32, int32_t) };
static const opcode uint_unary[] = { SC_UNARY_OPS_KIND_UINT(OPC_ROW, U32, uint32_t) };
static const opcode float_unary[] = { SC_UNARY_OPS_KIND_FLOAT(OPC_ROW, F32, float)
					      SC_UNARY_PRED_OPS_KIND_FLOAT(OPC_ROW, F32, float) };
static const opcode complex_unary[] = { SC_UNARY_OPS_KIND_COMPLEX(OPC_ROW, C64, float _Complex)
						SC_UNARY_PART_OPS_KIND_COMPLEX(OPC_ROW, C64, float _Complex) };
static const etype signed_types[] = { ET_S1, ET_S2, ET_S4, ET_S8, ET_S16, ET_S32, ET_S64 };

/* A shape's text with a random layout (permutation, sometimes padding). */
static void put_shape(strbuf *b, rng *r, etype t, int rank, const int64_t *dims, int allow_pad)
{
	sb_printf(b, "%s[", etype_name(t));
	for (int d = 0; d < rank; d++)
		sb_printf(b, "%s%lld", d ? "," : "", (long long)dims[d]);
	sb_puts(b, "]");
	if (rank == 0)
		return;
	int perm[HLOI_MAX_RANK];
	for (int d = 0; d < rank; d++)
		perm[d] = rank - 1 - d;
	if (rnd(r, 3) != 0)
		for (int d = rank - 1; d > 0; d--) {
			int k = rnd(r, d + 1), tmp = perm[d];
			perm[d] = perm[k];
			perm[k] = tmp;
		}
	sb_puts(b, "{");
	for (int d = 0; d < rank; d++)
		sb_printf(b, "%s%d", d ? "," : "", perm[d]);
	if (allow_pad && rnd(r, 4) == 0) {
		sb_puts(b, ":pad(");
		for (int d = 0; d < rank; d++)
			sb_printf(b, "%s%lld", d ? "," : "", (long long)(dims[d] + rnd(r, 3)));
		sb_puts(b, ")");
		if (rnd(r, 2))
			sb_printf(b, "padval(%s)", padvals[rnd(r, N_OF(padvals))]);
	}
	sb_puts(b, "}");
}

/* An operand of result dims `dims`: mode 0 same rank (dims may be 1), 1
 * lower rank with broadcast_dimensions, 2 scalar. Fills odims and the
 * mapping (map[j] = result dim of operand dim j). */
static int make_operand(rng *r, int rank, const int64_t *dims, int mode, int64_t *odims, int *map)
{
	if (mode == 2 || rank == 0)
		return 0;
	int n = 0;
	for (int d = 0; d < rank; d++) {
		if (mode == 1 && rnd(r, 2))
			continue;
		map[n] = d;
		odims[n] = dims[d] > 1 && rnd(r, 4) == 0 ? 1 : dims[d];
		n++;
	}
	return n;
}

typedef struct gen {
	strbuf text;
	int large;
} gen;

/* A program of the unary family: a unary op (result type by XLA's rules),
 * clamp with scalar or full bounds, reduce-precision, stochastic-convert,
 * or complex of two float operands; operands in random layouts. */
static void make_unary_program(strbuf *b, rng *r, etype t, int rank, const int64_t *dims, int large)
{
	int which = rnd(r, 8); /* 0-3 unary, 4-5 clamp, 6 reduce-precision / stochastic-convert / complex, 7 chain */
	etype_kind k = etype_get_kind(t);
	sb_puts(b, "HloModule fast_diff\n\nENTRY main {\n");
	if (which == 4 || which == 5) {
		if (k == KIND_COMPLEX)
			t = ET_F32;
		for (int i = 0; i < 3; i++) {
			sb_printf(b, "  p%d = ", i);
			if (i != 1 && rnd(r, 2))
				put_shape(b, r, t, 0, dims, 0);
			else
				put_shape(b, r, t, rank, dims, 1);
			sb_printf(b, " parameter(%d)\n", i);
		}
		sb_puts(b, "  ROOT r = ");
		put_shape(b, r, t, rank, dims, 1);
		sb_puts(b, " clamp(p0, p1, p2)\n}\n");
		return;
	}
	if (which == 6 && k == KIND_FLOAT) {
		int how = rnd(r, 3);
		if (how == 2 && (t == ET_F32 || t == ET_F64)) {
			sb_puts(b, "  p0 = ");
			put_shape(b, r, t, rank, dims, 1);
			sb_puts(b, " parameter(0)\n  p1 = ");
			put_shape(b, r, t, rank, dims, 1);
			sb_puts(b, " parameter(1)\n  ROOT r = ");
			put_shape(b, r, t == ET_F32 ? ET_C64 : ET_C128, rank, dims, 1);
			sb_puts(b, " complex(p0, p1)\n}\n");
			return;
		}
		sb_puts(b, "  p0 = ");
		put_shape(b, r, t, rank, dims, 1);
		sb_puts(b, " parameter(0)\n");
		if (how == 0) {
			sb_puts(b, "  ROOT r = ");
			put_shape(b, r, t, rank, dims, 1);
			sb_printf(b, " reduce-precision(p0), exponent_bits=%d, mantissa_bits=%d\n}\n", 1 + rnd(r, 12),
				  rnd(r, 26));
			return;
		}
		int bits = etype_bit_width(t);
		etype ut = bits == 4 ? ET_U4 : bits == 8 ? ET_U8 : bits == 16 ? ET_U16 : bits == 32 ? ET_U32 : ET_U64;
		sb_puts(b, "  p1 = ");
		put_shape(b, r, ut, rank, dims, 1);
		sb_puts(b, " parameter(1)\n  ROOT r = ");
		put_shape(b, r, signed_types[rnd(r, N_OF(signed_types))], rank, dims, 1);
		sb_puts(b, " stochastic-convert(p0, p1)\n}\n");
		return;
	}
	opcode op;
	switch (k) {
	case KIND_PRED: op = pred_unary[rnd(r, N_OF(pred_unary))]; break;
	case KIND_SINT: op = sint_unary[rnd(r, N_OF(sint_unary))]; break;
	case KIND_UINT: op = uint_unary[rnd(r, N_OF(uint_unary))]; break;
	case KIND_FLOAT: op = float_unary[rnd(r, N_OF(float_unary))]; break;
	default: op = complex_unary[rnd(r, N_OF(complex_unary))]; break;
	}
	etype rt = op == OP_IS_FINITE ? ET_PRED
		 : k == KIND_COMPLEX && (op == OP_ABS || op == OP_REAL || op == OP_IMAG) ? (t == ET_C64 ? ET_F32 : ET_F64)
											     : t;
	sb_puts(b, "  p0 = ");
	put_shape(b, r, t, rank, dims, 1);
	sb_puts(b, " parameter(0)\n  ");
	if (which == 7 && !large && rt == t)
		sb_puts(b, "n = ");
	else
		sb_puts(b, "ROOT r = ");
	put_shape(b, r, rt, rank, dims, 1);
	sb_printf(b, " %s(p0)\n", opcode_name(op));
	if (which == 7 && !large && rt == t) {
		/* a second unary op on an intermediate (in place over it) */
		sb_puts(b, "  ROOT r = ");
		put_shape(b, r, rt, rank, dims, 1);
		sb_printf(b, " %s(n)\n", opcode_name(op == OP_NOT || k != KIND_PRED ? op : OP_NOT));
	}
	sb_puts(b, "}\n");
}

/* One random program; returns its text in g->text. */
static void make_program(gen *g, rng *r, int large)
{
	strbuf *b = &g->text;
	sb_reset(b);
	etype t = all_types[rnd(r, N_OF(all_types))];
	int rank = large ? 2 : rnd(r, 5);
	int64_t dims[HLOI_MAX_RANK];
	for (int d = 0; d < rank; d++) {
		int k = rnd(r, 20);
		dims[d] = k == 0 ? 0 : k < 5 ? 1 : 2 + rnd(r, 6);
	}
	if (large) {
		dims[0] = 300 + rnd(r, 40);
		dims[1] = 440 + rnd(r, 40);
	}
	int kind = rnd(r, 14); /* 0-5 binary, 6-8 compare, 9 broadcast, 10-13 the unary family */
	const char *opname;
	etype rt = t;
	if (kind >= 10) {
		make_unary_program(b, r, t, rank, dims, large);
		return;
	}
	if (kind <= 5 && (t == ET_F32 || t == ET_F64) && rnd(r, 8) == 0) {
		opname = "complex";
		rt = t == ET_F32 ? ET_C64 : ET_C128;
	} else if (kind == 9) {
		opname = "broadcast";
	} else if (kind >= 6) {
		opname = "compare";
		rt = ET_PRED;
	} else if (t == ET_PRED) {
		opname = pred_ops[rnd(r, N_OF(pred_ops))];
	} else if (etype_get_kind(t) == KIND_COMPLEX) {
		opname = complex_ops[rnd(r, N_OF(complex_ops))];
	} else if (etype_is_float(t)) {
		opname = float_ops[rnd(r, N_OF(float_ops))];
	} else {
		opname = int_ops[rnd(r, N_OF(int_ops))];
	}
	sb_puts(b, "HloModule fast_diff\n\nENTRY main {\n");

	int64_t od[2][HLOI_MAX_RANK];
	int map[2][HLOI_MAX_RANK], orank[2];
	int nops = kind == 9 ? 1 : 2;
	int mode[2] = { 0, rnd(r, 8) == 0 ? 2 : rnd(r, 3) == 0 ? 1 : 0 };
	if (kind == 9)
		mode[0] = rnd(r, 2);
	for (int k = 0; k < nops; k++)
		orank[k] = make_operand(r, rank, dims, mode[k], od[k], map[k]);
	/* Every result dim needs an operand of its full size. */
	for (int d = 0; d < rank; d++) {
		int covered = 0;
		for (int k = 0; k < nops; k++)
			for (int j = 0; j < orank[k]; j++)
				if (map[k][j] == d && od[k][j] == dims[d])
					covered = 1;
		if (covered || kind == 9)
			continue;
		for (int j = 0; j < orank[0]; j++)
			if (map[0][j] == d)
				od[0][j] = dims[d];
	}
	int swap = nops == 2 && rnd(r, 2);
	for (int k = 0; k < nops; k++) {
		int s = swap ? 1 - k : k;
		sb_printf(b, "  p%d = ", k);
		put_shape(b, r, t, orank[s], od[s], 1);
		sb_printf(b, " parameter(%d)\n", k);
	}
	sb_puts(b, "  r = ");
	put_shape(b, r, rt, rank, dims, 1);
	if (kind == 9) {
		sb_printf(b, " broadcast(p0), dimensions={");
		for (int j = 0; j < orank[0]; j++)
			sb_printf(b, "%s%d", j ? "," : "", map[0][j]);
		sb_puts(b, "}");
	} else {
		sb_printf(b, " %s(p0, p1)", opname);
		int s = orank[0] < orank[1] ? 0 : 1; /* the lower-rank operand */
		if (orank[0] != orank[1] && orank[s] > 0) {
			sb_puts(b, ", broadcast_dimensions={");
			for (int j = 0; j < orank[s]; j++)
				sb_printf(b, "%s%d", j ? "," : "", map[s][j]);
			sb_puts(b, "}");
		}
		if (kind >= 6 && etype_get_kind(t) == KIND_COMPLEX) {
			sb_printf(b, ", direction=%s", directions[rnd(r, 2)]); /* EQ, NE */
		} else if (kind >= 6) {
			sb_printf(b, ", direction=%s", directions[rnd(r, N_OF(directions))]);
			if (etype_is_float(t) && rnd(r, 3) == 0)
				sb_puts(b, ", type=TOTALORDER");
		}
	}
	sb_puts(b, "\n");
	/* Sometimes a second instruction on the first result (an intermediate
	 * as an operand), with another layout. */
	if (!large && rnd(r, 4) == 0) {
		sb_printf(b, "  p%d = ", nops);
		put_shape(b, r, rt, rank, dims, 1);
		sb_printf(b, " parameter(%d)\n  ROOT r2 = ", nops);
		put_shape(b, r, rt, rank, dims, 1);
		sb_printf(b, " %s(r, p%d)\n", rt == ET_PRED ? "xor" : "add", nops);
	}
	sb_puts(b, "}\n");
}

/* Random contents: raw bits, small integers, and float specials. */
static void fill_random(hloi_literal *lit, rng *r)
{
	etype t = lit->shape.type;
	size_t w = (size_t)etype_byte_width(t);
	unsigned char *p = lit->data;
	if (!p)
		return;
	for (size_t i = 0; i + w <= lit->nbytes; i += w) {
		uint64_t v = next(r);
		int how = rnd(r, 4);
		if (t == ET_PRED) {
			p[i] = (unsigned char)(how == 0 ? (v & 0xff) : (v & 1));
			continue;
		}
		const f8_format *f8 = f8_format_of(t);
		if (how == 1 && (f8 || etype_get_kind(t) == KIND_COMPLEX)) {
			/* small values: exact sums and products */
			double dv = (double)(rnd(r, 12) - 3) / (rnd(r, 2) ? 1.0 : 4.0);
			if (f8) {
				p[i] = f8_from_f64(f8, dv);
			} else if (t == ET_C64) {
				float c[2] = { (float)dv, (float)(rnd(r, 7) - 3) };
				memcpy(p + i, c, 8);
			} else {
				double c[2] = { dv, (double)(rnd(r, 7) - 3) };
				memcpy(p + i, c, 16);
			}
			continue;
		}
		if (how == 1) {
			int64_t s = rnd(r, 12) - 3;
			if (etype_is_float(t)) {
				double dv = (double)s / (rnd(r, 2) ? 1.0 : 4.0);
				if (t == ET_F64) {
					memcpy(p + i, &dv, 8);
				} else {
					float fv = (float)dv;
					uint32_t u;
					memcpy(&u, &fv, 4);
					if (t == ET_F32)
						memcpy(p + i, &fv, 4);
					else if (t == ET_BF16) {
						uint16_t h = (uint16_t)(u >> 16);
						memcpy(p + i, &h, 2);
					} else {
						uint16_t h = (uint16_t)(s < 0 ? 0xBC00 : s == 0 ? 0 : 0x3C00);
						memcpy(p + i, &h, 2);
					}
				}
				continue;
			}
			v = (uint64_t)s;
		}
		if (w == 16) {
			uint64_t v2 = next(r);
			memcpy(p + i, &v, 8);
			memcpy(p + i + 8, &v2, 8);
			continue;
		}
		memcpy(p + i, &v, w); /* little endian: the low bytes */
		if (w == 1)
			p[i] = etype_from_low_bits(t, p[i]); /* sub-byte types: in range */
	}
}

static int run_engine(module *m, hloi_context *ctx, hloi_literal **in, size_t n, hloi_engine e, int threads,
		      hloi_literal **out)
{
	hloi_run_options o = HLOI_RUN_OPTIONS_INIT;
	o.engine = e;
	o.threads = threads;
	return eval_module(m, ctx, in, n, &o, out);
}

/* Whether element bytes p and q are both NaNs of float type t. */
static int both_nan(etype t, const unsigned char *p, const unsigned char *q)
{
	switch (t) {
	case ET_F16: {
		uint16_t x, y;
		memcpy(&x, p, 2);
		memcpy(&y, q, 2);
		return (x & 0x7c00) == 0x7c00 && (x & 0x3ff) && (y & 0x7c00) == 0x7c00 && (y & 0x3ff);
	}
	case ET_BF16: {
		uint16_t x, y;
		memcpy(&x, p, 2);
		memcpy(&y, q, 2);
		return (x & 0x7f80) == 0x7f80 && (x & 0x7f) && (y & 0x7f80) == 0x7f80 && (y & 0x7f);
	}
	case ET_F32: {
		float x, y;
		memcpy(&x, p, 4);
		memcpy(&y, q, 4);
		return isnan(x) && isnan(y);
	}
	case ET_F64: {
		double x, y;
		memcpy(&x, p, 8);
		memcpy(&y, q, 8);
		return isnan(x) && isnan(y);
	}
	case ET_C64:
	case ET_C128: {
		/* each part equal or both NaN */
		etype pt = t == ET_C64 ? ET_F32 : ET_F64;
		size_t w = t == ET_C64 ? 4 : 8;
		for (int k = 0; k < 2; k++)
			if (memcmp(p + k * w, q + k * w, w) != 0 && !both_nan(pt, p + k * w, q + k * w))
				return 0;
		return 1;
	}
	default: {
		const f8_format *f = f8_format_of(t);
		return f && f8_is_nan(f, *p) && f8_is_nan(f, *q);
	}
	}
}

/* Byte-identical buffers (padding included), except that a NaN may differ
 * from another NaN in sign and payload: when both operands of + or * are
 * NaNs, which one propagates depends on the operand order the compiler
 * chose for the (commutative) machine instruction — IEEE 754 leaves it
 * open. Everything else must match bit for bit. */
static int same_bits(const hloi_literal *a, const hloi_literal *b)
{
	if (a && b && (shape_is_tuple(&a->shape) || shape_is_tuple(&b->shape))) {
		/* element by element (a tuple has no buffer of its own) */
		if (!shape_is_tuple(&a->shape) || !shape_is_tuple(&b->shape) || a->nelems != b->nelems)
			return 0;
		for (size_t k = 0; k < a->nelems; k++)
			if (!same_bits(a->elems[k], b->elems[k]))
				return 0;
		return 1;
	}
	if (!a || !b || a->nbytes != b->nbytes)
		return 0;
	if (a->nbytes == 0 || memcmp(a->data, b->data, a->nbytes) == 0)
		return 1;
	size_t w = (size_t)etype_byte_width(a->shape.type);
	if (w == 0 || a->shape.type != b->shape.type)
		return 0;
	const unsigned char *p = a->data, *q = b->data;
	for (size_t i = 0; i + w <= a->nbytes; i += w)
		if (memcmp(p + i, q + i, w) != 0 && !both_nan(a->shape.type, p + i, q + i))
			return 0;
	return 1;
}

/* One case; returns 1 when it passed. */
static int run_case(uint64_t seed, int large, int *skipped)
{
	rng r = { seed };
	gen g = { STRBUF_INIT, large };
	module *m = NULL;
	hloi_context *ctx = NULL;
	hloi_literal *in[4] = { NULL, NULL, NULL, NULL };
	hloi_literal *ref = NULL, *f1 = NULL, *f2 = NULL, *direct = NULL, *small = NULL, *inplace = NULL;
	size_t nin = 0;
	int ok = 0;
	make_program(&g, &r, large);
	const char *text = sb_str(&g.text);
	if (getenv("HLOI_FAST_SHOW")) fputs(text, stderr);
	if (hloi_context_new(&ctx) != HLOI_OK)
		goto cleanup;
	if (text_parse_module(&m, ctx, "fast_diff.hlo", text, strlen(text)) != HLOI_OK ||
	    check_module(m, ctx, NULL) != HLOI_OK) {
		/* The generator aims at valid programs only. */
		fprintf(stderr, "case %llu: program rejected:\n%s", (unsigned long long)seed, text);
		hloi_context_print_diagnostics(ctx, stderr, 0);
		goto cleanup;
	}
	nin = (size_t)m->entry->nparams;
	for (size_t i = 0; i < nin; i++) {
		/* Sometimes an input in another layout than its parameter's
		 * (column-major, unpadded): both engines convert it first. */
		shape s = *m->entry->params[i]->result;
		if (s.rank >= 2 && rnd(&r, 4) == 0) {
			layout_set_default(&s);
			for (int d = 0; d < s.rank; d++)
				s.layout.minor_to_major[d] = d;
		}
		if (literal_create(&in[i], &s) != HLOI_OK)
			goto cleanup;
		fill_random(in[i], &r);
	}
	if (run_engine(m, ctx, in, nin, HLOI_ENGINE_REFERENCE, 1, &ref) != HLOI_OK ||
	    run_engine(m, ctx, in, nin, HLOI_ENGINE_FAST, 1, &f1) != HLOI_OK ||
	    run_engine(m, ctx, in, nin, HLOI_ENGINE_FAST, 2, &f2) != HLOI_OK) {
		fprintf(stderr, "case %llu: evaluation failed:\n%s", (unsigned long long)seed, text);
		hloi_context_print_diagnostics(ctx, stderr, 0);
		goto cleanup;
	}
	if (!same_bits(ref, f1) || !same_bits(ref, f2)) {
		fprintf(stderr, "case %llu: fast != reference (threads %d):\n%s", (unsigned long long)seed,
			same_bits(ref, f1) ? 2 : 1, text);
		goto cleanup;
	}
	/* The first instruction through the hook directly: the fast engine must
	 * cover it (no fallback). */
	const instr *first = NULL;
	for (int i = 0; i < m->entry->ninstrs && !first; i++)
		if (m->entry->instrs[i]->op != OP_PARAMETER)
			first = m->entry->instrs[i];
	if (first) {
		hloi_literal *ops[3] = { NULL, NULL, NULL };
		for (int k = 0; k < first->nops; k++)
			ops[k] = in[first->ops[k].def->parameter_number];
		if (literal_create(&direct, first->result) != HLOI_OK)
			goto cleanup;
		int unary = ew_is_unary_family(first->op);
		if ((unary ? fast_unary_tuned(first, direct, ops, 2, NULL) : fast_elementwise(first, direct, ops, 2, NULL)) !=
		    0) {
			fprintf(stderr, "case %llu: not covered by the fast engine:\n%s", (unsigned long long)seed,
				text);
			goto cleanup;
		}
		if (first == m->entry->root && !same_bits(ref, direct)) {
			fprintf(stderr, "case %llu: direct hook differs:\n%s", (unsigned long long)seed, text);
			goto cleanup;
		}
		/* Every strategy at small sizes: streamed stores, staging chunks
		 * of a few elements, small odd tiles, a thread per element. */
		fast_tuning tiny;
		memset(&tiny, 0, sizeof tiny);
		tiny.stream_bytes = rnd(&r, 2) ? 0 : 1 << 20;
		tiny.tile = 1 + rnd(&r, 7);
		tiny.tile_bytes = 8 * (1 + rnd(&r, 64));
		tiny.chunk_bytes = 8 * (1 + rnd(&r, 8));
		tiny.min_per_thread = 1;
		if (literal_create(&small, first->result) != HLOI_OK)
			goto cleanup;
		int nt = 1 + rnd(&r, 3);
		if ((unary ? fast_unary_tuned(first, small, ops, nt, &tiny) : fast_elementwise(first, small, ops, nt, &tiny)) !=
			    0 ||
		    !same_bits(direct, small)) {
			fprintf(stderr, "case %llu: small tiles/chunks differ (tile %lld x %lld B, chunk %lld, stream %lld):\n%s",
				(unsigned long long)seed, (long long)tiny.tile, (long long)tiny.tile_bytes, (long long)tiny.chunk_bytes,
				(long long)tiny.stream_bytes, text);
			goto cleanup;
		}
		/* In place: the result written over a copy of an operand with
		 * the same type, dims and layout. */
		for (int k = 0; k < first->nops; k++) {
			if (!shape_same_dims(&ops[k]->shape, first->result) ||
			    ops[k]->shape.type != first->result->type ||
			    !layout_equal(&ops[k]->shape.layout, &first->result->layout) ||
			    (first->nops >= 2 && ops[0] == ops[1]))
				continue;
			hloi_literal *ops2[3] = { ops[0], ops[1], ops[2] };
			literal_destroy(inplace);
			inplace = NULL;
			if (literal_clone(&inplace, ops[k]) != HLOI_OK)
				goto cleanup;
			literal_fill_padding(inplace); /* the inputs' padding is random */
			ops2[k] = inplace;
			const fast_tuning *tu = rnd(&r, 2) ? &tiny : NULL;
			int rc = unary ? fast_unary_tuned(first, inplace, ops2, 2, tu) : fast_elementwise(first, inplace, ops2, 2, tu);
			if (rc == 0 && !same_bits(direct, inplace)) {
				fprintf(stderr, "case %llu: in place over operand %d differs:\n%s",
					(unsigned long long)seed, k, text);
				goto cleanup;
			}
		}
	}
	ok = 1;
cleanup:
	(void)skipped;
	literal_destroy(ref);
	literal_destroy(f1);
	literal_destroy(f2);
	literal_destroy(direct);
	literal_destroy(small);
	literal_destroy(inplace);
	for (size_t i = 0; i < 4; i++)
		literal_destroy(in[i]);
	module_destroy(m);
	hloi_context_free(ctx);
	sb_free(&g.text);
	return ok;
}

static long env_long(const char *name, long dflt)
{
	const char *s = getenv(name);
	if (!s || !*s)
		return dflt;
	char *end;
	long v = strtol(s, &end, 10);
	return *end ? dflt : v;
}

static void test_random_programs(void)
{
	vmath_enable(0); /* bit for bit: the C library's functions in both engines */
	long n = env_long("HLOI_FAST_CASES", 2000);
	uint64_t seed = (uint64_t)env_long("HLOI_FAST_SEED", 1);
	int failed = 0, skipped = 0;
	for (long i = 0; i < n; i++) {
		int large = i % 200 == 199;
		if (!run_case(seed * 1000003u + (uint64_t)i, large, &skipped)) {
			if (++failed >= 5)
				break;
		}
	}
	CU_ASSERT_EQUAL(failed, 0);
}

/* Hand-written cases the random programs reach only rarely: a transpose-like
 * add large enough for tiles and both threads, and a scalar result. */
static int run_text(const char *text, int nthreads)
{
	module *m = NULL;
	hloi_context *ctx = NULL;
	hloi_literal *in[2] = { NULL, NULL }, *ref = NULL, *fast = NULL;
	int ok = 0;
	rng r = { 99 };
	if (hloi_context_new(&ctx) != HLOI_OK ||
	    text_parse_module(&m, ctx, "t.hlo", text, strlen(text)) != HLOI_OK ||
	    check_module(m, ctx, NULL) != HLOI_OK)
		goto cleanup;
	for (int i = 0; i < m->entry->nparams; i++) {
		if (literal_create(&in[i], m->entry->params[i]->result) != HLOI_OK)
			goto cleanup;
		fill_random(in[i], &r);
	}
	size_t n = (size_t)m->entry->nparams;
	if (run_engine(m, ctx, in, n, HLOI_ENGINE_REFERENCE, 1, &ref) == HLOI_OK &&
	    run_engine(m, ctx, in, n, HLOI_ENGINE_FAST, nthreads, &fast) == HLOI_OK)
		ok = same_bits(ref, fast);
cleanup:
	hloi_context_print_diagnostics(ctx, stderr, 0);
	literal_destroy(ref);
	literal_destroy(fast);
	literal_destroy(in[0]);
	literal_destroy(in[1]);
	module_destroy(m);
	hloi_context_free(ctx);
	return ok;
}

/* Distance in units in the last place between two non-NaN floats. */
static int64_t f32_ulps(float a, float b)
{
	int32_t x, y;
	memcpy(&x, &a, 4);
	memcpy(&y, &b, 4);
	int64_t u = x < 0 ? (int64_t)INT32_MIN - x : x, v = y < 0 ? (int64_t)INT32_MIN - y : y;
	return u > v ? u - v : v - u;
}

/* f32 tanh, exponential and log: the fast engine's vector versions
 * (eval/fast/vmath.h) stay within doc/semantics.md's bound of the reference engine's C
 * library functions (3, 3 and 4 ULP, measured over every f32 input), keep
 * NaN, infinities and signed zeros, and give an element the same bits
 * wherever it sits in a row (tails, a broadcast scalar). */
static void test_vector_math(void)
{
	static const struct {
		const char *op;
		int64_t ulps;
	} fns[] = { { "tanh", 3 }, { "exponential", 3 }, { "log", 4 } };
	enum { N = 4099 };
	static float vals[N];
	rng r = { 7 };
	static const float special[] = { 0.0f, -0.0f, INFINITY, -INFINITY, NAN, 1.0f, -1.0f, 1e-45f, -1e-45f,
					 1e-38f, 88.7f, 89.0f, -87.0f, -104.0f, 9.0f, -9.0f, 0.5f, 3.4e38f };
	size_t ns = sizeof special / sizeof special[0];
	for (int i = 0; i < N; i++) {
		if ((size_t)i < ns) {
			vals[i] = special[i];
		} else if (i % 2) {
			uint32_t bits = (uint32_t)rnd(&r, 1u << 16) << 16 | (uint32_t)rnd(&r, 1u << 16);
			memcpy(&vals[i], &bits, 4);  /* any pattern */
		} else {
			vals[i] = (float)((int)rnd(&r, 4001) - 2000) / 100.0f;  /* the busy range */
		}
	}
	vmath_enable(1);
	for (size_t f = 0; f < sizeof fns / sizeof fns[0]; f++) {
		char text[256];
		snprintf(text, sizeof text,
			 "HloModule v\nENTRY e {\n  x = f32[%d] parameter(0)\n  ROOT r = f32[%d] %s(x)\n}\n", N, N,
			 fns[f].op);
		module *m = NULL;
		hloi_context *ctx = NULL;
		hloi_literal *in = NULL, *shifted = NULL, *ref = NULL, *fast = NULL, *fast2 = NULL;
		CU_ASSERT_FATAL(hloi_context_new(&ctx) == HLOI_OK);
		CU_ASSERT_FATAL(text_parse_module(&m, ctx, "v.hlo", text, strlen(text)) == HLOI_OK);
		CU_ASSERT_FATAL(check_module(m, ctx, NULL) == HLOI_OK);
		const shape *ps = m->entry->params[0]->result;
		CU_ASSERT_FATAL(literal_create(&in, ps) == HLOI_OK && literal_create(&shifted, ps) == HLOI_OK);
		memcpy(in->data, vals, sizeof vals);
		/* the same values one place further on (the last comes first) */
		memcpy((float *)shifted->data + 1, vals, sizeof vals - sizeof vals[0]);
		memcpy(shifted->data, &vals[N - 1], sizeof vals[0]);
		CU_ASSERT_FATAL(run_engine(m, ctx, &in, 1, HLOI_ENGINE_REFERENCE, 1, &ref) == HLOI_OK);
		CU_ASSERT_FATAL(run_engine(m, ctx, &in, 1, HLOI_ENGINE_FAST, 2, &fast) == HLOI_OK);
		CU_ASSERT_FATAL(run_engine(m, ctx, &shifted, 1, HLOI_ENGINE_FAST, 1, &fast2) == HLOI_OK);
		const float *a = ref->data, *b = fast->data, *c = fast2->data;
		int bad = 0;
		for (int i = 0; i < N && bad < 5; i++) {
			int ok = isnan(a[i]) ? isnan(b[i])
					     : !isnan(b[i]) && f32_ulps(a[i], b[i]) <= fns[f].ulps &&
						       signbit(a[i]) == signbit(b[i]);
			if (memcmp(&b[i], &c[(i + 1) % N], 4) != 0)
				ok = 0;
			if (!ok) {
				fprintf(stderr, "\n%s(%a): reference %a, fast %a, fast one place on %a\n", fns[f].op,
					(double)vals[i], (double)a[i], (double)b[i], (double)c[(i + 1) % N]);
				bad++;
			}
		}
		CU_ASSERT_EQUAL(bad, 0);
		literal_destroy(in);
		literal_destroy(shifted);
		literal_destroy(ref);
		literal_destroy(fast);
		literal_destroy(fast2);
		module_destroy(m);
		hloi_context_free(ctx);
	}
	vmath_enable(0);
}

static void test_fixed_programs(void)
{
	vmath_enable(0);
	static const char *const progs[] = {
		"HloModule t\nENTRY e {\n  a = f32[513,259]{0,1} parameter(0)\n  b = f32[513,259]{1,0} parameter(1)\n"
		"  ROOT r = f32[513,259]{1,0:pad(515,260)padval(one)} add(a, b)\n}\n",
		"HloModule t\nENTRY e {\n  a = f64[3,5,300,120]{2,3,1,0} parameter(0)\n  b = f64[120]{0} parameter(1)\n"
		"  ROOT r = f64[3,5,300,120]{3,2,1,0} divide(a, b), broadcast_dimensions={3}\n}\n",
		"HloModule t\nENTRY e {\n  a = s32[] parameter(0)\n  b = s32[] parameter(1)\n  ROOT r = s32[] add(a, b)\n}\n",
		"HloModule t\nENTRY e {\n  a = f32[700,1]{1,0} parameter(0)\n  b = f32[1,400]{0,1} parameter(1)\n"
		"  ROOT r = pred[700,400]{0,1} compare(a, b), direction=LT\n}\n",
		"HloModule t\nENTRY e {\n  a = u8[600,500]{0,1} parameter(0)\n"
		"  ROOT r = u8[600,500,1]{2,1,0} broadcast(a), dimensions={0,1}\n}\n",
		/* 16-byte elements through tiles, threads and the broadcast copy */
		"HloModule t\nENTRY e {\n  a = c128[513,259]{0,1} parameter(0)\n  b = c128[513,259]{1,0} parameter(1)\n"
		"  ROOT r = c128[513,259]{1,0} multiply(a, b)\n}\n",
		"HloModule t\nENTRY e {\n  a = c128[300,200]{0,1} parameter(0)\n"
		"  ROOT r = c128[300,200,2]{2,1,0} broadcast(a), dimensions={0,1}\n}\n",
		"HloModule t\nENTRY e {\n  a = c64[700,1]{1,0} parameter(0)\n  b = c64[1,400]{0,1} parameter(1)\n"
		"  ROOT r = pred[700,400]{0,1} compare(a, b), direction=NE\n}\n",
		"HloModule t\nENTRY e {\n  a = f8e4m3fn[513,259]{0,1} parameter(0)\n  b = f8e4m3fn[513,259]{1,0} parameter(1)\n"
		"  ROOT r = f8e4m3fn[513,259]{1,0} add(a, b)\n}\n",
		"HloModule t\nENTRY e {\n  a = s4[513,259]{0,1} parameter(0)\n  b = s4[259]{0} parameter(1)\n"
		"  ROOT r = s4[513,259]{1,0} shift-right-logical(a, b), broadcast_dimensions={1}\n}\n",
		/* collectives of one participant and async wrappers: copies
		 * between layouts */
		"HloModule t\nadd {\n  x = f32[] parameter(0)\n  y = f32[] parameter(1)\n  ROOT s = f32[] add(x, y)\n}\n"
		"ENTRY e {\n  a = f32[300,200]{0,1} parameter(0)\n  b = f32[200]{0} parameter(1)\n"
		"  ar = (f32[300,200]{1,0}, f32[200]) all-reduce(a, b), replica_groups={{0}}, to_apply=add\n"
		"  ag = (f32[300,200]{0,1}, f32[300,200]{1,0}) all-gather-start(a), dimensions={1}\n"
		"  agd = f32[300,200]{1,0} all-gather-done(ag)\n"
		"  cp = f32[300,200]{1,0} collective-permute(a), source_target_pairs={{0,0}}\n"
		"  cs = (f32[300,200]{1,0}, f32[300,200]{0,1}, u32[]) copy-start(a)\n"
		"  cd = f32[300,200]{1,0} copy-done(cs)\n"
		"  ROOT r = ((f32[300,200]{1,0}, f32[200]), f32[300,200]{1,0}, f32[300,200]{1,0}, f32[300,200]{1,0}) "
		"tuple(ar, agd, cp, cd)\n}\n",
		"HloModule t\nw {\n  x = s8[70,90]{0,1} parameter(0)\n  ROOT n = s8[70,90]{1,0} negate(x)\n}\n"
		"ENTRY e {\n  a = s8[70,90]{1,0} parameter(0)\n"
		"  s = ((s8[70,90]{0,1}), s8[70,90]{0,1}, s32[]) async-start(a), calls=w\n"
		"  ROOT d = s8[70,90]{1,0} async-done(s)\n}\n",
		/* sort and topk: keys (NaN under FLOAT, TOTALORDER, JAX's comparator)
		 * against the comparator run per comparison, rows on threads */
		"HloModule t\nlt {\n  a = f32[] parameter(0)\n  b = f32[] parameter(1)\n  c = s32[] parameter(2)\n"
		"  d = s32[] parameter(3)\n  ROOT p = pred[] compare(a, b), direction=LT\n}\n"
		"ENTRY e {\n  a = f32[64,2000]{0,1} parameter(0)\n  i = s32[64,2000] iota(), iota_dimension=1\n"
		"  ROOT r = (f32[64,2000], s32[64,2000]{0,1}) sort(a, i), dimensions={1}, to_apply=lt\n}\n",
		"HloModule t\ngt {\n  a = f64[] parameter(0)\n  b = f64[] parameter(1)\n"
		"  ROOT p = pred[] compare(b, a), direction=LT, type=TOTALORDER\n}\n"
		"ENTRY e {\n  a = f64[3000,40] parameter(0)\n"
		"  ROOT r = f64[3000,40]{0,1} sort(a), dimensions={0}, to_apply=gt\n}\n",
		"HloModule t\ncmp {\n  a = bf16[] parameter(0)\n  b = bf16[] parameter(1)\n  qnan = bf16[] constant(nan)\n"
		"  zero = bf16[] constant(0)\n  an = pred[] compare(a, a), direction=NE\n"
		"  az = pred[] compare(a, zero), direction=EQ\n  a0 = bf16[] select(az, zero, a)\n"
		"  a1 = bf16[] select(an, qnan, a0)\n  bn = pred[] compare(b, b), direction=NE\n"
		"  bz = pred[] compare(b, zero), direction=EQ\n  b0 = bf16[] select(bz, zero, b)\n"
		"  b1 = bf16[] select(bn, qnan, b0)\n  ROOT p = pred[] compare(a1, b1), direction=LT, type=TOTALORDER\n}\n"
		"ENTRY e {\n  a = bf16[4,20000] parameter(0)\n"
		"  ROOT r = bf16[4,20000] sort(a), dimensions={1}, is_stable=true, to_apply=cmp\n}\n",
		"HloModule t\nle {\n  a = s8[] parameter(0)\n  b = s8[] parameter(1)\n  c = u64[] parameter(2)\n"
		"  d = u64[] parameter(3)\n  ROOT p = pred[] compare(a, b), direction=LE\n}\n"
		"ENTRY e {\n  a = s8[200,300] parameter(0)\n  b = u64[200,300]{0,1} parameter(1)\n"
		"  ROOT r = (s8[200,300], u64[200,300]) sort(a, b), dimensions={1}, to_apply=le\n}\n",
		"HloModule t\nENTRY e {\n  a = f32[40,3000] parameter(0)\n"
		"  ROOT r = (f32[40,7], s32[40,7]) topk(a), k=7\n}\n",
		"HloModule t\nENTRY e {\n  a = f16[20,5000]{0,1} parameter(0)\n"
		"  ROOT r = (f16[20,300]{0,1}, s32[20,300]) topk(a), k=300, largest=false\n}\n",
	};
	for (int i = 0; i < N_OF(progs); i++) {
		CU_ASSERT(run_text(progs[i], 1));
		CU_ASSERT(run_text(progs[i], 2));
		CU_ASSERT(run_text(progs[i], 3));
	}
}

/* hloi_literal_compare (hloi run --compare): tolerances, NaN, integers,
 * layouts, mismatched shapes. */
static size_t compare_texts(const char *expected, const char *actual, hloi_status *st)
{
	hloi_context *ctx = NULL;
	hloi_literal **e = NULL, **a = NULL;
	size_t ne = 0, na = 0, bad = (size_t)-1;
	*st = HLOI_EPARSE;
	if (hloi_context_new(&ctx) == HLOI_OK &&
	    hloi_literal_parse_list(&e, &ne, ctx, "e", expected, strlen(expected)) == HLOI_OK &&
	    hloi_literal_parse_list(&a, &na, ctx, "a", actual, strlen(actual)) == HLOI_OK && ne == 1 && na == 1)
		*st = hloi_literal_compare(e[0], a[0], ctx, 1e-3, 1e-3, NULL, 0, &bad);
	hloi_literal_array_free(e, ne);
	hloi_literal_array_free(a, na);
	hloi_context_free(ctx);
	return bad;
}

static void test_literal_compare(void)
{
	hloi_status st;
	CU_ASSERT_EQUAL(compare_texts("f32[4] {1, 2, 10000, nan}", "f32[4] {1.0005, 2.5, 10005, nan}", &st), 1);
	CU_ASSERT_EQUAL(st, HLOI_OK);
	CU_ASSERT_EQUAL(compare_texts("f64[3] {0, inf, 1}", "f64[3] {0.002, inf, nan}", &st), 2);
	CU_ASSERT_EQUAL(compare_texts("f32[2] {inf, 0}", "f32[2] {-inf, -0}", &st), 1);
	CU_ASSERT_EQUAL(compare_texts("bf16[2] {1, 2}", "bf16[2] {1, 2}", &st), 0);
	/* bf16: one ulp (2^-7 relative) passes, two do not; f16's ulp, 2^-10,
	 * is below 1e-3: 1e-3 still rules there */
	CU_ASSERT_EQUAL(compare_texts("bf16[3] {64, 1, -3}", "bf16[3] {64.5, 1.0078125, -3.015625}", &st), 0);
	CU_ASSERT_EQUAL(compare_texts("bf16[2] {64, 1}", "bf16[2] {65, 1.015625}", &st), 2);
	CU_ASSERT_EQUAL(compare_texts("f16[2] {64, 1024}", "f16[2] {64.0625, 1026}", &st), 1);
	CU_ASSERT_EQUAL(compare_texts("s32[3] {1, 2, 3}", "s32[3] {1, 3, 3}", &st), 1);
	CU_ASSERT_EQUAL(compare_texts("pred[2] {1, 0}", "pred[2] {1, 1}", &st), 1);
	CU_ASSERT_EQUAL(compare_texts("f32[2,2]{1,0} {{1, 2}, {3, 4}}", "f32[2,2]{0,1} {{1, 2}, {3, 4}}", &st), 0);
	CU_ASSERT_EQUAL(st, HLOI_OK);
	compare_texts("f32[2] {1, 2}", "f32[3] {1, 2, 3}", &st);
	CU_ASSERT_EQUAL(st, HLOI_EINVAL);
	compare_texts("f32[2] {1, 2}", "s32[2] {1, 2}", &st);
	CU_ASSERT_EQUAL(st, HLOI_EINVAL);
	/* tuples element by element (reductions and loops return them) */
	CU_ASSERT_EQUAL(compare_texts("(f32[2], (s32[], pred[1])) ({1, 2}, (3, {1}))",
				      "(f32[2], (s32[], pred[1])) ({1, 2.5}, (4, {1}))", &st), 2);
	CU_ASSERT_EQUAL(st, HLOI_OK);
	CU_ASSERT_EQUAL(compare_texts("(f32[2], s32[]) ({1, 2}, 3)", "(f32[2], s32[]) ({1, 2}, 3)", &st), 0);
	compare_texts("(f32[2], s32[]) ({1, 2}, 3)", "(f32[2], f32[]) ({1, 2}, 3)", &st);
	CU_ASSERT_EQUAL(st, HLOI_EINVAL);
	compare_texts("(f32[2]) ({1, 2})", "f32[2] {1, 2}", &st);
	CU_ASSERT_EQUAL(st, HLOI_EINVAL);
}

static const unit_test fast_tests[] = {
	{ "literal_compare", test_literal_compare },
	{ "fixed_programs", test_fixed_programs },
	{ "random_programs", test_random_programs },
	{ "vector_math", test_vector_math },
	{ NULL, NULL },
};

const unit_suite unit_suites[] = {
	{ "fast", fast_tests },
	{ NULL, NULL },
};
