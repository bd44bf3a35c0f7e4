/*
 * table_internal.h — the table object shared by the table modules:
 * table.c (creation, placement, local operations), table_buffer.c (write
 * buffers of each thread), table_remote.c (operations on other ranks) and
 * table_iter.c (iterators).  Private.
 */
#ifndef TESS_SRC_TABLE_INTERNAL_H
#define TESS_SRC_TABLE_INTERNAL_H

#include <pthread.h>
#include "accum.h"
#include "comm/comm.h"
#include "partition.h"

/* Message types of the table layer (see the block list in comm/comm.h).
 * The numbers of writes (UPDATES, PUT, REMOVE, CLEAR_REQ) are stored in
 * checkpoint replay logs: never renumber them. */
enum tess__table_msg_type {
    TESS_MSG_UPDATES = 7, /* a batch of combined table updates */
    TESS_MSG_PUT = 8,
    TESS_MSG_REMOVE = 9,
    TESS_MSG_GET_REQ = 10,      /* get or contains */
    TESS_MSG_SNAPSHOT_REQ = 11, /* a chunk of a partition (iterators) */
    TESS_MSG_CLEAR_REQ = 12,
    TESS_MSG_SIZE_REQ = 13,
    TESS_MSG_SYNC_REQ = 16, /* answered once everything sent before it is applied */
    /* partition migration (migrate.c) */
    TESS_MSG_MIG_BEGIN = 67,    /* old owner -> new owner: a partition group will move */
    TESS_MSG_MIG_ANNOUNCE = 68, /* new owner -> other ranks: route writes to me from now */
    TESS_MSG_MIG_MARKER = 69,   /* any rank -> old owner: my last write for it was sent */
    TESS_MSG_MIG_DATA = 70,     /* old owner -> new owner: the partitions and the task */
    TESS_MSG_MIG_FWD = 71,      /* a table message passed on to the partition's owner */
    /* read-only replicas of dense tables (table_replica.c) */
    TESS_MSG_REPLICA_REQ = 73,    /* rank 0 -> all: send your partitions' values to every rank */
    TESS_MSG_REPLICA_DATA = 74,   /* owner or writer -> all: values of a key range */
    TESS_MSG_REPLICA_SWITCH = 75, /* rank 0 -> all, after a barrier: staged ranges become visible */
    TESS_MSG_REPLICA_SHARED = 76, /* writer -> its node: a key range is in my shared segment */
    /* tables made and dropped at run time (table_runtime.c) */
    TESS_MSG_TABLE_CREATE = 77, /* rank 0 -> all: create this table (request) */
    TESS_MSG_TABLE_DROP = 78    /* rank 0 -> all: drop this table (request) */
};

/* Header of every table message (after a tess__req_hdr for requests). */
typedef struct tess__table_hdr {
    uint32_t table;
    uint32_t arg; /* value length, partition, or "value wanted" */
    uint64_t n;   /* entries of an update batch */
} tess__table_hdr;

typedef struct tess__replica tess__replica;

struct tess_table {
    tess_ctx *ctx;
    int index; /* creation order, the id used in messages */
    char *name;
    size_t key_size, value_size;
    int nparts;
    int dense;
    uint64_t key_count;
    uint64_t *bounds; /* dense: nparts+1 */
    int even_bounds;  /* dense: bounds split key_count evenly (no range_bounds given) */
    int *bucket_part; /* dense: partition of key b << bucket_shift */
    unsigned bucket_shift;
    tess_partitioner_fn partitioner;
    tess__accum acc;
    int *owner;                         /* rank of each partition; changes only under the
                                  placement write lock (migrate.c), read with tess__owner */
    tess__partition **parts;            /* NULL where the partition lives elsewhere (or has not
                                  arrived yet); read under locks[p] or tess__part_here */
    pthread_mutex_t *locks;             /* one per local partition */
    int all_local;                      /* every partition is stored on this rank (at creation) */
    int group;                          /* index of the table whose placement this one follows
                                  (group_with, transitively; itself if none) */
    _Atomic unsigned placement_version; /* bumped whenever a partition changes owner */
    int is_static;                      /* checkpointed once per job (tess_table_set_static) */
    int replicated;                     /* spec.replicated: put_range also stages into replicas */
    tess__replica *replica;             /* table_replica.c; NULL until needed */
    int at_run_time;                    /* created after tess_main started (table_runtime.c) */
    int dropped;                        /* tess_table_drop: emptied, refused by every operation */
    uint64_t flush_ns;        /* timeout flush of buffered writes (table_buffer.c); 0: none */
    _Atomic uint64_t changes; /* values this rank's updates changed since tess_table_changes
                                 (MIN and MAX tables; acc.changes points here) */
};

