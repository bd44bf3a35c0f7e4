/*
 * migrate.c — moving partition p of a table group (a table and every table
 * grouped with it) from its owner O to a rank N while kernels on every rank
 * keep writing to it; work stealing (sched/steal.c) moves a stolen task's
 * partitions this way.  One migration at a time (steal.c waits for the last
 * one to finish).  docs/stealing.md argues the protocol in full:
 *
 *  1. O takes the placement write lock, sends BEGIN to N, and makes N the
 *     owner of p in its own view.  O keeps applying writes for p that
 *     arrive, because it still holds the partition.
 *  2. N, on BEGIN, starts holding every message about p, makes itself the
 *     owner (write lock), sends its MARKER to O, and sends ANNOUNCE to every
 *     other rank X, which makes N the owner and sends its MARKER to O.  A
 *     rank decides and sends every write under the placement read lock
 *     (table_route.c), so its MARKER follows every write it sent to O and
 *     precedes every write it sends to N.
 *  3. O, with a MARKER from each other rank, has applied every write that
 *     will ever reach it for p: it takes p out of its tables and ships the
 *     partitions (and the stolen task) to N in DATA.
 *  4. N installs them, applies the held writes in arrival order (each
 *     link's order is kept, so each writer's order is), publishes the
 *     partitions, answers the held requests, queues the task and tells
 *     rank 0.
 *
 * Writes are never forwarded in this protocol; requests that reach a rank
 * which no longer holds the partition (a get routed on a stale view) are
 * passed on to the owner in FWD, which keeps the requester's address.  The
 * barrier's counts stay exact: a held write counts as applied when applied.
 */
#include <stdlib.h>
#include <string.h>
#include "table_internal.h"

/* The header of table messages; the same layout as table_remote.c's. */
typedef struct mig_table_hdr {
    uint32_t table;
    uint32_t arg;
    uint64_t n;
} mig_table_hdr;

typedef struct mig_msg {
    int32_t group, part, from, to;
} mig_msg;

/* A table message waiting for its partition to arrive. */
typedef struct held_msg {
    struct held_msg *next;
    int src;
    uint32_t type;
    size_t len;
    uint8_t data[];
} held_msg;

typedef struct tess__migrate {
    pthread_rwlock_t place;           /* placement: owners change under the write lock */
    pthread_mutex_t mu;               /* everything below; never held while taking `place` */
    _Atomic int ever;                 /* a migration touched this rank: check messages */
    int in_active, in_group, in_part; /* N: partition on its way here */
    held_msg *held, **held_tail;
    int out_active, out_group, out_part, out_to, markers; /* O: moving out */
    uint8_t *task; /* the stolen tasks, handed to N with the data */
    size_t task_len;
    tess__migrate_task_fn *task_sink; /* N: receives them (the scheduler's) */
} tess__migrate;

int tess__migrate_create(tess_ctx *ctx)
{
    tess__migrate *m = calloc(1, sizeof *m);
    if (m == NULL) return TESS_ERR_NOMEM;
    /* readers may nest (a flush delivering to this rank); they must not wait
     * behind a queued writer */
    tess__rwlock_init(&m->place, PTHREAD_RWLOCK_PREFER_READER_NP);
    pthread_mutex_init(&m->mu, NULL);
    m->held_tail = &m->held;
    ctx->mig = m;
    return TESS_OK;
}

void tess__migrate_destroy(tess_ctx *ctx)
{
    tess__migrate *m = ctx->mig;
    if (m == NULL) return;
    while (m->held != NULL) {
        held_msg *h = m->held;
        m->held = h->next;
        free(h);
    }
    free(m->task);
    pthread_rwlock_destroy(&m->place);
    pthread_mutex_destroy(&m->mu);
    free(m);
    ctx->mig = NULL;
}

void tess__place_rdlock(tess_ctx *ctx) { pthread_rwlock_rdlock(&ctx->mig->place); }
void tess__place_unlock(tess_ctx *ctx) { pthread_rwlock_unlock(&ctx->mig->place); }

