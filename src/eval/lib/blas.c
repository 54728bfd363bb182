/* OpenBLAS opened on demand (eval/lib/blas.h): dlopen at the first product or
 * LAPACK call that needs it, its entry points looked up once. The build's
 * OpenBLAS (the directory pkg-config named) is tried first, then the
 * library's soname as the dynamic loader finds it. */
#include <dlfcn.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
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

static void *open_library(void)
{
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
