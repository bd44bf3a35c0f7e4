/*
 * pagerank_tick.c — `tessera run pagerank-tick`: PageRank on the tick face
 * (DESIGN §6; docs/pagerank-tick.md).  PR0 = 1/N and each tick
 *     PR'(v) = (1-d)/N + d * sum over u->v of PR(u)/outdeg(u)
 * with the sum in edge-list order (the in-edge CSR keeps it), so the result
 * does not depend on the partition.  No global term: the rank of vertices
 * without out-edges is not redistributed (the paper's Appendix B.2).
 *
 * The state is the graph class (tick_graph.h); PART is a METIS partition
 * computed up front on every rank (pagerank_tick_part.c); RD/RX add one
 * in-/out-hop, WD/WX are the identity.  This file parses the options, loads
 * the graph, runs the ticks and writes the ranks and the metrics.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "pagerank_tick.h"

#define APP PRT_APP

static const char usage[] =
    "usage: tessera run pagerank-tick (--graph FILE | --gen SPEC) --ticks T [OPTIONS]\n"
    "\n"
    "PageRank on the tick face (the SoCC 2011 paper's Appendix B.2): PR0 = 1/N,\n"
    "PR'(v) = (1-d)/N + d * sum over u->v of PR(u)/outdeg(u); rank of vertices\n"
    "without out-edges is not redistributed.  Vertices are all ids in the edge\n"
    "list; duplicate edges count.  The graph is partitioned with METIS, one part\n"
    "per tick process (worker).\n"
    "\n"
    "  --graph FILE         SNAP edge list (plain or gzip) or binary graph cache\n"
    "  --gen SPEC           generated graph: rmat:SCALE[:EF[:SEED]], uniform:N:M[:SEED],\n"
    "                       web:PAGES[:SEED]\n"
    "  --damping D          damping factor in (0, 1) (default 0.85)\n"
    "  --output FILE        write 'id<TAB>rank' for every vertex, ascending id\n"
    "                       (default: the ten highest-ranked vertices on stdout)\n"
    "  --help               this text\n"
    "\n";

const char *prt_graph_name(const prt_app *a) { return a->graph_path ? a->graph_path : a->gen_spec; }

/* ---------------------------------------------------------------- the model */

static double prt_init(void *user, uint32_t v)
{
    (void)v;
    return ((const prt_app *)user)->init;
}

static void prt_step(void *user, const double *prev, const uint32_t *vs, size_t n, int64_t tick,
                     double *out)
{
    (void)tick;
    const prt_app *a = user;
    const double d = a->damping, base = a->base;
    for (size_t i = 0; i < n; i++) {
        double sum = 0.0;
        for (uint64_t e = a->csr.in_first[vs[i]]; e < a->csr.in_first[vs[i] + 1]; e++) {
            uint32_t u = a->csr.in_src[e];
            sum += prev[u] / (double)a->csr.outdeg[u];
        }
        out[i] = base + d * sum;
    }
}

static int prt_part(tess_ctx *ctx, void *user, const void *snapshot, int n, tess_query *parts)
{
    (void)snapshot; /* the partition depends on the graph only */
    return tess_graph_part(ctx, ((prt_app *)user)->graph, n, parts);
}

static void prt_rd(void *user, const tess_query *q, tess_query *out)
{
    tess_graph_rd(((prt_app *)user)->graph, q, out);
}

static void prt_rx(void *user, const tess_query *q, tess_query *out)
{
    tess_graph_rx(((prt_app *)user)->graph, q, out);
}

static void prt_same(void *user, const tess_query *q, tess_query *out)
{
    (void)user;
    tess_graph_same(q, out);
}

static int prt_disjoint(void *user, const tess_query *a, const tess_query *b)
{
    return tess_graph_disjoint(((prt_app *)user)->graph, a, b);
}

/* ---------------------------------------------------------------- options */

