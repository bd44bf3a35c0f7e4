/*
 * bench_pagerank.c — `tessera bench pagerank`: PageRank on tessera against
 * the CSR pull reference (csr_pagerank.c), measured in one run in
 * alternating rounds A B C A B C … because the machine is noisy (DESIGN §7):
 *
 *   A  the CSR reference in this process, W OpenMP threads;
 *   B  tessera embedded: this very binary (/proc/self/exe) as a subprocess,
 *      `run pagerank --graph CACHE --workers W`, timed by its own
 *      iteration_seconds (so process start and graph loading do not count);
 *   C  tessera under MPI: `mpirun -np W --bind-to core … run pagerank …
 *      --workers 1` (`--bind-to none` when W exceeds the cores), when the
 *      library has MPI and mpirun is on PATH.
 *
 * The graph (rmat:SCALE:EF, or a file given with --graph) is made once and written as a binary cache
 * into a private temporary directory, removed at the end (also on SIGINT).
 * In the first round B and C also write their ranks, which are compared with
 * the reference's.  The figures are ratios, never pass/fail; only wrong ranks
 * make the command fail.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <math.h>
#include <signal.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "bench_util.h"
#include "common.h"
#include "csr_pagerank.h"
#include "graph.h"
#include "tessera/tessera.h"

#define BENCH "bench pagerank"
#define BENCH_MAX_ERROR 1e-9
#define BENCH_DIR_MAX (PATH_MAX / 2) /* leaves room for file names inside */

extern char **environ;

typedef struct bench_options {
    long scale, edge_factor;
    bench_run_opts run;
    double damping;
    int no_mpi;
    const char *graph_path; /* --graph: a graph file instead of R-MAT */
} bench_options;

/* Median seconds per iteration of one round; NAN when the variant did not run. */
typedef struct bench_round {
    double ref, tess, mpi;
    double tess_rss; /* B's peak resident bytes (its metrics); NAN if unknown */
} bench_round;

typedef struct bench_state {
    bench_options opt;
    char spec[PATH_MAX];
    uint64_t nv, ne;
    uint64_t *ids; /* nv original ids, ascending (taken from the graph) */
    bench_csr csr;
    double *ref_ranks; /* nv, from the first reference round */
    char tmpdir[BENCH_DIR_MAX];
    char exe[PATH_MAX];
    char mpirun[PATH_MAX]; /* empty: variant C is not run */
    const char *mpi_note;  /* why C is not run */
    bench_round *rounds;
    double err_tess, err_mpi; /* max relative error vs the reference; NAN: not checked */
} bench_state;

/* ---------------------------------------------------------------- options */

static const char usage[] =
    "usage: tessera bench pagerank [options]\n"
    "\n"
    "PageRank on tessera against a plain C CSR pull PageRank with OpenMP\n"
    "(the memory-bandwidth reference), in alternating rounds:\n"
    "  A  reference, W OpenMP threads in this process\n"
    "  B  tessera embedded: tessera run pagerank --workers W\n"
    "  C  tessera under MPI: mpirun -np W ... --workers 1, one rank bound to\n"
    "     each core (unbound when W exceeds the cores), if available\n"
    "Reports edges/s of each, tessera/reference throughput (goal >= 0.7 on\n"
    "R-MAT, >= 0.5 on a --graph), MPI/embedded throughput (goal >= 0.6),\n"
    "the ratios of every round,\n"
    "and the largest relative difference of tessera's ranks from the\n"
    "reference's (must be <= 1e-9).\n"
    "\n"
    "options:\n"
    "  --scale S          R-MAT scale: 2^S vertices (default 20)\n"
    "  --edge-factor E    edges per vertex (default 16)\n"
    "  --quick            --scale 16 (a smoke run of a few seconds)\n"
    "  --graph FILE       this graph instead of R-MAT: a SNAP edge list (plain\n"
    "                     or gzip) or a binary graph cache\n"
    "  --iterations I     PageRank iterations per run (default 10)\n"
    "  --damping D        damping factor (default 0.85)\n"
    "  --rounds R         rounds of A B C (default 3)\n"
    "  --workers W        threads for A and B, ranks for C (default 2)\n"
    "  --no-mpi           skip C\n"
    "  --json FILE        append one JSON object (one line) with the results\n"
    "  --tmpdir DIR       where the temporary directory goes (default $TMPDIR\n"
    "                     or /tmp); it holds the graph cache (~8 bytes/edge)\n"
    "  --help             this text\n"
    "\n"
    "As root, mpirun needs OMPI_ALLOW_RUN_AS_ROOT=1 and\n"
    "OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 in the environment; in containers\n"
    "OMPI_MCA_btl_vader_single_copy_mechanism=none may be needed too.\n";

