/*
 * bench_matmul.c — `tessera bench matmul`: `tessera run matmul` against
 * ScaLAPACK's pdgemm at the same process count, and against one OpenBLAS
 * dgemm of the whole matrices on every core (the limit), Piccolo's
 * Figure 10.
 *
 * For every round, N and process count R, the systems run one after the
 * other (tessera, then pdgemm with each --nb, then dgemm; the peers first in
 * odd rounds), so a slow spell of this shared machine hits them alike; the
 * report gives medians over the rounds, and the median of the rounds'
 * ratios with a distribution-free confidence interval (bench_median_ci).  Each system is timed on the product alone,
 * inputs in memory: tessera's product_seconds (copying B to every rank and
 * the block products), the peer's pdgemm or dgemm call between barriers.
 * Every process gets cores/R threads (tessera workers, BLAS threads), at
 * least one; R above the core count is labelled as oversubscribed.
 * A peer whose checksum of C differs from tessera's fails the bench.
 */
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "bench_rounds.h"
#include "bench_tick.h"
#include "bench_util.h"
#include "common.h"

#define BM_NAME "bench matmul"
#define BM_MAX 8 /* sizes, rank counts, block sizes */
#define BM_MAX_ROUNDS 100

typedef struct bm_opts {
    long sizes[BM_MAX], ranks[BM_MAX], nbs[BM_MAX];
    int nsizes, nranks, nnbs;
    long rounds;
    const char *jsonl;
    const char *tmp_parent;
} bm_opts;

typedef struct bm_state {
    bm_opts o;
    char exe[PATH_MAX], peer[PATH_MAX], mpirun[PATH_MAX];
    char tmp[PATH_MAX];
    int cores;
    /* seconds[size][ranks][system][round]; system 0 tessera, 1.. pdgemm per nb, last dgemm */
    /* C's checksum per size from tessera's first run: every later run of
     * either system must match it */
    double sum[BM_MAX];
    double t[BM_MAX][BM_MAX][BM_MAX + 2][BM_MAX_ROUNDS];
} bm_state;

static void usage(FILE *out)
{
    fprintf(out,
            "usage: tessera bench matmul [--sizes LIST] [--ranks LIST] [--rounds K] [--nb LIST]\n"
            "                            [--json FILE] [--tmpdir DIR]\n"
            "  tessera run matmul against ScaLAPACK's pdgemm (tessera-scalapack-mm, built\n"
            "  with libscalapack-openmpi-dev) at the same process count, and one OpenBLAS\n"
            "  dgemm on all cores (the limit); alternating rounds, medians, the median of\n"
            "  the rounds' ratios with its confidence interval, and a verdict: met, tie\n"
            "  (the interval holds the goal) or MISS.\n"
            "  --sizes  matrix orders N (default 2000,3000,4000)\n"
            "  --ranks  process counts (default 1,2,4; above the core count: oversubscribed)\n"
            "  --rounds rounds (default 3)\n"
            "  --nb     pdgemm block sizes tried, the best median reported (default 64,128)\n"
            "  --json   append one JSON line per measurement to FILE\n");
}

static int parse_options(bm_opts *o, int argc, char **argv)
{
    memset(o, 0, sizeof *o);
    long sizes[] = {2000, 3000, 4000}, ranks[] = {1, 2, 4}, nbs[] = {64, 128};
    memcpy(o->sizes, sizes, sizeof sizes), o->nsizes = 3;
    memcpy(o->ranks, ranks, sizeof ranks), o->nranks = 3;
    memcpy(o->nbs, nbs, sizeof nbs), o->nnbs = 2;
    o->rounds = 3;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        if (strcmp(a, "--help") == 0 || strcmp(a, "-h") == 0) {
            usage(stdout);
            return 1;
        }
        int rc;
        if (bench_is_option(a, "--sizes"))
            rc = bench_parse_longs(BM_NAME, "sizes", bench_option_value(argc, argv, &i), 1, 20000,
                                   o->sizes, BM_MAX, &o->nsizes);
        else if (bench_is_option(a, "--ranks"))
            rc = bench_parse_longs(BM_NAME, "ranks", bench_option_value(argc, argv, &i), 1, 64,
                                   o->ranks, BM_MAX, &o->nranks);
        else if (bench_is_option(a, "--nb"))
            rc = bench_parse_longs(BM_NAME, "nb", bench_option_value(argc, argv, &i), 1, 4096,
                                   o->nbs, BM_MAX, &o->nnbs);
        else if (bench_is_option(a, "--rounds"))
            rc = app_parse_int(BM_NAME, "rounds", bench_option_value(argc, argv, &i), 1,
                               BM_MAX_ROUNDS, &o->rounds);
        else if (bench_is_option(a, "--json"))
            rc = !(o->jsonl = bench_option_value(argc, argv, &i));
        else if (bench_is_option(a, "--tmpdir"))
            rc = !(o->tmp_parent = bench_option_value(argc, argv, &i));
        else {
            app_error(BM_NAME, "unknown option '%s' (see --help)", a);
            return -1;
        }
        if (rc != 0) {
            if (rc > 0) app_error(BM_NAME, "option %s: missing value", a);
            return -1;
        }
    }
    return 0;
}

