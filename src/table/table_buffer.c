/*
 * table_buffer.c — each thread's write buffers for each table.
 *
 * Updates to partitions of this rank collect in a short local buffer that is
 * applied in partition-grouped batches (one lock per partition per batch,
 * not one per key).  Updates to other ranks go into a combiner per
 * destination rank: a small hash map that merges updates to the same key
 * with the table's accumulator, sent as one message when it fills, when the
 * kernel instance ends, on flush and at barriers.  Both buffers keep the
 * issue order of one thread's writes to one key.  When a partition changes
 * owner (work stealing), a thread flushes everything it buffered under the
 * old placement before it routes a new write, and a flushed combiner goes to
 * the owners of its keys at the time of sending (table_route.c), so a key's
 * older writes can never be overtaken by newer ones on another path.
 *
 * Timeout flush: besides those, a thread sends all its buffers of a table
 * once the oldest write in them is older than the table's flush_ns, so
 * kernels that run for long see each other's writes without flushing.  No
 * timer thread can touch the buffers (they are the thread's own, unlocked),
 * so the thread itself looks at the clock: every CHECK_EVERY buffered
 * writes, and on entry to any table operation (tess__buffer_flush_expired:
 * a kernel polling a key, or about to wait for a remote reply).  A send
 * that took long (a dense table's private array is scanned whole) stretches
 * the next wait to COST_FACTOR times its CPU time, so the timeout never
 * costs more than about 1/COST_FACTOR of the kernel's time.
 */
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include "table_internal.h"

#define LOCAL_CAP 4096
#define REMOTE_CAP 16384
#define CHECK_EVERY 64 /* buffered writes between two looks at the clock */
#define COST_FACTOR 32 /* a send's cost times this: the least wait before the next */

typedef struct combiner {
    uint8_t *keys, *vals;
    size_t n;
    uint32_t *index; /* open addressing: entry+1, 0 = empty; 2*REMOTE_CAP slots */
    int dirty;       /* sent something since the last sync */
} combiner;

struct tess__slot_buffers {
    uint8_t *lkeys, *lvals;
    size_t ln;
    int32_t *part;          /* batch scratch: partition of each entry, -1 remote */
    size_t *group;          /* batch scratch: group starts, nparts+1 */
    uint8_t *skeys, *svals; /* batch scratch: entries grouped by partition */
    combiner *remote;       /* one per rank */
    tess__private *priv;    /* dense tables: this thread's combining array */
    int priv_failed;        /* could not allocate it: use the local buffer */
    unsigned seen_version;  /* table placement the buffered writes were routed under */
    uint64_t oldest_ns;     /* clock at the first write buffered since the last send; 0: none */
    uint64_t stretch_ns;    /* least wait before a timeout send: COST_FACTOR x the last's cost */
    int countdown;          /* buffered writes until the next look at the clock */
};

static void combiner_free(combiner *c)
{
    free(c->keys);
    free(c->vals);
    free(c->index);
}

static void buffers_free(tess__slot_buffers *b, int nranks)
{
    if (b == NULL) return;
    for (int r = 0; b->remote && r < nranks; r++) combiner_free(&b->remote[r]);
    tess__private_free(b->priv);
    TESS_FREE_ALL(b->remote, b->lkeys, b->lvals, b->part, b->group, b->skeys, b->svals, b);
}

void tess__slot_forget_table(tess__slot *slot, int index)
{
    if (index >= slot->nbufs) return;
    buffers_free(slot->bufs[index], slot->ctx->nranks);
    slot->bufs[index] = NULL;
}

void tess__slot_buffers_free(tess__slot *slot)
{
    for (int i = 0; i < slot->nbufs; i++) buffers_free(slot->bufs[i], slot->ctx->nranks);
    free(slot->bufs);
    slot->bufs = NULL;
    slot->nbufs = 0;
}

static tess__slot_buffers *buffers_new(const tess_table *t)
{
    tess__slot_buffers *b = calloc(1, sizeof *b);
    if (b == NULL) return NULL;
    b->lkeys = malloc(LOCAL_CAP * t->key_size);
    b->lvals = malloc(LOCAL_CAP * (t->value_size ? t->value_size : 1));
    b->remote = calloc((size_t)t->ctx->nranks, sizeof *b->remote);
    b->part = malloc(LOCAL_CAP * sizeof *b->part);
    b->group = malloc(((size_t)t->nparts + 1) * sizeof *b->group);
    b->skeys = malloc(LOCAL_CAP * t->key_size);
    b->svals = malloc(LOCAL_CAP * (t->value_size ? t->value_size : 1));
    b->seen_version = atomic_load(&((tess_table *)t)->placement_version);
    if (b->lkeys && b->lvals && b->remote && b->part && b->group && b->skeys && b->svals) return b;
    buffers_free(b, t->ctx->nranks);
    return NULL;
}

