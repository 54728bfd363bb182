/* Vectorised f32 tanh, exp and log (eval/fast/vmath.h). */
#include "eval/fast/vmath.h"

#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#if defined(HLOI_HAVE_LIBMVEC) && defined(__x86_64__)
#include <immintrin.h>

/* glibc's libmvec, by the x86-64 vector function ABI's names: b = SSE2
 * (4 lanes, any x86-64), d = AVX2 (8 lanes). */
__m128 _ZGVbN4v_tanhf(__m128);
__m128 _ZGVbN4v_expf(__m128);
__m128 _ZGVbN4v_logf(__m128);
__attribute__((target("avx2"))) __m256 _ZGVdN8v_tanhf(__m256);
__attribute__((target("avx2"))) __m256 _ZGVdN8v_expf(__m256);
__attribute__((target("avx2"))) __m256 _ZGVdN8v_logf(__m256);
__attribute__((target("avx512f"))) __m512 _ZGVeN16v_tanhf(__m512);
__attribute__((target("avx512f"))) __m512 _ZGVeN16v_expf(__m512);
__attribute__((target("avx512f"))) __m512 _ZGVeN16v_logf(__m512);

/* A row of n: a[0] for all (stride 0) or a contiguous run; the tail and a
 * broadcast value go through a padded vector so every element sees the
 * same function. One body for every width: `pre` the intrinsics' prefix
 * (_mm, _mm256, _mm512), `lanes` the floats of a vector. */
#define VM_ROW(name, attrs, pre, lanes, vf)                                                           \
	attrs static void name(void *restrict vo, const void *const *va, const int64_t *s, int64_t n,  \
			       const ew_params *p)                                                     \
	{                                                                                              \
		float *restrict o = vo;                                                                \
		const float *restrict a = va[0];                                                       \
		(void)p;                                                                               \
		if (s[0] == 0) {                                                                       \
			float v[lanes];                                                                \
			pre##_storeu_ps(v, vf(pre##_set1_ps(a[0])));                                   \
			for (int64_t i = 0; i < n; i++)                                                \
				o[i] = v[0];                                                           \
			return;                                                                        \
		}                                                                                      \
		int64_t i = 0;                                                                         \
		for (; i + (lanes) <= n; i += (lanes))                                                 \
			pre##_storeu_ps(o + i, vf(pre##_loadu_ps(a + i)));                             \
		if (i < n) {                                                                           \
			float t[lanes] = { 0 };                                                        \
			memcpy(t, a + i, (size_t)(n - i) * sizeof *t);                                 \
			pre##_storeu_ps(t, vf(pre##_loadu_ps(t)));                                     \
			memcpy(o + i, t, (size_t)(n - i) * sizeof *t);                                 \
		}                                                                                      \
	}
#define VM_ROW_SSE(name, vf) VM_ROW(name, , _mm, 4, vf)
#define VM_ROW_AVX2(name, vf) VM_ROW(name, __attribute__((target("avx2"))), _mm256, 8, vf)
#define VM_ROW_AVX512(name, vf) VM_ROW(name, __attribute__((target("avx512f"))), _mm512, 16, vf)

VM_ROW_SSE(tanh_sse, _ZGVbN4v_tanhf)
VM_ROW_SSE(exp_sse, _ZGVbN4v_expf)
VM_ROW_SSE(log_sse, _ZGVbN4v_logf)
VM_ROW_AVX2(tanh_avx2, _ZGVdN8v_tanhf)
VM_ROW_AVX2(exp_avx2, _ZGVdN8v_expf)
VM_ROW_AVX2(log_avx2, _ZGVdN8v_logf)
VM_ROW_AVX512(tanh_avx512, _ZGVeN16v_tanhf)
VM_ROW_AVX512(exp_avx512, _ZGVeN16v_expf)
VM_ROW_AVX512(log_avx512, _ZGVeN16v_logf)
#define VM_BUILT 1
#else
#define VM_BUILT 0
#endif

/* -1 not decided yet, 0 off, 1 on */
static atomic_int vm_state = -1;

static int vm_on(void)
{
	int st = atomic_load_explicit(&vm_state, memory_order_relaxed);
	if (st < 0) {
		const char *e = getenv("HLOI_VECTOR_MATH");
		st = VM_BUILT && !(e && strcmp(e, "0") == 0);
		atomic_store_explicit(&vm_state, st, memory_order_relaxed);
	}
	return st;
}

int vmath_enable(int on)
{
	atomic_store_explicit(&vm_state, VM_BUILT && on, memory_order_relaxed);
	return VM_BUILT;
}

ew_row_fn vmath_row(opcode op, etype t)
{
	if (t != ET_F32 || !vm_on())
		return NULL;
#if VM_BUILT
	/* the widest the machine has: 16 lanes with AVX-512 (about 3x the
	 * AVX2 functions' speed), 8 with AVX2, else 4 */
	int w = __builtin_cpu_supports("avx512f") ? 16 : __builtin_cpu_supports("avx2") ? 8 : 4;
	/* op-specific: the vector functions there are (an optimisation) */
	switch (op) {
	case OP_TANH:
		return w == 16 ? tanh_avx512 : w == 8 ? tanh_avx2 : tanh_sse;
	case OP_EXP:
		return w == 16 ? exp_avx512 : w == 8 ? exp_avx2 : exp_sse;
	case OP_LOG:
		return w == 16 ? log_avx512 : w == 8 ? log_avx2 : log_sse;
	default:
		return NULL;
	}
#else
	(void)op;
	return NULL;
#endif
}
