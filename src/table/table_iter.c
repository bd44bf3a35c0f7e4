/*
 * table_iter.c — iterators over one partition.  The iterator walks a
 * snapshot (a local copy, or one fetched from the owner), so it stays valid
 * however the table changes afterwards and needs no lock while it runs.
 */
#include <stdlib.h>
#include <string.h>
#include "table_internal.h"

struct tess_iter {
    uint8_t *buf;
    size_t len, off;
    size_t key_size;
};

int tess_table_iter(tess_table *t, int p, tess_iter **it_out)
{
    TESS_RETURN_IF(t->ctx, p < 0 || p >= t->nparts, TESS_ERR_INVAL, "table %s: no partition %d",
                   t->name, p);
    int rc = tess__table_check_live(t);
    if (rc == TESS_OK) rc = tess__buffer_flush_expired(t->ctx);
    if (rc == TESS_OK) rc = tess__buffer_flush_partition(t, p);
    if (rc != TESS_OK) return rc;
    tess_iter *it = calloc(1, sizeof *it);
    if (it == NULL) return TESS_ERR_NOMEM;
    it->key_size = t->key_size;
    rc = TESS__MOVED;
    if (tess_table_is_local(t, p)) rc = tess__table_snapshot_local(t, p, &it->buf, &it->len);
    if (rc == TESS__MOVED) rc = tess__remote_snapshot(t, p, &it->buf, &it->len);
    if (rc != TESS_OK) {
        free(it);
        return rc;
    }
    *it_out = it;
    return TESS_OK;
}

static size_t pad8(size_t n) { return (n + 7) & ~(size_t)7; }

int tess_iter_next(tess_iter *it, const void **key_out, const void **value_out, size_t *len_out)
{
    size_t kpad = pad8(it->key_size);
    if (it->off + kpad + 8 > it->len) return 0;
    uint64_t vlen;
    memcpy(&vlen, it->buf + it->off + kpad, 8);
    if (vlen > it->len - it->off - kpad - 8) return TESS_ERR_FORMAT;
    *key_out = it->buf + it->off;
    *value_out = it->buf + it->off + kpad + 8;
    if (len_out) *len_out = vlen;
    it->off += kpad + 8 + pad8(vlen);
    return 1;
}

void tess_iter_free(tess_iter *it)
{
    if (it == NULL) return;
    free(it->buf);
    free(it);
}

/* Partition p of this rank, its buffered writes applied, locked: TESS_OK
 * with the lock held, or an error without it. */
static int lock_own_partition(tess_table *t, int p)
{
    if (t->dropped) return tess__table_check_live(t);
    TESS_RETURN_IF(t->ctx, !tess_table_is_local(t, p), TESS_ERR_INVAL,
                   "table %s: partition %d is not stored on rank %d", t->name, p, t->ctx->rank);
    int rc = tess__buffer_flush_partition(t, p);
    if (rc != TESS_OK) return rc;
    pthread_mutex_lock(&t->locks[p]);
    if (t->parts[p] != NULL) return TESS_OK;
    pthread_mutex_unlock(&t->locks[p]);
    return TESS_ERR_INVAL; /* still on its way here */
}

int tess_table_scan(tess_table *t, int p, tess_scan_fn fn, void *arg)
{
    int rc = lock_own_partition(t, p);
    if (rc != TESS_OK) return rc;
    rc = tess__partition_scan(t->parts[p], fn, arg);
    pthread_mutex_unlock(&t->locks[p]);
    return rc;
}

int tess_table_scan_dense(tess_table *t, int p, tess_scan_dense_fn fn, void *arg)
{
    TESS_RETURN_IF(t->ctx, !t->dropped && !t->dense, TESS_ERR_INVAL,
                   "table %s: tess_table_scan_dense needs a dense table", t->name);
    int rc = lock_own_partition(t, p);
    if (rc != TESS_OK) return rc;
    rc = tess__dense_scan_chunks(t->parts[p], fn, arg);
    pthread_mutex_unlock(&t->locks[p]);
    return rc;
}