/* The calling thread's buffers for t, created on first use. */
static tess__slot_buffers *my_buffers(tess_table *t)
{
    tess__slot *s = tess__current_slot(t->ctx);
    if (t->index >= s->nbufs) {
        tess__slot_buffers **grown = realloc(s->bufs, (size_t)(t->index + 1) * sizeof *grown);
        if (grown == NULL) return NULL;
        memset(grown + s->nbufs, 0, (size_t)(t->index + 1 - s->nbufs) * sizeof *grown);
        s->bufs = grown;
        s->nbufs = t->index + 1;
    }
    if (s->bufs[t->index] == NULL) s->bufs[t->index] = buffers_new(t);
    return s->bufs[t->index];
}

static tess__private *my_private(tess_table *t, tess__slot_buffers *b)
{
    if (b->priv == NULL && !b->priv_failed && tess__private_wanted(t)) {
        b->priv = tess__private_new(t);
        b->priv_failed = b->priv == NULL;
    }
    return b->priv;
}

static int apply_pending(tess_table *t, tess__slot_buffers *b)
{
    if (b->ln == 0) return TESS_OK;
    int rc = tess__table_apply_local(t, b->lkeys, b->lvals, b->ln);
    b->ln = 0;
    return rc;
}

static int flush_local(tess_table *t, tess__slot_buffers *b)
{
    int rc = apply_pending(t, b);
    int mrc = tess__private_merge_all(t, b->priv);
    return rc == TESS_OK ? mrc : rc;
}

static int flush_remote(tess_table *t, tess__slot_buffers *b, int dst)
{
    combiner *c = &b->remote[dst];
    if (c->n == 0) return TESS_OK;
    int rc = tess__route_updates(t, c->keys, c->vals, c->n);
    memset(c->index, 0, 2 * REMOTE_CAP * sizeof *c->index);
    c->n = 0;
    c->dirty = 1;
    return rc;
}

static uint64_t key_hash(const uint8_t *k, size_t n)
{
    uint64_t h = 0;
    for (size_t i = 0; i < n; i += 8) {
        uint64_t w = 0;
        memcpy(&w, k + i, n - i < 8 ? n - i : 8);
        h = tess_mix64(h ^ w);
    }
    return h;
}

static int combiner_ready(const tess_table *t, combiner *c)
{
    if (c->index != NULL) return TESS_OK;
    c->keys = malloc(REMOTE_CAP * t->key_size);
    c->vals = malloc(REMOTE_CAP * t->value_size);
    c->index = calloc(2 * REMOTE_CAP, sizeof *c->index);
    return c->keys && c->vals && c->index ? TESS_OK : TESS_ERR_NOMEM;
}

/* Merge into the pending update of the same key, or add an entry. */
static int combiner_add(tess_table *t, tess__slot_buffers *b, int dst, const void *key,
                        const void *val)
{
    combiner *c = &b->remote[dst];
    if (combiner_ready(t, c) != TESS_OK) return TESS_ERR_NOMEM;
    size_t ks = t->key_size, vs = t->value_size, mask = 2 * REMOTE_CAP - 1;
    for (size_t h = key_hash(key, ks) & mask;; h = (h + 1) & mask) {
        uint32_t e = c->index[h];
        if (e == 0) {
            memcpy(c->keys + c->n * ks, key, ks);
            memcpy(c->vals + c->n * vs, val, vs);
            c->index[h] = (uint32_t)++c->n;
            break;
        }
        if (memcmp(c->keys + (e - 1) * ks, key, ks) == 0) {
            tess__accum_merge(&t->acc, c->vals + (e - 1) * vs, val);
            break;
        }
    }
    return c->n >= REMOTE_CAP ? flush_remote(t, b, dst) : TESS_OK;
}

static int flush_all_of(tess_table *t, tess__slot_buffers *b);

/* A partition of t changed owner since this thread last routed a write:
 * send what it buffered under the old placement first. */
