/*
 * bench_crawl.c — `tessera bench crawl`: Piccolo's Figure 14, crawler
 * throughput (pages/s and MB/s) against the number of fetchers per worker
 * and of processes, crawling `tessera serve-web` on the loopback address.
 *
 * One server serves S sites for the whole bench; every run crawls all of
 * them from their "/" (the seeds file lists every site) into a fresh
 * output directory, with R processes of one worker each (embedded for
 * R = 1, mpirun otherwise) and F transfers per worker.  Rounds alternate
 * over every (R, F); the report gives medians and the ratio to F = 1,
 * R = 1.  With --compare-rounds every point is also crawled with --rounds
 * (the barrier-round crawler), the two in alternating order, and the report
 * adds the median of the per-round ratios long-running / rounds.  The
 * server shares this machine's cores with the crawler, and the
 * per-site rate caps the throughput at S * rate pages/s: both are printed,
 * so no figure is mistaken for a crawl of the real web.
 */
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "bench_tick.h"
#include "bench_util.h"
#include "common.h"

#define BC_NAME "bench crawl"
#define BC_MAX 8
#define BC_MAX_ROUNDS 20

typedef struct bc_opts {
    long sites, pages, port, rounds;
    double rate;
    const char *fetchers_text, *ranks_text, *jsonl, *tmp_parent;
    long fetchers[BC_MAX], ranks[BC_MAX];
    int nfetchers, nranks;
    int compare; /* --compare-rounds */
} bc_opts;

typedef struct bc_state {
    bc_opts o;
    char exe[PATH_MAX], mpirun[PATH_MAX], tmp[PATH_MAX];
    pid_t server;
    double pages[BC_MAX][BC_MAX][BC_MAX_ROUNDS], mb[BC_MAX][BC_MAX][BC_MAX_ROUNDS];
    /* --compare-rounds: the same with --rounds */
    double rpages[BC_MAX][BC_MAX][BC_MAX_ROUNDS], rmb[BC_MAX][BC_MAX][BC_MAX_ROUNDS];
} bc_state;

static const char bc_usage[] =
    "usage: tessera bench crawl [--sites S] [--pages P] [--rate R] [--fetchers LIST]\n"
    "                           [--ranks LIST] [--rounds K] [--port PORT] [--json FILE]\n"
    "                           [--tmpdir DIR] [--compare-rounds]\n"
    "  Crawler throughput against fetchers per worker and processes (one worker\n"
    "  each), crawling `tessera serve-web` on 127.0.0.1: S sites (default 16) of P\n"
    "  pages (default 150), R fetches per second per site (default 100), fetchers\n"
    "  1,2,4,8,16, processes 1,2, 3 alternating rounds; medians and ratios to\n"
    "  one fetcher on one process.  The server shares the machine with the crawler.\n"
    "  --compare-rounds also crawls every point with --rounds (barrier rounds), in\n"
    "  alternating order, and reports the median ratio long-running / rounds.\n";

static int parse(bc_opts *o, int argc, char **argv)
{
    o->sites = 16, o->pages = 150, o->rounds = 3, o->port = 21000, o->rate = 100;
    o->fetchers_text = "1,2,4,8,16", o->ranks_text = "1,2";
    const app_opt opts[] = {
        {"sites", APP_OPT_INT, &o->sites, 1, 500, 0, NULL, NULL},
        {"pages", APP_OPT_INT, &o->pages, 1, 100000, 0, NULL, NULL},
        {"rate", APP_OPT_DOUBLE, &o->rate, 0.1, 1000, 0, NULL, NULL},
        {"rounds", APP_OPT_INT, &o->rounds, 1, BC_MAX_ROUNDS, 0, NULL, NULL},
        {"port", APP_OPT_INT, &o->port, 1024, 60000, 0, NULL, NULL},
        {"fetchers", APP_OPT_STRING, &o->fetchers_text, 0, 0, 0, NULL, NULL},
        {"ranks", APP_OPT_STRING, &o->ranks_text, 0, 0, 0, NULL, NULL},
        {"json", APP_OPT_STRING, &o->jsonl, 0, 0, 0, NULL, NULL},
        {"tmpdir", APP_OPT_STRING, &o->tmp_parent, 0, 0, 0, NULL, NULL},
        {"compare-rounds", APP_OPT_FLAG, &o->compare, 0, 0, 1, NULL, NULL},
    };
    int rc =
        app_parse_options(BC_NAME, bc_usage, argc, argv, opts, (int)(sizeof opts / sizeof *opts));
    if (rc != 0) return rc;
    if (bench_parse_longs(BC_NAME, "fetchers", o->fetchers_text, 1, 1024, o->fetchers, BC_MAX,
                          &o->nfetchers) != 0 ||
        bench_parse_longs(BC_NAME, "ranks", o->ranks_text, 1, 64, o->ranks, BC_MAX, &o->nranks) !=
            0)
        return -1;
    return 0;
}

