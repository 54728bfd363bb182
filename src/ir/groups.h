/* The participants of a collective: XLA's CollectiveOpGroupMode and the
 * replica groups expanded to explicit lists of ids (collective_ops_utils in
 * XLA), shared by the checker (verification) and the engines (who exchanges
 * with whom). A participant is named by its flattened id,
 * replica * num_partitions + partition. */
#ifndef HLOI_IR_GROUPS_H
#define HLOI_IR_GROUPS_H

#include <stddef.h>
#include <stdint.h>

#include "ir/ir.h"

/* XLA's CollectiveOpGroupMode. */
typedef enum group_mode {
	GM_REPLICA,                /* no channel_id: groups of replica ids */
	GM_PARTITION,              /* channel_id, no use_global_device_ids: partition ids */
	GM_REPLICA_AND_PARTITION,  /* use_global_device_ids=false: replica ids, all partitions */
	GM_FLATTENED               /* use_global_device_ids=true: flattened ids */
} group_mode;

/* The mode of a collective (all-to-all, ragged-all-to-all,
 * collective-permute and collective-broadcast do not read
 * use_global_device_ids, as in XLA). */
group_mode collective_group_mode(const instr *in);
/* `kCrossReplica`, ... as XLA prints the mode. */
const char *group_mode_name(group_mode m);

/* Replica groups as explicit lists: group g holds ids[start[g] ..
 * start[g+1]). Owned by the caller (groups_free). */
typedef struct id_groups {
	int64_t ngroups;
	int64_t *start;  /* ngroups + 1 entries */
	int64_t *ids;
} id_groups;

/* Expands `rg` (NULL or no groups: ngroups = 0): explicit lists as
 * written, the iota form, and XLA's MeshAxesReplicaGroupList
 * (`mesh[...] {axes}` over whole axes and sub-axes 'a':(pre)size, a mesh
 * of explicit `device_ids=(...)` or of an iota `device_ids=([r]T(p))`,
 * `maximal_mesh[device_id=d] {}`: the group {d}) as its
 * flattened_replica_groups. Returns 0; 1 for mesh groups XLA refuses,
 * with the reason in XLA's words in why (why_size bytes, NUL-terminated;
 * why may be NULL); -1 out of memory, or for an iota form whose sizes do
 * not agree or are too large. */
int groups_expand(const replica_groups *rg, id_groups *out, char *why, size_t why_size);
void groups_free(id_groups *g);

/* The flattened ids of the participants that `me` (a flattened id) meets at
 * collective `in` when the module runs as `replicas` x `partitions`, in the
 * order the group lists them (for GM_REPLICA_AND_PARTITION, each replica's
 * partitions in turn), written to members (room for replicas * partitions);
 * *rank is me's position. collective-permute's group is every replica of
 * me's partition (every partition of its replica with a channel_id): its
 * pairs name positions in it. Returns the count, 0 when `me` is in no
 * group, -1 out of memory or for a form groups_expand refuses. */
int64_t collective_members(const instr *in, int64_t replicas, int64_t partitions, int64_t me, int64_t *members,
			   int64_t *rank);

/* send and recv between participants (XLA's P2P configuration,
 * GetP2PConfigForSendRecv): the pairs of the frontend attribute
 * `_xla_send_recv_source_target_pairs="{{s,t},...}"` name replica ids
 * without a channel_id or with channel_id=0, else partition ids;
 * `_xla_send_recv_validation` is "invalid" (nothing moves) or one
 * `{lo,hi}` per pair: the pair moves data only at the instruction's
 * executions lo..hi (from 0). */
typedef struct p2p_pairs {
	int64_t n;          /* pairs; 0 without the attribute */
	int64_t *src, *dst;
	int invalid;        /* validation "invalid" */
	int64_t *lo, *hi;   /* per pair; NULL without bounds */
} p2p_pairs;

#define P2P_PAIRS_ATTR "_xla_send_recv_source_target_pairs"
#define P2P_VALIDATION_ATTR "_xla_send_recv_validation"

/* Reads the pairs of send or recv `in`. Returns 0, 1 for a malformed value
 * (*why says which and what it expects), -1 out of memory. */
int p2p_pairs_read(const instr *in, p2p_pairs *out, const char **why);
void p2p_pairs_free(p2p_pairs *p);

/* The value of frontend attribute `key` of `in` (quotes removed) in *v,
 * *len; 0 when it is not there. */
int frontend_value(const instr *in, const char *key, const char **v, size_t *len);

#endif
