/*
 * bench_ckpt.c — `tessera bench ckpt`: what checkpoints cost.
 *
 * Overhead: `tessera run pagerank`, `run kmeans` and `run nbody` as children (this very
 * binary), each round once without checkpoints and once with
 * --checkpoint-dir DIR --checkpoint-every E, alternating (plain, ckpt, plain,
 * ckpt, …) so that slow phases of a noisy machine hit both alike (DESIGN §7).
 * A run's time per iteration is the mean of the iteration_seconds its
 * metrics report — the mean, not the median, because the cost of a
 * checkpoint falls on the iteration that takes it and on those its
 * background writer overlaps.  Reported: per-round figures, the medians over
 * rounds, their ratio and the goal (Piccolo: <= 2% per iteration).  Figures
 * are never pass/fail; only a failed run fails the command.
 *
 * Restore: bench_ckpt_restore.c.
 */
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "bench_ckpt.h"
#include "common.h"
#include "bench_util.h"
#include "csr_pagerank.h"

#define BC_GOAL_OVERHEAD 0.02
#define BC_ARGV_MAX 40

/* ---------------------------------------------------------------- options */

static const char usage[] =
    "usage: tessera bench ckpt [options]\n"
    "\n"
    "What checkpoints cost (include/tessera/checkpoint.h):\n"
    "  overhead  tessera run pagerank / kmeans / nbody checkpointing every E iterations\n"
    "            against the same run without, alternating rounds (plain, ckpt,\n"
    "            plain, ...); time per iteration = the mean of the run's\n"
    "            iteration_seconds; prints the medians over rounds, their ratio\n"
    "            and the goal (<= 2% per iteration, Piccolo's figure)\n"
    "  restore   tess_checkpoint_restore of a dense table of N random doubles,\n"
    "            in this process (embedded): median of R restores per N, MB/s\n"
    "\n"
    "options:\n"
    "  --only LIST          overhead, restore (default both)\n"
    "  --apps LIST          pagerank, kmeans, nbody (default all three)\n"
    "  --rounds R           rounds of (plain, ckpt) per app (default 5)\n"
    "  --iterations I       iterations per run (default 20)\n"
    "  --every E            --checkpoint-every of the ckpt runs (default 5)\n"
    "  --workers W          worker threads (per rank under --mpirun; default 2)\n"
    "  --mpirun NP          run the children as NP MPI ranks\n"
    "  --pagerank-gen SPEC  PageRank graph (default web:2000000)\n"
    "  --kmeans-gen SPEC    k-means points N:DIM:K (default 2000000:8:32)\n"
    "  --nbody-particles N  n-body particles, cutoff 1 (default 300000)\n"
    "  --sizes LIST         restore: doubles per table (default\n"
    "                       1000000,4000000,16000000)\n"
    "  --restore-reps R     restore: restores per size (default 3)\n"
    "  --quick              small sizes and 2 rounds: a smoke run\n"
    "  --timeout S          seconds a child may run (default 900)\n"
    "  --tmpdir DIR         parent of the temporary directory, which holds the\n"
    "                       checkpoints (default $TMPDIR or /tmp): put it on the\n"
    "                       file system you want to measure\n"
    "  --compare-writer     overhead: each round also runs the ckpt variant with one\n"
    "                       writer thread that competes with the workers\n"
    "                       (TESS_CKPT_WRITER=normal; by default a thread per worker\n"
    "                       that uses only idle cores) and reports both\n"
    "  --dry-run            print the child commands, run nothing\n"
    "  --help               this text\n";

static int parse_sizes(bc_options *o, const char *v)
{
    o->nsizes = 0;
    while (v != NULL && *v != '\0') {
        char item[32];
        size_t len = strcspn(v, ",");
        long n;
        snprintf(item, sizeof item, "%.*s", (int)(len < 31 ? len : 31), v);
        if (o->nsizes == BC_MAX_SIZES) {
            app_error(BC_NAME, "option --sizes: more than %d sizes", BC_MAX_SIZES);
            return -1;
        }
        if (app_parse_int(BC_NAME, "sizes", item, 1, 1L << 32, &n) != 0) return -1;
        o->sizes[o->nsizes++] = (uint64_t)n;
        v += len + (v[len] == ',');
    }
    if (o->nsizes == 0) app_error(BC_NAME, "option --sizes: missing value");
    return o->nsizes ? 0 : -1;
}