/* --quick: --scale 16. */
static int set_quick(const char *app, const app_opt *o, const char *unused)
{
    (void)app, (void)unused;
    *(long *)o->dest = o->flag_value;
    return 0;
}

/* 0 to run, 1 after --help, -1 after an error. */
static int parse_options(bench_options *o, int argc, char **argv)
{
    *o = (bench_options){.scale = 20, .edge_factor = 16, .damping = 0.85};
    app_opt run[BENCH_RUN_OPTIONS];
    int m = bench_run_options(&o->run, run);
    const app_opt opts[] = {
        {"quick", APP_OPT_FLAG, &o->scale, 0, 0, 16, NULL, set_quick},
        {"no-mpi", APP_OPT_FLAG, &o->no_mpi, 0, 0, 1, NULL, NULL},
        {"scale", APP_OPT_INT, &o->scale, 1, 31, 0, NULL, NULL},
        {"edge-factor", APP_OPT_INT, &o->edge_factor, 1, 1024, 0, NULL, NULL},
        {"damping", APP_OPT_CUSTOM, &o->damping, 0, 1, 0, NULL, app_parse_open_interval},
        {"graph", APP_OPT_CUSTOM, &o->graph_path, 0, 0, 0, NULL, app_parse_path},
    };
    int rc = app_parse_options_with(BENCH, usage, argc, argv, opts,
                                    (int)(sizeof opts / sizeof *opts), run, m);
    if (rc != 0) return rc;
    if (((uint64_t)o->edge_factor << o->scale) > ((uint64_t)1 << 36)) {
        app_error(BENCH, "option --edge-factor: %ld << %ld edges is too many", o->edge_factor,
                  o->scale);
        return -1;
    }
    return 0;
}

/* ------------------------------------------------------ temporary files */

static void tmp_path(const bench_state *s, const char *name, char *out, size_t len)
{
    snprintf(out, len, "%s/%s", s->tmpdir, name);
}

/* The directory holds only files this process (or its children) made. */
static void remove_tmpdir(bench_state *s)
{
    if (s->tmpdir[0] == '\0') return;
    DIR *d = opendir(s->tmpdir);
    if (d != NULL) {
        struct dirent *e;
        char path[PATH_MAX + 256];
        while ((e = readdir(d)) != NULL) {
            if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0) continue;
            snprintf(path, sizeof path, "%s/%s", s->tmpdir, e->d_name);
            unlink(path);
        }
        closedir(d);
    }
    rmdir(s->tmpdir);
    s->tmpdir[0] = '\0';
}

/* ------------------------------------------------------------ the graph */

/* Generate, write the cache, build the CSR; keeps only the ids afterwards. */
static int prepare_graph(bench_state *s)
{
    tg_graph g;
    char err[512] = "", cache[PATH_MAX];
    snprintf(s->spec, sizeof s->spec, "rmat:%ld:%ld", s->opt.scale, s->opt.edge_factor);
    if (s->opt.graph_path != NULL) snprintf(s->spec, sizeof s->spec, "%s", s->opt.graph_path);
    tmp_path(s, "graph.cache", cache, sizeof cache);
    int rc = s->opt.graph_path ? tg_load_file(s->spec, &g, err, sizeof err)
                               : tg_generate(s->spec, &g, err, sizeof err);
    if (rc == 0) rc = tg_write_cache(cache, &g, err, sizeof err);
    if (rc != 0) {
        app_error(BENCH, "%s", err);
        tg_free(&g);
        return -1;
    }
    if (bench_csr_build(&g, &s->csr) != TESS_OK) {
        app_error(BENCH, "%s: cannot build the CSR reference: %s", s->spec,
                  tess_strerror(TESS_ERR_NOMEM));
        tg_free(&g);
        return -1;
    }
    s->nv = g.nv;
    s->ne = g.ne;
    s->ids = g.ids; /* the edges are no longer needed; free them before the runs */
    g.ids = NULL;
    tg_free(&g);
    return 0;
}

/* ------------------------------------------------------- subprocesses */

