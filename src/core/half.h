/* f16 (IEEE binary16) and bf16 conversions. To 16 bits: round to nearest,
 * ties to even, subnormals kept, NaN stays NaN (sign kept). From 16 bits:
 * exact. */
#ifndef HLOI_CORE_HALF_H
#define HLOI_CORE_HALF_H

#include <stdint.h>

float f16_to_f32(uint16_t h);
uint16_t f32_to_f16(float f);
float bf16_to_f32(uint16_t h);
uint16_t f32_to_bf16(float f);
/* Directly from double, rounding once (used for literal text). */
uint16_t f64_to_f16(double d);
uint16_t f64_to_bf16(double d);

#endif
