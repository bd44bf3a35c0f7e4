/*
 * table_replica.c — dense tables written a range at a time, and read-only
 * replicas of whole dense tables on every rank.
 *
 * These two make a pull-style kernel possible: instance i reads any key of
 * the previous epoch from its rank's replica (plain array loads, no lock, no
 * message) and writes its own partition of the next epoch in one
 * tess_table_put_range().  The control function refreshes the replica
 * between epochs with tess_table_replicate().
 *
 * Replication under MPI, started by rank 0's control function: rank 0 asks
 * every rank (REPLICA_REQ); each copies its own partitions into its replica
 * and sends each of them to every other rank (REPLICA_DATA), counted as
 * writes; once every rank has answered, the barrier's count of writes sent
 * and applied tells when every replica is complete.  It runs between
 * barriers, when no kernel writes and no partition moves.
 */
#include <stdlib.h>
#include <string.h>
#include "sched/sched.h"
#include "table_internal.h"

/* Header of REPLICA_DATA; the values follow. */
typedef struct replica_data_hdr {
    uint32_t table;
    uint32_t pad;
    uint64_t first, count;
} replica_data_hdr;

static int check_dense_fixed(tess_table *t, const char *what)
{
    TESS_RETURN_IF(t->ctx, !t->dense || t->value_size == 0, TESS_ERR_INVAL,
                   "table %s: %s needs a dense table with fixed-size values", t->name, what);
    return TESS_OK;
}

/* ---------------------------------------------------------------- ranges */

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

/* ---------------------------------------------------------------- replicas */

/* On this rank: allocate once (values of keys no partition holds yet read
 * as the identity until their data arrives). */
static int ensure_replica(tess_table *t)
{
    if (t->replica != NULL) return TESS_OK;
    t->replica = malloc(t->key_count * t->value_size);
    return t->replica ? TESS_OK : TESS_ERR_NOMEM;
}

/* Copy local partition p into the replica; 0 if it is not here. */
static int copy_local(tess_table *t, int p)
{
    pthread_mutex_lock(&t->locks[p]);
    int here = t->parts[p] != NULL;
    if (here) tess__partition_copy_dense(t->parts[p], t->replica + t->bounds[p] * t->value_size);
    pthread_mutex_unlock(&t->locks[p]);
    return here;
}

static int send_partition(tess_table *t, int p, int dst)
{
    replica_data_hdr h = {.table = (uint32_t)t->index,
                          .first = t->bounds[p],
                          .count = t->bounds[p + 1] - t->bounds[p]};
    atomic_fetch_add(&t->ctx->writes_sent, 1);
    return tess__send(t->ctx, dst, TESS_MSG_REPLICA_DATA, &h, sizeof h,
                      t->replica + h.first * t->value_size, h.count * t->value_size);
}

/* This rank's part of a replication: its partitions into its own replica and
 * to every other rank. */
static int share_local_partitions(tess_table *t)
{
    int rc = ensure_replica(t);
    for (int p = 0; rc == TESS_OK && p < t->nparts; p++) {
        if (tess__owner(t, p) != t->ctx->rank || !copy_local(t, p)) continue;
        for (int r = 0; rc == TESS_OK && r < t->ctx->nranks; r++)
            if (r != t->ctx->rank) rc = send_partition(t, p, r);
    }
    return rc;
}

int tess_table_replicate(tess_table *t)
{
    int rc = check_dense_fixed(t, "tess_table_replicate");
    if (rc == TESS_OK) rc = tess__buffer_flush_table(t);
    if (rc == TESS_OK) rc = share_local_partitions(t);
    if (rc != TESS_OK || t->ctx->nranks == 1) return rc;
    tess__table_hdr h = {.table = (uint32_t)t->index};
    for (int r = 0; rc == TESS_OK && r < t->ctx->nranks; r++)
        if (r != t->ctx->rank)
            rc = tess__request(t->ctx, r, TESS_MSG_REPLICA_REQ, &h, sizeof h, NULL, NULL);
    /* every rank has sent its partitions; the barrier waits until all landed */
    return rc == TESS_OK ? tess_barrier(t->ctx) : rc;
}

const void *tess_table_replica(const tess_table *t, uint64_t *count_out)
{
    if (count_out != NULL) *count_out = t->replica ? t->key_count : 0;
    return t->replica;
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
        if (fits && ensure_replica(t) == TESS_OK)
            memcpy(t->replica + h.first * t->value_size, p + sizeof h, len - sizeof h);
    }
    atomic_fetch_add(&ctx->writes_applied, 1);
}

static void on_replica_message(tess_ctx *ctx, int src, uint32_t type, const uint8_t *p, size_t len)
{
    if (type == TESS_MSG_REPLICA_REQ) on_replica_req(ctx, src, p, len);
    else on_replica_data(ctx, p, len);
}

int tess__replica_handlers_init(tess_ctx *ctx)
{
    int rc = tess__comm_handle(ctx, TESS_MSG_REPLICA_REQ, on_replica_message);
    return rc == TESS_OK ? tess__comm_handle(ctx, TESS_MSG_REPLICA_DATA, on_replica_message) : rc;
}