static void find_mpirun(bench_state *s)
{
    s->mpirun[0] = '\0';
    if (s->opt.no_mpi) s->mpi_note = "--no-mpi";
    else s->mpi_note = bench_find_mpirun(s->mpirun, sizeof s->mpirun, 1);
}

/* First line of a child's stderr log, for an error message. */
/* Wait for the child; on SIGINT/SIGTERM terminate it and report that. */
static int wait_child(pid_t pid, int *status)
{
    for (;;) {
        if (waitpid(pid, status, 0) == pid) return bench_interrupted ? -1 : 0;
        if (errno != EINTR) return -1;
        if (bench_interrupted) kill(pid, SIGTERM);
    }
}

/* Run argv with stdout/stderr going to LABEL.out/LABEL.err in the tmpdir.
 * 0 on exit status 0, else -1 after printing one line naming the reason. */
static int run_child(bench_state *s, const char *label, char **argv)
{
    char out[PATH_MAX], err[PATH_MAX], name[64];
    snprintf(name, sizeof name, "%s.out", label);
    tmp_path(s, name, out, sizeof out);
    snprintf(name, sizeof name, "%s.err", label);
    tmp_path(s, name, err, sizeof err);
    pid_t pid;
    int status = 0, rc = bench_spawn_logged(argv, out, err, &pid);
    if (rc != 0) {
        app_error(BENCH, "cannot start %s: %s", argv[0], strerror(rc));
        return -1;
    }
    if (wait_child(pid, &status) != 0) {
        app_error(BENCH, "interrupted");
        return -1;
    }
    if (WIFEXITED(status) && WEXITSTATUS(status) == 0) return 0;
    char line[400];
    bench_first_line(err, line, sizeof line);
    app_error(BENCH, "%s run failed (%s %d): %s", label, WIFEXITED(status) ? "exit" : "signal",
              WIFEXITED(status) ? WEXITSTATUS(status) : WTERMSIG(status),
              line[0] ? line : "(no message)");
    return -1;
}

/* --------------------------------------------- reading what tessera wrote */

/* Median of the run's iteration_seconds from its metrics file; NAN on error. */
static double metrics_median(bench_state *s, const char *label, const char *path)
{
    char *text = bench_read_text(path);
    double *v = NULL;
    int n = text ? bench_json_numbers(text, "iteration_seconds", &v) : -1;
    free(text);
    if (n <= 0) {
        app_error(BENCH, "%s run: no iteration_seconds list in %s", label, path);
        free(v);
        return NAN;
    }
    if (n != s->opt.run.iterations)
        fprintf(stderr, "tessera %s: note: %s run reported %d iteration times, expected %ld\n",
                BENCH, label, n, s->opt.run.iterations);
    double m = bench_median(v, n);
    free(v);
    return m;
}

/* Compare "id<TAB>rank" lines with the reference ranks; max relative error,
 * or INFINITY after printing why the file does not match the graph. */
static double compare_ranks(bench_state *s, const char *label, const char *path)
{
    FILE *f = fopen(path, "r");
    if (f == NULL) {
        app_error(BENCH, "%s run: cannot read %s: %s", label, path, strerror(errno));
        return INFINITY;
    }
    char line[256];
    uint64_t i = 0;
    double worst = 0.0;
    while (fgets(line, sizeof line, f) != NULL) {
        char *end;
        unsigned long long id = strtoull(line, &end, 10);
        double rank = *end == '\t' ? strtod(end + 1, &end) : NAN;
        if (i >= s->nv || id != s->ids[i] || isnan(rank)) {
            app_error(BENCH, "%s:%llu: expected vertex %llu with a rank, got '%.40s'", path,
                      (unsigned long long)i + 1, i < s->nv ? (unsigned long long)s->ids[i] : 0ULL,
                      line);
            fclose(f);
            return INFINITY;
        }
        double ref = s->ref_ranks[i++];
        double rel = fabs(rank - ref) / fabs(ref);
        if (!(rel <= worst)) /* also catches NaN */
            worst = rel;
    }
    fclose(f);
    if (i != s->nv) {
        app_error(BENCH, "%s: %llu vertices, expected %llu", path, (unsigned long long)i,
                  (unsigned long long)s->nv);
        return INFINITY;
    }
    return worst;
}

/* ------------------------------------------------------------ variants */

