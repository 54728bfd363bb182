/* The fast engine: strided kernels at memory bandwidth. Not written yet:
 * every case falls back to the reference loop. */
#include "eval/fast.h"

int fast_elementwise(const instr *in, hloi_literal *out, hloi_literal *const *ops, int threads)
{
	(void)in;
	(void)out;
	(void)ops;
	(void)threads;
	return 1;
}
