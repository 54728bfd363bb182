/* Infeed and outfeed for `run`: --infeed FILE and --participant-infeed
 * P:FILE fill the queues, --outfeed FILE takes what the outfeeds write
 * (without it they print to standard output); with --random-inputs and no
 * infeed file, infeeds get random values. Transfers with the host (send
 * and recv with is_host_transfer=true) the same way by channel:
 * --host-recv CH:FILE fills channel CH's queue, --host-send CH:FILE takes
 * what channel CH's sends give. */
#ifndef HLOI_CLI_FEEDS_H
#define HLOI_CLI_FEEDS_H

#include "cli.h"
#include "opts.h"

/* One infeed file: the shared queue's (participant SIZE_MAX) or one
 * participant's own. */
typedef struct feed_file {
	size_t participant;
	const char *file;
} feed_file;

typedef struct feed_args {
	feed_file *infeed;   /* in the order given (array owned) */
	size_t ninfeed;
	const char *outfeed; /* --outfeed, or NULL */
	feed_file *host_recv; /* --host-recv CH:FILE (participant: the channel) */
	size_t nhost_recv;
	feed_file *host_send; /* --host-send CH:FILE (participant: the channel) */
	size_t nhost_send;
	const char *cmd;      /* the command its messages name (NULL: "run") */
} feed_args;

/* Takes `P:FILE` (participant P; P a decimal number) into *p and *file. */
int feed_participant_arg(const char *arg, size_t *p, const char **file);
/* Appends `arg` to *v (*n entries): FILE (per_participant 0, the shared
 * one) or P:FILE; `flag` names the option and `cmd` the command in a usage
 * error. Returns 0, or a usage error's exit code. */
int feed_file_add(feed_file **v, size_t *n, const char *arg, int per_participant, const char *flag,
		  const char *cmd, cli_io *io);
/* --infeed FILE (per_participant 0) or --participant-infeed P:FILE (1).
 * Returns 0, or a usage error's exit code. */
int feed_args_infeed(feed_args *a, const char *arg, int per_participant, cli_io *io);
/* --host-recv CH:FILE (send 0) or --host-send CH:FILE (1). Returns 0, or
 * a usage error's exit code. */
int feed_args_host(feed_args *a, const char *arg, int send, cli_io *io);
/* feed_args_infeed and feed_args_host as cli_opt handlers (CLI_CALL): the
 * option's code is per_participant or send, its offset that of the
 * command's feed_args. */
int feed_args_infeed_opt(cli_parser *p, const cli_opt *o, const char *arg);
int feed_args_host_opt(cli_parser *p, const cli_opt *o, const char *arg);
void feed_args_release(feed_args *a);

/* A list of values with the names of the instructions they came from. */
typedef struct feed_list {
	hloi_literal **v;
	const char **name; /* borrowed from the module */
	int64_t *channel;  /* a host send's channel, or -1 for an outfeed */
	size_t n, cap;
} feed_list;

/* The queues of a run and what its outfeeds wrote, by participant. */
typedef struct feeds {
	size_t np;
	feed_list shared;    /* --infeed's values */
	feed_list *own;      /* each participant's --participant-infeed values */
	uint8_t *has_own;
	int random;          /* random values when a participant has no file */
	uint64_t seed;
	hloi_literal **made; /* each participant's last random value (the
			      * library copies it before it asks again) */
	feed_list *out;      /* each participant's outfeed and host send values
			      * (copies), in the order they were given */
	feed_list *host;     /* the --host-recv values of channel host_channel[i] */
	int64_t *host_channel;
	size_t nhost;
	int host_random;     /* random values for a channel without a file */
} feeds;

/* Loads the infeed files for np participants (a participant number not
 * below np is an error). Prints diagnostics; returns an exit code. */
int feeds_load(feeds *f, const feed_args *a, size_t np, int random, uint64_t seed, hloi_context *ctx,
	       cli_io *io);
/* Points the run options at f: its infeed callback and its outfeed sink. */
void feeds_attach(feeds *f, hloi_run_options *run);
/* Takes the outfeed values of the runs so far (np lists; f collects anew),
 * or NULL when out of memory. Free with feed_lists_free. */
feed_list *feeds_take_outfeed(feeds *f);
void feed_lists_free(feed_list *l, size_t np);
/* Writes the outfeed values of `out` (np lists): to `a->outfeed` (several
 * participants: path.pN for participant N), else to standard output, each
 * under a header naming it (the participant too when np > 1; participant
 * p is replica p / partitions, partition p % partitions); and the host
 * sends' values the same way, to the --host-send file of their channel or
 * to standard output. Returns an exit code. */
int feeds_write(const feed_list *out, size_t np, const feed_args *a, size_t partitions, hloi_context *ctx,
		cli_io *io);
/* Whether feeds_write prints any of `out`'s values to standard output. */
int feeds_printed(const feed_list *out, size_t np, const feed_args *a);
/* --compare: the outfeed values of two runs, participant by participant
 * (`expected` the reference engine's). Returns EXIT_OK, EXIT_MISMATCH or a
 * failure's exit code. */
int feeds_compare(const feed_list *expected, const feed_list *actual, size_t np, size_t partitions,
		  hloi_context *ctx, cli_io *io);
void feeds_free(feeds *f);

#endif