/* Caller holds the placement write lock. */
static void set_owner(tess_ctx *ctx, int group, int p, int owner)
{
    for (int i = 0; i < ctx->ntables; i++) {
        tess_table *t = ctx->tables[i];
        if (t->group != group) continue;
        /* the version first: a thread that reads the new owner then sees the
         * new version too (table_buffer.c's owner_for_buffer relies on it) */
        atomic_fetch_add(&t->placement_version, 1);
        __atomic_store_n(&t->owner[p], owner, __ATOMIC_RELEASE);
    }
}

static void send_mig(tess_ctx *ctx, int dst, uint32_t type, const mig_msg *msg)
{
    tess__send(ctx, dst, type, msg, sizeof *msg, NULL, 0);
}

uint64_t tess__migrate_group_bytes(tess_ctx *ctx, int group, int p)
{
    uint64_t bytes = 0;
    for (int i = 0; i < ctx->ntables; i++) {
        tess_table *t = ctx->tables[i];
        if (t->group != group || p >= t->nparts) continue;
        pthread_mutex_lock(&t->locks[p]);
        if (t->parts[p] != NULL) bytes += tess__partition_bytes(t->parts[p]);
        pthread_mutex_unlock(&t->locks[p]);
    }
    return bytes;
}

/* ---- 1. the old owner starts ---- */

int tess__migrate_begin(tess_ctx *ctx, int group, int p, int to, const uint8_t *task,
                        size_t task_len)
{
    tess__migrate *m = ctx->mig;
    uint8_t *copy = malloc(task_len ? task_len : 1);
    if (copy == NULL) return TESS_ERR_NOMEM;
    memcpy(copy, task, task_len);
    pthread_mutex_lock(&m->mu);
    int busy = m->out_active || m->in_active;
    if (!busy) {
        m->out_active = 1;
        m->out_group = group;
        m->out_part = p;
        m->out_to = to;
        m->markers = 0;
        m->task = copy;
        m->task_len = task_len;
        atomic_store(&m->ever, 1);
    }
    pthread_mutex_unlock(&m->mu);
    if (busy) {
        free(copy);
        return TESS_ERR_MISUSE;
    }
    mig_msg msg = {group, p, ctx->rank, to};
    pthread_rwlock_wrlock(&m->place);
    send_mig(ctx, to, TESS_MSG_MIG_BEGIN, &msg);
    set_owner(ctx, group, p, to);
    pthread_rwlock_unlock(&m->place);
    return TESS_OK;
}

/* ---- 2. the new owner and every other rank switch ---- */

/* Every write this rank sent to the old owner precedes the marker. */
static void switch_and_mark(tess_ctx *ctx, const mig_msg *msg)
{
    pthread_rwlock_wrlock(&ctx->mig->place);
    set_owner(ctx, msg->group, msg->part, msg->to);
    send_mig(ctx, msg->from, TESS_MSG_MIG_MARKER, msg);
    pthread_rwlock_unlock(&ctx->mig->place);
}

static void on_begin(tess_ctx *ctx, const mig_msg *msg)
{
    tess__migrate *m = ctx->mig;
    pthread_mutex_lock(&m->mu);
    m->in_active = 1;
    m->in_group = msg->group;
    m->in_part = msg->part;
    atomic_store(&m->ever, 1);
    pthread_mutex_unlock(&m->mu);
    switch_and_mark(ctx, msg);
    for (int r = 0; r < ctx->nranks; r++)
        if (r != msg->from && r != ctx->rank) send_mig(ctx, r, TESS_MSG_MIG_ANNOUNCE, msg);
}

static void on_announce(tess_ctx *ctx, const mig_msg *msg)
{
    atomic_store(&ctx->mig->ever, 1);
    switch_and_mark(ctx, msg);
}

/* ---- 3. the old owner ships ---- */

