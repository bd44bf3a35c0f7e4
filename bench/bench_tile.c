/*
 * bench_tile.c — `tessera bench tile`: the APC+ paper's parameter sweep on
 * its three applications (Black-Scholes, SAR backprojection, slide
 * texture).  For each configuration (application x processor mix x CCR, the
 * Black-Scholes --iterations knob) every fixed tile size from the smallest
 * to the largest power of two below half the area runs under dd, static and
 * ws, and apc once; each run is a child `tessera run APP ... --stats FILE`,
 * and its `seconds` (run start to last output gathered) is the figure.
 * Rounds of fixed order, so slow phases of a shared machine hit every
 * policy alike.  Then: APC's overhead against a plain C loop calling the
 * same kernel over the whole array (alternating rounds, median ratio), 2
 * ranks against 1, weak and strong scaling (bench_tile_scale.c), the
 * StarPU peer and the centralised APC against APC+ (bench_tile_central.c).
 * Figures are never pass/fail; results go to a JSON Lines file.
 */
#include <math.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#include "blackscholes/blackscholes.h"
#include "bench_tile.h"
#include "csr_pagerank.h" /* bench_median */
#include "bench_rounds.h"
#include "bench_util.h"
#include "common.h"

const char *const bt_tile_app_names[BT_APPS] = {"blackscholes", "sar", "texture"};

static void usage(FILE *out)
{
    fprintf(out,
            "usage: tessera bench tile [--apps LIST] [--options N] [--mixes LIST] [--ccr LIST]\n"
            "         [--rounds R] [--confirm R] [--min-size C] [--policies LIST]\n"
            "         [--out FILE.jsonl] [--parts LIST]\n"
            "\n"
            "The APC+ sweep: per application, processor mix and CCR (Black-Scholes'\n"
            "--iterations), every fixed tile size from the smallest up in powers of 2 under\n"
            "dd, static and ws, and apc; prints best fixed size and time, worst, APC and\n"
            "APC/best; then APC and the best fixed size again, alternating (--confirm), for\n"
            "a ratio free of the sweep's selection bias.  Then APC's overhead against a\n"
            "plain loop over the same kernel, 2 ranks against 1, weak scaling (1, 2, 4\n"
            "ranks, 1 processor each) and strong scaling of the CCR application under\n"
            "mpirun.  Each run is a child process; rounds alternate.\n"
            "\n"
            "  --apps LIST      blackscholes,sar,texture (default all three); problem\n"
            "                   sizes: N options; sar --gen 256:1024:512:512; texture a\n"
            "                   generated 8192x4096 slide, --block 32\n"
            "  --options N      Black-Scholes options per run (default 1000000)\n"
            "  --mixes LIST     ';'-separated processor specs of the sweep (default\n"
            "                   'cpu*N;cpu*(N-1)+cpu@0.25;cpu+opencl' for N cores)\n"
            "  --ccr LIST       iterations per option (default 1,10,75,250)\n"
            "  --rounds R       repetitions of everything (default 1; medians reported)\n"
            "  --confirm R      alternating rounds of APC against the best fixed size per\n"
            "                   configuration (default 3; 0: none).  The best of a sweep\n"
            "                   is the luckiest of dozens of noisy runs; the confirmed\n"
            "                   ratio compares like with like\n"
            "  --min-size C     smallest fixed Black-Scholes tile (default 1024; sar 256\n"
            "                   pixels, texture 4 blocks)\n"
            "  --policies LIST  fixed-size policies (default dd,static,ws)\n"
            "  --out FILE       JSON Lines results (default bench-tile.jsonl)\n"
            "  --parts LIST     sweep,overhead,scaling,weak,strong,starpu,mrmpi,central\n"
            "                   (default all).  central: --policy capc (the centralised\n"
            "                   APC) against apc at 2 and 3 ranks, --confirm alternating\n"
            "                   rounds, with the time split.  weak and strong run up to\n"
            "                   4 ranks (oversubscribed\n"
            "                   where there are fewer cores; the output says so).  The\n"
            "                   peers are built when their packages are there: StarPU\n"
            "                   (libstarpu-dev; dmda, best block count; every app,\n"
            "                   Black-Scholes at K=75; on cpu*N and cpu*(N-1)+cpu@0.25,\n"
            "                   whatever --mixes says) and MR-MPI\n"
            "                   (libmrmpi-dev; 1, 2, 4 ranks, K=1 and 75)\n"
            "  Plot with: python3 scripts/plot_tile.py FILE.jsonl DIR (scripts/deps.sh plot)\n");
}

