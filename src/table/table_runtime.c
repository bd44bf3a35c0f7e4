/*
 * table_runtime.c — tables created and dropped while the job runs, from the
 * control function (Piccolo's control function makes tables as it goes).
 *
 * Tables are known by their index, the order of creation, on every rank:
 * messages, checkpoints and the scheduler's locality name a table by it.  So
 * a table created at run time is created on rank 0 first (which takes the
 * next index), then on every other rank by a request (TABLE_CREATE) that
 * carries the spec and the index; each rank checks that it gives the table
 * the same index, and tess_table_create returns once every rank answered.
 * Only between a barrier and the next tess_run (no kernel runs, nothing is
 * in flight), and after any checkpoint being written is committed (its
 * writers read the table list); while periodic checkpoints are on it is
 * refused.  Replicated tables are refused at run time: their node-shared
 * images are set up when tess_main starts.
 *
 * A dropped table keeps its index (never reused) and its handle, which
 * every operation then refuses; its partitions are emptied (a dense table's
 * arrays become empty hash partitions), the workers' buffers of it freed.
 * Checkpoints go on recording it, empty, so a job that restores must create
 * and drop its tables in the same order before it restores.
 */
#include <stdlib.h>
#include <string.h>
#include "core/bytes.h"
#include "table_internal.h"

#define NO_STRING 0xffffffffu

/* ---------------------------------------------------------------- spec bytes */

static size_t string_bytes(const char *s) { return 4 + (s ? strlen(s) : 0); }

static uint8_t *emit_string(uint8_t *p, const char *s)
{
    size_t n = s ? strlen(s) : 0;
    p = tess__emit_le32(p, s ? (uint32_t)n : NO_STRING);
    memcpy(p, s ? s : "", n);
    return p + n;
}

/* The spec as bytes, with the index every rank must give the table. */
static int encode_spec(const tess_table_spec *s, uint32_t index, uint8_t **out, size_t *len)
{
    size_t nb = s->dense && s->range_bounds ? (size_t)s->partitions + 1 : 0;
    size_t n = 4 * 8 + 8 * 8 + string_bytes(s->name) + string_bytes(s->partitioner) +
               string_bytes(s->accumulator) + 8 * nb;
    uint8_t *b = malloc(n), *p = b;
    if (b == NULL) return TESS_ERR_NOMEM;
    p = tess__emit_le32(p, index);
    p = tess__emit_le32(p, (uint32_t)s->partitions);
    p = tess__emit_le32(p, (uint32_t)s->dense);
    p = tess__emit_le32(p, (uint32_t)s->accum);
    p = tess__emit_le32(p, (uint32_t)s->elem);
    p = tess__emit_le32(p, s->group_with ? (uint32_t)s->group_with->index : NO_STRING);
    p = tess__emit_le32(p, (uint32_t)nb);
    p = tess__emit_le32(p, 0);
    p = tess__emit_le64(p, s->key_size);
    p = tess__emit_le64(p, s->value_size);
    p = tess__emit_le64(p, s->key_count);
    tess__put_f64(p, s->flush_ms);
    p += 8;
    p = emit_string(p, s->name);
    p = emit_string(p, s->partitioner);
    p = emit_string(p, s->accumulator);
    for (size_t i = 0; i < nb; i++) p = tess__emit_le64(p, s->range_bounds[i]);
    *out = b;
    *len = (size_t)(p - b);
    return TESS_OK;
}

/* A string of the spec, copied into *out (NULL stays NULL). */
static int take_string(tess__reader *r, char **out)
{
    uint32_t n;
    const uint8_t *bytes;
    *out = NULL;
    if (!tess__take_le32(r, &n)) return 0;
    if (n == NO_STRING) return 1;
    if (!tess__take_bytes(r, n, &bytes) || (*out = malloc((size_t)n + 1)) == NULL) return 0;
    memcpy(*out, bytes, n);
    (*out)[n] = '\0';
    return 1;
}

/* What decode_spec fills: the spec and the storage its pointers use. */
typedef struct decoded_spec {
    tess_table_spec s;
    uint32_t index;
    char *name, *partitioner, *accumulator;
    uint64_t *bounds;
} decoded_spec;

static void decoded_free(decoded_spec *d)
{
    TESS_FREE_ALL(d->name, d->partitioner, d->accumulator, d->bounds);
}