/* An internal status: the partition left this rank (or has not arrived) while
 * the caller looked; route the operation to its owner instead. */
#define TESS__MOVED (-1000)

static inline int tess__owner(const tess_table *t, int p)
{
    return __atomic_load_n(&t->owner[p], __ATOMIC_ACQUIRE);
}

/* Non-NULL if partition p is installed here (a hint unless locks[p] is held). */
static inline tess__partition *tess__part_here(const tess_table *t, int p)
{
    return __atomic_load_n(&t->parts[p], __ATOMIC_ACQUIRE);
}

/* Routing of writes to the current owner (table_route.c). */
void tess__place_rdlock(tess_ctx *ctx);
void tess__place_unlock(tess_ctx *ctx);
/* n fixed-size updates, each to the current owner of its partition. */
int tess__route_updates(tess_table *t, const uint8_t *keys, const uint8_t *vals, size_t n);
int tess__route_put(tess_table *t, int p, const void *key, const void *val, size_t len);
int tess__route_remove(tess_table *t, int p, const void *key);
/* A table message for this rank: 1 if migrate.c held or forwarded it. */
int tess__migrate_intercept(tess_ctx *ctx, int src, uint32_t type, const uint8_t *p, size_t len);

/* Per-thread combining arrays for dense tables (combine_array.c). */
typedef struct tess__private tess__private;
int tess__private_wanted(const tess_table *t);
tess__private *tess__private_new(const tess_table *t);
void tess__private_free(tess__private *d);
void tess__private_add(tess_table *t, tess__private *d, uint64_t key, int p, const void *val);
void tess__private_add_f64_sum(tess__private *d, const uint64_t *keys, const double *vals,
                               size_t n);
size_t tess__private_fanout_f64_sum(tess__private *d, const uint64_t *keys, size_t n, double v,
                                    uint64_t key_count);
void tess__private_mark_all(tess_table *t, tess__private *d);
int tess__private_merge(tess_table *t, tess__private *d, int p);
int tess__private_merge_all(tess_table *t, tess__private *d);

/* Replicas of dense tables (table_replica.c). */
int tess__replica_handlers_init(tess_ctx *ctx);
/* spec.replicated: the replica and its staging copy, at creation, and a
 * request for its image in the node-shared segment. */
int tess__replica_create(tess_table *t);
void tess__replica_free(tess__replica *r);
/* Rank 0 after a barrier: staged ranges become visible on every rank. */
int tess__replica_switch_everywhere(tess_ctx *ctx);
/* Rank 0: if the last of the `posted` messages to rank r is the latest
 * switch, the number of messages before it (*before) and 1; else 0. */
int tess__replica_switch_was_last(tess_ctx *ctx, int r, uint64_t posted, uint64_t *before);
/* Make switch number n here unless it was made (its message came first):
 * 1 if this rank has made n switches now, 0 if it is further behind. */
int tess__replica_switch_to(tess_ctx *ctx, uint64_t n);

/* ---- creating and dropping tables (table.c, table_runtime.c) ---- */
#define TESS__TABLES_MAX 4096 /* tables of a job, dropped ones included */
/* Create a table on this rank only (before tess_main on every rank, or as
 * a rank's part of a creation at run time). */
int tess__table_create_here(tess_ctx *ctx, const tess_table_spec *s, tess_table **table_out);
/* Rank 0's control function: create it on every rank, then return. */
int tess__table_create_at_run_time(tess_ctx *ctx, const tess_table_spec *s, tess_table **table_out);
void tess__table_free(tess_table *t);
/* 0, or TESS_ERR_MISUSE (the message set) when t was dropped. */
int tess__table_check_live(tess_table *t);
int tess__table_runtime_handlers_init(tess_ctx *ctx);

/* An empty partition p of t, as table creation makes them (migrate.c). */
tess__partition *tess__table_new_partition(tess_table *t, int p);

/* Keys in a partition stored here (0 for remote ones). */
uint64_t tess__table_local_size(tess_table *t, int p);
int tess__table_index(const tess_table *t);

/* Apply n fixed-size updates to local partitions, grouped so each partition
 * is locked once (keys n*key_size bytes, values n*value_size bytes). */
