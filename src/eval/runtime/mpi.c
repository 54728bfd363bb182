/* Participants as MPI ranks (mpi.h): Open MPI opened with dlopen, the few
 * functions looked up once, and the messages between the ranks.
 *
 * Open MPI's handles (MPI_COMM_WORLD, MPI_BYTE) are the addresses of
 * exported globals (ompi_mpi_comm_world, ompi_mpi_byte), so they are looked
 * up as the functions are; MPICH's are integer constants of its own header,
 * an ABI hloi does not speak: an MPICH job is refused with a message.
 *
 * Every wait polls (MPI_Test, MPI_Iprobe) so that it can end: when the run
 * is stopped (--timeout, a signal), and when the rank it waits for has
 * ended its run (that rank's END message arrived) without sending what is
 * waited for. A rank whose run fails ends the whole job (mpi_abort).
 *
 * Messages (tags): END, one per rank and run, says a rank's participants
 * have finished a run (the next run starts when every other rank's END of
 * the last has arrived, so one tag serves every run); COLL carries a
 * collective's operands, a header of words (a check of the instruction,
 * its occurrence, each buffer's size and dynamic sizes) then the buffers;
 * P2P a send's value, its header describing it; GATHER a result for rank
 * 0. Between two ranks, messages of one tag arrive in the order sent (MPI's
 * non-overtaking rule), which is each rank's program order. */
#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "core/literal.h"
#include "eval/runtime/mpi.h"
#include "util/alloc.h"
#include "util/diag.h"

/* Tags: a participant's END; a collective's and a send's messages from
 * participant `src` to participant `dst` (of at most 256), so that the
 * participants sharing a rank, each on a thread, receive only their own
 * (Open MPI's tags go to 2^31 - 1 with its ob1 layer, 2^23 - 1 with UCX). */
enum { TAG_GATHER = 14, TAG_END = 1024, TAG_COLL = 2048, TAG_P2P = 2048 + 65536 };
#define TAG_PAIR(base, src, dst) ((int)(base) + (int)(src) * 256 + (int)(dst))
enum { MPI_THREAD_SERIALIZED_ = 2, MPI_THREAD_MULTIPLE_ = 3 };
#define CHUNK ((size_t)1 << 30) /* bytes per message: MPI counts are int */
#define MAGIC_COLL 0x686c6f69636f6c6cULL
#define MAGIC_P2P 0x686c6f6970327070ULL
#define MAGIC_GATHER 0x686c6f6967617468ULL
#define MAX_LEAVES 4096

typedef void *handle;   /* Open MPI: MPI_Comm, MPI_Datatype, MPI_Request are pointers */
typedef struct { int words[16]; } status; /* larger than Open MPI's MPI_Status */

static struct {
	int (*Init_thread)(int *, char ***, int, int *);
	int (*Finalize)(void);
	int (*Comm_rank)(handle, int *);
	int (*Comm_size)(handle, int *);
	int (*Abort)(handle, int);
	int (*Isend)(const void *, int, handle, int, int, handle, handle *);
	int (*Irecv)(void *, int, handle, int, int, handle, handle *);
	int (*Test)(handle *, int *, status *);
	int (*Iprobe)(int, int, handle, int *, status *);
	int (*Get_count)(const status *, handle, int *);
	handle comm, byte;
} fns;

static int active, my_rank, nranks = 1, threads_level;
static int64_t run_np;         /* the participants of the run under way, or the last */
static int ends_pending;       /* the last run's END messages still to be received */
static uint8_t *ended;         /* by participant: its END of this run seen (atomic) */
static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
static const int end_word = 1; /* what an END message holds */

/* Sends under way that nothing waits for: send's messages, END. */
typedef struct pending_send {
	struct pending_send *next;
	handle *reqs;
	int nreqs;
	uint64_t *header;
	hloi_literal *val;
} pending_send;
static pending_send *sends;
static p2p_msg *stash;        /* messages received before the recv-done that takes them */

int mpi_launched(void)
{
	const char *names[] = { "OMPI_COMM_WORLD_SIZE", "PMI_SIZE", "PMIX_SIZE" };
	for (size_t i = 0; i < sizeof names / sizeof *names; i++) {
		const char *v = getenv(names[i]);
		if (v && atoi(v) > 1)
			return 1;
	}
	return 0;
}

int mpi_active(void)
{
	return active;
}

int mpi_rank(void)
{
	return my_rank;
}

int mpi_size(void)
{
	return nranks;
}

int mpi_owner(int64_t p, int64_t np)
{
	int64_t per = np / nranks > 0 ? np / nranks : 1;
	return (int)(p / per);
}

