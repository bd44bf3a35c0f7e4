/*
 * kmeans.c — `tessera run kmeans`: Lloyd's k-means (Piccolo §4.2) on the
 * tables face.  Every rank holds all points (read or generated before
 * tess_main, identically); the runtime holds the distributed state:
 *
 *   points      dense, key = point index, DIM doubles, P partitions
 *   assignment  dense i32, grouped with points: the centre of each point
 *   centres     dense, replicated, K keys of DIM doubles (control writes)
 *   partials    dense, replicated, grouped with points, key p*K + j: the DIM
 *               coordinate sums and the count of the points of partition p
 *               nearest to centre j
 *   moved       one i64 key, sum: points whose centre changed, all iterations
 *
 * Each iteration the assign kernel runs where partition i of points lives,
 * reads the K centres from its rank's replica, assigns its points and writes
 * its K partial sums with one tess_table_put_range, which every rank's
 * replica of partials receives at the barrier: the control function reads
 * them there and stores the new centres the same way, so an iteration costs
 * a run, two barriers and no request to another rank.
 * Rank 0's control function adds the partial sums in partition order — not in
 * arrival order, so the centres depend only on the points and the partition
 * count, and a run restored from a checkpoint ends exactly where an
 * uninterrupted one does — and turns them into new centres.
 *
 * With --checkpoint-dir, every --checkpoint-every iterations end with a
 * checkpoint barrier between two iterations: the centres are stored, the
 * partials cleared (so a checkpoint restores into another partition count),
 * and the iteration count is the checkpoint's user data.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kmeans_app.h"

/* ---------------------------------------------------------------- kernels */

/* Instance i stores the points of partition i; assignments start at -1. */
static int kmeans_load(tess_task *task, const void *args, size_t args_len)
{
    (void)args, (void)args_len;
    kmeans_app *app = tess_task_app(task);
    uint64_t first, count;
    int rc = tess_table_dense_range(app->points, tess_task_instance(task), &first, &count);
    if (rc == 0)
        rc = tess_table_put_range(app->points, first, count,
                                  app->pts.coords + first * (uint64_t)app->dim);
    int32_t none[KM_CHUNK];
    for (int i = 0; i < KM_CHUNK; i++) none[i] = -1;
    for (uint64_t off = 0; rc == 0 && off < count; off += KM_CHUNK)
        rc = tess_table_put_range(app->assignment, first + off,
                                  count - off < KM_CHUNK ? count - off : KM_CHUNK, none);
    return rc;
}

/* What one assign instance works on. */
typedef struct assign_state {
    uint64_t first, count; /* the instance's range of points */
    double *transposed;    /* DIM*K: coordinate d of every centre together */
    double *acc;           /* K*(DIM+1): per-centre coordinate sums, count */
    const double *pts;     /* count*DIM */
    const int32_t *prev;   /* count previous assignments */
    void *pts_owned, *prev_owned;
    int64_t moved;
} assign_state;

/* The values of a dense partition: the local array when there is one, else a
 * copy made through the iterator (which fetches a remote partition). */
static int partition_values(tess_table *t, int p, const assign_state *s, size_t vsize,
                            const void **values_out, void **owned_out)
{
    uint64_t n = 0;
    void *data = tess_table_dense_data(t, p, &n);
    if (data && n == s->count) {
        *values_out = data;
        return 0;
    }
    char *copy = calloc(s->count ? s->count : 1, vsize);
    tess_iter *it = NULL;
    int rc = copy ? tess_table_iter(t, p, &it) : TESS_ERR_NOMEM;
    const void *key, *value;
    size_t len;
    while (rc == 0 && (rc = tess_iter_next(it, &key, &value, &len)) == 1) {
        uint64_t k = *(const uint64_t *)key;
        if (k >= s->first && k - s->first < s->count && len == vsize)
            memcpy(copy + (k - s->first) * vsize, value, vsize);
        rc = 0;
    }
    tess_iter_free(it);
    *values_out = copy;
    *owned_out = copy;
    return rc;
}

