/* OpenBLAS opened on demand (eval/lib/blas.h): dlopen at the first product or
 * LAPACK call that needs it, its entry points looked up once. The build's
 * OpenBLAS (the directory pkg-config named) is tried first, then the
 * library's soname as the dynamic loader finds it. */
#include <dlfcn.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "eval/lib/blas.h"

#ifndef HLOI_OPENBLAS_DIR
#define HLOI_OPENBLAS_DIR ""
#endif

static pthread_once_t once = PTHREAD_ONCE_INIT;
static blas_fns fns;
static atomic_int opened;     /* 1 once fns is complete */
static char error[512];       /* why it could not be opened */
static atomic_int wanted;     /* blas_threads before opening: the count + 1; 0 none */
static int initial, current;  /* OpenBLAS's own thread count, and the one set */

/* Debian 12's OpenBLAS (0.3.21) picks its kernels by CPU model and, on a
 * model newer than itself, falls back to its SSE3 ones ("Prescott"): on an
 * Emerald Rapids (family 6, model 207) its sgemm ran at a third of the
 * speed of the AVX-512 kernels the CPU can run. Unless the user named the
 * kernels (OPENBLAS_CORETYPE), name those the CPU's features allow, before
 * the library reads the variable when it loads. __builtin_cpu_supports
 * also checks that the OS saves the registers. */
static void choose_kernels(void)
{
#if defined(__x86_64__) && defined(__GNUC__)
	if (getenv("OPENBLAS_CORETYPE"))
		return;
	__builtin_cpu_init();
	const char *core = NULL;
	if (__builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bw") &&
	    __builtin_cpu_supports("avx512vl") && __builtin_cpu_supports("avx512dq"))
		core = "SkylakeX";
	else if (__builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma"))
		core = "Haswell";
	if (core)
		(void)setenv("OPENBLAS_CORETYPE", core, 0);
#endif
}

static void *open_library(void)
{
	choose_kernels();
	static const char *const names[] = { HLOI_OPENBLAS_DIR "/libopenblas.so.0", "libopenblas.so.0",
					     "libopenblas.so" };
	void *h = NULL;
	const char *why = "";
	for (size_t i = HLOI_OPENBLAS_DIR[0] ? 0 : 1; !h && i < sizeof names / sizeof *names; i++) {
		h = dlopen(names[i], RTLD_NOW | RTLD_LOCAL);
		if (!h && i == 1) {
			const char *e = dlerror();
			why = e ? e : "";
		}
	}
	if (!h)
		snprintf(error, sizeof error, "cannot open OpenBLAS (libopenblas.so.0): %s", why);
	return h;
}

static void open_once(void)
{
	void *h = open_library();
	if (!h)
		return;
	/* POSIX's dlsym gives functions as void *: copied into each pointer */
#define BLAS_LOOKUP(name, ret, params)                                                              \
	{                                                                                           \
		void *p = dlsym(h, #name);                                                          \
		if (!p) {                                                                           \
			snprintf(error, sizeof error, "OpenBLAS has no '%s' (an older or other BLAS?)", \
				 #name);                                                            \
			dlclose(h);                                                                 \
			return;                                                                     \
		}                                                                                   \
		memcpy(&fns.name, &p, sizeof fns.name);                                             \
	}
	BLAS_FUNCTIONS(BLAS_LOOKUP)
#undef BLAS_LOOKUP
	current = initial = fns.openblas_get_num_threads();
	int w = atomic_load(&wanted) - 1;
	if (w > 0 && w != current) {
		fns.openblas_set_num_threads(w);
		current = w;
	}
	atomic_store(&opened, 1);
}

const blas_fns *blas_open(void)
{
	pthread_once(&once, open_once);
	return atomic_load(&opened) ? &fns : NULL;
}

const char *blas_error(void)
{
	return error[0] ? error : "OpenBLAS is not open";
}

int blas_opened(void)
{
	return atomic_load(&opened);
}

void blas_threads(int threads)
{
	if (!atomic_load(&opened)) {
		atomic_store(&wanted, threads > 0 ? threads + 1 : 1);
		/* opened meanwhile: set it here after all */
		if (!atomic_load(&opened))
			return;
	}
	int want = threads > 0 ? threads : initial;
	if (want != current) {
		fns.openblas_set_num_threads(want);
		current = want;
	}
}