hloi_status mpi_start(hloi_context *ctx)
{
	if (active)
		return HLOI_OK;
	/* Open MPI's components are plugins that need libmpi's symbols: global */
	void *h = dlopen("libmpi.so.40", RTLD_NOW | RTLD_GLOBAL);
	if (!h) {
		const char *why = dlerror();
		void *mpich = dlopen("libmpich.so.12", RTLD_NOW | RTLD_LOCAL);
		if (mpich) {
			dlclose(mpich);
			diag_error_where(ctx, NULL,
					 "hloi runs its participants over Open MPI (libmpi.so.40), which is not installed; MPICH is not supported (Debian: openmpi-bin)");
		} else {
			diag_error_where(ctx, NULL, "cannot open Open MPI (libmpi.so.40): %s (Debian: openmpi-bin)",
					 why ? why : "");
		}
		return HLOI_EUNSUPPORTED;
	}
	struct {
		const char *name;
		void *dst;
		size_t size;
	} table[] = {
#define E(f) { "MPI_" #f, &fns.f, sizeof fns.f }
		E(Init_thread), E(Finalize), E(Comm_rank), E(Comm_size), E(Abort),
		E(Isend), E(Irecv), E(Test), E(Iprobe), E(Get_count),
#undef E
	};
	for (size_t i = 0; i < sizeof table / sizeof *table; i++) {
		void *p = dlsym(h, table[i].name);
		if (!p) {
			diag_error_where(ctx, NULL, "libmpi.so.40 has no '%s'", table[i].name);
			return HLOI_EUNSUPPORTED;
		}
		/* POSIX's dlsym gives functions as void *: copied into each pointer */
		memcpy(table[i].dst, &p, table[i].size);
	}
	fns.comm = dlsym(h, "ompi_mpi_comm_world");
	fns.byte = dlsym(h, "ompi_mpi_byte");
	if (!fns.comm || !fns.byte) {
		diag_error_where(ctx, NULL,
				 "libmpi.so.40 is not Open MPI's (no ompi_mpi_comm_world): hloi speaks Open MPI's ABI only");
		return HLOI_EUNSUPPORTED;
	}
	/* the participants' threads call MPI: at once when a rank runs several */
	int provided = 0;
	if (fns.Init_thread(NULL, NULL, MPI_THREAD_MULTIPLE_, &provided) != 0) {
		diag_error_where(ctx, NULL, "MPI_Init_thread failed");
		return HLOI_EUNSUPPORTED;
	}
	if (provided < MPI_THREAD_SERIALIZED_) {
		diag_error_where(ctx, NULL, "this MPI gives threads level %d; hloi needs MPI_THREAD_SERIALIZED", provided);
		fns.Abort(fns.comm, 1);
		return HLOI_EUNSUPPORTED;
	}
	threads_level = provided;
	fns.Comm_rank(fns.comm, &my_rank);
	fns.Comm_size(fns.comm, &nranks);
	ended = hloi_calloc(HLOI_MAX_PARTICIPANTS, 1);
	if (!ended) {
		diag_error_where(ctx, NULL, "out of memory starting MPI");
		fns.Abort(fns.comm, 1);
		return HLOI_ENOMEM;
	}
	active = 1;
	return HLOI_OK;
}

void mpi_abort(int code)
{
	if (!active)
		return;
	fflush(stdout);
	fflush(stderr);
	fns.Abort(fns.comm, code ? code : 1);
	_Exit(code ? code : 1);
}

/* A short pause in a long wait: the other ranks share the cores. */
static void nap(unsigned spins)
{
	if (spins < 4096)
		return;
	struct timespec ts = { 0, spins < 65536 ? 20000 : 200000 };
	nanosleep(&ts, NULL);
}

/* Whether participant p has ended its run (its END arrived). */
static int participant_ended(int64_t p)
{
	if (p < 0 || p >= run_np)
		return 0;
	if (!__atomic_load_n(&ended[p], __ATOMIC_RELAXED)) {
		int flag = 0;
		status s;
		fns.Iprobe(mpi_owner(p, run_np), TAG_END + (int)p, fns.comm, &flag, &s);
		if (flag)
			__atomic_store_n(&ended[p], 1, __ATOMIC_RELAXED);
	}
	return __atomic_load_n(&ended[p], __ATOMIC_RELAXED);
}

enum { W_DONE, W_ENDED, W_STOPPED };

/* Waits for the requests; `peer` (or -1) is the participant whose END ends
 * the wait. */