/* All K centres from the centres table itself (after a restore, before its
 * replica is made); kernels read the replica. */
static int read_centres(const kmeans_app *app, double *centres)
{
    size_t vsize = (size_t)app->dim * sizeof(double);
    tess_iter *it = NULL;
    int rc = tess_table_iter(app->centres, 0, &it), found = 0;
    const void *key, *value;
    size_t len;
    while (rc >= 0 && (rc = tess_iter_next(it, &key, &value, &len)) == 1) {
        uint64_t j;
        memcpy(&j, key, sizeof j);
        if (j >= (uint64_t)app->k || len != vsize) {
            rc = TESS_ERR_FORMAT; /* a runtime bug: never use it */
            break;
        }
        memcpy(centres + j * (uint64_t)app->dim, value, vsize);
        found++;
    }
    tess_iter_free(it);
    if (rc < 0) return rc;
    return found == app->k ? 0 : TESS_ERR_NOTFOUND;
}

static int assign_begin(const kmeans_app *app, int p, assign_state *s)
{
    int rc = tess_table_dense_range(app->points, p, &s->first, &s->count);
    if (rc != 0) return rc;
    size_t kd = (size_t)app->k * (size_t)app->dim;
    uint64_t n = 0;
    const double *centres = tess_table_replica(app->centres, &n); /* K rows of DIM */
    s->transposed = malloc(kd * sizeof(double));
    s->acc = calloc((size_t)app->k * (size_t)(app->dim + 1), sizeof(double));
    rc = !s->transposed || !s->acc ? TESS_ERR_NOMEM : n == (uint64_t)app->k ? 0 : TESS_ERR_INVAL;
    for (size_t j = 0; rc == 0 && j < (size_t)app->k; j++)
        for (size_t d = 0; d < (size_t)app->dim; d++)
            s->transposed[d * (size_t)app->k + j] = centres[j * (size_t)app->dim + d];
    if (rc == 0)
        rc = partition_values(app->points, p, s, (size_t)app->dim * sizeof(double),
                              (const void **)&s->pts, &s->pts_owned);
    if (rc == 0)
        rc = partition_values(app->assignment, p, s, sizeof(int32_t), (const void **)&s->prev,
                              &s->prev_owned);
    return rc;
}

static void assign_end(assign_state *s)
{
    free(s->transposed);
    free(s->acc);
    free(s->pts_owned);
    free(s->prev_owned);
}

/*
 * Nearest centre by squared Euclidean distance; ties go to the lowest index.
 * Eight (then four) centres at a time, their distances in registers and
 * growing one coordinate at a time (centres transposed: ct[d*K + j], so
 * they are side by side and the compiler packs them into vector
 * registers).  Each distance is still the sum of its squared differences
 * in coordinate order: the same bits as one centre at a time, whatever the
 * vector width.
 */
static double distance(const double *restrict x, const double *restrict ct, int k, int dim, int j)
{
    double sum = 0.0;
    for (int d = 0; d < dim; d++) {
        double diff = x[d] - ct[(size_t)d * (size_t)k + (size_t)j];
        sum += diff * diff;
    }
    return sum;
}

#define KM_GROUP(W)                                                                \
    for (; j + W <= k; j += W) {                                                   \
        double s[W] = {0};                                                         \
        for (int d = 0; d < dim; d++) {                                            \
            const double xd = x[d], *row = ct + (size_t)d * (size_t)k + (size_t)j; \
            for (int i = 0; i < W; i++) s[i] += (xd - row[i]) * (xd - row[i]);     \
        }                                                                          \
        for (int i = 0; i < W; i++)                                                \
            if (s[i] < best_dist) best_dist = s[i], best = j + i;                  \
    }

/* The machine's widest vectors, chosen once at load time (GCC's function
 * multiversioning): 8 distances in one AVX-512 register, 4 in AVX2's,
 * 2 in the x86-64 baseline's SSE2.  No FMA: -ffp-contract=off holds in
 * every clone.  Not under ThreadSanitizer: its runtime is not up when the
 * dynamic loader runs the clones' resolver, and every program crashed. */
