/* oneDNN opened on demand (eval/lib/dnnl.h): dlopen at the first
 * convolution or bf16 matrix product that asks, its entry points looked up once, one CPU engine
 * for the process. The types come from oneDNN's header (libdnnl-dev); a
 * build without it compiles the entry points as "absent".
 *
 * oneDNN 2.x runs on OpenMP (Debian's build: libgomp): a run's thread count
 * is set with omp_set_num_threads on the calling thread before each
 * execution (it is that thread's setting, so the participants of a run do
 * not disturb each other). */
#include <dlfcn.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#include "eval/lib/dnnl.h"

#if defined(__has_include)
#if __has_include(<oneapi/dnnl/dnnl.h>)
#define HLOI_HAVE_DNNL 1
#endif
#endif

int dnnl_every_size(void)
{
	static atomic_int every;  /* 0 unknown, 1 no, 2 yes */
	int v = atomic_load(&every);
	if (!v) {
		const char *env = getenv("HLOI_DNNL");
		v = env && strcmp(env, "all") == 0 ? 2 : 1;
		atomic_store(&every, v);
	}
	return v == 2;
}

#ifdef HLOI_HAVE_DNNL
#include <oneapi/dnnl/dnnl.h>

/* X(name, return type, parameter list): every symbol looked up. */
#define DNNL_FUNCTIONS(X)                                                                                        \
	X(dnnl_engine_create, dnnl_status_t, (dnnl_engine_t *, dnnl_engine_kind_t, size_t))                      \
	X(dnnl_stream_create, dnnl_status_t, (dnnl_stream_t *, dnnl_engine_t, unsigned))                         \
	X(dnnl_stream_wait, dnnl_status_t, (dnnl_stream_t))                                                       \
	X(dnnl_stream_destroy, dnnl_status_t, (dnnl_stream_t))                                                    \
	X(dnnl_memory_desc_init_by_strides, dnnl_status_t,                                                        \
	  (dnnl_memory_desc_t *, int, const dnnl_dims_t, dnnl_data_type_t, const dnnl_dims_t))                    \
	X(dnnl_memory_desc_init_by_tag, dnnl_status_t,                                                            \
	  (dnnl_memory_desc_t *, int, const dnnl_dims_t, dnnl_data_type_t, dnnl_format_tag_t))                    \
	X(dnnl_memory_desc_equal, int, (const dnnl_memory_desc_t *, const dnnl_memory_desc_t *))                 \
	X(dnnl_memory_desc_get_size, size_t, (const dnnl_memory_desc_t *))                                        \
	X(dnnl_memory_create, dnnl_status_t, (dnnl_memory_t *, const dnnl_memory_desc_t *, dnnl_engine_t, void *)) \
	X(dnnl_memory_destroy, dnnl_status_t, (dnnl_memory_t))                                                    \
	X(dnnl_dilated_convolution_forward_desc_init, dnnl_status_t,                                              \
	  (dnnl_convolution_desc_t *, dnnl_prop_kind_t, dnnl_alg_kind_t, const dnnl_memory_desc_t *,              \
	   const dnnl_memory_desc_t *, const dnnl_memory_desc_t *, const dnnl_memory_desc_t *, const dnnl_dims_t, \
	   const dnnl_dims_t, const dnnl_dims_t, const dnnl_dims_t))                                               \
	X(dnnl_primitive_desc_create, dnnl_status_t,                                                              \
	  (dnnl_primitive_desc_t *, const_dnnl_op_desc_t, const_dnnl_primitive_attr_t, dnnl_engine_t,            \
	   const_dnnl_primitive_desc_t))                                                                           \
	X(dnnl_primitive_desc_query_md, const dnnl_memory_desc_t *, (const_dnnl_primitive_desc_t, dnnl_query_t, int)) \
	X(dnnl_primitive_desc_destroy, dnnl_status_t, (dnnl_primitive_desc_t))                                    \
	X(dnnl_primitive_desc_query, dnnl_status_t, (const_dnnl_primitive_desc_t, dnnl_query_t, int, void *))    \
	X(dnnl_reorder_primitive_desc_create, dnnl_status_t,                                                      \
	  (dnnl_primitive_desc_t *, const dnnl_memory_desc_t *, dnnl_engine_t, const dnnl_memory_desc_t *,        \
	   dnnl_engine_t, const_dnnl_primitive_attr_t))                                                            \
	X(dnnl_primitive_create, dnnl_status_t, (dnnl_primitive_t *, const_dnnl_primitive_desc_t))                \
	X(dnnl_primitive_execute, dnnl_status_t, (const_dnnl_primitive_t, dnnl_stream_t, int, const dnnl_exec_arg_t *)) \
	X(dnnl_primitive_destroy, dnnl_status_t, (dnnl_primitive_t))                                              \
	X(dnnl_matmul_desc_init, dnnl_status_t,                                                                   \
	  (dnnl_matmul_desc_t *, const dnnl_memory_desc_t *, const dnnl_memory_desc_t *,                          \
	   const dnnl_memory_desc_t *, const dnnl_memory_desc_t *))

