/*
 * table_remote.c — table operations on partitions of other ranks: the
 * messages the sender builds, and the handlers that apply them on the owner
 * (run by the owner's progress engine).  Writes (updates, put, remove) are
 * counted on both sides so that barriers can tell when all have landed.
 */
#include <stdlib.h>
#include <string.h>
#include "table_internal.h"

int tess__buffer_take_dirty(tess_table *t, int *ranks_out);

/* A write to dst: the header and the body's parts go out gathered by
 * tess__sendv, so the bytes are copied once, into the engine's message
 * (none to this rank when the body is one part). */
static int send_write(tess_table *t, int dst, uint32_t type, const tess__table_hdr *h,
                      const tess__part *body, int nbody)
{
    tess__part parts[3] = {{h, sizeof *h}};
    for (int i = 0; i < nbody; i++) parts[1 + i] = body[i];
    atomic_fetch_add(&t->ctx->writes_sent, 1);
    return tess__sendv(t->ctx, dst, type, parts, 1 + nbody);
}

int tess__remote_send_updates(tess_table *t, int dst, const uint8_t *keys, const uint8_t *vals,
                              size_t n)
{
    tess__table_hdr h = {.table = (uint32_t)t->index, .n = n};
    tess__part body[2] = {{keys, n * t->key_size}, {vals, n * t->value_size}};
    int rc = send_write(t, dst, TESS_MSG_UPDATES, &h, body, 2);
    atomic_fetch_add(&t->ctx->tabs->updates_remote, n);
    return rc;
}

static int send_key_value(tess_table *t, int dst, uint32_t type, const void *key, const void *val,
                          size_t len)
{
    tess__table_hdr h = {.table = (uint32_t)t->index, .arg = (uint32_t)len};
    tess__part body[2] = {{key, t->key_size}, {val, len}};
    return send_write(t, dst, type, &h, body, 2);
}

int tess__remote_put(tess_table *t, int dst, const void *key, const void *val, size_t len)
{
    return send_key_value(t, dst, TESS_MSG_PUT, key, val, len);
}

int tess__remote_remove(tess_table *t, int dst, const void *key)
{
    return send_key_value(t, dst, TESS_MSG_REMOVE, key, NULL, 0);
}

/* A request about table t to dst, with an optional key; a reply that fits
 * `sink` lands there, any other comes back malloc'd. */
static int table_request_into(tess_table *t, int dst, uint32_t type, uint32_t arg, const void *key,
                              const tess__reply_sink *sink, void **rep, size_t *rlen)
{
    size_t klen = key ? t->key_size : 0;
    uint8_t *body = malloc(sizeof(tess__table_hdr) + klen);
    if (body == NULL) return TESS_ERR_NOMEM;
    tess__table_hdr h = {.table = (uint32_t)t->index, .arg = arg};
    memcpy(body, &h, sizeof h);
    if (klen) memcpy(body + sizeof h, key, klen);
    int rc = tess__request_into(t->ctx, dst, type, body, sizeof h + klen, sink, rep, rlen);
    free(body);
    return rc;
}

static int table_request(tess_table *t, int dst, uint32_t type, uint32_t arg, const void *key,
                         void **rep, size_t *rlen)
{
    return table_request_into(t, dst, type, arg, key, NULL, rep, rlen);
}

int tess__remote_get(tess_table *t, int dst, const void *key, void *out, size_t cap,
                     size_t *len_out)
{
    void *rep = NULL;
    size_t rlen = 0;
    uint64_t len = 0;
    /* the reply is the value's length, then the value: straight into out when it fits */
    tess__reply_sink sink = {&len, 8, out, out != NULL ? cap : 0};
    int rc = table_request_into(t, dst, TESS_MSG_GET_REQ, out != NULL, key, &sink, &rep, &rlen);
    if (rc == TESS_ERR_NOTFOUND) {
        free(rep);
        return 0;
    }
    if (rc != TESS_OK) return rc;
    if (rep != NULL && rlen >= 8) memcpy(&len, rep, 8); /* too large for out: length only */
    free(rep);
    if (len_out) *len_out = len;
    return 1;
}

/* The request's body after the table header: where the chunk starts and
 * its budget in bytes. */
typedef struct chunk_req {
    uint64_t from, budget;
} chunk_req;