#if defined(__GNUC__) && !defined(__clang__) && defined(__x86_64__) && !defined(__SANITIZE_THREAD__)
__attribute__((target_clones("avx512f", "avx2", "default")))
#endif
int32_t
kmeans_nearest_centre(const double *restrict x, const double *restrict ct, int k, int dim)
{
    int32_t best = 0;
    double best_dist = INFINITY;
    int j = 0;
    KM_GROUP(8)
    KM_GROUP(4)
    for (; j < k; j++) {
        double dist = distance(x, ct, k, dim, j);
        if (dist < best_dist) best_dist = dist, best = j;
    }
    return best;
}

int32_t kmeans_assign_point(const double *x, const double *ct, int k, int dim, double *acc)
{
    int32_t c = kmeans_nearest_centre(x, ct, k, dim);
    double *row = acc + (size_t)c * (size_t)(dim + 1);
    for (int d = 0; d < dim; d++) row[d] += x[d];
    row[dim] += 1.0;
    return c;
}

/* Assign points [off, off+n) of the instance's range and write them. */
static int assign_chunk(const kmeans_app *app, assign_state *s, uint64_t off, size_t n)
{
    int32_t chosen[KM_CHUNK];
    for (size_t i = 0; i < n; i++) {
        const double *x = s->pts + (off + i) * (uint64_t)app->dim;
        chosen[i] = kmeans_assign_point(x, s->transposed, app->k, app->dim, s->acc);
        s->moved += chosen[i] != s->prev[off + i];
    }
    return tess_table_put_range(app->assignment, s->first + off, n, chosen);
}

/* Instance p's K partial sums (keys p*K ... p*K+K-1) in one range, and its
 * moved count. */
static int assign_publish(const kmeans_app *app, int p, const assign_state *s)
{
    int rc = tess_table_put_range(app->partials, (uint64_t)p * (uint64_t)app->k, (uint64_t)app->k,
                                  s->acc);
    uint64_t key0 = 0;
    if (rc == 0) rc = tess_table_update(app->moved, &key0, &s->moved, sizeof s->moved);
    return rc;
}

static int kmeans_assign(tess_task *task, const void *args, size_t args_len)
{
    (void)args, (void)args_len;
    const kmeans_app *app = tess_task_app(task);
    assign_state s;
    memset(&s, 0, sizeof s);
    int rc = assign_begin(app, tess_task_instance(task), &s);
    for (uint64_t off = 0; rc == 0 && off < s.count; off += KM_CHUNK)
        rc = assign_chunk(app, &s, off, s.count - off < KM_CHUNK ? s.count - off : KM_CHUNK);
    if (rc == 0) rc = assign_publish(app, tess_task_instance(task), &s);
    assign_end(&s);
    return rc;
}

/* ---------------------------------------------------------------- control */

/* Report a failed runtime call once, with the runtime's detailed message. */

/* Check every output up front, so a bad path fails before the computation
 * (no file is created until the results are written). */
static int control_check_outputs(kmeans_app *app)
{
    const kmeans_opts *o = &app->opt;
    if (o->run.output && app_outfile_check(o->run.output) != 0) return TESS_ERR_IO;
    if (o->assignments && app_outfile_check(o->assignments) != 0) return TESS_ERR_IO;
    if (o->run.metrics && app_outfile_check(o->run.metrics) != 0) return TESS_ERR_IO;
    return 0;
}

/* Open the outputs asked for, once there is something to write. */
static int control_open_outputs(kmeans_app *app)
{
    const kmeans_opts *o = &app->opt;
    if (o->run.output && app_outfile_open(&app->out_centres, o->run.output) != 0)
        return TESS_ERR_IO;
    if (o->assignments && app_outfile_open(&app->out_assign, o->assignments) != 0)
        return TESS_ERR_IO;
    if (o->run.metrics && app_outfile_open(&app->out_metrics, o->run.metrics) != 0)
        return TESS_ERR_IO;
    return 0;
}

