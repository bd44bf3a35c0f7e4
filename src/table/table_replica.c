/*
 * table_replica.c — dense tables written a range at a time, and read-only
 * replicas of whole dense tables on every rank.
 *
 * These make a pull-style kernel possible: instance i reads any key of the
 * previous epoch from its rank's replica (plain array loads, no lock, no
 * message) and writes its own partition of the next epoch in one
 * tess_table_put_range().
 *
 * A replicated table (spec.replicated) keeps two arrays per rank: `front`,
 * what tess_table_replica() returns, and `back`, where the ranges written
 * in the current epoch are staged — by the writer on its own rank, and by
 * REPLICA_DATA messages, counted as writes, on the others.  The barrier's
 * count of writes sent and applied therefore also tells that every range
 * is staged everywhere; then rank 0 switches its replicas and sends
 * REPLICA_SWITCH to the other ranks, ahead of any later run on the same
 * link.  A switch swaps the two arrays when the epoch's ranges cover the
 * whole table (PageRank: no copy at all), else copies the staged ranges.
 *
 * Ranks of one node keep both arrays of a replicated table in their
 * node-shared segment (attach_parts, at tess_main), behind a header that
 * says which array is back, which epoch the rank is in (its switches) and
 * the ranges other ranks wrote into it this epoch.  A writer puts its range
 * straight into the back array of every rank beside it that is in the same
 * epoch, and lists it there; no message goes, and none is counted: the
 * writer's DONE, after its copies, is what the barrier waits for, and the
 * switch reads the list with its own staged ranges.  A rank not yet in the
 * writer's epoch (its SWITCH still on the way; the writer waits for it a
 * moment) or a full list gets the range as messages instead.
 *
 * tess_table_replicate() refreshes the front array of any dense table from
 * its partitions, for writes that did not go through put_range: rank 0 asks
 * every rank (REPLICA_REQ) to copy its partitions and send them to every
 * other rank, then a barrier waits until all have landed.  A replica made
 * then counts its epochs from the rank's count of switches, not from 0: a
 * rank that another rank's ranges reach before rank 0's last SWITCH (other
 * links run ahead) holds them for the epoch after that switch.  Counted
 * from 0, the late SWITCH switched the new replica too, and its own ranges
 * then went out one epoch ahead and were held everywhere: replica.sh lost
 * a partition in about 1 run of 3 on 3 ranks.
 */
#include <stdlib.h>
#include <string.h>
#include "sched/sched.h"
#include "table_internal.h"

/* A staged key range of the current epoch. */
typedef struct staged_range {
    uint64_t first, count;
} staged_range;

/* A range of a later epoch that arrived before this rank's switch to it. */
typedef struct held_range {
    struct held_range *next;
    uint64_t generation; /* the epoch it belongs to */
    uint64_t first, count;
    uint8_t values[];
} held_range;

struct tess__replica {
    uint8_t *front;      /* what readers see */
    uint8_t *back;       /* ranges staged this epoch */
    pthread_mutex_t mu;  /* guards back, the lists and the generation */
    uint64_t generation; /* switches done on this rank */
    staged_range *staged;
    size_t nstaged, cap;
    held_range *held, **held_tail;
    /* node-shared segments (attach_parts, at tess_main): peer[r] is this
     * table's part of rank r's segment, or NULL for a rank that gets ranges
     * as messages; peer itself NULL when nothing is shared, and then front
     * and back are this rank's own memory */
    uint8_t **peer;
};

/* The head of a rank's part of its node-shared segment for a replicated
 * table; its two arrays follow (shared_array).  Written by the rank at its
 * switches, read by the ranks beside it, which append to `ranges`. */
#define SHARED_RANGES 1024
typedef struct shared_head {
    _Atomic uint64_t generation; /* the rank's switches: the epoch it is in */
    _Atomic uint32_t back;       /* which array is back: 0 or 1 */
    uint32_t pad;
    _Atomic uint64_t nranges; /* slots taken in ranges this epoch (may pass the end) */
    uint64_t pad2[5];         /* ranges on their own cache lines */
    staged_range ranges[SHARED_RANGES];
} shared_head;

/* Header of REPLICA_DATA; the values follow. */
typedef struct replica_data_hdr {
    uint32_t table;
    uint32_t pad;
    uint64_t generation; /* the sender's: the epoch the range belongs to */
    uint64_t first, count;
} replica_data_hdr;