static void set_quick(bc_options *o)
{
    o->pagerank_gen = "web:100000";
    o->kmeans_gen = "200000:4:8";
    o->nbody_particles = "30000";
    o->rounds = 2;
    o->iterations = 10;
    o->nsizes = 2;
    o->sizes[0] = 100000;
    o->sizes[1] = 400000;
}

static int parse_only(const char *app, const app_opt *opt, const char *v)
{
    static const char *const what_names[] = {"overhead", "restore", NULL};
    (void)app;
    return bench_parse_names(BC_NAME, "only", v, what_names, opt->dest);
}

static int parse_apps(const char *app, const app_opt *opt, const char *v)
{
    static const char *const app_names[] = {"pagerank", "kmeans", "nbody", NULL};
    (void)app;
    return bench_parse_names(BC_NAME, "apps", v, app_names, opt->dest);
}

static int parse_sizes_option(const char *app, const app_opt *opt, const char *v)
{
    (void)app;
    return parse_sizes(opt->dest, v);
}

/* 0 to run, 1 after --help, -1 after an error.  --quick applies first, so
 * explicit options override it wherever they stand. */
static int parse_options(bc_options *o, int argc, char **argv)
{
    *o = (bc_options){.what = BC_OVERHEAD | BC_RESTORE,
                      .apps = BC_PAGERANK | BC_KMEANS | BC_NBODY,
                      .rounds = 5,
                      .iterations = 20,
                      .every = 5,
                      .workers = 2,
                      .restore_reps = 3,
                      .timeout_s = 900,
                      .pagerank_gen = "web:2000000",
                      .kmeans_gen = "2000000:8:32",
                      .nbody_particles = "300000",
                      .nsizes = 3,
                      .sizes = {1000000, 4000000, 16000000}};
    for (int i = 1; i < argc; i++)
        if (strcmp(argv[i], "--quick") == 0) set_quick(o);
    int quick = 0; /* applied above */
    const app_opt opts[] = {
        {"only", APP_OPT_CUSTOM, &o->what, 0, 0, 0, NULL, parse_only},
        {"apps", APP_OPT_CUSTOM, &o->apps, 0, 0, 0, NULL, parse_apps},
        {"rounds", APP_OPT_INT, &o->rounds, 1, 1000, 0, NULL, NULL},
        {"iterations", APP_OPT_INT, &o->iterations, 2, 100000, 0, NULL, NULL},
        {"every", APP_OPT_INT, &o->every, 1, 100000, 0, NULL, NULL},
        {"workers", APP_OPT_INT, &o->workers, 1, 4096, 0, NULL, NULL},
        {"mpirun", APP_OPT_INT, &o->mpirun_np, 1, 4096, 0, NULL, NULL},
        {"restore-reps", APP_OPT_INT, &o->restore_reps, 1, 1000, 0, NULL, NULL},
        {"timeout", APP_OPT_DOUBLE, &o->timeout_s, 1, 1e6, 0, NULL, NULL},
        {"sizes", APP_OPT_CUSTOM, o, 0, 0, 0, NULL, parse_sizes_option},
        {"pagerank-gen", APP_OPT_CUSTOM, &o->pagerank_gen, 0, 0, 0, NULL, app_parse_path},
        {"kmeans-gen", APP_OPT_CUSTOM, &o->kmeans_gen, 0, 0, 0, NULL, app_parse_path},
        {"nbody-particles", APP_OPT_CUSTOM, &o->nbody_particles, 0, 0, 0, NULL, app_parse_path},
        {"tmpdir", APP_OPT_CUSTOM, &o->tmp_parent, 0, 0, 0, NULL, app_parse_path},
        {"quick", APP_OPT_FLAG, &quick, 0, 0, 1, NULL, NULL},
        {"dry-run", APP_OPT_FLAG, &o->dry_run, 0, 0, 1, NULL, NULL},
        {"compare-writer", APP_OPT_FLAG, &o->compare_writer, 0, 0, 1, NULL, NULL},
    };
    return app_parse_options(BC_NAME, usage, argc, argv, opts, (int)(sizeof opts / sizeof *opts));
}

/* ---------------------------------------------------------------- overhead */

