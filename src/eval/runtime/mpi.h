/* Participants as the ranks of an MPI job (doc/mpi.md): the transport under
 * the rendezvous of spmd.c when the run is distributed. Open MPI is opened
 * on demand with dlopen (libmpi.so.40), as OpenBLAS is (eval/lib/blas.c):
 * a build or a run without MPI never loads it.
 *
 * Each rank runs its own participants; a collective's members exchange
 * their operands' bytes over MPI (every member sends its operands to every
 * other member of its group), and each then computes its result with the
 * same kernels, in the same group order, as the thread runtime does: the
 * results are bit for bit the thread runtime's. Send and recv move their
 * value as bytes from the sending rank to the receiving one. */
#ifndef HLOI_EVAL_MPI_H
#define HLOI_EVAL_MPI_H

#include <stddef.h>
#include <stdint.h>

#include "eval/runtime/spmd.h"

/* Whether the environment says this process is one of several ranks of an
 * MPI job (Open MPI's OMPI_COMM_WORLD_SIZE, PMI's PMI_SIZE above 1). */
int mpi_launched(void);
/* Opens Open MPI and initialises it (once): HLOI_OK, or an error with a
 * message in ctx. */
hloi_status mpi_start(hloi_context *ctx);
/* Whether mpi_start succeeded: runs are distributed. */
int mpi_active(void);
/* This rank and the number of ranks (0 and 1 when not active). */
int mpi_rank(void);
int mpi_size(void);
/* The rank that runs participant p of np (np a multiple of the ranks):
 * each rank runs np / ranks of them, in order. */
int mpi_owner(int64_t p, int64_t np);
/* Ends every rank of the job with `code` (MPI_Abort). */
void mpi_abort(int code);
/* Before a distributed run of np participants: every participant's END of
 * the last run received (all have finished it). When participant p of
 * this rank has ended its run successfully: its END sent to every rank
 * (a failure ends the job instead). */
hloi_status mpi_run_begin(hloi_context *ctx, int64_t np, const volatile int *stop);
void mpi_participant_end(int64_t p);
/* After a run: every participant's END received (mpi_run_begin of the next
 * run then has none to wait for). */
hloi_status mpi_run_wait(hloi_context *ctx, const volatile int *stop);
/* At the end of a successful run: tells every other rank this one is done,
 * waits for theirs, finalizes. */
hloi_status mpi_finish(hloi_context *ctx, const volatile int *stop);

/* Collective `in` (its occurrence `occ`, from 0) of the group `members` (n
 * flattened ids, this participant at `rank`): sends this member's nvals
 * operands `vals` to every other member and receives theirs into got[j *
 * nvals + k] (values of this member's operand shapes, value_drop; NULL at
 * `rank`). Errors: a member's rank ended without reaching it, the members
 * reached different collectives, the run was stopped. */
hloi_status mpi_exchange(engine *e, const instr *in, uint64_t occ, const int64_t *members, int64_t n, int64_t rank,
			 hloi_literal *const *vals, int nvals, hloi_literal **got, const volatile int *stop);

/* The same exchange of raw bytes, different for each member: send[j]
 * (send_len[j] bytes) goes to member j and recv[j] takes recv_len[j] bytes
 * from it (j != rank); `phase` tells apart the exchanges of one
 * occurrence. */
hloi_status mpi_alltoallv(engine *e, const instr *in, uint64_t occ, uint64_t phase, const int64_t *members, int64_t n,
			  int64_t rank, const void *const *send, const size_t *send_len, void *const *recv,
			  const size_t *recv_len, const volatile int *stop);

/* send: the message for participant k->to on its rank; never waits. */
hloi_status mpi_post(engine *e, const p2p_key *k, const instr *send, hloi_literal *val);
/* recv-done: the message of key k from k->from's rank, waiting for it. */
hloi_status mpi_take(engine *e, const instr *in, const instr *recv, const p2p_key *k, p2p_msg **msg,
		     const volatile int *stop);

/* After a run: every participant's result on rank 0 (out[p] made there for
 * the participants of other ranks, of out[0]'s shape); the other ranks send
 * theirs and keep them. */
hloi_status mpi_gather(hloi_context *ctx, hloi_literal **out, int64_t np, const volatile int *stop);

#endif