static int check_dense_fixed(tess_table *t, const char *what)
{
    TESS_RETURN_IF(t->ctx, !t->dense || t->value_size == 0, TESS_ERR_INVAL,
                   "table %s: %s needs a dense table with fixed-size values", t->name, what);
    return TESS_OK;
}

/* ---------------------------------------------------------------- arrays */

static uint8_t *identity_array(const tess_table *t)
{
    uint8_t *a = malloc(t->key_count ? t->key_count * t->value_size : 1);
    for (uint64_t k = 0; a != NULL && k < t->key_count; k++)
        tess__accum_identity(&t->acc, a + k * t->value_size);
    return a;
}

static tess__replica *replica_new(const tess_table *t)
{
    tess__replica *r = calloc(1, sizeof *r);
    if (r == NULL) return NULL;
    pthread_mutex_init(&r->mu, NULL);
    r->held_tail = &r->held;
    /* the epoch this rank is in, not 0: a replica that tess_table_replicate
     * makes on another rank must tell the ranges of the epoch before a
     * switch this rank has not seen yet from those after it, as the replicas
     * made with the table do */
    r->generation = atomic_load(&t->ctx->replica_switches);
    r->front = identity_array(t);
    r->back = identity_array(t);
    if (r->front != NULL && r->back != NULL) return r;
    tess__replica_free(r);
    return NULL;
}

void tess__replica_free(tess__replica *r)
{
    if (r == NULL) return;
    pthread_mutex_destroy(&r->mu);
    if (r->peer == NULL) { /* else they live in the segment */
        free(r->front);
        free(r->back);
    }
    free(r->peer);
    free(r->staged);
    while (r->held != NULL) {
        held_range *h = r->held;
        r->held = h->next;
        free(h);
    }
    free(r);
}

static size_t aligned64(size_t n) { return (n + 63) & ~(size_t)63; }

static size_t array_bytes(const tess_table *t) { return aligned64(t->key_count * t->value_size); }

/* Array i (0 or 1) of a rank's part of its segment. */
static uint8_t *shared_array(uint8_t *part, const tess_table *t, uint32_t i)
{
    return part + aligned64(sizeof(shared_head)) + i * array_bytes(t);
}

/* This rank's part publishes its state after a switch (r->mu held). */
static void publish_state_locked(tess_table *t)
{
    tess__replica *r = t->replica;
    shared_head *h = (shared_head *)(void *)r->peer[t->ctx->rank];
    atomic_store_explicit(&h->nranges, 0, memory_order_relaxed);
    atomic_store_explicit(&h->back, r->back == shared_array((uint8_t *)h, t, 1),
                          memory_order_relaxed);
    atomic_store_explicit(&h->generation, r->generation, memory_order_release);
}

/* The parts of every rank's node-shared segment, at tess_main: this rank's
 * arrays move into its own part. */
static void attach_parts(tess_ctx *ctx, uint8_t *const *ptrs, void *arg)
{
    tess_table *t = arg;
    tess__replica *r = t->replica;
    uint8_t *mine = ptrs[ctx->rank];
    uint8_t **peer = mine ? calloc((size_t)ctx->nranks, sizeof *peer) : NULL;
    if (peer == NULL) return; /* then messages carry every range */
    for (int k = 0; k < ctx->nranks; k++) peer[k] = ptrs[k];
    size_t bytes = t->key_count * t->value_size;
    memcpy(shared_array(mine, t, 0), r->front, bytes);
    memcpy(shared_array(mine, t, 1), r->back, bytes);
    free(r->front);
    free(r->back);
    r->front = shared_array(mine, t, 0);
    r->back = shared_array(mine, t, 1);
    r->peer = peer;
    pthread_mutex_lock(&r->mu);
    publish_state_locked(t);
    pthread_mutex_unlock(&r->mu);
}

/*
 * A replicated table asks for both its arrays and a head in this rank's
 * node-shared segment, so that a range written on a rank beside it costs
 * one copy, by the writer, instead of the messages' four (into the batch,
 * through MPI's shared memory in and out, into the staging array: 4-rank
 * PageRank spent half its iteration on them) and a progress thread's time.
 */
int tess__replica_create(tess_table *t)
{
    t->replica = replica_new(t);
    if (t->replica == NULL) return TESS_ERR_NOMEM;
    size_t bytes = t->key_count ? aligned64(sizeof(shared_head)) + 2 * array_bytes(t) : 0;
    return tess__comm_share_request(t->ctx, bytes, attach_parts, t);
}