static const char *const bt_part_names[] = {"sweep",  "overhead", "scaling", "weak", "strong",
                                            "starpu", "mrmpi",    "central", NULL};
static const char *const bt_policy_names[] = {"dd", "static", "ws", NULL};
static const char *const bt_app_list[] = {"blackscholes", "sar", "texture", NULL};

/* The lists checked as they are given, so a typo fails at once instead of
 * after minutes of runs (or, for --parts, running nothing). */
static int check_lists(const bt_opts *o)
{
    unsigned mask;
    long ccr[64];
    int n;
    if (bench_parse_names("bench tile", "apps", o->apps, bt_app_list, &mask) != 0) return -1;
    if (bench_parse_names("bench tile", "parts", o->parts, bt_part_names, &mask) != 0) return -1;
    if (bench_parse_names("bench tile", "policies", o->policies, bt_policy_names, &mask) != 0)
        return -1;
    return bench_parse_longs("bench tile", "ccr", o->ccrs, 1, 1000000, ccr, 64, &n);
}

static int parse(bt_opts *o, int argc, char **argv)
{
    *o = (bt_opts){.options = 1000000,
                   .rounds = 1,
                   .confirm = 3,
                   .min_size = 1024,
                   .ccrs = "1,10,75,250",
                   .out = "bench-tile.jsonl",
                   .policies = "dd,static,ws",
                   .apps = "blackscholes,sar,texture",
                   .parts = "sweep,overhead,scaling,weak,strong,starpu,mrmpi,central"};
    static const char *const text_opts[] = {"--mixes",    "--ccr",   "--out",
                                            "--policies", "--parts", "--apps"};
    const char **text_dest[] = {&o->mixes, &o->ccrs, &o->out, &o->policies, &o->parts, &o->apps};
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i], *v = NULL, **text = NULL;
        long *num = NULL;
        if (strcmp(a, "--help") == 0 || strcmp(a, "-h") == 0) {
            usage(stdout);
            return 1;
        }
        if (bench_is_option(a, "--options")) num = &o->options;
        else if (bench_is_option(a, "--rounds")) num = &o->rounds;
        else if (bench_is_option(a, "--min-size")) num = &o->min_size;
        else if (bench_is_option(a, "--confirm")) num = &o->confirm;
        for (int k = 0; k < 6 && num == NULL && text == NULL; k++)
            if (bench_is_option(a, text_opts[k])) text = text_dest[k];
        if (num == NULL && text == NULL) {
            app_error("bench tile", "unknown option '%s' (see --help)", a);
            return -1;
        }
        if (!(v = bench_option_value(argc, argv, &i))) {
            app_error("bench tile", "option %s needs a value (see --help)", a);
            return -1;
        }
        if (text != NULL) *text = v;
        else if (app_parse_int("bench tile", a, v, num == &o->confirm ? 0 : 1, 1L << 36, num) != 0)
            return -1;
    }
    return check_lists(o) == 0 && bench_check_appendable("bench tile", "out", o->out) == 0 ? 0 : -1;
}

/* ---------------------------------------------------------------- one run */

double bt_run_child(bt_opts *o, bt_app app, int np, char **extra, int nextra, char *stats_copy,
                    size_t cap)
{
    char stats[4200], out[4200], err[4200], npbuf[16];
    snprintf(stats, sizeof stats, "%s/stats.json", o->tmp);
    snprintf(out, sizeof out, "%s/child.out", o->tmp);
    snprintf(err, sizeof err, "%s/child.err", o->tmp);
    char *argv[64];
    int n = 0;
    if (np > 0) {
        snprintf(npbuf, sizeof npbuf, "%d", np);
        n += bench_mpirun_argv(argv, o->mpirun, npbuf, "none");
    }
    argv[n++] = o->self;
    argv[n++] = "run";
    argv[n++] = (char *)bt_tile_app_names[app];
    argv[n++] = "--quiet";
    argv[n++] = "--stats";
    argv[n++] = stats;
    for (int k = 0; k < nextra && n < 62; k++) argv[n++] = extra[k];
    argv[n] = NULL;
    unlink(stats);
    int ok = bench_run_logged(argv, out, err) == 0;
    char *text = bench_read_text(stats);
    if (!ok || text == NULL) {
        char line[300];
        bench_first_line(err, line, sizeof line);
        fprintf(stderr, "tessera bench tile: a run failed: %s\n", line);
        free(text);
        return -1;
    }
    const char *s = strstr(text, "\"seconds\":");
    double secs = s ? strtod(s + 10, NULL) : -1;
    for (char *t = text; *t; t++) /* one JSON Lines record: no newlines inside */
        if (*t == '\n') *t = ' ';
    if (stats_copy) snprintf(stats_copy, cap, "%s", text);
    free(text);
    return secs;
}