static int decode_numbers(tess_ctx *ctx, tess__reader *r, decoded_spec *d, uint32_t *nb)
{
    uint32_t parts, dense, accum, elem, group, pad;
    uint64_t ks, vs, kc;
    const uint8_t *flush;
    if (!tess__take_le32(r, &d->index) || !tess__take_le32(r, &parts) ||
        !tess__take_le32(r, &dense) || !tess__take_le32(r, &accum) || !tess__take_le32(r, &elem) ||
        !tess__take_le32(r, &group) || !tess__take_le32(r, nb) || !tess__take_le32(r, &pad) ||
        !tess__take_le64(r, &ks) || !tess__take_le64(r, &vs) || !tess__take_le64(r, &kc) ||
        !tess__take_bytes(r, 8, &flush))
        return 0;
    tess_table_spec_init(&d->s);
    d->s.partitions = (int)parts;
    d->s.dense = (int)dense;
    d->s.accum = (tess_accum)accum;
    d->s.elem = (tess_elem)elem;
    d->s.key_size = ks;
    d->s.value_size = vs;
    d->s.key_count = kc;
    d->s.flush_ms = tess__get_f64(flush);
    if (group != NO_STRING && group >= (uint32_t)ctx->ntables) return 0;
    d->s.group_with = group != NO_STRING ? ctx->tables[group] : NULL;
    return 1;
}

static int decode_spec(tess_ctx *ctx, const uint8_t *p, size_t len, decoded_spec *d)
{
    tess__reader r = tess__reader_of(p, len);
    uint32_t nb = 0;
    memset(d, 0, sizeof *d);
    if (!decode_numbers(ctx, &r, d, &nb) || !take_string(&r, &d->name) ||
        !take_string(&r, &d->partitioner) || !take_string(&r, &d->accumulator))
        return 0;
    if (nb > 0 && (d->bounds = malloc((size_t)nb * sizeof *d->bounds)) == NULL) return 0;
    for (uint32_t i = 0; i < nb; i++)
        if (!tess__take_le64(&r, &d->bounds[i])) return 0;
    d->s.name = d->name;
    d->s.partitioner = d->partitioner;
    d->s.accumulator = d->accumulator;
    d->s.range_bounds = d->bounds;
    return 1;
}

/* ---------------------------------------------------------------- rank 0 */

/* The control function between a barrier and the next run, no epoch being
 * written: when a table may come or go. */
static int check_quiet(tess_ctx *ctx, const char *what)
{
    int rc = tess__check_control(ctx, what);
    if (rc != TESS_OK) return rc;
    TESS_RETURN_IF(ctx, ctx->run_open, TESS_ERR_MISUSE,
                   "%s while kernels may run: call tess_barrier() after tess_run() first", what);
    return ctx->tables_change_hook ? ctx->tables_change_hook(ctx, what) : TESS_OK;
}

/* Send a request of `type` to every other rank; the first failure wins. */
static int ask_every_rank(tess_ctx *ctx, uint32_t type, const uint8_t *body, size_t len,
                          const char *what, const char *name)
{
    for (int r = 0; r < ctx->nranks; r++) {
        if (r == ctx->rank) continue;
        int rc = tess__request(ctx, r, type, body, len, NULL, NULL);
        TESS_RETURN_IF(ctx, rc != TESS_OK, rc, "%s %s: rank %d refused (%s)", what, name, r,
                       tess_strerror(rc));
    }
    return TESS_OK;
}

int tess__table_create_at_run_time(tess_ctx *ctx, const tess_table_spec *s, tess_table **out)
{
    const char *name = s->name ? s->name : "table";
    int rc = check_quiet(ctx, "tess_table_create()");
    if (rc != TESS_OK) return rc;
    TESS_RETURN_IF(ctx, s->replicated, TESS_ERR_UNSUPPORTED,
                   "table %s: not supported yet: a replicated table created after tess_main() "
                   "started",
                   name);
    TESS_RETURN_IF(ctx, s->group_with && s->group_with->dropped, TESS_ERR_INVAL,
                   "table %s: grouped with dropped table %s", name, s->group_with->name);
    tess_table *t = NULL;
    rc = tess__table_create_here(ctx, s, &t);
    if (rc != TESS_OK) return rc;
    uint8_t *body = NULL;
    size_t len = 0;
    rc = encode_spec(s, (uint32_t)t->index, &body, &len);
    if (rc == TESS_OK)
        rc = ask_every_rank(ctx, TESS_MSG_TABLE_CREATE, body, len, "creating table", name);
    free(body);
    if (rc == TESS_OK) *out = t;
    return rc;
}

/* ---------------------------------------------------------------- dropping */

