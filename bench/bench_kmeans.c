/*
 * bench_kmeans.c — `tessera bench kmeans`: k-means on tessera against a
 * plain C loop doing the same arithmetic, in alternating rounds A B A B …
 * because the machine is noisy (DESIGN §7):
 *
 *   A  the plain loop in this process, W OpenMP threads: per point the
 *      nearest centre and its coordinates added to a per-thread sum
 *      (kmeans_assign_point, the very function tessera's kernel calls), the
 *      assignment stored and a moved count kept; then the sums merged in
 *      thread order into the new centres (an empty cluster keeps its own);
 *   B  `tessera run kmeans --gen SPEC --workers W` as a subprocess, timed by
 *      its own iteration_seconds (process start and point generation do not
 *      count).
 *
 * Both start from the first K points of the same generated set.  In the
 * first round B writes its centres, compared with A's: the partial sums are
 * added in another order, so they agree to about 1e-12, not to the bit.
 * Figures are ratios, never pass/fail; only wrong centres fail the command.
 */
#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "bench_rounds.h"
#include "bench_util.h"
#include "common.h"
#include "kmeans/kmeans.h"
#include "tessera/tessera.h"

#ifdef _OPENMP
#include <omp.h>
#define BK_PRAGMA(...) _Pragma(#__VA_ARGS__)
#define BK_OMP(...) BK_PRAGMA(omp __VA_ARGS__)
#else
#define BK_OMP(...)
#endif

#define BENCH "bench kmeans"
#define BK_MAX_ERROR 1e-9

typedef struct bk_options {
    long points, dim, k;
    bench_run_opts run;
} bk_options;

typedef struct bk_state {
    bk_options opt;
    char spec[96];
    kmeans_points pts;
    double *centres;      /* K x DIM, the plain loop's */
    double *ref_final;    /* its centres after the first round */
    double *plain, *tess; /* seconds per iteration (median) of each round */
    double err;           /* max relative difference of B's centres; NAN: not checked */
    char tmpdir[PATH_MAX / 2];
    char exe[PATH_MAX];
} bk_state;

/* ---------------------------------------------------------------- options */

static const char usage[] =
    "usage: tessera bench kmeans [options]\n"
    "\n"
    "k-means on tessera against a plain C loop with the same arithmetic\n"
    "(OpenMP, the same nearest-centre function), in alternating rounds:\n"
    "  A  the plain loop, W threads in this process\n"
    "  B  tessera run kmeans --gen N:DIM:K --workers W\n"
    "Reports seconds per iteration (median of each round, median over\n"
    "rounds), tessera/plain throughput (goal >= 0.7) with every round's\n"
    "ratio, and the largest relative difference of tessera's centres from\n"
    "the plain loop's (must be <= 1e-9).\n"
    "\n"
    "options:\n"
    "  --points N         points (default 1000000)\n"
    "  --dim D            dimensions (default 8)\n"
    "  --k K              centres (default 16)\n"
    "  --iterations I     iterations per run (default 10)\n"
    "  --rounds R         rounds of A B (default 3)\n"
    "  --workers W        threads for A, worker threads for B (default 2)\n"
    "  --json FILE        append one JSON object (one line) with the results\n"
    "  --tmpdir DIR       where the temporary directory goes (default $TMPDIR\n"
    "                     or /tmp)\n"
    "  --help             this text\n";

static int parse_options(bk_options *o, int argc, char **argv)
{
    *o = (bk_options){.points = 1000000, .dim = 8, .k = 16};
    app_opt run[BENCH_RUN_OPTIONS];
    int m = bench_run_options(&o->run, run);
    const app_opt opts[] = {
        {"points", APP_OPT_INT, &o->points, 1, 1L << 32, 0, NULL, NULL},
        {"dim", APP_OPT_INT, &o->dim, 1, KMEANS_MAX_DIM, 0, NULL, NULL},
        {"k", APP_OPT_INT, &o->k, 1, 1 << 20, 0, NULL, NULL},
    };
    int rc = app_parse_options_with(BENCH, usage, argc, argv, opts,
                                    (int)(sizeof opts / sizeof *opts), run, m);
    if (rc != 0) return rc;
    if (o->k > o->points) {
        app_error(BENCH, "option --k: %ld centres but only %ld points", o->k, o->points);
        return -1;
    }
    return 0;
}

/* ---------------------------------------------------------------- A */

