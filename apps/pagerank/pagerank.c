/*
 * pagerank.c — `tessera run pagerank`: options, tables, kernels and the
 * control function.  Every rank loads (or generates) the whole edge list and
 * creates the same tables; each stores and computes only its partitions.
 *
 * A pull PageRank over tables (docs/tables.md, "Pull-style kernels").  The
 * graph table holds, per vertex, its out-degree and its in-neighbours; the
 * ranks table PR_k; the contrib table PR_k(u)/outdeg(u), a replicated table
 * whose replica on every rank switches to the new values at each barrier
 * (tess_table_replica).  Iteration k+1: kernel
 * instance i reads the replica, computes
 *     PR_{k+1}(v) = (1-d)/N + d*(sum over u->v of contrib_k(u) + D_k/N)
 * for the vertices of its partition, in in-edge order, and writes its
 * partitions of ranks and contrib in one tess_table_put_range each.  A
 * vertex without out-edges has no share to give: its contrib entry holds its
 * rank instead (no in-list names it), and the control function sums those
 * from rank 0's replica into D, in vertex order.  Neither a vertex's sum nor
 * D depends on the partitioning, the worker or the rank count, so the ranks
 * are bitwise the same for any of them.
 *
 * With --checkpoint-dir, every --checkpoint-every iterations end with a
 * checkpoint barrier: between two iterations the tables hold the graph
 * (static, saved once), PR_k and contrib_k, and the rest of the state (k and
 * D_k/N) fits in the checkpoint's user data.
 */
#include <errno.h>
#include <math.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include "pagerank.h"

#define APP "pagerank"

typedef struct pr_args {
    int32_t initial; /* 1: PR_0 = 1/N, no graph read */
    int32_t unused;
    double teleport, spread, damping, inv_n;
} pr_args;

typedef struct pull_state {
    const pr_args *a;
    const double *contrib; /* replica: contrib_k of every vertex */
    uint64_t first;
    double *pr, *out; /* this partition's PR_{k+1} and contrib_{k+1} */
} pull_state;

/* One vertex: its graph value is the u32 out-degree, then the u32
 * in-neighbours. */
static inline void pull_vertex(pull_state *s, uint64_t i, const uint32_t *w, size_t len)
{
    size_t nin = len / sizeof(uint32_t) - 1;
    double pr = s->a->inv_n;
    if (!s->a->initial) {
        double sum = 0.0;
        for (size_t k = 0; k < nin; k++) sum += s->contrib[w[1 + k]];
        pr = s->a->teleport + s->a->damping * (sum + s->a->spread);
    }
    s->pr[i] = pr;
    s->out[i] = w[0] ? pr * (1.0 / (double)w[0]) : pr;
}

static int pull_chunk(uint64_t first, size_t n, const void *const *values, const size_t *lens,
                      void *arg)
{
    pull_state *s = arg;
    for (size_t i = 0; i < n; i++) {
        if (values[i] == NULL) return TESS_ERR_NOTFOUND; /* every vertex has a graph value */
        pull_vertex(s, first + i - s->first, values[i], lens[i]);
    }
    return 0;
}

/* The in-lists live in the graph table once pr_load has run (there is a
 * barrier between): the first pr_step on each rank frees this rank's copy. */
static void release_in_src(pr_app *app)
{
    if (atomic_exchange(&app->in_src_released, 1) == 0) {
        free(app->csr.in_src);
        app->csr.in_src = NULL;
    }
}

static int pr_step(tess_task *task, const void *args, size_t len)
{
    pr_app *app = tess_task_app(task);
    release_in_src(app);
    pr_args a;
    if (len != sizeof a) return TESS_ERR_INVAL;
    memcpy(&a, args, sizeof a);
    int i = tess_task_instance(task);
    uint64_t count = 0;
    pull_state s = {.a = &a, .contrib = tess_table_replica(app->contrib, NULL)};
    tess_table_dense_range(app->graph, i, &s.first, &count);
    if (s.contrib == NULL && !a.initial) return TESS_ERR_INVAL;
    s.pr = malloc((count ? count : 1) * 2 * sizeof(double));
    if (s.pr == NULL) return TESS_ERR_NOMEM;
    s.out = s.pr + count;
    int rc = tess_table_scan_dense(app->graph, i, pull_chunk, &s);
    if (rc == TESS_OK) rc = tess_table_put_range(app->ranks, s.first, count, s.pr);
    if (rc == TESS_OK) rc = tess_table_put_range(app->contrib, s.first, count, s.out);
    free(s.pr);
    return rc < 0 ? rc : 0;
}

