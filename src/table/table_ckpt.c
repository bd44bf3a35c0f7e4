/*
 * table_ckpt.c — tables as checkpoint data: encoding local partitions,
 * putting restored entries back wherever their keys now live, and replaying
 * the logged table messages (the channel state of a snapshot).
 *
 * A restore may run on another number of ranks or partitions than the job
 * that wrote the checkpoint, so nothing here trusts the old partition map:
 * every entry goes to the partition its key maps to today, and a rank keeps
 * the entries whose partitions it stores.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "table_internal.h"

int tess__table_msg_is_write(uint32_t type)
{
    return type == TESS_MSG_UPDATES || type == TESS_MSG_PUT || type == TESS_MSG_REMOVE ||
           type == TESS_MSG_CLEAR_REQ;
}

int tess__table_is_static(const tess_table *t) { return t->is_static; }

int tess_table_set_static(tess_table *t)
{
    if (t == NULL) return TESS_ERR_INVAL;
    TESS_RETURN_IF(t->ctx, t->ctx->started, TESS_ERR_MISUSE,
                   "tess_table_set_static(%s) after tess_main() started", t->name);
    t->is_static = 1;
    return TESS_OK;
}

int tess__table_encode_partition(tess_table *t, int p, uint8_t **buf_out, size_t *len_out)
{
    pthread_mutex_lock(&t->locks[p]);
    int rc = tess__partition_encode(t->parts[p], buf_out, len_out);
    pthread_mutex_unlock(&t->locks[p]);
    return rc;
}

static int put_if_local(void *arg, const void *key, const void *value, size_t len)
{
    tess_table *t = arg;
    int p = tess_table_partition_of(t, key);
    if (p < 0) return TESS_ERR_FORMAT;
    if (t->parts[p] == NULL) return TESS_OK;
    return tess__table_put_local(t, p, key, value, len);
}

int tess__table_restore_encoded(tess_table *t, const uint8_t *buf, size_t len)
{
    return tess__partition_decode(buf, len, t->key_size, put_if_local, t);
}

/* Partition p of a checkpoint being restored, and what its keys may be. */
typedef struct restoring {
    tess_table *t;
    int p, nparts;
    int ranged; /* dense, with the writer's range of p known: [lo, hi) */
    uint64_t lo, hi;
    char *err;
    size_t errlen;
} restoring;

static int put_checked(void *arg, const void *key, const void *value, size_t len)
{
    restoring *r = arg;
    const tess_table *t = r->t;
    if (t->dense) {
        uint64_t k;
        memcpy(&k, key, sizeof k);
        if (k >= t->key_count || (r->ranged && (k < r->lo || k >= r->hi))) {
            snprintf(r->err, r->errlen,
                     "table %s partition %d holds key %llu, outside its range [%llu, %llu)",
                     t->name, r->p, (unsigned long long)k,
                     (unsigned long long)(r->ranged ? r->lo : 0),
                     (unsigned long long)(r->ranged ? r->hi : t->key_count));
            return TESS_ERR_FORMAT;
        }
    } else {
        int q = tess__table_hash_partition(t, key, r->nparts);
        if (q != r->p) {
            snprintf(r->err, r->errlen, "table %s partition %d holds a key of partition %d",
                     t->name, r->p, q);
            return TESS_ERR_FORMAT;
        }
    }
    return put_if_local(r->t, key, value, len);
}

int tess__table_restore_partition(tess_table *t, int p, int nparts, const uint8_t *buf, size_t len,
                                  char *err, size_t errlen)
{
    restoring r = {.t = t, .p = p, .nparts = nparts, .err = err, .errlen = errlen};
    if (t->dense && nparts == t->nparts) {
        r.ranged = 1;
        r.lo = t->bounds[p];
        r.hi = t->bounds[p + 1];
    } else if (t->dense && t->even_bounds) { /* set_bounds' even split */
        r.ranged = 1;
        r.lo = (uint64_t)((unsigned __int128)t->key_count * (unsigned)p / (unsigned)nparts);
        r.hi = (uint64_t)((unsigned __int128)t->key_count * (unsigned)(p + 1) / (unsigned)nparts);
    }
    return tess__partition_decode(buf, len, t->key_size, put_checked, &r);
}