/* ---------------------------------------------------------------- the server */

static int start_server(bc_state *s)
{
    char sites[16], pages[16], port[16], out[PATH_MAX + 16], err[PATH_MAX + 16];
    snprintf(sites, sizeof sites, "%ld", s->o.sites);
    snprintf(pages, sizeof pages, "%ld", s->o.pages);
    snprintf(port, sizeof port, "%ld", s->o.port);
    snprintf(out, sizeof out, "%s/server.out", s->tmp);
    snprintf(err, sizeof err, "%s/server.err", s->tmp);
    char *argv[] = {s->exe, "serve-web", "--sites", sites, "--pages", pages, "--port", port, NULL};
    if (bench_spawn_logged(argv, out, err, &s->server) != 0) return -1;
    for (int i = 0; i < 100; i++) {
        char line[256];
        bench_first_line(out, line, sizeof line);
        if (strncmp(line, "serve-web:", 10) == 0) return 0;
        if (waitpid(s->server, NULL, WNOHANG) == s->server) break;
        usleep(50000);
    }
    char line[256];
    bench_first_line(err, line, sizeof line);
    app_error(BC_NAME, "serve-web did not start: %s", line[0] ? line : "no message");
    return -1;
}

static void stop_server(bc_state *s)
{
    if (s->server <= 0) return;
    kill(s->server, SIGTERM);
    waitpid(s->server, NULL, 0);
    s->server = 0;
}

static int write_seeds(const bc_state *s)
{
    char path[PATH_MAX + 16];
    snprintf(path, sizeof path, "%s/seeds.txt", s->tmp);
    FILE *fp = fopen(path, "w");
    if (fp == NULL) return -1;
    for (long i = 0; i < s->o.sites; i++) fprintf(fp, "http://127.0.0.1:%ld/\n", s->o.port + i);
    return fclose(fp) == 0 ? 0 : -1;
}

/* ---------------------------------------------------------------- runs */

static int run_one(bc_state *s, long ranks, long fetchers, int rounds, double *pages, double *mb)
{
    char np[16], f[16], rate[32], seeds[PATH_MAX + 16], out[PATH_MAX + 16], metrics[PATH_MAX + 16];
    snprintf(np, sizeof np, "%ld", ranks);
    snprintf(f, sizeof f, "%ld", fetchers);
    snprintf(rate, sizeof rate, "%g", s->o.rate);
    snprintf(seeds, sizeof seeds, "%s/seeds.txt", s->tmp);
    snprintf(out, sizeof out, "%s/crawl", s->tmp);
    snprintf(metrics, sizeof metrics, "%s/m.json", s->tmp);
    char *argv[32];
    int n = 0;
    if (ranks > 1) n += bench_mpirun_argv(argv, s->mpirun, np, "none");
    const char *run[] = {
        s->exe,      "run",      "crawl", "--workers",  "1", "--quiet",         "--seeds",
        seeds,       "--output", out,     "--fetchers", f,   "--per-site-rate", rate,
        "--metrics", metrics};
    for (size_t i = 0; i < sizeof run / sizeof *run; i++) argv[n++] = (char *)run[i];
    argv[n++] = "--allow-addresses"; /* the web is on loopback, refused by default */
    argv[n++] = "127.0.0.1";
    if (rounds) argv[n++] = "--rounds";
    argv[n] = NULL;
    char label[64];
    snprintf(label, sizeof label, "crawl with R=%ld F=%ld%s", ranks, fetchers,
             rounds ? " --rounds" : "");
    bench_remove_tmpdir(out);
    int rc = bench_run_reported(argv, s->tmp, BC_NAME, label);
    char *json = rc == 0 ? bench_read_text(metrics) : NULL;
    if (rc == 0)
        rc = json && bt_json_number(json, "pages_per_second", pages) == 0 &&
                     bt_json_number(json, "megabytes_per_second", mb) == 0
                 ? 0
                 : -1;
    free(json);
    bench_remove_tmpdir(out);
    return rc;
}

static void record(const bc_state *s, long ranks, long fetchers, int rounds, int round,
                   double pages, double mb)
{
    printf("   round %d  R=%ld F=%-3ld %8.1f pages/s %7.2f MB/s%s\n", round + 1, ranks, fetchers,
           pages, mb, rounds ? "  (--rounds)" : "");
    fflush(stdout);
    if (!s->o.jsonl) return;
    app_metrics *m = bench_record_new("crawl");
    app_metrics_int(m, "ranks", ranks);
    app_metrics_int(m, "fetchers", fetchers);
    app_metrics_int(m, "sites", s->o.sites);
    app_metrics_int(m, "pages_per_site", s->o.pages);
    app_metrics_num(m, "per_site_rate", s->o.rate);
    app_metrics_int(m, "round", round + 1);
    app_metrics_str(m, "mode", rounds ? "rounds" : "long-running");
    app_metrics_num(m, "pages_per_second", pages);
    app_metrics_num(m, "megabytes_per_second", mb);
    app_metrics_str(m, "web", "loopback serve-web, sharing the cores");
    bench_record_write(m, s->o.jsonl, BC_NAME);
}