void bt_record(bt_opts *o, bt_app app, const char *mix, long ccr, int ranks, const char *policy,
               long size, double secs, const char *stats)
{
    FILE *fp = fopen(o->out, "a");
    if (fp == NULL) return;
    fprintf(fp,
            "{\"bench\":\"tile\",\"app\":\"%s\",\"options\":%ld,\"mix\":\"%s\",\"ccr\":%ld,"
            "\"ranks\":%d,\"policy\":\"%s\",\"size\":%ld,\"seconds\":%.6f,\"stats\":%s}\n",
            bt_tile_app_names[app], o->options, mix, ccr, ranks, policy, size, secs,
            stats && *stats ? stats : "null");
    fclose(fp);
}

int bt_find_mpirun(bt_opts *o, const char *part)
{
    if (bench_find_mpirun(o->mpirun, sizeof o->mpirun, 0) != NULL) {
        printf("%s: skipped (no mpirun or a build without MPI)\n", part);
        return -1;
    }
    if (getuid() == 0) { /* OpenMPI refuses root unless told */
        setenv("OMPI_ALLOW_RUN_AS_ROOT", "1", 0);
        setenv("OMPI_ALLOW_RUN_AS_ROOT_CONFIRM", "1", 0);
    }
    static int said;
    const char *copy = bench_mpi_single_copy();
    if (!said++) printf("MPI single-copy transport between ranks: %s\n", copy);
    return 0;
}

/* ---------------------------------------------------------------- problems */

/* A generated slide of w x h pixels in o->tmp (made by a child run once). */
static int slide_file(bt_opts *o, long w, long h, char *path, size_t cap)
{
    snprintf(path, cap, "%s/slide-%ldx%ld.pgm", o->tmp, w, h);
    if (access(path, R_OK) == 0) return 0;
    char gen[64], block[32], out[4200], err[4200];
    snprintf(gen, sizeof gen, "%ld:%ld:1", w, h);
    long side = w < h ? w : h; /* few blocks: the slide is the point */
    snprintf(block, sizeof block, "%ld", side < 4096 ? side : 4096);
    snprintf(out, sizeof out, "%s/gen.out", o->tmp);
    snprintf(err, sizeof err, "%s/gen.err", o->tmp);
    char *argv[] = {o->self,   "run", "texture",      "--quiet", "--gen", gen,
                    "--block", block, "--save-image", path,      NULL};
    return bench_run_logged(argv, out, err);
}

long bt_app_args(bt_opts *o, bt_app app, int ranks, long ccr, char **argv, int *n, char *buf,
                 size_t cap)
{
    if (app == BT_BS) {
        int len = snprintf(buf, cap, "%ld", o->options * ranks);
        snprintf(buf + len + 1, cap - (size_t)len - 1, "%ld", ccr > 0 ? ccr : 1);
        argv[(*n)++] = "--options";
        argv[(*n)++] = buf;
        argv[(*n)++] = "--iterations";
        argv[(*n)++] = buf + len + 1;
        return o->options * ranks;
    }
    if (app == BT_SAR) { /* 256 pulses of 1024 bins; the image grows downwards */
        snprintf(buf, cap, "256:1024:512:%d:1", 512 * ranks);
        argv[(*n)++] = "--gen";
        argv[(*n)++] = buf;
        return 512L * 512 * ranks;
    }
    long w = 8192, h = 4096L * ranks; /* blocks of 32: 256 x 128 per rank */
    if (slide_file(o, w, h, buf, cap) != 0) return -1;
    argv[(*n)++] = "--image";
    argv[(*n)++] = buf;
    return (w / 32) * (h / 32);
}

/* ---------------------------------------------------------------- sweep */

typedef struct cell {
    double best, worst, apc;
    double confirmed; /* median of APC / best fixed over the --confirm rounds; 0: none */
    long best_size;
    char best_policy[16];
} cell;