static void control_abort_outputs(kmeans_app *app)
{
    app_outfile_abort(&app->out_centres);
    app_outfile_abort(&app->out_assign);
    app_outfile_abort(&app->out_metrics);
}

/* The centres into the table and, at the barrier, into every replica. */
static int put_centres(tess_ctx *ctx, kmeans_app *app)
{
    int rc = tess_table_put_range(app->centres, 0, (uint64_t)app->k, app->centre_values);
    if (rc == 0) rc = tess_barrier(ctx);
    return rc == 0 ? 0 : app_control_fail(KM_APP, ctx, "storing centres", rc);
}

/* The control function's arrays. */
static int control_alloc(tess_ctx *ctx, kmeans_app *app)
{
    app->centre_values = malloc((size_t)app->k * (size_t)app->dim * sizeof(double));
    app->iteration_seconds = calloc((size_t)app->opt.iterations, sizeof(double));
    if (!app->centre_values || !app->iteration_seconds)
        return app_control_fail(KM_APP, ctx, "starting", TESS_ERR_NOMEM);
    return 0;
}

/* Run the load kernel; the initial centres are the first K points. */
static int control_load(tess_ctx *ctx, kmeans_app *app)
{
    double t0 = tess_now();
    int rc = tess_run(ctx, "kmeans_load", app->partitions, app->points, NULL, 0);
    if (rc == 0) rc = tess_barrier(ctx);
    if (rc != 0) return app_control_fail(KM_APP, ctx, "loading points", rc);
    app->load_seconds += tess_now() - t0;
    size_t n = (size_t)app->k * (size_t)app->dim;
    memcpy(app->centre_values, app->pts.coords, n * sizeof(double));
    return put_centres(ctx, app);
}

/* What a checkpoint stores besides the tables, whose centres table holds the
 * centres the next iteration starts from. */
typedef struct kmeans_resume {
    int64_t done; /* iterations finished */
} kmeans_resume;

/* A loaded epoch's tables: K finite centres and every point. */
static int validate_epoch(tess_ctx *ctx, void *arg, const void *user, size_t len, uint64_t epoch,
                          char *why, size_t whylen)
{
    const kmeans_app *app = arg;
    int64_t centres = 0;
    (void)ctx, (void)user, (void)len, (void)epoch;
    if (app_ckpt_cli_all_finite(app->centres, "the centres table", &centres, why, whylen)) return 1;
    if (centres != app->k)
        return snprintf(why, whylen, "the centres table holds %lld centres, not %d",
                        (long long)centres, app->k),
               1;
    int64_t points = tess_table_size(app->points);
    if (points != (int64_t)app->pts.n)
        return snprintf(why, whylen, "the points table holds %lld points, not %llu",
                        (long long)points, (unsigned long long)app->pts.n),
               1;
    return 0;
}

/* Points moved, over every iteration so far (restored ones too). */
static int64_t read_moved(const kmeans_app *app)
{
    uint64_t key0 = 0;
    int64_t moved = 0;
    size_t len = 0;
    if (tess_table_get(app->moved, &key0, &moved, sizeof moved, &len) != 0) return 0;
    return moved;
}

/* Take up a restored checkpoint: the iteration count and the centres
 * (app_ckpt_cli_restore passed over epochs beyond --iterations). */
static int control_resume(tess_ctx *ctx, kmeans_app *app, const kmeans_resume *r, uint64_t epoch)
{
    int rc = read_centres(app, app->centre_values);
    /* replicas are not checkpointed: copy the centres into them */
    if (rc == 0) rc = tess_table_replicate(app->centres);
    if (rc == 0) rc = tess_barrier(ctx);
    app->moved_before = read_moved(app);
    if (rc != 0) return app_control_fail(KM_APP, ctx, "reading the restored centres", rc);
    app->first_iteration = (long)r->done;
    app->restored_epoch = epoch;
    app_ckpt_cli_restored(KM_APP, &app->opt.ckpt, "iteration", epoch, r->done, app->opt.iterations);
    return 0;
}