/* Common `run pagerank` arguments after the executable; argv has room. */
static int pagerank_args(bench_state *s, char **argv, int n, long workers, const char *metrics,
                         const char *output, char bufs[][PATH_MAX])
{
    snprintf(bufs[0], PATH_MAX, "%s/graph.cache", s->tmpdir);
    snprintf(bufs[1], PATH_MAX, "%ld", s->opt.run.iterations);
    snprintf(bufs[2], PATH_MAX, "%ld", workers);
    snprintf(bufs[3], PATH_MAX, "%.17g", s->opt.damping);
    const char *fixed[] = {"run",     "pagerank",  "--graph", bufs[0],     "--iterations",
                           bufs[1],   "--workers", bufs[2],   "--damping", bufs[3],
                           "--quiet", "--metrics", metrics};
    for (size_t k = 0; k < sizeof fixed / sizeof *fixed; k++) argv[n++] = (char *)fixed[k];
    if (output != NULL) {
        argv[n++] = "--output";
        argv[n++] = (char *)output;
    }
    argv[n] = NULL;
    return n;
}

/* B or C: one tessera run; median s/iteration, or NAN after an error.
 * With check, the run also writes its ranks, compared into *err_out
 * (INFINITY when they do not match the graph: the run still counts, and
 * the benchmark fails at the end). */
/* B's peak RSS from its metrics file; NAN if absent. */
static double metrics_rss(const char *path)
{
    char *text = bench_read_text(path);
    double v = NAN;
    if (text == NULL || bench_json_number(text, "peak_rss_bytes", &v) != 0) v = NAN;
    free(text);
    return v;
}

static double run_tessera(bench_state *s, int mpi, int check, double *err_out, double *rss_out)
{
    const char *label = mpi ? "mpi" : "embedded";
    char metrics[PATH_MAX], output[PATH_MAX], np[16], bufs[4][PATH_MAX];
    char *argv[32];
    int n = 0;
    snprintf(metrics, sizeof metrics, "%s/%s.json", s->tmpdir, label);
    snprintf(output, sizeof output, "%s/%s.ranks", s->tmpdir, label);
    if (mpi) {
        snprintf(np, sizeof np, "%ld", s->opt.run.workers);
        /* one single-worker rank per core, as mpirun binds by default: left
         * unbound, 2 ranks' workers, progress threads and spinning waits
         * landed on 2 vCPUs as the scheduler pleased, and Gnutella's
         * iteration took 0.5 or 1.0 ms from one run to the next */
        const char *bind = s->opt.run.workers <= sysconf(_SC_NPROCESSORS_ONLN) ? "core" : "none";
        n += bench_mpirun_argv(argv + n, s->mpirun, np, bind);
    }
    argv[n++] = s->exe;
    pagerank_args(s, argv, n, mpi ? 1 : s->opt.run.workers, metrics, check ? output : NULL, bufs);
    unlink(metrics);
    if (run_child(s, label, argv) != 0) return NAN;
    double m = metrics_median(s, label, metrics);
    if (rss_out != NULL) *rss_out = metrics_rss(metrics);
    if (check && !isnan(m)) {
        *err_out = compare_ranks(s, label, output);
        unlink(output);
    }
    return m;
}

static void print_rate(const char *name, double seconds, uint64_t ne)
{
    if (isnan(seconds)) printf("  %-9s     -\n", name);
    else
        printf("  %-9s %10.3f ms/iteration %9.1f M edges/s\n", name, seconds * 1e3,
               (double)ne / seconds / 1e6);
}

/* One round A B C; -1 stops the benchmark. */
static int run_round(bench_state *s, int r)
{
    bench_round *rd = &s->rounds[r];
    int first = r == 0;
    rd->ref = bench_csr_run(&s->csr, (int)s->opt.run.iterations, s->opt.damping,
                            (int)s->opt.run.workers, first ? s->ref_ranks : NULL, NULL);
    if (rd->ref < 0) {
        app_error(BENCH, "reference run: %s", tess_strerror((int)rd->ref));
        return -1;
    }
    rd->tess = run_tessera(s, 0, first, &s->err_tess, &rd->tess_rss);
    if (isnan(rd->tess)) return -1;
    rd->mpi = NAN;
    if (s->mpirun[0] != '\0') {
        rd->mpi = run_tessera(s, 1, first, &s->err_mpi, NULL);
        if (isnan(rd->mpi) && !bench_interrupted) {
            /* a broken MPI setup should not lose the embedded figures */
            fprintf(stderr, "tessera %s: note: continuing without the MPI variant\n", BENCH);
            s->mpirun[0] = '\0';
            s->mpi_note = "the MPI run failed (message above)";
        }
    }
    printf("round %d/%ld\n", r + 1, s->opt.run.rounds);
    print_rate("reference", rd->ref, s->ne);
    print_rate("tessera", rd->tess, s->ne);
    print_rate("mpi", rd->mpi, s->ne);
    fflush(stdout);
    return bench_interrupted ? -1 : 0;
}

