/* hloi — an interpreter for XLA's HLO intermediate representation.
 *
 * The embedding API (hloi/tool.h adds the less stable calls of the
 * command-line tool). Handles are opaque; functions that can fail return
 * an hloi_status and record details (message, file, line, column) in the
 * hloi_context passed to them. Ownership rules: an object returned through an
 * `out` parameter belongs to the caller and is released with the matching
 * `_free` function; every `_free(NULL)` is a no-op; accessors return borrowed
 * pointers that live as long as the object they came from.
 */
#ifndef HLOI_H
#define HLOI_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#ifdef __cplusplus
extern "C" {
#endif

#if defined(HLOI_BUILDING) && defined(__GNUC__)
#define HLOI_API __attribute__((visibility("default")))
#else
#define HLOI_API
#endif

#define HLOI_VERSION "0.1.0"

/* The largest rank hloi accepts. */
#define HLOI_MAX_RANK 16

/* Status codes. HLOI_OK is zero; failures are negative. */
typedef enum hloi_status {
	HLOI_OK = 0,
	HLOI_EPARSE = -1,       /* malformed program, literal, shape or file */
	HLOI_ETYPE = -2,        /* the program does not type-check */
	HLOI_EINVAL = -3,       /* an invalid argument or input value */
	HLOI_EUNSUPPORTED = -4, /* valid, but not something hloi evaluates */
	HLOI_ENOMEM = -5,       /* allocation failed or the memory budget is exceeded */
	HLOI_EIO = -6,          /* reading or writing a file failed */
	HLOI_ESTOPPED = -7,     /* a run was stopped: its stop flag was set or it
				   reached its step limit (hloi_run_options) */
	HLOI_ECHECK = -8        /* an assertion of the program failed (StableHLO's
				   check.expect_*, doc/stablehlo.md) */
} hloi_status;

/* Short name of a status ("parse error", "type error", ...). Static string. */
HLOI_API const char *hloi_status_name(hloi_status st);

/* --- Context and diagnostics -------------------------------------------- */

typedef struct hloi_context hloi_context;

/* Creates a context that collects diagnostics. Returns HLOI_ENOMEM on failure
 * and sets *out to NULL. */
HLOI_API hloi_status hloi_context_new(hloi_context **out);
HLOI_API void hloi_context_free(hloi_context *ctx);

/* Number of errors (not warnings or notes) recorded since the context was
 * created or last cleared. */
HLOI_API size_t hloi_context_error_count(const hloi_context *ctx);

/* Message of the most recent error, or NULL when there is none. Borrowed. */
HLOI_API const char *hloi_context_last_error(const hloi_context *ctx);

enum {
	HLOI_DIAG_COLOR = 1u << 0,    /* ANSI colours */
	HLOI_DIAG_BASENAME = 1u << 1  /* print file names without directories */
};

/* Prints every recorded diagnostic as `file:line:col: error: message`, the
 * source line and a caret under the offending token, then forgets them.
 * Returns HLOI_EIO when writing to `f` fails. */
HLOI_API hloi_status hloi_context_print_diagnostics(hloi_context *ctx, FILE *f, unsigned flags);

/* Forgets every recorded diagnostic. */
HLOI_API void hloi_context_clear(hloi_context *ctx);

/* Records an error of the caller's own (for example a bad command-line value)
 * so that it prints like the library's. `where` may be NULL. */
HLOI_API void hloi_context_error(hloi_context *ctx, const char *where, const char *message);

/* --- Shapes -------------------------------------------------------------- */

typedef struct hloi_shape hloi_shape;

/* Parses a shape such as `f32[2,3]{0,1:pad(3,5)}` (a missing layout is the
 * default, row-major one) and validates its layout. `name` labels
 * diagnostics. Errors: HLOI_EPARSE, HLOI_EINVAL (invalid layout, or an
 * unbounded dynamic dimension `?`, which has no size), HLOI_ENOMEM. Free
 * with hloi_shape_free. */
HLOI_API hloi_status hloi_shape_parse(hloi_shape **out, hloi_context *ctx, const char *name,
				      const char *text);
HLOI_API void hloi_shape_free(hloi_shape *s);

/* Rank of an array shape (0 for scalars; -1 for tuples). */
HLOI_API int hloi_shape_rank(const hloi_shape *s);
/* Size of logical dimension `d`, 0 <= d < rank. */
HLOI_API int64_t hloi_shape_dim(const hloi_shape *s, int d);
/* Size of dimension `d` in the buffer: the padded size, or the logical size
 * when the layout has no padding. */
HLOI_API int64_t hloi_shape_padded_dim(const hloi_shape *s, int d);
/* Entry `i` of the layout's minor_to_major list. */
HLOI_API int hloi_shape_minor_to_major(const hloi_shape *s, int i);
/* Stride of logical dimension `d` in elements of the buffer; -1 for a tiled
 * layout, where no single stride exists (see hloi_shape_tiled_dims). */
HLOI_API int64_t hloi_shape_stride(const hloi_shape *s, int d);
/* Number of logical elements (product of the dimensions). */
HLOI_API int64_t hloi_shape_element_count(const hloi_shape *s);
/* Number of elements in the buffer, padding included. */
HLOI_API int64_t hloi_shape_buffer_elements(const hloi_shape *s);
/* Bytes of one element. */
HLOI_API int64_t hloi_shape_element_bytes(const hloi_shape *s);
/* Bits of one element in the buffer: the layout's E(n), else 8 times the
 * element bytes. E(n) at a sub-byte type's own width (s4 with E(4)) marks
 * XLA's packed device buffers; hloi holds such values one element per byte,
 * as XLA's literals do, so this is then 8. */
HLOI_API int64_t hloi_shape_element_bits(const hloi_shape *s);
/* The layout's written E(n), or 0. */
HLOI_API int64_t hloi_shape_element_size_in_bits(const hloi_shape *s);
/* Bytes of the buffer: buffer elements times the element bits, rounded up
 * to whole bytes; -1 on overflow. */
HLOI_API int64_t hloi_shape_byte_size(const hloi_shape *s);
/* The layout's memory space S(n) (0 when not given) and tail padding
 * alignment L(n) in elements (1 when not given). */
HLOI_API int64_t hloi_shape_memory_space(const hloi_shape *s);
HLOI_API int64_t hloi_shape_tail_padding_alignment(const hloi_shape *s);
/* Whether the layout has padded_dimensions. */
HLOI_API int hloi_shape_has_padding(const hloi_shape *s);
/* Writes the padding value as an element of the shape's type prints (`0`,
 * `1`, `-inf`, ...) into buf, like snprintf; returns the full length. */
HLOI_API size_t hloi_shape_padding_value_to_string(const hloi_shape *s, char *buf, size_t size);

/* The element type's name as HLO text writes it ("f32", "bf16", "pred",
 * ...); "tuple" for a tuple shape. Static string. */
HLOI_API const char *hloi_shape_element_type(const hloi_shape *s);

/* Writes the shape as text into buf (always NUL-terminated when size > 0);
 * returns the length the full text needs, like snprintf, or 0 when out of
 * memory (a shape's text is never empty). */
HLOI_API size_t hloi_shape_to_string(const hloi_shape *s, int with_layout, char *buf, size_t size);

/* Converts a multi-index (one entry per dimension, each within the logical
 * size) to a position in the buffer. HLOI_EINVAL when out of range. */
HLOI_API hloi_status hloi_shape_index_to_linear(const hloi_shape *s, const int64_t *index,
						int64_t *out);
/* Converts a buffer position to a multi-index. *is_padding is 0 for an
 * element; for padding it is 1 (the index then has entries beyond the
 * logical sizes), 2 (tail padding, L(n): after the (tiled) shape; the index
 * is all zeros) or 3 (padding of a tile longer than the shape, outside its
 * dimensions: s32[]{:T(128)} at 5; the index is not meaningful).
 * HLOI_EINVAL when the position is outside the buffer. */
HLOI_API hloi_status hloi_shape_linear_to_index(const hloi_shape *s, int64_t linear,
						int64_t *index, int *is_padding);

/* Tiled layouts (XLA's `T(8,128)(2,1)`, docs/tiled_layout.md). The array's
 * physical shape (most major dimension first, padded sizes) is tiled by
 * each tile in turn; level 0 is the physical shape, level k the shape
 * after k tiles, whose row-major order is the buffer's (level
 * hloi_shape_tile_count). At most HLOI_MAX_TILED_RANK dimensions. */
#define HLOI_MAX_TILED_RANK 80

/* Number of tiles (0 for an untiled layout). */
HLOI_API int hloi_shape_tile_count(const hloi_shape *s);
/* The entries of tile `t` (0-based), -1 for the combine dimension `*`, into
 * dims (room for HLOI_MAX_RANK); returns their count, -1 when there is no
 * tile t. */
HLOI_API int hloi_shape_tile(const hloi_shape *s, int t, int64_t *dims);
/* The dimensions at `level` (0 <= level <= tile count) into dims (room for
 * HLOI_MAX_TILED_RANK); returns their count, -1 when out of range. */
HLOI_API int hloi_shape_tiled_dims(const hloi_shape *s, int level, int64_t *dims);
/* The coordinates of buffer position `linear` at `level` into coords (room
 * for HLOI_MAX_TILED_RANK); returns their count, -1 when out of range
 * (tail padding has no coordinates). Padding positions have coordinates
 * at or beyond the bounds of some level. */
HLOI_API int hloi_shape_tiled_coords(const hloi_shape *s, int64_t linear, int level, int64_t *coords);

/* --- Literals (array values) --------------------------------------------- */

typedef struct hloi_literal hloi_literal;

/* Parses literals written as XLA prints them, each with its shape prefix
 * (`f32[2,3] {{1,2,3},{4,5,6}}`, `s32[] 7`, `(f32[], s32[]) (1, 2)`),
 * separated by white space. *out is an array of *count literals; free it
 * with hloi_literal_array_free. */
HLOI_API hloi_status hloi_literal_parse_list(hloi_literal ***out, size_t *count,
					     hloi_context *ctx, const char *name,
					     const char *text, size_t len);
HLOI_API void hloi_literal_array_free(hloi_literal **lits, size_t count);

/* Reads a `.npy` file (at most 1 GiB; "-" is standard input). When `expect`
 * is given and its element type is bf16, a `<u2` file is read as bf16 bits.
 * A Fortran-order file gives a column-major layout. The data is read
 * straight into the literal's buffer (no second copy in memory). Errors:
 * HLOI_EIO, HLOI_EPARSE, HLOI_EUNSUPPORTED, HLOI_ENOMEM. */
HLOI_API hloi_status hloi_literal_read_npy(hloi_literal **out, hloi_context *ctx,
					   const char *path, const hloi_shape *expect);
/* Writes a literal as `.npy`: the logical array (no padding), C order, or
 * Fortran order for an untiled column-major rank-2+ result; bf16 as `<u2` bits. The
 * data goes out straight from the literal's buffer (through a 1 MiB buffer
 * when its layout is not the file's order). */
HLOI_API hloi_status hloi_literal_write_npy(const hloi_literal *lit, hloi_context *ctx,
					    const char *path);

/* Reads values from a file: a `.npy` file gives one literal (read as
 * hloi_literal_read_npy with `expect`); any other file is literal text as
 * hloi_literal_parse_list reads it. "-" is standard input, read whole, then
 * taken as .npy when it starts with the .npy magic, else as literal text.
 * Free *out with hloi_literal_array_free. */
HLOI_API hloi_status hloi_literal_load(hloi_literal ***out, size_t *count, hloi_context *ctx,
				       const char *path, const hloi_shape *expect);
/* Writes a literal to `path`: `.npy` as hloi_literal_write_npy, anything else
 * as literal text (what hloi_literal_print prints, with its limit: an error
 * `path: cannot write f32[100000000,0] as text: ...`, HLOI_ENOMEM); "-" is
 * standard output. The text is written as it is formatted (memory does not
 * grow with its size). A failed write leaves no partial file. */
HLOI_API hloi_status hloi_literal_save(const hloi_literal *lit, hloi_context *ctx, const char *path);

/* Writes n literals to `path` as literal text, one after another, so that
 * hloi_literal_load reads them back in order: an array as hloi_literal_save
 * writes it, a tuple as its shape and then its values on one line
 * (`(f32[2], s32[]) ( {1, 2}, 3 )`; XLA's ToString() form of a tuple has
 * no shape of the whole). The rules of hloi_literal_save: "-" is standard
 * output, a failed write leaves no partial file. A `.npy` path takes exactly one value (n = 1: as
 * hloi_literal_save); else HLOI_EINVAL. n = 0 writes an empty file. */
HLOI_API hloi_status hloi_literal_save_list(hloi_literal *const *lits, size_t n, hloi_context *ctx,
					    const char *path);

/* Prints the literal exactly as XLA's Literal::ToString() does, followed by a
 * newline, writing as it goes. HLOI_EIO when writing fails.
 *
 * The one limit: a zero-element array prints each of its (empty)
 * sub-arrays, as XLA does (f32[2,0,3] prints two), so a tiny value such as
 * f32[100000000,0] would print 100000000 of them. A literal whose text
 * holds more than HLOI_PRINT_MAX_EMPTY_SUBARRAYS of them (see
 * hloi_literal_empty_subarrays) is refused before anything is written:
 * HLOI_ENOMEM, as for a value too large for the memory budget. Such values
 * can be written as .npy. */
HLOI_API hloi_status hloi_literal_print(const hloi_literal *lit, FILE *f);

#define HLOI_PRINT_MAX_EMPTY_SUBARRAYS 16777216u /* 2^24 */

/* The number of empty sub-arrays the text of `lit` holds: for a
 * zero-element array, its nested sub-arrays down to the first zero
 * dimension (f32[3,0] -> 3, f32[2,3,0] -> 2 + 6 = 8, f32[0] -> 0); the sum
 * over a tuple's elements; 0 for an array with elements. Saturates at
 * UINT64_MAX. */
HLOI_API uint64_t hloi_literal_empty_subarrays(const hloi_literal *lit);

/* The literal's shape. Borrowed. */
HLOI_API const hloi_shape *hloi_literal_shape(const hloi_literal *lit);
/* The size of dimension `d` of an array literal's value: for a `<=N`
 * dimension its size at run time (the buffer holds the bound N; the
 * elements past the size are padding), else the shape's; -1 when `d` is
 * out of range. */
HLOI_API int64_t hloi_literal_dim(const hloi_literal *lit, int d);
/* The number of elements of a tuple literal (0 for an array). */
HLOI_API size_t hloi_literal_tuple_size(const hloi_literal *lit);
/* Element i of a tuple literal, or NULL when i is out of range or `lit` is
 * an array. Borrowed: it lives as long as the tuple. */
HLOI_API hloi_literal *hloi_literal_tuple_element(hloi_literal *lit, size_t i);
/* The literal's buffer (physical order, padding included) and its size in
 * bytes. Borrowed; NULL for tuples and elided ({...}) literals. */
HLOI_API void *hloi_literal_data(hloi_literal *lit);
HLOI_API size_t hloi_literal_size_bytes(const hloi_literal *lit);
/* Creates a zero-filled literal of `shape` (padding holds the padding value). */
HLOI_API hloi_status hloi_literal_new(hloi_literal **out, hloi_context *ctx, const hloi_shape *shape);
HLOI_API void hloi_literal_free(hloi_literal *lit);
/* An array literal of `shape` over the caller's buffer `data`, which must
 * hold exactly the shape's bytes (`nbytes` = hloi_shape_byte_size, physical
 * order, padding included) and stay valid until the literal is freed; no
 * copy is made. hloi never frees it: hloi_literal_free calls
 * release(user, data) when `release` is not NULL. As a run's input it is
 * only read: a module whose result aliases it (input_output_alias) computes
 * into a copy, and the caller's buffer keeps its values. As the result of
 * hloi_module_run_into it is written. Errors: HLOI_EINVAL (a tuple shape,
 * another size, NULL data for a nonzero size), HLOI_ENOMEM; on failure
 * `release` is not called. */
HLOI_API hloi_status hloi_literal_wrap(hloi_literal **out, hloi_context *ctx, const hloi_shape *shape,
				       void *data, size_t nbytes, void (*release)(void *user, void *data),
				       void *user);
/* A deep copy of `lit` (same shape, layout and values). HLOI_ENOMEM on
 * allocation failure. */
HLOI_API hloi_status hloi_literal_clone(hloi_literal **out, const hloi_literal *lit);

/* --- Modules -------------------------------------------------------------- */

typedef struct hloi_module hloi_module;

typedef enum hloi_format {
	HLOI_FORMAT_AUTO = 0, /* by extension, else by content */
	HLOI_FORMAT_HLO,
	HLOI_FORMAT_PB,
	HLOI_FORMAT_PBTXT,
	HLOI_FORMAT_MLIR      /* StableHLO text (read only; doc/stablehlo.md) */
} hloi_format;

/* Parses HLO text (`len` bytes; NUL bytes inside are errors). `name` labels
 * diagnostics. Parse errors are recorded in ctx (several when the parser can
 * recover) and HLOI_EPARSE is returned. Free with hloi_module_free. */
HLOI_API hloi_status hloi_module_parse(hloi_module **out, hloi_context *ctx, const char *name,
				       const char *text, size_t len);

/* Reads and parses a program file; "-" is standard input. The format comes
 * from `format`, else the extension (.hlo/.txt, .pb, .pbtxt), else the
 * content. A .pb or .pbtxt may hold an HloModuleProto, HloProto or
 * HloSnapshot; proto errors name the computation and instruction. */
HLOI_API hloi_status hloi_module_load(hloi_module **out, hloi_context *ctx, const char *path,
				      hloi_format format);
/* hloi_module_load from memory: `len` bytes of HLO text, a binary or text
 * proto (the format as hloi_module_load finds it, `name`'s extension
 * included); `name` labels diagnostics (NULL: "<memory>"). The bytes are
 * copied. */
HLOI_API hloi_status hloi_module_load_memory(hloi_module **out, hloi_context *ctx, const char *name,
					     const void *data, size_t len, hloi_format format);
HLOI_API void hloi_module_free(hloi_module *m);

/* Writes the module to `path` ("-" is standard output) as canonical HLO
 * text, or as an XLA-compatible HloModuleProto in binary (.pb) or text
 * (.pbtxt) format; HLOI_FORMAT_AUTO goes by the extension. The module need
 * not be checked (names are resolved here). A failed write leaves no
 * partial file. As text it has hloi_module_print's limit: an error
 * `path: cannot write constant 'k' (f32[1099511627776,0]) in computation
 * 'e' as text: ...`, HLOI_ENOMEM, before anything is written (the proto
 * formats have no such limit). Errors: HLOI_EINVAL (unknown format,
 * unresolved names), HLOI_ENOMEM, HLOI_EIO. */
HLOI_API hloi_status hloi_module_save(const hloi_module *m, hloi_context *ctx, const char *path,
				      hloi_format format);

/* The arguments an HloSnapshot was recorded with (0 for other files): the
 * inputs `hloi run` uses unless it is given some. Borrowed; the literals
 * live as long as the module. */
HLOI_API size_t hloi_module_snapshot_input_count(const hloi_module *m);
HLOI_API hloi_literal *hloi_module_snapshot_input(const hloi_module *m, size_t i);

typedef enum hloi_broadcast_mode {
	HLOI_BROADCAST_DEFAULT = 0, /* what the module header says, else XLA */
	HLOI_BROADCAST_XLA,
	HLOI_BROADCAST_NUMPY
} hloi_broadcast_mode;

typedef struct hloi_check_options {
	unsigned version;  /* HLOI_CHECK_OPTIONS_VERSION */
	int strict;        /* accept exactly what XLA's verifier accepts */
	hloi_broadcast_mode broadcast_mode;
	/* (version >= 2) infer and verify shapes only: opcodes and element
	 * types hloi does not evaluate are not reported (for printing and
	 * converting programs hloi cannot run); the module is then not
	 * runnable. */
	int shapes_only;
	/* (version >= 3) the participants a run simulates: replicas and
	 * partitions (0: the module header's replica_count and
	 * num_partitions, 1 when absent). Collectives' groups are checked
	 * against them; replicas * partitions is at most
	 * HLOI_MAX_PARTICIPANTS. */
	int64_t replicas, partitions;
	/* (version >= 4) accept what XLA's verifier accepts with
	 * allow_mixed_precision (as XLA's HloTestBase sets it): floating-point
	 * operands of different types in one instruction, and a declared
	 * floating-point result type other than the inferred one. The module
	 * then runs with explicit converts (hloi_module_check inserts them):
	 * the operands of an elementwise or data-movement op are converted to
	 * its result type, another op computes in its inferred type and
	 * converts its result. Also a reduce, reduce-window or map whose
	 * computation has another float type than its operands (scatter,
	 * select-and-scatter, sort and the collectives take one without it,
	 * as XLA's verifier does); such a computation takes its values
	 * converted to its parameters' types and its results are converted
	 * back. A scan's computation needs its inputs' and inits' exact types
	 * either way (XLA's HandleScan). */
	int allow_mixed_precision;
} hloi_check_options;
#define HLOI_CHECK_OPTIONS_VERSION 4
#define HLOI_CHECK_OPTIONS_INIT { HLOI_CHECK_OPTIONS_VERSION, 0, HLOI_BROADCAST_DEFAULT, 0, 0, 0, 0 }
/* The most participants (replicas x partitions) one run simulates. */
#define HLOI_MAX_PARTICIPANTS 256

/* Type-checks the module: names, operand counts, shapes, broadcasting,
 * element types, layouts. Records every error found in ctx and returns
 * HLOI_ETYPE (HLOI_EUNSUPPORTED when the only problems are things hloi does
 * not evaluate). `opts` may be NULL for defaults. Must succeed before
 * hloi_module_run. */
HLOI_API hloi_status hloi_module_check(hloi_module *m, hloi_context *ctx,
				       const hloi_check_options *opts);

/* Rewrites the checked module into plain HLO the way XlaBuilder emits it:
 * each implicit broadcast of a binary op or compare becomes an explicit
 * `reshape` (dropping stretched size-1 dims) + `broadcast` + same-shape op,
 * and a stretching `broadcast` becomes `reshape` + `broadcast`. The result,
 * printed with hloi_module_print, passes the check with `strict` set and
 * evaluates to the same values; the module itself must be checked again
 * before hloi_module_run. Errors: HLOI_EINVAL (module not checked),
 * HLOI_ENOMEM. */
HLOI_API hloi_status hloi_module_lower(hloi_module *m, hloi_context *ctx);

/* Writes the module as canonical HLO text, writing as it goes. HLOI_EIO
 * when writing fails.
 *
 * The one limit is hloi_literal_print's: a constant loaded from a .pb or
 * .pbtxt prints from its value, and a zero-element one prints each of its
 * empty sub-arrays (a proto declares f32[1099511627776,0] in a few bytes;
 * HLO text must spell them all). A module whose text holds more than
 * HLOI_PRINT_MAX_EMPTY_SUBARRAYS of them in all (see
 * hloi_module_empty_subarrays) is refused before anything is written:
 * HLOI_ENOMEM. hloi_module_save can still write it as .pb or .pbtxt. */
HLOI_API hloi_status hloi_module_print(const hloi_module *m, FILE *f);

/* The number of empty sub-arrays the module's text holds: the sum of
 * hloi_literal_empty_subarrays over the constants (and `literal=`
 * attributes) printed from their values (those loaded from a proto; one
 * written in HLO text prints as written, and counts 0). Saturates at UINT64_MAX. When not NULL,
 * `comp_name`, `constant` and `value` receive the computation's name, the
 * instruction's name and the value of the constant with the most (NULL when
 * none has any). Borrowed. */
HLOI_API uint64_t hloi_module_empty_subarrays(const hloi_module *m, const char **comp_name,
					      const char **constant, const hloi_literal **value);

/* Writes the module's computation graph as Graphviz DOT: a node per
 * instruction (opcode, shape, layout), operand edges labelled with their
 * broadcast, called computations as clusters. A checked module shows the
 * inferred shapes, an unchecked one what was written. Errors: HLOI_ENOMEM,
 * HLOI_EIO when writing fails. */
HLOI_API hloi_status hloi_module_print_dot(const hloi_module *m, FILE *f);

/* Entry computation parameters (after a successful check). */
HLOI_API size_t hloi_module_parameter_count(const hloi_module *m);
/* Shape of parameter i (as declared when it has `?` dimensions). Borrowed. */
HLOI_API const hloi_shape *hloi_module_parameter_shape(const hloi_module *m, size_t i);
/* Shape of the entry computation's result (after a successful check; as
 * declared when it has `?` dimensions). Borrowed. */
HLOI_API const hloi_shape *hloi_module_result_shape(const hloi_module *m);
/* Name of the instruction that declares parameter i. Borrowed. */
HLOI_API const char *hloi_module_parameter_name(const hloi_module *m, size_t i);
/* Whether `lit` may be the input for parameter i: its shape's type and
 * dimensions (layouts may differ), or, for a parameter with `<=N`
 * dimensions, an array of the same type and rank whose size in each such
 * dimension is at most N (that size becomes the dimension's dynamic size)
 * and whose other dimensions are the parameter's; a `?` dimension takes any
 * size (the run is checked again with it). 0 when i is out of range. */
HLOI_API int hloi_module_parameter_accepts(const hloi_module *m, size_t i, const hloi_literal *lit);

typedef enum hloi_engine {
	HLOI_ENGINE_DEFAULT = 0,
	HLOI_ENGINE_REFERENCE,
	HLOI_ENGINE_FAST
} hloi_engine;

/* What an infeed or outfeed callback learns of the instruction that calls
 * it. Everything is borrowed for the call. */
typedef struct hloi_feed {
	const char *instruction;  /* the infeed's or outfeed's name */
	const char *computation;  /* the computation it is in */
	const char *config;       /* infeed_config or outfeed_config as written ("" when none) */
	const hloi_shape *shape;  /* the value's shape: the infeed's data shape (element 0
				   * of its result), the outfeed's outfeed_shape */
	size_t participant;       /* flattened id, replica * partitions + partition (0 on one device) */
	uint64_t index;           /* the values this participant's infeeds took (outfeeds
				   * gave) before this one in the run, from 0 */
} hloi_feed;

/* Gives the value for an infeed once the run's infeed queue is exhausted:
 * *value = a literal of feed->shape's type and dimensions (any layout),
 * borrowed: hloi copies it before the callback is called again and before
 * the run goes on; or *value = NULL when there is none (the run then fails
 * with the empty queue's error). A failure status, with an error recorded
 * in ctx (hloi_context_error), ends the run with that status. The
 * participants of a run of several call it from their own threads, at the
 * same time. */
typedef hloi_status (*hloi_infeed_fn)(void *feed_data, hloi_context *ctx, const hloi_feed *feed,
				      const hloi_literal **value);
/* Receives the value an outfeed writes (borrowed for the call; clone it to
 * keep it), in the order the participant's outfeeds run. A failure status
 * with an error recorded in ctx ends the run with that status. Called as
 * hloi_infeed_fn is, from every participant's thread. */
typedef hloi_status (*hloi_outfeed_fn)(void *feed_data, hloi_context *ctx, const hloi_feed *feed,
				       const hloi_literal *value);

/* What a host transfer callback learns of the send or recv with
 * is_host_transfer=true that calls it (doc/participants.md, "Host transfers").
 * Everything is borrowed for the call. */
typedef struct hloi_host_transfer {
	const char *instruction;  /* the send's or recv's name */
	const char *computation;  /* the computation it is in */
	int64_t channel_id;       /* its channel_id (0 when none is written) */
	const char *rendezvous;   /* frontend attribute _xla_host_transfer_rendezvous ("" when none) */
	const hloi_shape *shape;  /* the value's shape: the send's operand, the recv's data (element 0) */
	size_t participant;       /* flattened id, replica * partitions + partition (0 on one device) */
	uint64_t index;           /* the values this participant's host transfers of this
				   * channel and direction moved before this one, from 0 */
} hloi_host_transfer;

/* Gives the value a recv with is_host_transfer=true receives from the host:
 * *value = a literal of transfer->shape's type and dimensions (any layout),
 * borrowed: hloi copies it before the callback is called again and before
 * the run goes on; or *value = NULL when there is none (the run then fails
 * with an error naming the recv). A failure status with an error recorded
 * in ctx ends the run with that status. The participants of a run of
 * several call it from their own threads, at the same time. */
typedef hloi_status (*hloi_host_recv_fn)(void *host_data, hloi_context *ctx, const hloi_host_transfer *transfer,
					 const hloi_literal **value);
/* Receives the value a send with is_host_transfer=true gives the host
 * (borrowed for the call; clone it to keep it), in the order the
 * participant's sends run. Failure and threads as hloi_host_recv_fn. */
typedef hloi_status (*hloi_host_send_fn)(void *host_data, hloi_context *ctx, const hloi_host_transfer *transfer,
					 const hloi_literal *value);

/* The default bound on evaluated instructions per run (max_steps). */
#define HLOI_DEFAULT_MAX_STEPS 10000000u /* 10^7 */

/* A profile of runs (hloi_run_options.profile): what each instruction
 * and fused region took. HLOI_PROFILE_TRACE keeps every step's start and
 * end too, for a trace (hloi/tool.h, hloi_profile_write_trace). */
typedef struct hloi_profile hloi_profile;
enum { HLOI_PROFILE_TRACE = 1u << 0 };
/* HLOI_ENOMEM and *out NULL on failure. */
HLOI_API hloi_status hloi_profile_new(hloi_profile **out, unsigned flags);
HLOI_API void hloi_profile_free(hloi_profile *p);

/* What a probe callback learns of the value it is given (hloi_run_options
 * version 7). Everything is borrowed for the call. */
typedef struct hloi_probe {
	const char *instruction;  /* the instruction's name */
	const char *computation;  /* the computation it is in */
	int entry;                /* 1 when that is the entry computation (evaluated once
				   * per run), else 0 */
	size_t participant;       /* flattened id, replica * partitions + partition (0 on one device) */
	uint64_t index;           /* the values this instruction gave before this one in
				   * the run, from 0: its evaluation number (a loop body's
				   * iteration, a called computation's call) */
} hloi_probe;

/* Receives the value of a probed instruction right after it is computed
 * (borrowed for the call, in the layout the run holds it; clone it to keep
 * it), in evaluation order. A failure status with an error recorded in ctx
 * (hloi_context_error) ends the run with that status. The participants of
 * a run of several call it from their own threads, at the same time. */
typedef hloi_status (*hloi_probe_fn)(void *probe_data, hloi_context *ctx, const hloi_probe *probe,
				     const hloi_literal *value);

/* How many instructions of the checked module a probe name selects: `name`
 * selects the instructions of that name in every computation,
 * `computation/name` the one of that computation. 0 for an unknown name
 * (or a module not checked). */
HLOI_API size_t hloi_module_probe_matches(const hloi_module *m, const char *name);

typedef struct hloi_run_options {
	unsigned version;     /* HLOI_RUN_OPTIONS_VERSION */
	hloi_engine engine;
	int threads;          /* 0: the machine's cores */
	uint64_t max_memory;  /* bytes the run may hold at once, inputs, the result
			       * buffer and constants included; 0: half of
			       * physical memory */
	/* Since version 2. When not NULL, the run stops with HLOI_ESTOPPED
	 * once *stop is nonzero: it is checked before every instruction is
	 * evaluated, so a signal handler or a timer may set it (the worker
	 * threads of the instruction under way finish and are joined first).
	 * From a signal handler, write a `volatile sig_atomic_t` that is an
	 * int (it is on glibc, musl and the BSDs); from another thread, store
	 * atomically (the library loads it with a relaxed atomic load). */
	const volatile int *stop;
	/* Since version 2. The most instructions one run evaluates, those of
	 * called computations (and, once there are loops, of every iteration)
	 * included; beyond it the run stops with HLOI_ESTOPPED and an error
	 * naming the instruction it stopped at. 0: HLOI_DEFAULT_MAX_STEPS;
	 * UINT64_MAX: no limit. */
	uint64_t max_steps;
	/* Since version 3. When not NULL, the run stores the number of
	 * instructions evaluated so far there before each one (a relaxed
	 * atomic store), for a progress display on another thread. */
	volatile uint64_t *progress;
	/* Since version 4: infeed and outfeed (doc/participants.md, "Infeed and outfeed").
	 * An infeed instruction takes the next value of the run's infeed
	 * queue: infeed[0], infeed[1], ... (borrowed; each participant of a
	 * run of several takes from the start of the same queue), then, once
	 * those are taken, what infeed_fn gives. When neither has a value the
	 * run fails with HLOI_EINVAL and an error naming the infeed (XLA's
	 * device would wait forever). A value whose element type or
	 * dimensions differ from the infeed's shape is an HLOI_EINVAL error
	 * naming both shapes; another layout is converted. Each value an
	 * outfeed instruction writes is given to `outfeed` (NULL: dropped).
	 * `feed_data` is passed to both callbacks. */
	hloi_literal *const *infeed;
	size_t ninfeed;
	hloi_infeed_fn infeed_fn;
	hloi_outfeed_fn outfeed;
	void *feed_data;
	/* Since version 5: transfers with the host program (send and recv with
	 * is_host_transfer=true; doc/participants.md, "Host transfers"). A host recv's data
	 * is what host_recv gives (NULL, or no value: the run fails with
	 * HLOI_EINVAL and an error naming the recv, as XLA's device would wait
	 * forever); a value whose element type or dimensions differ from the
	 * recv's is an HLOI_EINVAL error naming both shapes. Each value a host
	 * send gives is handed to host_send (NULL: dropped). `host_data` is
	 * passed to both callbacks. */
	hloi_host_recv_fn host_recv;
	hloi_host_send_fn host_send;
	void *host_data;
	/* Since version 6: when not NULL, the run adds what it measures to
	 * this profile (hloi_profile_new): the wall time of each instruction
	 * and fused region, in called computations and loop bodies too. A
	 * profile collects every run it is given, from several threads at
	 * once too; hloi/tool.h prints it. Costs two clock reads per
	 * instruction. */
	hloi_profile *profile;
	/* Since version 7: probes, for looking inside a run (doc/cli.md,
	 * "Probes"). When `probe` is not NULL, it is given the value of every
	 * probed instruction as soon as that value is computed, each time it
	 * is (every iteration of a loop body, every call of a computation).
	 * The probed instructions are those `probe_names` selects (nprobe_names
	 * names, as hloi_module_probe_matches reads them), or every instruction
	 * when probe_names is NULL. A name that selects no instruction is an
	 * HLOI_EINVAL error before anything runs. Not probed: the instructions
	 * of a computation applied element by element (a reduce's or a map's
	 * to_apply, a sort's comparator), which have no value of their own
	 * beyond one element. The fast engine materialises a probed
	 * instruction that it would otherwise fuse into a region (it becomes
	 * one of the region's outputs; a reduce then reads it instead of
	 * computing it where it reads it), so probes cost memory and time;
	 * an elementwise value is the same bit for bit (the same element
	 * functions compute it). `probe_data` is passed to the callback. */
	hloi_probe_fn probe;
	void *probe_data;
	const char *const *probe_names;
	size_t nprobe_names;
} hloi_run_options;
#define HLOI_RUN_OPTIONS_VERSION 7
#define HLOI_RUN_OPTIONS_INIT                                                                                   \
	{ HLOI_RUN_OPTIONS_VERSION, HLOI_ENGINE_DEFAULT, 0, 0, NULL, 0, NULL, NULL, 0, NULL, NULL, NULL, NULL, NULL, NULL, NULL, \
	  NULL, NULL, NULL, 0 }

/* Evaluates the checked module's entry computation on `inputs` (one per
 * parameter, in order; an input in another layout than its parameter is
 * converted). An input whose element type or dimensions differ from its
 * parameter is an HLOI_EINVAL error naming the parameter. The result is
 * returned in *out (caller frees). Errors: HLOI_EINVAL, HLOI_EUNSUPPORTED
 * (e.g. an elided constant), HLOI_ENOMEM (memory budget), HLOI_ESTOPPED
 * (opts->stop was set, or opts->max_steps was reached; nothing is returned
 * and every intermediate value is freed). An `opts` of an older version
 * (built against an older header) is read as that version and gets the
 * defaults for the later fields: no infeed values, outfeed values dropped,
 * no host transfer callbacks, no profile, no probes.
 *
 * In-place results: when the module's header says
 * `input_output_alias={ {}: (N, {}, must-alias) }` (or may-alias), the result
 * is computed into input N's buffer and no result buffer is allocated. That
 * buffer then moves to *out: hloi_literal_data(*out) is the pointer
 * hloi_literal_data(inputs[N]) returned before the run, and inputs[N] is left
 * without data (hloi_literal_data returns NULL; running on it again is an
 * HLOI_EINVAL error). Free both literals as usual. Exception: when inputs[N]
 * is in another layout than the parameter, the result is computed into the
 * converted copy, which becomes *out, and inputs[N] is left untouched.
 * Aliases of tuple elements are checked but computed as usual. */
HLOI_API hloi_status hloi_module_run(hloi_module *m, hloi_context *ctx,
				     hloi_literal *const *inputs, size_t ninputs,
				     const hloi_run_options *opts, hloi_literal **out);

/* Like hloi_module_run, but writes the result into `result`, a literal the
 * caller owns with exactly the shape and layouts of the module's result
 * (typically the result of an earlier run): nothing is allocated for the
 * result, so a loop that runs a module again and again (hloi bench, a
 * serving loop) reaches a steady state without page faults. On failure
 * `result` may hold partial values. HLOI_EINVAL when `result`'s shape or
 * layout differs, when it shares a buffer with an input, or when the module
 * aliases its result to an input (use hloi_module_run there). */
HLOI_API hloi_status hloi_module_run_into(hloi_module *m, hloi_context *ctx,
					  hloi_literal *const *inputs, size_t ninputs,
					  const hloi_run_options *opts, hloi_literal *result);

/* A copy of `lit`, an input parameter i accepts (hloi_module_parameter_accepts),
 * in the parameter's layout: the conversion a run makes of an input in
 * another layout (a transpose on opts->threads threads; `opts` may be
 * NULL), made once, so that runs again and again on the copy (hloi bench,
 * a serving loop) convert nothing. *out is new (caller frees): a plain
 * copy when the layouts already agree, and for a tuple parameter or one
 * with `<=N` or `?` dimensions (whose runs still convert). Errors:
 * HLOI_EINVAL (module not checked, i out of range, `lit` not accepted),
 * HLOI_ENOMEM. */
HLOI_API hloi_status hloi_module_conform_input(hloi_module *m, hloi_context *ctx, size_t i,
					       const hloi_literal *lit, const hloi_run_options *opts,
					       hloi_literal **out);

/* The participants a run of the checked module simulates: replicas x
 * partitions (hloi_check_options, else the module header's replica_count
 * and num_partitions) when the module evaluates a collective, replica-id
 * or partition-id; else 1 (every participant would compute the same). 0
 * when the module is not checked. */
HLOI_API size_t hloi_module_participant_count(const hloi_module *m);
/* The partitions of a checked module's run (participant p is replica
 * p / partitions, partition p % partitions); 1 when not checked. */
HLOI_API size_t hloi_module_partition_count(const hloi_module *m);

/* Runs the checked module as hloi_module_participant_count(m) = N
 * participants, each on a thread of its own: `inputs` holds ninputs per
 * participant, participant-major, participants in the order of their
 * flattened id (replica * partitions + partition); out[p] (room for N)
 * gets participant p's result (caller frees each). Collectives exchange
 * between the participants (doc/participants.md, "Collectives"). opts->max_memory and
 * opts->threads are shared out evenly; opts->progress counts participant
 * 0's instructions. Each participant's diagnostics come into ctx, named
 * "replica R, partition P". On failure every out[p] is NULL. With N = 1,
 * hloi_module_run. hloi_module_run itself refuses a module of several
 * participants that has collectives (HLOI_EINVAL). */
HLOI_API hloi_status hloi_module_run_participants(hloi_module *m, hloi_context *ctx, hloi_literal *const *inputs,
						  size_t ninputs, const hloi_run_options *opts, hloi_literal **out);

/* The input hloi_module_run writes its result into (input_output_alias, see
 * above), or -1 when it writes none. Callers that run a module more than
 * once on the same inputs (benchmarks, engine comparisons) must give each
 * run its own copy of that input. */
HLOI_API int hloi_module_aliased_input(const hloi_module *m);

/* hloi_module_print_dot with the fused regions of the evaluation plan
 * (two or more instructions) drawn as clusters. The module must be
 * checked (HLOI_EINVAL). A module with `?` dimensions that no run has
 * sized has no plan yet: its graph is written alone. */
HLOI_API hloi_status hloi_module_print_dot_plan(const hloi_module *m, const hloi_run_options *opts, FILE *f);

/* Makes one deterministic pseudo-random input per parameter of the checked
 * module (the same seed always gives the same values); a `?` dimension gets
 * the size hloi_module_set_unbounded_size gave, else
 * HLOI_UNBOUNDED_SIZE_DEFAULT. Free the array with hloi_literal_array_free. */
HLOI_API hloi_status hloi_module_random_inputs(hloi_literal ***out, size_t *count,
					       const hloi_module *m, hloi_context *ctx,
					       uint64_t seed);

/* The size a `?` (unbounded dynamic) dimension of a parameter takes in
 * hloi_module_random_inputs; n >= 0. A run takes each `?` from its input. */
#define HLOI_UNBOUNDED_SIZE_DEFAULT 2
HLOI_API void hloi_module_set_unbounded_size(hloi_module *m, int64_t n);

/* Gives every elided constant (`{...}`, whose values the text left out) of
 * the checked module deterministic pseudo-random values, as
 * hloi_module_random_inputs draws them (constant k in module order from
 * seed ^ (0xD1B54A32D192ED03 * k), k from 1), so the module can run;
 * *filled counts the constants filled. Errors: HLOI_EINVAL (not checked),
 * HLOI_ENOMEM. */
HLOI_API hloi_status hloi_module_fill_elided_constants(hloi_module *m, hloi_context *ctx, uint64_t seed,
						       size_t *filled);

/* A deterministic pseudo-random value of `shape` (arrays or tuples; the
 * values hloi_module_random_inputs draws: the same seed always gives the
 * same value). HLOI_ENOMEM when it does not fit in half of physical memory
 * or cannot be allocated. Free with hloi_literal_free. */
HLOI_API hloi_status hloi_literal_random(hloi_literal **out, hloi_context *ctx, const hloi_shape *shape,
					 uint64_t seed);

/* --- Custom-call targets of the embedder's own ----------------------------- */

/* A custom-call evaluates the code its target names. hloi evaluates a few
 * targets itself (doc/semantics.md, "Custom-call targets"); an embedder adds its own
 * by registering them. A registration is process-wide: register before
 * checking or running a module that calls the target, and do not register
 * or unregister while another thread checks or runs one. */

/* Checks the operand shapes of a call and the result shape written on it;
 * returns 0 when they are right, else nonzero with a one-line reason written
 * into `message` (at most `message_size` bytes, NUL included), which the
 * checker reports at the instruction as `custom-call target 'T': reason`.
 * `backend_config` is the instruction's backend_config as written (NULL
 * when it has none). The shapes are borrowed for the call. */
typedef int (*hloi_custom_call_check_fn)(void *user_data, const hloi_shape *const *operands,
					 size_t noperands, const hloi_shape *result,
					 const char *backend_config, char *message, size_t message_size);

/* Evaluates a call: reads the operands (which it must not modify) and fills
 * `result`, a literal of the call's result shape and layouts that hloi
 * allocated (a tuple result: fill its elements, hloi_literal_tuple_element).
 * Buffers are in physical order (hloi_literal_data, hloi_shape_stride);
 * elements it does not write are unspecified. Returns HLOI_OK, or a failure
 * status with an error recorded in `ctx` (hloi_context_error), which ends
 * the run with that status. Everything is borrowed for the call. */
typedef hloi_status (*hloi_custom_call_eval_fn)(void *user_data, hloi_context *ctx,
						hloi_literal *const *operands, size_t noperands,
						hloi_literal *result, const char *backend_config);

#define HLOI_CUSTOM_CALL_VERSION 1
/* The longest target name a registration takes, in bytes. */
#define HLOI_CUSTOM_CALL_NAME_MAX 127
/* The most targets registered at once. */
#define HLOI_CUSTOM_CALL_MAX 64

typedef struct hloi_custom_call {
	unsigned version;                  /* HLOI_CUSTOM_CALL_VERSION */
	const char *target;                /* custom_call_target, copied */
	hloi_custom_call_check_fn check;   /* NULL: only the written result shape is taken */
	hloi_custom_call_eval_fn evaluate; /* required */
	void *user_data;                   /* passed to both callbacks */
} hloi_custom_call;

/* Registers a target: from now on, the checker accepts calls to it (asking
 * `check` when there is one) and both engines evaluate them through
 * `evaluate`. The struct is copied (its `target` string too). Errors, with a
 * message in `ctx` (may be NULL): HLOI_EINVAL for a NULL or empty target, one
 * longer than HLOI_CUSTOM_CALL_NAME_MAX, no `evaluate`, a version this
 * library does not know (0 or above HLOI_CUSTOM_CALL_VERSION), a target hloi
 * evaluates itself or one already registered; HLOI_ENOMEM when
 * HLOI_CUSTOM_CALL_MAX are registered. */
HLOI_API hloi_status hloi_custom_call_register(hloi_context *ctx, const hloi_custom_call *call);

/* Forgets a registered target; HLOI_EINVAL (message in `ctx`, may be NULL)
 * when it is not registered. */
HLOI_API hloi_status hloi_custom_call_unregister(hloi_context *ctx, const char *target);

/* Whether hloi evaluates `target`: 1 for its own targets, 2 for a
 * registered one, 0 otherwise. */
HLOI_API int hloi_custom_call_known(const char *target);

/* Compares two literals of the same element type and dimensions
 * (their layouts may differ) element by element, as `hloi run --compare`
 * does: floats match when equal, both NaN, or within abs_tol or rel_tol of
 * `expected` (a mismatch needs both exceeded), rel_tol at least one unit
 * in the last place for bf16 and f16 (2^-7 and 2^-10 relative: the fast
 * engine sums their dots in another order than the reference, rounding
 * once); integers and pred exactly.
 * *mismatches gets the number of differing elements; the first `max_report`
 * of them are described on `report` (may be NULL), one line each:
 * `index (1,2): expected 1.5, got 1.75`. Tuples are compared element by
 * element, their report lines prefixed with the element's index (`{1,0}: `).
 * HLOI_EINVAL (with a message in ctx) when the types, dimensions or tuple
 * structures differ. */
HLOI_API hloi_status hloi_literal_compare(const hloi_literal *expected, const hloi_literal *actual,
					  hloi_context *ctx, double abs_tol, double rel_tol,
					  FILE *report, size_t max_report, size_t *mismatches);

#ifdef __cplusplus
}
#endif

#endif
