/*
 * matmul_kernels.c — the kernels of `tessera run matmul`.
 *
 * A, B and C are dense tables keyed by block (bi * nb + bj), cut into the
 * same ranges of block rows and grouped, so partition p of all three lives
 * on one rank.  Instance p of the load kernel fills block rows p of A and
 * B, and copies B's into a per-rank cache laid out as row panels: block
 * row k of B as one B x nb*B row-major matrix.  The replicate kernel
 * copies the other ranks' partitions of B into the cache.
 * Instance p of the multiply kernel then computes each block row i of its
 * partition of C as
 *
 *   C(i, :) = sum over k = 0 .. nb-1, in that order, of A(i, k) * B(k, :)
 *
 * one dgemm per term (B x B times B x nb*B), accumulating into the row
 * panel of C, then cut into C's blocks.  A(i, k) is local.  One wide dgemm
 * per term ran 7% faster than nb square ones (OpenBLAS on one thread:
 * 53.5 against 50 GFLOP/s at n = 2000 and 4000): each call packs its
 * A block once for the whole row.  Every block row of C is made by the
 * same sequence of single-threaded dgemm calls whoever computes it, so C is
 * the same bits for any worker, rank and partition count.
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

static size_t panel_ld(const mm_app *app) { return (size_t)(app->g.nb * app->g.block); }

/* Block `i` of partition q (B x B, row-major) to its place in the
 * partition's row panels. */
static void block_to_panel(const mm_app *app, uint64_t i, const double *blk, double *slot)
{
    size_t B = (size_t)app->g.block, nb = (size_t)app->g.nb, ld = panel_ld(app);
    double *dst = slot + (i / nb) * B * ld + (i % nb) * B;
    for (size_t r = 0; r < B; r++) memcpy(dst + r * ld, blk + r * B, B * sizeof *blk);
}

/* Copy partition q of B into its slot of the rank's cache, as row panels:
 * straight from the partition's array when it is local (during the
 * replicate phase no partition moves: its instances have no locality, so
 * nothing is stolen), else block by block from the owner into `blk` —
 * messages of one block reuse the same memory from one to the next, where
 * a snapshot of the whole partition would page-fault several fresh buffers
 * of its size. */
static int fetch_partition(mm_app *app, int q, double *slot, double *blk)
{
    uint64_t first, count, have = 0;
    int rc = tess_table_dense_range(app->b, q, &first, &count);
    size_t bd = block_doubles(app), bytes = bd * sizeof(double);
    const double *local = rc == 0 ? tess_table_dense_data(app->b, q, &have) : NULL;
    if (local && have == count) {
        for (uint64_t i = 0; i < count; i++) block_to_panel(app, i, local + i * bd, slot);
        return 0;
    }
    for (uint64_t i = 0; rc == 0 && i < count; i++) {
        uint64_t key = first + i;
        size_t len = 0;
        rc = tess_table_get(app->b, &key, blk, bytes, &len);
        if (rc == 0 && len != bytes) rc = TESS_ERR_FORMAT;
        if (rc == 0) block_to_panel(app, i, blk, slot);
    }
    return rc;
}

/* One slot per partition of B, allocated and touched before the run: the
 * replica's memory is part of the setup, like the tables themselves (the
 * copy into it is timed). */
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

/* Partition q of B in the rank's cache, copied on first use (blk: room
 * for one block). */
static const double *cached_partition(mm_app *app, int q, double *blk, int *rc)
{
    mm_bcache *bc = &app->bcache;
    pthread_mutex_lock(&bc->locks[q]);
    if (!bc->ready[q] && (*rc = fetch_partition(app, q, bc->slot[q], blk)) == 0) bc->ready[q] = 1;
    const double *base = bc->ready[q] ? bc->slot[q] : NULL;
    pthread_mutex_unlock(&bc->locks[q]);
    return base;
}

/* Block row k of B as a B x nb*B row-major panel, from the rank's cache
 * (a pointer into a local partition could dangle: work stealing may move
 * that partition away with its not-yet-started task). */
static const double *b_panel(mm_app *app, long k, double *blk, int *rc)
{
    uint64_t key = (uint64_t)(k * app->g.nb), first, count;
    int q = tess_table_partition_of(app->b, &key);
    if (tess_table_dense_range(app->b, q, &first, &count) != 0) {
        *rc = TESS_ERR_NOTFOUND;
        return NULL;
    }
    const double *base = cached_partition(app, q, blk, rc);
    if (!base) {
        if (*rc == 0) *rc = TESS_ERR_NOTFOUND;
        return NULL;
    }
    return base + (key - first) / (uint64_t)app->g.nb * (size_t)app->g.block * panel_ld(app);
}

