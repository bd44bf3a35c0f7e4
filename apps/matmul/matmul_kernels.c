/*
 * matmul_kernels.c — the kernels of `tessera run matmul`.
 *
 * A, B and C are dense tables keyed by block (bi * nb + bj), cut into the
 * same ranges of block rows and grouped, so partition p of all three lives
 * on one rank.  Instance p of the load kernel fills block rows p of A and
 * B; instance p of the multiply kernel computes block rows p of C:
 *
 *   C(i, j) = sum over k = 0 .. nb-1, in that order, of A(i, k) * B(k, j)
 *
 * one dgemm per term, accumulating into C(i, j).  A(i, k) is local; B is
 * read whole: the instance's own partition in place, the others through a
 * per-rank cache that copies each once.  Every C block is made by the same
 * sequence of single-threaded dgemm calls whoever computes it, so C is the
 * same bits for any worker, rank and partition count.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "matmul_app.h"

/* ---------------------------------------------------------------- blocks */

static size_t block_doubles(const mm_app *app)
{
    return (size_t)app->opt.block * (size_t)app->opt.block;
}

const double *mm_block(const mm_app *app, tess_table *t, long key, double *buf)
{
    uint64_t k = (uint64_t)key, first, count;
    int p = tess_table_partition_of(t, &k);
    if (tess_table_is_local(t, p) && tess_table_dense_range(t, p, &first, &count) == 0) {
        const double *data = tess_table_dense_data(t, p, &count);
        if (data) return data + (k - first) * block_doubles(app);
    }
    size_t len = 0;
    size_t cap = block_doubles(app) * sizeof(double);
    return tess_table_get(t, &k, buf, cap, &len) == 0 && len == cap ? buf : NULL;
}

/* Copy partition q of B into its slot of the rank's cache: straight from
 * the partition's array when it is local (during the replicate phase no
 * partition moves: its instances have no locality, so nothing is stolen),
 * else block by block from the owner — messages of one block reuse the
 * same memory from one to the next, where a snapshot of the whole
 * partition would page-fault several fresh buffers of its size. */
static int fetch_partition(mm_app *app, int q, double *slot)
{
    uint64_t first, count, have = 0;
    int rc = tess_table_dense_range(app->b, q, &first, &count);
    size_t bytes = block_doubles(app) * sizeof(double);
    const double *local = rc == 0 ? tess_table_dense_data(app->b, q, &have) : NULL;
    if (local && have == count) {
        memcpy(slot, local, count * bytes);
        return 0;
    }
    for (uint64_t i = 0; rc == 0 && i < count; i++) {
        uint64_t key = first + i;
        size_t len = 0;
        rc = tess_table_get(app->b, &key, (char *)slot + i * bytes, bytes, &len);
        if (rc == 0 && len != bytes) rc = TESS_ERR_FORMAT;
    }
    return rc;
}

/* One slot per partition of B, allocated and touched before the run: the
 * replica is part of the setup, like the tables themselves. */
int mm_bcache_init(mm_bcache *bc, const mm_app *app)
{
    int P = app->partitions;
    size_t bytes = block_doubles(app) * sizeof(double);
    bc->slot = calloc((size_t)P, sizeof *bc->slot);
    bc->ready = calloc((size_t)P, sizeof *bc->ready);
    bc->locks = calloc((size_t)P, sizeof *bc->locks);
    if (!bc->slot || !bc->ready || !bc->locks) return TESS_ERR_NOMEM;
    for (int q = 0; q < P; q++) {
        uint64_t first, count;
        tess_table_dense_range(app->b, q, &first, &count);
        bc->slot[q] = malloc((count ? count : 1) * bytes);
        if (!bc->slot[q]) return TESS_ERR_NOMEM;
        memset(bc->slot[q], 0, count * bytes);
        pthread_mutex_init(&bc->locks[q], NULL);
    }
    return 0;
}

void mm_bcache_free(mm_bcache *bc, int partitions)
{
    for (int q = 0; bc->slot && q < partitions; q++) free(bc->slot[q]);
    for (int q = 0; bc->locks && q < partitions; q++) pthread_mutex_destroy(&bc->locks[q]);
    free(bc->slot);
    free(bc->ready);
    free(bc->locks);
}

/* Partition q of B in the rank's cache, copied on first use. */
static const double *cached_partition(mm_app *app, int q, int *rc)
{
    mm_bcache *bc = &app->bcache;
    pthread_mutex_lock(&bc->locks[q]);
    if (!bc->ready[q] && (*rc = fetch_partition(app, q, bc->slot[q])) == 0) bc->ready[q] = 1;
    const double *base = bc->ready[q] ? bc->slot[q] : NULL;
    pthread_mutex_unlock(&bc->locks[q]);
    return base;
}

/* Block (k, j) of B for instance `self`: its own partition in place (a
 * partition never leaves the rank while its instance runs), any other
 * through the rank's cache of copies — a pointer into another local
 * partition could dangle, since work stealing may move that partition away
 * with its not-yet-started task. */