/* Take partition p of t out of this rank; its encoding is appended to *out. */
static int take_out(tess_table *t, int p, uint8_t **out, size_t *len)
{
    uint8_t *enc = NULL;
    size_t elen = 0;
    pthread_mutex_lock(&t->locks[p]);
    tess__partition *part = t->parts[p];
    int rc = part ? tess__partition_encode(part, &enc, &elen) : TESS_ERR_INVAL;
    if (rc == TESS_OK) __atomic_store_n(&t->parts[p], NULL, __ATOMIC_RELEASE);
    pthread_mutex_unlock(&t->locks[p]);
    if (rc != TESS_OK) return rc;
    tess__partition_free(part);
    uint32_t hdr[2] = {(uint32_t)t->index, 0};
    uint64_t l64 = elen;
    uint8_t *grown = realloc(*out, *len + sizeof hdr + 8 + elen);
    if (grown == NULL) {
        free(enc);
        return TESS_ERR_NOMEM;
    }
    memcpy(grown + *len, hdr, sizeof hdr);
    memcpy(grown + *len + sizeof hdr, &l64, 8);
    memcpy(grown + *len + sizeof hdr + 8, enc, elen);
    *out = grown;
    *len += sizeof hdr + 8 + elen;
    free(enc);
    return TESS_OK;
}

/* DATA: mig_msg, u32 tables, per table (u32 index, u32 pad, u64 bytes,
 * encoding), u64 task bytes, task.  m->mu held. */
static void ship(tess_ctx *ctx, tess__migrate *m)
{
    mig_msg msg = {m->out_group, m->out_part, ctx->rank, m->out_to};
    size_t len = sizeof msg + 4;
    uint8_t *buf = malloc(len);
    uint32_t ntables = 0;
    int rc = buf ? TESS_OK : TESS_ERR_NOMEM;
    for (int i = 0; rc == TESS_OK && i < ctx->ntables; i++) {
        tess_table *t = ctx->tables[i];
        if (t->group != m->out_group) continue;
        rc = take_out(t, m->out_part, &buf, &len);
        ntables++;
    }
    uint64_t tl = m->task_len;
    uint8_t *grown = rc == TESS_OK ? realloc(buf, len + 8 + tl) : NULL;
    if (grown == NULL) {
        tess__warn(ctx, "cannot ship partition %d to rank %d: out of memory", m->out_part,
                   m->out_to);
        abort(); /* the partition has left this rank's tables: no way back */
    }
    buf = grown;
    memcpy(buf, &msg, sizeof msg);
    memcpy(buf + sizeof msg, &ntables, 4);
    memcpy(buf + len, &tl, 8);
    memcpy(buf + len + 8, m->task, tl);
    tess__send(ctx, m->out_to, TESS_MSG_MIG_DATA, buf, len + 8 + tl, NULL, 0);
    free(buf);
    free(m->task);
    m->task = NULL;
    m->out_active = 0;
    atomic_fetch_add(&ctx->tabs->mig_out, 1);
}

static void on_marker(tess_ctx *ctx)
{
    tess__migrate *m = ctx->mig;
    pthread_mutex_lock(&m->mu);
    if (m->out_active && ++m->markers == ctx->nranks - 1) ship(ctx, m);
    pthread_mutex_unlock(&m->mu);
}

/* ---- 4. the new owner installs ---- */

/* A held write, applied to the fresh (not yet published) partition. */
static void apply_held_write(tess_ctx *ctx, tess_table *t, tess__partition *part, const held_msg *h)
{
    mig_table_hdr th;
    memcpy(&th, h->data, sizeof th);
    const uint8_t *body = h->data + sizeof th;
    if (h->type == TESS_MSG_UPDATES)
        tess__partition_update_batch(part, body, body + th.n * t->key_size, th.n);
    else if (h->type == TESS_MSG_PUT) tess__partition_put(part, body, body + t->key_size, th.arg);
    else tess__partition_remove(part, body);
    tess__count_applied(ctx, 1);
}

static int is_write(uint32_t type)
{
    return type == TESS_MSG_UPDATES || type == TESS_MSG_PUT || type == TESS_MSG_REMOVE;
}