static inline int check_placement(tess_table *t, tess__slot_buffers *b)
{
    unsigned v = atomic_load_explicit(&t->placement_version, memory_order_acquire);
    if (__builtin_expect(v == b->seen_version, 1)) return TESS_OK;
    int rc = flush_all_of(t, b);
    b->seen_version = v;
    return rc;
}

/*
 * The owner of partition p for a write this thread buffers now.  The owner
 * may change between check_placement and this read (the progress thread
 * switches it under the placement write lock, which buffering does not
 * take).  Buffering by the new owner while this thread still holds writes
 * buffered under the old one would put one key's older and newer writes in
 * two buffers, which may then be sent in either order; so a read of the
 * owner counts only if the version is still the one this thread's buffers
 * were routed under (migrate.c bumps the version before the owner, so a
 * new owner is never seen with the old version).  Otherwise everything
 * buffered goes first and the owner is read again.
 */
static int owner_for_buffer(tess_table *t, tess__slot_buffers *b, int p, int *dst_out)
{
    for (;;) {
        int dst = tess__owner(t, p);
        if (atomic_load_explicit(&t->placement_version, memory_order_acquire) == b->seen_version) {
            *dst_out = dst;
            return TESS_OK;
        }
        int rc = check_placement(t, b);
        if (rc != TESS_OK) return rc;
    }
}

