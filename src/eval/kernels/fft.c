/* fft: FFT, IFFT, RFFT and IRFFT over the innermost fft_length dims, in
 * double-precision complex whatever the element type, as XLA's evaluator
 * (HloEvaluator::HandleFft works in complex128), rounded once into the
 * result type. Both engines use this kernel.
 *
 * The working array holds the full complex transform (RFFT's and IRFFT's
 * last dim at fft_length's length, not n/2+1) in row-major order. Each
 * transformed axis is done line by line: radix-2 for a power-of-two
 * length, a direct DFT otherwise, twiddles from sin/cos of the exact
 * angle. IRFFT inverts the other axes first, then completes each row of
 * the last axis by Hermitian symmetry (X[n-k] = conj X[k]) and keeps the
 * real part, as NumPy's irfftn: the imaginary parts of the zero and
 * Nyquist bins do not count. IFFT and IRFFT divide by the length. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "core/index.h"
#include "core/literal.h"
#include "eval/scalar/cplx.h"
#include "eval/kernels/kernel.h"
#include "util/alloc.h"

static int is_pow2(int64_t n)
{
	return n > 0 && (n & (n - 1)) == 0;
}

/* exp(sign * 2 pi i k / n) */
static cplx twiddle(int64_t k, int64_t n, int sign)
{
	const double two_pi = 6.283185307179586476925286766559;
	double a = two_pi * (double)k / (double)n;
	return cos(a) + (double)sign * sin(a) * _Complex_I;
}

/* In place on x[0..n), with the twiddles tw[n] (their sign makes the
 * direction) and scratch tmp[n]. */
static void dft(cplx *x, int64_t n, const cplx *tw, cplx *tmp)
{
	if (n <= 1)
		return;
	if (is_pow2(n)) {
		/* bit-reversal permutation, then butterflies */
		for (int64_t i = 1, j = 0; i < n; i++) {
			int64_t bit = n >> 1;
			for (; j & bit; bit >>= 1)
				j ^= bit;
			j ^= bit;
			if (i < j) {
				cplx t = x[i];
				x[i] = x[j];
				x[j] = t;
			}
		}
		for (int64_t len = 2; len <= n; len <<= 1) {
			int64_t half = len / 2, step = n / len;
			for (int64_t s = 0; s < n; s += len)
				for (int64_t k = 0; k < half; k++) {
					cplx u = x[s + k], v = x[s + k + half] * tw[k * step];
					x[s + k] = u + v;
					x[s + k + half] = u - v;
				}
		}
		return;
	}
	for (int64_t k = 0; k < n; k++) {
		cplx acc = 0;
		int64_t jk = 0;  /* j * k mod n */
		for (int64_t j = 0; j < n; j++) {
			acc += x[j] * tw[jk];
			jk += k;
			if (jk >= n)
				jk -= n;
		}
		tmp[k] = acc;
	}
	memcpy(x, tmp, (size_t)n * sizeof *x);
}

/* Transforms every line of axis d of w (row-major dims, rank r). */
/* The place of index idx in the row-major work array of dims wd (rank r)
 * in *lin; whether idx lies inside it. */
static int work_place(const int64_t *idx, const int64_t *wd, int r, int64_t *lin)
{
	int inside = 1;
	*lin = 0;
	for (int d = 0; d < r; d++) {
		inside &= idx[d] < wd[d];
		*lin = *lin * wd[d] + idx[d];
	}
	return inside;
}

static void transform_axis(cplx *w, const int64_t *dims, int r, int d, int sign, cplx *line, cplx *tw,
			   cplx *tmp)
{
	int64_t n = dims[d], inner = 1, outer = 1;
	for (int k = d + 1; k < r; k++)
		inner *= dims[k];
	for (int k = 0; k < d; k++)
		outer *= dims[k];
	for (int64_t k = 0; k < n; k++)
		tw[k] = twiddle(k, n, sign);
	for (int64_t o = 0; o < outer; o++)
		for (int64_t i = 0; i < inner; i++) {
			cplx *base = w + o * n * inner + i;
			for (int64_t k = 0; k < n; k++)
				line[k] = base[k * inner];
			dft(line, n, tw, tmp);
			for (int64_t k = 0; k < n; k++)
				base[k * inner] = sign > 0 ? line[k] / (double)n : line[k];
		}
}