/* Note keys first..first+count-1 as staged in back; r->mu held. */
static int note_staged_locked(tess__replica *r, uint64_t first, uint64_t count)
{
    if (r->nstaged == r->cap) {
        size_t cap = r->cap ? 2 * r->cap : 16;
        staged_range *grown = realloc(r->staged, cap * sizeof *grown);
        if (grown == NULL) return TESS_ERR_NOMEM;
        r->staged = grown;
        r->cap = cap;
    }
    r->staged[r->nstaged++] = (staged_range){first, count};
    return TESS_OK;
}

/* Stage values of keys first..first+count-1 for the next switch; r->mu held. */
static int stage_locked(tess_table *t, uint64_t first, uint64_t count, const void *values)
{
    tess__replica *r = t->replica;
    int rc = note_staged_locked(r, first, count);
    if (rc == TESS_OK) memcpy(r->back + first * t->value_size, values, count * t->value_size);
    return rc;
}

/* Another rank's range of a later epoch, kept until this rank switches to
 * that epoch (REPLICA_SWITCH from rank 0 and a faster rank's data race on
 * different links).  It may be more than one epoch ahead: two barriers with
 * no run between them switch twice, and a barrier that needs no message
 * lets rank 0 send both switches and the next run at once.  r->mu held. */
static int hold_locked(tess_table *t, uint64_t generation, uint64_t first, uint64_t count,
                       const void *values)
{
    size_t bytes = count * t->value_size;
    held_range *h = malloc(sizeof *h + bytes);
    if (h == NULL) return TESS_ERR_NOMEM;
    h->next = NULL;
    h->generation = generation;
    h->first = first;
    h->count = count;
    memcpy(h->values, values, bytes);
    *t->replica->held_tail = h;
    t->replica->held_tail = &h->next;
    return TESS_OK;
}

/* Stage a range written in epoch `generation` (any thread). */
static int stage(tess_table *t, uint64_t generation, uint64_t first, uint64_t count,
                 const void *values)
{
    tess__replica *r = t->replica;
    pthread_mutex_lock(&r->mu);
    int rc = generation > r->generation ? hold_locked(t, generation, first, count, values)
                                        : stage_locked(t, first, count, values);
    pthread_mutex_unlock(&r->mu);
    return rc;
}

/* After a switch: what was held for the epoch now current is staged, in
 * arrival order; ranges of later epochs stay held.  r->mu held. */
static void stage_held_locked(tess_table *t)
{
    tess__replica *r = t->replica;
    held_range **at = &r->held;
    while (*at != NULL) {
        held_range *h = *at;
        if (h->generation > r->generation) {
            at = &h->next;
            continue;
        }
        *at = h->next;
        if (stage_locked(t, h->first, h->count, h->values) != TESS_OK)
            abort(); /* out of memory: dropping it would leave a replica stale */
        free(h);
    }
    r->held_tail = at;
}

static int by_first(const void *a, const void *b)
{
    const staged_range *x = a, *y = b;
    return x->first < y->first ? -1 : x->first > y->first;
}

/* Do the staged ranges cover every key?  Sorts them. */
static int staged_cover_all(tess_table *t)
{
    tess__replica *r = t->replica;
    qsort(r->staged, r->nstaged, sizeof *r->staged, by_first);
    uint64_t covered = 0; /* keys 0..covered-1 are staged */
    for (size_t i = 0; i < r->nstaged && r->staged[i].first <= covered; i++) {
        uint64_t end = r->staged[i].first + r->staged[i].count;
        if (end > covered) covered = end;
    }
    return covered >= t->key_count;
}

/* The ranges other ranks put into this rank's back array this epoch join
 * its staged ones.  Every writer's DONE came after its copies and before
 * the SWITCH that brought this rank here.  r->mu held. */
static void take_direct_locked(tess_table *t)
{
    tess__replica *r = t->replica;
    const shared_head *h = (const shared_head *)(void *)r->peer[t->ctx->rank];
    tess__shared_fence(); /* the SWITCH before the lists */
    uint64_t n = atomic_load_explicit(&h->nranges, memory_order_acquire);
    if (n > SHARED_RANGES) n = SHARED_RANGES; /* later writers sent messages */
    for (uint64_t i = 0; i < n; i++)
        if (note_staged_locked(r, h->ranges[i].first, h->ranges[i].count) != TESS_OK)
            abort(); /* out of memory: dropping it would leave a replica stale */
}

