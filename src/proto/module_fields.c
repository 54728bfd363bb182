/* The module's own fields as HLO text shows them: the header's
 * input_output_alias= and buffer_donor= (HloInputOutputAliasConfig /
 * HloBufferDonorConfig's ToShortString, hlo_parser.cc's ParseAliasing and
 * ParseBufferDonor) and the stack frame tables that follow the header
 * (HloModule::PrintStackFrameIndex, ParseStackFrameIndex; openxla/xla
 * 841f8d2d). The text's parent_frame_id is the proto's plus one. */
#include <string.h>

#include "proto/proto_internal.h"

/* --- input_output_alias / buffer_donor ------------------------------------------- */

void alias_text(strbuf *b, const alias_entry *v, int n)
{
	if (n == 0) {
		sb_puts(b, "{}");
		return;
	}
	sb_puts(b, "{ ");
	for (int i = 0; i < n; i++) {
		if (i)
			sb_puts(b, ", ");
		put_int_list(b, v[i].output_index, (size_t)v[i].n_output_index, '{', '}');
		sb_printf(b, ": (%lld, ", (long long)v[i].parameter_number);
		put_int_list(b, v[i].parameter_index, (size_t)v[i].n_parameter_index, '{', '}');
		sb_puts(b, v[i].must_alias ? ", must-alias)" : ", may-alias)");
	}
	sb_puts(b, " }");
}

void donor_print(strbuf *b, const Xla__HloBufferDonorProto *d)
{
	if (!d || d->n_entries == 0) {
		sb_puts(b, "{}");
		return;
	}
	sb_puts(b, "{ ");
	for (size_t i = 0; i < d->n_entries; i++) {
		const Xla__HloBufferDonorProto__BufferDonorEntryProto *e = d->entries[i];
		sb_printf(b, "%s(%lld, ", i ? ", " : "", (long long)e->parameter_number);
		put_int_list(b, e->parameter_shape_index, e->n_parameter_shape_index, '{', '}');
		sb_putc(b, ')');
	}
	sb_puts(b, " }");
}

int donor_parse(tcur *c, Xla__HloBufferDonorProto *d, arena *a)
{
	size_t cap = 0;
	if (tc_expect(c, '{', "'{'"))
		return -1;
	if (tc_eat(c, '}'))
		return 0;
	do {
		Xla__HloBufferDonorProto__BufferDonorEntryProto *e = arena_alloc(a, sizeof *e);
		if (!e) {
			c->oom = 1;
			return tc_fail(c, "memory");
		}
		xla__hlo_buffer_donor_proto__buffer_donor_entry_proto__init(e);
		if (tc_expect(c, '(', "'(' and a parameter number") || tc_int64(c, &e->parameter_number) ||
		    tc_expect(c, ',', "','") ||
		    tc_int_list(c, '{', '}', &e->parameter_shape_index, &e->n_parameter_shape_index, a) ||
		    tc_expect(c, ')', "')'"))
			return -1;
		if (d->n_entries == cap) {
			size_t ncap = cap ? 2 * cap : 4;
			Xla__HloBufferDonorProto__BufferDonorEntryProto **nv = arena_array(a, ncap, sizeof *nv);
			if (!nv) {
				c->oom = 1;
				return tc_fail(c, "memory");
			}
			if (d->n_entries)
				memcpy(nv, d->entries, d->n_entries * sizeof *nv);
			d->entries = nv;
			cap = ncap;
		}
		d->entries[d->n_entries++] = e;
	} while (tc_eat(c, ','));
	return tc_expect(c, '}', "'}'");
}

/* --- stack frames -------------------------------------------------------------------- */

void stack_frames_print(strbuf *b, const Xla__StackFrameIndexProto *s)
{
	sb_puts(b, "FileNames\n");
	for (size_t i = 0; i < s->n_file_names; i++) {
		sb_printf(b, "%zu ", i + 1);
		put_quoted(b, s->file_names[i], strlen(s->file_names[i]));
		sb_putc(b, '\n');
	}
	sb_puts(b, "\nFunctionNames\n");
	for (size_t i = 0; i < s->n_function_names; i++) {
		sb_printf(b, "%zu ", i + 1);
		put_quoted(b, s->function_names[i], strlen(s->function_names[i]));
		sb_putc(b, '\n');
	}
	sb_puts(b, "\nFileLocations\n");
	for (size_t i = 0; i < s->n_file_locations; i++) {
		const Xla__StackFrameIndexProto__FileLocation *l = s->file_locations[i];
		sb_printf(b, "%zu {file_name_id=%d function_name_id=%d line=%d end_line=%d column=%d end_column=%d}\n",
			  i + 1, (int)l->file_name_id, (int)l->function_name_id, (int)l->line, (int)l->end_line,
			  (int)l->column, (int)l->end_column);
	}
	sb_puts(b, "\nStackFrames");
	for (size_t i = 0; i < s->n_stack_frames; i++) {
		const Xla__StackFrameIndexProto__StackFrame *f = s->stack_frames[i];
		sb_printf(b, "\n%zu {file_location_id=%d parent_frame_id=%lld}", i + 1, (int)f->file_location_id,
			  (long long)f->parent_frame_id + 1);
	}
}