/* --------------------------------------------------------------- report */

typedef double (*round_figure)(const bench_round *);
static double fig_ref(const bench_round *r) { return r->ref; }
static double fig_tess(const bench_round *r) { return r->tess; }
static double fig_mpi(const bench_round *r) { return r->mpi; }
static double fig_ratio(const bench_round *r) { return r->ref / r->tess; }
static double fig_mpi_ratio(const bench_round *r) { return r->tess / r->mpi; }
static double fig_rss(const bench_round *r) { return r->tess_rss; }

/* What the CSR reference must hold: the graph (offsets and uint32 sources)
 * and two rank arrays. */
static double reference_bytes(const bench_state *s)
{
    return 8.0 * (double)(s->nv + 1) + 4.0 * (double)s->ne + 16.0 * (double)s->nv;
}

/* Median of a figure over the rounds that have it; NAN if none. */
static double median_of(const bench_state *s, round_figure fig)
{
    double v[1000];
    int n = 0;
    for (long r = 0; r < s->opt.run.rounds; r++)
        if (!isnan(fig(&s->rounds[r]))) v[n++] = fig(&s->rounds[r]);
    return n ? bench_median(v, n) : NAN;
}

static void print_per_round(const bench_state *s, round_figure fig)
{
    printf("   per round:");
    for (long r = 0; r < s->opt.run.rounds; r++) printf(" %.3f", fig(&s->rounds[r]));
    printf(" (median %.3f)\n", median_of(s, fig));
}

static void print_report(const bench_state *s)
{
    double ref = median_of(s, fig_ref), tess = median_of(s, fig_tess), mpi = median_of(s, fig_mpi);
    printf("median over %ld rounds\n", s->opt.run.rounds);
    print_rate("reference", ref, s->ne);
    print_rate("tessera", tess, s->ne);
    print_rate("mpi", mpi, s->ne);
    printf("tessera/reference throughput: %.3f (goal >= %.1f)", ref / tess,
           s->opt.graph_path ? 0.5 : 0.7);
    print_per_round(s, fig_ratio);
    if (isnan(mpi)) printf("mpi/embedded throughput: not measured (%s)\n", s->mpi_note);
    else {
        printf("mpi/embedded throughput: %.3f (goal >= 0.6)", tess / mpi);
        print_per_round(s, fig_mpi_ratio);
    }
    double rss = median_of(s, fig_rss), ref_bytes = reference_bytes(s);
    if (!isnan(rss))
        printf("memory: tessera peak RSS %.1f MB (%.1f bytes/edge), CSR reference footprint "
               "%.1f MB (graph + two rank arrays, %.1f bytes/edge): %.2fx (goal <= 2)\n",
               rss / 1e6, rss / (double)s->ne, ref_bytes / 1e6, ref_bytes / (double)s->ne,
               rss / ref_bytes);
    printf("max relative error vs reference: embedded %.3g", s->err_tess);
    if (!isnan(s->err_mpi)) printf(", mpi %.3g", s->err_mpi);
    printf(" (limit %g)\n", BENCH_MAX_ERROR);
}

static app_metrics *round_object(const bench_round *rd)
{
    app_metrics *o = app_metrics_new();
    app_metrics_num(o, "reference_seconds", rd->ref);
    app_metrics_num(o, "tessera_seconds", rd->tess);
    app_metrics_num(o, "mpi_seconds", rd->mpi);
    app_metrics_num(o, "ratio", fig_ratio(rd));
    app_metrics_num(o, "mpi_rate_ratio", fig_mpi_ratio(rd));
    app_metrics_num(o, "tessera_peak_rss_bytes", rd->tess_rss);
    return o;
}

static void put_rounds(app_metrics *o, const bench_state *s)
{
    app_metrics **rounds = calloc((size_t)s->opt.run.rounds + 1, sizeof *rounds);
    for (long r = 0; rounds != NULL && r < s->opt.run.rounds; r++)
        rounds[r] = round_object(&s->rounds[r]);
    app_metrics_objects(o, "rounds", rounds, rounds ? (int)s->opt.run.rounds : -1);
    free(rounds);
}

