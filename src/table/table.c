/*
 * table.c — creating tables, placing partitions on ranks, mapping keys to
 * partitions, and the operations on partitions stored on this rank.
 */
#include <stdlib.h>
#include <string.h>
#include "table_internal.h"

void tess_table_spec_init(tess_table_spec *spec)
{
    memset(spec, 0, sizeof *spec);
    spec->partitions = 1;
    spec->accum = TESS_ACC_REPLACE;
}

static int check_spec(tess_ctx *ctx, const tess_table_spec *s)
{
    const char *n = s->name ? s->name : "(unnamed)";
    TESS_RETURN_IF(ctx, s->partitions < 1 || s->partitions > (1 << 20), TESS_ERR_INVAL,
                   "table %s: partitions must be in [1, 1048576], got %d", n, s->partitions);
    TESS_RETURN_IF(ctx, s->key_size == 0 || s->key_size > 4096, TESS_ERR_INVAL,
                   "table %s: key_size must be in [1, 4096]", n);
    TESS_RETURN_IF(ctx, s->dense && s->key_size != 8, TESS_ERR_INVAL,
                   "table %s: dense tables have 8-byte keys", n);
    TESS_RETURN_IF(ctx, s->dense && s->key_count < (uint64_t)s->partitions && s->key_count,
                   TESS_ERR_INVAL, "table %s: fewer keys than partitions", n);
    TESS_RETURN_IF(ctx, s->group_with && s->group_with->nparts != s->partitions, TESS_ERR_INVAL,
                   "table %s: grouped tables need equal partition counts", n);
    TESS_RETURN_IF(ctx, s->replicated && (!s->dense || s->value_size == 0), TESS_ERR_INVAL,
                   "table %s: a replicated table must be dense with fixed-size values", n);
    TESS_RETURN_IF(ctx, !(s->flush_ms <= 3.6e6), TESS_ERR_INVAL,
                   "table %s: flush_ms must be at most 3600000 (one hour)", n);
    const char *why = NULL;
    int rc = tess__accum_check(s->accum, s->elem, s->value_size, &why);
    TESS_RETURN_IF(ctx, rc != TESS_OK, rc, "table %s: %s", n, why ? why : "bad accumulator");
    return TESS_OK;
}

#define DENSE_BUCKETS 4096

/* A lookup table from the key's high bits to a partition, so finding a dense
 * key's partition costs a shift, a load and rarely a step (no division). */
static int build_buckets(tess_table *t)
{
    while (((t->key_count ? t->key_count - 1 : 0) >> t->bucket_shift) >= DENSE_BUCKETS)
        t->bucket_shift++;
    t->bucket_part = malloc(DENSE_BUCKETS * sizeof *t->bucket_part);
    if (t->bucket_part == NULL) return TESS_ERR_NOMEM;
    int p = 0;
    for (uint64_t b = 0; b < DENSE_BUCKETS; b++) {
        uint64_t key = b << t->bucket_shift;
        while (p < t->nparts - 1 && t->bounds[p + 1] <= key) p++;
        t->bucket_part[b] = p;
    }
    return TESS_OK;
}

static int set_bounds(tess_table *t, const tess_table_spec *s)
{
    t->bounds = malloc(((size_t)t->nparts + 1) * sizeof *t->bounds);
    if (t->bounds == NULL) return TESS_ERR_NOMEM;
    t->even_bounds = s->range_bounds == NULL;
    for (int p = 0; p <= t->nparts; p++)
        t->bounds[p] =
            s->range_bounds
                ? s->range_bounds[p]
                : (uint64_t)((unsigned __int128)s->key_count * (unsigned)p / (unsigned)t->nparts);
    for (int p = 0; p < t->nparts; p++)
        TESS_RETURN_IF(t->ctx, t->bounds[p] > t->bounds[p + 1], TESS_ERR_INVAL,
                       "table %s: range bounds must ascend", t->name);
    TESS_RETURN_IF(t->ctx, t->bounds[0] != 0 || t->bounds[t->nparts] != s->key_count,
                   TESS_ERR_INVAL, "table %s: range bounds must run from 0 to key_count", t->name);
    return build_buckets(t);
}