static uint64_t clock_of(clockid_t id)
{
    struct timespec ts;
    clock_gettime(id, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static uint64_t clock_ns(void) { return clock_of(CLOCK_MONOTONIC); }

/* Send everything b holds if its oldest write waited long enough at `now`.
 * The send's cost in this thread's CPU time (a thread descheduled meanwhile
 * on a busy machine must not stretch the bound) sets the least wait before
 * the next one. */
static int flush_if_expired(tess_table *t, tess__slot_buffers *b, uint64_t now)
{
    uint64_t wait = t->flush_ns > b->stretch_ns ? t->flush_ns : b->stretch_ns;
    if (b->oldest_ns == 0 || now - b->oldest_ns < wait) return TESS_OK;
    uint64_t cpu = clock_of(CLOCK_THREAD_CPUTIME_ID);
    int rc = flush_all_of(t, b);
    b->stretch_ns = (clock_of(CLOCK_THREAD_CPUTIME_ID) - cpu) * COST_FACTOR;
    return rc;
}

/* After buffering n writes: start the clock of the oldest one, or every
 * CHECK_EVERY writes see whether it expired.  Costs a subtraction on most. */
static inline int note_buffered(tess_table *t, tess__slot_buffers *b, size_t n)
{
    if (t->flush_ns == 0) return TESS_OK;
    if (b->oldest_ns == 0) {
        b->oldest_ns = clock_ns();
        b->countdown = CHECK_EVERY;
        return TESS_OK;
    }
    b->countdown -= n < CHECK_EVERY ? (int)n : CHECK_EVERY;
    if (b->countdown > 0) return TESS_OK;
    b->countdown = CHECK_EVERY;
    return flush_if_expired(t, b, clock_ns());
}

int tess__buffer_flush_expired(tess_ctx *ctx)
{
    tess__slot *s = tess__current_slot(ctx);
    uint64_t now = 0;
    int rc = TESS_OK;
    for (int i = 0; i < s->nbufs && rc == TESS_OK; i++) {
        tess__slot_buffers *b = s->bufs[i];
        if (b == NULL || b->oldest_ns == 0 || ctx->tables[i]->flush_ns == 0) continue;
        if (now == 0) now = clock_ns();
        rc = flush_if_expired(ctx->tables[i], b, now);
    }
    return rc;
}

/* One write into b's buffers (the private array, a combiner or the local
 * buffer). */
static int buffer_one(tess_table *t, tess__slot_buffers *b, const void *key, const void *val)
{
    int crc = check_placement(t, b);
    if (crc != TESS_OK) return crc;
    int p = tess_table_partition_of(t, key);
    if (p < 0) return TESS_ERR_INVAL;
    tess__private *d = my_private(t, b);
    if (d != NULL) {
        uint64_t k;
        memcpy(&k, key, sizeof k);
        tess__private_add(t, d, k, p, val);
        return TESS_OK;
    }
    int dst;
    int orc = owner_for_buffer(t, b, p, &dst);
    if (orc != TESS_OK) return orc;
    if (dst != t->ctx->rank) return combiner_add(t, b, dst, key, val);
    memcpy(b->lkeys + b->ln * t->key_size, key, t->key_size);
    memcpy(b->lvals + b->ln * t->value_size, val, t->value_size);
    return ++b->ln == LOCAL_CAP ? flush_local(t, b) : TESS_OK;
}

int tess__buffer_update(tess_table *t, const void *key, const void *val)
{
    tess__slot_buffers *b = my_buffers(t);
    if (b == NULL) return TESS_ERR_NOMEM;
    int rc = buffer_one(t, b, key, val);
    return rc == TESS_OK ? note_buffered(t, b, 1) : rc;
}

static int flush_all_of(tess_table *t, tess__slot_buffers *b)
{
    b->oldest_ns = 0;
    int rc = flush_local(t, b);
    for (int r = 0; r < t->ctx->nranks; r++) {
        int rrc = flush_remote(t, b, r);
        if (rc == TESS_OK) rc = rrc;
    }
    return rc;
}

int tess__buffer_flush_table(tess_table *t)
{
    tess__slot *s = tess__current_slot(t->ctx);
    if (t->index >= s->nbufs || s->bufs[t->index] == NULL) return TESS_OK;
    return flush_all_of(t, s->bufs[t->index]);
}

int tess__buffer_flush_partition(tess_table *t, int p)
{
    tess__slot *s = tess__current_slot(t->ctx);
    if (t->index >= s->nbufs || s->bufs[t->index] == NULL) return TESS_OK;
    tess__slot_buffers *b = s->bufs[t->index];
    int dst;
    int crc = check_placement(t, b);
    if (crc == TESS_OK) crc = owner_for_buffer(t, b, p, &dst);
    if (crc != TESS_OK) return crc;
    int rc = dst == t->ctx->rank ? apply_pending(t, b) : flush_remote(t, b, dst);
    int mrc = tess__private_merge(t, b->priv, p);
    return rc == TESS_OK ? mrc : rc;
}

int tess__buffer_note_sent(tess_table *t, int dst)
{
    tess__slot_buffers *b = my_buffers(t);
    if (b == NULL) return TESS_ERR_NOMEM;
    b->remote[dst].dirty = 1;
    return TESS_OK;
}

/* Ranks this thread sent updates to since the last call (then forgotten). */
int tess__buffer_take_dirty(tess_table *t, int *ranks_out)
{
    tess__slot *s = tess__current_slot(t->ctx);
    if (t->index >= s->nbufs || s->bufs[t->index] == NULL) return 0;
    int n = 0, all = s->bufs[t->index]->priv != NULL; /* private merges write anywhere */
    for (int r = 0; r < t->ctx->nranks; r++) {
        combiner *c = &s->bufs[t->index]->remote[r];
        if ((c->dirty || all) && r != t->ctx->rank) ranks_out[n++] = r;
        c->dirty = 0;
    }
    return n;
}

int tess__slot_flush_all(tess__slot *slot)
{
    int rc = TESS_OK;
    for (int i = 0; i < slot->nbufs; i++) {
        if (slot->bufs[i] == NULL) continue;
        int frc = flush_all_of(slot->ctx->tables[i], slot->bufs[i]);
        if (rc == TESS_OK) rc = frc;
    }
    return rc;
}

/* Route one chunk: remote entries to their combiners, local ones grouped by
 * partition (stable) into the scratch arrays; returns TESS_ERR_INVAL on a
 * key outside the table. */
static int route_chunk(tess_table *t, tess__slot_buffers *b, const uint8_t *keys,
                       const uint8_t *vals, size_t n)
{
    size_t ks = t->key_size, vs = t->value_size;
    memset(b->group, 0, ((size_t)t->nparts + 1) * sizeof *b->group);
    for (size_t i = 0; i < n; i++) {
        int p = tess_table_partition_of(t, keys + i * ks);
        if (p < 0) return TESS_ERR_INVAL;
        int dst = tess__owner(t, p);
        b->part[i] = dst == t->ctx->rank ? p : -1;
        if (dst == t->ctx->rank) b->group[p + 1]++;
        else if (combiner_add(t, b, dst, keys + i * ks, vals + i * vs) != TESS_OK)
            return TESS_ERR_NOMEM;
    }
    for (int p = 0; p < t->nparts; p++) b->group[p + 1] += b->group[p];
    for (size_t i = 0; i < n; i++) {
        if (b->part[i] < 0) continue;
        size_t at = b->group[b->part[i]]++;
        memcpy(b->skeys + at * ks, keys + i * ks, ks);
        memcpy(b->svals + at * vs, vals + i * vs, vs);
    }
    return TESS_OK;
}

/* After route_chunk, group[p] is the end of partition p's entries. */
static int apply_groups(tess_table *t, tess__slot_buffers *b)
{
    size_t ks = t->key_size, vs = t->value_size, first = 0, applied = 0;
    int rc = TESS_OK;
    for (int p = 0; p < t->nparts && rc == TESS_OK; p++) {
        size_t end = b->group[p];
        if (end > first) {
            pthread_mutex_lock(&t->locks[p]);
            tess__partition *part = t->parts[p];
            if (part != NULL)
                rc = tess__partition_update_batch(part, b->skeys + first * ks,
                                                  b->svals + first * vs, end - first);
            pthread_mutex_unlock(&t->locks[p]);
            if (part == NULL) /* moved away or not arrived yet */
                rc = tess__route_updates(t, b->skeys + first * ks, b->svals + first * vs,
                                         end - first);
            applied += end - first;
        }
        first = end;
    }
    atomic_fetch_add(&t->ctx->tabs->updates_local, applied);
    return rc;
}

/* Private-array path: local keys combine in this thread's array. */
static int batch_private(tess_table *t, tess__private *d, const uint64_t *keys, const uint8_t *vals,
                         size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (keys[i] >= t->key_count) return TESS_ERR_INVAL;
    if (t->acc.kind == TESS_ACC_SUM && t->acc.elem == TESS_F64 && t->value_size == sizeof(double)) {
        tess__private_add_f64_sum(d, keys, (const double *)vals, n);
        tess__private_mark_all(t, d);
        return TESS_OK;
    }
    for (size_t i = 0; i < n; i++)
        tess__private_add(t, d, keys[i], tess_table_partition_of(t, &keys[i]),
                          vals + i * t->value_size);
    return TESS_OK;
}

static int batch_routed(tess_table *t, tess__slot_buffers *b, const void *keys, const void *vals,
                        size_t n);

int tess__buffer_update_batch(tess_table *t, const void *keys, const void *vals, size_t n)
{
    tess__slot_buffers *b = my_buffers(t);
    if (b == NULL) return TESS_ERR_NOMEM;
    int rc = check_placement(t, b);
    if (rc != TESS_OK) return rc;
    tess__private *d = my_private(t, b);
    if (d != NULL) rc = batch_private(t, d, keys, vals, n);
    else rc = batch_routed(t, b, keys, vals, n);
    return rc == TESS_OK ? note_buffered(t, b, n) : rc;
}

/* The batch without a private array: local keys applied, others combined. */
static int batch_routed(tess_table *t, tess__slot_buffers *b, const void *keys, const void *vals,
                        size_t n)
{
    int rc = apply_pending(t, b); /* earlier single updates go first */
    for (size_t off = 0; rc == TESS_OK && off < n; off += LOCAL_CAP) {
        size_t m = n - off < LOCAL_CAP ? n - off : LOCAL_CAP;
        /* A chunk is routed under one placement: an owner that changed in
         * the middle would split one key's writes over two buffers. */
        tess__place_rdlock(t->ctx);
        rc = check_placement(t, b);
        if (rc == TESS_OK)
            rc = route_chunk(t, b, (const uint8_t *)keys + off * t->key_size,
                             (const uint8_t *)vals + off * t->value_size, m);
        if (rc == TESS_OK) rc = apply_groups(t, b);
        tess__place_unlock(t->ctx);
    }
    return rc;
}

int tess__buffer_update_fanout(tess_table *t, const void *keys, size_t n, const void *val)
{
    tess__slot_buffers *b = my_buffers(t);
    if (b == NULL) return TESS_ERR_NOMEM;
    tess__private *d = my_private(t, b);
    const uint8_t *k = keys;
    if (d == NULL || t->acc.kind != TESS_ACC_SUM || t->acc.elem != TESS_F64 ||
        t->value_size != sizeof(double)) {
        for (size_t i = 0; i < n; i++) {
            int rc = tess__buffer_update(t, k + i * t->key_size, val);
            if (rc != TESS_OK) return rc;
        }
        return TESS_OK;
    }
    double v;
    memcpy(&v, val, sizeof v);
    size_t done = tess__private_fanout_f64_sum(d, keys, n, v, t->key_count);
    tess__private_mark_all(t, d);
    if (done != n) return TESS_ERR_INVAL;
    return note_buffered(t, b, n);
}