/* ---------------------------------------------------------------- load */

/* Block row bi of matrix `which` into table t; B's also into the rank's
 * cache, as row panels of partition p (`panels`; NULL for A). */
static int load_block_row(tess_task *task, mm_app *app, tess_table *t, int which, long bi, int p,
                          double *panels)
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
        if (rc == 0 && panels)
            block_to_panel(app, (uint64_t)((bi - app->row_bounds[p]) * g->nb + bj), blk, panels);
    }
    free(rowbuf);
    free(blk);
    return rc;
}

/* Instance p loads block rows p of A and B, and puts B's into the rank's
 * cache while they are at hand: the rank's own part of the copy is made
 * with the input, like the tables (a partition moved to another rank by
 * work stealing loads there, into that rank's cache). */
int mm_load_kernel(tess_task *task, const void *args, size_t args_len)
{
    (void)args, (void)args_len;
    mm_app *app = tess_task_app(task);
    mm_bcache *bc = &app->bcache;
    int p = tess_task_instance(task), rc = 0;
    for (long bi = app->row_bounds[p]; rc == 0 && bi < app->row_bounds[p + 1]; bi++) {
        rc = load_block_row(task, app, app->a, 0, bi, p, NULL);
        if (rc == 0) rc = load_block_row(task, app, app->b, 1, bi, p, bc->slot[p]);
    }
    pthread_mutex_lock(&bc->locks[p]);
    bc->ready[p] = rc == 0;
    pthread_mutex_unlock(&bc->locks[p]);
    return rc;
}

/* ---------------------------------------------------------------- replicate */

/* Every rank copies all of B into its cache before any block product, one
 * instance per worker sharing the partitions out: done while the workers
 * wait for the transfers, instead of in the middle of the dgemm calls,
 * where a progress thread competing with computing workers for the cores
 * moved the data at a few tens of MB/s.  One rank copies too: the panels
 * are another layout than the table's blocks. */
int mm_replicate_kernel(tess_task *task, const void *args, size_t args_len)
{
    (void)args, (void)args_len;
    mm_app *app = tess_task_app(task);
    int rc = 0, P = app->partitions, start = tess_task_instance(task) % P;
    double *blk = malloc(block_doubles(app) * sizeof *blk);
    if (!blk) return TESS_ERR_NOMEM;
    for (int i = 0; rc == 0 && i < P; i++) cached_partition(app, (start + i) % P, blk, &rc);
    free(blk);
    return rc;
}

/* ---------------------------------------------------------------- multiply */

/* Block row bi of C: its row panel accumulated over k, then cut into
 * blocks and stored (blk: room for one block). */
static int multiply_block_row(mm_app *app, long bi, double *crow, double *abuf, double *blk)
{
    const mm_geom *g = &app->g;
    int B = (int)g->block, ld = (int)panel_ld(app), rc = 0;
    size_t bd = block_doubles(app);
    for (long k = 0; rc == 0 && k < g->nb; k++) {
        const double *a = mm_block(app, app->a, bi * g->nb + k, abuf);
        if (!a) return TESS_ERR_NOTFOUND;
        const double *b = b_panel(app, k, blk, &rc);
        if (b) mm_dgemm(B, ld, B, k == 0 ? 0.0 : 1.0, a, B, b, ld, crow, ld);
    }
    for (long j = 0; rc == 0 && j < g->nb; j++) {
        for (int r = 0; r < B; r++)
            memcpy(blk + (size_t)r * B, crow + (size_t)r * ld + (size_t)j * B, B * sizeof *blk);
        uint64_t key = (uint64_t)(bi * g->nb + j);
        rc = tess_table_put(app->c, &key, blk, bd * sizeof *blk);
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
    double *blk = malloc(bd * sizeof *blk);
    int rc = crow && abuf && blk ? 0 : TESS_ERR_NOMEM;
    for (long bi = app->row_bounds[p]; rc == 0 && bi < app->row_bounds[p + 1]; bi++)
        rc = multiply_block_row(app, bi, crow, abuf, blk);
    free(crow);
    free(abuf);
    free(blk);
    return rc;
}