static double now_seconds(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

/* Per-thread sums: K rows of DIM coordinate sums and a count. */
static void assign_points(const bk_state *s, const double *ct, int32_t *assign, double *sums,
                          int threads, int64_t *moved_out)
{
    const int k = (int)s->opt.k, dim = (int)s->opt.dim;
    const int64_t n = (int64_t)s->pts.n;
    const size_t row = (size_t)dim + 1;
    int64_t moved = 0;
    (void)threads;
    BK_OMP(parallel num_threads(threads) reduction(+ : moved))
    {
        int t = 0;
#ifdef _OPENMP
        t = omp_get_thread_num();
#endif
        double *acc = sums + (size_t)t * (size_t)k * row;
        memset(acc, 0, (size_t)k * row * sizeof *acc);
        /* dynamic: the two vCPUs here differ in speed by up to 40%, and a
         * static split would measure the slower one */
        BK_OMP(for schedule(dynamic, 16384))
        for (int64_t i = 0; i < n; i++) {
            const double *x = s->pts.coords + (size_t)i * (size_t)dim;
            int32_t c = kmeans_assign_point(x, ct, k, dim, acc);
            moved += c != assign[i];
            assign[i] = c;
        }
    }
    *moved_out = moved;
}

/* New centres from the per-thread sums, added in thread order. */
static void update_centres(bk_state *s, const double *sums, int threads)
{
    const int k = (int)s->opt.k, dim = (int)s->opt.dim;
    const size_t row = (size_t)dim + 1;
    for (int j = 0; j < k; j++) {
        double total[KMEANS_MAX_DIM + 1];
        memset(total, 0, row * sizeof *total);
        for (int t = 0; t < threads; t++)
            for (size_t d = 0; d < row; d++) total[d] += sums[((size_t)t * k + j) * row + d];
        for (int d = 0; total[dim] > 0 && d < dim; d++)
            s->centres[(size_t)j * dim + d] = total[d] / total[dim];
    }
}

/* One run of the plain loop: median seconds per iteration; its final
 * centres stay in s->centres.  NAN when out of memory. */
static double run_plain(bk_state *s)
{
    const int k = (int)s->opt.k, dim = (int)s->opt.dim, threads = (int)s->opt.run.workers;
    const size_t row = (size_t)dim + 1;
    double *ct = malloc((size_t)k * dim * sizeof *ct);
    double *sums = malloc((size_t)threads * k * row * sizeof *sums);
    int32_t *assign = malloc(s->pts.n * sizeof *assign);
    double *times = malloc((size_t)s->opt.run.iterations * sizeof *times);
    double median = NAN;
    if (ct && sums && assign && times) {
        memcpy(s->centres, s->pts.coords, (size_t)k * dim * sizeof *s->centres);
        for (uint64_t i = 0; i < s->pts.n; i++) assign[i] = -1;
        for (long it = 0; it < s->opt.run.iterations; it++) {
            double t0 = now_seconds();
            for (int j = 0; j < k; j++)
                for (int d = 0; d < dim; d++)
                    ct[(size_t)d * k + j] = s->centres[(size_t)j * dim + d];
            int64_t moved = 0;
            assign_points(s, ct, assign, sums, threads, &moved);
            update_centres(s, sums, threads);
            times[it] = now_seconds() - t0;
        }
        median = bench_median(times, (int)s->opt.run.iterations);
    }
    free(ct);
    free(sums);
    free(assign);
    free(times);
    return median;
}

/* ---------------------------------------------------------------- B */

/* Largest relative difference of the centres file from the plain loop's;
 * INFINITY after a message when it does not hold K rows of DIM numbers. */
static double compare_centres(const bk_state *s, const char *path)
{
    FILE *f = fopen(path, "r");
    if (f == NULL) {
        app_error(BENCH, "cannot read %s: %s", path, strerror(errno));
        return INFINITY;
    }
    double worst = 0.0;
    size_t n = (size_t)s->opt.k * (size_t)s->opt.dim;
    for (size_t i = 0; i < n; i++) {
        double v, ref = s->ref_final[i];
        if (fscanf(f, "%lf", &v) != 1) {
            app_error(BENCH, "%s: expected %zu coordinates, found %zu", path, n, i);
            fclose(f);
            return INFINITY;
        }
        double rel = fabs(v - ref) / (fabs(ref) > 1e-300 ? fabs(ref) : 1.0);
        if (!(rel <= worst)) worst = rel;
    }
    fclose(f);
    return worst;
}

/* One tessera run: median seconds per iteration, or NAN after a message. */
static double run_tessera(bk_state *s, int check)
{
    char metrics[PATH_MAX], output[PATH_MAX], k[24], it[24], w[24];
    snprintf(metrics, sizeof metrics, "%s/metrics.json", s->tmpdir);
    snprintf(output, sizeof output, "%s/centres.txt", s->tmpdir);
    snprintf(k, sizeof k, "%ld", s->opt.k);
    snprintf(it, sizeof it, "%ld", s->opt.run.iterations);
    snprintf(w, sizeof w, "%ld", s->opt.run.workers);
    char *argv[] = {s->exe,      "run",          "kmeans",   "--gen",     s->spec, "--k",
                    k,           "--iterations", it,         "--workers", w,       "--quiet",
                    "--metrics", metrics,        "--output", output,      NULL};
    if (!check) argv[14] = NULL; /* no --output after the first round */
    if (bench_run_reported(argv, s->tmpdir, BENCH, "tessera run kmeans") != 0) return NAN;
    char *text = bench_read_text(metrics);
    double *v = NULL;
    int n = text ? bench_json_numbers(text, "iteration_seconds", &v) : -1;
    free(text);
    if (n <= 0) {
        app_error(BENCH, "no iteration_seconds in %s", metrics);
        free(v);
        return NAN;
    }
    double m = bench_median(v, n);
    free(v);
    if (check) s->err = compare_centres(s, output);
    return m;
}

/* ---------------------------------------------------------------- report */

static void print_report(const bk_state *s)
{
    int n = (int)s->opt.run.rounds;
    double plain = bench_median(s->plain, n), tess = bench_median(s->tess, n);
    printf("median over %d rounds\n", n);
    printf("  plain loop   %8.3f ms/iteration\n", plain * 1e3);
    printf("  tessera      %8.3f ms/iteration\n", tess * 1e3);
    printf("tessera/plain throughput: %.3f (goal >= 0.7)   per round:", plain / tess);
    for (int r = 0; r < n; r++) printf(" %.3f", s->plain[r] / s->tess[r]);
    printf(" (median %.3f)\nmax relative difference of the centres: %.3g (limit %g)\n",
           bench_median_ratio(s->plain, s->tess, n).median, s->err, BK_MAX_ERROR);
}

static int append_json(const bk_state *s)
{
    int n = (int)s->opt.run.rounds;
    app_metrics *o = app_metrics_new();
    if (o == NULL) return -1;
    app_metrics_str(o, "bench", "kmeans");
    bench_put_stamp(o);
    app_metrics_str(o, "points", s->spec);
    app_metrics_int(o, "iterations", s->opt.run.iterations);
    app_metrics_int(o, "workers", s->opt.run.workers);
    app_metrics_list(o, "plain_seconds", s->plain, n);
    app_metrics_list(o, "tessera_seconds", s->tess, n);
    app_metrics_num(o, "ratio", bench_median(s->plain, n) / bench_median(s->tess, n));
    app_metrics_num(o, "median_round_ratio", bench_median_ratio(s->plain, s->tess, n).median);
    app_metrics_num(o, "max_rel_error", s->err);
    return bench_record_write(o, s->opt.run.json_path, BENCH);
}

/* ---------------------------------------------------------------- main */

static int setup(bk_state *s)
{
    snprintf(s->spec, sizeof s->spec, "%ld:%ld:%ld", s->opt.points, s->opt.dim, s->opt.k);
    kmeans_gen_spec g;
    char err[256];
    size_t kd = (size_t)s->opt.k * (size_t)s->opt.dim;
    s->centres = malloc(kd * sizeof *s->centres);
    s->ref_final = malloc(kd * sizeof *s->ref_final);
    s->plain = calloc((size_t)s->opt.run.rounds, sizeof *s->plain);
    s->tess = calloc((size_t)s->opt.run.rounds, sizeof *s->tess);
    if (!s->centres || !s->ref_final || !s->plain || !s->tess ||
        kmeans_gen_parse(s->spec, &g, err, sizeof err) != 0 ||
        kmeans_points_generate(&g, &s->pts)) {
        app_error(BENCH, "%s: cannot generate the points (out of memory)", s->spec);
        return -1;
    }
    if (bench_self_exe(BENCH, s->exe, sizeof s->exe) != 0) return -1;
    return bench_make_tmpdir(s->tmpdir, sizeof s->tmpdir, s->opt.run.tmp_parent,
                             "tessera-bench-kmeans", BENCH);
}

static int run_rounds(bk_state *s)
{
    for (long r = 0; r < s->opt.run.rounds; r++) {
        printf("round %ld/%ld\n", r + 1, s->opt.run.rounds);
        s->plain[r] = run_plain(s);
        if (r == 0)
            memcpy(s->ref_final, s->centres, (size_t)s->opt.k * s->opt.dim * sizeof(double));
        printf("  plain loop   %8.3f ms/iteration\n", s->plain[r] * 1e3);
        fflush(stdout);
        s->tess[r] = run_tessera(s, r == 0);
        if (isnan(s->plain[r]) || isnan(s->tess[r])) return -1;
        printf("  tessera      %8.3f ms/iteration\n", s->tess[r] * 1e3);
        fflush(stdout);
    }
    return 0;
}

int bench_kmeans_main(int argc, char **argv)
{
    bk_state s;
    memset(&s, 0, sizeof s);
    s.err = NAN;
    int rc = parse_options(&s.opt, argc, argv);
    if (rc != 0) return rc > 0 ? 0 : 2;
    int status = 1;
    if (setup(&s) == 0) {
        printf("bench kmeans: %s points (N:DIM:K), %ld iterations, %ld rounds, %ld workers\n",
               s.spec, s.opt.run.iterations, s.opt.run.rounds, s.opt.run.workers);
        fflush(stdout);
        if (run_rounds(&s) == 0) {
            print_report(&s);
            status = s.opt.run.json_path && append_json(&s) != 0 ? 1 : 0;
            if (!(s.err <= BK_MAX_ERROR)) {
                app_error(BENCH, "tessera's centres differ from the plain loop's by %g", s.err);
                status = 1;
            }
        }
    }
    if (s.tmpdir[0]) bench_remove_tmpdir(s.tmpdir);
    kmeans_points_free(&s.pts);
    free(s.centres);
    free(s.ref_final);
    free(s.plain);
    free(s.tess);
    return status;
}
