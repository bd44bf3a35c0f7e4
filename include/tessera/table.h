/*
 * table.h — partitioned key/value tables shared by kernels (Piccolo's model).
 *
 * A table has fixed-size keys, fixed-size or variable-length values, p
 * partitions placed on ranks, a partitioner and an accumulator that combines
 * concurrent updates.  Guarantees (tested in tests/):
 *   - single-key operations are atomic;
 *   - operations of one kernel instance on one key apply in issue order;
 *   - after tess_table_flush() the caller's writes (buffered updates, puts,
 *     removes) are visible to every later get, on any rank;
 *   - after tess_barrier() all kernels have finished and all writes applied;
 *   - a get/put/contains/remove on a key first flushes the caller's buffered
 *     updates to that key's partition;
 *   - timeout flush: an update another running kernel issued at time T is
 *     visible to a get by T + the table's flush timeout (spec.flush_ms, else
 *     tess_config.flush_ms, default 5 ms) + a message's trip, as long as the
 *     writing thread keeps calling table functions (it checks the clock every
 *     64 buffered writes and on entry to get, contains, put, remove,
 *     read_range and tess_table_iter; a thread that calls none sends at its
 *     next call or its instance's end).  Before that a reader sees the old
 *     value: a key's value is never torn and one thread's writes to one key
 *     appear in issue order, but writes to different keys may appear in any
 *     order.  A send that took c of the thread's CPU time delays the next
 *     timeout send to at least 32 c (a dense table's private array is
 *     scanned whole).  With the timeout off, writes wait for a full buffer,
 *     a flush, the worker's idle time or a barrier: kernels that wait on
 *     each other must then flush.
 *     docs/tables.md, "When other kernels see a write", has the details.
 *
 * Threads: table operations may be called from kernel instances and from the
 * control function, concurrently.  tess_table_clear() and the iterator over a
 * partition that kernels are writing give no snapshot guarantee: call them
 * from the control function between barriers.
 */
#ifndef TESSERA_TABLE_H
#define TESSERA_TABLE_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Element type of values combined by built-in accumulators.  A value of
 * value_size bytes holds value_size / sizeof(element) elements, combined
 * element by element (a vector sum, for instance). */
typedef enum tess_elem {
    TESS_ELEM_NONE = 0,
    TESS_I32 = 1,
    TESS_I64 = 2,
    TESS_F32 = 3,
    TESS_F64 = 4
} tess_elem;

typedef enum tess_accum {
    TESS_ACC_REPLACE = 0, /* last write wins (default) */
    TESS_ACC_SUM = 1,
    TESS_ACC_MIN = 2,
    TESS_ACC_MAX = 3,
    TESS_ACC_PRODUCT = 4,
    TESS_ACC_USER = 5 /* a registered accumulator, see spec.accumulator */
} tess_accum;

/*
 * A user accumulator: the paper's four functions over fixed-size values.
 * All four must be pure functions of their arguments (no global state): they
 * run on any rank and thread.  `size` is the table's value_size.
 */
typedef struct tess_accum_ops {
    /* Stored value for a key whose first write is an update. */
    void (*initialize)(void *value, size_t size);
    /* value := value (+) update. */
    void (*accumulate)(void *value, const void *update, size_t size);
    /* Combine two pending updates: a := a (+) b, where b was issued after a. */
    void (*merge)(void *a, const void *b, size_t size);
    /* What get returns for a stored value. */
    void (*view)(void *out, const void *value, size_t size);
} tess_accum_ops;

/* Register a user accumulator (copied).  Before tess_main(), same on every rank. */
TESS_API int tess_register_accumulator(tess_ctx *ctx, const char *name, const tess_accum_ops *ops);

/* A partitioner maps a key to a partition in [0, partitions).  Pure function. */
typedef int (*tess_partitioner_fn)(const void *key, size_t key_size, int partitions);

/* Register a partitioner for hash tables.  Before tess_main(), same on every rank. */
TESS_API int tess_register_partitioner(tess_ctx *ctx, const char *name, tess_partitioner_fn fn);

