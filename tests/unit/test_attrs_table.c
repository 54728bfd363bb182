/* Unit tests for the attribute table's proto columns (ir/attrs.def): every
 * row's field number names a field of XLA's HloInstructionProto (or of the
 * sub-message it names) with the name, label and type its mapping says, as
 * protobuf-c's generated descriptors have them; and field_out writes the
 * generic mappings where the table says. */
#include <stdio.h>
#include <string.h>

#include "ir/attrs.h"
#include "proto/proto_internal.h"
#include "unit.h"
#include "util/arena.h"

/* The label and type a mapping expects of its field. */
static int pk_expect(attr_pkind pk, ProtobufCLabel *label, ProtobufCType *t1, ProtobufCType *t2)
{
	*label = PROTOBUF_C_LABEL_NONE;
	switch (pk) {
	case PK_INT:
		*t1 = PROTOBUF_C_TYPE_INT64;
		*t2 = PROTOBUF_C_TYPE_INT32;
		return 1;
	case PK_INT1:
	case PK_INTS:
	case PK_CALLEE:
	case PK_IDS:
		*label = PROTOBUF_C_LABEL_REPEATED;
		*t1 = *t2 = PROTOBUF_C_TYPE_INT64;
		return 1;
	case PK_BOOL:
		*t1 = *t2 = PROTOBUF_C_TYPE_BOOL;
		return 1;
	case PK_FLOAT:
		*t1 = *t2 = PROTOBUF_C_TYPE_FLOAT;
		return 1;
	case PK_WORD:
	case PK_TEXT:
		*t1 = *t2 = PROTOBUF_C_TYPE_STRING;
		return 1;
	case PK_BYTES:
		*t1 = *t2 = PROTOBUF_C_TYPE_BYTES;
		return 1;
	case PK_ENUM:
	case PK_ENUM_LC:
		*t1 = *t2 = PROTOBUF_C_TYPE_ENUM;
		return 1;
	case PK_ENUMS:
		*label = PROTOBUF_C_LABEL_REPEATED;
		*t1 = *t2 = PROTOBUF_C_TYPE_ENUM;
		return 1;
	case PK_MSG:
		*t1 = *t2 = PROTOBUF_C_TYPE_MESSAGE;
		return 1;
	case PK_MSGS:
		*label = PROTOBUF_C_LABEL_REPEATED;
		*t1 = *t2 = PROTOBUF_C_TYPE_MESSAGE;
		return 1;
	default:
		return 0;
	}
}

/* The field the row names: HloInstructionProto's, or one of the
 * sub-message it holds (`message.field`); NULL (having said why) when the
 * descriptors disagree with the row. */
static const ProtobufCFieldDescriptor *row_field(attr_id id)
{
	const ProtobufCMessageDescriptor *d = &xla__hlo_instruction_proto__descriptor;
	const char *name = attr_proto_name(id);
	uint32_t num = attr_proto_field(id);
	const ProtobufCFieldDescriptor *f = protobuf_c_message_descriptor_get_field(d, num);
	if (!f) {
		printf("\n  %s: HloInstructionProto has no field %u\n", attr_name(id), (unsigned)num);
		return NULL;
	}
	const char *dot = strchr(name, '.');
	size_t top = dot ? (size_t)(dot - name) : strlen(name);
	if (strlen(f->name) != top || strncmp(f->name, name, top) != 0) {
		printf("\n  %s: field %u is %s, not %.*s\n", attr_name(id), (unsigned)num, f->name, (int)top, name);
		return NULL;
	}
	if (!dot)
		return f;
	if (f->type != PROTOBUF_C_TYPE_MESSAGE || f->label == PROTOBUF_C_LABEL_REPEATED) {
		printf("\n  %s: field %s is no message\n", attr_name(id), f->name);
		return NULL;
	}
	const ProtobufCMessageDescriptor *md = f->descriptor;
	const ProtobufCFieldDescriptor *sf = protobuf_c_message_descriptor_get_field_by_name(md, dot + 1);
	if (!sf)
		printf("\n  %s: %s has no field %s\n", attr_name(id), md->name, dot + 1);
	return sf;
}