#define LOAD_RELEASE_VERTICES 16384

/* Instance i puts the in-lists of its partition's vertices. */
static int pr_load(tess_task *task, const void *args, size_t len)
{
    (void)args, (void)len;
    pr_app *app = tess_task_app(task);
    uint64_t first, count;
    tess_table_dense_range(app->graph, tess_task_instance(task), &first, &count);
    size_t cap = 0;
    uint32_t *val = NULL;
    int rc = TESS_OK;
    uint64_t released = first; /* in-lists before this one are in the table */
    for (uint64_t v = first; rc == TESS_OK && v < first + count; v++) {
        /* Give the copied in-lists' pages back as the table fills, a block
         * at a time, so the load holds the graph about once, not twice. */
        if (v - released >= LOAD_RELEASE_VERTICES) {
            tg_in_csr_release(&app->csr, released, v);
            released = v;
        }
        size_t nin = app->csr.in_first[v + 1] - app->csr.in_first[v];
        if (nin + 1 > cap) {
            free(val);
            cap = 2 * (nin + 1);
            if ((val = malloc(cap * sizeof *val)) == NULL) return TESS_ERR_NOMEM;
        }
        val[0] = app->csr.outdeg[v];
        memcpy(val + 1, app->csr.in_src + app->csr.in_first[v], nin * sizeof *val);
        rc = tess_table_put(app->graph, &v, val, (nin + 1) * sizeof *val);
    }
    free(val);
    if (rc == TESS_OK) tg_in_csr_release(&app->csr, released, first + count);
    return rc;
}

static void print_progress(pr_app *app, int k, double seconds)
{
    if (!app->progress) return;
    fprintf(stderr, "pagerank: iteration %d/%ld  %.3f s  %.1f M edges/s\n", k + 1,
            app->opt.iterations, seconds, (double)app->g.ne / seconds / 1e6);
}

/* What a checkpoint stores besides the tables: the iterations done. */
typedef struct pr_resume {
    int64_t done;
} pr_resume;

/* After iteration k: every --checkpoint-every iterations, a barrier that also
 * checkpoints. */
static int maybe_checkpoint(tess_ctx *ctx, pr_app *app, int k)
{
    if (!app_ckpt_cli_due(&app->opt.ckpt, k + 1, app->opt.iterations)) return TESS_OK;
    pr_resume r = {.done = k + 1};
    return tess_checkpoint_barrier(ctx, &r, sizeof r);
}

/* D/N from the replica of contrib: the rank of the vertices without
 * out-edges, summed in vertex order.  With refresh, the replica is first
 * copied from the table (after a restore). */
static int sum_dangling(tess_ctx *ctx, pr_app *app, int refresh)
{
    int rc = refresh ? tess_table_replicate(app->contrib) : TESS_OK;
    if (refresh && rc == TESS_OK) rc = tess_barrier(ctx);
    const double *c = tess_table_replica(app->contrib, NULL);
    if (rc != TESS_OK || c == NULL) return rc != TESS_OK ? rc : TESS_ERR_NOMEM;
    double dangling = 0.0;
    for (uint64_t i = 0; i < app->ndangling; i++) dangling += c[app->dangling[i]];
    app->spread = dangling / (double)app->g.nv;
    return TESS_OK;
}

/* One pass of pr_step over every partition (initial: PR_0). */
static int run_pass(tess_ctx *ctx, pr_app *app, int initial)
{
    double d = app->opt.damping, n = (double)app->g.nv;
    pr_args a = {.initial = initial,
                 .teleport = (1.0 - d) / n,
                 .spread = app->spread,
                 .damping = d,
                 .inv_n = 1.0 / n};
    int parts = tess_table_partitions(app->graph);
    int rc = tess_run(ctx, "pr_step", parts, app->graph, &a, sizeof a);
    return rc == TESS_OK ? tess_barrier(ctx) : rc;
}