/* With --restore, the newest checkpoint first (before any kernel writes a
 * table); then the outputs, so a bad path fails before the computation; then
 * the points and the initial centres, unless a checkpoint was restored. */
static int control_start(tess_ctx *ctx, kmeans_app *app)
{
    kmeans_resume r;
    uint64_t epoch = 0;
    const app_ckpt_done done = {app->opt.iterations, "iteration", "iterations"};
    int restored = app_ckpt_cli_restore(KM_APP, ctx, &app->opt.ckpt, &done, validate_epoch, app, &r,
                                        sizeof r, &epoch);
    int rc = restored < 0 ? restored : control_alloc(ctx, app);
    if (rc == 0) rc = control_check_outputs(app);
    if (rc == 0) rc = restored == 1 ? control_resume(ctx, app, &r, epoch) : control_load(ctx, app);
    return rc;
}

/* New centre = coordinate sums / count, the partial sums of the partitions
 * added in partition order; an empty cluster keeps its centre. */
static void centres_from_partials(kmeans_app *app, const double *partials, double *total)
{
    int dim = app->dim, k = app->k;
    for (int j = 0; j < k; j++) {
        memset(total, 0, (size_t)(dim + 1) * sizeof *total);
        for (int p = 0; p < app->partitions; p++) {
            uint64_t key = (uint64_t)p * (uint64_t)k + (uint64_t)j;
            const double *part = partials + key * (uint64_t)(dim + 1);
            for (int d = 0; d <= dim; d++) total[d] += part[d];
        }
        for (int d = 0; total[dim] > 0 && d < dim; d++)
            app->centre_values[(size_t)j * (size_t)dim + d] = total[d] / total[dim];
    }
}

static int update_centres(tess_ctx *ctx, kmeans_app *app)
{
    double *total = malloc((size_t)(app->dim + 1) * sizeof *total);
    uint64_t n = 0;
    const double *partials = tess_table_replica(app->partials, &n); /* this iteration's */
    int rc = !total ? TESS_ERR_NOMEM : n == (uint64_t)app->partitions * app->k ? 0 : TESS_ERR_INVAL;
    if (rc == 0) centres_from_partials(app, partials, total);
    free(total);
    return rc == 0 ? put_centres(ctx, app) : app_control_fail(KM_APP, ctx, "reading sums", rc);
}

/* Every --checkpoint-every iterations, a barrier that checkpoints the state
 * between two iterations, the partials emptied: they have the shape of the
 * partition count, which a restore may change. */
static int control_end_iteration(tess_ctx *ctx, kmeans_app *app, int it)
{
    int rc = 0;
    if (app_ckpt_cli_due(&app->opt.ckpt, it + 1, app->opt.iterations)) {
        kmeans_resume r = {.done = it + 1};
        rc = tess_table_clear(app->partials);
        if (rc == 0) rc = tess_checkpoint_barrier(ctx, &r, sizeof r);
    }
    if (rc == 0) return 0;
    char what[64];
    snprintf(what, sizeof what, "after iteration %d", it + 1);
    return app_control_fail(KM_APP, ctx, what, rc);
}

/* One iteration: assign, new centres, and the checkpoint when one is due —
 * all of it in iteration_seconds, so that what a checkpoint costs shows
 * there (bench ckpt compares them). */