/* Decode the DATA tables into fresh partitions (parts[i] for table i). */
static int decode_tables(tess_ctx *ctx, int p, const uint8_t *d, size_t len, size_t *off,
                         tess__partition **fresh)
{
    uint32_t ntables;
    memcpy(&ntables, d + *off, 4);
    *off += 4;
    for (uint32_t k = 0; k < ntables; k++) {
        uint32_t hdr[2];
        uint64_t bytes;
        if (len - *off < sizeof hdr + 8) return TESS_ERR_FORMAT;
        memcpy(hdr, d + *off, sizeof hdr);
        memcpy(&bytes, d + *off + sizeof hdr, 8);
        *off += sizeof hdr + 8;
        if (hdr[0] >= (uint32_t)ctx->ntables || bytes > len - *off) return TESS_ERR_FORMAT;
        fresh[hdr[0]] = tess__table_new_partition(ctx->tables[hdr[0]], p);
        if (fresh[hdr[0]] == NULL) return TESS_ERR_NOMEM;
        int rc = tess__partition_decode_into(fresh[hdr[0]], d + *off, (size_t)bytes);
        if (rc != TESS_OK) return rc;
        *off += (size_t)bytes;
    }
    return TESS_OK;
}

static void publish(tess_ctx *ctx, int p, tess__partition **fresh)
{
    for (int i = 0; i < ctx->ntables; i++) {
        if (fresh[i] == NULL) continue;
        tess_table *t = ctx->tables[i];
        pthread_mutex_lock(&t->locks[p]);
        __atomic_store_n(&t->parts[p], fresh[i], __ATOMIC_RELEASE);
        pthread_mutex_unlock(&t->locks[p]);
    }
}

/* Held writes go into the fresh partitions; held requests are returned. */
static held_msg *apply_held(tess_ctx *ctx, tess__migrate *m, tess__partition **fresh)
{
    held_msg *requests = NULL, **tail = &requests;
    while (m->held != NULL) {
        held_msg *h = m->held;
        m->held = h->next;
        h->next = NULL;
        mig_table_hdr th;
        memcpy(&th, h->data, sizeof th);
        if (is_write(h->type) && fresh[th.table] != NULL) {
            apply_held_write(ctx, ctx->tables[th.table], fresh[th.table], h);
            free(h);
            continue;
        }
        *tail = h;
        tail = &h->next;
    }
    m->held_tail = &m->held;
    return requests;
}

static void on_data(tess_ctx *ctx, int src, const uint8_t *d, size_t len)
{
    tess__migrate *m = ctx->mig;
    mig_msg msg;
    size_t off = sizeof msg;
    tess__partition **fresh = calloc((size_t)ctx->ntables, sizeof *fresh);
    if (fresh == NULL || len < sizeof msg + 4) abort();
    memcpy(&msg, d, sizeof msg);
    pthread_mutex_lock(&m->mu);
    int rc = decode_tables(ctx, msg.part, d, len, &off, fresh);
    uint64_t tl = 0;
    if (rc == TESS_OK && len - off >= 8) memcpy(&tl, d + off, 8);
    if (rc != TESS_OK || tl > len - off - 8) {
        tess__warn(ctx, "partition %d from rank %d arrived damaged (%s)", msg.part, src,
                   tess_strerror(rc ? rc : TESS_ERR_FORMAT));
        abort();
    }
    held_msg *requests = apply_held(ctx, m, fresh);
    publish(ctx, msg.part, fresh);
    m->in_active = 0;
    pthread_mutex_unlock(&m->mu);
    free(fresh);
    while (requests != NULL) {
        held_msg *h = requests;
        requests = h->next;
        tess__table_deliver(ctx, h->src, h->type, h->data, h->len);
        free(h);
    }
    atomic_fetch_add(&ctx->tabs->mig_in, 1);
    if (ctx->mig->task_sink != NULL) ctx->mig->task_sink(ctx, src, d + off + 8, (size_t)tl);
}

/* ---- holding and passing on table messages ---- */

static int is_request(uint32_t type)
{
    return type == TESS_MSG_GET_REQ || type == TESS_MSG_SNAPSHOT_REQ ||
           type == TESS_MSG_CLEAR_REQ || type == TESS_MSG_SIZE_REQ || type == TESS_MSG_SYNC_REQ;
}