static int check_source(const prt_app *a)
{
    if (!a->graph_path == !a->gen_spec) {
        app_error(APP, "give exactly one of --graph FILE or --gen SPEC");
        return -1;
    }
    char err[300];
    if (a->gen_spec && tg_check_spec(a->gen_spec, err, sizeof err) != 0) {
        app_error(APP, "option --gen: %s", err);
        return -1;
    }
    return 0;
}

/* 0 to run, 1 after --help, -1 on a usage error (message printed). */
static int parse(prt_app *a, int argc, char **argv)
{
    int seen[4] = {0};
    a->damping = 0.85;
    const app_opt opts[] = {
        {"graph", APP_OPT_CUSTOM, &a->graph_path, 0, 0, 0, &seen[0], app_parse_path},
        {"gen", APP_OPT_CUSTOM, &a->gen_spec, 0, 0, 0, &seen[1], app_parse_path},
        {"damping", APP_OPT_CUSTOM, &a->damping, 0, 1, 0, &seen[2], app_parse_open_interval},
        {"output", APP_OPT_CUSTOM, &a->output_path, 0, 0, 0, &seen[3], app_parse_path},
    };
    int rc = app_tick_cli_parse(APP, &a->cli, usage, opts, (int)(sizeof opts / sizeof *opts), argc,
                                argv);
    if (rc != 0) return rc;
    if (check_source(a) != 0) return -1;
    return app_tick_cli_check(APP, &a->cli);
}

/* ---------------------------------------------------------------- the graph */

/* The hop count the run's queries reach, L_{m+1} (with a margin), so labels
 * are computed before the processes start. */
static int label_hops(const tess_tick_options *o) { return o->layers + 2; }

/* A signal is taken between the phases: METIS, which runs for seconds on a
 * large graph, cannot be stopped inside (signals.c blocks it there). */
static int interrupted(char *err, size_t errlen)
{
    if (!tess_interrupted(NULL)) return 0;
    snprintf(err, errlen, "interrupted by a signal");
    return 1;
}

/* Load, partition into n parts and label: on every rank, identically.
 * 0, or -1 with a one-line message in err. */
static int prepare_graph(prt_app *a, int n, char *err, size_t errlen)
{
    double t0 = tess_now();
    int rc = a->gen_spec ? tg_generate(a->gen_spec, &a->g, err, errlen)
                         : tg_load_file(a->graph_path, &a->g, err, errlen);
    if (rc != 0 || interrupted(err, errlen)) return -1;
    if (tg_build_in_csr(&a->g, &a->csr, err, errlen) != 0 || interrupted(err, errlen)) return -1;
    a->init = 1.0 / (double)a->g.nv;
    a->base = (1.0 - a->damping) / (double)a->g.nv;
    a->load_seconds = tess_now() - t0;
    t0 = tess_now();
    if (prt_partition(a, n, err, errlen) != 0 || interrupted(err, errlen)) return -1;
    rc =
        tess_graph_create((uint32_t)a->g.nv, a->csr.in_first, a->csr.in_src, a->part, n, &a->graph);
    if (rc == 0) rc = tess_graph_prepare(a->graph, label_hops(&a->cli.opt));
    if (rc != 0) return snprintf(err, errlen, "cannot label the graph: %s", tess_strerror(rc)), -1;
    a->partition_seconds = tess_now() - t0;
    return 0;
}

static void setup_tick(prt_app *a)
{
    a->fns = (tess_graph_fns){.graph = a->graph, .init = prt_init, .step = prt_step};
    a->tick = (tess_tick_app){.name = APP,
                              .state = &tess_graph_class,
                              .user = a,
                              .class_fns = &a->fns,
                              .part = prt_part,
                              .part_ignores_state = 1,
                              .rd = prt_rd,
                              .wd = prt_same,
                              .rx = prt_rx,
                              .wx = prt_same,
                              .disjoint = prt_disjoint};
    a->tick.universe = tess_graph_query(0, TESS_GRAPH_ALL, 0);
}