static int wait_all(handle *reqs, int n, int64_t peer, const volatile int *stop)
{
	status s;
	int left = n;
	for (unsigned spins = 0;; spins++) {
		left = 0;
		for (int i = 0; i < n; i++) {
			if (!reqs[i])
				continue;
			int flag = 0;
			fns.Test(&reqs[i], &flag, &s);
			if (flag)
				reqs[i] = NULL;
			else
				left++;
		}
		if (!left)
			return W_DONE;
		if ((spins & 63) == 63 && peer >= 0 && participant_ended(peer)) {
			/* what the peer sent before its END has been matched by now */
			for (int i = 0; i < n; i++) {
				int flag = 0;
				if (reqs[i] && (fns.Test(&reqs[i], &flag, &s), flag))
					reqs[i] = NULL;
			}
			for (int i = 0; i < n; i++)
				if (reqs[i])
					return W_ENDED;
			return W_DONE;
		}
		if (stop && __atomic_load_n(stop, __ATOMIC_RELAXED))
			return W_STOPPED;
		nap(spins);
	}
}

/* Waits until a message of `tag` from rank `peer` can be received; its size
 * in bytes in *count. The END of participant `watch` (or -1) ends the wait. */
static int probe_for(int peer, int tag, int64_t watch, int *count, const volatile int *stop)
{
	status s;
	for (unsigned spins = 0;; spins++) {
		int flag = 0;
		fns.Iprobe(peer, tag, fns.comm, &flag, &s);
		if (flag) {
			fns.Get_count(&s, fns.byte, count);
			return W_DONE;
		}
		if ((spins & 63) == 63 && watch >= 0 && participant_ended(watch)) {
			fns.Iprobe(peer, tag, fns.comm, &flag, &s);
			if (flag) {
				fns.Get_count(&s, fns.byte, count);
				return W_DONE;
			}
			return W_ENDED;
		}
		if (stop && __atomic_load_n(stop, __ATOMIC_RELAXED))
			return W_STOPPED;
		nap(spins);
	}
}

/* The array literals of lit, depth first, into out (at most max). */
static int leaves_of(hloi_literal *lit, hloi_literal **out, int n, int max)
{
	if (!shape_is_tuple(&lit->shape)) {
		if (n < max)
			out[n] = lit;
		return n + 1;
	}
	for (size_t i = 0; i < lit->nelems; i++)
		n = leaves_of(lit->elems[i], out, n, max);
	return n;
}

/* Requests to send or receive a buffer, in chunks: how many it takes. */
static int chunks_of(size_t nbytes)
{
	return nbytes ? (int)((nbytes + CHUNK - 1) / CHUNK) : 0;
}

static void post_buffer(void *data, size_t nbytes, int peer, int tag, int recv, handle *reqs)
{
	for (size_t off = 0, i = 0; off < nbytes; off += CHUNK, i++) {
		size_t len = nbytes - off < CHUNK ? nbytes - off : CHUNK;
		if (recv)
			fns.Irecv((char *)data + off, (int)len, fns.byte, peer, tag, fns.comm, &reqs[i]);
		else
			fns.Isend((char *)data + off, (int)len, fns.byte, peer, tag, fns.comm, &reqs[i]);
	}
}

static uint64_t name_hash(const char *s)
{
	uint64_t h = 1469598103934665603ULL;
	for (; *s; s++)
		h = (h ^ (uint8_t)*s) * 1099511628211ULL;
	return h;
}

/* The header of a literal's buffers: magic, two words of the caller's,
 * the leaf count, then each leaf's bytes and dynamic sizes. */
static size_t header_words(int nleaves)
{
	return 4 + (size_t)nleaves * (1 + HLOI_MAX_RANK);
}

static void header_fill(uint64_t *w, uint64_t magic, uint64_t a, uint64_t b, hloi_literal *const *leaves, int n)
{
	w[0] = magic;
	w[1] = a;
	w[2] = b;
	w[3] = (uint64_t)n;
	for (int i = 0; i < n; i++) {
		uint64_t *l = w + 4 + (size_t)i * (1 + HLOI_MAX_RANK);
		l[0] = leaves[i]->nbytes;
		for (int d = 0; d < HLOI_MAX_RANK; d++)
			l[1 + d] = (uint64_t)leaves[i]->dynamic_size[d];
	}
}

/* "rank 1 (replica 1, partition 0)" of participant p. */
static void rank_name(char *buf, size_t size, const engine *e, int64_t p)
{
	int64_t parts = e->m->partitions;
	snprintf(buf, size, "rank %d (replica %lld, partition %lld)", mpi_owner(p, e->m->replicas * parts),
		 (long long)(p / parts), (long long)(p % parts));
}

static hloi_status wait_error(engine *e, const instr *in, int w, const char *who)
{
	if (w == W_STOPPED) {
		diag_error_where(e->ctx, NULL, "the run was stopped at '%s' (%s), waiting for %s", in->name,
				 opcode_name(in->op), who);
		return HLOI_ESTOPPED;
	}
	diag_error_where(e->ctx, NULL, "'%s' (%s): %s ended without reaching it", in->name, opcode_name(in->op), who);
	return HLOI_EINVAL;
}