/* m->mu held. */
static int hold(tess__migrate *m, int src, uint32_t type, const void *a, size_t alen, const void *b,
                size_t blen)
{
    held_msg *h = malloc(sizeof *h + alen + blen);
    if (h == NULL) abort(); /* dropping it would lose a write */
    h->next = NULL;
    h->src = src;
    h->type = type;
    h->len = alen + blen;
    memcpy(h->data, a, alen);
    if (blen) memcpy(h->data + alen, b, blen);
    *m->held_tail = h;
    m->held_tail = &h->next;
    return 1;
}

static int src_has_held(const tess__migrate *m, int src)
{
    for (const held_msg *h = m->held; h != NULL; h = h->next)
        if (h->src == src) return 1;
    return 0;
}

/* Pass a message on to `dst`, keeping its original sender. */
static void forward(tess_ctx *ctx, int dst, int src, uint32_t type, const void *a, size_t alen,
                    const void *b, size_t blen)
{
    size_t len = 8 + alen + blen;
    uint8_t *buf = malloc(len);
    if (buf == NULL) abort();
    int32_t s32 = src;
    memcpy(buf, &s32, 4);
    memcpy(buf + 4, &type, 4);
    memcpy(buf + 8, a, alen);
    if (blen) memcpy(buf + 8 + alen, b, blen);
    if (is_write(type)) atomic_fetch_add(&ctx->writes_sent, 1); /* before the apply below */
    tess__send(ctx, dst, TESS_MSG_MIG_FWD, buf, len, NULL, 0);
    free(buf);
}

/* Where a message about partition p of t goes now: 0 here, 1 held, 2 on. */
enum { HERE, HOLD, PASS };

static int fate(const tess__migrate *m, const tess_table *t, int p)
{
    if (p < 0 || tess__part_here(t, p) != NULL) return HERE;
    if (m->in_active && t->group == m->in_group && p == m->in_part) return HOLD;
    return PASS;
}

static int partition_of_msg(const tess_table *t, uint32_t type, const mig_table_hdr *h,
                            const uint8_t *body, size_t blen)
{
    if (type == TESS_MSG_SNAPSHOT_REQ) return (int)h->arg;
    if (blen < t->key_size) return -1;
    return tess_table_partition_of(t, body);
}

/* An update batch touching partitions not installed here: split it. */
static void split_updates(tess_ctx *ctx, tess__migrate *m, tess_table *t, int src,
                          const mig_table_hdr *h, const uint8_t *body)
{
    size_t ks = t->key_size, vs = t->value_size;
    const uint8_t *keys = body, *vals = body + h->n * ks;
    int held = 0;
    for (uint64_t i = 0; i < h->n;) {
        int p = tess_table_partition_of(t, keys + i * ks), f = fate(m, t, p);
        uint64_t j = i + 1;
        while (j < h->n && tess_table_partition_of(t, keys + j * ks) == p) j++;
        size_t n = (size_t)(j - i);
        mig_table_hdr sub = {h->table, h->arg, n};
        uint8_t *kv = malloc(n * (ks + vs));
        if (kv == NULL) abort();
        memcpy(kv, keys + i * ks, n * ks);
        memcpy(kv + n * ks, vals + i * vs, n * vs);
        if (f == HERE) tess__table_apply_local(t, kv, kv + n * ks, n);
        else if (f == HOLD)
            held += hold(m, src, TESS_MSG_UPDATES, &sub, sizeof sub, kv, n * (ks + vs));
        else if (tess__owner(t, p) == ctx->rank) tess__table_apply_local(t, kv, kv + n * ks, n);
        else
            forward(ctx, tess__owner(t, p), src, TESS_MSG_UPDATES, &sub, sizeof sub, kv,
                    n * (ks + vs));
        free(kv);
        i = j;
    }
    /* one message counted sent; each held part counts as applied when applied */
    if (held == 0) tess__count_applied(ctx, 1);
    else atomic_fetch_sub(&ctx->writes_applied, (uint64_t)held - 1);
}

