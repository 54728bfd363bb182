/* Element types, generated from types.def. */
#ifndef HLOI_CORE_TYPES_H
#define HLOI_CORE_TYPES_H

#include <stddef.h>
#include <stdint.h>

typedef enum etype_kind {
	KIND_PRED,
	KIND_SINT,
	KIND_UINT,
	KIND_FLOAT,
	KIND_COMPLEX,
	KIND_TOKEN,
	KIND_OPAQUE,
	KIND_TUPLE
} etype_kind;

/* Enum values are XLA's PrimitiveType numbers. */
typedef enum etype {
	ET_INVALID = 0,
#define X(E, name, num, width, kind, ctype, ev, npy) ET_##E = num,
#include "core/types.def"
#undef X
	ET_TUPLE = 13
} etype;

/* Storage C types, one typedef per type: et_f32, et_s32, ... */
#define X(E, name, num, width, kind, ctype, ev, npy) typedef ctype et_storage_##E;
#include "core/types.def"
#undef X

/* To instantiate code for each evaluated type:
 *   #define EACH(E, ctype) ...
 *   #define X(E, name, num, width, kind, ctype, ev, npy) EVAL_ROW_##ev(EACH, E, ctype)
 *   #include "core/types.def"
 *   #undef X
 */
#define EVAL_ROW_EVAL(F, E, ctype) F(E, ctype)
#define EVAL_ROW_NOEVAL(F, E, ctype)

/* Text name ("f32"), or NULL for an unknown enum value. */
const char *etype_name(etype t);
/* Lookup by exact text name (`len` bytes); ET_INVALID when not a type name.
 * "opaque_type" is accepted as XLA's parser does. */
etype etype_from_name(const char *s, size_t len);
/* Lookup by XLA PrimitiveType number; ET_INVALID when unknown. */
etype etype_from_number(int64_t n);
int etype_byte_width(etype t);
etype_kind etype_get_kind(etype t);
/* Whether the engines evaluate this type. */
int etype_is_evaluated(etype t);
/* npy descr ("<f4"), or NULL when the type has none. */
const char *etype_npy_descr(etype t);
int etype_is_float(etype t);    /* f16 bf16 f32 f64 and f8 types */
/* XLA's SameElementTypeIgnoringFpPrecision: the same type, or two float
 * types. */
int etype_same_ignoring_fp(etype a, etype b);
int etype_is_integer(etype t);  /* signed or unsigned, not pred */
int etype_is_signed(etype t);   /* signed integers */
/* The value of the 8-, 16-, 32- or 64-bit integer at p (u64 reinterpreted);
 * 0 for any other type. */
int64_t etype_read_int(etype t, const void *p);
/* Bit width of a value (pred 1, s4 4, f32 32); storage may be wider. */
int etype_bit_width(etype t);
/* XLA's primitive_util::HigherPrecisionType: the complex type, else the
 * float type of more range, then of more precision, then the wider, then
 * the signed one; a when they tie. */
etype etype_higher_precision(etype a, etype b);
/* The stored byte of a sub-byte integer or f4e2m1fn taken from the low
 * `bit width` bits of `byte`, the bits above ignored as XLA's intN ignores
 * them (signed integers sign-extended). Other types: the byte itself. */
uint8_t etype_from_low_bits(etype t, uint8_t byte);

#endif
