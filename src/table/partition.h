/*
 * partition.h — storage of one table partition: a flat array for dense
 * integer keys, or an open-addressing hash map for arbitrary fixed-size keys;
 * values fixed-size or variable-length.  Single-threaded: the table layer
 * (table.c) holds the partition's lock around every call.  Private.
 */
#ifndef TESS_SRC_TABLE_PARTITION_H
#define TESS_SRC_TABLE_PARTITION_H

#include <stddef.h>
#include <stdint.h>
#include "accum.h"

typedef struct tess__partition tess__partition;

/* Dense: keys uint64_t in [first, first+count).  value_size 0 = variable length.
 * Fixed-size values start as the accumulator's identity, all keys absent. */
tess__partition *tess__partition_new_dense(uint64_t first, uint64_t count, size_t value_size,
                                           const tess__accum *acc);
/* Hash: key_size bytes per key. */
tess__partition *tess__partition_new_hash(size_t key_size, size_t value_size,
                                          const tess__accum *acc);
void tess__partition_free(tess__partition *p); /* accepts NULL */

/* Stored (raw, not viewed) value: 1 and pointers set if present, 0 if absent.
 * Pointers are valid until the next modifying call. */
int tess__partition_get(const tess__partition *p, const void *key, const void **value_out,
                        size_t *len_out);
int tess__partition_contains(const tess__partition *p, const void *key);
/* 0 or TESS_ERR_NOMEM / TESS_ERR_INVAL (dense key out of range, wrong len). */
int tess__partition_put(tess__partition *p, const void *key, const void *value, size_t len);
/* Absent key: identity (accumulator initialize) first, then accumulate.
 * Variable-length values: update acts as put (replace). */
int tess__partition_update(tess__partition *p, const void *key, const void *update, size_t len);
/* n fixed-size updates; keys n*key_size bytes, updates n*value_size bytes. */
int tess__partition_update_batch(tess__partition *p, const void *keys, const void *updates,
                                 size_t n);
void tess__partition_remove(tess__partition *p, const void *key);
void tess__partition_clear(tess__partition *p);
uint64_t tess__partition_size(const tess__partition *p); /* keys present */
size_t tess__partition_key_size(const tess__partition *p);
size_t tess__partition_value_size(const tess__partition *p); /* 0 = variable */

/* Dense fixed-size only: flat value array and its length; NULL otherwise. */
void *tess__partition_dense_data(tess__partition *p, uint64_t *count_out);
/* Dense fixed-size: keys first..first+n-1 set to the n values, as puts. */
int tess__partition_put_range(tess__partition *p, uint64_t first, uint64_t n, const void *vals);
/* Dense fixed-size: all count values into out, the identity for absent keys. */
void tess__partition_copy_dense(const tess__partition *p, void *out);
/* Dense fixed-size: the n values from slot lo (inside the partition) into out,
 * the identity for absent keys. */
void tess__partition_read_dense(const tess__partition *p, uint64_t lo, uint64_t n, void *out);

/* Visit every present key in storage order, stopping at the first non-zero
 * return of fn (returned).  The loop behind tess_table_scan. */
typedef int tess__scan_visit(const void *key, const void *value, size_t len, void *arg);
int tess__partition_scan(const tess__partition *p, tess__scan_visit *fn, void *arg);
/* Dense only: chunks of consecutive keys (tess_table_scan_dense). */
typedef int tess__scan_chunk(uint64_t first, size_t n, const void *const *values,
                             const size_t *lens, void *arg);
int tess__dense_scan_chunks(const tess__partition *p, tess__scan_chunk *fn, void *arg);

/* Iteration over present keys in storage order (ascending key for dense). */
typedef struct tess__cursor {
    uint64_t pos;     /* start at 0 */
    uint64_t key_buf; /* dense keys are materialised here */
} tess__cursor;
/* 1 with pointers set (valid until the next modifying call), 0 at the end. */
int tess__partition_next(const tess__partition *p, tess__cursor *c, const void **key_out,
                         const void **value_out, size_t *len_out);

/*
 * Present keys a chunk at a time, in an order no write changes (ascending
 * key for dense, ascending key hash for hash, whatever the table's size):
 * fn for the keys at or after position `from` (0 for the first chunk) until
 * their records (tess__record_bytes each) reach `budget` bytes — a chunk
 * ends where a key's probe run does, so it may pass the budget by a few
 * keys, and holds at least one.  *more_out 1 and *next_out the next chunk's
 * `from` when keys may follow, else 0.  Returns 0 or fn's first non-zero.
 */
int tess__partition_chunk(const tess__partition *p, uint64_t from, size_t budget,
                          tess__scan_visit *fn, void *arg, uint64_t *next_out, int *more_out);
/* Bytes of an iterator record: key and value each padded to 8, a u64 length. */
static inline size_t tess__record_bytes(size_t key_size, size_t len)
{
    return ((key_size + 7) & ~(size_t)7) + 8 + ((len + 7) & ~(size_t)7);
}

/* Checkpoint bytes of a partition (partition_codec.c): stored values, in a
 * layout any partitioning can be restored from.  *buf_out is malloc'd. */
int tess__partition_encode(const tess__partition *p, uint8_t **buf_out, size_t *len_out);
/* Call fn(arg, key, stored value, len) for each entry of encoded bytes;
 * stops at the first non-zero return.  TESS_ERR_FORMAT on malformed bytes. */
typedef int (*tess__entry_fn)(void *arg, const void *key, const void *value, size_t len);
int tess__partition_decode(const uint8_t *buf, size_t len, size_t key_size, tess__entry_fn fn,
                           void *arg);
/* Put every entry of encoded bytes into p (same key and value sizes): a
 * partition moving to another rank (migrate.c).  TESS_ERR_FORMAT on bytes
 * that are not a whole encoding. */
int tess__partition_decode_into(tess__partition *p, const uint8_t *buf, size_t len);

/* Bytes of memory held (for metrics). */
size_t tess__partition_bytes(const tess__partition *p);

#endif
