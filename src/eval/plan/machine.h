/* Measuring a machine's limits (machine.c). */
#ifndef HLOI_EVAL_MACHINE_H
#define HLOI_EVAL_MACHINE_H

#include <stddef.h>

#include "eval/plan/cost.h"

/* Measures the GEMM speed and the memory bandwidth on `threads` threads (0:
 * the cores): 0 when both were measured; 1 when only the bandwidth was
 * (why says what was missing); -1 when neither. Takes about a second. */
int eval_calibrate(cost_machine *out, int threads, char *why, size_t nwhy);

#endif