/* A run of `app` on `mix` under `policy` (with its size when > 0): the
 * arguments, and the strings they point into. */
typedef struct run_args {
    char *extra[16];
    int n;
    char pol[64], buf[4300];
} run_args;

static int policy_args(bt_opts *o, bt_app app, const char *mix, long ccr, const char *policy,
                       long size, run_args *a)
{
    if (size > 0) snprintf(a->pol, sizeof a->pol, "%s:%ld", policy, size);
    else snprintf(a->pol, sizeof a->pol, "%s", policy);
    a->n = 0;
    if (bt_app_args(o, app, 1, ccr, a->extra, &a->n, a->buf, sizeof a->buf) < 0) return -1;
    a->extra[a->n++] = "--processors";
    a->extra[a->n++] = (char *)mix;
    a->extra[a->n++] = "--policy";
    a->extra[a->n++] = a->pol;
    return 0;
}

static double timed(bt_opts *o, bt_app app, const char *mix, long ccr, const char *policy,
                    long size)
{
    run_args a;
    if (policy_args(o, app, mix, ccr, policy, size, &a) != 0) return -1;
    static char stats[1 << 16];
    double rounds[64];
    int k = 0;
    for (long r = 0; r < o->rounds && r < 64; r++) {
        double s = bt_run_child(o, app, 0, a.extra, a.n, stats, sizeof stats);
        if (s < 0) return -1;
        bt_record(o, app, mix, ccr, 1, policy, size, s, stats);
        rounds[k++] = s;
    }
    return bench_median(rounds, k);
}

/* One run of a configuration: its seconds or -1 (recorded as bench
 * "tile-confirm", which the sweep's figures leave out). */
static double confirm_run(bt_opts *o, bt_app app, const char *mix, long ccr, const char *policy,
                          long size)
{
    run_args a;
    if (policy_args(o, app, mix, ccr, policy, size, &a) != 0) return -1;
    double s = bt_run_child(o, app, 0, a.extra, a.n, NULL, 0);
    FILE *fp = s > 0 ? fopen(o->out, "a") : NULL;
    if (fp != NULL) {
        fprintf(fp,
                "{\"bench\":\"tile-confirm\",\"app\":\"%s\",\"mix\":\"%s\",\"ccr\":%ld,"
                "\"policy\":\"%s\",\"size\":%ld,\"seconds\":%.6f}\n",
                bt_tile_app_names[app], mix, ccr, policy, size, s);
        fclose(fp);
    }
    return s;
}

typedef struct confirm_pair {
    bt_opts *o;
    bt_app app;
    const char *mix;
    long ccr;
    const cell *c;
} confirm_pair;

/* Side 0: APC; side 1: the sweep's best configuration. */
static double confirm_side(void *arg, int side)
{
    const confirm_pair *p = arg;
    if (side == 0) return confirm_run(p->o, p->app, p->mix, p->ccr, "apc", 0);
    return confirm_run(p->o, p->app, p->mix, p->ccr, p->c->best_policy, p->c->best_size);
}

/*
 * The sweep's best is the minimum of dozens of single runs on a noisy
 * machine, so it is biased low against APC's one run.  Run the two again,
 * alternating which goes first, and take the median of the per-round
 * ratios.
 */
static void confirm(bt_opts *o, bt_app app, const char *mix, long ccr, cell *c)
{
    confirm_pair p = {o, app, mix, ccr, c};
    bench_pair t;
    int k = bench_alternate(confirm_side, &p, o->confirm, BENCH_SKIP_FAILED, &t);
    c->confirmed = k > 0 ? bench_median_ratio(t.t[0], t.t[1], k).median : 0;
}