int tess__table_apply_local(tess_table *t, const uint8_t *keys, const uint8_t *vals, size_t n);
/* Single local operations under the partition lock. */
int tess__table_put_local(tess_table *t, int p, const void *key, const void *val, size_t len);
int tess__table_remove_local(tess_table *t, int p, const void *key);
/* Viewed value into out (cap bytes): 1 found, 0 absent, <0 error; *len_out set. */
int tess__table_get_local(tess_table *t, int p, const void *key, void *out, size_t cap,
                          size_t *len_out);
/* One chunk of local partition p for an iterator (tess__partition_chunk
 * from `from`, about `budget` bytes of records), malloc'd: a head of u64
 * next position and u64 more (0 after the last chunk), then the records,
 * each key and viewed value padded to 8 with a u64 length between.
 * TESS__MOVED when the partition is not here. */
#define TESS__CHUNK_HEAD 16
#define TESS__CHUNK_MAX (1L << 30) /* the largest TESS_ITER_CHUNK */
int tess__table_chunk_local(tess_table *t, int p, uint64_t from, size_t budget, uint8_t **buf_out,
                            size_t *len_out);

/* Per-thread buffers (table_buffer.c). */
int tess__buffer_update(tess_table *t, const void *key, const void *val);
int tess__buffer_flush_table(tess_table *t);
/* This thread sent a write to rank dst outside its buffers (a put or a
 * remove): its next tess_table_flush must prove that one landed too, with
 * a round trip to dst.  Without it a loader's puts could still be in flight
 * when a kernel on a third rank read their partition (nbody on 3 ranks:
 * 1 run in 10 read a partition short and gave other bits). */
int tess__buffer_note_sent(tess_table *t, int dst);
/* Fast path: route a batch, applying the local part grouped by partition. */
int tess__buffer_update_batch(tess_table *t, const void *keys, const void *vals, size_t n);
/* The same update into n keys. */
int tess__buffer_update_fanout(tess_table *t, const void *keys, size_t n, const void *val);
/* Flush what this thread buffered for partition p (before a get/put on it). */
int tess__buffer_flush_partition(tess_table *t, int p);
/* Send every buffer of the calling thread whose oldest write is past its
 * table's timeout (on entry to a table operation: a kernel polling a key
 * or waiting for a reply still lets its own writes out). */
int tess__buffer_flush_expired(tess_ctx *ctx);

/* Remote operations (table_remote.c). */
int tess__remote_send_updates(tess_table *t, int dst, const uint8_t *keys, const uint8_t *vals,
                              size_t n);
int tess__remote_put(tess_table *t, int dst, const void *key, const void *val, size_t len);
int tess__remote_remove(tess_table *t, int dst, const void *key);
int tess__remote_get(tess_table *t, int dst, const void *key, void *out, size_t cap,
                     size_t *len_out);
/* The same chunk from partition p's owner. */
int tess__remote_chunk(tess_table *t, int p, uint64_t from, size_t budget, uint8_t **buf_out,
                       size_t *len_out);
int tess__remote_clear(tess_table *t, int dst);
int tess__remote_size(tess_table *t, int dst, uint64_t *size_out);
/* dst's count of values changed (tess_table_changes), which dst restarts at 0. */
int tess__remote_take_changes(tess_table *t, int dst, uint64_t *changes_out);

/* ---- the table layer to the rest of the runtime ---- */
/* The table layer's rank-wide state (ctx->tabs, table.c), its own rather
 * than the context's: the replicas' switches and the layer's figures. */
typedef struct tess__table_rank {
    /* replica switches done on this rank (table_replica.c): where a replica
     * made later, by tess_table_replicate, starts counting its epochs */
    _Atomic uint64_t replica_switches;
    /* one switch at a time: a rank beside rank 0 may make one from rank 0's
     * board (sched/board.c) while its progress thread handles the message */
    pthread_mutex_t replica_switch_mu;
    /* rank 0: per rank, the messages posted to it before the latest switch */
    uint64_t *switch_posted_before;
    /* statistics (tess_stats) */
    _Atomic uint64_t updates_local, updates_remote;
    _Atomic uint64_t mig_in, mig_out;
    _Atomic uint64_t replica_shared; /* bytes: table_replica.c */
} tess__table_rank;
int tess__table_layer_create(tess_ctx *ctx);
void tess__table_layer_destroy(tess_ctx *ctx);
/* The table layer's fields of st (updates, migrations, replica bytes). */
void tess__table_stats(const tess_ctx *ctx, tess_stats *st);
/* Replica switches done on this rank so far. */
uint64_t tess__replica_switches(tess_ctx *ctx);

