/*
 * table_read.c — reading a dense table's keys in ranges: a partition stored
 * here is copied under its lock in one go, one stored elsewhere comes from its
 * owner through an iterator (a chunk at a time).  Reading one's own partition key by key with
 * tess_table_get costs a lock, a flush check and a call per key (100x the
 * copy); these are the one-call forms, and the gather of a whole table.
 */
#include <stdlib.h>
#include <string.h>
#include "table_internal.h"

/* Keys first..first+n-1 of local partition p into out; TESS__MOVED when
 * the partition left this rank. */
static int read_local(tess_table *t, int p, uint64_t first, uint64_t n, uint8_t *out)
{
    pthread_mutex_lock(&t->locks[p]);
    int rc = TESS__MOVED;
    if (t->parts[p] != NULL) {
        tess__partition_read_dense(t->parts[p], first - t->bounds[p], n, out);
        rc = TESS_OK;
    }
    pthread_mutex_unlock(&t->locks[p]);
    return rc;
}

/* The same from p's owner, through an iterator: the identity, then what is present. */
static int read_remote(tess_table *t, int p, uint64_t first, uint64_t n, uint8_t *out)
{
    size_t vs = t->value_size;
    for (uint64_t i = 0; i < n; i++) tess__accum_identity(&t->acc, out + i * vs);
    tess_iter *it = NULL;
    int rc = tess_table_iter(t, p, &it);
    const void *key, *value;
    size_t len;
    while (rc == TESS_OK && (rc = tess_iter_next(it, &key, &value, &len)) == 1) {
        uint64_t k;
        memcpy(&k, key, sizeof k);
        if (k >= first && k - first < n && len == vs) memcpy(out + (k - first) * vs, value, vs);
        rc = TESS_OK;
    }
    tess_iter_free(it);
    return rc;
}

int tess_table_read_range(tess_table *t, uint64_t first, uint64_t n, void *values_out)
{
    if (t->dropped) return tess__table_check_live(t);
    TESS_RETURN_IF(t->ctx, !t->dense || t->value_size == 0, TESS_ERR_INVAL,
                   "table %s: tess_table_read_range needs a dense table with fixed-size values",
                   t->name);
    TESS_RETURN_IF(t->ctx, first > t->key_count || n > t->key_count - first, TESS_ERR_INVAL,
                   "table %s: keys %llu..%llu outside [0, %llu)", t->name,
                   (unsigned long long)first, (unsigned long long)(first + n),
                   (unsigned long long)t->key_count);
    TESS_RETURN_IF(t->ctx, values_out == NULL && n > 0, TESS_ERR_INVAL,
                   "table %s: tess_table_read_range into NULL", t->name);
    uint8_t *out = values_out;
    int rc = tess__buffer_flush_expired(t->ctx);
    while (rc == TESS_OK && n > 0) {
        int p = tess_table_partition_of(t, &first);
        uint64_t in_p = t->bounds[p + 1] - first, take = n < in_p ? n : in_p;
        rc = tess__buffer_flush_partition(t, p); /* the caller's own updates first */
        if (rc == TESS_OK) rc = TESS__MOVED;
        if (rc == TESS__MOVED && tess__owner(t, p) == t->ctx->rank)
            rc = read_local(t, p, first, take, out);
        if (rc == TESS__MOVED) rc = read_remote(t, p, first, take, out);
        first += take;
        n -= take;
        out += take * t->value_size;
    }
    return rc;
}

int tess_table_gather(tess_table *t, void *values_out, size_t cap)
{
    TESS_RETURN_IF(t->ctx, t->dense && cap / (t->value_size ? t->value_size : 1) < t->key_count,
                   TESS_ERR_INVAL, "table %s: gathering %llu values of %zu bytes into %zu bytes",
                   t->name, (unsigned long long)t->key_count, t->value_size, cap);
    return tess_table_read_range(t, 0, t->key_count, values_out);
}