/* The local subset of an update batch, applied as one batch. */
static int replay_updates(tess_table *t, const tess__table_hdr *h, const uint8_t *body, size_t len)
{
    size_t ks = t->key_size, vs = t->value_size, n = (size_t)h->n;
    if (vs == 0 || n > len / (ks + vs) || len != n * (ks + vs)) return TESS_ERR_FORMAT;
    uint8_t *keys = malloc(n * ks + 1), *vals = malloc(n * vs + 1);
    size_t kept = 0;
    int rc = keys && vals ? TESS_OK : TESS_ERR_NOMEM;
    for (size_t i = 0; rc == TESS_OK && i < n; i++) {
        int p = tess_table_partition_of(t, body + i * ks);
        if (p < 0) rc = TESS_ERR_FORMAT;
        else if (t->parts[p] == NULL) continue;
        memcpy(keys + kept * ks, body + i * ks, ks);
        memcpy(vals + kept * vs, body + n * ks + i * vs, vs);
        kept++;
    }
    if (rc == TESS_OK) rc = tess__table_apply_local(t, keys, vals, kept);
    free(keys);
    free(vals);
    return rc;
}

static int replay_key_op(tess_table *t, uint32_t type, const tess__table_hdr *h,
                         const uint8_t *body, size_t len)
{
    if (len < t->key_size || (type == TESS_MSG_PUT && len - t->key_size != h->arg))
        return TESS_ERR_FORMAT;
    int p = tess_table_partition_of(t, body);
    if (p < 0) return TESS_ERR_FORMAT;
    if (t->parts[p] == NULL) return TESS_OK;
    if (type == TESS_MSG_REMOVE) return tess__table_remove_local(t, p, body);
    return tess__table_put_local(t, p, body, body + t->key_size, h->arg);
}

static void clear_local(tess_table *t)
{
    for (int p = 0; p < t->nparts; p++) {
        if (t->parts[p] == NULL) continue;
        pthread_mutex_lock(&t->locks[p]);
        tess__partition_clear(t->parts[p]);
        pthread_mutex_unlock(&t->locks[p]);
    }
}

static int replay_one(tess_ctx *ctx, uint32_t type, const uint8_t *p, size_t len)
{
    if (type == TESS_MSG_CLEAR_REQ) {
        if (len < sizeof(tess__req_hdr)) return TESS_ERR_FORMAT;
        p += sizeof(tess__req_hdr);
        len -= sizeof(tess__req_hdr);
    }
    tess__table_hdr h;
    if (len < sizeof h) return TESS_ERR_FORMAT;
    memcpy(&h, p, sizeof h);
    if (h.table >= (uint32_t)ctx->ntables) return TESS_ERR_FORMAT;
    tess_table *t = ctx->tables[h.table];
    p += sizeof h;
    len -= sizeof h;
    switch (type) {
    case TESS_MSG_UPDATES: return replay_updates(t, &h, p, len);
    case TESS_MSG_PUT:
    case TESS_MSG_REMOVE: return replay_key_op(t, type, &h, p, len);
    case TESS_MSG_CLEAR_REQ: clear_local(t); return TESS_OK;
    default: return TESS_ERR_FORMAT;
    }
}

int tess__table_replay_log(tess_ctx *ctx, const uint8_t *log, size_t len)
{
    size_t off = 0;
    while (off < len) {
        uint32_t head[2];
        if (len - off < sizeof head) return TESS_ERR_FORMAT;
        memcpy(head, log + off, sizeof head);
        off += sizeof head;
        if (head[1] > len - off) return TESS_ERR_FORMAT;
        int rc = replay_one(ctx, head[0], log + off, head[1]);
        if (rc != TESS_OK) return rc;
        off += head[1];
    }
    return TESS_OK;
}

void tess__tables_clear_local(tess_ctx *ctx)
{
    for (int i = 0; i < ctx->ntables; i++) clear_local(ctx->tables[i]);
}

static uint64_t mix_string(uint64_t h, const char *s)
{
    for (; *s; s++) h = tess_mix64(h ^ (uint8_t)*s);
    return tess_mix64(h ^ 0xff);
}

/* Not the partition count or placement: a checkpoint restores onto any. */
uint64_t tess__tables_ckpt_fingerprint(const tess_ctx *ctx)
{
    uint64_t h = 0xc4ec7;
    for (int i = 0; i < ctx->ntables; i++) {
        const tess_table *t = ctx->tables[i];
        if (t->at_run_time) continue; /* a rank may compute it after some were made */
        h = mix_string(h, t->name);
        h = tess_mix64(h ^ t->key_size ^ (t->value_size << 16) ^ ((uint64_t)t->dense << 40));
        h = tess_mix64(h ^ t->key_count ^ ((uint64_t)t->acc.kind << 56) ^ (uint64_t)t->is_static);
    }
    return h;
}