/* Long-running against --rounds: medians, and the median of the ratios of
 * the pairs run back to back (the fairer figure on a shared machine). */
static void report_compare(const bc_state *s)
{
    int k = (int)s->o.rounds;
    printf("\nlong-running kernels against barrier rounds (--rounds), same points, alternating\n");
    printf("  %-4s %-9s %14s %14s %20s\n", "R", "fetchers", "long pages/s", "rounds pages/s",
           "long/rounds (median)");
    for (int r = 0; r < s->o.nranks; r++)
        for (int f = 0; f < s->o.nfetchers; f++) {
            double ratio[BC_MAX_ROUNDS];
            for (int i = 0; i < k; i++)
                ratio[i] = s->rpages[r][f][i] > 0 ? s->pages[r][f][i] / s->rpages[r][f][i] : 0;
            printf("  %-4ld %-9ld %14.1f %14.1f %19.2fx\n", s->o.ranks[r], s->o.fetchers[f],
                   bench_median(s->pages[r][f], k), bench_median(s->rpages[r][f], k),
                   bench_median(ratio, k));
        }
}

static void report(const bc_state *s)
{
    int k = (int)s->o.rounds;
    double base = bench_median(s->pages[0][0], k);
    printf("\nFigure 14 (loopback web: %ld sites x %ld pages, at most %g fetches/s per site,\n"
           "so at most %.0f pages/s; the server shares the cores; medians of %d rounds)\n",
           s->o.sites, s->o.pages + 1, s->o.rate, s->o.rate * (double)s->o.sites, k);
    printf("  %-4s %-9s %10s %9s %12s\n", "R", "fetchers", "pages/s", "MB/s", "vs R=1 F=1");
    for (int r = 0; r < s->o.nranks; r++)
        for (int f = 0; f < s->o.nfetchers; f++) {
            double p = bench_median(s->pages[r][f], k), mb = bench_median(s->mb[r][f], k);
            printf("  %-4ld %-9ld %10.1f %9.2f %11.2fx\n", s->o.ranks[r], s->o.fetchers[f], p, mb,
                   base > 0 ? p / base : 0.0);
        }
    if (s->o.compare) report_compare(s);
}

static int run_all(bc_state *s)
{
    for (int round = 0; round < s->o.rounds; round++)
        for (int r = 0; r < s->o.nranks; r++)
            for (int f = 0; f < s->o.nfetchers; f++)
                for (int i = 0; i < 1 + s->o.compare; i++) {
                    /* with --compare-rounds the order alternates per round */
                    int rounds = s->o.compare && (i + round) % 2 == 1;
                    double pages, mb;
                    if (run_one(s, s->o.ranks[r], s->o.fetchers[f], rounds, &pages, &mb) != 0)
                        return -1;
                    if (rounds) s->rpages[r][f][round] = pages, s->rmb[r][f][round] = mb;
                    else s->pages[r][f][round] = pages, s->mb[r][f][round] = mb;
                    record(s, s->o.ranks[r], s->o.fetchers[f], rounds, round, pages, mb);
                }
    report(s);
    return 0;
}

int bench_crawl_main(int argc, char **argv)
{
    bc_state *s = calloc(1, sizeof *s);
    if (s == NULL) return 1;
    int rc = parse(&s->o, argc, argv);
    if (rc != 0) {
        free(s);
        return rc > 0 ? 0 : 2;
    }
    int need_mpi = 0;
    for (int r = 0; r < s->o.nranks; r++) need_mpi |= s->o.ranks[r] > 1;
    if (need_mpi && bench_find_mpirun(s->mpirun, sizeof s->mpirun, 0) != NULL) {
        app_error(BC_NAME, "option --ranks: more than one process needs MPI and mpirun");
        free(s);
        return 2;
    }
    rc = bench_sibling("tessera", s->exe, sizeof s->exe) == 0 ? 0 : -1;
    if (rc != 0) app_error(BC_NAME, "cannot find the tessera executable (%s)", s->exe);
    if (rc == 0)
        rc = bench_make_tmpdir(s->tmp, sizeof s->tmp, s->o.tmp_parent, "tessera-crawl", BC_NAME);
    if (rc == 0) rc = write_seeds(s);
    if (rc == 0) rc = start_server(s);
    if (rc == 0) rc = run_all(s);
    stop_server(s);
    bench_remove_tmpdir(s->tmp);
    free(s);
    return rc == 0 ? 0 : 1;
}