#define DNNL_MEMBER(name, ret, params) ret(*name) params;
static struct {
	DNNL_FUNCTIONS(DNNL_MEMBER)
	void (*omp_set_num_threads)(int);
} fns;
#undef DNNL_MEMBER

static pthread_once_t once = PTHREAD_ONCE_INIT;
static atomic_int opened;
static dnnl_engine_t engine;

static void open_once(void)
{
	const char *env = getenv("HLOI_DNNL");
	if (env && strcmp(env, "0") == 0)
		return;
#ifdef HLOI_SANITIZED
	/* sanitizer builds: oneDNN's OpenMP threads are not instrumented, and
	 * LeakSanitizer (compiler-rt 14) crashes at exit walking the dynamic
	 * TLS those threads hold; the convolutions take hloi's own paths,
	 * which the normal build checks against oneDNN's bit for bit */
	return;
#endif
	/* OpenMP's threads wait for the next parallel region spinning, by
	 * default: between oneDNN's calls they took the cores from hloi's own
	 * threads (mha_block_1x12x128x64_bf16: 6 ms a run became 50). Asleep
	 * instead, unless the environment says otherwise; libgomp reads it as
	 * it loads, with oneDNN, below. */
	setenv("OMP_WAIT_POLICY", "passive", 0);
	void *h = dlopen("libdnnl.so.2", RTLD_NOW | RTLD_LOCAL);
	if (!h)
		return;
	/* POSIX's dlsym gives functions as void *: copied into each pointer */
#define DNNL_LOOKUP(name, ret, params)                              \
	{                                                           \
		void *p = dlsym(h, #name);                          \
		if (!p) {                                           \
			dlclose(h);                                 \
			return;                                     \
		}                                                   \
		memcpy(&fns.name, &p, sizeof fns.name);             \
	}
	DNNL_FUNCTIONS(DNNL_LOOKUP)
#undef DNNL_LOOKUP
	/* the OpenMP runtime oneDNN loaded (none: oneDNN's own threads) */
	void *omp = dlopen("libgomp.so.1", RTLD_NOW | RTLD_LOCAL | RTLD_NOLOAD);
	if (omp) {
		void *p = dlsym(omp, "omp_set_num_threads");
		if (p)
			memcpy(&fns.omp_set_num_threads, &p, sizeof p);
	}
	if (fns.dnnl_engine_create(&engine, dnnl_cpu, 0) != dnnl_success)
		return;
	atomic_store(&opened, 1);
}

static int dnnl_open(void)
{
	pthread_once(&once, open_once);
	return atomic_load(&opened);
}

int dnnl_opened(void)
{
	return atomic_load(&opened);
}

void dnnl_conv_free(dnnl_conv_plan *p)
{
	if (p->conv)
		fns.dnnl_primitive_destroy(p->conv);
	if (p->reorder)
		fns.dnnl_primitive_destroy(p->reorder);
	if (p->conv_pd)
		fns.dnnl_primitive_desc_destroy(p->conv_pd);
	if (p->reorder_pd)
		fns.dnnl_primitive_desc_destroy(p->reorder_pd);
	memset(p, 0, sizeof *p);
}

/* The descriptors of the three arrays as the caller holds them. */
static int user_mds(const dnnl_conv *c, dnnl_memory_desc_t *src, dnnl_memory_desc_t *wei, dnnl_memory_desc_t *dst)
{
	dnnl_dims_t sd, ss, wd, ws, dd, ds;
	int n = 2 + c->ns, gw = c->g > 1;
	sd[0] = c->n;
	sd[1] = c->c;
	dd[0] = c->n;
	dd[1] = c->o;
	for (int i = 0; i < 2; i++) {
		ss[i] = c->src_s[i];
		ds[i] = c->dst_s[i];
	}
	wd[0] = c->g;
	wd[1] = c->o / c->g;
	wd[2] = c->c / c->g;
	for (int i = 0; i < 3; i++)
		ws[i] = c->wei_s[i];
	for (int i = 0; i < c->ns; i++) {
		sd[2 + i] = c->isz[i];
		ss[2 + i] = c->src_s[2 + i];
		dd[2 + i] = c->osz[i];
		ds[2 + i] = c->dst_s[2 + i];
		wd[3 + i] = c->ksz[i];
		ws[3 + i] = c->wei_s[3 + i];
	}
	return fns.dnnl_memory_desc_init_by_strides(src, n, sd, dnnl_f32, ss) != dnnl_success ||
	       fns.dnnl_memory_desc_init_by_strides(dst, n, dd, dnnl_f32, ds) != dnnl_success ||
	       fns.dnnl_memory_desc_init_by_strides(wei, n + gw, gw ? wd : wd + 1, dnnl_f32, gw ? ws : ws + 1) !=
		       dnnl_success;
}

int dnnl_conv_prepare(const dnnl_conv *c, dnnl_conv_plan *p)
{
	memset(p, 0, sizeof *p);
	if (c->ns < 1 || c->ns > DNNL_CONV_MAX_SPATIAL || !dnnl_open())
		return 1;
	dnnl_memory_desc_t src, wei, dst, wany;
	if (user_mds(c, &src, &wei, &dst))
		return 1;
	dnnl_dims_t wd, st, dl, pl, pr;
	int gw = c->g > 1;
	wd[0] = c->g;
	wd[1] = c->o / c->g;
	wd[2] = c->c / c->g;
	for (int i = 0; i < c->ns; i++) {
		wd[3 + i] = c->ksz[i];
		st[i] = c->stride[i];
		dl[i] = c->dilate[i] - 1;
		pl[i] = c->pad_lo[i];
		pr[i] = c->pad_hi[i];
	}
	if (fns.dnnl_memory_desc_init_by_tag(&wany, 2 + c->ns + gw, gw ? wd : wd + 1, dnnl_f32, dnnl_format_tag_any) !=
	    dnnl_success)
		return 1;
	dnnl_convolution_desc_t cd;
	if (fns.dnnl_dilated_convolution_forward_desc_init(&cd, dnnl_forward_inference, dnnl_convolution_direct, &src,
							     &wany, NULL, &dst, st, dl, pl, pr) != dnnl_success)
		return 1;
	dnnl_primitive_desc_t pd;
	if (fns.dnnl_primitive_desc_create(&pd, &cd, NULL, engine, NULL) != dnnl_success)
		return 1;
	p->conv_pd = pd;
	/* oneDNN's reference implementation (any layout oneDNN's kernels do
	 * not read) is slower than hloi's im2col by 10-100x: declined */
	const char *impl = NULL;
	if (fns.dnnl_primitive_desc_query(pd, dnnl_query_impl_info_str, 0, &impl) != dnnl_success || !impl ||
	    strncmp(impl, "ref", 3) == 0)
		goto fail;
	const dnnl_memory_desc_t *want = fns.dnnl_primitive_desc_query_md(pd, dnnl_query_weights_md, 0);
	dnnl_primitive_t prim;
	if (!want || fns.dnnl_primitive_create(&prim, pd) != dnnl_success)
		goto fail;
	p->conv = prim;
	if (!fns.dnnl_memory_desc_equal(want, &wei)) {
		dnnl_primitive_desc_t rpd;
		if (fns.dnnl_reorder_primitive_desc_create(&rpd, &wei, engine, want, engine, NULL) != dnnl_success)
			goto fail;
		p->reorder_pd = rpd;
		if (fns.dnnl_primitive_create(&prim, rpd) != dnnl_success)
			goto fail;
		p->reorder = prim;
		p->wei_bytes = fns.dnnl_memory_desc_get_size(want);
	}
	return 0;
fail:
	dnnl_conv_free(p);
	return 1;
}

/* m[0..3): memories over src, weights and dst (each NULL until made).
 * Nonzero when one cannot be made (those made stay in m, for
 * mems_destroy). */
static int mems_create(dnnl_memory_t m[3], const dnnl_memory_desc_t *src, const void *sp,
		       const dnnl_memory_desc_t *wei, const void *wp, const dnnl_memory_desc_t *dst, void *dp)
{
	return fns.dnnl_memory_create(&m[0], src, engine, (void *)sp) != dnnl_success ||
	       fns.dnnl_memory_create(&m[1], wei, engine, (void *)wp) != dnnl_success ||
	       fns.dnnl_memory_create(&m[2], dst, engine, dp) != dnnl_success;
}

static void mems_destroy(dnnl_memory_t *m, int n)
{
	for (int i = 0; i < n; i++)
		if (m[i])
			fns.dnnl_memory_destroy(m[i]);
}

/* Runs prim on src, weights and dst on s, on `threads` OpenMP threads
 * (0: as they are), and waits: 0 done. */
static int exec3(dnnl_primitive_t prim, dnnl_stream_t s, dnnl_memory_t src, dnnl_memory_t wei, dnnl_memory_t dst,
		 int threads)
{
	if (threads > 0 && fns.omp_set_num_threads)
		fns.omp_set_num_threads(threads);
	dnnl_exec_arg_t a[] = { { DNNL_ARG_SRC, src }, { DNNL_ARG_WEIGHTS, wei }, { DNNL_ARG_DST, dst } };
	return fns.dnnl_primitive_execute(prim, s, 3, a) != dnnl_success || fns.dnnl_stream_wait(s) != dnnl_success;
}

int dnnl_conv_run(const dnnl_conv *c, const dnnl_conv_plan *p, void *wei_buf, int threads)
{
	dnnl_memory_desc_t src, wei, dst;
	if (!p->conv || user_mds(c, &src, &wei, &dst))
		return 1;
	const dnnl_memory_desc_t *want = fns.dnnl_primitive_desc_query_md(p->conv_pd, dnnl_query_weights_md, 0);
	dnnl_stream_t s;
	if (fns.dnnl_stream_create(&s, engine, dnnl_stream_default_flags) != dnnl_success)
		return 1;
	dnnl_memory_t m[4] = { NULL, NULL, NULL, NULL };  /* src, weights, dst, reordered weights */
	int err = 1;
	if (mems_create(m, &src, c->src, &wei, c->wei, &dst, c->dst))
		goto done;
	if (threads > 0 && fns.omp_set_num_threads)
		fns.omp_set_num_threads(threads);
	if (p->reorder) {
		if (!wei_buf || fns.dnnl_memory_create(&m[3], want, engine, wei_buf) != dnnl_success)
			goto done;
		dnnl_exec_arg_t ra[] = { { DNNL_ARG_FROM, m[1] }, { DNNL_ARG_TO, m[3] } };
		if (fns.dnnl_primitive_execute(p->reorder, s, 2, ra) != dnnl_success)
			goto done;
	}
	err = exec3(p->conv, s, m[0], m[3] ? m[3] : m[1], m[2], 0);
done:
	mems_destroy(m, 4);
	fns.dnnl_stream_destroy(s);
	return err;
}

/* A [B][rows][cols] array's descriptor; a dimension of size 1 takes the
 * stride of the whole, which oneDNN's kernels expect of it. */
static int matmul_md(dnnl_memory_desc_t *md, int64_t b, int64_t r, int64_t c, const int64_t *s, int bf16)
{
	dnnl_dims_t d = { b, r, c }, st = { s[0], s[1], s[2] };
	int64_t whole = 1;
	for (int i = 0; i < 3; i++)
		if (d[i] > 1 && st[i] * d[i] > whole)
			whole = st[i] * d[i];
	for (int i = 0; i < 3; i++)
		if (d[i] == 1)
			st[i] = whole;
	return fns.dnnl_memory_desc_init_by_strides(md, 3, d, bf16 ? dnnl_bf16 : dnnl_f32, st) != dnnl_success;
}

int dnnl_matmul_run(const dnnl_mm *mm, int threads)
{
	if (!dnnl_open())
		return 1;
	dnnl_memory_desc_t src, wei, dst;
	if (matmul_md(&src, mm->b, mm->m, mm->k, mm->src_s, 1) || matmul_md(&wei, mm->b, mm->k, mm->n, mm->wei_s, 1) ||
	    matmul_md(&dst, mm->b, mm->m, mm->n, mm->dst_s, mm->dst_bf16))
		return 1;
	dnnl_matmul_desc_t md;
	dnnl_primitive_desc_t pd;
	if (fns.dnnl_matmul_desc_init(&md, &src, &wei, NULL, &dst) != dnnl_success ||
	    fns.dnnl_primitive_desc_create(&pd, &md, NULL, engine, NULL) != dnnl_success)
		return 1;
	/* oneDNN's reference matmul (no bf16 instructions, or a layout its
	 * kernels do not read) is slower than hloi's own path: declined */
	const char *impl = NULL;
	dnnl_primitive_t prim = NULL;
	dnnl_stream_t s = NULL;
	dnnl_memory_t m[3] = { NULL, NULL, NULL };
	int err = 1;
	if (fns.dnnl_primitive_desc_query(pd, dnnl_query_impl_info_str, 0, &impl) != dnnl_success || !impl ||
	    strncmp(impl, "ref", 3) == 0 || fns.dnnl_primitive_create(&prim, pd) != dnnl_success)
		goto done;
	if (fns.dnnl_stream_create(&s, engine, dnnl_stream_default_flags) != dnnl_success ||
	    mems_create(m, &src, mm->src, &wei, mm->wei, &dst, mm->dst))
		goto done;
	err = exec3(prim, s, m[0], m[1], m[2], threads);
done:
	mems_destroy(m, 3);
	if (s)
		fns.dnnl_stream_destroy(s);
	if (prim)
		fns.dnnl_primitive_destroy(prim);
	fns.dnnl_primitive_desc_destroy(pd);
	return err;
}

#else /* no oneDNN header at build time */

int dnnl_matmul_run(const dnnl_mm *mm, int threads)
{
	(void)mm;
	(void)threads;
	return 1;
}

int dnnl_conv_prepare(const dnnl_conv *c, dnnl_conv_plan *p)
{
	(void)c;
	memset(p, 0, sizeof *p);
	return 1;
}

int dnnl_conv_run(const dnnl_conv *c, const dnnl_conv_plan *p, void *wei_buf, int threads)
{
	(void)c;
	(void)p;
	(void)wei_buf;
	(void)threads;
	return 1;
}

void dnnl_conv_free(dnnl_conv_plan *p)
{
	memset(p, 0, sizeof *p);
}

int dnnl_opened(void)
{
	return 0;
}

#endif
