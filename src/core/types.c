/* Element type table lookups. */
#include "core/types.h"

#include <string.h>

typedef struct etype_info {
	etype type;
	const char *name;
	int width;
	etype_kind kind;
	int evaluated;
	const char *npy;
} etype_info;

#define EVAL 1
#define NOEVAL 0
static const etype_info table[] = {
#define X(E, name, num, width, kind, ctype, ev, npy) { ET_##E, name, width, kind, ev, npy },
#include "core/types.def"
#undef X
};
#undef EVAL
#undef NOEVAL

static const etype_info *info(etype t)
{
	for (size_t i = 0; i < sizeof table / sizeof table[0]; i++)
		if (table[i].type == t)
			return &table[i];
	return NULL;
}

const char *etype_name(etype t)
{
	if (t == ET_TUPLE)
		return "tuple";
	const etype_info *i = info(t);
	return i ? i->name : NULL;
}

etype etype_from_name(const char *s, size_t len)
{
	/* a linear scan with a first-byte filter: called for every shape */
	for (size_t i = 0; i < sizeof table / sizeof table[0]; i++)
		if (table[i].name[0] == (len ? s[0] : 0) && strlen(table[i].name) == len &&
		    memcmp(table[i].name, s, len) == 0)
			return table[i].type;
	if (len == 11 && memcmp(s, "opaque_type", 11) == 0)
		return ET_OPAQUE;
	return ET_INVALID;
}

etype etype_from_number(int64_t n)
{
	for (size_t i = 0; i < sizeof table / sizeof table[0]; i++)
		if ((int64_t)table[i].type == n)
			return table[i].type;
	return ET_INVALID;
}

int etype_byte_width(etype t)
{
	const etype_info *i = info(t);
	return i ? i->width : 0;
}

etype_kind etype_get_kind(etype t)
{
	if (t == ET_TUPLE)
		return KIND_TUPLE;
	const etype_info *i = info(t);
	return i ? i->kind : KIND_OPAQUE;
}

int etype_is_evaluated(etype t)
{
	const etype_info *i = info(t);
	return i ? i->evaluated : 0;
}

const char *etype_npy_descr(etype t)
{
	const etype_info *i = info(t);
	return i ? i->npy : NULL;
}

int etype_is_float(etype t)
{
	return etype_get_kind(t) == KIND_FLOAT;
}

int etype_same_ignoring_fp(etype a, etype b)
{
	return a == b || (etype_is_float(a) && etype_is_float(b));
}

int etype_is_integer(etype t)
{
	etype_kind k = etype_get_kind(t);
	return k == KIND_SINT || k == KIND_UINT;
}

int etype_is_signed(etype t)
{
	return etype_get_kind(t) == KIND_SINT;
}

int64_t etype_read_int(etype t, const void *p)
{
	switch (t) {
	case ET_S8: { int8_t v; memcpy(&v, p, 1); return v; }
	case ET_S16: { int16_t v; memcpy(&v, p, 2); return v; }
	case ET_S32: { int32_t v; memcpy(&v, p, 4); return v; }
	case ET_S64: { int64_t v; memcpy(&v, p, 8); return v; }
	case ET_U8: { uint8_t v; memcpy(&v, p, 1); return v; }
	case ET_U16: { uint16_t v; memcpy(&v, p, 2); return v; }
	case ET_U32: { uint32_t v; memcpy(&v, p, 4); return v; }
	case ET_U64: { uint64_t v; memcpy(&v, p, 8); return (int64_t)v; }
	default: return 0;
	}
}

int etype_bit_width(etype t)
{
	switch (t) {
	case ET_PRED: case ET_S1: case ET_U1: return 1;
	case ET_S2: case ET_U2: return 2;
	case ET_S4: case ET_U4: case ET_F4E2M1FN: return 4;
	default: return etype_byte_width(t) * 8;
	}
}

uint8_t etype_from_low_bits(etype t, uint8_t byte)
{
	int n = etype_bit_width(t);
	if (t == ET_PRED || n >= 8)
		return byte;
	uint8_t low = (uint8_t)(byte & ((1u << n) - 1u));
	if (etype_is_signed(t) && (low >> (n - 1)))
		low = (uint8_t)(low | (0xffu << n));
	return low;
}

/* primitive_util's OverflowExponent (numeric_limits::max_exponent) and
 * SignificandWidth (digits) of the float types; 0 for the others. */
static void float_props(etype t, int *maxexp, int *digits)
{
	static const struct {
		etype t;
		int maxexp, digits;
	} tab[] = {
		{ ET_F16, 16, 11 },	   { ET_BF16, 128, 8 },		 { ET_F32, 128, 24 },
		{ ET_F64, 1024, 53 },	   { ET_F8E5M2, 16, 3 },	 { ET_F8E4M3, 8, 4 },
		{ ET_F8E4M3FN, 9, 4 },	   { ET_F8E4M3B11FNUZ, 5, 4 },	 { ET_F8E3M4, 4, 5 },
		{ ET_F8E5M2FNUZ, 16, 3 },  { ET_F8E4M3FNUZ, 8, 4 },	 { ET_F4E2M1FN, 3, 2 },
		{ ET_F8E8M0FNU, 128, 1 },
	};
	*maxexp = *digits = 0;
	for (size_t i = 0; i < sizeof tab / sizeof tab[0]; i++)
		if (tab[i].t == t) {
			*maxexp = tab[i].maxexp;
			*digits = tab[i].digits;
		}
}

/* primitive_util::HigherPrecisionType: complex first, then float range,
 * float precision, bit width, signedness (ties: a). */
etype etype_higher_precision(etype a, etype b)
{
	int64_t key[2][5];
	etype t[2] = { a, b };
	for (int k = 0; k < 2; k++) {
		int cplx = t[k] == ET_C64 || t[k] == ET_C128;
		etype comp = t[k] == ET_C64 ? ET_F32 : t[k] == ET_C128 ? ET_F64 : t[k];
		int me, dg;
		float_props(comp, &me, &dg);
		key[k][0] = cplx;
		key[k][1] = me ? me : -1;
		key[k][2] = me ? dg : -1;
		key[k][3] = etype_bit_width(comp);
		key[k][4] = etype_get_kind(comp) == KIND_SINT;
	}
	for (int i = 0; i < 5; i++)
		if (key[0][i] != key[1][i])
			return key[0][i] > key[1][i] ? a : b;
	return a;
}