/* ---------------------------------------------------------------- runs */

static int threads_per_process(const bm_state *s, long ranks)
{
    long t = s->cores / ranks;
    return t > 0 ? (int)t : 1;
}

/* tessera run matmul; its product_seconds and checksum. */
static int run_tessera(bm_state *s, long n, long ranks, double *secs, double *sum)
{
    char nbuf[32], wbuf[32], npbuf[32], metrics[PATH_MAX + 16];
    snprintf(nbuf, sizeof nbuf, "%ld", n);
    snprintf(wbuf, sizeof wbuf, "%d", threads_per_process(s, ranks));
    snprintf(npbuf, sizeof npbuf, "%ld", ranks);
    snprintf(metrics, sizeof metrics, "%s/m.json", s->tmp);
    char *plain[] = {s->exe, "run",     "matmul",    "--n",   nbuf, "--workers",
                     wbuf,   "--quiet", "--metrics", metrics, NULL};
    char *mpi[] = {s->mpirun, "-np",       npbuf, "--oversubscribe", "--bind-to",
                   "none",    s->exe,      "run", "matmul",          "--n",
                   nbuf,      "--workers", wbuf,  "--quiet",         "--metrics",
                   metrics,   NULL};
    if (bench_run_reported(ranks > 1 ? mpi : plain, s->tmp, BM_NAME, "tessera run matmul") != 0)
        return -1;
    char *json = bench_read_text(metrics);
    int rc = json && bt_json_number(json, "product_seconds", secs) == 0 &&
                     bt_json_number(json, "checksum", sum) == 0
                 ? 0
                 : -1;
    free(json);
    if (rc != 0) app_error(BM_NAME, "%s: no product_seconds or checksum", metrics);
    return rc;
}

/* The peer: pdgemm with block nb under mpirun, or (nb 0) the dgemm limit. */
static int run_peer(bm_state *s, long n, long ranks, long nb, double *secs, double *sum)
{
    char nbuf[32], xbuf[32], npbuf[32], env[64];
    snprintf(nbuf, sizeof nbuf, "%ld", n);
    snprintf(npbuf, sizeof npbuf, "%ld", ranks);
    snprintf(xbuf, sizeof xbuf, "%ld", nb ? nb : (long)s->cores);
    snprintf(env, sizeof env, "OPENBLAS_NUM_THREADS=%d", threads_per_process(s, ranks));
    setenv("OPENBLAS_NUM_THREADS", env + strlen("OPENBLAS_NUM_THREADS="), 1);
    char *mpi[] = {s->mpirun,   "-np",    npbuf, "--oversubscribe",
                   "--bind-to", "none",   "-x",  "OPENBLAS_NUM_THREADS",
                   s->peer,     "pdgemm", nbuf,  xbuf,
                   NULL};
    char *alone[] = {s->peer, "dgemm", nbuf, xbuf, NULL};
    int rc = bench_run_reported(nb ? mpi : alone, s->tmp, BM_NAME, nb ? "pdgemm" : "dgemm");
    unsetenv("OPENBLAS_NUM_THREADS");
    if (rc != 0) return rc;
    char path[PATH_MAX + 16], line[256];
    snprintf(path, sizeof path, "%s/out.txt", s->tmp);
    bench_first_line(path, line, sizeof line);
    if (sscanf(line, "seconds %lf checksum %lf", secs, sum) == 2) return 0;
    app_error(BM_NAME, "the peer printed '%s', not 'seconds S checksum X'", line);
    return -1;
}

