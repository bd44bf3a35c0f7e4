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
#include "core/internal.h"
#include "partition.h"

/* Header of every table message (after a tess__req_hdr for requests). */
typedef struct tess__table_hdr {
    uint32_t table;
    uint32_t arg;        /* value length, partition, or "value wanted" */
    uint64_t n;          /* entries of an update batch */
} tess__table_hdr;

struct tess_table {
    tess_ctx *ctx;
    int index;                 /* creation order, the id used in messages */
    char *name;
    size_t key_size, value_size;
    int nparts;
    int dense;
    uint64_t key_count;
    uint64_t *bounds;          /* dense: nparts+1 */
    int *bucket_part;          /* dense: partition of key b << bucket_shift */
    unsigned bucket_shift;
    tess_partitioner_fn partitioner;
    tess__accum acc;
    int *owner;                /* rank of each partition; changes only under the
                                  placement write lock (migrate.c), read with tess__owner */
    tess__partition **parts;   /* NULL where the partition lives elsewhere (or has not
                                  arrived yet); read under locks[p] or tess__part_here */
    pthread_mutex_t *locks;    /* one per local partition */
    int all_local;             /* every partition is stored on this rank (at creation) */
    int group;                 /* index of the table whose placement this one follows
                                  (group_with, transitively; itself if none) */
    _Atomic unsigned placement_version; /* bumped whenever a partition changes owner */
    int is_static;             /* checkpointed once per job (tess_table_set_static) */
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
int tess__migrate_intercept(tess_ctx *ctx, int src, uint32_t type, const uint8_t *p,
                            size_t len);

/* Per-thread combining arrays for dense tables (table_private.c). */
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
/* Serialised entries of a local partition: [key][u32 len][viewed value]... malloc'd. */
int tess__table_snapshot_local(tess_table *t, int p, uint8_t **buf_out, size_t *len_out);

/* Per-thread buffers (table_buffer.c). */
int tess__buffer_update(tess_table *t, const void *key, const void *val);
int tess__buffer_flush_table(tess_table *t);
/* Fast path: route a batch, applying the local part grouped by partition. */
int tess__buffer_update_batch(tess_table *t, const void *keys, const void *vals, size_t n);
/* The same update into n keys. */
int tess__buffer_update_fanout(tess_table *t, const void *keys, size_t n, const void *val);
/* Flush what this thread buffered for partition p (before a get/put on it). */
int tess__buffer_flush_partition(tess_table *t, int p);

/* Remote operations (table_remote.c). */
int tess__remote_send_updates(tess_table *t, int dst, const uint8_t *keys,
                              const uint8_t *vals, size_t n);
int tess__remote_put(tess_table *t, int dst, const void *key, const void *val, size_t len);
int tess__remote_remove(tess_table *t, int dst, const void *key);
int tess__remote_get(tess_table *t, int dst, const void *key, void *out, size_t cap,
                     size_t *len_out);
int tess__remote_snapshot(tess_table *t, int p, uint8_t **buf_out, size_t *len_out);
int tess__remote_clear(tess_table *t, int dst);
int tess__remote_size(tess_table *t, int dst, uint64_t *size_out);

#endif