/* Iteration k; the contrib replica is refreshed for the next one, if any. */
static int run_iteration(tess_ctx *ctx, pr_app *app, int k)
{
    int rc = run_pass(ctx, app, 0);
    if (rc == TESS_OK && k + 1 < app->opt.iterations) rc = sum_dangling(ctx, app, 0);
    if (rc == TESS_OK) rc = maybe_checkpoint(ctx, app, k);
    return rc;
}

static int load(tess_ctx *ctx, pr_app *app)
{
    double t0 = tess_now();
    int rc = tess_run(ctx, "pr_load", tess_table_partitions(app->graph), app->graph, NULL, 0);
    if (rc == TESS_OK) rc = tess_barrier(ctx);
    if (rc == TESS_OK) rc = run_pass(ctx, app, 1); /* PR_0 */
    if (rc == TESS_OK) rc = sum_dangling(ctx, app, 0);
    app->load_seconds += tess_now() - t0;
    if (rc != TESS_OK) return app_error(APP, "%s", tess_last_error(ctx)), rc;
    if (app->progress)
        fprintf(stderr,
                "pagerank: %llu vertices, %llu edges loaded in %.2f s; %d partitions on "
                "%d rank(s) x %d worker(s)\n",
                (unsigned long long)app->g.nv, (unsigned long long)app->g.ne, app->load_seconds,
                tess_table_partitions(app->graph), tess_nranks(ctx), tess_workers(ctx));
    return TESS_OK;
}

/* Take up the state of a restored checkpoint; its tables hold the graph
 * (app_ckpt_cli_restore passed over epochs beyond --iterations). */
static void resume(pr_app *app, const pr_resume *r, uint64_t epoch)
{
    app->first_iteration = (long)r->done;
    app->restored_epoch = epoch;
    app_ckpt_cli_restored(APP, &app->opt.ckpt, "iteration", epoch, r->done, app->opt.iterations);
}

/* A loaded epoch's tables: the whole graph and finite, non-negative sums. */
static int validate_epoch(tess_ctx *ctx, void *arg, const void *user, size_t len, uint64_t epoch,
                          char *why, size_t whylen)
{
    const pr_app *app = arg;
    pr_resume r;
    (void)ctx, (void)epoch, (void)len;
    memcpy(&r, user, sizeof r);
    int64_t vertices = tess_table_size(app->graph);
    if (vertices != (int64_t)app->g.nv)
        return snprintf(why, whylen, "the graph table holds %lld vertices, the graph %llu",
                        (long long)vertices, (unsigned long long)app->g.nv),
               1;
    if (app_ckpt_cli_all_finite(app->ranks, "the ranks table", NULL, why, whylen) != 0) return 1;
    return app_ckpt_cli_all_finite(app->contrib, "the contrib table", NULL, why, whylen);
}

/* With --restore, the newest checkpoint; otherwise (or if there is none) the
 * graph.  Errors are reported here. */
static int restore_or_load(tess_ctx *ctx, pr_app *app)
{
    pr_resume r;
    uint64_t epoch = 0;
    const app_ckpt_done done = {app->opt.iterations, "iteration", "iterations"};
    int rc = app_ckpt_cli_restore(APP, ctx, &app->opt.ckpt, &done, validate_epoch, app, &r,
                                  sizeof r, &epoch);
    if (rc < 0) return rc;
    if (rc == 1) {
        resume(app, &r, epoch);
        rc = r.done < app->opt.iterations ? sum_dangling(ctx, app, 1) : TESS_OK;
        if (rc != TESS_OK) app_error(APP, "%s", tess_last_error(ctx));
        return rc;
    }
    return load(ctx, app);
}

static int control(tess_ctx *ctx, void *arg)
{
    pr_app *app = arg;
    int rc = restore_or_load(ctx, app);
    if (rc != TESS_OK) return rc;
    for (int k = (int)app->first_iteration; rc == TESS_OK && k < app->opt.iterations; k++) {
        double start = tess_now();
        rc = run_iteration(ctx, app, k);
        app->iteration_seconds[k] = tess_now() - start;
        if (rc == TESS_OK) print_progress(app, k, app->iteration_seconds[k]);
    }
    if (rc != TESS_OK) return app_error(APP, "%s", tess_last_error(ctx)), rc;
    rc = pr_write_results(app, ctx);
    if (rc == TESS_OK) app_ckpt_cli_finish(APP, ctx, &app->opt.ckpt);
    return rc;
}