static int set_accumulator(tess_table *t, const tess_table_spec *s)
{
    const tess_accum_ops *user = NULL;
    if (s->accum == TESS_ACC_USER) {
        tess_ctx *ctx = t->ctx;
        int i = s->accumulator
                    ? tess__registry_find(ctx->reg.accums, ctx->reg.naccums, s->accumulator)
                    : -1;
        TESS_RETURN_IF(ctx, i < 0, TESS_ERR_NOTFOUND, "table %s: no accumulator named '%s'",
                       t->name, s->accumulator ? s->accumulator : "(null)");
        user = &ctx->reg.accums[i].accum;
    }
    tess__accum_setup(&t->acc, s->accum, s->elem, s->value_size, user);
    if (tess__accum_counts_changes(s->accum)) t->acc.changes = &t->changes;
    return TESS_OK;
}

static int set_partitioner(tess_table *t, const tess_table_spec *s)
{
    if (s->dense || s->partitioner == NULL) return TESS_OK;
    tess_ctx *ctx = t->ctx;
    int i = tess__registry_find(ctx->reg.partitioners, ctx->reg.npartitioners, s->partitioner);
    TESS_RETURN_IF(ctx, i < 0, TESS_ERR_NOTFOUND, "table %s: no partitioner named '%s'", t->name,
                   s->partitioner);
    t->partitioner = (tess_partitioner_fn)ctx->reg.partitioners[i].fn;
    return TESS_OK;
}

static tess__partition *new_partition(tess_table *t, int p)
{
    if (t->dense)
        return tess__partition_new_dense(t->bounds[p], t->bounds[p + 1] - t->bounds[p],
                                         t->value_size, &t->acc);
    return tess__partition_new_hash(t->key_size, t->value_size, &t->acc);
}

tess__partition *tess__table_new_partition(tess_table *t, int p) { return new_partition(t, p); }

/* Partition i lives on rank i mod R; a grouped table follows its leader. */
static int place_partitions(tess_table *t, const tess_table_spec *s)
{
    t->owner = malloc((size_t)t->nparts * sizeof *t->owner);
    t->parts = calloc((size_t)t->nparts, sizeof *t->parts);
    t->locks = calloc((size_t)t->nparts, sizeof *t->locks);
    if (!t->owner || !t->parts || !t->locks) return TESS_ERR_NOMEM;
    t->all_local = 1;
    for (int p = 0; p < t->nparts; p++) {
        t->owner[p] = s->group_with ? s->group_with->owner[p] : p % t->ctx->nranks;
        t->all_local &= t->owner[p] == t->ctx->rank;
        pthread_mutex_init(&t->locks[p], NULL);
        if (t->owner[p] != t->ctx->rank) continue;
        t->parts[p] = new_partition(t, p);
        TESS_RETURN_IF(t->ctx, t->parts[p] == NULL, TESS_ERR_NOMEM,
                       "table %s: out of memory for partition %d", t->name, p);
    }
    return TESS_OK;
}

void tess__table_free(tess_table *t)
{
    if (t == NULL) return;
    for (int p = 0; t->parts && p < t->nparts; p++) tess__partition_free(t->parts[p]);
    for (int p = 0; t->locks && p < t->nparts; p++) pthread_mutex_destroy(&t->locks[p]);
    tess__replica_free(t->replica);
    TESS_FREE_ALL(t->parts, t->locks, t->owner, t->bounds, t->bucket_part, t->name, t);
}

/* The timeout flush in nanoseconds: the spec's, else the configuration's;
 * 0 for none. */
static uint64_t flush_timeout_ns(const tess_ctx *ctx, const tess_table_spec *s)
{
    double ms = s->flush_ms != 0 ? s->flush_ms : ctx->cfg.flush_ms;
    return ms > 0 ? (uint64_t)(ms * 1e6) : 0;
}

