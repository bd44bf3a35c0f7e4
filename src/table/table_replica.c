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
 * Ranges bound for rank 0 from a rank beside it need no notice: the writer
 * lists them next to its image, and rank 0 copies them from there when it
 * switches, which it does before it sends the next run anywhere, so before
 * the writer can overwrite its image.  The barrier then waits only for the
 * writer's DONE (which rank 0 may read from node-shared memory too).
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
    /* node-shared segments (attach_images, at tess_main): peer[r] is this table's
     * image in rank r's segment, or NULL for a rank that gets ranges as
     * messages; peer itself NULL when nothing is shared */
    uint8_t **peer;
    pthread_mutex_t peer_mu; /* one writer of this rank's image at a time */
};

/* After a rank's image in its segment: the ranges it wrote in its epoch
 * `generation` for rank 0 to copy at its switch, or on rank 0, for every
 * rank beside it to copy at theirs. */
#define LISTED_RANGES 256
typedef struct range_list {
    _Atomic uint64_t generation;
    _Atomic uint64_t n;
    staged_range ranges[LISTED_RANGES];
} range_list;

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
    pthread_mutex_init(&r->peer_mu, NULL);
    r->held_tail = &r->held;
    /* the epoch this rank is in, not 0: a replica that tess_table_replicate
     * makes on another rank must tell the ranges of the epoch before a
     * switch this rank has not seen yet from those after it, as the replicas
     * made with the table do */
    r->generation = atomic_load(&t->ctx->tabs->replica_switches);
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
    pthread_mutex_destroy(&r->peer_mu);
    free(r->peer);
    free(r->front);
    free(r->back);
    free(r->staged);
    while (r->held != NULL) {
        held_range *h = r->held;
        r->held = h->next;
        free(h);
    }
    free(r);
}

/* The images in every rank's node-shared segment, at tess_main. */
static void attach_images(tess_ctx *ctx, uint8_t *const *ptrs, void *arg)
{
    tess_table *t = arg;
    uint8_t **peer = calloc((size_t)ctx->nranks, sizeof *peer);
    if (peer == NULL) return; /* then messages carry every range */
    for (int r = 0; r < ctx->nranks; r++) peer[r] = ptrs[r];
    t->replica->peer = peer;
}

/*
 * A replicated table asks for an image of itself in this rank's node-shared
 * segment, so that a range written here costs one copy into it and one copy
 * by each rank of the node, instead of the messages' copies (into the
 * batch, through MPI's shared memory in and out, into the staging array:
 * 4-rank PageRank spent half its iteration on them).
 */
static size_t image_bytes(const tess_table *t)
{
    return tess__cache_lines((size_t)t->key_count * t->value_size);
}

/* Rank r's list of ranges for rank 0, after its image. */
static range_list *list_of(const tess_table *t, int r)
{
    return (range_list *)(void *)(t->replica->peer[r] + image_bytes(t));
}

int tess__replica_create(tess_table *t)
{
    t->replica = replica_new(t);
    if (t->replica == NULL) return TESS_ERR_NOMEM;
    size_t bytes = t->key_count ? image_bytes(t) + sizeof(range_list) : 0;
    return tess__comm_share_request(t->ctx, bytes, attach_images, t);
}