hloi_status mpi_exchange(engine *e, const instr *in, uint64_t occ, const int64_t *members, int64_t n, int64_t rank,
			 hloi_literal *const *vals, int nvals, hloi_literal **got, const volatile int *stop)
{
	int64_t np = e->m->replicas * e->m->partitions;
	hloi_literal *mine[MAX_LEAVES], *theirs[MAX_LEAVES];
	int nl = 0;
	for (int k = 0; k < nvals; k++)
		nl = leaves_of(vals[k], mine, nl, MAX_LEAVES);
	if (nl > MAX_LEAVES) {
		diag_error_where(e->ctx, NULL, "'%s' (%s): more than %d arrays in its operands", in->name,
				 opcode_name(in->op), MAX_LEAVES);
		return HLOI_EUNSUPPORTED;
	}
	size_t hw = header_words(nl);
	int per = 1;
	for (int i = 0; i < nl; i++)
		per += chunks_of(mine[i]->nbytes);
	uint64_t *head = hloi_malloc(2 * hw * sizeof *head);
	handle *sreq = hloi_calloc((size_t)(n * per + 1), sizeof *sreq);
	handle *rreq = hloi_calloc((size_t)per + 1, sizeof *rreq);
	if (!head || !sreq || !rreq) {
		hloi_free(head);
		hloi_free(sreq);
		hloi_free(rreq);
		return value_oom(e, (int64_t)(2 * hw * sizeof *head));
	}
	uint64_t *want = head + hw;
	uint64_t check = name_hash(in->name);
	header_fill(head, MAGIC_COLL, check, occ, mine, nl);
	hloi_status st = HLOI_OK;
	char who[128];
	/* every other member gets this one's operands, first of all */
	for (int64_t j = 0; j < n; j++) {
		if (j == rank)
			continue;
		int peer = mpi_owner(members[j], np);
		handle *r = sreq + j * per;
		int tag = TAG_PAIR(TAG_COLL, members[rank], members[j]);
		fns.Isend(head, (int)(hw * sizeof *head), fns.byte, peer, tag, fns.comm, &r[0]);
		for (int i = 0, at = 1; i < nl; i++) {
			post_buffer(mine[i]->data, mine[i]->nbytes, peer, tag, 0, r + at);
			at += chunks_of(mine[i]->nbytes);
		}
	}
	/* then theirs, in group order */
	for (int k = 0; k < n * nvals; k++)
		got[k] = NULL;
	for (int64_t j = 0; j < n && st == HLOI_OK; j++) {
		if (j == rank)
			continue;
		int peer = mpi_owner(members[j], np);
		rank_name(who, sizeof who, e, members[j]);
		for (int k = 0; k < nvals && st == HLOI_OK; k++)
			st = value_new(e, &vals[k]->shape, &got[j * nvals + k]);
		if (st != HLOI_OK)
			break;
		int tl = 0;
		for (int k = 0; k < nvals; k++)
			tl = leaves_of(got[j * nvals + k], theirs, tl, MAX_LEAVES);
		int tag = TAG_PAIR(TAG_COLL, members[j], members[rank]);
		int count = 0, w = probe_for(peer, tag, members[j], &count, stop);
		if (w != W_DONE) {
			st = wait_error(e, in, w, who);
			break;
		}
		int same = (size_t)count == hw * sizeof *want && tl == nl;
		if (same) {
			fns.Irecv(want, count, fns.byte, peer, tag, fns.comm, &rreq[0]);
			if ((w = wait_all(rreq, 1, -1, stop)) != W_DONE) {
				st = wait_error(e, in, w, who);
				break;
			}
			same = want[0] == MAGIC_COLL && want[1] == check && want[2] == occ && want[3] == (uint64_t)nl;
			for (int i = 0; same && i < nl; i++)
				same = want[4 + (size_t)i * (1 + HLOI_MAX_RANK)] == theirs[i]->nbytes;
		}
		if (!same) {
			diag_error_where(e->ctx, NULL,
					 "'%s' (%s), occurrence %llu: %s reached another collective or occurrence (deadlock)",
					 in->name, opcode_name(in->op), (unsigned long long)occ + 1, who);
			st = HLOI_EINVAL;
			break;
		}
		for (int i = 0, at = 0; i < nl; i++) {
			const uint64_t *l = want + 4 + (size_t)i * (1 + HLOI_MAX_RANK);
			for (int d = 0; d < HLOI_MAX_RANK; d++)
				theirs[i]->dynamic_size[d] = (int64_t)l[1 + d];
			post_buffer(theirs[i]->data, theirs[i]->nbytes, peer, tag, 1, rreq + at);
			at += chunks_of(theirs[i]->nbytes);
		}
		if ((w = wait_all(rreq, per - 1, members[j], stop)) != W_DONE)
			st = wait_error(e, in, w, who);
	}
	if (st == HLOI_OK) {
		int w = wait_all(sreq, (int)(n * per), -1, stop);
		if (w != W_DONE)
			st = wait_error(e, in, w, "the other members");
	}
	if (st != HLOI_OK) {
		for (int k = 0; k < n * nvals; k++) {
			if (got[k])
				value_drop(e, got[k]);
			got[k] = NULL;
		}
		/* sends may still read this member's buffers: the job ends */
	}
	hloi_free(head);
	hloi_free(sreq);
	hloi_free(rreq);
	return st;
}