/* The runs of a round: without checkpoints, with them, loading plus one
 * iteration (whose CPU time, taken from the plain run's, leaves the CPU time
 * of the iterations) and, with --compare-writer, with checkpoints whose
 * writer competes with the workers (TESS_CKPT_WRITER=normal). */
enum { BC_PLAIN, BC_CKPT, BC_BASE, BC_COMPETING, BC_VARIANTS };

typedef struct bc_app_runs {
    const char *name, *gen;
    bc_result *runs[BC_VARIANTS]; /* per variant, one per round */
    uint64_t ckpt_bytes;          /* largest checkpoint directory seen */
} bc_app_runs;

/* The child's command line into argv (room for BC_ARGV_MAX); numbers go
 * into bufs. */
static void child_argv(const bc_options *o, const bc_runner *r, const bc_app_runs *app, int variant,
                       char **argv, char bufs[4][32])
{
    static char metrics[PATH_MAX], ckdir[PATH_MAX];
    int n = 0;
    snprintf(metrics, sizeof metrics, "%s/metrics.json", r->tmpdir);
    snprintf(ckdir, sizeof ckdir, "%s/ckpt", r->tmpdir);
    snprintf(bufs[0], 32, "%ld", o->mpirun_np);
    snprintf(bufs[1], 32, "%ld", variant == BC_BASE ? 1 : o->iterations);
    snprintf(bufs[2], 32, "%ld", o->workers);
    snprintf(bufs[3], 32, "%ld", o->every);
    if (o->mpirun_np > 0) n += bench_mpirun_argv(argv, r->mpirun, bufs[0], "none");
    const char *args[] = {r->exe,  "run",       app->name, "--gen",   app->gen,    "--iterations",
                          bufs[1], "--workers", bufs[2],   "--quiet", "--metrics", metrics};
    /* n-body: the particle count, a cutoff of 1 and steps for iterations */
    const char *nbody[] = {r->exe,     "run",     "nbody",     "--particles", app->gen,
                           "--cutoff", "1",       "--steps",   bufs[1],       "--workers",
                           bufs[2],    "--quiet", "--metrics", metrics};
    int is_nbody = strcmp(app->name, "nbody") == 0;
    const char **list = is_nbody ? nbody : args;
    size_t count = is_nbody ? sizeof nbody / sizeof *nbody : sizeof args / sizeof *args;
    for (size_t i = 0; i < count; i++) argv[n++] = (char *)list[i];
    if (variant == BC_CKPT || variant == BC_COMPETING) {
        const char *more[] = {"--checkpoint-dir", ckdir, "--checkpoint-every", bufs[3]};
        for (size_t i = 0; i < sizeof more / sizeof *more; i++) argv[n++] = (char *)more[i];
    }
    argv[n] = NULL;
}

/* The child of BC_COMPETING inherits TESS_CKPT_WRITER=normal; the others
 * whatever the bench was started with. */
static int run_child_as(bc_runner *r, int variant, char **argv, const char *label, double *cpu)
{
    static const char var[] = "TESS_CKPT_WRITER";
    const char *was = getenv(var);
    char saved[64];
    snprintf(saved, sizeof saved, "%s", was ? was : "");
    if (variant == BC_COMPETING) setenv(var, "normal", 1);
    int rc = bc_run_child(r, argv, label, cpu);
    if (variant == BC_COMPETING && was) setenv(var, saved, 1);
    else if (variant == BC_COMPETING) unsetenv(var);
    return rc;
}

/* One run of one variant; 0 or -1. */
static int measure(const bc_options *o, bc_runner *r, bc_app_runs *app, int variant, bc_result *res)
{
    static const char *const labels[] = {"", " --checkpoint-every", " --iterations 1",
                                         " --checkpoint-every, TESS_CKPT_WRITER=normal"};
    char *argv[BC_ARGV_MAX], bufs[4][32], path[PATH_MAX], label[64];
    child_argv(o, r, app, variant, argv, bufs);
    if (o->dry_run && variant == BC_COMPETING) printf("TESS_CKPT_WRITER=normal ");
    if (o->dry_run) return bc_print_command(argv), 0;
    snprintf(path, sizeof path, "%s/ckpt", r->tmpdir);
    bc_remove_tree(path); /* every ckpt run starts a new job in an empty directory */
    snprintf(label, sizeof label, "%s%s", app->name, labels[variant]);
    if (run_child_as(r, variant, argv, label, &res->cpu) != 0) return -1;
    res->ckpt_bytes = variant == BC_CKPT || variant == BC_COMPETING ? bc_dir_bytes(path) : 0;
    if (res->ckpt_bytes > app->ckpt_bytes) app->ckpt_bytes = res->ckpt_bytes;
    bc_remove_tree(path);
    snprintf(path, sizeof path, "%s/metrics.json", r->tmpdir);
    return bc_read_metrics(path, (int)(2 * o->every), res);
}

