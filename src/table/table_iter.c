/*
 * table_iter.c — iterators over one partition, a chunk at a time: each chunk
 * is copied under the partition's lock (here, or by its owner in answer to
 * a request) and walked without one, so an iterator holds about
 * TESS_ITER_CHUNK bytes whatever the partition's size.  Chunks follow an
 * order no write changes (tess__partition_chunk), which is what the
 * guarantees in table.h rest on.  Also the in-place scans of a partition
 * stored here.
 */
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "table_internal.h"

struct tess_iter {
    tess_table *t;
    int p;
    size_t budget;
    uint8_t *buf; /* the chunk: TESS__CHUNK_HEAD, then records */
    size_t len, off;
    uint64_t next; /* where the next chunk starts, when more */
    int more;
};

/* TESS_ITER_CHUNK: bytes per chunk, else the default (a bad value said once). */
static size_t chunk_budget(void)
{
    static atomic_int warned;
    const char *s = getenv("TESS_ITER_CHUNK");
    long n = 0;
    if (s == NULL) return TESS_ITER_CHUNK_DEFAULT;
    if (tess__parse_count(s, 1, TESS__CHUNK_MAX, &n)) return (size_t)n;
    if (!atomic_exchange(&warned, 1))
        fprintf(stderr,
                "tessera: TESS_ITER_CHUNK: expected bytes in [1, 1073741824], got '%s' "
                "(ignored)\n",
                s);
    return TESS_ITER_CHUNK_DEFAULT;
}

/* The chunk from it->next: from the partition here, else from its owner (a
 * partition that moved meanwhile is asked for again where it went). */
static int fetch_chunk(tess_iter *it)
{
    tess_table *t = it->t;
    int rc = tess__table_check_live(t);
    if (rc != TESS_OK) return rc;
    uint8_t *buf = NULL;
    size_t len = 0;
    rc = TESS__MOVED;
    for (int tries = 0; rc == TESS__MOVED && tries < 8; tries++) {
        if (tess_table_is_local(t, it->p))
            rc = tess__table_chunk_local(t, it->p, it->next, it->budget, &buf, &len);
        if (rc == TESS__MOVED) rc = tess__remote_chunk(t, it->p, it->next, it->budget, &buf, &len);
    }
    if (rc != TESS_OK) return rc == TESS__MOVED ? TESS_ERR_INVAL : rc;
    uint64_t head[2];
    memcpy(head, buf, sizeof head);
    free(it->buf);
    it->buf = buf;
    it->len = len;
    it->off = TESS__CHUNK_HEAD;
    it->next = head[0];
    it->more = head[1] != 0;
    return TESS_OK;
}

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
    it->t = t;
    it->p = p;
    it->budget = chunk_budget();
    rc = fetch_chunk(it);
    if (rc != TESS_OK) {
        tess_iter_free(it);
        return rc;
    }
    *it_out = it;
    return TESS_OK;
}

static size_t pad8(size_t n) { return (n + 7) & ~(size_t)7; }

int tess_iter_next(tess_iter *it, const void **key_out, const void **value_out, size_t *len_out)
{
    size_t kpad = pad8(it->t->key_size);
    while (it->off + kpad + 8 > it->len) {
        if (!it->more) return 0;
        int rc = fetch_chunk(it);
        if (rc != TESS_OK) return rc;
    }
    uint64_t vlen;
    memcpy(&vlen, it->buf + it->off + kpad, 8);
    if (vlen > it->len - it->off - kpad - 8) return TESS_ERR_FORMAT;
    *key_out = it->buf + it->off;
    *value_out = it->buf + it->off + kpad + 8;
    if (len_out) *len_out = vlen;
    it->off += kpad + 8 + pad8(vlen);
    return 1;
}

size_t tess_iter_bytes(const tess_iter *it) { return it ? it->len : 0; }

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