/* The staged ranges become visible.  No kernel runs meanwhile. */
static void switch_table(tess_table *t)
{
    tess__replica *r = t->replica;
    pthread_mutex_lock(&r->mu);
    if (r->peer != NULL) take_direct_locked(t);
    if (r->nstaged > 0 && staged_cover_all(t)) {
        uint8_t *old = r->front;
        r->front = r->back;
        r->back = old;
    } else {
        size_t vs = t->value_size;
        for (size_t i = 0; i < r->nstaged; i++)
            memcpy(r->front + r->staged[i].first * vs, r->back + r->staged[i].first * vs,
                   r->staged[i].count * vs);
    }
    r->nstaged = 0;
    r->generation++;
    stage_held_locked(t);
    if (r->peer != NULL) publish_state_locked(t);
    pthread_mutex_unlock(&r->mu);
}

static int has_replicated_table(const tess_ctx *ctx)
{
    for (int i = 0; i < ctx->ntables; i++)
        if (ctx->tables[i]->replica != NULL) return 1;
    return 0;
}

static void switch_all(tess_ctx *ctx)
{
    for (int i = 0; i < ctx->ntables; i++)
        if (ctx->tables[i]->replica != NULL) switch_table(ctx->tables[i]);
    atomic_fetch_add(&ctx->replica_switches, 1);
}

int tess__replica_switch_everywhere(tess_ctx *ctx)
{
    if (!has_replicated_table(ctx)) return TESS_OK;
    switch_all(ctx);
    int rc = TESS_OK;
    for (int r = 0; rc == TESS_OK && r < ctx->nranks; r++)
        if (r != ctx->rank) rc = tess__send(ctx, r, TESS_MSG_REPLICA_SWITCH, NULL, 0, NULL, 0);
    return rc;
}

/* ---------------------------------------------------------------- ranges */

static int send_range(tess_table *t, int dst, uint64_t first, uint64_t count, const void *values)
{
    replica_data_hdr h = {.table = (uint32_t)t->index,
                          .generation = t->replica->generation,
                          .first = first,
                          .count = count};
    atomic_fetch_add(&t->ctx->writes_sent, 1);
    return tess__send(t->ctx, dst, TESS_MSG_REPLICA_DATA, &h, sizeof h, values,
                      count * t->value_size);
}

#define STAGE_MESSAGE_BYTES ((size_t)128 << 10)

/* The range to rank dst in messages of at most STAGE_MESSAGE_BYTES. */
static int send_range_pieces(tess_table *t, int dst, uint64_t first, uint64_t n, const uint8_t *v)
{
    uint64_t per = STAGE_MESSAGE_BYTES / t->value_size ? STAGE_MESSAGE_BYTES / t->value_size : 1;
    int rc = TESS_OK;
    for (uint64_t off = 0; rc == TESS_OK && off < n; off += per) {
        uint64_t take = n - off < per ? n - off : per;
        rc = send_range(t, dst, first + off, take, v + off * t->value_size);
    }
    return rc;
}

/* How long a writer waits for a rank beside it to switch to the writer's
 * epoch: that rank's SWITCH left rank 0 before the writer's RUN did, on
 * another link, so it is on its way; messages take over after this. */
#define DIRECT_WAIT_SECONDS 0.001

/* Is the rank whose head is h in epoch `generation` (waiting a little if
 * may_wait and it is still in an earlier one)? */
static int in_epoch(const shared_head *h, uint64_t generation, int may_wait)
{
    uint64_t g = atomic_load_explicit(&h->generation, memory_order_acquire);
    double until = may_wait && g < generation ? tess_now() + DIRECT_WAIT_SECONDS : 0;
    while (g < generation && tess_now() < until) {
        sched_yield();
        g = atomic_load_explicit(&h->generation, memory_order_acquire);
    }
    return g == generation;
}

/* The range straight into rank dst's back array, listed for its switch:
 * 1 if it went, 0 if it must go as messages (dst on another node, in
 * another epoch, or its list full). */