static int control_iteration(tess_ctx *ctx, kmeans_app *app, int it)
{
    double t0 = tess_now();
    int rc = tess_run(ctx, "kmeans_assign", app->partitions, app->points, NULL, 0);
    if (rc == 0) rc = tess_barrier(ctx);
    if (rc != 0) {
        char what[64];
        snprintf(what, sizeof what, "iteration %d", it + 1);
        return app_control_fail(KM_APP, ctx, what, rc);
    }
    int64_t moved = 0; /* the table counts over all iterations */
    if (app_progress_enabled(app->opt.run.progress)) {
        int64_t total = read_moved(app);
        moved = total - app->moved_before;
        app->moved_before = total;
    }
    rc = update_centres(ctx, app);
    if (rc == 0) rc = control_end_iteration(ctx, app, it);
    app->iteration_seconds[it] = tess_now() - t0;
    if (rc == 0 && app_progress_enabled(app->opt.run.progress))
        fprintf(stderr, "kmeans: iteration %d/%ld: %.3f s, moved %lld points\n", it + 1,
                app->opt.iterations, app->iteration_seconds[it], (long long)moved);
    return rc;
}

static void write_centres(const kmeans_app *app, FILE *fp)
{
    for (int j = 0; j < app->k; j++) {
        const double *c = app->centre_values + (size_t)j * (size_t)app->dim;
        for (int d = 0; d < app->dim; d++) fprintf(fp, d ? " %.17g" : "%.17g", c[d]);
        fputc('\n', fp);
    }
}

/* Copy partition p of the assignment table (fetched if remote) into all[]. */
static int collect_partition(const kmeans_app *app, int p, int32_t *all)
{
    tess_iter *it = NULL;
    int rc = tess_table_iter(app->assignment, p, &it);
    const void *key, *value;
    size_t len;
    while (rc == 0 && (rc = tess_iter_next(it, &key, &value, &len)) == 1) {
        uint64_t k = *(const uint64_t *)key;
        if (k < app->pts.n && len == sizeof(int32_t)) memcpy(&all[k], value, sizeof(int32_t));
        rc = 0;
    }
    tess_iter_free(it);
    return rc;
}

static int write_assignments(tess_ctx *ctx, const kmeans_app *app, FILE *fp)
{
    int32_t *all = malloc((size_t)app->pts.n * sizeof *all);
    int rc = all ? 0 : TESS_ERR_NOMEM;
    for (uint64_t i = 0; rc == 0 && i < app->pts.n; i++) all[i] = -1;
    for (int p = 0; rc == 0 && p < app->partitions; p++) rc = collect_partition(app, p, all);
    for (uint64_t i = 0; rc == 0 && i < app->pts.n; i++) {
        if (all[i] < 0 || all[i] >= app->k)
            rc = TESS_ERR_NOTFOUND; /* a runtime bug: never publish it */
        else fprintf(fp, "%d\n", all[i]);
    }
    free(all);
    return rc == 0 ? 0 : app_control_fail(KM_APP, ctx, "reading assignments", rc);
}

static int write_metrics(tess_ctx *ctx, const kmeans_app *app, FILE *fp)
{
    app_metrics *m = app_metrics_new();
    app_metrics_standard(m, ctx, KM_APP, tess_now() - app->start);
    app_metrics_num(m, "load_seconds", app->load_seconds);
    app_metrics_list(m, "iteration_seconds", app->iteration_seconds, (int)app->opt.iterations);
    app_metrics_int(m, "points", (int64_t)app->pts.n);
    app_metrics_int(m, "k", app->k);
    app_metrics_int(m, "dim", app->dim);
    app_metrics_int(m, "iterations", app->opt.iterations);
    app_metrics_int(m, "partitions", app->partitions);
    app_ckpt_cli_metrics(m, ctx, &app->opt.ckpt, app->restored_epoch, app->first_iteration);
    return app_metrics_finish(KM_APP, ctx, m, fp);
}

/* All or nothing: a failure in any leaves none of them. */
static int commit_outputs(kmeans_app *app)
{
    app_outfile *const files[] = {&app->out_centres, &app->out_assign, &app->out_metrics};
    const char *const paths[] = {app->opt.run.output, app->opt.assignments, app->opt.run.metrics};
    return app_outfiles_finish(files, paths, 3, 0) == 0 ? 0 : TESS_ERR_IO;
}