typedef struct tess_table_spec {
    const char *name;  /* for messages and metrics; copied */
    size_t key_size;   /* bytes; dense tables: 8 (uint64_t keys) */
    size_t value_size; /* bytes; 0 = variable-length values */
    int partitions;    /* >= 1 */
    /* Dense tables: keys are uint64_t in [0, key_count), stored as flat arrays
     * and partitioned by ranges; range_bounds (partitions+1 ascending values,
     * first 0, last key_count; copied) sets the ranges, NULL splits evenly. */
    int dense;
    uint64_t key_count;
    const uint64_t *range_bounds;
    const char *partitioner; /* hash tables: registered name; NULL = hash of key bytes */
    tess_accum accum;
    tess_elem elem;          /* element type for built-in accumulators other than replace */
    const char *accumulator; /* registered name when accum == TESS_ACC_USER */
    tess_table *group_with;  /* partition i lives where partition i of this table does */
    /* Dense fixed-size tables: every rank keeps a read-only replica of the
     * whole table that follows tess_table_put_range (see tess_table_replica). */
    int replicated;
    /* Timeout flush of this table's buffered writes, in milliseconds: 0 (the
     * default) takes tess_config.flush_ms, TESS_FLUSH_NEVER sends them only
     * when a buffer fills, on flush, at the instance's end and at barriers. */
    double flush_ms;
} tess_table_spec;

#define TESS_FLUSH_NEVER (-1.0)

/* Zero the spec and set defaults (1 partition, replace accumulator). */
TESS_API void tess_table_spec_init(tess_table_spec *spec);

/*
 * Create a table.  Tables are identified by creation order, so either:
 *   - before tess_main(), identically on every rank; or
 *   - at run time, from the control function (rank 0) between a
 *     tess_barrier() and the next tess_run(): the runtime creates the table
 *     on every rank and returns once all have it (every rank's `app` learns
 *     of it only through kernel arguments or the table's use as locality;
 *     kernels find it with tess_table_by_index()).  With checkpoints
 *     enabled it first waits until the checkpoint being written is
 *     committed; while tess_checkpoint_periodic() is on it is refused
 *     (TESS_ERR_MISUSE), and spec.replicated is refused
 *     (TESS_ERR_UNSUPPORTED).
 * The table lives until tess_finalize() or tess_table_drop().  A checkpoint
 * records every table that exists at its cut; a job restores it only with
 * the same tables, so it creates (and drops) its run-time tables in the same
 * order before tess_checkpoint_restore().
 */
TESS_API int tess_table_create(tess_ctx *ctx, const tess_table_spec *spec, tess_table **table_out);

/*
 * Drop a table (control function, between a tess_barrier() and the next
 * tess_run(), the same conditions as a run-time create): its entries are
 * freed on every rank and every later operation on it returns
 * TESS_ERR_MISUSE; the handle stays valid until tess_finalize() and its id
 * is never reused, so checkpoints go on recording it, empty.  Refused for a
 * table that others are grouped with (drop those first) and, for now, for a
 * table with a replica (TESS_ERR_UNSUPPORTED).
 */
TESS_API int tess_table_drop(tess_table *t);

/* The table of creation index `index` (0 = the first created), for kernels
 * on any rank to reach tables made at run time: pass the index in the
 * kernel's args.  NULL when out of range. */
TESS_API tess_table *tess_table_by_index(tess_ctx *ctx, int index);
/* t's creation index (what tess_table_by_index takes). */
TESS_API int tess_table_index(const tess_table *t);

/*
 * Copy the value of `key` into value_out (capacity `cap` bytes) and set
 * *len_out to its length.  TESS_ERR_NOTFOUND if absent; TESS_ERR_INVAL if
 * cap is too small (then *len_out holds the length needed).  Remote keys are
 * fetched from their rank (a round trip).
 */
TESS_API int tess_table_get(tess_table *t, const void *key, void *value_out, size_t cap,
                            size_t *len_out);

/* Set the value of key (len must equal value_size for fixed-size tables). */
TESS_API int tess_table_put(tess_table *t, const void *key, const void *value, size_t len);

/* Combine `update` into key's value with the table's accumulator (buffered). */
TESS_API int tess_table_update(tess_table *t, const void *key, const void *update, size_t len);

/* n updates at once: keys is n*key_size bytes, updates n*value_size bytes
 * (fixed-size tables only).  The fast path for built-in accumulators. */
TESS_API int tess_table_update_batch(tess_table *t, const void *keys, const void *updates,
                                     size_t n);

/* Combine the same update into each of n keys (keys: n*key_size bytes), as
 * a vertex sends its share to all its out-neighbours.  Fixed-size values.
 * On a key outside a dense table (TESS_ERR_INVAL) the keys before it have
 * been updated. */
TESS_API int tess_table_update_fanout(tess_table *t, const void *keys, size_t n,
                                      const void *update);

/* 1 if present, 0 if not, negative on error. */
TESS_API int tess_table_contains(tess_table *t, const void *key);

/* Remove key; 0 also when it was absent. */
TESS_API int tess_table_remove(tess_table *t, const void *key);

/* Send the caller's buffered writes; once it returns they, and the caller's
 * puts and removes to other ranks, are visible to every later get on any
 * rank (also to a kernel the caller then runs on a third rank). */