static int put_direct(tess_table *t, int dst, uint64_t generation, uint64_t first, uint64_t n,
                      const void *values, int may_wait)
{
    uint8_t *part = t->replica->peer != NULL ? t->replica->peer[dst] : NULL;
    if (part == NULL) return 0;
    shared_head *h = (shared_head *)(void *)part;
    if (!in_epoch(h, generation, may_wait)) return 0;
    uint64_t slot = atomic_fetch_add_explicit(&h->nranges, 1, memory_order_relaxed);
    if (slot >= SHARED_RANGES) return 0;
    uint32_t back = atomic_load_explicit(&h->back, memory_order_relaxed);
    memcpy(shared_array(part, t, back) + first * t->value_size, values, n * t->value_size);
    h->ranges[slot] = (staged_range){first, n};
    tess__shared_fence(); /* the values and the list before this rank's DONE or reply */
    atomic_fetch_add(&t->ctx->st_replica_shared, n * t->value_size);
    return 1;
}

/* A replicated table: the range staged here and on every other rank,
 * straight into the arrays of the ranks beside it where it can, else in
 * messages.  may_wait: not on the progress thread (tess_table_replicate's
 * ranges at rest), which must keep the messages moving. */
static int stage_everywhere(tess_table *t, uint64_t first, uint64_t n, const void *values,
                            int may_wait)
{
    tess__replica *r = t->replica;
    uint64_t generation = r->generation;
    int rc = stage(t, generation, first, n, values);
    for (int dst = 0; rc == TESS_OK && dst < t->ctx->nranks; dst++) {
        if (dst == t->ctx->rank || put_direct(t, dst, generation, first, n, values, may_wait))
            continue;
        rc = send_range_pieces(t, dst, first, n, values);
    }
    return rc;
}

static int put_range_local(tess_table *t, int p, uint64_t first, uint64_t n, const uint8_t *vals)
{
    int rc = tess__buffer_flush_partition(t, p);
    if (rc != TESS_OK) return rc;
    pthread_mutex_lock(&t->locks[p]);
    rc = t->parts[p] ? tess__partition_put_range(t->parts[p], first, n, vals) : TESS__MOVED;
    pthread_mutex_unlock(&t->locks[p]);
    return rc;
}

/* A partition elsewhere: as single puts, routed to its owner. */
static int put_range_remote(tess_table *t, int p, uint64_t first, uint64_t n, const uint8_t *vals)
{
    int rc = tess__buffer_flush_partition(t, p);
    for (uint64_t k = first; rc == TESS_OK && k < first + n; k++)
        rc = tess__route_put(t, p, &k, vals + (k - first) * t->value_size, t->value_size);
    return rc;
}

int tess_table_put_range(tess_table *t, uint64_t first, uint64_t n, const void *values)
{
    int rc = check_dense_fixed(t, "tess_table_put_range");
    if (rc != TESS_OK) return rc;
    TESS_RETURN_IF(t->ctx, first > t->key_count || n > t->key_count - first, TESS_ERR_INVAL,
                   "table %s: keys %llu..%llu outside [0, %llu)", t->name,
                   (unsigned long long)first, (unsigned long long)(first + n),
                   (unsigned long long)t->key_count);
    if (t->replicated && n > 0) rc = stage_everywhere(t, first, n, values, 1);
    const uint8_t *v = values;
    while (rc == TESS_OK && n > 0) {
        int p = tess_table_partition_of(t, &first);
        uint64_t in_p = t->bounds[p + 1] - first, take = n < in_p ? n : in_p;
        rc = TESS__MOVED;
        if (tess__owner(t, p) == t->ctx->rank) rc = put_range_local(t, p, first, take, v);
        if (rc == TESS__MOVED) rc = put_range_remote(t, p, first, take, v);
        first += take;
        n -= take;
        v += take * t->value_size;
    }
    return rc;
}

/* ---------------------------------------------------------------- refresh */

/* A table without spec.replicated gets its replica (and staging copy) on its
 * first tess_table_replicate, on every rank: rank 0 before it asks the
 * others; another rank in the progress thread, at the first REPLICA_REQ or
 * the first range from a rank that was asked before it, whichever comes
 * first. */
static int ensure_replica(tess_table *t)
{
    if (t->replica == NULL) t->replica = replica_new(t);
    return t->replica ? TESS_OK : TESS_ERR_NOMEM;
}

/* Stage local partition p everywhere; TESS_OK also when it is not here. */
static int stage_local(tess_table *t, int p)
{
    uint64_t first = t->bounds[p], count = t->bounds[p + 1] - first;
    uint8_t *copy = malloc(count ? count * t->value_size : 1);
    if (copy == NULL) return TESS_ERR_NOMEM;
    pthread_mutex_lock(&t->locks[p]);
    int here = t->parts[p] != NULL;
    if (here) tess__partition_copy_dense(t->parts[p], copy);
    pthread_mutex_unlock(&t->locks[p]);
    int rc = here && count ? stage_everywhere(t, first, count, copy, 0) : TESS_OK;
    free(copy);
    return rc;
}

