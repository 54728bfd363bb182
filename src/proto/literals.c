/* XLA's RunHloModuleLiterals (xla/tools/run_hlo_module.proto), the file
 * run_hlo_module reads with --input_literals_file and writes with
 * --output_literals_file: read in binary or text format, the arguments of
 * its first iteration; written with one iteration. As XLA does, a file
 * holding a bare RunHloModuleIterationLiterals is read too. */
#include <string.h>

#include "proto/pbtxt.h"
#include "proto/proto_internal.h"
#include "run_hlo_module.pb-c.h"
#include "util/alloc.h"
#include "util/diag.h"

/* Whether the text's first field (after white space and # comments) is one
 * of RunHloModuleIterationLiterals' rather than `iterations`. */
static int text_is_iteration(const char *t, size_t len)
{
	size_t i = 0;
	for (;;) {
		while (i < len && (t[i] == ' ' || t[i] == '\t' || t[i] == '\n' || t[i] == '\r'))
			i++;
		if (i < len && t[i] == '#') {
			while (i < len && t[i] != '\n')
				i++;
			continue;
		}
		break;
	}
	return !(len - i >= 10 && strncmp(t + i, "iterations", 10) == 0);
}

/* Whether `data` is well-formed message `d`; if not and `ctx` is given,
 * records why. */
static hloi_status check_wire(const ProtobufCMessageDescriptor *d, hloi_context *ctx, const char *name,
			      const unsigned char *data, size_t len, const char *what_type)
{
	strbuf where = STRBUF_INIT, what = STRBUF_INIT;
	hloi_status st = HLOI_OK;
	if (wire_check(d, data, len, &where, &what)) {
		st = where.oom || what.oom ? HLOI_ENOMEM : HLOI_EPARSE;
		if (ctx)
			diag_error_where(ctx, name, "not a valid %s: %s%s%s", what_type, sb_str(&what),
					 where.len ? " in " : "", sb_str(&where));
	}
	sb_free(&where);
	sb_free(&what);
	return st;
}

/* Unpacks checked bytes as `d`. */
static ProtobufCMessage *unpack(const ProtobufCMessageDescriptor *d, proto_alloc *pa, hloi_context *ctx,
				const char *name, const unsigned char *data, size_t len, hloi_status *st)
{
	ProtobufCMessage *msg = protobuf_c_message_unpack(d, &pa->a, len, data);
	if (!msg) {
		*st = pa->failed ? HLOI_ENOMEM : HLOI_EPARSE;
		if (pa->failed)
			diag_error_where(ctx, name, "out of memory reading the literals");
		else
			diag_error_where(ctx, name, "not a valid RunHloModuleLiterals");
	}
	return msg;
}

/* The arguments of `it` as literals. */
static hloi_status arguments_in(hloi_literal ***out, size_t *count, hloi_context *ctx, const char *name,
				Xla__RunHloModuleIterationLiterals *it)
{
	size_t n = it->n_arguments;
	hloi_literal **lits = hloi_calloc(n ? n : 1, sizeof *lits);
	if (!lits)
		return HLOI_ENOMEM;
	hloi_status st = HLOI_OK;
	for (size_t i = 0; i < n && st == HLOI_OK; i++) {
		char what[64];
		snprintf(what, sizeof what, "argument %zu", i);
		st = proto_literal_in(&lits[i], ctx, name, it->arguments[i], what);
	}
	if (st != HLOI_OK) {
		hloi_literal_array_free(lits, n);
		return st;
	}
	*out = lits;
	*count = n;
	return HLOI_OK;
}