/* Every slot's buffers of table `index` (all flushed: no kernel runs). */
static void free_buffers_of(tess_ctx *ctx, int index)
{
    for (int w = 0; w <= ctx->workers; w++) tess__slot_forget_table(&ctx->slots[w], index);
}

/* Empty every local partition; a dense one becomes an empty hash partition
 * so its array is freed (no operation reaches it any more). */
static int empty_partitions(tess_table *t)
{
    int rc = TESS_OK;
    for (int p = 0; p < t->nparts; p++) {
        pthread_mutex_lock(&t->locks[p]);
        if (t->parts[p] != NULL) {
            tess__partition *empty = tess__partition_new_hash(t->key_size, t->value_size, &t->acc);
            if (empty != NULL) {
                tess__partition_free(t->parts[p]);
                __atomic_store_n(&t->parts[p], empty, __ATOMIC_RELEASE);
            } else {
                tess__partition_clear(t->parts[p]);
                rc = TESS_ERR_NOMEM;
            }
        }
        pthread_mutex_unlock(&t->locks[p]);
    }
    return rc;
}

static int drop_here(tess_table *t)
{
    t->dropped = 1;
    free_buffers_of(t->ctx, t->index);
    return empty_partitions(t);
}

/* A table not dropped whose placement follows t's (group_with), or NULL. */
static tess_table *live_follower(const tess_table *t)
{
    for (int i = 0; i < t->ctx->ntables; i++) {
        tess_table *o = t->ctx->tables[i];
        if (o != t && o->group == t->index && !o->dropped) return o;
    }
    return NULL;
}

int tess_table_drop(tess_table *t)
{
    if (t == NULL) return TESS_ERR_INVAL;
    tess_ctx *ctx = t->ctx;
    int rc = check_quiet(ctx, "tess_table_drop()");
    if (rc == TESS_OK) rc = tess__table_check_live(t);
    if (rc != TESS_OK) return rc;
    TESS_RETURN_IF(ctx, t->replica != NULL, TESS_ERR_UNSUPPORTED,
                   "table %s: not supported yet: dropping a table with a replica", t->name);
    tess_table *follower = live_follower(t);
    TESS_RETURN_IF(ctx, follower != NULL, TESS_ERR_INVAL,
                   "table %s: table %s is grouped with it (drop that first)", t->name,
                   follower->name);
    uint8_t body[4];
    tess__put_le32(body, (uint32_t)t->index);
    rc = drop_here(t);
    if (rc == TESS_OK)
        rc = ask_every_rank(ctx, TESS_MSG_TABLE_DROP, body, sizeof body, "dropping table", t->name);
    return rc;
}

int tess__table_check_live(tess_table *t)
{
    TESS_RETURN_IF(t->ctx, t->dropped, TESS_ERR_MISUSE, "table %s was dropped", t->name);
    return TESS_OK;
}

/* ---------------------------------------------------------------- other ranks */

static int create_from(tess_ctx *ctx, const uint8_t *p, size_t len)
{
    decoded_spec d;
    int rc = decode_spec(ctx, p, len, &d) ? TESS_OK : TESS_ERR_FORMAT;
    if (rc == TESS_OK && d.index != (uint32_t)ctx->ntables) rc = TESS_ERR_INVAL;
    tess_table *t = NULL;
    if (rc == TESS_OK) rc = tess__table_create_here(ctx, &d.s, &t);
    decoded_free(&d);
    return rc;
}

static int drop_from(tess_ctx *ctx, const uint8_t *p, size_t len)
{
    if (len < 4) return TESS_ERR_FORMAT;
    uint32_t index = tess__get_le32(p);
    if (index >= (uint32_t)ctx->ntables) return TESS_ERR_INVAL;
    return drop_here(ctx->tables[index]);
}

static void on_message(tess_ctx *ctx, int src, uint32_t type, const uint8_t *p, size_t len)
{
    tess__req_hdr rq;
    if (tess__msg_head(&rq, sizeof rq, p, len) != 0) return;
    p += sizeof rq;
    len -= sizeof rq;
    int rc = type == TESS_MSG_TABLE_CREATE ? create_from(ctx, p, len) : drop_from(ctx, p, len);
    tess__reply(ctx, src, &rq, rc, NULL, 0);
}

int tess__table_runtime_handlers_init(tess_ctx *ctx)
{
    int rc = tess__comm_handle(ctx, TESS_MSG_TABLE_CREATE, on_message);
    return rc == TESS_OK ? tess__comm_handle(ctx, TESS_MSG_TABLE_DROP, on_message) : rc;
}