/* The --help text (with the checkpoint options of ckpt_cli). */
static const char *usage_text(void)
{
    static char text[4096];
    snprintf(text, sizeof text,
             "usage: tessera run pagerank (--graph FILE | --gen SPEC) [options]\n"
             "\n"
             "PageRank on the tables face.  PR0 = 1/N;\n"
             "PR'(v) = (1-d)/N + d*(sum over u->v of PR(u)/outdeg(u) + D/N), D = rank of\n"
             "vertices without out-edges.  Vertices are all ids in the edge list.\n"
             "\n"
             "  --graph FILE       SNAP edge list (plain or gzip) or binary graph cache\n"
             "  --gen SPEC         generated graph: rmat:SCALE[:EF[:SEED]], uniform:N:M[:SEED],\n"
             "                     web:PAGES[:SEED]\n"
             "  --iterations N     iterations (default 20)\n"
             "  --damping D        damping factor in (0, 1) (default 0.85)\n"
             "  --workers W        worker threads per rank (default: cores available)\n"
             "  --partitions P     table partitions (default 2 x total workers)\n"
             "  --output FILE      write 'id<TAB>rank' for every vertex, ascending id\n"
             "                     (default: the ten highest-ranked vertices on stdout)\n"
             "  --metrics FILE     write run metrics as JSON\n"
             "  --no-steal         no work stealing between ranks (for experiments)\n"
             "  --slow-worker RANK:FACTOR[:spin|:sleep]\n"
             "                     rank RANK runs FACTOR (>= 1) times slower (a throttle\n"
             "                     for stealing experiments); its threads spin for the\n"
             "                     extra time (default) or sleep\n"
             "  --flush-ms MS      send buffered table writes once the oldest is MS ms old\n"
             "                     (default 5, TESS_FLUSH_MS; 0: only when buffers fill)\n"
             "  --progress         a line per iteration on stderr (default when a terminal)\n"
             "  --quiet            no progress lines\n"
             "%s"
             "  --help             this text\n"
             "\n"
             "Runs unchanged under mpirun -np R; --workers is per rank.  A checkpoint\n"
             "restores onto any number of ranks and partitions; to rerun a failed job\n"
             "from its last checkpoint:\n"
             "  tessera supervise -- mpirun -np 3 tessera run pagerank --gen web:200000 \\\n"
             "      --iterations 50 --checkpoint-dir ckpt --checkpoint-every 5\n",
             app_ckpt_cli_usage);
    return text;
}

/* --slow-worker RANK:FACTOR[:spin|:sleep] (docs/stealing.md). */
static int parse_slow_worker(const char *app, const app_opt *opt, const char *arg)
{
    pr_options *o = opt->dest;
    if (tess_parse_slow_worker(arg, &o->slow_rank, &o->slow_factor, &o->slow_sleep) == TESS_OK)
        return 0;
    app_error(app,
              "option --slow-worker: expected RANK:FACTOR[:spin|:sleep] with FACTOR in "
              "[1, 1000], got '%s'",
              arg);
    return -1;
}

static void apply_steal_options(const pr_options *o, tess_config *cfg)
{
    if (o->no_steal) cfg->steal = 0;
    if (o->flush_ms >= 0) cfg->flush_ms = o->flush_ms;
    if (o->slow_factor >= 1.0) {
        cfg->slow_rank = o->slow_rank;
        cfg->slow_factor = o->slow_factor;
        cfg->slow_sleep = o->slow_sleep;
    }
}

static int check_options(pr_options *o)
{
    if (!o->graph_path == !o->gen_spec)
        return app_error(APP, "give exactly one of --graph FILE or --gen SPEC"), -1;
    if (app_ckpt_cli_check(APP, &o->ckpt) != 0) return -1;
    char err[256];
    if (o->gen_spec && tg_check_spec(o->gen_spec, err, sizeof err) != 0)
        return app_error(APP, "option --gen: %s", err), -1;
    const char *const in_o[] = {"graph"}, *const in_p[] = {o->graph_path};
    const char *const out_o[] = {"output", "metrics"}, *const out_p[] = {o->output, o->metrics};
    if (app_outputs_spare_inputs(APP, in_o, in_p, 1, out_o, out_p, 2) != 0) return -1;
    return app_check_outputs(APP, o->output, o->metrics); /* before hours of computing */
}