hloi_status mpi_alltoallv(engine *e, const instr *in, uint64_t occ, uint64_t phase, const int64_t *members, int64_t n,
			  int64_t rank, const void *const *send, const size_t *send_len, void *const *recv,
			  const size_t *recv_len, const volatile int *stop)
{
	int64_t np = e->m->replicas * e->m->partitions;
	int per = 1;
	for (int64_t j = 0; j < n; j++) {
		int c = 1 + chunks_of(send_len[j] > recv_len[j] ? send_len[j] : recv_len[j]);
		per = c > per ? c : per;
	}
	uint64_t *head = hloi_calloc((size_t)(4 * n + 4), sizeof *head);
	handle *sreq = hloi_calloc((size_t)(n * per + 1), sizeof *sreq);
	handle *rreq = hloi_calloc((size_t)per + 1, sizeof *rreq);
	if (!head || !sreq || !rreq) {
		hloi_free(head);
		hloi_free(sreq);
		hloi_free(rreq);
		return value_oom(e, (int64_t)(4 * n + 4) * 8);
	}
	uint64_t check = name_hash(in->name) ^ (phase * 0x9e3779b97f4a7c15ULL), want[4];
	hloi_status st = HLOI_OK;
	char who[128];
	for (int64_t j = 0; j < n; j++) {
		if (j == rank)
			continue;
		int peer = mpi_owner(members[j], np), tag = TAG_PAIR(TAG_COLL, members[rank], members[j]);
		uint64_t *h = head + 4 * j;
		h[0] = MAGIC_COLL;
		h[1] = check;
		h[2] = occ;
		h[3] = send_len[j];
		handle *r = sreq + j * per;
		fns.Isend(h, 4 * 8, fns.byte, peer, tag, fns.comm, &r[0]);
		post_buffer((void *)send[j], send_len[j], peer, tag, 0, r + 1);
	}
	for (int64_t j = 0; j < n && st == HLOI_OK; j++) {
		if (j == rank)
			continue;
		int peer = mpi_owner(members[j], np), tag = TAG_PAIR(TAG_COLL, members[j], members[rank]);
		rank_name(who, sizeof who, e, members[j]);
		int count = 0, w = probe_for(peer, tag, members[j], &count, stop);
		if (w != W_DONE) {
			st = wait_error(e, in, w, who);
			break;
		}
		int same = count == (int)sizeof want;
		if (same) {
			fns.Irecv(want, count, fns.byte, peer, tag, fns.comm, &rreq[0]);
			if ((w = wait_all(rreq, 1, -1, stop)) != W_DONE) {
				st = wait_error(e, in, w, who);
				break;
			}
			same = want[0] == MAGIC_COLL && want[1] == check && want[2] == occ && want[3] == recv_len[j];
		}
		if (!same) {
			diag_error_where(e->ctx, NULL,
					 "'%s' (%s), occurrence %llu: %s reached another collective or occurrence (deadlock)",
					 in->name, opcode_name(in->op), (unsigned long long)occ + 1, who);
			st = HLOI_EINVAL;
			break;
		}
		post_buffer(recv[j], recv_len[j], peer, tag, 1, rreq);
		if ((w = wait_all(rreq, chunks_of(recv_len[j]), members[j], stop)) != W_DONE)
			st = wait_error(e, in, w, who);
	}
	if (st == HLOI_OK) {
		int w = wait_all(sreq, (int)(n * per), -1, stop);
		if (w != W_DONE)
			st = wait_error(e, in, w, "the other members");
	}
	hloi_free(head);
	hloi_free(sreq);
	hloi_free(rreq);
	return st;
}

/* Forgets the sends that have completed. Under mu. */
static void reap_sends(int wait)
{
	for (pending_send **p = &sends; *p;) {
		pending_send *s = *p;
		status st;
		int left = 0;
		for (int i = 0; i < s->nreqs; i++) {
			int flag = 0;
			if (s->reqs[i] && (fns.Test(&s->reqs[i], &flag, &st), flag))
				s->reqs[i] = NULL;
			left += s->reqs[i] != NULL;
		}
		if (left && wait) {
			wait_all(s->reqs, s->nreqs, -1, NULL);
			left = 0;
		}
		if (left) {
			p = &s->next;
			continue;
		}
		*p = s->next;
		hloi_literal_free(s->val);
		hloi_free(s->header);
		hloi_free(s->reqs);
		hloi_free(s);
	}
}