TESS_API int tess_table_flush(tess_table *t);

/* Remove every key of every partition on every rank (control function, between barriers:
 * from a kernel, or after tess_run() before its tess_barrier(), it would race with the
 * kernels' writes and returns TESS_ERR_MISUSE instead). */
TESS_API int tess_table_clear(tess_table *t);

/* Number of keys over all partitions (control function, between barriers). */
TESS_API int64_t tess_table_size(tess_table *t);

/*
 * Fixpoints without bookkeeping: how many stored values the updates of a MIN
 * or MAX table changed, summed over all ranks, since the previous call (or
 * since the table was created); the count restarts at 0.  An update that
 * does not lower (MIN) or raise (MAX) any element of the stored value is not
 * counted; puts, put_range and clear are not updates.  Updates combined
 * before they reach the partition count once, so the number is at most the
 * number of updates, and 0 exactly when no update changed a value.  Control
 * function, after tess_barrier() (so every write is applied):
 *
 *     do { tess_run(ctx, "relax", parts, dist, NULL, 0); tess_barrier(ctx); }
 *     while (tess_table_changes(dist) > 0);
 *
 * TESS_ERR_INVAL (negative) for a table of another accumulator.
 */
TESS_API int64_t tess_table_changes(tess_table *t);

TESS_API int tess_table_partitions(const tess_table *t);
/* Rank that stores partition p.  With work stealing (tess_config.steal) a
 * partition may move to another rank while kernels run; every rank learns of
 * the move, and later tess_run() calls place instance i where partition i
 * then lives. */
TESS_API int tess_table_owner(const tess_table *t, int partition);
/* Partition of a key. */
TESS_API int tess_table_partition_of(const tess_table *t, const void *key);
/* 1 if partition p is stored on the calling rank. */
TESS_API int tess_table_is_local(const tess_table *t, int partition);
/* Dense tables: first key of partition p and number of keys in it. */
TESS_API int tess_table_dense_range(const tess_table *t, int partition, uint64_t *first_out,
                                    uint64_t *count_out);

/*
 * Dense fixed-size tables, local partition only: the flat array of values of
 * partition p (count_out values of value_size bytes, key first+i at index i).
 * Absent keys read as the accumulator's identity.  The pointer stays valid
 * while the partition stays on this rank: until tess_finalize() without work
 * stealing; with it, a partition may leave (and its memory be freed) with a
 * not-yet-started task, so keep the pointer only for the partition of the
 * running kernel instance (and those grouped with it), which never moves
 * while the instance runs.  Reading it while others write the partition is
 * a data race — use it for tables that are read-only in the current epoch.
 */
TESS_API void *tess_table_dense_data(tess_table *t, int partition, uint64_t *count_out);

/*
 * Dense fixed-size tables: set keys first..first+n-1 to the n values at
 * `values` (n*value_size bytes), as n puts would.  For a partition stored
 * here it is one lock and one copy: how a pull-style kernel instance writes
 * its own partition.  Keys of partitions on other ranks are sent as puts.
 */
TESS_API int tess_table_put_range(tess_table *t, uint64_t first, uint64_t n, const void *values);

/*
 * Dense fixed-size tables: copy the values of keys first..first+n-1 into
 * values_out (n*value_size bytes), absent keys as the accumulator's
 * identity.  A partition stored here is copied under its lock in one go (how
 * a kernel instance reads its own partition: one call, not a
 * tess_table_get per key, which costs 100x more); a partition elsewhere
 * comes as one snapshot from its owner.  The caller's buffered updates to
 * those partitions are sent first.  Like get, it sees other writers' values
 * as they stand: call it on a partition others write between barriers, or
 * accept either value of a key being written.
 */
TESS_API int tess_table_read_range(tess_table *t, uint64_t first, uint64_t n, void *values_out);

/* Dense fixed-size tables: the whole table (key_count values, key k at index
 * k) into values_out, which holds cap bytes; TESS_ERR_INVAL when it does not
 * fit.  From the control function after a barrier, rank 0's copy of every
 * rank's partitions: the result of a job in one call. */
TESS_API int tess_table_gather(tess_table *t, void *values_out, size_t cap);