int tess__remote_chunk(tess_table *t, int p, uint64_t from, size_t budget, uint8_t **buf_out,
                       size_t *len_out)
{
    chunk_req cr = {from, budget};
    uint8_t body[sizeof(tess__table_hdr) + sizeof cr];
    tess__table_hdr h = {.table = (uint32_t)t->index, .arg = (uint32_t)p};
    memcpy(body, &h, sizeof h);
    memcpy(body + sizeof h, &cr, sizeof cr);
    void *rep = NULL;
    int rc = tess__request_into(t->ctx, tess__owner(t, p), TESS_MSG_SNAPSHOT_REQ, body, sizeof body,
                                NULL, &rep, len_out);
    if (rc == TESS_OK && *len_out < TESS__CHUNK_HEAD) rc = TESS_ERR_FORMAT;
    if (rc == TESS_OK) *buf_out = rep;
    else free(rep);
    return rc;
}

int tess__remote_clear(tess_table *t, int dst)
{
    return table_request(t, dst, TESS_MSG_CLEAR_REQ, 0, NULL, NULL, NULL);
}

/* A SIZE request: arg 0 asks for the number of keys, TAKE_CHANGES for the
 * count of changed values (and restarts it). */
#define TAKE_CHANGES 1

static int remote_count(tess_table *t, int dst, uint32_t arg, uint64_t *out)
{
    void *rep = NULL;
    size_t rlen = 0;
    int rc = table_request(t, dst, TESS_MSG_SIZE_REQ, arg, NULL, &rep, &rlen);
    *out = 0;
    if (rc == TESS_OK && rlen >= 8) memcpy(out, rep, 8);
    free(rep);
    return rc;
}

int tess__remote_size(tess_table *t, int dst, uint64_t *size_out)
{
    return remote_count(t, dst, 0, size_out);
}

int tess__remote_take_changes(tess_table *t, int dst, uint64_t *changes_out)
{
    return remote_count(t, dst, TAKE_CHANGES, changes_out);
}

/* After tess_table_flush: one round trip per rank written to proves that
 * everything sent before it on that link has been applied. */
int tess__remote_sync_dirty(tess_table *t)
{
    int *ranks = malloc((size_t)t->ctx->nranks * sizeof *ranks);
    if (ranks == NULL) return TESS_ERR_NOMEM;
    int n = tess__buffer_take_dirty(t, ranks), rc = TESS_OK;
    for (int i = 0; i < n && rc == TESS_OK; i++)
        rc = table_request(t, ranks[i], TESS_MSG_SYNC_REQ, 0, NULL, NULL, NULL);
    free(ranks);
    return rc;
}

/* ---- handlers on the owner ---- */

static void on_updates(tess_table *t, const tess__table_hdr *h, const uint8_t *body, size_t len)
{
    size_t kb = h->n * t->key_size;
    if (len >= kb + h->n * t->value_size) tess__table_apply_local(t, body, body + kb, h->n);
    tess__count_applied(t->ctx, 1);
}

static void on_put_or_remove(tess_table *t, uint32_t type, const tess__table_hdr *h,
                             const uint8_t *body, size_t len)
{
    int p = len >= t->key_size ? tess_table_partition_of(t, body) : -1;
    if (p >= 0 && t->parts[p] != NULL) {
        if (type == TESS_MSG_PUT && len >= t->key_size + h->arg)
            tess__table_put_local(t, p, body, body + t->key_size, h->arg);
        else if (type == TESS_MSG_REMOVE) tess__table_remove_local(t, p, body);
    }
    tess__count_applied(t->ctx, 1);
}

/* Answer a get from the stored bytes, under the partition's lock, when
 * they are what the reader sees (no accumulator view in between): the
 * reply is then copied once into the outgoing message, not first into a
 * buffer of its own.  0 when the general path must answer. */
static int reply_stored(tess_table *t, int p, int src, const tess__req_hdr *rq, const void *key,
                        int with_value)
{
    if (t->value_size && t->acc.kind == TESS_ACC_USER) return 0;
    const void *stored = NULL;
    size_t len = 0;
    pthread_mutex_lock(&t->locks[p]);
    int found = t->parts[p] ? tess__partition_get(t->parts[p], key, &stored, &len) : TESS__MOVED;
    if (found == 1) {
        uint64_t l64 = len;
        tess__part parts[2] = {{&l64, 8}, {stored, with_value ? len : 0}};
        tess__replyv(t->ctx, src, rq, TESS_OK, parts, 2);
    }
    pthread_mutex_unlock(&t->locks[p]);
    return found == 1;
}