enum { BC_PER_ITERATION, BC_SPAN, BC_CUT, BC_WRITE, BC_BYTES, BC_COUNT, BC_CPU, BC_STEADY };

static double figure(const bc_result *r, int which)
{
    switch (which) {
    case BC_CPU: return r->cpu;
    case BC_SPAN: return r->wall - r->load;
    case BC_CUT: return r->cut_seconds;
    case BC_WRITE: return r->write_seconds;
    case BC_BYTES: return r->bytes_written;
    case BC_COUNT: return r->checkpoints;
    case BC_STEADY: return r->steady_iteration;
    default: return r->mean_iteration;
    }
}

static double median_of(const bc_result *res, int n, int which)
{
    double v[1000];
    for (int i = 0; i < n; i++) v[i] = figure(&res[i], which);
    return bench_median(v, n);
}

static double median_ratio(const bc_app_runs *app, int n, int variant)
{
    double v[1000];
    for (int i = 0; i < n; i++)
        v[i] = app->runs[variant][i].mean_iteration / app->runs[BC_PLAIN][i].mean_iteration;
    return bench_median(v, n);
}

/* Median over rounds of a[i].cpu - b[i].cpu: pairs taken a minute apart. */
static double median_cpu_difference(const bc_result *a, const bc_result *b, int n)
{
    double v[1000];
    for (int i = 0; i < n; i++) v[i] = a[i].cpu - b[i].cpu;
    return bench_median(v, n);
}

/* CPU time hardly depends on what else the machine runs, unlike run times:
 * what checkpoints add to a run's CPU, against the CPU of its iterations. */
static void report_cpu(const bc_options *o, const bc_app_runs *app, int n)
{
    bc_result *const *r = app->runs;
    double extra = median_cpu_difference(r[BC_CKPT], r[BC_PLAIN], n);
    double iterations = median_cpu_difference(r[BC_PLAIN], r[BC_BASE], n) * (double)o->iterations /
                        (double)(o->iterations - 1);
    long checkpoints = (o->iterations - 1) / o->every;
    printf("%s: CPU per run (median): plain %.2f s, ckpt %.2f s, load + 1 iteration %.2f s\n",
           app->name, median_of(r[BC_PLAIN], n, BC_CPU), median_of(r[BC_CKPT], n, BC_CPU),
           median_of(r[BC_BASE], n, BC_CPU));
    printf("%s: CPU of the checkpoints: %+.2f s per run (%+.3f s each) = %+.1f%% of the CPU "
           "of %ld iterations (%.2f s)\n",
           app->name, extra, extra / (double)checkpoints, 100 * extra / iterations, o->iterations,
           iterations);
}

/* The runtime's own figures: time the workers were held for the copies, and
 * the background writer's time, against the plain run's iteration time —
 * less noisy than the difference of two noisy run times.  The writer
 * overlaps the computation, so the cut is a lower bound of the cost and
 * cut + write an upper one when the writer has no idle core to run on. */
static void report_direct_cost(const bc_options *o, const bc_app_runs *app, int n, double plain)
{
    const bc_result *ck = app->runs[BC_CKPT];
    double cut = median_of(ck, n, BC_CUT), write = median_of(ck, n, BC_WRITE);
    double count = median_of(ck, n, BC_COUNT), bytes = median_of(ck, n, BC_BYTES);
    if (isnan(cut) || isnan(write) || !(count > 0)) return;
    double compute = plain * (double)o->iterations;
    printf("%s: per checkpoint (median over rounds, rank 0): cut %.4f s, background write %.3f s, "
           "%.1f MB written\n",
           app->name, cut / count, write / count, bytes / count / 1e6);
    printf("%s: direct cost per run: cut %.1f%% .. cut + write %.1f%% of the plain "
           "iteration time\n",
           app->name, 100 * cut / compute, 100 * (cut + write) / compute);
}

