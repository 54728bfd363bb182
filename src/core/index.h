/* Index conversion (XLA's IndexUtil): multi-index <-> position in the buffer,
 * through minor_to_major over the padded sizes. */
#ifndef HLOI_CORE_INDEX_H
#define HLOI_CORE_INDEX_H

#include <stdint.h>

#include "core/shape.h"

/* strides[d] = elements between neighbours along logical dimension d: the
 * product of the padded sizes of the dimensions more minor than d. */
void index_strides(const shape *s, int64_t *strides);
/* Buffer position of a multi-index (entries may reach into the padding). */
int64_t index_to_linear(const shape *s, const int64_t *idx);
/* Multi-index of a buffer position (0 <= linear < buffer elements); returns 1
 * when the position is padding (some idx[d] >= dims[d]), else 0. */
int index_from_linear(const shape *s, int64_t linear, int64_t *idx);
/* Advances idx in logical row-major order (last dimension fastest) within
 * dims; returns 0 after the last index (idx is then all zeros). */
int index_next(int rank, const int64_t *dims, int64_t *idx);

#endif
