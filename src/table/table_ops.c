/*
 * table_ops.c — the public table operations: each finds the key's partition
 * and runs locally or through a message to the owner, after flushing what
 * the caller buffered for that partition (so one thread's operations on one
 * key apply in issue order), and what it buffered anywhere longer than the
 * table's timeout (table_buffer.c).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "table_internal.h"

int tess__remote_sync_dirty(tess_table *t);

static int key_partition(tess_table *t, const void *key, int *p_out)
{
    if (t->dropped) return tess__table_check_live(t);
    TESS_RETURN_IF(t->ctx, key == NULL, TESS_ERR_INVAL, "table %s: NULL key", t->name);
    int p = tess_table_partition_of(t, key);
    if (p < 0) {
        uint64_t k = 0;
        memcpy(&k, key, t->key_size < 8 ? t->key_size : 8);
        return tess__fail(t->ctx, TESS_ERR_INVAL, "table %s: key %llu outside [0, %llu)", t->name,
                          (unsigned long long)k, (unsigned long long)t->key_count);
    }
    *p_out = p;
    int rc = tess__buffer_flush_expired(t->ctx);
    return rc == TESS_OK ? tess__buffer_flush_partition(t, p) : rc;
}

static int check_len(tess_table *t, size_t len)
{
    TESS_RETURN_IF(t->ctx, t->value_size && len != t->value_size, TESS_ERR_INVAL,
                   "table %s: value of %zu bytes, the table holds %zu", t->name, len,
                   t->value_size);
    TESS_RETURN_IF(t->ctx, len > UINT32_MAX, TESS_ERR_INVAL, "table %s: value too large", t->name);
    return TESS_OK;
}

/* Here if this rank owns p and holds it, else from the owner: when the
 * partition is on its way here, the own handler answers once it arrived. */
static int read_key(tess_table *t, int p, const void *key, void *out, size_t cap, size_t *len_out)
{
    int found = TESS__MOVED;
    if (tess__owner(t, p) == t->ctx->rank)
        found = tess__table_get_local(t, p, key, out, cap, len_out);
    if (found != TESS__MOVED) return found;
    return tess__remote_get(t, tess__owner(t, p), key, out, cap, len_out);
}

/* A key as a user wrote it: an integer for 4- and 8-byte keys (dense tables'
 * uint64_t), else its first bytes in hex. */
static void describe_key(const tess_table *t, const void *key, char *buf, size_t len)
{
    if (t->key_size == 8 || t->key_size == 4) {
        uint64_t k = 0;
        if (t->key_size == 8) memcpy(&k, key, 8);
        else {
            uint32_t k32;
            memcpy(&k32, key, 4);
            k = k32;
        }
        snprintf(buf, len, "%llu", (unsigned long long)k);
        return;
    }
    const uint8_t *b = key;
    size_t n = t->key_size < 16 ? t->key_size : 16, off = 0;
    off += (size_t)snprintf(buf, len, "0x");
    for (size_t i = 0; i < n && off + 3 < len; i++)
        off += (size_t)snprintf(buf + off, len - off, "%02x", b[i]);
    if (n < t->key_size && off + 4 < len) snprintf(buf + off, len - off, "...");
}

int tess_table_get(tess_table *t, const void *key, void *value_out, size_t cap, size_t *len_out)
{
    int p, rc = key_partition(t, key, &p);
    if (rc != TESS_OK) return rc;
    size_t len = 0;
    int found = read_key(t, p, key, value_out, cap, &len);
    if (found < 0) return found;
    if (!found) {
        char k[48];
        describe_key(t, key, k, sizeof k);
        return tess__fail(t->ctx, TESS_ERR_NOTFOUND, "table %s: key %s not found", t->name, k);
    }
    if (len_out) *len_out = len;
    TESS_RETURN_IF(t->ctx, len > cap, TESS_ERR_INVAL,
                   "table %s: value of %zu bytes does not fit in %zu", t->name, len, cap);
    return TESS_OK;
}

int tess_table_contains(tess_table *t, const void *key)
{
    int p, rc = key_partition(t, key, &p);
    if (rc != TESS_OK) return rc;
    return read_key(t, p, key, NULL, 0, NULL);
}

int tess_table_put(tess_table *t, const void *key, const void *value, size_t len)
{
    int p, rc = check_len(t, len);
    if (rc == TESS_OK) rc = key_partition(t, key, &p);
    if (rc != TESS_OK) return rc;
    if (tess__owner(t, p) == t->ctx->rank) {
        rc = tess__table_put_local(t, p, key, value, len);
        if (rc != TESS__MOVED) return rc;
    }
    return tess__route_put(t, p, key, value, len);
}