/* Register the handlers of table and migration messages (table_handlers.c). */
int tess__table_handlers_init(tess_ctx *ctx);
void tess__tables_free(tess_ctx *ctx);
void tess__slot_buffers_free(tess__slot *slot);
/* Free a slot's buffers of one table (dropped; nothing is buffered). */
void tess__slot_forget_table(tess__slot *slot, int index);
/* Flush every table buffer of a slot (end of a kernel instance, barrier). */
int tess__slot_flush_all(tess__slot *slot);
/* Fingerprint of registered names and table shapes: equal on every rank. */
uint64_t tess__setup_fingerprint(const tess_ctx *ctx);
int tess__table_index(const tess_table *t);
/* A table message for this rank: held or passed on while partitions move
 * (migrate.c), else handled by tess__table_on_message. */
void tess__table_deliver(tess_ctx *ctx, int src, uint32_t type, const uint8_t *p, size_t len);
/* A table message to apply here: through ctx->table_intercept when set. */
void tess__table_on_message(tess_ctx *ctx, int src, uint32_t type, const uint8_t *p, size_t len);
/* Apply a table message (what the intercept calls when it lets one pass). */
void tess__table_apply_message(tess_ctx *ctx, int src, uint32_t type, const uint8_t *p, size_t len);
/* Have fn see every table message before it is applied (NULL: none). */
void tess__table_set_intercept(tess_ctx *ctx, tess__msg_handler *fn);

/* Partition of a hash table's key were the table cut into nparts (its
 * partitioner, or the default hash); -1 if the partitioner answers out of
 * range. */
int tess__table_hash_partition(const tess_table *t, const void *key, int nparts);

/* ---- tables as checkpoint data (table_ckpt.c) ---- */
/* 1 for the messages that change a table: logged as channel state. */
int tess__table_msg_is_write(uint32_t type);
/* Encoded bytes of local partition p (malloc'd), taken under its lock. */
int tess__table_encode_partition(tess_table *t, int p, uint8_t **buf_out, size_t *len_out);
/* Put the entries of encoded bytes whose keys are stored on this rank. */
int tess__table_restore_encoded(tess_table *t, const uint8_t *buf, size_t len);
/* The same for partition p of a checkpoint written with nparts partitions,
 * refusing (TESS_ERR_FORMAT, the reason in err) a key that partition could
 * not have held: outside the table, or mapped to another partition by the
 * writer's partitioning (dense tables: checked where the writer's ranges
 * are known — the same partition count, or evenly split ranges). */
int tess__table_restore_partition(tess_table *t, int p, int nparts, const uint8_t *buf, size_t len,
                                  char *err, size_t errlen);
/* Apply, in order, the logged table messages whose keys are stored here.
 * The log is records of u32 type, u32 length, message bytes. */
int tess__table_replay_log(tess_ctx *ctx, const uint8_t *log, size_t len);
/* Empty every local partition of every table. */
void tess__tables_clear_local(tess_ctx *ctx);
/* What a checkpoint must match: names, shapes and accumulators of the tables
 * created before tess_main (tables made at run time must be made alike again
 * before a restore: their shapes are not checked). */
uint64_t tess__tables_ckpt_fingerprint(const tess_ctx *ctx);
int tess__table_is_static(const tess_table *t);

/* ---- partition migration (migrate.c) ---- */
int tess__migrate_create(tess_ctx *ctx);
void tess__migrate_destroy(tess_ctx *ctx);
/* Old owner: start moving partition p of table group `group` to rank `to`;
 * `task` (the stolen tasks, in the scheduler's encoding) travels with the data. */
int tess__migrate_begin(tess_ctx *ctx, int group, int p, int to, const uint8_t *task,
                        size_t task_len);
/* Bytes of memory partition p of a table group holds here. */
uint64_t tess__migrate_group_bytes(tess_ctx *ctx, int group, int p);
/* New owner, once a moved partition is installed: what receives the task
 * that travelled with it (the scheduler, which sits above tables, sets it). */
typedef void tess__migrate_task_fn(tess_ctx *ctx, int from, const uint8_t *task, size_t len);
void tess__migrate_set_task_sink(tess_ctx *ctx, tess__migrate_task_fn *fn);
/* A message of the migration protocol (BEGIN, ANNOUNCE, MARKER, DATA, FWD). */
void tess__migrate_on_message(tess_ctx *ctx, int src, uint32_t type, const uint8_t *p, size_t len);

#endif