static int updates_all_here(const tess_table *t, const mig_table_hdr *h, const uint8_t *body,
                            size_t blen)
{
    if (blen < h->n * (t->key_size + t->value_size)) return 1; /* malformed: normal path */
    for (uint64_t i = 0; i < h->n; i++) {
        int p = tess_table_partition_of(t, body + i * t->key_size);
        if (p >= 0 && tess__part_here(t, p) == NULL) return 0;
    }
    return 1;
}

/* m->mu held.  1 if the message was held or passed on. */
static int intercept_locked(tess_ctx *ctx, tess__migrate *m, int src, uint32_t type,
                            const uint8_t *msg, size_t len, size_t hoff, const mig_table_hdr *h)
{
    tess_table *t = ctx->tables[h->table];
    const uint8_t *body = msg + hoff + sizeof *h;
    size_t blen = len - hoff - sizeof *h;
    if (type == TESS_MSG_SYNC_REQ)
        return m->in_active && src_has_held(m, src) ? hold(m, src, type, msg, len, NULL, 0) : 0;
    if (type == TESS_MSG_UPDATES) {
        if (updates_all_here(t, h, body, blen)) return 0;
        split_updates(ctx, m, t, src, h, body);
        return 1;
    }
    int p = partition_of_msg(t, type, h, body, blen), f = fate(m, t, p);
    if (f == HOLD) return hold(m, src, type, msg, len, NULL, 0);
    if (f == HERE) return 0;
    if (tess__owner(t, p) == ctx->rank) { /* cannot happen: owned here means installed */
        tess__warn(ctx, "table %s: message for partition %d, not here yet", t->name, p);
        return 0;
    }
    forward(ctx, tess__owner(t, p), src, type, msg, len, NULL, 0);
    if (is_write(type)) tess__count_applied(ctx, 1);
    return 1;
}

int tess__migrate_intercept(tess_ctx *ctx, int src, uint32_t type, const uint8_t *msg, size_t len)
{
    tess__migrate *m = ctx->mig;
    if (m == NULL || !atomic_load_explicit(&m->ever, memory_order_acquire)) return 0;
    if (!is_write(type) && !is_request(type)) return 0;
    if (type == TESS_MSG_CLEAR_REQ || type == TESS_MSG_SIZE_REQ) return 0;
    size_t hoff = is_request(type) ? sizeof(tess__req_hdr) : 0;
    mig_table_hdr h;
    if (len < hoff + sizeof h) return 0;
    memcpy(&h, msg + hoff, sizeof h);
    if (h.table >= (uint32_t)ctx->ntables) return 0;
    pthread_mutex_lock(&m->mu);
    int taken = intercept_locked(ctx, m, src, type, msg, len, hoff, &h);
    pthread_mutex_unlock(&m->mu);
    return taken;
}

static void on_forwarded(tess_ctx *ctx, const uint8_t *p, size_t len)
{
    int32_t src;
    uint32_t type;
    if (len < 8) return;
    memcpy(&src, p, 4);
    memcpy(&type, p + 4, 4);
    if (src < 0 || src >= ctx->nranks) return;
    tess__table_deliver(ctx, src, type, p + 8, len - 8);
}

void tess__migrate_on_message(tess_ctx *ctx, int src, uint32_t type, const uint8_t *p, size_t len)
{
    mig_msg msg;
    if (type == TESS_MSG_MIG_FWD) {
        on_forwarded(ctx, p, len);
        return;
    }
    if (type == TESS_MSG_MIG_DATA) {
        on_data(ctx, src, p, len);
        return;
    }
    if (tess__msg_head(&msg, sizeof msg, p, len) != 0) return;
    if (type == TESS_MSG_MIG_BEGIN) on_begin(ctx, &msg);
    else if (type == TESS_MSG_MIG_ANNOUNCE) on_announce(ctx, &msg);
    else if (type == TESS_MSG_MIG_MARKER) on_marker(ctx);
}

void tess__migrate_set_task_sink(tess_ctx *ctx, tess__migrate_task_fn *fn)
{
    ctx->mig->task_sink = fn;
}