/* A long job pays the one-time save of its static tables once: the steady
 * state is what each further checkpoint costs. */
static void report_steady(const bc_options *o, const bc_app_runs *app, int n)
{
    double plain = median_of(app->runs[BC_PLAIN], n, BC_STEADY);
    double ckpt = median_of(app->runs[BC_CKPT], n, BC_STEADY);
    if (isnan(plain) || isnan(ckpt)) return;
    double overhead = ckpt / plain - 1.0;
    printf("%s: steady state (iterations %ld..%ld, after the static tables were saved): plain "
           "%.4f, ckpt %.4f s/iteration; goal <= %.0f%%: %s (%+.2f%%)\n",
           app->name, 2 * o->every + 1, o->iterations, plain, ckpt, BC_GOAL_OVERHEAD * 100,
           overhead <= BC_GOAL_OVERHEAD ? "met" : "NOT met", overhead * 100);
}

/* --compare-writer: the same checkpoints with one writer thread competing
 * with the workers for the cores. */
static void report_competing_writer(const bc_app_runs *app, int n)
{
    bc_result *const *r = app->runs;
    double plain = median_of(r[BC_PLAIN], n, BC_PER_ITERATION);
    double paced = median_of(r[BC_CKPT], n, BC_PER_ITERATION);
    double competing = median_of(r[BC_COMPETING], n, BC_PER_ITERATION);
    printf("%s: competing writer (TESS_CKPT_WRITER=normal): ckpt %.4f s/iteration; "
           "ratio to plain %.4f (median of per-round ratios %.4f); paced writer / competing "
           "= %.4f\n",
           app->name, competing, competing / plain, median_ratio(app, n, BC_COMPETING),
           paced / competing);
    double steady = median_of(r[BC_COMPETING], n, BC_STEADY) / median_of(r[BC_PLAIN], n, BC_STEADY);
    if (!isnan(steady))
        printf("%s: competing writer, steady state: %+.2f%%\n", app->name, (steady - 1.0) * 100);
    printf("%s: CPU of the checkpoints, competing writer: %+.2f s per run\n", app->name,
           median_cpu_difference(r[BC_COMPETING], r[BC_PLAIN], n));
}

static void report_app(const bc_options *o, const bc_app_runs *app, int n)
{
    const bc_result *p = app->runs[BC_PLAIN], *c = app->runs[BC_CKPT];
    double plain = median_of(p, n, BC_PER_ITERATION), ckpt = median_of(c, n, BC_PER_ITERATION);
    double plain_span = median_of(p, n, BC_SPAN), ckpt_span = median_of(c, n, BC_SPAN);
    double overhead = ckpt / plain - 1.0;
    printf("%s: median s/iteration over %d rounds: plain %.4f, ckpt %.4f; ratio %.4f "
           "(median of per-round ratios %.4f)\n",
           app->name, n, plain, ckpt, ckpt / plain, median_ratio(app, n, BC_CKPT));
    printf("%s: median run time after loading (wall - load): plain %.3f s, ckpt %.3f s; "
           "ratio %.4f\n",
           app->name, plain_span, ckpt_span, ckpt_span / plain_span);
    printf("%s: checkpoint directory at the end of a run: %.1f MB (%ld checkpoints per run)\n",
           app->name, (double)app->ckpt_bytes / 1e6, (o->iterations - 1) / o->every);
    report_direct_cost(o, app, n, plain);
    report_cpu(o, app, n);
    printf("%s: goal: checkpoint overhead <= %.0f%% per iteration: %s (%+.2f%%)\n", app->name,
           BC_GOAL_OVERHEAD * 100, overhead <= BC_GOAL_OVERHEAD ? "met" : "NOT met",
           overhead * 100);
    report_steady(o, app, n);
    if (o->compare_writer) report_competing_writer(app, n);
}

