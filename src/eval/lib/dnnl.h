/* oneDNN's forward convolution and bf16 matmul, opened with dlopen when an
 * f32 convolution or a bf16 dot first asks for it (eval/lib/dnnl.c), as OpenBLAS is (eval/lib/blas.h).
 * Neither the build nor a run needs the library: without it (or without
 * its header at build time, or with HLOI_DNNL=0 in the environment) the
 * caller takes its own path. */
#ifndef HLOI_EVAL_DNNL_H
#define HLOI_EVAL_DNNL_H

#include <stddef.h>
#include <stdint.h>

#define DNNL_CONV_MAX_SPATIAL 3

/* An f32 convolution as oneDNN sees it: src [N][C][spatial], weights
 * [G][O/G][C/G][spatial], dst [N][O][spatial out]; every array plain with
 * the given element strides (any order); dilation as XLA's rhs_dilate (1:
 * none); padding non-negative. */
typedef struct dnnl_conv {
	int ns;                                   /* spatial dims, 1-3 */
	int64_t n, c, o, g;                       /* batch, input and output features, groups */
	int64_t isz[DNNL_CONV_MAX_SPATIAL], ksz[DNNL_CONV_MAX_SPATIAL], osz[DNNL_CONV_MAX_SPATIAL];
	int64_t stride[DNNL_CONV_MAX_SPATIAL], dilate[DNNL_CONV_MAX_SPATIAL];
	int64_t pad_lo[DNNL_CONV_MAX_SPATIAL], pad_hi[DNNL_CONV_MAX_SPATIAL];
	const float *src, *wei;
	float *dst;
	int64_t src_s[2 + DNNL_CONV_MAX_SPATIAL];  /* N, C, spatial */
	int64_t wei_s[3 + DNNL_CONV_MAX_SPATIAL];  /* G, O/G, C/G, spatial */
	int64_t dst_s[2 + DNNL_CONV_MAX_SPATIAL];  /* N, O, spatial */
} dnnl_conv;

/* A convolution made ready: oneDNN's primitive and, when oneDNN wants the
 * weights in its own layout, their reorder. */
typedef struct dnnl_conv_plan {
	void *conv, *conv_pd, *reorder, *reorder_pd;
	size_t wei_bytes;  /* bytes of the reordered weights (0: none) */
} dnnl_conv_plan;

/* Makes the plan: 0 done (*p then holds what dnnl_conv_run needs; free with
 * dnnl_conv_free), nonzero when oneDNN is absent or declines the case. */
int dnnl_conv_prepare(const dnnl_conv *c, dnnl_conv_plan *p);
/* Runs it on up to `threads` threads (0: oneDNN's default); wei_buf holds
 * p->wei_bytes (NULL when 0). Nonzero when oneDNN failed (nothing written
 * that the caller's own path would not overwrite). */
int dnnl_conv_run(const dnnl_conv *c, const dnnl_conv_plan *p, void *wei_buf, int threads);
void dnnl_conv_free(dnnl_conv_plan *p);
/* A bf16 matrix product as oneDNN's matmul sees it: src [B][M][K] times
 * weights [B][K][N] into dst [B][M][N] (bf16, or f32 when dst_bf16 is 0),
 * each plain with the given element strides (batch, row, column), summed
 * in f32 and rounded once. */
typedef struct dnnl_mm {
	int64_t b, m, n, k;
	const void *src, *wei;
	void *dst;
	int dst_bf16;
	int64_t src_s[3], wei_s[3], dst_s[3];
} dnnl_mm;

/* Runs it on up to `threads` threads (0: oneDNN's default). Nonzero when
 * oneDNN is absent or declines the case (only its reference kernel would
 * take it); dst is then untouched or to be overwritten. */
int dnnl_matmul_run(const dnnl_mm *mm, int threads);

/* Whether every size should go to oneDNN (HLOI_DNNL=all in the
 * environment: the tests' way to reach it with small convolutions and
 * dots). */
int dnnl_every_size(void);
/* Whether oneDNN has been opened (without opening it). */
int dnnl_opened(void);

#endif