static void test_rows_match_descriptors(void)
{
	int checked = 0;
	for (int i = 0; i < ATTR_COUNT; i++) {
		attr_id id = (attr_id)i;
		attr_pkind pk = attr_proto_kind(id);
		uint32_t num = attr_proto_field(id);
		const char *name = attr_proto_name(id);
		if (pk == PK_NONE || num == 0) {
			/* no field: none named */
			CU_ASSERT(pk == PK_NONE && num == 0 && name[0] == '\0');
			continue;
		}
		const ProtobufCFieldDescriptor *f = row_field(id);
		CU_ASSERT(f != NULL);
		if (!f)
			continue;
		ProtobufCLabel label;
		ProtobufCType t1, t2;
		CU_ASSERT_FATAL(pk_expect(pk, &label, &t1, &t2));
		int ok = f->label == label && (f->type == t1 || f->type == t2);
		if (!ok)
			printf("\n  %s: field %s has label %d type %d, not what mapping %d says\n", attr_name(id), f->name,
			       (int)f->label, (int)f->type, (int)pk);
		CU_ASSERT(ok);
		checked++;
	}
	CU_ASSERT(checked > 80);
}

/* The fields the handlers choose for some opcodes instead of the row's,
 * filled by the same mapping and found by the same name. */
static void test_opcode_alternatives(void)
{
	static const struct {
		const ProtobufCMessageDescriptor *d;
		attr_id id;
	} alt[] = {
		{ &xla__scatter_dimension_numbers__descriptor, ATTR_INDEX_VECTOR_DIM },
		{ &xla__cholesky_options__descriptor, ATTR_LOWER },
		{ &xla__dot_dimension_numbers__descriptor, ATTR_LHS_BATCH_DIMS },
		{ &xla__dot_dimension_numbers__descriptor, ATTR_RHS_CONTRACTING_DIMS },
	};
	for (size_t i = 0; i < sizeof alt / sizeof alt[0]; i++) {
		const ProtobufCFieldDescriptor *row = row_field(alt[i].id);
		const char *leaf = strchr(attr_proto_name(alt[i].id), '.');
		CU_ASSERT_FATAL(row != NULL && leaf != NULL);
		const ProtobufCFieldDescriptor *f = protobuf_c_message_descriptor_get_field_by_name(alt[i].d, leaf + 1);
		CU_ASSERT_FATAL(f != NULL);
		CU_ASSERT(f->label == row->label && f->type == row->type);
	}
	/* a ragged dot's dimension numbers are a DotDimensionNumbers */
	const ProtobufCFieldDescriptor *rd = protobuf_c_message_descriptor_get_field_by_name(
		&xla__ragged_dot_dimension_numbers__descriptor, "dot_dimension_numbers");
	CU_ASSERT_FATAL(rd != NULL);
	CU_ASSERT(rd->descriptor == &xla__dot_dimension_numbers__descriptor);
	/* collective-permute's slice_sizes= goes in dynamic_slice_sizes=' field */
	CU_ASSERT(attr_proto_kind(ATTR_DYNAMIC_SLICE_SIZES) == PK_INTS);
	CU_ASSERT(attr_proto_kind(ATTR_SLICE_SIZES) == PK_INTS);
}

/* The callee rows are the computation-valued attributes. */
static void test_callees(void)
{
	for (int i = 0; i < ATTR_COUNT; i++) {
		attr_kind k = attr_table_kind((attr_id)i);
		int comp = k == AK_COMP || k == AK_COMPS;
		CU_ASSERT(fields_is_callee((attr_id)i) == comp);
		CU_ASSERT((attr_proto_kind((attr_id)i) == PK_CALLEE) == comp);
	}
	CU_ASSERT(!fields_is_callee(ATTR_COUNT));
}