static void print_round(const bc_options *o, const bc_app_runs *app, int round)
{
    const bc_result *p = &app->runs[BC_PLAIN][round], *c = &app->runs[BC_CKPT][round];
    const bc_result *b = &app->runs[BC_BASE][round], *w = &app->runs[BC_COMPETING][round];
    printf("%s round %d: plain %.4f s/it (wall %.2f s, CPU %.2f s), ckpt %.4f s/it (wall %.2f s, "
           "CPU %.2f s); ratio %.4f; load + 1 iteration CPU %.2f s\n",
           app->name, round + 1, p->mean_iteration, p->wall, p->cpu, c->mean_iteration, c->wall,
           c->cpu, c->mean_iteration / p->mean_iteration, b->cpu);
    if (o->compare_writer)
        printf("%s round %d: ckpt, competing writer %.4f s/it (wall %.2f s, CPU %.2f s); "
               "ratio %.4f\n",
               app->name, round + 1, w->mean_iteration, w->wall, w->cpu,
               w->mean_iteration / p->mean_iteration);
    fflush(stdout);
}

static int overhead_app(const bc_options *o, bc_runner *r, bc_app_runs *app)
{
    int rc = 0, done = 0;
    printf("\n== overhead: %s --gen %s, %ld iterations, --checkpoint-every %ld, %ld worker(s)%s\n",
           app->name, app->gen, o->iterations, o->every, o->workers,
           o->mpirun_np ? " per rank under mpirun" : " (embedded)");
    if (o->mpirun_np) printf("   mpirun -np %ld\n", o->mpirun_np);
    for (int k = 0; rc == 0 && k < o->rounds; k++) {
        int last = o->compare_writer ? BC_COMPETING : BC_BASE;
        for (int v = BC_PLAIN; rc == 0 && v <= last; v++)
            rc = measure(o, r, app, v, &app->runs[v][k]);
        if (rc == 0 && !o->dry_run) print_round(o, app, done++);
    }
    if (done > 0) report_app(o, app, done);
    return rc;
}

static int overhead_bench(const bc_options *o, bc_runner *r)
{
    bc_app_runs apps[3] = {{.name = "pagerank", .gen = o->pagerank_gen},
                           {.name = "kmeans", .gen = o->kmeans_gen},
                           {.name = "nbody", .gen = o->nbody_particles}};
    int rc = 0;
    for (int a = 0; a < 3 && rc == 0; a++) {
        if (!(o->apps & (1u << a))) continue;
        int ok = 1;
        for (int v = BC_PLAIN; v < BC_VARIANTS; v++)
            ok &= (apps[a].runs[v] = calloc((size_t)o->rounds, sizeof(bc_result))) != NULL;
        rc = ok ? overhead_app(o, r, &apps[a]) : -1;
        for (int v = BC_PLAIN; v < BC_VARIANTS; v++) free(apps[a].runs[v]);
    }
    return rc;
}

/* ---------------------------------------------------------------- main */

/* The machine's load, printed with the results: on a shared machine it
 * says how far the run times can be trusted. */
static void print_load(const char *when)
{
    char line[128] = "unknown";
    FILE *f = fopen("/proc/loadavg", "r");
    if (f != NULL) {
        if (fgets(line, sizeof line, f) == NULL) snprintf(line, sizeof line, "unknown");
        fclose(f);
    }
    line[strcspn(line, "\n")] = '\0';
    printf("load average %s: %s (%ld cores online)\n", when, line, sysconf(_SC_NPROCESSORS_ONLN));
}

static int bench(void *arg)
{
    const bc_options *o = arg;
    bc_runner r;
    if (bc_runner_init(&r, o) != 0) return 1;
    if (bench_make_tmpdir(r.tmpdir, sizeof r.tmpdir, o->tmp_parent, "tessera-bench-ckpt",
                          BC_NAME) != 0)
        return 1;
    printf("tessera bench ckpt: tessera %s, temporary directory %s\n", tess_version(), r.tmpdir);
    print_load("at the start");
    int rc = 0;
    if (o->what & BC_OVERHEAD) rc = overhead_bench(o, &r);
    if (rc == 0 && (o->what & BC_RESTORE) && !o->dry_run) rc = bc_restore_bench(o, r.tmpdir);
    print_load("at the end");
    bc_remove_tree(r.tmpdir);
    return rc == 0 ? 0 : 1;
}

int bench_ckpt_main(int argc, char **argv)
{
    bc_options o;
    int prc = parse_options(&o, argc, argv);
    if (prc != 0) return prc > 0 ? 0 : 2;
    if (o.rounds > 1000) o.rounds = 1000;
    return bench_interruptible(bench, &o);
}