/* This rank's part of a refresh: its partitions staged here and sent to
 * every other rank. */
static int share_local_partitions(tess_table *t)
{
    int rc = ensure_replica(t);
    for (int p = 0; rc == TESS_OK && p < t->nparts; p++)
        if (tess__owner(t, p) == t->ctx->rank) rc = stage_local(t, p);
    return rc;
}

int tess_table_replicate(tess_table *t)
{
    int rc = check_dense_fixed(t, "tess_table_replicate");
    tess_ctx *ctx = t->ctx;
    if (rc == TESS_OK) rc = tess__check_control(ctx, "tess_table_replicate()");
    if (rc == TESS_OK) { /* the others send their ranges at rest: a barrier must ask */
        pthread_mutex_lock(&ctx->ctl_mu);
        ctx->counts_stale_seq = ctx->run_seq;
        pthread_mutex_unlock(&ctx->ctl_mu);
    }
    if (rc == TESS_OK) rc = tess__buffer_flush_table(t);
    if (rc == TESS_OK) rc = share_local_partitions(t);
    tess__table_hdr h = {.table = (uint32_t)t->index};
    /* once a rank answered, its ranges are on their way as counted writes,
     * which the next barrier waits for before it switches the replicas */
    for (int r = 0; rc == TESS_OK && r < t->ctx->nranks; r++)
        if (r != t->ctx->rank)
            rc = tess__request(t->ctx, r, TESS_MSG_REPLICA_REQ, &h, sizeof h, NULL, NULL);
    return rc;
}

const void *tess_table_replica(const tess_table *t, uint64_t *count_out)
{
    const uint8_t *front = t->replica ? t->replica->front : NULL;
    if (count_out != NULL) *count_out = front ? t->key_count : 0;
    return front;
}

/* ---------------------------------------------------------------- handlers */

static tess_table *table_of(tess_ctx *ctx, uint32_t index)
{
    if (index >= (uint32_t)ctx->ntables) return NULL;
    tess_table *t = ctx->tables[index];
    return t->dense && t->value_size > 0 ? t : NULL;
}

static void on_replica_req(tess_ctx *ctx, int src, const uint8_t *p, size_t len)
{
    tess__req_hdr rq;
    tess__table_hdr h;
    if (len < sizeof rq + sizeof h) return;
    memcpy(&rq, p, sizeof rq);
    memcpy(&h, p + sizeof rq, sizeof h);
    tess_table *t = table_of(ctx, h.table);
    int rc = t ? share_local_partitions(t) : TESS_ERR_INVAL;
    tess__reply(ctx, src, &rq, rc, NULL, 0);
}

static void on_replica_data(tess_ctx *ctx, const uint8_t *p, size_t len)
{
    replica_data_hdr h;
    if (len >= sizeof h) {
        memcpy(&h, p, sizeof h);
        tess_table *t = table_of(ctx, h.table);
        int fits = t && h.first <= t->key_count && h.count <= t->key_count - h.first &&
                   len - sizeof h == h.count * t->value_size;
        if (fits && (ensure_replica(t) != TESS_OK ||
                     stage(t, h.generation, h.first, h.count, p + sizeof h) != TESS_OK))
            abort(); /* out of memory: dropping it would leave a replica stale */
    }
    tess__count_applied(ctx, 1);
}

static void on_replica_message(tess_ctx *ctx, int src, uint32_t type, const uint8_t *p, size_t len)
{
    if (type == TESS_MSG_REPLICA_REQ) on_replica_req(ctx, src, p, len);
    else if (type == TESS_MSG_REPLICA_DATA) on_replica_data(ctx, p, len);
    else switch_all(ctx);
}

int tess__replica_handlers_init(tess_ctx *ctx)
{
    static const uint32_t types[] = {TESS_MSG_REPLICA_REQ, TESS_MSG_REPLICA_DATA,
                                     TESS_MSG_REPLICA_SWITCH};
    int rc = TESS_OK;
    for (size_t i = 0; rc == TESS_OK && i < sizeof types / sizeof *types; i++)
        rc = tess__comm_handle(ctx, types[i], on_replica_message);
    return rc;
}