static void put_params(app_metrics *o, const bench_state *s)
{
    app_metrics *p = app_metrics_new();
    app_metrics_str(p, "graph", s->spec);
    app_metrics_int(p, "vertices", (int64_t)s->nv);
    app_metrics_int(p, "edges", (int64_t)s->ne);
    app_metrics_int(p, "iterations", s->opt.run.iterations);
    app_metrics_num(p, "damping", s->opt.damping);
    app_metrics_int(p, "rounds", s->opt.run.rounds);
    app_metrics_int(p, "workers", s->opt.run.workers);
    app_metrics_bool(p, "mpi", s->mpi_note == NULL);
    app_metrics_object(o, "params", p);
}

/* Did B (and C, if it ran) agree with the reference within BENCH_MAX_ERROR? */
static int ranks_ok(const bench_state *s)
{
    return s->err_tess <= BENCH_MAX_ERROR && (isnan(s->err_mpi) || s->err_mpi <= BENCH_MAX_ERROR);
}

/* Append one line: a JSON object with the parameters and all figures. */
static int append_json(const bench_state *s)
{
    app_metrics *o = app_metrics_new();
    app_metrics_str(o, "bench", "pagerank");
    bench_put_stamp(o);
    put_params(o, s);
    put_rounds(o, s);
    app_metrics_num(o, "ratio", median_of(s, fig_ref) / median_of(s, fig_tess));
    app_metrics_num(o, "mpi_rate_ratio", median_of(s, fig_tess) / median_of(s, fig_mpi));
    app_metrics_num(o, "tessera_peak_rss_bytes", median_of(s, fig_rss));
    app_metrics_num(o, "reference_bytes", reference_bytes(s));
    app_metrics_num(o, "max_rel_error", s->err_tess);
    app_metrics_num(o, "max_rel_error_mpi", s->err_mpi);
    app_metrics_bool(o, "ranks_ok", ranks_ok(s));
    int rc = app_metrics_append_line(o, s->opt.run.json_path, BENCH);
    app_metrics_free(o);
    return rc;
}

/* ----------------------------------------------------------------- main */

static int setup(bench_state *s)
{
    if (bench_self_exe(BENCH, s->exe, sizeof s->exe) != 0) return -1;
    find_mpirun(s);
    s->rounds = calloc((size_t)s->opt.run.rounds, sizeof *s->rounds);
    if (s->rounds == NULL ||
        bench_make_tmpdir(s->tmpdir, sizeof s->tmpdir, s->opt.run.tmp_parent, "tessera-bench",
                          BENCH) != 0 ||
        prepare_graph(s) != 0)
        return -1;
    s->ref_ranks = malloc(s->nv * sizeof *s->ref_ranks);
    if (s->ref_ranks == NULL) {
        app_error(BENCH, "%s", tess_strerror(TESS_ERR_NOMEM));
        return -1;
    }
    return 0;
}

static int run_bench(void *arg)
{
    bench_state *s = arg;
    if (setup(s) != 0) return 1;
    printf("bench pagerank: %s, %llu vertices, %llu edges, %ld iterations, %ld rounds, "
           "%ld workers%s%s\n",
           s->spec, (unsigned long long)s->nv, (unsigned long long)s->ne, s->opt.run.iterations,
           s->opt.run.rounds, s->opt.run.workers, s->mpi_note ? "; no MPI: " : "",
           s->mpi_note ? s->mpi_note : "");
    fflush(stdout);
    for (long r = 0; r < s->opt.run.rounds; r++)
        if (run_round(s, (int)r) != 0) return 1;
    print_report(s);
    if (s->opt.run.json_path != NULL && append_json(s) != 0) return 1;
    if (!ranks_ok(s)) {
        app_error(BENCH, "tessera's ranks differ from the reference by more than %g",
                  BENCH_MAX_ERROR);
        return 1;
    }
    return 0;
}

int bench_pagerank_main(int argc, char **argv)
{
    bench_state s;
    memset(&s, 0, sizeof s);
    s.err_tess = s.err_mpi = NAN;
    int rc = parse_options(&s.opt, argc, argv);
    if (rc != 0) return rc > 0 ? 0 : 2;
    rc = bench_interruptible(run_bench, &s);
    remove_tmpdir(&s);
    free(s.rounds);
    free(s.ref_ranks);
    free(s.ids);
    bench_csr_free(&s.csr);
    return rc;
}