/* The P2P header: magic, channel, from, to, seq, type, rank, dims, dynamic
 * sizes, bytes. */
enum { P2P_WORDS = 8 + 2 * HLOI_MAX_RANK };

hloi_status mpi_post(engine *e, const p2p_key *k, const instr *send, hloi_literal *val)
{
	(void)send;
	int64_t np = e->m->replicas * e->m->partitions;
	if (!shape_is_array(&val->shape)) {
		hloi_literal_free(val);
		diag_error_where(e->ctx, NULL, "'%s' (send): sending a tuple between ranks is not supported", send->name);
		return HLOI_EUNSUPPORTED;
	}
	if (!layout_is_default(&val->shape)) {
		hloi_literal *r = NULL;
		shape s = val->shape;
		layout_set_default(&s);
		hloi_status st = literal_relayout(&r, val, &s);
		hloi_literal_free(val);
		if (st != HLOI_OK)
			return value_oom(e, 0);
		val = r;
	}
	pending_send *ps = hloi_calloc(1, sizeof *ps);
	int nreq = 1 + chunks_of(val->nbytes);
	if (ps) {
		ps->header = hloi_calloc(P2P_WORDS, sizeof *ps->header);
		ps->reqs = hloi_calloc((size_t)nreq, sizeof *ps->reqs);
	}
	if (!ps || !ps->header || !ps->reqs) {
		if (ps) {
			hloi_free(ps->header);
			hloi_free(ps->reqs);
		}
		hloi_free(ps);
		hloi_literal_free(val);
		return value_oom(e, P2P_WORDS * 8);
	}
	uint64_t *h = ps->header;
	h[0] = MAGIC_P2P;
	h[1] = (uint64_t)k->channel;
	h[2] = (uint64_t)k->from;
	h[3] = (uint64_t)k->to;
	h[4] = k->seq;
	h[5] = (uint64_t)val->shape.type;
	h[6] = (uint64_t)val->shape.rank;
	for (int d = 0; d < HLOI_MAX_RANK; d++) {
		h[7 + d] = (uint64_t)(d < val->shape.rank ? val->shape.dims[d] : 0);
		h[7 + HLOI_MAX_RANK + d] = (uint64_t)val->dynamic_size[d];
	}
	h[7 + 2 * HLOI_MAX_RANK] = val->nbytes;
	ps->val = val;
	ps->nreqs = nreq;
	int peer = mpi_owner(k->to, np);
	pthread_mutex_lock(&mu);
	int tag = TAG_PAIR(TAG_P2P, k->from, k->to);
	fns.Isend(h, P2P_WORDS * 8, fns.byte, peer, tag, fns.comm, &ps->reqs[0]);
	post_buffer(val->data, val->nbytes, peer, tag, 0, ps->reqs + 1);
	ps->next = sends;
	sends = ps;
	reap_sends(0);
	pthread_mutex_unlock(&mu);
	return HLOI_OK;
}