int tess_table_remove(tess_table *t, const void *key)
{
    int p, rc = key_partition(t, key, &p);
    if (rc != TESS_OK) return rc;
    if (tess__owner(t, p) == t->ctx->rank) {
        rc = tess__table_remove_local(t, p, key);
        if (rc != TESS__MOVED) return rc;
    }
    return tess__route_remove(t, p, key);
}

int tess_table_update(tess_table *t, const void *key, const void *update, size_t len)
{
    int rc = t->dropped ? tess__table_check_live(t) : check_len(t, len);
    if (rc != TESS_OK) return rc;
    if (t->value_size == 0) return tess_table_put(t, key, update, len); /* replace */
    rc = tess__buffer_update(t, key, update);
    if (rc == TESS_ERR_INVAL) return key_partition(t, key, &(int){0});
    return rc;
}

/* A batch failed on a key outside the table: name the first such key. */
static int explain_bad_key(tess_table *t, const void *keys, size_t n)
{
    const uint8_t *k = keys;
    for (size_t i = 0; i < n; i++)
        if (tess_table_partition_of(t, k + i * t->key_size) < 0)
            return key_partition(t, k + i * t->key_size, &(int){0});
    return tess__fail(t->ctx, TESS_ERR_INVAL, "table %s: invalid update", t->name);
}

int tess_table_update_batch(tess_table *t, const void *keys, const void *updates, size_t n)
{
    if (t->dropped) return tess__table_check_live(t);
    TESS_RETURN_IF(t->ctx, t->value_size == 0, TESS_ERR_INVAL,
                   "table %s: batched updates need fixed-size values", t->name);
    int rc = tess__buffer_update_batch(t, keys, updates, n);
    return rc == TESS_ERR_INVAL ? explain_bad_key(t, keys, n) : rc;
}

int tess_table_update_fanout(tess_table *t, const void *keys, size_t n, const void *update)
{
    if (t->dropped) return tess__table_check_live(t);
    TESS_RETURN_IF(t->ctx, t->value_size == 0, TESS_ERR_INVAL,
                   "table %s: fan-out updates need fixed-size values", t->name);
    int rc = tess__buffer_update_fanout(t, keys, n, update);
    return rc == TESS_ERR_INVAL ? explain_bad_key(t, keys, n) : rc;
}

int tess_table_flush(tess_table *t)
{
    int rc = tess__buffer_flush_table(t);
    return rc == TESS_OK ? tess__remote_sync_dirty(t) : rc;
}

static int clear_local(tess_table *t)
{
    for (int p = 0; p < t->nparts; p++) {
        pthread_mutex_lock(&t->locks[p]);
        if (t->parts[p] != NULL) tess__partition_clear(t->parts[p]);
        pthread_mutex_unlock(&t->locks[p]);
    }
    return TESS_OK;
}

int tess_table_clear(tess_table *t)
{
    int rc = tess__table_check_live(t);
    if (rc == TESS_OK) {
        char what[160];
        snprintf(what, sizeof what, "tess_table_clear(%s)", t->name);
        rc = tess__check_at_rest(t->ctx, what);
    }
    if (rc == TESS_OK) rc = tess__buffer_flush_table(t);
    if (rc == TESS_OK) rc = clear_local(t);
    for (int r = 0; rc == TESS_OK && r < t->ctx->nranks; r++)
        if (r != t->ctx->rank) rc = tess__remote_clear(t, r);
    return rc;
}

/* `local` plus what `remote` says for every other rank (control function,
 * between barriers): a table's size, its count of changed values. */
static int64_t sum_over_ranks(tess_table *t, int64_t local,
                              int (*remote)(tess_table *, int, uint64_t *))
{
    int64_t total = local;
    for (int r = 0; r < t->ctx->nranks; r++) {
        uint64_t n = 0;
        if (r == t->ctx->rank) continue;
        int rc = remote(t, r, &n);
        if (rc != TESS_OK) return rc;
        total += (int64_t)n;
    }
    return total;
}

int64_t tess_table_size(tess_table *t)
{
    int rc = tess__table_check_live(t);
    if (rc == TESS_OK) rc = tess__buffer_flush_table(t);
    if (rc != TESS_OK) return rc;
    int64_t local = 0;
    for (int p = 0; p < t->nparts; p++) local += (int64_t)tess__table_local_size(t, p);
    return sum_over_ranks(t, local, tess__remote_size);
}

int64_t tess_table_changes(tess_table *t)
{
    TESS_RETURN_IF(t->ctx, !tess__accum_counts_changes(t->acc.kind), TESS_ERR_INVAL,
                   "table %s: only MIN and MAX tables count changed values", t->name);
    int rc = tess__buffer_flush_table(t);
    if (rc != TESS_OK) return rc;
    return sum_over_ranks(t, (int64_t)atomic_exchange(&t->changes, 0), tess__remote_take_changes);
}