hloi_status kernel_fft(const kernel_ctx *kc)
{
	engine *e = kc->e;
	frame *f = kc->f;
	const instr *in = kc->in;
	hloi_literal *const *ops = kc->ops;
	hloi_literal *dest = kc->dest;
	const hloi_literal *x = ops[0];
	const char *type = instr_text(in, ATTR_FFT_TYPE);
	const int_list *len = instr_ints(in, ATTR_FFT_LENGTH);
	const shape *xs = &x->shape, *rs = in->result;
	if (!type || !len || len->n < 1 || len->n > xs->rank || shape_is_tuple(rs) || rs->rank != xs->rank)
		return kernel_none(kc);
	int irfft = strcmp(type, "IRFFT") == 0;
	int sign = strcmp(type, "IFFT") == 0 || irfft ? 1 : -1;
	int r = xs->rank, nf = len->n;
	/* the working array: the operand's dims with the transformed ones at
	 * fft_length's lengths */
	int64_t wd[HLOI_MAX_RANK], total = 1, longest = 1;
	memcpy(wd, xs->dims, sizeof(int64_t) * (size_t)r);
	for (int i = 0; i < nf; i++) {
		wd[r - nf + i] = len->v[i];
		if (len->v[i] > longest)
			longest = len->v[i];
	}
	for (int d = 0; d < r; d++)
		total = wd[d] && total > INT64_MAX / wd[d] ? -1 : total < 0 ? -1 : total * wd[d];
	if (total < 0 || total > INT64_MAX / (int64_t)sizeof(cplx) / 2)
		return value_oom(e, INT64_MAX);
	int64_t work_bytes = (total + 3 * longest) * (int64_t)sizeof(cplx);

	int pos = in->position;
	hloi_literal *res = dest;
	if (!res) {
		hloi_status st = value_new(e, rs, &res);
		if (st != HLOI_OK)
			return st;
	}
	int64_t count, idx[HLOI_MAX_RANK] = { 0 };
	if (shape_element_count(rs, &count) == 0 && count > 0 && total == 0) {
		/* a zero fft_length: nothing to transform, zeros (XLA's evaluator) */
		do
			cplx_write(rs->type, literal_element(res, idx), 0);
		while (index_next(r, rs->dims, idx));
	} else if (count > 0) {
		hloi_status st = value_reserve(e, work_bytes);
		cplx *w = st == HLOI_OK ? hloi_malloc((size_t)work_bytes) : NULL;
		if (!w) {
			if (st == HLOI_OK)
				value_unreserve(e, work_bytes);
			if (res != dest)
				value_drop(e, res);
			return st != HLOI_OK ? st : value_oom(e, work_bytes);
		}
		cplx *line = w + total, *tw = line + longest, *tmp = tw + longest;
		/* load: the operand's elements at their places (IRFFT and RFFT
		 * fill the first x dims of the last axis; the rest is 0 for now) */
		memset(w, 0, (size_t)total * sizeof *w);
		int64_t xn;
		if (shape_element_count(xs, &xn) == 0 && xn > 0) {
			do {
				int64_t lin;
				/* an operand longer than fft_length is cut, a shorter one padded with 0 */
				if (work_place(idx, wd, r, &lin))
					w[lin] = cplx_read(xs->type, literal_element(x, idx));
			} while (index_next(r, xs->dims, idx));
		}
		int first = r - nf, last = r - 1;
		if (irfft) {
			for (int d = first; d < last; d++)
				transform_axis(w, wd, r, d, sign, line, tw, tmp);
			/* Hermitian completion of each row of the last axis */
			int64_t n = wd[last], have = xs->dims[last];
			for (int64_t row = 0; row < total / (n ? n : 1); row++) {
				cplx *p = w + row * n;
				for (int64_t k = have; k < n; k++)
					p[k] = conj(p[n - k]);
			}
			transform_axis(w, wd, r, last, sign, line, tw, tmp);
		} else {
			for (int d = first; d <= last; d++)
				transform_axis(w, wd, r, d, sign, line, tw, tmp);
		}
		/* store: the result's elements from their places */
		memset(idx, 0, sizeof idx);
		do {
			int64_t lin;
			int inside = work_place(idx, wd, r, &lin);
			cplx_write(rs->type, literal_element(res, idx), inside ? w[lin] : 0);
		} while (index_next(r, rs->dims, idx));
		hloi_free(w);
		value_unreserve(e, work_bytes);
	}
	f->vals[pos] = res;
	f->owned[pos] = res != dest ? VAL_OWNED : VAL_BORROWED;
	return HLOI_OK;
}