/* field_out writes a generic row's value where the table says. */
static void test_field_out_generic(void)
{
	arena a;
	arena_init(&a);
	strbuf err = STRBUF_INIT;
	fout o;
	memset(&o, 0, sizeof o);
	o.a = &a;
	o.op = OP_TOPK;
	o.err = &err;
	Xla__HloInstructionProto ip = XLA__HLO_INSTRUCTION_PROTO__INIT;
	attr at;
	memset(&at, 0, sizeof at);

	at.id = ATTR_K;
	at.kind = AK_INT;
	at.u.i = 5;
	CU_ASSERT(field_out(&o, &at, &ip) == FO_OK);
	CU_ASSERT(ip.k == 5);
	CU_ASSERT(fields_taken(o.taken, attr_proto_field(ATTR_K)));

	at.id = ATTR_LARGEST;
	at.kind = AK_BOOL;
	at.u.i = 1;
	CU_ASSERT(field_out(&o, &at, &ip) == FO_OK);
	CU_ASSERT(ip.largest);

	/* an int32 field is range-checked; a oneof member gets its case */
	at.id = ATTR_EXPONENT_BITS;
	at.kind = AK_INT;
	at.u.i = (int64_t)1 << 40;
	CU_ASSERT(field_out(&o, &at, &ip) == FO_BAD);
	CU_ASSERT(strcmp(sb_str(&err), "exponent_bits must fit in 32 bits") == 0);
	at.id = ATTR_CROSS_PROGRAM_PREFETCH_INDEX;
	at.u.i = 3;
	CU_ASSERT(field_out(&o, &at, &ip) == FO_OK);
	CU_ASSERT(ip.cross_program_prefetch_index == 3);
	CU_ASSERT(ip.optional_cross_program_prefetch_index_case ==
		  XLA__HLO_INSTRUCTION_PROTO__OPTIONAL_CROSS_PROGRAM_PREFETCH_INDEX_CROSS_PROGRAM_PREFETCH_INDEX);

	/* attributes sharing a field: the second finds it taken */
	int64_t dims[] = { 1, 0 };
	at.id = ATTR_DIMENSIONS;
	at.kind = AK_INTS;
	at.u.ints.present = 1;
	at.u.ints.n = 2;
	at.u.ints.v = dims;
	CU_ASSERT(field_out(&o, &at, &ip) == FO_OK);
	CU_ASSERT(ip.n_dimensions == 2 && ip.dimensions[0] == 1 && ip.dimensions[1] == 0);
	memset(&at.u, 0, sizeof at.u);
	at.id = ATTR_IOTA_DIMENSION;
	at.kind = AK_INT;
	at.u.i = 0;
	CU_ASSERT(field_out(&o, &at, &ip) == FO_TAKEN);

	/* an enum named by its word; a sub-message's field */
	at.id = ATTR_DISTRIBUTION;
	at.kind = AK_WORD;
	at.u.s = "rng_normal";
	CU_ASSERT(field_out(&o, &at, &ip) == FO_OK);
	CU_ASSERT(ip.distribution == XLA__RANDOM_DISTRIBUTION__RNG_NORMAL);
	at.id = ATTR_OFFSET_DIMS;
	at.kind = AK_INTS;
	at.u.ints.present = 1;
	at.u.ints.n = 2;
	at.u.ints.v = dims;
	CU_ASSERT(field_out(&o, &at, &ip) == FO_OK);
	CU_ASSERT_FATAL(ip.gather_dimension_numbers != NULL);
	CU_ASSERT(ip.gather_dimension_numbers->n_offset_dims == 2);

	/* no field: kept as text by the saver */
	at.id = ATTR_MODE;
	at.kind = AK_WORD;
	at.u.s = "x";
	CU_ASSERT(field_out(&o, &at, &ip) == FO_NOFIELD);

	sb_free(&err);
	arena_release(&a);
}

static const unit_test table_tests[] = {
	{ "rows_match_descriptors", test_rows_match_descriptors },
	{ "opcode_alternatives", test_opcode_alternatives },
	{ "callees", test_callees },
	{ "field_out_generic", test_field_out_generic },
	{ NULL, NULL },
};

const unit_suite unit_suites[] = {
	{ "attrs_table", table_tests },
	{ NULL, NULL },
};