/*
 * Read-only replicas of dense fixed-size tables, for kernels that read many
 * keys of every partition (a pull-style PageRank reads its in-neighbours).
 * tess_table_replica() returns this rank's copy: key_count values, key k at
 * index k, absent keys as the identity; NULL while there is none.  Kernels
 * may read it concurrently; the pointer stays valid until the next
 * tess_barrier() that changes it (or tess_finalize()).  Costs key_count *
 * value_size bytes per rank (twice that for a replicated table).
 *
 * A table created with spec.replicated has a replica from the start, and
 * the replica follows writes made with tess_table_put_range: each range is
 * staged on every rank (sent to the other ranks with the run's writes) and
 * becomes visible in every replica at the next tess_barrier(), all at once,
 * so a kernel reads the replica of the previous epoch while the current one
 * writes the next.  Other writes (put, update, clear) do not reach it.
 *
 * tess_table_replicate() stages every partition's current values for the
 * replica on every rank (local partitions copied, remote ones sent by their
 * owners), whatever wrote them: after a restore, or for a table without
 * spec.replicated (which then gets a replica).  Control function only,
 * between barriers; like put_range's, the copy becomes visible at the next
 * tess_barrier(), so call one before kernels read it.
 */
TESS_API int tess_table_replicate(tess_table *t);
TESS_API const void *tess_table_replica(const tess_table *t, uint64_t *count_out);

/*
 * Visit every entry of a partition stored on the calling rank, in place (no
 * copy): fn(key, value, len, arg) per present key, ascending for dense
 * tables.  The partition is locked meanwhile, so fn must not write to it;
 * meant for read-only tables such as a graph.  Stops at the first non-zero
 * return of fn and returns it; TESS_ERR_INVAL for a remote partition.
 */
typedef int (*tess_scan_fn)(const void *key, const void *value, size_t len, void *arg);
TESS_API int tess_table_scan(tess_table *t, int partition, tess_scan_fn fn, void *arg);

/*
 * tess_table_scan for dense tables, a chunk of consecutive keys per call so
 * the caller's loop over them runs inline (a call per key costs as much as a
 * short in-list in a pull kernel): fn(first, n, values, lens, arg) with
 * values[i], lens[i] the value of key first+i, or NULL and 0 when that key
 * is absent; chunks ascend and cover the partition.  Same locking and
 * return values as tess_table_scan; TESS_ERR_INVAL for a hash table.
 */
typedef int (*tess_scan_dense_fn)(uint64_t first, size_t n, const void *const *values,
                                  const size_t *lens, void *arg);
TESS_API int tess_table_scan_dense(tess_table *t, int partition, tess_scan_dense_fn fn, void *arg);

/*
 * Iterator over one partition, stored here or on another rank, read a chunk
 * at a time so that it holds about TESS_ITER_CHUNK bytes (environment
 * variable; TESS_ITER_CHUNK_DEFAULT when unset) however large the partition
 * is.  A chunk is copied under the partition's lock (by its owner when
 * remote) when the iterator reaches it: the first in tess_table_iter(), the
 * others in the tess_iter_next() that needs them.  Chunks follow an order
 * that no write changes: ascending key for dense tables, a fixed order of
 * the key's hash for hash tables (not the order of insertion, and the same
 * after the partition grows, is cleared or moves to another rank).  So,
 * while others write to the partition:
 *   - a key present from tess_table_iter() until tess_iter_next() returns 0
 *     is seen exactly once;
 *   - a key added or removed meanwhile is seen at most once (when present
 *     as its chunk is copied);
 *   - each value is the one its key had when its chunk was copied: keys of
 *     one chunk are consistent with each other, keys of different chunks
 *     may not be (a write between two chunks may show in the later one
 *     only).  There is no snapshot of the whole partition unless it fits in
 *     one chunk (TESS_ITER_CHUNK at least its size), or nobody writes to it
 *     while it is read (between barriers).
 * The caller's own buffered writes to the partition are sent first, as for
 * a get.  A chunk's records are each key and value padded to 8 bytes plus 8:
 * a chunk ends once they reach TESS_ITER_CHUNK, after at least one key, and
 * a hash chunk may pass it by the few keys that share a probe run.
 */
typedef struct tess_iter tess_iter;
#define TESS_ITER_CHUNK_DEFAULT ((size_t)1 << 20)

TESS_API int tess_table_iter(tess_table *t, int partition, tess_iter **it_out);
/* Next entry: 1, 0 at the end, <0 on error (fetching a chunk).  The
 * pointers point into the iterator's current chunk: valid until the next
 * tess_iter_next() or tess_iter_free(), so copy what must outlive them. */
TESS_API int tess_iter_next(tess_iter *it, const void **key_out, const void **value_out,
                            size_t *len_out);
/* Bytes of the chunk the iterator holds now (0 for NULL): what bounds its memory. */
TESS_API size_t tess_iter_bytes(const tess_iter *it);
/* Accepts NULL. */
TESS_API void tess_iter_free(tess_iter *it);

#ifdef __cplusplus
}
#endif

#endif /* TESSERA_TABLE_H */