static int control_write(tess_ctx *ctx, kmeans_app *app)
{
    int rc = control_open_outputs(app);
    if (rc == 0 && app->out_assign.fp) rc = write_assignments(ctx, app, app->out_assign.fp);
    if (rc == 0 && app->out_metrics.fp) rc = write_metrics(ctx, app, app->out_metrics.fp);
    if (rc != 0) return rc;
    write_centres(app, app->out_centres.fp ? app->out_centres.fp : stdout);
    rc = commit_outputs(app);
    if (rc == 0 && !app->out_centres.fp && fflush(stdout) != 0)
        rc = app_control_fail(KM_APP, ctx, "writing centres to stdout", TESS_ERR_IO);
    return rc;
}

static int kmeans_control(tess_ctx *ctx, void *arg)
{
    kmeans_app *app = arg;
    int rc = control_start(ctx, app);
    for (int it = (int)app->first_iteration; rc == 0 && it < app->opt.iterations; it++)
        rc = control_iteration(ctx, app, it);
    if (rc == 0) app_ckpt_cli_finish(KM_APP, ctx, &app->opt.ckpt);
    if (rc == 0) rc = control_write(ctx, app);
    if (rc != 0) control_abort_outputs(app);
    return rc;
}

/* ---------------------------------------------------------------- setup */

/* Read or generate all points into app->pts; 0, or -1 with a message in err. */
static int load_points(kmeans_app *app, char *err, size_t err_cap)
{
    if (!app->opt.have_gen)
        return kmeans_points_read(app->opt.points_path, &app->pts, err, err_cap);
    if (kmeans_points_generate(&app->opt.gen, &app->pts) == 0) return 0;
    snprintf(err, err_cap, "option --gen: out of memory");
    return -1;
}

/* Every rank reads or generates all points, identically; only rank 0 reports. */
static int prepare_points(tess_ctx *ctx, kmeans_app *app)
{
    char err[512];
    double t0 = tess_now();
    int rc = load_points(app, err, sizeof err);
    if (rc == 0 && (uint64_t)app->opt.k > app->pts.n) {
        snprintf(err, sizeof err, "option --k: %ld is larger than the number of points (%llu)",
                 app->opt.k, (unsigned long long)app->pts.n);
        rc = -1;
    }
    if (rc != 0 && tess_rank(ctx) == 0) app_error(KM_APP, "%s", err);
    app->load_seconds = tess_now() - t0;
    app->k = (int)app->opt.k;
    app->dim = app->pts.dim;
    return rc == 0 ? 0 : TESS_ERR_FORMAT;
}

/* A dense table of `keys` values of value_size bytes, keyed by uint64_t. */
static void dense_spec(tess_table_spec *spec, const char *name, uint64_t keys, size_t value_size,
                       int partitions, tess_table *group)
{
    tess_table_spec_init(spec);
    spec->name = name;
    spec->key_size = sizeof(uint64_t);
    spec->value_size = value_size;
    spec->partitions = partitions;
    spec->dense = 1;
    spec->key_count = keys;
    spec->group_with = group;
}

static int create_dense(tess_ctx *ctx, const char *name, uint64_t keys, size_t value_size,
                        int partitions, tess_accum accum, tess_elem elem, tess_table *group,
                        tess_table **out)
{
    tess_table_spec spec;
    dense_spec(&spec, name, keys, value_size, partitions, group);
    spec.accum = accum;
    spec.elem = elem;
    return tess_table_create(ctx, &spec, out);
}

/* A dense table every rank keeps a replica of (docs/tables.md). */
static int create_replicated(tess_ctx *ctx, const char *name, uint64_t keys, size_t value_size,
                             int partitions, tess_table *group, tess_table **out)
{
    tess_table_spec spec;
    dense_spec(&spec, name, keys, value_size, partitions, group);
    spec.replicated = 1;
    return tess_table_create(ctx, &spec, out);
}

