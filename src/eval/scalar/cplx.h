/* Elements as double-precision complex numbers, for the kernels that
 * compute in double whatever the element type and round once (fft,
 * cholesky, triangular-solve): real types read with a zero imaginary part
 * and written from the real part. */
#ifndef HLOI_EVAL_CPLX_H
#define HLOI_EVAL_CPLX_H

#include <complex.h>

#include "eval/scalar/scalar.h"

typedef _Complex double cplx;

static inline cplx cplx_read(etype t, const void *p)
{
	sc_num n = sc_read(t, p);
	return n.f + (n.is_complex ? n.im : 0.0) * _Complex_I;
}

static inline void cplx_write(etype t, void *p, cplx z)
{
	sc_num n = { 1, 0, creal(z), 0, 0, etype_get_kind(t) == KIND_COMPLEX, cimag(z) };
	sc_write(t, p, n);
}

#endif