/* A growable array of pointers in the arena. */
static int grow(tcur *c, arena *a, void ***v, size_t n, size_t *cap)
{
	if (n < *cap)
		return 0;
	size_t ncap = *cap ? 2 * *cap : 8;
	void **nv = arena_array(a, ncap, sizeof *nv);
	if (!nv) {
		c->oom = 1;
		return tc_fail(c, "memory");
	}
	if (n)
		memcpy(nv, *v, n * sizeof *nv);
	*v = nv;
	*cap = ncap;
	return 0;
}

/* `{name=int ...}` with exactly the given names, in any order. */
static int int_fields(tcur *c, const char *const *names, int32_t *vals, int n)
{
	int seen = 0;
	if (tc_expect(c, '{', "'{'"))
		return -1;
	while (!tc_eat(c, '}')) {
		size_t s, e;
		if (!tc_word(c, &s, &e) || tc_expect(c, '=', "'='"))
			return tc_fail(c, "a field name and '='");
		int k = 0;
		while (k < n && !tc_word_is(c, s, e, names[k]))
			k++;
		if (k == n) {
			c->i = s;
			return tc_fail(c, names[0][0] == 'f' && names[1][0] == 'f'
						  ? "file_name_id=, function_name_id=, line=, end_line=, column= or end_column="
						  : "file_location_id= or parent_frame_id=");
		}
		if (tc_int32(c, &vals[k]))
			return -1;
		seen |= 1 << k;
		tc_eat(c, ',');
	}
	if (seen != (1 << n) - 1)
		return tc_fail(c, "every field of the entry");
	return 0;
}

static int section(tcur *c, const char *name)
{
	if (!tc_keyword(c, name))
		return tc_fail(c, name);
	return 0;
}

int stack_frames_parse(tcur *c, Xla__StackFrameIndexProto *s, arena *a)
{
	size_t cap = 0;
	int64_t num;
	if (section(c, "FileNames"))
		return -1;
	while (tc_peek(c) >= '0' && tc_peek(c) <= '9') {
		char *name;
		if (tc_int64(c, &num) || tc_text_string(c, a, &name) ||
		    grow(c, a, (void ***)&s->file_names, s->n_file_names, &cap))
			return -1;
		s->file_names[s->n_file_names++] = name;
	}
	cap = 0;
	if (section(c, "FunctionNames"))
		return -1;
	while (tc_peek(c) >= '0' && tc_peek(c) <= '9') {
		char *name;
		if (tc_int64(c, &num) || tc_text_string(c, a, &name) ||
		    grow(c, a, (void ***)&s->function_names, s->n_function_names, &cap))
			return -1;
		s->function_names[s->n_function_names++] = name;
	}
	cap = 0;
	if (section(c, "FileLocations"))
		return -1;
	static const char *const lnames[] = { "file_name_id", "function_name_id", "line", "end_line", "column",
					      "end_column" };
	while (tc_peek(c) >= '0' && tc_peek(c) <= '9') {
		int32_t v[6];
		Xla__StackFrameIndexProto__FileLocation *l = arena_alloc(a, sizeof *l);
		if (!l) {
			c->oom = 1;
			return tc_fail(c, "memory");
		}
		xla__stack_frame_index_proto__file_location__init(l);
		if (tc_int64(c, &num) || int_fields(c, lnames, v, 6) ||
		    grow(c, a, (void ***)&s->file_locations, s->n_file_locations, &cap))
			return -1;
		l->file_name_id = v[0];
		l->function_name_id = v[1];
		l->line = v[2];
		l->end_line = v[3];
		l->column = v[4];
		l->end_column = v[5];
		s->file_locations[s->n_file_locations++] = l;
	}
	cap = 0;
	if (section(c, "StackFrames"))
		return -1;
	static const char *const fnames[] = { "file_location_id", "parent_frame_id" };
	while (tc_peek(c) >= '0' && tc_peek(c) <= '9') {
		int32_t v[2];
		Xla__StackFrameIndexProto__StackFrame *f = arena_alloc(a, sizeof *f);
		if (!f) {
			c->oom = 1;
			return tc_fail(c, "memory");
		}
		xla__stack_frame_index_proto__stack_frame__init(f);
		if (tc_int64(c, &num) || int_fields(c, fnames, v, 2) ||
		    grow(c, a, (void ***)&s->stack_frames, s->n_stack_frames, &cap))
			return -1;
		f->file_location_id = v[0];
		if (v[1] == INT32_MIN)
			return tc_fail(c, "a parent_frame_id above the lowest 32-bit integer");
		f->parent_frame_id = v[1] - 1;
		s->stack_frames[s->n_stack_frames++] = f;
	}
	return 0;
}