/* 0 to run, 1 after --help, -1 on a usage error, -2 on an unwritable output
 * (message printed).  Each option may be given once. */
static int parse_options(pr_options *o, int argc, char **argv)
{
    *o = (pr_options){.iterations = 20, .damping = 0.85, .flush_ms = -1};
    int seen[17] = {0}, progress = APP_PROGRESS_AUTO;
    const app_opt opts[] = {
        {"graph", APP_OPT_TEXT, &o->graph_path, 0, 0, 0, &seen[0], NULL},
        {"gen", APP_OPT_TEXT, &o->gen_spec, 0, 0, 0, &seen[1], NULL},
        {"iterations", APP_OPT_INT, &o->iterations, 1, 1000000, 0, &seen[2], NULL},
        {"damping", APP_OPT_CUSTOM, &o->damping, 0, 1, 0, &seen[3], app_parse_open_interval},
        {"workers", APP_OPT_INT, &o->workers, 1, 4096, 0, &seen[4], NULL},
        {"partitions", APP_OPT_INT, &o->partitions, 1, 1 << 20, 0, &seen[5], NULL},
        {"output", APP_OPT_TEXT, &o->output, 0, 0, 0, &seen[6], NULL},
        {"metrics", APP_OPT_TEXT, &o->metrics, 0, 0, 0, &seen[7], NULL},
        {"progress", APP_OPT_FLAG, &progress, 0, 0, APP_PROGRESS_ON, &seen[8], NULL},
        {"quiet", APP_OPT_FLAG, &progress, 0, 0, APP_PROGRESS_OFF, &seen[9], NULL},
        {"no-steal", APP_OPT_FLAG, &o->no_steal, 0, 0, 1, &seen[10], NULL},
        {"slow-worker", APP_OPT_CUSTOM, o, 0, 0, 0, &seen[11], parse_slow_worker},
        {"flush-ms", APP_OPT_DOUBLE, &o->flush_ms, 0, 3.6e6, 0, &seen[16], NULL},
    };
    app_opt ckpt[APP_CKPT_CLI_OPTIONS];
    app_ckpt_cli_options(&o->ckpt, ckpt);
    for (int k = 0; k < APP_CKPT_CLI_OPTIONS; k++) ckpt[k].seen = &seen[12 + k];
    int rc = app_parse_options_with(APP, usage_text(), argc, argv, opts,
                                    (int)(sizeof opts / sizeof *opts), ckpt, APP_CKPT_CLI_OPTIONS);
    o->progress = (app_progress_mode)progress;
    return rc != 0 ? rc : check_options(o);
}

/* The vertices without out-edges, ascending: their rank is summed into D. */
static int find_dangling(pr_app *app)
{
    const uint32_t *outdeg = app->csr.outdeg;
    app->ndangling = 0;
    for (uint64_t v = 0; v < app->g.nv; v++) app->ndangling += outdeg[v] == 0;
    app->dangling = malloc((app->ndangling ? app->ndangling : 1) * sizeof *app->dangling);
    if (app->dangling == NULL) return TESS_ERR_NOMEM;
    for (uint64_t v = 0, i = 0; v < app->g.nv; v++)
        if (outdeg[v] == 0) app->dangling[i++] = (uint32_t)v;
    return TESS_OK;
}

/* Partition bounds: an even split, moved to the nearest site boundary for
 * web graphs so that a site (and most of its links) stays in one partition. */
static uint64_t *partition_bounds(const tg_graph *g, int parts)
{
    uint64_t *b = malloc(((size_t)parts + 1) * sizeof *b);
    if (b == NULL) return NULL;
    for (int p = 0; p <= parts; p++) {
        uint64_t want = (uint64_t)((unsigned __int128)g->nv * (unsigned)p / (unsigned)parts);
        if (g->nsites > 0 && p > 0 && p < parts) {
            uint64_t lo = 0, hi = g->nsites;
            while (lo < hi) {
                uint64_t mid = (lo + hi) / 2;
                if (g->site_first[mid] < want) lo = mid + 1;
                else hi = mid;
            }
            uint64_t after = g->site_first[lo];
            uint64_t before = lo > 0 ? g->site_first[lo - 1] : 0;
            want = want - before < after - want ? before : after;
        }
        b[p] = p > 0 && want < b[p - 1] ? b[p - 1] : want;
    }
    b[0] = 0;
    b[parts] = g->nv;
    return b;
}

