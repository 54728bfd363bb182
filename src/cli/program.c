/* Loading and checking a program, shared by run, check and fmt. */
#include "program.h"

int program_load(hloi_module **out, hloi_context *ctx, cli_io *io, const char *path,
		 const program_opts *opts, int check)
{
	*out = NULL;
	hloi_module *m = NULL;
	hloi_status st = hloi_module_load(&m, ctx, path, opts->format);
	if (st == HLOI_OK && check)
		st = hloi_module_check(m, ctx, &opts->check);
	cli_print_diagnostics(io, ctx);
	if (st != HLOI_OK) {
		hloi_module_free(m);
		return cli_exit_code(st);
	}
	*out = m;
	return EXIT_OK;
}