hloi_status mpi_take(engine *e, const instr *in, const instr *recv, const p2p_key *k, p2p_msg **msg,
		     const volatile int *stop)
{
	int64_t np = e->m->replicas * e->m->partitions, parts = e->m->partitions;
	int peer = mpi_owner(k->from, np);
	char from[128];
	rank_name(from, sizeof from, e, k->from);
	int tag = TAG_PAIR(TAG_P2P, k->from, k->to);
	pthread_mutex_lock(&mu);
	*msg = p2p_msg_take(&stash, k);
	pthread_mutex_unlock(&mu);
	while (!*msg) {
		int count = 0, w = probe_for(peer, tag, k->from, &count, stop);
		if (w == W_STOPPED) {
			diag_error_where(e->ctx, NULL, "the run was stopped at '%s' (recv-done), waiting for %s", in->name,
					 from);
			return HLOI_ESTOPPED;
		}
		if (w == W_ENDED) {
			diag_error_where(e->ctx, NULL,
					 "'%s' (recv-done): %s ended without sending to replica %lld, partition %lld on channel %lld what '%s' (recv) waits for",
					 in->name, from, (long long)(k->to / parts), (long long)(k->to % parts),
					 (long long)k->channel, recv->name);
			return HLOI_EINVAL;
		}
		uint64_t h[P2P_WORDS];
		handle req = NULL;
		if (count != (int)sizeof h) {
			diag_error_where(e->ctx, NULL, "'%s' (recv-done): a message from %s is not a send's", in->name, from);
			return HLOI_EINVAL;
		}
		fns.Irecv(h, count, fns.byte, peer, tag, fns.comm, &req);
		wait_all(&req, 1, -1, NULL);
		shape s;
		int64_t dims[HLOI_MAX_RANK] = { 0 };
		int r = (int)h[6];
		if (h[0] != MAGIC_P2P || r < 0 || r > HLOI_MAX_RANK) {
			diag_error_where(e->ctx, NULL, "'%s' (recv-done): a message from %s is not a send's", in->name, from);
			return HLOI_EINVAL;
		}
		for (int d = 0; d < r; d++)
			dims[d] = (int64_t)h[7 + d];
		shape_make_array(&s, (etype)h[5], r, dims);
		hloi_literal *val = NULL;
		if (literal_create_uninit(&val, &s) != HLOI_OK)
			return value_oom(e, (int64_t)h[7 + 2 * HLOI_MAX_RANK]);
		if (val->nbytes != h[7 + 2 * HLOI_MAX_RANK]) {
			hloi_literal_free(val);
			diag_error_where(e->ctx, NULL, "'%s' (recv-done): a message from %s has the wrong size", in->name,
					 from);
			return HLOI_EINVAL;
		}
		for (int d = 0; d < HLOI_MAX_RANK; d++)
			val->dynamic_size[d] = (int64_t)h[7 + HLOI_MAX_RANK + d];
		int nreq = chunks_of(val->nbytes);
		handle reqs[64] = { 0 };
		if (nreq > 64) {
			hloi_literal_free(val);
			diag_error_where(e->ctx, NULL, "'%s' (recv-done): a message of more than 64 GiB", in->name);
			return HLOI_EUNSUPPORTED;
		}
		post_buffer(val->data, val->nbytes, peer, tag, 1, reqs);
		wait_all(reqs, nreq, -1, NULL);
		p2p_key got = { (int64_t)h[1], (int64_t)h[2], (int64_t)h[3], h[4] };
		/* the sender's name is not sent: recv-done's messages name the send by its recv */
		pthread_mutex_lock(&mu);
		int full = p2p_msg_push(&stash, &got, recv, val);
		*msg = full ? NULL : p2p_msg_take(&stash, k);
		pthread_mutex_unlock(&mu);
		if (full)
			return value_oom(e, (int64_t)sizeof(p2p_msg));
	}
	return HLOI_OK;
}

/* Sends lit to rank 0 for participant p. */
static int gather_send(hloi_literal *lit, int64_t p, const volatile int *stop)
{
	hloi_literal *lv[MAX_LEAVES];
	int nl = leaves_of(lit, lv, 0, MAX_LEAVES);
	if (nl > MAX_LEAVES)
		return -1;
	size_t hw = header_words(nl);
	int nreq = 1;
	for (int i = 0; i < nl; i++)
		nreq += chunks_of(lv[i]->nbytes);
	uint64_t *h = hloi_malloc(hw * sizeof *h);
	handle *reqs = hloi_calloc((size_t)nreq, sizeof *reqs);
	if (!h || !reqs) {
		hloi_free(h);
		hloi_free(reqs);
		return -1;
	}
	header_fill(h, MAGIC_GATHER, (uint64_t)p, 0, lv, nl);
	fns.Isend(h, (int)(hw * sizeof *h), fns.byte, 0, TAG_GATHER, fns.comm, &reqs[0]);
	for (int i = 0, at = 1; i < nl; i++) {
		post_buffer(lv[i]->data, lv[i]->nbytes, 0, TAG_GATHER, 0, reqs + at);
		at += chunks_of(lv[i]->nbytes);
	}
	int w = wait_all(reqs, nreq, -1, stop);
	hloi_free(h);
	hloi_free(reqs);
	return w == W_DONE ? 0 : -1;
}

/* Receives participant p's result from its rank into dst (made of the
 * template's shape). */
static int gather_recv(hloi_literal *dst, int64_t p, int peer, const volatile int *stop)
{
	hloi_literal *lv[MAX_LEAVES];
	int nl = leaves_of(dst, lv, 0, MAX_LEAVES);
	if (nl > MAX_LEAVES)
		return -1;
	size_t hw = header_words(nl);
	int nreq = 0;
	for (int i = 0; i < nl; i++)
		nreq += chunks_of(lv[i]->nbytes);
	uint64_t *h = hloi_malloc(hw * sizeof *h);
	handle *reqs = hloi_calloc((size_t)nreq + 1, sizeof *reqs);
	int count = 0, rc = -1;
	if (!h || !reqs || probe_for(peer, TAG_GATHER, -1, &count, stop) != W_DONE || (size_t)count != hw * sizeof *h)
		goto out;
	fns.Irecv(h, count, fns.byte, peer, TAG_GATHER, fns.comm, &reqs[0]);
	if (wait_all(reqs, 1, -1, stop) != W_DONE || h[0] != MAGIC_GATHER || h[1] != (uint64_t)p)
		goto out;
	for (int i = 0; i < nl; i++) {
		const uint64_t *l = h + 4 + (size_t)i * (1 + HLOI_MAX_RANK);
		if (l[0] != lv[i]->nbytes)
			goto out;
		for (int d = 0; d < HLOI_MAX_RANK; d++)
			lv[i]->dynamic_size[d] = (int64_t)l[1 + d];
	}
	for (int i = 0, at = 0; i < nl; i++) {
		post_buffer(lv[i]->data, lv[i]->nbytes, peer, TAG_GATHER, 1, reqs + at);
		at += chunks_of(lv[i]->nbytes);
	}
	rc = wait_all(reqs, nreq, -1, stop) == W_DONE ? 0 : -1;
out:
	hloi_free(h);
	hloi_free(reqs);
	return rc;
}