static int create_tables(tess_ctx *ctx, pr_app *app)
{
    long parts = app->opt.partitions ? app->opt.partitions : 2L * tess_workers_total(ctx);
    if ((uint64_t)parts > app->g.nv) parts = (long)app->g.nv;
    uint64_t *bounds = partition_bounds(&app->g, (int)parts);
    if (bounds == NULL) return TESS_ERR_NOMEM;
    tess_table_spec s;
    tess_table_spec_init(&s);
    s.key_size = 8;
    s.dense = 1;
    s.key_count = app->g.nv;
    s.partitions = (int)parts;
    s.range_bounds = bounds;
    s.name = "graph";
    int rc = tess_table_create(ctx, &s, &app->graph);
    s.value_size = sizeof(double); /* written by tess_table_put_range: replace */
    s.group_with = app->graph;
    s.name = "ranks";
    if (rc == TESS_OK) rc = tess_table_create(ctx, &s, &app->ranks);
    s.name = "contrib";
    s.replicated = 1; /* pr_step reads the previous iteration's from every partition */
    if (rc == TESS_OK) rc = tess_table_create(ctx, &s, &app->contrib);
    free(bounds);
    return rc;
}

static int load_graph(tess_ctx *ctx, pr_app *app)
{
    char err[512] = "";
    double t0 = tess_now();
    /* the in-edges without the edge list: a graph cache is streamed */
    int rc =
        tg_load_in_csr(app->opt.graph_path, app->opt.gen_spec, &app->g, &app->csr, err, sizeof err);
    if (rc == TESS_OK) rc = find_dangling(app);
    else if (tess_rank(ctx) == 0) app_error(APP, "%s", err);
    if (rc == TESS_OK) rc = create_tables(ctx, app);
    if (rc == TESS_OK) rc = tess_register_kernel(ctx, "pr_load", pr_load);
    if (rc == TESS_OK) rc = tess_register_kernel(ctx, "pr_step", pr_step);
    if (rc != TESS_OK && err[0] == '\0' && tess_rank(ctx) == 0)
        app_error(APP, "%s", tess_last_error(ctx));
    app->load_seconds = tess_now() - t0;
    return rc;
}

/* The job a checkpoint belongs to: the graph itself (so --gen and --graph
 * of the same edges agree, and a changed file is refused) and the damping;
 * not the rank, worker or partition counts, which a restore may change. */
static void job_string(const pr_app *app, char *job, size_t cap)
{
    const tg_graph *g = &app->g;
    uint64_t h = app_hash_bytes(0, g->ids, g->nv * sizeof *g->ids);
    h = app_hash_bytes(h, app->csr.in_first, (g->nv + 1) * sizeof *app->csr.in_first);
    h = app_hash_bytes(h, app->csr.in_src, g->ne * sizeof *app->csr.in_src);
    h = app_hash_bytes(h, app->csr.outdeg, g->nv * sizeof *app->csr.outdeg);
    snprintf(job, cap, "pagerank/2 damping=%.17g vertices=%llu edges=%llu graph=%016llx",
             app->opt.damping, (unsigned long long)g->nv, (unsigned long long)g->ne,
             (unsigned long long)h);
}

/* The graph never changes once loaded: checkpoints save it once. */
static int enable_checkpoints(tess_ctx *ctx, pr_app *app)
{
    if (app->opt.ckpt.dir == NULL) return TESS_OK;
    char job[160];
    job_string(app, job, sizeof job);
    int rc = tess_table_set_static(app->graph);
    if (rc != TESS_OK && tess_rank(ctx) == 0)
        app_error(APP, "cannot mark the graph static: %s", tess_last_error(ctx));
    return rc == TESS_OK ? app_ckpt_cli_enable(APP, ctx, &app->opt.ckpt, job) : rc;
}

/* In-edges of each partition's vertices: the work of its kernel instance
 * (bench/steal.sh reports how skewed the partitions are from these). */