static void sweep_one(bt_opts *o, bt_app app, const char *mix, long ccr, cell *c)
{
    *c = (cell){.best = INFINITY, .worst = 0};
    char buf[4300], *argv[8];
    int n = 0;
    long cells = bt_app_args(o, app, 1, ccr, argv, &n, buf, sizeof buf);
    long min = app == BT_BS ? o->min_size : app == BT_SAR ? 256 : 4;
    char policies[256];
    for (long size = min; size <= cells / 2; size *= 2) {
        char *save = NULL;
        snprintf(policies, sizeof policies, "%s", o->policies);
        for (char *p = strtok_r(policies, ",", &save); p; p = strtok_r(NULL, ",", &save)) {
            double s = timed(o, app, mix, ccr, p, size);
            if (s < 0) continue;
            if (s < c->best) {
                c->best = s;
                c->best_size = size;
                snprintf(c->best_policy, sizeof c->best_policy, "%s", p);
            }
            if (s > c->worst) c->worst = s;
        }
    }
    c->apc = timed(o, app, mix, ccr, "apc", 0);
    if (c->apc > 0 && isfinite(c->best)) confirm(o, app, mix, ccr, c);
    printf("%-12s %-24s %5ld  %-6s %9ld %8.3f  %8.3f  %8.3f  %8.3f  %9.3f\n",
           bt_tile_app_names[app], mix, ccr, c->best_policy, c->best_size, c->best, c->worst,
           c->apc, c->apc / c->best, c->confirmed);
    fflush(stdout);
}

static void default_mixes(char *buf, size_t cap)
{
    long n = sysconf(_SC_NPROCESSORS_ONLN);
    if (n < 2) n = 2;
    snprintf(buf, cap, "cpu*%ld;cpu*%ld+cpu@0.25;cpu+opencl", n, n - 1);
}

static int app_index(const char *name)
{
    for (int a = 0; a < BT_APPS; a++)
        if (strcmp(name, bt_tile_app_names[a]) == 0) return a;
    return -1;
}

static int sweep(bt_opts *o)
{
    char mixes[512], ccrs[256], apps[256];
    if (o->mixes) snprintf(mixes, sizeof mixes, "%s", o->mixes);
    else default_mixes(mixes, sizeof mixes);
    printf("sweep: %ld round(s); seconds from run start to last output; CCR 0: not a knob of "
           "the application\n",
           o->rounds);
    printf("%-12s %-24s %5s  %-6s %9s %8s  %8s  %8s  %8s  %9s\n", "app", "mix", "CCR", "best",
           "size", "best s", "worst s", "APC s", "APC/best", "confirmed");
    int configs = 0, within10 = 0, within5 = 0, confirmed = 0, c10 = 0, c5 = 0;
    snprintf(apps, sizeof apps, "%s", o->apps);
    char *save_a = NULL;
    for (char *an = strtok_r(apps, ",", &save_a); an; an = strtok_r(NULL, ",", &save_a)) {
        int app = app_index(an);
        if (app < 0) {
            fprintf(stderr, "tessera bench tile: unknown application '%s' in --apps\n", an);
            return -1;
        }
        char mixcopy[512];
        snprintf(mixcopy, sizeof mixcopy, "%s", mixes);
        char *save_m = NULL;
        for (char *mix = strtok_r(mixcopy, ";", &save_m); mix; mix = strtok_r(NULL, ";", &save_m)) {
            snprintf(ccrs, sizeof ccrs, "%s", app == BT_BS ? o->ccrs : "0");
            char *save_c = NULL;
            for (char *k = strtok_r(ccrs, ",", &save_c); k; k = strtok_r(NULL, ",", &save_c)) {
                cell c;
                sweep_one(o, (bt_app)app, mix, strtol(k, NULL, 10), &c);
                if (!(c.apc > 0) || !isfinite(c.best)) continue;
                configs++;
                within10 += c.apc <= 1.10 * c.best;
                within5 += c.apc <= 1.05 * c.best;
                if (c.confirmed > 0) {
                    confirmed++;
                    c10 += c.confirmed <= 1.10;
                    c5 += c.confirmed <= 1.05;
                }
            }
        }
    }
    printf("APC within 10%% of the best fixed size in %d of %d configurations, within 5%% in "
           "%d (goals: >= 90%% within 10%%; aim 5%%)\n",
           within10, configs, within5);
    if (confirmed > 0)
        printf(
            "confirmed (median of %ld alternating rounds, APC / the best fixed size): within 10%% "
            "in %d of %d configurations, within 5%% in %d\n",
            o->confirm, c10, confirmed, c5);
    return configs > 0 ? 0 : -1;
}

/* ---------------------------------------------------------------- overhead */

/*
 * Pin this thread (and so the children it starts) to one core, or give it
 * back the mask it had.  The two vCPUs of these machines run the same loop
 * up to 30% apart (0.17 s on one, 0.225 s on the other, the same binary),
 * so a plain loop and an APC run compared on whichever cores the scheduler
 * picked measure the cores, not the runtime.
 */