hloi_status mpi_gather(hloi_context *ctx, hloi_literal **out, int64_t np, const volatile int *stop)
{
	if (!active)
		return HLOI_OK;
	for (int64_t p = 0; p < np; p++) {
		int owner = mpi_owner(p, np);
		if (owner == 0 && my_rank == 0)
			continue;
		if (owner == my_rank) {
			if (gather_send(out[p], p, stop)) {
				diag_error_where(ctx, NULL, "cannot send participant %lld's result to rank 0", (long long)p);
				return HLOI_EINVAL;
			}
		} else if (my_rank == 0) {
			if (!out[0] || literal_create_uninit(&out[p], &out[0]->shape) != HLOI_OK ||
			    gather_recv(out[p], p, owner, stop)) {
				diag_error_where(ctx, NULL, "cannot receive participant %lld's result from rank %d",
						 (long long)p, owner);
				return HLOI_EINVAL;
			}
		}
	}
	return HLOI_OK;
}

/* Every participant's END of the last run, received: all have finished
 * it. */
static hloi_status collect_ends(hloi_context *ctx, const volatile int *stop)
{
	if (!ends_pending)
		return HLOI_OK;
	static int sink[1];
	for (int64_t p = 0; p < run_np; p++) {
		handle req = NULL;
		fns.Irecv(sink, (int)sizeof sink, fns.byte, mpi_owner(p, run_np), TAG_END + (int)p, fns.comm, &req);
		if (wait_all(&req, 1, -1, stop) != W_DONE) {
			diag_error_where(ctx, NULL, "stopped waiting for participant %lld to finish its run", (long long)p);
			return HLOI_ESTOPPED;
		}
	}
	memset(ended, 0, HLOI_MAX_PARTICIPANTS);
	ends_pending = 0;
	return HLOI_OK;
}

hloi_status mpi_run_wait(hloi_context *ctx, const volatile int *stop)
{
	return collect_ends(ctx, stop);
}

hloi_status mpi_run_begin(hloi_context *ctx, int64_t np, const volatile int *stop)
{
	hloi_status st = collect_ends(ctx, stop);
	if (st != HLOI_OK)
		return st;
	if (np / nranks > 1 && threads_level < MPI_THREAD_MULTIPLE_) {
		diag_error_where(ctx, NULL,
				 "this MPI runs one thread at a time (level %d): run as many ranks as participants (%lld)",
				 threads_level, (long long)np);
		return HLOI_EUNSUPPORTED;
	}
	run_np = np;
	ends_pending = 1;
	return HLOI_OK;
}

void mpi_participant_end(int64_t p)
{
	pthread_mutex_lock(&mu);
	for (int r = 0; r < nranks; r++) {
		pending_send *ps = hloi_calloc(1, sizeof *ps);
		if (ps)
			ps->reqs = hloi_calloc(1, sizeof *ps->reqs);
		if (!ps || !ps->reqs) {
			/* no END: the others cannot tell this participant is done */
			pthread_mutex_unlock(&mu);
			mpi_abort(1);
		}
		ps->nreqs = 1;
		fns.Isend(&end_word, (int)sizeof end_word, fns.byte, r, TAG_END + (int)p, fns.comm, &ps->reqs[0]);
		ps->next = sends;
		sends = ps;
	}
	pthread_mutex_unlock(&mu);
}

hloi_status mpi_finish(hloi_context *ctx, const volatile int *stop)
{
	if (!active)
		return HLOI_OK;
	hloi_status st = collect_ends(ctx, stop);
	if (st != HLOI_OK)
		return st;
	pthread_mutex_lock(&mu);
	reap_sends(1);
	pthread_mutex_unlock(&mu);
	p2p_msg_free_all(&stash);
	fns.Finalize();
	hloi_free(ended);
	ended = NULL;
	active = 0;
	return HLOI_OK;
}