static void record(const bm_state *s, long n, long ranks, const char *system, long nb, int round,
                   double secs, double sum)
{
    printf("   round %d  N=%-5ld R=%ld  %-14s %8.3f s  %6.1f GFLOP/s\n", round + 1, n, ranks,
           system, secs, 2.0 * (double)n * n * n / secs / 1e9);
    fflush(stdout);
    if (!s->o.jsonl) return;
    app_metrics *m = bench_record_new("matmul");
    app_metrics_str(m, "system", system);
    app_metrics_int(m, "n", n);
    app_metrics_int(m, "ranks", ranks);
    app_metrics_int(m, "threads_per_process", threads_per_process(s, ranks));
    app_metrics_int(m, "cores", s->cores);
    app_metrics_bool(m, "oversubscribed", ranks > s->cores);
    if (nb) app_metrics_int(m, "nb", nb);
    app_metrics_int(m, "round", round + 1);
    app_metrics_num(m, "seconds", secs);
    app_metrics_num(m, "gflops", 2.0 * (double)n * n * n / secs / 1e9);
    app_metrics_num(m, "checksum", sum);
    bench_record_write(m, s->o.jsonl, BM_NAME);
}

/* The peer's C must be tessera's up to the order of additions. */
static int same_product(long n, double a, double b, const char *system)
{
    if (fabs(a - b) <= 1e-9 * (double)n * (double)n) return 0;
    app_error(BM_NAME, "N=%ld: %s's checksum %.17g differs from tessera's %.17g", n, system, b, a);
    return -1;
}

/* tessera at N = n on R ranks, into slot [i][r] of this round. */
static int round_tessera(bm_state *s, int i, int r, int round)
{
    long n = s->o.sizes[i], R = s->o.ranks[r];
    double secs, sum;
    if (run_tessera(s, n, R, &secs, &sum) != 0) return -1;
    if (round == 0 && r == 0) s->sum[i] = sum;
    else if (same_product(n, s->sum[i], sum, "tessera (again)") != 0) return -1;
    s->t[i][r][0][round] = secs;
    record(s, n, R, "tessera", 0, round, secs, sum);
    return 0;
}

/* pdgemm at every --nb (and dgemm, at the first rank count), each checked
 * against tessera's checksum. */
static int round_peers(bm_state *s, int i, int r, int round)
{
    const bm_opts *o = &s->o;
    long n = o->sizes[i], R = o->ranks[r];
    double secs, sum, tsum = s->sum[i];
    for (int b = 0; s->peer[0] && b < o->nnbs; b++) {
        char name[32];
        snprintf(name, sizeof name, "pdgemm nb=%ld", o->nbs[b]);
        if (run_peer(s, n, R, o->nbs[b], &secs, &sum) != 0 || same_product(n, tsum, sum, name) != 0)
            return -1;
        s->t[i][r][1 + b][round] = secs;
        record(s, n, R, name, o->nbs[b], round, secs, sum);
    }
    if (s->peer[0] && r == 0) {
        if (run_peer(s, n, 1, 0, &secs, &sum) != 0 || same_product(n, tsum, sum, "dgemm"))
            return -1;
        s->t[i][0][1 + o->nnbs][round] = secs;
        record(s, n, 1, "dgemm", 0, round, secs, sum);
    }
    return 0;
}

/* Odd rounds run the peers first, so that neither system always runs on a
 * machine the other has just warmed (or heated); round 0 runs tessera first
 * for the checksum. */
static int one_round(void *arg, int round)
{
    bm_state *s = arg;
    const bm_opts *o = &s->o;
    for (int i = 0; i < o->nsizes; i++)
        for (int r = 0; r < o->nranks; r++) {
            int rc;
            if (round % 2 == 0) rc = round_tessera(s, i, r, round) || round_peers(s, i, r, round);
            else rc = round_peers(s, i, r, round) || round_tessera(s, i, r, round);
            if (rc != 0) return -1;
        }
    return 0;
}

/* ---------------------------------------------------------------- report */

/* pdgemm's best block size at [i][r] by its median: its index among the
 * systems (0 when there is no peer) and that median. */