/* The list of tables has a fixed capacity: tables created at run time are
 * added while other threads read the list (the progress thread, checkpoint
 * writers), so it must never move. */
static int register_table(tess_ctx *ctx, tess_table *t)
{
    if (ctx->tables == NULL) ctx->tables = calloc(TESS__TABLES_MAX, sizeof *ctx->tables);
    if (ctx->tables == NULL) return TESS_ERR_NOMEM;
    TESS_RETURN_IF(ctx, ctx->ntables == TESS__TABLES_MAX, TESS_ERR_INVAL,
                   "table %s: a job holds at most %d tables (dropped ones count)", t->name,
                   TESS__TABLES_MAX);
    t->index = ctx->ntables;
    ctx->tables[t->index] = t;
    ctx->ntables++;
    return TESS_OK;
}

int tess_table_create(tess_ctx *ctx, const tess_table_spec *s, tess_table **table_out)
{
    if (ctx == NULL || s == NULL || table_out == NULL) return TESS_ERR_INVAL;
    if (ctx->started) return tess__table_create_at_run_time(ctx, s, table_out);
    return tess__table_create_here(ctx, s, table_out);
}

int tess__table_create_here(tess_ctx *ctx, const tess_table_spec *s, tess_table **table_out)
{
    int rc = check_spec(ctx, s);
    if (rc != TESS_OK) return rc;
    tess_table *t = calloc(1, sizeof *t);
    if (t == NULL) return TESS_ERR_NOMEM;
    t->ctx = ctx;
    t->name = strdup(s->name ? s->name : "table");
    t->key_size = s->key_size;
    t->value_size = s->value_size;
    t->nparts = s->partitions;
    t->dense = s->dense;
    t->key_count = s->key_count;
    t->flush_ns = flush_timeout_ns(ctx, s);
    t->at_run_time = ctx->started;
    rc = t->name ? TESS_OK : TESS_ERR_NOMEM;
    if (rc == TESS_OK && t->dense) rc = set_bounds(t, s);
    if (rc == TESS_OK) rc = set_accumulator(t, s);
    if (rc == TESS_OK) rc = set_partitioner(t, s);
    if (rc == TESS_OK) rc = place_partitions(t, s);
    t->replicated = s->replicated;
    if (rc == TESS_OK && s->replicated) rc = tess__replica_create(t);
    if (rc == TESS_OK) rc = register_table(ctx, t);
    if (rc == TESS_OK) t->group = s->group_with ? s->group_with->group : t->index;
    if (rc != TESS_OK) {
        tess__table_free(t);
        return rc;
    }
    *table_out = t;
    return TESS_OK;
}

int tess__table_layer_create(tess_ctx *ctx)
{
    tess__table_rank *tr = calloc(1, sizeof *tr);
    if (tr == NULL) return TESS_ERR_NOMEM;
    pthread_mutex_init(&tr->replica_switch_mu, NULL);
    ctx->tabs = tr;
    return TESS_OK;
}

void tess__table_layer_destroy(tess_ctx *ctx)
{
    tess__table_rank *tr = ctx->tabs;
    if (tr == NULL) return;
    free(tr->switch_posted_before);
    pthread_mutex_destroy(&tr->replica_switch_mu);
    free(tr);
    ctx->tabs = NULL;
}

void tess__table_stats(const tess_ctx *ctx, tess_stats *st)
{
    const tess__table_rank *tr = ctx->tabs;
    if (tr == NULL) return;
    st->updates_local = atomic_load(&tr->updates_local);
    st->updates_remote = atomic_load(&tr->updates_remote);
    st->replica_bytes_shared = atomic_load(&tr->replica_shared);
    st->migrations_in = atomic_load(&tr->mig_in);
    st->migrations_out = atomic_load(&tr->mig_out);
}

void tess__tables_free(tess_ctx *ctx)
{
    for (int i = 0; i < ctx->ntables; i++) tess__table_free(ctx->tables[i]);
    free(ctx->tables);
    ctx->tables = NULL;
    ctx->ntables = 0;
}