static void on_get(tess_table *t, int src, const tess__req_hdr *rq, const tess__table_hdr *h,
                   const uint8_t *key, size_t len)
{
    int p = len >= t->key_size ? tess_table_partition_of(t, key) : -1;
    if (p < 0 || t->parts[p] == NULL) {
        tess__reply(t->ctx, src, rq, TESS_ERR_INVAL, NULL, 0);
        return;
    }
    if (reply_stored(t, p, src, rq, key, h->arg)) return;
    size_t vlen = 0;
    tess__table_get_local(t, p, key, NULL, 0, &vlen);
    uint8_t *out = malloc(8 + vlen);
    if (out == NULL) {
        tess__reply(t->ctx, src, rq, TESS_ERR_NOMEM, NULL, 0);
        return;
    }
    int found = tess__table_get_local(t, p, key, h->arg ? out + 8 : NULL, vlen, &vlen);
    uint64_t l64 = vlen;
    memcpy(out, &l64, 8);
    tess__reply(t->ctx, src, rq, found ? TESS_OK : TESS_ERR_NOTFOUND, out, 8 + (h->arg ? vlen : 0));
    free(out);
}

static void on_chunk(tess_table *t, int src, const tess__req_hdr *rq, uint32_t p,
                     const uint8_t *body, size_t len)
{
    uint8_t *buf = NULL;
    size_t out = 0;
    chunk_req cr = {0, 0};
    if (len >= sizeof cr) memcpy(&cr, body, sizeof cr);
    if (cr.budget > TESS__CHUNK_MAX) cr.budget = TESS__CHUNK_MAX; /* what a reader may ask */
    int rc = len >= sizeof cr && p < (uint32_t)t->nparts && t->parts[p]
                 ? tess__table_chunk_local(t, (int)p, cr.from, (size_t)cr.budget, &buf, &out)
                 : TESS_ERR_INVAL;
    tess__reply(t->ctx, src, rq, rc, buf, out);
    free(buf);
}

static void on_clear_or_size(tess_table *t, int src, const tess__req_hdr *rq, uint32_t type,
                             uint32_t arg)
{
    uint64_t total = 0;
    if (type == TESS_MSG_SIZE_REQ && arg == TAKE_CHANGES) {
        total = atomic_exchange(&t->changes, 0);
        tess__reply(t->ctx, src, rq, TESS_OK, &total, sizeof total);
        return;
    }
    for (int p = 0; p < t->nparts; p++) {
        if (t->parts[p] == NULL) continue;
        pthread_mutex_lock(&t->locks[p]);
        if (type == TESS_MSG_CLEAR_REQ) tess__partition_clear(t->parts[p]);
        total += tess__partition_size(t->parts[p]);
        pthread_mutex_unlock(&t->locks[p]);
    }
    tess__reply(t->ctx, src, rq, TESS_OK, &total, sizeof total);
}

static void on_request(tess_table *t, int src, uint32_t type, const tess__req_hdr *rq,
                       const tess__table_hdr *h, const uint8_t *body, size_t len)
{
    switch (type) {
    case TESS_MSG_GET_REQ: on_get(t, src, rq, h, body, len); break;
    case TESS_MSG_SNAPSHOT_REQ: on_chunk(t, src, rq, h->arg, body, len); break;
    case TESS_MSG_SYNC_REQ: tess__reply(t->ctx, src, rq, TESS_OK, NULL, 0); break;
    default: on_clear_or_size(t, src, rq, type, h->arg); break;
    }
}

void tess__table_apply_message(tess_ctx *ctx, int src, uint32_t type, const uint8_t *p, size_t len)
{
    int is_req = type == TESS_MSG_GET_REQ || type == TESS_MSG_SNAPSHOT_REQ ||
                 type == TESS_MSG_CLEAR_REQ || type == TESS_MSG_SIZE_REQ ||
                 type == TESS_MSG_SYNC_REQ;
    tess__req_hdr rq = {0, 0, 0};
    if (is_req) {
        if (tess__msg_head(&rq, sizeof rq, p, len) != 0) return;
        p += sizeof rq;
        len -= sizeof rq;
    }
    tess__table_hdr h;
    if (tess__msg_head(&h, sizeof h, p, len) != 0) return;
    if (h.table >= (uint32_t)ctx->ntables) return;
    tess_table *t = ctx->tables[h.table];
    p += sizeof h;
    len -= sizeof h;
    if (is_req) on_request(t, src, type, &rq, &h, p, len);
    else if (type == TESS_MSG_UPDATES) on_updates(t, &h, p, len);
    else if (type == TESS_MSG_PUT || type == TESS_MSG_REMOVE) on_put_or_remove(t, type, &h, p, len);
}

void tess__table_set_intercept(tess_ctx *ctx, tess__msg_handler *fn) { ctx->table_intercept = fn; }

void tess__table_on_message(tess_ctx *ctx, int src, uint32_t type, const uint8_t *p, size_t len)
{
    tess__msg_handler *intercept = ctx->table_intercept;
    if (intercept != NULL) intercept(ctx, src, type, p, len);
    else tess__table_apply_message(ctx, src, type, p, len);
}