/* ---------------------------------------------------------------- running */

static void add_metrics(void *arg, app_metrics *m)
{
    const prt_app *a = arg;
    app_metrics_int(m, "vertices", (int64_t)a->g.nv);
    app_metrics_int(m, "edges", (int64_t)a->g.ne);
    app_metrics_num(m, "damping", a->damping);
    app_metrics_num(m, "load_seconds", a->load_seconds);
    app_metrics_num(m, "partition_seconds", a->partition_seconds);
    app_metrics_int(m, "edge_cut", (int64_t)a->edge_cut);
}

static int64_t vertices(void *arg) { return (int64_t)((const prt_app *)arg)->g.nv; }

/* The final state, one rank per vertex. */
static double *gather_ranks(prt_app *a, const tess_tick_result *res)
{
    double *pr = malloc((a->g.nv ? a->g.nv : 1) * sizeof *pr);
    uint64_t got = 0;
    int rc = pr ? tess_graph_unpack(res->final_state.data, res->final_state.len, (uint32_t)a->g.nv,
                                    pr, &got)
                : TESS_ERR_NOMEM;
    if (rc == 0 && got == a->g.nv) return pr;
    app_error(APP, "the final state is incomplete (%llu of %llu vertices; %s)",
              (unsigned long long)got, (unsigned long long)a->g.nv, tess_strerror(rc));
    free(pr);
    return NULL;
}

static int write_ranks(void *arg, const tess_tick_result *res, FILE *fp)
{
    prt_app *a = arg;
    double *pr = gather_ranks(a, res);
    int rc = pr ? prt_write_ranks(a, pr, fp) : -1;
    free(pr);
    return rc;
}

/* What a checkpoint belongs to: the graph itself (its ids and edges, not
 * its file name) and the damping factor. */
static void set_job(prt_app *a)
{
    const tg_graph *g = &a->g;
    uint64_t h = app_hash_bytes(0, g->ids, g->nv * sizeof *g->ids);
    h = app_hash_bytes(h, g->src, g->ne * sizeof *g->src);
    h = app_hash_bytes(h, g->dst, g->ne * sizeof *g->dst);
    app_tick_cli_set_job(&a->cli, "vertices=%llu edges=%llu graph=%016llx damping=%.17g",
                         (unsigned long long)g->nv, (unsigned long long)g->ne,
                         (unsigned long long)h, a->damping);
}

/* Every rank loads, partitions and labels the graph identically. */
static int prepare(tess_ctx *ctx, void *arg)
{
    prt_app *a = arg;
    char err[600] = "";
    int rc = prepare_graph(a, tess_workers_total(ctx), err, sizeof err);
    if (rc != 0 && tess_rank(ctx) == 0) app_error(APP, "%s", err);
    if (rc == 0) setup_tick(a);
    if (rc == 0) set_job(a);
    return rc;
}

static void app_free(prt_app *a)
{
    tess_graph_destroy(a->graph);
    tg_free(&a->g);
    tg_in_csr_free(&a->csr);
    free(a->part);
}

int pagerank_tick_main(int argc, char **argv)
{
    prt_app a;
    memset(&a, 0, sizeof a);
    double start = tess_now();
    int rc = parse(&a, argc, argv);
    if (rc != 0) return rc > 0 ? 0 : 2;
    app_tick_spec spec = {.name = APP,
                          .app = &a,
                          .cli = &a.cli,
                          .tick = &a.tick,
                          .output_path = a.output_path,
                          .input_path = a.graph_path,
                          .input_option = "graph",
                          .start = start,
                          .prepare = prepare,
                          .write_output = write_ranks,
                          .add_metrics = add_metrics,
                          .tuples = vertices};
    rc = app_tick_main(&spec);
    app_free(&a);
    return rc;
}