static int pin_to_core(int core)
{
    cpu_set_t one;
    CPU_ZERO(&one);
    CPU_SET(core, &one);
    return sched_setaffinity(0, sizeof one, &one);
}

/* The cores this process may run on, in order; how many. */
static int usable_cores(int *cores, cpu_set_t *mask)
{
    int n = 0;
    if (sched_getaffinity(0, sizeof *mask, mask) == 0)
        for (int c = 0; c < CPU_SETSIZE; c++)
            if (CPU_ISSET(c, mask)) cores[n++] = c;
    return n;
}

static double time_plain_loop(const float *in, long n, const bs_params *p)
{
    /* Fresh output pages, as the APC child's: first touch is part of a real
     * program's cost.  mmap, not malloc: after the first free glibc raises
     * its mmap threshold and hands back pages already touched, which made
     * the plain loop 25% faster from its second round on. */
    size_t bytes = (size_t)n * 8;
    float *out = mmap(NULL, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (out == MAP_FAILED) return -1;
    double t0 = tess_now();
    bs_price(in, out, n, p);
    double plain = tess_now() - t0;
    munmap(out, bytes);
    return plain;
}

/*
 * Each round pins the plain loop and the whole APC child (controller,
 * message layer and processor threads together) to the same core, taking
 * the cores in turn and alternating which runs first.  Any CPU the
 * runtime's own threads take is charged to APC.
 */
static void overhead(bt_opts *o)
{
    long k = 10, n = o->options;
    float *in = malloc((size_t)n * 12);
    if (in == NULL) return;
    bs_generate(0, 0, n, in);
    bs_params p = {0.02f, 0.30f, (int)k, NULL, -1, NULL};
    enum { ROUNDS = 10 };
    double ratio[ROUNDS];
    int rounds = 0, cores[CPU_SETSIZE];
    cpu_set_t saved;
    int ncores = usable_cores(cores, &saved);
    char opts[32], iters[32];
    snprintf(opts, sizeof opts, "%ld", n);
    snprintf(iters, sizeof iters, "%ld", k);
    char *extra[] = {"--options", opts, "--iterations", iters, "--processors", "cpu"};
    for (int r = 0; r < ROUNDS && ncores > 0; r++) {
        int core = cores[r % ncores];
        if (pin_to_core(core) != 0) {
            printf("overhead: cannot pin to core %d; not measured\n", core);
            break;
        }
        double plain, apc;
        if (r % 4 < 2) {
            plain = time_plain_loop(in, n, &p);
            apc = bt_run_child(o, BT_BS, 0, extra, 6, NULL, 0);
        } else {
            apc = bt_run_child(o, BT_BS, 0, extra, 6, NULL, 0);
            plain = time_plain_loop(in, n, &p);
        }
        sched_setaffinity(0, sizeof saved, &saved);
        if (plain <= 0 || apc <= 0) continue;
        ratio[rounds++] = plain / apc;
        printf("  round %d (core %d): plain loop %.3f s, APC on 1 cpu %.3f s, APC rate / plain "
               "%.3f\n",
               r + 1, core, plain, apc, plain / apc);
    }
    if (rounds > 0)
        printf("overhead: APC's cells/s on 1 cpu = %.3f x the plain loop's (median of %d rounds, "
               "both on the same core; goal >= 0.95)\n",
               bench_median(ratio, rounds), rounds);
    free(in);
}

/* ---------------------------------------------------------------- scaling */

/* A 1-rank run pinned to one core (the mask restored after), or -1. */
static double child_on_core(bt_opts *o, bt_app app, int core, char **extra, int nextra,
                            const cpu_set_t *mask, char *stats, size_t cap)
{
    if (pin_to_core(core) != 0) return -1;
    double s = bt_run_child(o, app, 0, extra, nextra, stats, cap);
    sched_setaffinity(0, sizeof *mask, mask);
    return s;
}

double bt_one_rank_seconds(bt_opts *o, bt_app app, char **extra, int nextra, char *stats,
                           size_t cap)
{
    int cores[CPU_SETSIZE];
    cpu_set_t mask;
    int ncores = usable_cores(cores, &mask);
    if (ncores < 2) return bt_run_child(o, app, 0, extra, nextra, stats, cap);
    double rate = 0;
    for (int k = 0; k < ncores; k++) {
        double s = child_on_core(o, app, cores[k], extra, nextra, &mask, stats, cap);
        if (s <= 0) return -1;
        rate += 1 / s;
    }
    return ncores / rate;
}

/*
 * 2 ranks against 1.  The 1-rank rate is the mean of runs pinned to each
 * core in turn: on these VMs one vCPU can run 30% slower than the other,
 * and a single unpinned 1-rank run lands on either, so the ratio measured
 * the core it drew.  Ideal is 2x that mean rate.
 */
static void scaling(bt_opts *o)
{
    if (bt_find_mpirun(o, "scaling") != 0) return;
    char opts[32];
    snprintf(opts, sizeof opts, "%ld", o->options);
    char *one[] = {"--options", opts, "--iterations", "75", "--processors", "cpu"};
    char *on0[] = {"--options",    opts,  "--iterations", "75",
                   "--processors", "cpu", "--data-on",    "0"};
    static char stats[1 << 16];
    enum { ROUNDS = 3 };
    double x2[ROUNDS], x0[ROUNDS];
    int cores[CPU_SETSIZE], rounds = 0;
    cpu_set_t mask;
    int ncores = usable_cores(cores, &mask);
    for (int r = 0; r < ROUNDS && ncores >= 2; r++) {
        double ta = child_on_core(o, BT_BS, cores[0], one, 6, &mask, NULL, 0);
        double t2 = bt_run_child(o, BT_BS, 2, one, 6, NULL, 0);
        double tb = child_on_core(o, BT_BS, cores[1], one, 6, &mask, NULL, 0);
        double t0 = bt_run_child(o, BT_BS, 2, on0, 8, stats, sizeof stats);
        if (ta <= 0 || tb <= 0 || t2 <= 0 || t0 <= 0) continue;
        bt_record(o, BT_BS, "np2-on0", 75, 2, "apc", 0, t0, stats);
        double rate1 = (1 / ta + 1 / tb) / 2;
        x2[rounds] = 1 / t2 / rate1;
        x0[rounds] = 1 / t0 / rate1;
        printf("  round %d: 1 rank on core %d %.3f s, on core %d %.3f s; 2 ranks spread %.3f s "
               "(%.2fx); all input on rank 0 %.3f s (%.2fx)\n",
               r + 1, cores[0], ta, cores[1], tb, t2, x2[rounds], t0, x0[rounds]);
        rounds++;
    }
    if (rounds == 0) {
        printf("scaling: needs 2 usable cores and 4 good runs a round; not measured\n");
        return;
    }
    printf("scaling (K=75, 1 cpu per rank, medians of %d rounds; 1-rank rate = mean over the "
           "cores): 2 ranks = %.2fx 1 rank (goal >= 1.8); input on rank 0: %.2fx; bytes moved in "
           "the last such run are in %s\n",
           rounds, bench_median(x2, rounds), bench_median(x0, rounds), o->out);
}

/* ---------------------------------------------------------------- StarPU */

/* The peer's seconds for a block count (its best of calibrated runs), or -1. */
static double starpu_once(bt_opts *o, const char *peer, bt_app app, int blocks, int cpus,
                          int slowed)
{
    char nb[32], nc[32], out[4200], err[4200], buf[4300];
    snprintf(nb, sizeof nb, "%d", blocks);
    snprintf(nc, sizeof nc, "%d", cpus);
    snprintf(out, sizeof out, "%s/starpu.out", o->tmp);
    snprintf(err, sizeof err, "%s/starpu.err", o->tmp);
    char *argv[24] = {(char *)peer, "--app", (char *)bt_tile_app_names[app]};
    int n = 3;
    if (bt_app_args(o, app, 1, 75, argv, &n, buf, sizeof buf) < 0) return -1;
    char *tail[] = {"--blocks", nb, "--cpus", nc, "--slow-last", "0.25"};
    for (int k = 0; k < (slowed ? 6 : 4); k++) argv[n++] = tail[k];
    argv[n] = NULL;
    if (bench_run_logged(argv, out, err) != 0) return -1;
    char line[256];
    bench_first_line(out, line, sizeof line);
    if (strncmp(line, "seconds ", 8) != 0) return -1;
    return strtod(line + 8, NULL);
}

typedef struct starpu_pair {
    bt_opts *o;
    const char *peer;
    bt_app app;
    const char *mix;
    int blocks, cpus, slowed;
} starpu_pair;

/* Side 0: APC on the mix; side 1: StarPU at its best block count. */
static double starpu_side(void *arg, int side)
{
    const starpu_pair *p = arg;
    if (side == 0) return confirm_run(p->o, p->app, p->mix, p->app == BT_BS ? 75 : 0, "apc", 0);
    return starpu_once(p->o, p->peer, p->app, p->blocks, p->cpus, p->slowed);
}

/* APC against StarPU's dmda at its best block count, CPU only and slowed,
 * for each application (Black-Scholes at K=75). */
static void starpu_peer(bt_opts *o)
{
    char peer[4200];
    if (bench_sibling("tessera-starpu-tiles", peer, sizeof peer) != 0) {
        printf("StarPU peer: skipped (not built: install libstarpu-dev and rebuild)\n");
        return;
    }
    long n = sysconf(_SC_NPROCESSORS_ONLN);
    if (n < 2) n = 2;
    char mix[2][64];
    snprintf(mix[0], sizeof mix[0], "cpu*%ld", n);
    snprintf(mix[1], sizeof mix[1], "cpu*%ld+cpu@0.25", n - 1);
    for (int app = 0; app < BT_APPS; app++) {
        if (!strstr(o->apps, bt_tile_app_names[app])) continue;
        char buf[4300], *argv[8];
        int k = 0;
        long cells = bt_app_args(o, (bt_app)app, 1, 75, argv, &k, buf, sizeof buf);
        for (int slowed = 0; slowed < 2; slowed++) {
            double best = INFINITY;
            int best_blocks = 0;
            for (int b = 8; b <= 1024 && b <= cells; b *= 2) {
                double s = starpu_once(o, peer, (bt_app)app, b, (int)n, slowed);
                if (s > 0 && s < best) best = s, best_blocks = b;
            }
            /* the best block count was the luckiest of its runs: compare
             * at it again, alternating, as the sweep confirms */
            starpu_pair p = {o, peer, (bt_app)app, mix[slowed], best_blocks, (int)n, slowed};
            bench_pair t;
            long confirm = o->confirm > 0 ? o->confirm : 1;
            int got = best_blocks > 0
                          ? bench_alternate(starpu_side, &p, confirm, BENCH_SKIP_FAILED, &t)
                          : 0;
            if (got == 0) {
                printf("StarPU dmda vs APC, %s, %s: no comparison (a run failed)\n",
                       bt_tile_app_names[app], mix[slowed]);
                continue;
            }
            bench_ratio q = bench_median_ratio(t.t[0], t.t[1], got);
            printf("StarPU dmda vs APC, %s, %s: StarPU at its best block count (%d) %.3f s, APC "
                   "%.3f s (medians of %d alternating rounds), APC/StarPU %.3f [%.3f, %.3f] "
                   "(median of the rounds' ratios [its %.0f%% confidence interval]; goal <= 1: "
                   "%s)\n",
                   bt_tile_app_names[app], mix[slowed], best_blocks, bench_median(t.t[1], got),
                   bench_median(t.t[0], got), got, q.median, q.lo, q.hi, 100 * q.coverage,
                   bench_verdict(q.median, q.lo, q.hi, 1.0, 1));
            fflush(stdout);
        }
    }
}

int bench_tile_main(int argc, char **argv)
{
    bt_opts o;
    int rc = parse(&o, argc, argv);
    if (rc != 0) return rc > 0 ? 0 : 2;
    if (bench_self_exe("bench tile", o.self, sizeof o.self) != 0) return 1;
    if (bench_make_tmpdir(o.tmp, sizeof o.tmp, NULL, "bench-tile", "bench tile") != 0) return 1;
    if (strstr(o.parts, "sweep")) rc = sweep(&o);
    if (strstr(o.parts, "overhead")) overhead(&o);
    if (strstr(o.parts, "scaling")) scaling(&o);
    if (strstr(o.parts, "weak")) bt_weak_scaling(&o);
    if (strstr(o.parts, "strong")) bt_strong_scaling(&o);
    if (strstr(o.parts, "starpu")) starpu_peer(&o);
    if (strstr(o.parts, "mrmpi")) bt_mrmpi_peer(&o);
    if (strstr(o.parts, "central")) bt_central(&o);
    char cmd[8300];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", o.tmp);
    if (system(cmd) != 0) fprintf(stderr, "tessera bench tile: could not remove %s\n", o.tmp);
    return rc == 0 ? 0 : 1;
}
