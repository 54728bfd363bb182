/* Several participants in one process: each runs the module on a thread of
 * its own with an engine of its own; collectives meet at a rendezvous keyed
 * by the instruction, how many times this participant has reached it, and
 * the first member of its group. Members publish their operands, wait for
 * the whole group, read one another's operands, and wait again until all
 * have read before any goes on (and may free what it published).
 *
 * A participant that ends (its run finished or failed) releases those that
 * wait for it with an error; when every participant still running waits,
 * none can arrive, and all are released with a deadlock error. The stop
 * flag of the run is read while waiting. */
#ifndef HLOI_EVAL_SPMD_H
#define HLOI_EVAL_SPMD_H

#include <stdint.h>

#include "eval/kernels/kernel.h"

typedef struct spmd spmd;

typedef struct spmd_member {
	spmd *s;
	int64_t id;                 /* flattened: replica * partitions + partition */
	int64_t replica, partition;
	int released;               /* failed because another participant did */
	int distributed;            /* the others may run on other MPI ranks (mpi.h) */
	const instr **seen;         /* collectives reached so far ... */
	uint64_t *count;            /* ... and how many times */
	int nseen, cap;
} spmd_member;

/* A rendezvous under way (spmd_arrive to spmd_depart). */
typedef struct spmd_meet spmd_meet;

/* Publishes `vals` (this member's operands) for collective `in` of the
 * group `members` (n flattened ids, this one at `rank`) and waits for the
 * whole group. *all then holds every member's operands, by rank, until
 * spmd_depart. Errors (with a message in e->ctx): another participant
 * ended or failed, a deadlock, the run was stopped, out of memory. */
hloi_status spmd_arrive(engine *e, const instr *in, const int64_t *members, int64_t n, int64_t rank,
			hloi_literal *const *vals, hloi_literal *const *const **all, spmd_meet **meet);
/* This member's occurrence count of collective `in` (from 0), counted up:
 * for a collective that does not meet through spmd_arrive (distributed
 * all-reduce, collectives.c). -1 out of memory. */
int spmd_next_occurrence(engine *e, const instr *in, uint64_t *occ);
/* The run's stop flag (or NULL). */
const volatile int *spmd_stop(engine *e);
/* Waits until every member has read, then leaves the rendezvous. */
void spmd_depart(engine *e, spmd_meet *meet);

/* Point to point (send, recv): the seq-th message (from 0) on channel
 * `channel` from participant `from` to participant `to` (flattened ids). */
typedef struct p2p_key {
	int64_t channel, from, to;
	uint64_t seq;
} p2p_key;

/* A message sent and not yet received: a copy of the send's operand,
 * owned by the list it is on. */
typedef struct p2p_msg {
	struct p2p_msg *next;
	p2p_key key;
	const instr *send;
	hloi_literal *val;
} p2p_msg;

/* Puts a message on *list (val becomes the list's). -1 out of memory (val
 * freed). */
int p2p_msg_push(p2p_msg **list, const p2p_key *k, const instr *send, hloi_literal *val);
/* Takes the message of key k off *list; NULL when it is not there. */
p2p_msg *p2p_msg_take(p2p_msg **list, const p2p_key *k);
/* Frees a message, or a whole list. */
void p2p_msg_free(p2p_msg *m);
void p2p_msg_free_all(p2p_msg **list);

/* Leaves a message for participant k->to (val becomes the run's); never
 * waits. */
hloi_status spmd_post(engine *e, const p2p_key *k, const instr *send, hloi_literal *val);
/* Takes the message of key k for recv-done `in` (of `recv`), waiting for it
 * (*msg: p2p_msg_free). Errors (with a message in e->ctx naming both
 * participants): the sender ended or failed without sending it, a
 * deadlock, another participant failed, the run was stopped. */
hloi_status spmd_take(engine *e, const instr *in, const instr *recv, const p2p_key *k, p2p_msg **msg);

/* The driver's run of one participant: eval_module with `member` set in
 * the engine (eval/run.c). */
typedef hloi_status (*spmd_member_fn)(module *m, hloi_context *ctx, hloi_literal *const *inputs, size_t ninputs,
				      const hloi_run_options *opts, spmd_member *member, hloi_literal **out);

/* Runs the checked module as m->replicas x m->partitions participants, each
 * on a thread of its own through `run` (eval_module_participants, eval.h). */
hloi_status spmd_run(module *m, hloi_context *ctx, hloi_literal *const *inputs, size_t ninputs,
		     const hloi_run_options *opts, spmd_member_fn run, hloi_literal **out);

/* Frees the state of send and recv (sendrecv.c). */
void eval_p2p_free(engine *e);

#endif