static const double *b_block(mm_app *app, int self, long k, long j, int *rc)
{
    uint64_t key = (uint64_t)(k * app->g.nb + j), first, count;
    int q = tess_table_partition_of(app->b, &key);
    if (tess_table_dense_range(app->b, q, &first, &count) != 0) {
        *rc = TESS_ERR_NOTFOUND;
        return NULL;
    }
    const double *base = NULL;
    if (q == self || !app->bcache.slot) base = tess_table_dense_data(app->b, q, &count);
    if (!base) base = cached_partition(app, q, rc);
    if (!base) {
        if (*rc == 0) *rc = TESS_ERR_NOTFOUND;
        return NULL;
    }
    return base + (key - first) * block_doubles(app);
}

/* ---------------------------------------------------------------- load */

/* Block row bi of matrix `which` into table t. */
static int load_block_row(tess_task *task, mm_app *app, tess_table *t, int which, long bi)
{
    const mm_geom *g = &app->g;
    long B = g->block, rows = mm_block_extent(g, bi);
    const char *path = which == 0 ? app->opt.input_a : app->opt.input_b;
    double *rowbuf = malloc((size_t)rows * (size_t)g->n * sizeof *rowbuf);
    double *blk = malloc(block_doubles(app) * sizeof *blk);
    char err[512];
    int rc = rowbuf && blk ? 0 : TESS_ERR_NOMEM;
    if (rc == 0 && mm_read_rows(path, (uint64_t)app->opt.seed, which, g->n, bi * B, bi * B + rows,
                                rowbuf, err, sizeof err) != 0)
        rc = tess_set_error(tess_task_ctx(task), TESS_ERR_FORMAT, "%s", err);
    for (long bj = 0; rc == 0 && bj < g->nb; bj++) {
        long cols = mm_block_extent(g, bj);
        memset(blk, 0, block_doubles(app) * sizeof *blk);
        for (long r = 0; r < rows; r++)
            memcpy(blk + r * B, rowbuf + (size_t)r * (size_t)g->n + (size_t)(bj * B),
                   (size_t)cols * sizeof *blk);
        uint64_t key = (uint64_t)(bi * g->nb + bj);
        rc = tess_table_put(t, &key, blk, block_doubles(app) * sizeof *blk);
    }
    free(rowbuf);
    free(blk);
    return rc;
}

int mm_load_kernel(tess_task *task, const void *args, size_t args_len)
{
    (void)args, (void)args_len;
    mm_app *app = tess_task_app(task);
    int p = tess_task_instance(task), rc = 0;
    for (long bi = app->row_bounds[p]; rc == 0 && bi < app->row_bounds[p + 1]; bi++) {
        rc = load_block_row(task, app, app->a, 0, bi);
        if (rc == 0) rc = load_block_row(task, app, app->b, 1, bi);
    }
    return rc;
}

/* ---------------------------------------------------------------- replicate */

/* Every rank copies all of B into its cache before any block product, one
 * instance per worker sharing the partitions out: done while the workers
 * wait for the transfers, instead of in the middle of the dgemm calls,
 * where a progress thread competing with computing workers for the cores
 * moved the data at a few tens of MB/s. */
int mm_replicate_kernel(tess_task *task, const void *args, size_t args_len)
{
    (void)args, (void)args_len;
    mm_app *app = tess_task_app(task);
    if (!app->bcache.slot) return 0; /* one rank: nothing to copy */
    int rc = 0, P = app->partitions, start = tess_task_instance(task) % P;
    for (int i = 0; rc == 0 && i < P; i++) cached_partition(app, (start + i) % P, &rc);
    return rc;
}

/* ---------------------------------------------------------------- multiply */

/* Block row bi of C: nb blocks accumulated over k, then stored. */
static int multiply_block_row(mm_app *app, int self, long bi, double *crow, double *abuf)
{
    const mm_geom *g = &app->g;
    int B = (int)g->block, rc = 0;
    size_t bd = block_doubles(app);
    memset(crow, 0, (size_t)g->nb * bd * sizeof *crow);
    for (long k = 0; rc == 0 && k < g->nb; k++) {
        const double *a = mm_block(app, app->a, bi * g->nb + k, abuf);
        if (!a) return TESS_ERR_NOTFOUND;
        for (long j = 0; rc == 0 && j < g->nb; j++) {
            const double *b = b_block(app, self, k, j, &rc);
            if (b) mm_dgemm(B, B, B, 1.0, a, B, b, B, crow + (size_t)j * bd, B);
        }
    }
    for (long j = 0; rc == 0 && j < g->nb; j++) {
        uint64_t key = (uint64_t)(bi * g->nb + j);
        rc = tess_table_put(app->c, &key, crow + (size_t)j * bd, bd * sizeof *crow);
    }
    return rc;
}

int mm_multiply_kernel(tess_task *task, const void *args, size_t args_len)
{
    (void)args, (void)args_len;
    mm_app *app = tess_task_app(task);
    int p = tess_task_instance(task);
    size_t bd = block_doubles(app);
    double *crow = malloc((size_t)app->g.nb * bd * sizeof *crow);
    double *abuf = malloc(bd * sizeof *abuf);
    int rc = crow && abuf ? 0 : TESS_ERR_NOMEM;
    for (long bi = app->row_bounds[p]; rc == 0 && bi < app->row_bounds[p + 1]; bi++)
        rc = multiply_block_row(app, p, bi, crow, abuf);
    free(crow);
    free(abuf);
    return rc;
}