/* Stage values of keys first..first+count-1 for the next switch; r->mu held. */
static int stage_locked(tess_table *t, uint64_t first, uint64_t count, const void *values)
{
    tess__replica *r = t->replica;
    if (r->nstaged == r->cap) {
        size_t cap = r->cap ? 2 * r->cap : 16;
        staged_range *grown = realloc(r->staged, cap * sizeof *grown);
        if (grown == NULL) return TESS_ERR_NOMEM;
        r->staged = grown;
        r->cap = cap;
    }
    memcpy(r->back + first * t->value_size, values, count * t->value_size);
    r->staged[r->nstaged++] = (staged_range){first, count};
    return TESS_OK;
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

/* Closing this rank's epoch: the ranges listed for it, staged from their
 * writers' images — on rank 0, by the ranks beside it (every writer's DONE,
 * after its list, came before this), elsewhere by rank 0 (its barrier
 * ended before the run or message that brought this switch).  r->mu held. */
static void take_listed_locked(tess_table *t)
{
    tess__replica *r = t->replica;
    tess__shared_fence(); /* the DONEs, or the switch, before the lists */
    for (int w = 0; w < t->ctx->nranks; w++) {
        if (r->peer[w] == NULL || w == t->ctx->rank || (w != 0 && t->ctx->rank != 0)) continue;
        const range_list *l = list_of(t, w);
        if (atomic_load_explicit(&l->generation, memory_order_acquire) != r->generation) continue;
        uint64_t n = atomic_load_explicit(&l->n, memory_order_acquire);
        for (uint64_t i = 0; i < n && i < LISTED_RANGES; i++)
            if (stage_locked(t, l->ranges[i].first, l->ranges[i].count,
                             r->peer[w] + l->ranges[i].first * t->value_size) != TESS_OK)
                abort(); /* out of memory: dropping it would leave a replica stale */
    }
}

/* The staged ranges become visible.  No kernel runs meanwhile. */
static void switch_table(tess_table *t)
{
    tess__replica *r = t->replica;
    pthread_mutex_lock(&r->mu);
    if (r->peer != NULL) take_listed_locked(t);
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
    pthread_mutex_unlock(&r->mu);
}

static int has_replicated_table(const tess_ctx *ctx)
{
    for (int i = 0; i < ctx->ntables; i++)
        if (ctx->tables[i]->replica != NULL) return 1;
    return 0;
}

/* replica_switch_mu held */
static void switch_all(tess_ctx *ctx)
{
    for (int i = 0; i < ctx->ntables; i++)
        if (ctx->tables[i]->replica != NULL) switch_table(ctx->tables[i]);
    uint64_t n = atomic_fetch_add(&ctx->tabs->replica_switches, 1) + 1;
    tess__node_counts *mine = ctx->node_counts ? ctx->node_counts[ctx->rank] : NULL;
    if (mine != NULL) atomic_store_explicit(&mine->switches, n, memory_order_release);
}

int tess__replica_switch_to(tess_ctx *ctx, uint64_t n)
{
    pthread_mutex_lock(&ctx->tabs->replica_switch_mu);
    uint64_t at = atomic_load(&ctx->tabs->replica_switches);
    if (at + 1 == n) switch_all(ctx), at = n;
    pthread_mutex_unlock(&ctx->tabs->replica_switch_mu);
    return at >= n;
}

/* Each switch is numbered, so that a rank that made it from rank 0's board
 * (sched/board.c) knows the message for a repeat. */
int tess__replica_switch_everywhere(tess_ctx *ctx)
{
    if (!has_replicated_table(ctx)) return TESS_OK;
    if (ctx->tabs->switch_posted_before == NULL &&
        (ctx->tabs->switch_posted_before = calloc((size_t)ctx->nranks, sizeof(uint64_t))) == NULL)
        return tess__fail(ctx, TESS_ERR_NOMEM, "out of memory");
    uint64_t n = atomic_load(&ctx->tabs->replica_switches) + 1;
    tess__replica_switch_to(ctx, n);
    int rc = TESS_OK;
    for (int r = 0; rc == TESS_OK && r < ctx->nranks; r++) {
        if (r == ctx->rank) continue;
        ctx->tabs->switch_posted_before[r] = tess__comm_posted_to(ctx, r);
        rc = tess__send(ctx, r, TESS_MSG_REPLICA_SWITCH, &n, sizeof n, NULL, 0);
    }
    return rc;
}

uint64_t tess__replica_switches(tess_ctx *ctx) { return atomic_load(&ctx->tabs->replica_switches); }

int tess__replica_switch_was_last(tess_ctx *ctx, int r, uint64_t posted, uint64_t *before)
{
    if (ctx->tabs->switch_posted_before == NULL || ctx->tabs->switch_posted_before[r] + 1 != posted)
        return 0;
    *before = ctx->tabs->switch_posted_before[r];
    return 1;
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

/* The range into this rank's image in its node-shared segment, where the
 * ranks beside it copy it from when its notice reaches them.  A later
 * write of the same keys may overwrite it before they do; they then copy
 * the later values twice, as the later notice follows.  Not one of the
 * next epoch: the barrier ends only when every notice has been applied. */
static void publish_shared(tess_table *t, uint64_t first, uint64_t n, const void *values)
{
    tess__replica *r = t->replica;
    pthread_mutex_lock(&r->peer_mu);
    memcpy(r->peer[t->ctx->rank] + first * t->value_size, values, n * t->value_size);
    pthread_mutex_unlock(&r->peer_mu);
    tess__shared_fence(); /* the values before the notice */
}

/* The range, already in this rank's image, listed for the switch of rank
 * 0 (or on rank 0, of the ranks beside it) instead of a notice: 1 if
 * listed, 0 if the list is full.  The list of an earlier epoch is emptied
 * first: rank 0 took it when it switched, before the run that brought this
 * write; the ranks beside rank 0 took it before rank 0 wrote its image
 * (wait_peers_switched). */
static int list_range(tess_table *t, uint64_t generation, uint64_t first, uint64_t n)
{
    tess__replica *r = t->replica;
    range_list *l = list_of(t, t->ctx->rank);
    pthread_mutex_lock(&r->peer_mu);
    uint64_t k = atomic_load_explicit(&l->n, memory_order_relaxed);
    if (atomic_load_explicit(&l->generation, memory_order_relaxed) != generation) k = 0;
    int listed = k < LISTED_RANGES;
    if (listed) {
        l->ranges[k] = (staged_range){first, n};
        atomic_store_explicit(&l->n, k + 1, memory_order_relaxed);
        atomic_store_explicit(&l->generation, generation, memory_order_relaxed);
    }
    pthread_mutex_unlock(&r->peer_mu);
    tess__shared_fence(); /* the list before this rank's DONE */
    if (listed) atomic_fetch_add(&t->ctx->tabs->replica_shared, n * t->value_size);
    return listed;
}

static int send_shared_notice(tess_table *t, int dst, uint64_t first, uint64_t n)
{
    replica_data_hdr h = {.table = (uint32_t)t->index,
                          .generation = t->replica->generation,
                          .first = first,
                          .count = n};
    atomic_fetch_add(&t->ctx->writes_sent, 1);
    atomic_fetch_add(&t->ctx->tabs->replica_shared, n * t->value_size);
    return tess__send(t->ctx, dst, TESS_MSG_REPLICA_SHARED, &h, sizeof h, NULL, 0);
}

/* Rank 0, about to write its image in epoch `generation`: every rank
 * beside it must have made its switch into that epoch, where it copied
 * what rank 0 listed in the epoch before (a thread of rank 0 other than the
 * progress thread, which sends the switches).  They do within a hop of the
 * barrier (from rank 0's board, or its SWITCH message); 0 if some rank's
 * switches cannot be seen, or on a signal (the ranges then go in notices). */
static int wait_peers_switched(tess_table *t, uint64_t generation)
{
    tess_ctx *ctx = t->ctx;
    for (int w = 1; w < ctx->nranks; w++) {
        if (t->replica->peer[w] == NULL) continue;
        tess__node_counts *nc = ctx->node_counts ? ctx->node_counts[w] : NULL;
        if (nc == NULL) return 0;
        while (atomic_load_explicit(&nc->switches, memory_order_acquire) < generation) {
            if (tess_interrupted(ctx)) return 0; /* the run is being given up anyway */
            sched_yield();
        }
    }
    return 1;
}

/* A replicated table: the range staged here and on every other rank; a
 * rank on this node reads it from this rank's shared segment, when
 * `in_epoch` (written by a run's task or the control function, not at
 * rest) from the list rank 0 and its neighbours keep for each other, else
 * on a notice; another rank gets it in messages. */
static int stage_everywhere(tess_table *t, uint64_t first, uint64_t n, const void *values,
                            int in_epoch)
{
    tess__replica *r = t->replica;
    uint64_t generation = r->generation;
    int rc = stage(t, generation, first, n, values);
    int shared = r->peer != NULL && r->peer[t->ctx->rank] != NULL, listed = 0;
    /* rank 0's image may still hold what it listed in the epoch before */
    int can_list = shared && (t->ctx->rank != 0 || wait_peers_switched(t, generation));
    if (rc == TESS_OK && shared) publish_shared(t, first, n, values);
    if (rc == TESS_OK && can_list && in_epoch) listed = list_range(t, generation, first, n);
    for (int dst = 0; rc == TESS_OK && dst < t->ctx->nranks; dst++) {
        if (dst == t->ctx->rank) continue;
        if (!shared || r->peer[dst] == NULL) rc = send_range_pieces(t, dst, first, n, values);
        else if (!(listed && (dst == 0 || t->ctx->rank == 0)))
            rc = send_shared_notice(t, dst, first, n);
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
    int rc = tess__table_check_live(t);
    if (rc == TESS_OK) rc = check_dense_fixed(t, "tess_table_put_range");
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

/* Rank src wrote a range into its shared segment: copy it from there. */
static void on_replica_shared(tess_ctx *ctx, int src, const uint8_t *p, size_t len)
{
    replica_data_hdr h;
    if (len == sizeof h) {
        memcpy(&h, p, sizeof h);
        tess_table *t = table_of(ctx, h.table);
        const tess__replica *r = t ? t->replica : NULL;
        const uint8_t *image = r && r->peer && src >= 0 && src < ctx->nranks ? r->peer[src] : NULL;
        int fits = image && h.first <= t->key_count && h.count <= t->key_count - h.first;
        tess__shared_fence(); /* the notice before the values */
        if (fits &&
            stage(t, h.generation, h.first, h.count, image + h.first * t->value_size) != TESS_OK)
            abort(); /* out of memory: dropping it would leave a replica stale */
    }
    tess__count_applied(ctx, 1);
}

/* REPLICA_SWITCH carries its number: a repeat of one made from rank 0's
 * board does nothing. */
static void on_replica_switch(tess_ctx *ctx, const uint8_t *p, size_t len)
{
    uint64_t n;
    if (len != sizeof n) return;
    memcpy(&n, p, sizeof n);
    tess__replica_switch_to(ctx, n);
}

static void on_replica_message(tess_ctx *ctx, int src, uint32_t type, const uint8_t *p, size_t len)
{
    if (type == TESS_MSG_REPLICA_REQ) on_replica_req(ctx, src, p, len);
    else if (type == TESS_MSG_REPLICA_DATA) on_replica_data(ctx, p, len);
    else if (type == TESS_MSG_REPLICA_SHARED) on_replica_shared(ctx, src, p, len);
    else on_replica_switch(ctx, p, len);
}

int tess__replica_handlers_init(tess_ctx *ctx)
{
    static const uint32_t types[] = {TESS_MSG_REPLICA_REQ, TESS_MSG_REPLICA_DATA,
                                     TESS_MSG_REPLICA_SWITCH, TESS_MSG_REPLICA_SHARED};
    int rc = TESS_OK;
    for (size_t i = 0; rc == TESS_OK && i < sizeof types / sizeof *types; i++)
        rc = tess__comm_handle(ctx, types[i], on_replica_message);
    return rc;
}