static void metrics_partition_edges(app_metrics *m, pr_app *app)
{
    int parts = tess_table_partitions(app->graph);
    double *edges = calloc((size_t)parts, sizeof *edges);
    if (edges == NULL) return;
    for (int p = 0; p < parts; p++) {
        uint64_t first = 0, count = 0;
        tess_table_dense_range(app->graph, p, &first, &count);
        edges[p] = (double)(app->csr.in_first[first + count] - app->csr.in_first[first]);
    }
    app_metrics_list(m, "partition_edges", edges, parts);
    free(edges);
}

/* 0, or -1 with "cannot write FILE" printed (a full disk, say). */
static int write_metrics(pr_app *app, tess_ctx *ctx, double wall)
{
    app_metrics *m = app_metrics_new();
    if (m == NULL) {
        app_error(APP, "cannot write %s: out of memory", app->opt.metrics);
        return -1;
    }
    app_metrics_standard(m, ctx, APP, wall);
    app_metrics_num(m, "load_seconds", app->load_seconds);
    app_metrics_list(m, "iteration_seconds", app->iteration_seconds, (int)app->opt.iterations);
    app_metrics_int(m, "vertices", (int64_t)app->g.nv);
    app_metrics_int(m, "edges", (int64_t)app->g.ne);
    app_metrics_num(m, "damping", app->opt.damping);
    app_metrics_int(m, "partitions", tess_table_partitions(app->graph));
    app_ckpt_cli_metrics(m, ctx, &app->opt.ckpt, app->restored_epoch, app->first_iteration);
    metrics_partition_edges(m, app);
    tess_stats st;
    tess_get_stats(ctx, &st);
    app_metrics_int(m, "steals", (int64_t)st.steals);
    int rc = app_outfile_open(&app->out_metrics, app->opt.metrics);
    if (rc == 0 && app_metrics_print(m, app->out_metrics.fp) != 0) {
        app_error(APP, "cannot write %s: out of memory", app->opt.metrics);
        rc = -1;
    }
    app_metrics_free(m);
    return rc;
}

/* Rank 0: the ranks and the metrics, all or nothing. */
static int finish_outputs(pr_app *app, int rc)
{
    app_outfile *const files[] = {&app->out_ranks, &app->out_metrics};
    const char *const paths[] = {app->opt.output, app->opt.metrics};
    if (app_outfiles_finish(files, paths, 2, rc) == 0) return TESS_OK;
    return rc != TESS_OK ? rc : TESS_ERR_IO;
}

static int prepare(tess_ctx *ctx, void *arg)
{
    int rc = load_graph(ctx, arg);
    return rc == TESS_OK ? enable_checkpoints(ctx, arg) : rc;
}

/* Rank 0, after a successful run: the metrics. */
static int after(tess_ctx *ctx, void *arg, int rc)
{
    pr_app *app = arg;
    if (rc == TESS_OK && tess_rank(ctx) == 0 && app->opt.metrics &&
        write_metrics(app, ctx, tess_now() - app->start) != 0)
        rc = TESS_ERR_IO;
    if (tess_rank(ctx) == 0) rc = finish_outputs(app, rc); /* all outputs or none */
    return rc;
}

static int begin(void *arg, int argc, char **argv, tess_config *cfg)
{
    pr_app *app = arg;
    int rc = parse_options(&app->opt, argc, argv);
    if (rc != 0) return rc;
    app->progress = app_progress_enabled(app->opt.progress);
    app->iteration_seconds = calloc((size_t)app->opt.iterations, sizeof(double));
    if (app->iteration_seconds == NULL) return -2;
    app_config(cfg, app->opt.workers);
    apply_steal_options(&app->opt, cfg);
    app->start = tess_now();
    return 0;
}

static void end(void *arg)
{
    pr_app *app = arg;
    tg_free(&app->g);
    tg_in_csr_free(&app->csr);
    free(app->dangling);
    free(app->iteration_seconds);
}

/* For app_tables_run: the state's size, begin, prepare, control, after, end. */
static const app_tables_def def = {sizeof(pr_app), begin, prepare, control, after, end};

int pagerank_main(int argc, char **argv) { return app_tables_run(&def, argc, argv); }