static int best_peer(const bm_state *s, int i, int r, double *median)
{
    int best = 0, rounds = (int)s->o.rounds;
    *median = 0;
    for (int b = 0; s->peer[0] && b < s->o.nnbs; b++) {
        double m = bench_median(s->t[i][r][1 + b], rounds);
        if (best == 0 || m < *median) *median = m, best = 1 + b;
    }
    return best;
}

/* One line of the report: medians, then the median of the rounds' ratios
 * pdgemm/tessera with its confidence interval and the verdict. */
static void report_line(const bm_state *s, int i, int r, double limit)
{
    const bm_opts *o = &s->o;
    int rounds = (int)o->rounds;
    double tess = bench_median(s->t[i][r][0], rounds), peer;
    int b = best_peer(s, i, r, &peer);
    printf("   %-5ld %ld  %8.3f", o->sizes[i], o->ranks[r], tess);
    if (b > 0) {
        bench_ratio q = bench_median_ratio(s->t[i][r][b], s->t[i][r][0], rounds);
        printf("  %8.3f (%4ld)   %5.3fx [%5.3f, %5.3f]  %-4s   %5.0f%%", peer, o->nbs[b - 1],
               q.median, q.lo, q.hi, bench_verdict(q.median, q.lo, q.hi, 1.0, 0),
               100.0 * limit / tess);
    } else printf("  (no peer)");
    printf("%s\n", o->ranks[r] > s->cores ? "   oversubscribed" : "");
}

static void report(const void *arg)
{
    const bm_state *s = arg;
    const bm_opts *o = &s->o;
    int rounds = (int)o->rounds;
    double coverage;
    bench_median_ci_rank(rounds, &coverage);
    printf("\nmedians over %d rounds (product only; %d cores; threads per process = cores/R)\n"
           "pdgemm/tessera: the median of the rounds' ratios, [its %.0f%% confidence interval];\n"
           "goal >= 1.00: met, tie (the interval holds 1: the rounds cannot tell them apart) or "
           "MISS\n",
           rounds, s->cores, 100 * coverage);
    printf("   N     R  tessera s  pdgemm s (nb)   pdgemm/tessera          goal   "
           "tessera/dgemm-limit\n");
    for (int i = 0; i < o->nsizes; i++) {
        double limit = s->peer[0] ? bench_median(s->t[i][0][1 + o->nnbs], rounds) : 0;
        for (int r = 0; r < o->nranks; r++) report_line(s, i, r, limit);
    }
}

/* ---------------------------------------------------------------- main */

static int locate(bm_state *s)
{
    if (bench_self_exe(BM_NAME, s->exe, sizeof s->exe) != 0) return -1;
    if (bench_sibling("tessera-scalapack-mm", s->peer, sizeof s->peer) != 0) {
        printf("ScaLAPACK peer: skipped (%s not built: install libscalapack-openmpi-dev and "
               "rebuild)\n",
               s->peer);
        s->peer[0] = '\0';
    }
    long maxr = 1;
    for (int r = 0; r < s->o.nranks; r++) maxr = s->o.ranks[r] > maxr ? s->o.ranks[r] : maxr;
    if ((maxr > 1 || s->peer[0]) && bench_find_mpirun(s->mpirun, sizeof s->mpirun, 0) != NULL) {
        app_error(BM_NAME, "needs MPI and mpirun for more than one rank and for pdgemm");
        return -1;
    }
    return 0;
}

static int parse(void *arg, int argc, char **argv)
{
    return parse_options(&((bm_state *)arg)->o, argc, argv);
}

static long start(void *arg)
{
    bm_state *s = arg;
    s->cores = (int)sysconf(_SC_NPROCESSORS_ONLN);
    if (s->cores < 1) s->cores = 1;
    if (locate(s) != 0 ||
        bench_make_tmpdir(s->tmp, sizeof s->tmp, s->o.tmp_parent, "bench-matmul", BM_NAME) != 0)
        return -1;
    printf("bench matmul: %ld round(s), %d cores; tessera vs pdgemm (ScaLAPACK) vs dgemm\n",
           s->o.rounds, s->cores);
    return s->o.rounds;
}

static void finish(void *arg) { bench_remove_tmpdir(((bm_state *)arg)->tmp); }

int bench_matmul_main(int argc, char **argv)
{
    static const bench_rounds_def def = {sizeof(bm_state), parse, start, one_round, report, finish};
    return bench_rounds_main(&def, argc, argv);
}