static int create_tables(tess_ctx *ctx, kmeans_app *app)
{
    size_t point_size = (size_t)app->dim * sizeof(double);
    int workers = tess_workers_total(ctx);
    uint64_t parts = app->opt.run.partitions > 0 ? (uint64_t)app->opt.run.partitions
                     : workers > 0               ? 2 * (uint64_t)workers
                                                 : 2;
    app->partitions = (int)(parts < app->pts.n ? parts : app->pts.n);
    int rc = create_dense(ctx, "points", app->pts.n, point_size, app->partitions, TESS_ACC_REPLACE,
                          TESS_F64, NULL, &app->points);
    if (rc == 0)
        rc = create_dense(ctx, "assignment", app->pts.n, sizeof(int32_t), app->partitions,
                          TESS_ACC_REPLACE, TESS_I32, app->points, &app->assignment);
    if (rc == 0)
        rc =
            create_replicated(ctx, "centres", (uint64_t)app->k, point_size, 1, NULL, &app->centres);
    /* partition p holds keys p*K .. p*K+K-1 (an even split), where instance p runs */
    if (rc == 0)
        rc = create_replicated(ctx, "partials", (uint64_t)app->partitions * (uint64_t)app->k,
                               point_size + sizeof(double), app->partitions, app->points,
                               &app->partials);
    if (rc == 0)
        rc = create_dense(ctx, "moved", 1, sizeof(int64_t), 1, TESS_ACC_SUM, TESS_I64, NULL,
                          &app->moved);
    return rc;
}

/* The job a checkpoint belongs to: the points themselves and K; not the
 * rank, worker or partition counts, which a restore may change. */
static void job_string(const kmeans_app *app, char *job, size_t cap)
{
    uint64_t h =
        app_hash_bytes(0, app->pts.coords, app->pts.n * (uint64_t)app->dim * sizeof(double));
    snprintf(job, cap, "kmeans/1 k=%d dim=%d points=%llu coords=%016llx", app->k, app->dim,
             (unsigned long long)app->pts.n, (unsigned long long)h);
}

/* The points never change once loaded: checkpoints save them once. */
static int enable_checkpoints(tess_ctx *ctx, kmeans_app *app)
{
    if (app->opt.ckpt.dir == NULL) return 0;
    char job[128];
    job_string(app, job, sizeof job);
    int rc = tess_table_set_static(app->points);
    if (rc != 0) {
        if (tess_rank(ctx) == 0) app_control_fail(KM_APP, ctx, "marking the points static", rc);
        return rc;
    }
    return app_ckpt_cli_enable(KM_APP, ctx, &app->opt.ckpt, job);
}

static int prepare_runtime(tess_ctx *ctx, kmeans_app *app)
{
    int rc = create_tables(ctx, app);
    if (rc == 0) rc = tess_register_kernel(ctx, "kmeans_load", kmeans_load);
    if (rc == 0) rc = tess_register_kernel(ctx, "kmeans_assign", kmeans_assign);
    if (rc != 0 && tess_rank(ctx) == 0) app_control_fail(KM_APP, ctx, "setting up tables", rc);
    return rc == 0 ? enable_checkpoints(ctx, app) : rc;
}

static int prepare(tess_ctx *ctx, void *arg)
{
    int rc = prepare_points(ctx, arg);
    return rc == 0 ? prepare_runtime(ctx, arg) : rc;
}

static int begin(void *arg, int argc, char **argv, tess_config *cfg)
{
    kmeans_app *app = arg;
    app->start = tess_now();
    int rc = kmeans_opts_parse(argc, argv, &app->opt);
    app_config(cfg, app->opt.run.workers);
    return rc;
}

static void end(void *arg)
{
    kmeans_app *app = arg;
    kmeans_points_free(&app->pts);
    free(app->centre_values);
    free(app->iteration_seconds);
}

/* For app_tables_run: the state's size, begin, prepare, control, after, end. */
static const app_tables_def def = {sizeof(kmeans_app), begin, prepare, kmeans_control, NULL, end};

int kmeans_main(int argc, char **argv) { return app_tables_run(&def, argc, argv); }