uint64_t tess__setup_fingerprint(const tess_ctx *ctx)
{
    uint64_t h = 0x7e55e7a;
    const tess__named *lists[3] = {ctx->reg.kernels, ctx->reg.accums, ctx->reg.partitioners};
    int counts[3] = {ctx->reg.nkernels, ctx->reg.naccums, ctx->reg.npartitioners};
    for (int l = 0; l < 3; l++)
        for (int i = 0; i < counts[l]; i++)
            for (const char *c = lists[l][i].name; *c; c++) h = tess_mix64(h ^ (uint8_t)*c);
    for (int i = 0; i < ctx->ntables; i++) {
        const tess_table *t = ctx->tables[i];
        h = tess_mix64(h ^ t->key_size ^ (t->value_size << 16) ^ ((uint64_t)t->nparts << 32));
        h = tess_mix64(h ^ t->key_count ^ ((uint64_t)t->acc.kind << 60) ^ (uint64_t)t->dense);
    }
    return h;
}

int tess__table_index(const tess_table *t) { return t->index; }
int tess_table_index(const tess_table *t) { return t ? t->index : -1; }

tess_table *tess_table_by_index(tess_ctx *ctx, int index)
{
    if (ctx == NULL || index < 0 || index >= ctx->ntables) return NULL;
    return ctx->tables[index];
}
int tess_table_partitions(const tess_table *t) { return t->nparts; }

int tess_table_owner(const tess_table *t, int p)
{
    return p >= 0 && p < t->nparts ? tess__owner(t, p) : -1;
}

int tess_table_is_local(const tess_table *t, int p)
{
    return p >= 0 && p < t->nparts && tess__owner(t, p) == t->ctx->rank;
}

/* Dense: the bucket gives the first candidate; step over empty or short ranges. */
static int dense_partition(const tess_table *t, uint64_t key)
{
    if (key >= t->key_count) return -1;
    int p = t->bucket_part[key >> t->bucket_shift];
    while (t->bounds[p + 1] <= key) p++;
    return p;
}

static uint64_t hash_key(const void *key, size_t n)
{
    const uint8_t *k = key;
    uint64_t h = 0xcbf29ce484222325ULL;
    for (size_t i = 0; i < n; i++) h = (h ^ k[i]) * 0x100000001b3ULL;
    return tess_mix64(h);
}

int tess_table_partition_of(const tess_table *t, const void *key)
{
    if (t->dense) {
        uint64_t k;
        memcpy(&k, key, sizeof k);
        return dense_partition(t, k);
    }
    return tess__table_hash_partition(t, key, t->nparts);
}

int tess__table_hash_partition(const tess_table *t, const void *key, int nparts)
{
    if (t->partitioner) {
        int p = t->partitioner(key, t->key_size, nparts);
        return p >= 0 && p < nparts ? p : -1;
    }
    return (int)(hash_key(key, t->key_size) % (uint64_t)nparts);
}

int tess_table_dense_range(const tess_table *t, int p, uint64_t *first_out, uint64_t *count_out)
{
    if (!t->dense || p < 0 || p >= t->nparts) return TESS_ERR_INVAL;
    *first_out = t->bounds[p];
    *count_out = t->bounds[p + 1] - t->bounds[p];
    return TESS_OK;
}

void *tess_table_dense_data(tess_table *t, int p, uint64_t *count_out)
{
    if (!t->dense || t->dropped || !tess_table_is_local(t, p)) return NULL;
    tess__partition *part = tess__part_here(t, p);
    return part ? tess__partition_dense_data(part, count_out) : NULL;
}

uint64_t tess__table_local_size(tess_table *t, int p)
{
    if (!tess_table_is_local(t, p)) return 0;
    pthread_mutex_lock(&t->locks[p]);
    uint64_t n = t->parts[p] ? tess__partition_size(t->parts[p]) : 0;
    pthread_mutex_unlock(&t->locks[p]);
    return n;
}