hloi_status proto_run_literals_read(hloi_literal ***out, size_t *count, hloi_context *ctx, const char *name,
				    const unsigned char *data, size_t len, int text)
{
	const ProtobufCMessageDescriptor *all_d = &xla__run_hlo_module_literals__descriptor;
	const ProtobufCMessageDescriptor *it_d = &xla__run_hlo_module_iteration_literals__descriptor;
	*out = NULL;
	*count = 0;
	unsigned char *wire = NULL;
	size_t wlen = len;
	hloi_status st = HLOI_OK;
	int iteration = 0;
	if (text) {
		iteration = text_is_iteration((const char *)data, len);
		st = pbtxt_to_wire_as(&wire, &wlen, iteration ? it_d : all_d, ctx, name, (const char *)data, len);
		if (st != HLOI_OK)
			return st;
		data = wire;
	}
	proto_alloc pa;
	proto_alloc_init(&pa);
	ProtobufCMessage *msg = NULL;
	Xla__RunHloModuleIterationLiterals *it = NULL;
	if (!iteration && check_wire(all_d, text ? ctx : NULL, name, data, wlen, "RunHloModuleLiterals") == HLOI_OK) {
		msg = unpack(all_d, &pa, ctx, name, data, wlen, &st);
		if (!msg)
			goto out;
		Xla__RunHloModuleLiterals *all = (Xla__RunHloModuleLiterals *)msg;
		if (all->n_iterations > 0)
			it = all->iterations[0];
		else if (text) {
			diag_error_where(ctx, name, "RunHloModuleLiterals holds no iterations");
			st = HLOI_EPARSE;
			goto out;
		}
	} else if (!iteration && text) {
		st = HLOI_EPARSE;
		goto out;
	}
	if (!it) {
		/* as XLA does: else a bare RunHloModuleIterationLiterals */
		if (msg)
			protobuf_c_message_free_unpacked(msg, &pa.a);
		msg = NULL;
		st = check_wire(it_d, ctx, name, data, wlen, "RunHloModuleLiterals or RunHloModuleIterationLiterals");
		if (st != HLOI_OK)
			goto out;
		msg = unpack(it_d, &pa, ctx, name, data, wlen, &st);
		if (!msg)
			goto out;
		it = (Xla__RunHloModuleIterationLiterals *)msg;
	}
	st = arguments_in(out, count, ctx, name, it);
out:
	if (msg)
		protobuf_c_message_free_unpacked(msg, &pa.a);
	hloi_free(wire);
	return st;
}

hloi_status proto_run_literals_write(unsigned char **out, size_t *len, hloi_context *ctx, const char *name,
				     hloi_literal *const *args, size_t nargs, const hloi_literal *result,
				     const hloi_literal *reference, int text)
{
	*out = NULL;
	*len = 0;
	arena a;
	arena_init(&a);
	hloi_status st = HLOI_ENOMEM;
	Xla__RunHloModuleLiterals all;
	xla__run_hlo_module_literals__init(&all);
	Xla__RunHloModuleIterationLiterals it;
	xla__run_hlo_module_iteration_literals__init(&it);
	Xla__RunHloModuleIterationLiterals *its[1] = { &it };
	all.n_iterations = 1;
	all.iterations = its;
	it.n_arguments = nargs;
	it.arguments = arena_alloc(&a, (nargs ? nargs : 1) * sizeof *it.arguments);
	if (!it.arguments) {
		diag_error_where(ctx, name, "out of memory writing the literals");
		goto out;
	}
	st = HLOI_OK;
	for (size_t i = 0; i < nargs && st == HLOI_OK; i++)
		it.arguments[i] = proto_literal_out(&a, ctx, name, args[i], &st);
	if (st == HLOI_OK && result)
		it.result = proto_literal_out(&a, ctx, name, result, &st);
	if (st == HLOI_OK && reference)
		it.reference_result = proto_literal_out(&a, ctx, name, reference, &st);
	if (st != HLOI_OK)
		goto out;
	if (text) {
		strbuf b = STRBUF_INIT;
		pbtxt_print_message(&b, &all.base);
		if (b.oom) {
			sb_free(&b);
			st = HLOI_ENOMEM;
		} else {
			*len = b.len;
			*out = b.s ? (unsigned char *)sb_take(&b) : (unsigned char *)hloi_strdup("");
			st = *out ? HLOI_OK : HLOI_ENOMEM;
		}
	} else {
		size_t n = xla__run_hlo_module_literals__get_packed_size(&all);
		*out = hloi_malloc(n ? n : 1);
		if (*out) {
			xla__run_hlo_module_literals__pack(&all, *out);
			*len = n;
		} else {
			st = HLOI_ENOMEM;
		}
	}
	if (st == HLOI_ENOMEM)
		diag_error_where(ctx, name, "out of memory writing the literals");
out:
	arena_release(&a);
	return st;
}
