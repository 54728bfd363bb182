/* NumPy .npy files (versions 1.0, 2.0, 3.0). */
#ifndef HLOI_IO_NPY_H
#define HLOI_IO_NPY_H

#include "core/literal.h"
#include "hloi.h"

/* Parses .npy bytes. `expect` (may be NULL) is the parameter's shape; its
 * type decides the dtypes that travel under another name (doc/semantics.md, Element types): bf16 as
 * `<u2` bits (or ml_dtypes' `<V2`), s1/s2/s4 values in `|i1`, u1/u2/u4
 * values in `|u1`, the f8/f4 types' raw bits in `|u1` (f8e5m2 also `<f1`),
 * and any one-byte type in ml_dtypes' `|V1` (low bits kept). Sub-byte
 * values out of range are errors. Fortran order gives a column-major layout.
 * Errors name `name` and say why (bad magic, unsupported descr, ...). */
hloi_status npy_parse(hloi_literal **out, hloi_context *ctx, const char *name, const unsigned char *data,
		      size_t len, const shape *expect);
/* Reads a file ("-": standard input) as npy_parse parses its bytes, with
 * the same errors, but streamed: the header, then the data straight into
 * the literal's buffer. Plus the errors of file_read_all (a missing file, a
 * directory, over 1 GiB, a failing read). */
hloi_status npy_read(hloi_literal **out, hloi_context *ctx, const char *path, const shape *expect);
/* Serialises an array literal: the logical array without padding, in C order,
 * or Fortran order for an untiled column-major layout of rank >= 2. *out is
 * hloi_malloc'd. */
hloi_status npy_serialize(unsigned char **out, size_t *len, hloi_context *ctx, const hloi_literal *lit);
/* Writes the bytes npy_serialize makes, streamed (the data straight from
 * the buffer when it is in file order, else through a 1 MiB staging
 * buffer), with the errors of file_write_all. */
hloi_status npy_write(const hloi_literal *lit, hloi_context *ctx, const char *path);

#endif
