/* Index conversion between multi-indices and buffer positions. */
#include "core/index.h"

void index_strides(const shape *s, int64_t *strides)
{
	int64_t scale = 1;
	for (int i = 0; i < s->rank; i++) {
		int d = (int)s->layout.minor_to_major[i];
		strides[d] = scale;
		scale *= shape_padded_dim(s, d);
	}
}

int64_t index_to_linear(const shape *s, const int64_t *idx)
{
	int64_t linear = 0, scale = 1;
	for (int i = 0; i < s->rank; i++) {
		int d = (int)s->layout.minor_to_major[i];
		linear += idx[d] * scale;
		scale *= shape_padded_dim(s, d);
	}
	return linear;
}

int index_from_linear(const shape *s, int64_t linear, int64_t *idx)
{
	int padding = 0;
	for (int i = 0; i < s->rank; i++) {
		int d = (int)s->layout.minor_to_major[i];
		int64_t size = shape_padded_dim(s, d);
		idx[d] = linear % size;
		linear /= size;
		if (idx[d] >= s->dims[d])
			padding = 1;
	}
	return padding;
}

int index_next(int rank, const int64_t *dims, int64_t *idx)
{
	for (int d = rank - 1; d >= 0; d--) {
		if (++idx[d] < dims[d])
			return 1;
		idx[d] = 0;
	}
	return 0;
}
