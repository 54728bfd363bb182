/* batch-norm-inference, -training and -grad with XLA's formulas (the
 * BatchNormExpander's, xla/service/batchnorm_expander.cc), per feature
 * (the operand's dimension feature_index), computed in double precision
 * and rounded once into the element type; epsilon is a float in XLA (the
 * instruction and its proto field hold f32) and is then rounded to the
 * element type, as the expander converts it. Both engines use this kernel.
 *
 *   inference: y = x * s' + (offset - mean * s'), s' = scale / sqrt(var + eps)
 *   training:  mean = E[x], var = E[x^2] - E[x]^2 (biased), y as inference;
 *              results (y, mean, var)
 *   grad:      with d = dy, c = x - mean, r = 1 / sqrt(var + eps), N per feature:
 *              dscale = sum(d c) r, doffset = sum(d),
 *              dx = scale r (N d - sum(d) - c sum(d c) / (var + eps)) / N */
#include <math.h>
#include <string.h>

#include "core/index.h"
#include "core/literal.h"
#include "eval/scalar/cplx.h"
#include "eval/kernels/kernel.h"
#include "util/alloc.h"

static double rd(const hloi_literal *v, const int64_t *idx)
{
	return creal(cplx_read(v->shape.type, literal_element(v, idx)));
}

static void wr(hloi_literal *v, const int64_t *idx, double x)
{
	cplx_write(v->shape.type, literal_element(v, idx), x);
}

/* A rank-1 per-feature value at f. */
static double feat(const hloi_literal *v, int64_t f)
{
	return rd(v, &f);
}

static void put_feat(hloi_literal *v, int64_t f, double x)
{
	wr(v, &f, x);
}

/* x rounded to type t (the expander converts epsilon to the operand's type). */
static double in_type(etype t, double x)
{
	unsigned char buf[16] = {0};
	cplx_write(t, buf, x);
	return creal(cplx_read(t, buf));
}

hloi_status kernel_batch_norm(const kernel_ctx *kc)
{
	engine *e = kc->e;
	frame *f = kc->f;
	const instr *in = kc->in;
	hloi_literal *const *ops = kc->ops;
	hloi_literal *dest = kc->dest;
	const hloi_literal *x = ops[0];
	const shape *xs = &x->shape;
	int64_t fi;
	const attr *ea = instr_attr(in, ATTR_EPSILON);
	if (!instr_int(in, ATTR_FEATURE_INDEX, &fi) || !ea || ea->kind != AK_FLOAT || fi < 0 || fi >= xs->rank)
		return kernel_none(kc);
	int training = in->op == OP_BATCH_NORM_TRAINING, grad = in->op == OP_BATCH_NORM_GRAD;
	int64_t nf = xs->dims[fi], total;
	if (shape_element_count(xs, &total))
		return kernel_none(kc);
	int64_t per = nf ? total / nf : 0;  /* elements per feature */
	/* XLA holds epsilon as a float (HloInstruction and its proto field) */
	double eps = in_type(xs->type, (double)(float)ea->u.f);
	/* per feature: sums (sum x, sum x^2 / sum d, sum d c) and mean, var */
	int64_t bytes = nf > 0 ? nf * 4 * (int64_t)sizeof(double) : 0;
	if (nf > INT64_MAX / 64)
		return value_oom(e, INT64_MAX);
	hloi_status st = value_reserve(e, bytes);
	if (st != HLOI_OK)
		return st;
	double *acc = hloi_calloc((size_t)(nf ? 4 * nf : 1), sizeof *acc);
	if (!acc) {
		value_unreserve(e, bytes);
		return value_oom(e, bytes);
	}
	double *s1 = acc, *s2 = acc + nf, *mean = acc + 2 * nf, *var = acc + 3 * nf;
	hloi_literal *res = dest;
	if (!res)
		st = value_new(e, in->result, &res);
	if (st != HLOI_OK) {
		hloi_free(acc);
		value_unreserve(e, bytes);
		return st;
	}
	hloi_literal *y = shape_is_tuple(in->result) ? res->elems[0] : res;
	int64_t idx[HLOI_MAX_RANK] = { 0 };
	if (grad || !training) {
		/* the statistics are operands: grad (x, scale, mean, var, dy), inference (x, scale, offset, mean, var) */
		for (int64_t k = 0; k < nf; k++) {
			mean[k] = feat(ops[grad ? 2 : 3], k);
			var[k] = feat(ops[grad ? 3 : 4], k);
		}
	} else {
		if (total > 0)
			do {
				double v = rd(x, idx);
				s1[idx[fi]] += v;
				s2[idx[fi]] += v * v;
			} while (index_next(xs->rank, xs->dims, idx));
		for (int64_t k = 0; k < nf; k++) {  /* no elements: 0 / 0, NaN */
			mean[k] = s1[k] / (double)per;
			var[k] = s2[k] / (double)per - mean[k] * mean[k];
		}
	}
	if (grad && total > 0) {
		/* sum(d), sum(d (x - mean)) */
		memset(s1, 0, (size_t)(2 * nf) * sizeof *s1);
		do {
			int64_t k = idx[fi];
			double d = rd(ops[4], idx);
			s1[k] += d;
			s2[k] += d * (rd(x, idx) - mean[k]);
		} while (index_next(xs->rank, xs->dims, idx));
	}
	if (total > 0) {
		do {
			int64_t k = idx[fi];
			double r = 1.0 / sqrt(var[k] + eps), v = rd(x, idx), out;
			if (grad) {
				double d = rd(ops[4], idx), c = v - mean[k];
				out = feat(ops[1], k) * r * ((double)per * d - s1[k] - c * s2[k] / (var[k] + eps)) / (double)per;
			} else {
				double s = feat(ops[1], k) * r;
				out = v * s + (feat(ops[2], k) - mean[k] * s);
			}
			wr(y, idx, out);
		} while (index_next(xs->rank, xs->dims, idx));
	}
	if (training || grad)
		for (int64_t k = 0; k < nf; k++) {
			put_feat(res->elems[1], k, grad ? s2[k] / sqrt(var[k] + eps) : mean[k]);
			put_feat(res->elems[2], k, grad ? s1[k] : var[k]);
		}
	hloi_free(acc);
	value_unreserve(e, bytes);
	f->vals[in->position] = res;
	f->owned[in->position] = res != dest ? VAL_OWNED : VAL_BORROWED;
	return HLOI_OK;
}
