/*
 * combine_array.c — per-thread combining arrays for dense tables.
 *
 * A thread that updates a dense table with a built-in accumulator combines
 * its updates in a private array of the whole key range (no lock, no
 * hashing: one read-modify-write per update, like a plain array), and marks
 * the keys it touched.  The array is merged — only the touched keys, one
 * lock per local partition, one batch of messages per remote partition (the
 * combining of remote writes per destination) — when the worker runs out of
 * tasks, on flush, at a barrier, and before this thread reads or writes a
 * key of that partition.  This is what lets a push
 * PageRank run near the speed of a plain array.  Used only while the
 * arrays of all threads stay small (see PRIVATE_LIMIT).
 */
#include <stdlib.h>
#include <string.h>
#include "table_internal.h"

#define PRIVATE_LIMIT ((uint64_t)256 << 20) /* bytes per thread and table */
#define MERGE_CHUNK 16384

/*
 * For the f64 sum, a key whose updates were all positive cannot be back at
 * +0.0 (a sum of positive numbers stays positive), so its value alone shows
 * it was touched: only updates that are not positive write the touched byte.
 * PageRank's contributions are all positive, so its hot loop does a single
 * random read-modify-write per update.
 */
struct tess__private {
    uint8_t *vals;       /* key_count values, the identity where untouched */
    uint8_t *touched;    /* byte per key: a plain store, no read-modify-write of
                             a shared word, keeps the hot loop free of dependencies */
    uint8_t *dirty_part; /* partitions with touched keys */
    int any;
    int f64_sum; /* values are f64 sums: a non-zero value means touched */
};

int tess__private_wanted(const tess_table *t)
{
    return t->dense && t->value_size > 0 && t->acc.kind != TESS_ACC_USER && t->key_count > 0 &&
           t->key_count * t->value_size <= PRIVATE_LIMIT;
}

tess__private *tess__private_new(const tess_table *t)
{
    tess__private *d = calloc(1, sizeof *d);
    if (d == NULL) return NULL;
    d->vals = malloc(t->key_count * t->value_size);
    d->touched = calloc(t->key_count + 8, 1);
    d->dirty_part = calloc((size_t)t->nparts, 1);
    d->f64_sum =
        t->acc.kind == TESS_ACC_SUM && t->acc.elem == TESS_F64 && t->value_size == sizeof(double);
    if (d->vals && d->touched && d->dirty_part) {
        for (uint64_t k = 0; k < t->key_count; k++)
            tess__accum_identity(&t->acc, d->vals + k * t->value_size);
        return d;
    }
    tess__private_free(d);
    return NULL;
}

void tess__private_free(tess__private *d)
{
    if (d == NULL) return;
    free(d->vals);
    free(d->touched);
    free(d->dirty_part);
    free(d);
}

void tess__private_add(tess_table *t, tess__private *d, uint64_t key, int p, const void *val)
{
    tess__accum_apply(&t->acc, d->vals + key * t->value_size, val);
    d->touched[key] = 1;
    d->dirty_part[p] = 1;
    d->any = 1;
}

/* The hot loop of the f64 sum (PageRank): keys known to be local and in range. */
void tess__private_add_f64_sum(tess__private *d, const uint64_t *keys, const double *vals, size_t n)
{
    double *base = (double *)d->vals;
    for (size_t i = 0; i < n; i++) {
        uint64_t k = keys[i];
        double v = vals[i];
        base[k] += v;
        if (!(v > 0)) d->touched[k] = 1;
    }
    d->any = 1;
}

/* One value into many keys, no staging at all.  Stops at the first key
 * outside [0, key_count) and returns how many keys were updated. */
size_t tess__private_fanout_f64_sum(tess__private *d, const uint64_t *keys, size_t n, double v,
                                    uint64_t key_count)
{
    double *base = (double *)d->vals;
    size_t i = 0;
    for (; i < n && keys[i] < key_count; i++) base[keys[i]] += v;
    if (!(v > 0))
        for (size_t j = 0; j < i; j++) d->touched[keys[j]] = 1;
    d->any = 1;
    return i;
}

void tess__private_mark_all(tess_table *t, tess__private *d)
{
    memset(d->dirty_part, 1, (size_t)t->nparts);
}

/* Apply a chunk of gathered keys to partition p: under its lock here, or as
 * one message to the rank that stores it. */
static int apply_chunk(tess_table *t, int p, const uint64_t *keys, const uint8_t *vals, size_t n)
{
    int rc = TESS__MOVED;
    if (tess__owner(t, p) == t->ctx->rank) {
        pthread_mutex_lock(&t->locks[p]);
        if (t->parts[p] != NULL) rc = tess__partition_update_batch(t->parts[p], keys, vals, n);
        pthread_mutex_unlock(&t->locks[p]);
    }
    /* elsewhere, moved away, or still on its way here */
    if (rc == TESS__MOVED) rc = tess__route_updates(t, (const uint8_t *)keys, vals, n);
    return rc;
}

/* Gather the touched keys of partition p, reset them, apply in chunks. */
static int merge_partition(tess_table *t, tess__private *d, int p)
{
    size_t vs = t->value_size, n = 0;
    uint64_t *keys = malloc(MERGE_CHUNK * sizeof *keys);
    uint8_t *vals = malloc(MERGE_CHUNK * vs);
    if (vals == NULL || keys == NULL) {
        free(keys);
        free(vals);
        return TESS_ERR_NOMEM;
    }
    int rc = TESS_OK;
    uint64_t lo = t->bounds[p], hi = t->bounds[p + 1];
    const uint64_t *bits = (const uint64_t *)d->vals; /* f64 values as bit patterns */
    for (uint64_t k = lo; k < hi && rc == TESS_OK; k++) {
        if (!d->touched[k] && !(d->f64_sum && bits[k] != 0)) continue;
        d->touched[k] = 0;
        memcpy(vals + n * vs, d->vals + k * vs, vs);
        tess__accum_identity(&t->acc, d->vals + k * vs);
        keys[n++] = k;
        if (n == MERGE_CHUNK) {
            rc = apply_chunk(t, p, keys, vals, n);
            n = 0;
        }
    }
    if (rc == TESS_OK && n > 0) rc = apply_chunk(t, p, keys, vals, n);
    free(keys);
    free(vals);
    d->dirty_part[p] = 0;
    return rc;
}

int tess__private_merge(tess_table *t, tess__private *d, int p)
{
    if (d == NULL || !d->any || !d->dirty_part[p]) return TESS_OK;
    return merge_partition(t, d, p);
}

int tess__private_merge_all(tess_table *t, tess__private *d)
{
    if (d == NULL || !d->any) return TESS_OK;
    int rc = TESS_OK;
    for (int p = 0; p < t->nparts && rc == TESS_OK; p++)
        if (d->dirty_part[p]) rc = merge_partition(t, d, p);
    d->any = 0;
    return rc;
}
