/*
 * bench_latency.c — `tessera bench latency`: the round-trip times of messages
 * of one size between every pair of MPI ranks, as the SoCC 2011 paper's
 * Figure 1 measures a cluster and EC2, so a user can tell the tick face what
 * their network does instead of assuming a profile.  Run it under mpirun (or
 * srun) on the machines the job will use; it prints percentiles and writes
 * the one-way delays (RTT/2) as a profile that `--jitter trace:FILE` replays.
 *
 * Pairs are measured one at a time; ranks that wait poll a non-blocking
 * barrier with sleeps, so an oversubscribed machine does not lend their spin
 * to the pair's measurement.  Plain MPI, no tessera runtime: the figure is
 * the network's (and MPI's), not tessera's.
 */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include "bench_util.h"
#include "common.h"

#if TESS_HAVE_MPI
#include <mpi.h>
#endif

#define NAME "bench latency"

typedef struct lat_opts {
    long bytes, rounds, warmup;
    const char *profile, *histogram;
} lat_opts;

static const char usage_text[] =
    "usage: mpirun -np N tessera bench latency [--bytes B] [--rounds R] [--warmup W]\n"
    "                                         [--profile FILE] [--histogram FILE.csv]\n"
    "\n"
    "Round-trip times of B-byte messages (default 16384, the paper's Figure 1)\n"
    "between every pair of the N >= 2 ranks, one pair at a time: W untimed\n"
    "(default 20) then R timed round trips (default 1000) per pair.  Prints the\n"
    "RTT percentiles over all pairs and each pair's median.\n"
    "  --profile FILE   the one-way delays (RTT/2, microseconds), one per line:\n"
    "                   replay them with `tessera run APP --jitter trace:FILE`\n"
    "  --histogram FILE log-binned RTT counts as CSV (scripts/plot_latency.py\n"
    "                   draws them as the paper's Figure 1)\n"
    "Ranks on one oversubscribed machine measure that machine, not a network.\n";

static int bad(const char *what, const char *value)
{
    fprintf(stderr, "tessera %s: option %s: %s (see --help)\n", NAME, what, value);
    return 2;
}

static int parse_long(const char *v, const char *name, long lo, long hi, long *out)
{
    char *end;
    errno = 0;
    long x = v ? strtol(v, &end, 10) : 0;
    if (v == NULL || *v == '\0' || *end != '\0' || errno != 0 || x < lo || x > hi) {
        char why[96];
        snprintf(why, sizeof why, "expected an integer in [%ld, %ld], got '%s'", lo, hi,
                 v ? v : "");
        return bad(name, why);
    }
    *out = x;
    return 0;
}

/* 0, 1 for --help, or 2 after a one-line error. */
static int parse(int argc, char **argv, lat_opts *o)
{
    *o = (lat_opts){.bytes = 16384, .rounds = 1000, .warmup = 20};
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        int rc = 0;
        if (strcmp(a, "--help") == 0 || strcmp(a, "-h") == 0) return 1;
        if (bench_is_option(a, "--bytes"))
            rc = parse_long(bench_option_value(argc, argv, &i), "--bytes", 1, 1L << 30, &o->bytes);
        else if (bench_is_option(a, "--rounds"))
            rc =
                parse_long(bench_option_value(argc, argv, &i), "--rounds", 1, 10000000, &o->rounds);
        else if (bench_is_option(a, "--warmup"))
            rc = parse_long(bench_option_value(argc, argv, &i), "--warmup", 0, 1000000, &o->warmup);
        else if (bench_is_option(a, "--profile")) {
            o->profile = bench_option_value(argc, argv, &i);
            if (o->profile == NULL) rc = bad("--profile", "missing FILE");
        } else if (bench_is_option(a, "--histogram")) {
            o->histogram = bench_option_value(argc, argv, &i);
            if (o->histogram == NULL) rc = bad("--histogram", "missing FILE");
        } else {
            fprintf(stderr, "tessera %s: unknown option '%s' (see --help)\n", NAME, a);
            rc = 2;
        }
        if (rc != 0) return rc;
    }
    if (o->profile && o->histogram && strcmp(o->profile, o->histogram) == 0)
        return bad("--histogram", "names the same file as --profile");
    return 0;
}

/* ---------------------------------------------------------------- report */

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* The p-quantile of sorted v (linear between neighbours). */
static double quantile(const double *v, size_t n, double p)
{
    double pos = p * (double)(n - 1);
    size_t lo = (size_t)pos, hi = lo + 1 < n ? lo + 1 : lo;
    return v[lo] + (pos - (double)lo) * (v[hi] - v[lo]);
}

static void print_summary(const lat_opts *o, int nranks, double *rtt, size_t n, double med_lo,
                          double med_hi)
{
    qsort(rtt, n, sizeof *rtt, cmp_double);
    double sum = 0;
    for (size_t i = 0; i < n; i++) sum += rtt[i];
    printf("# %s: %ld-byte messages, %d ranks, %d pairs x %ld round trips (MPI ping-pong)\n", NAME,
           o->bytes, nranks, nranks * (nranks - 1) / 2, o->rounds);
    printf("rtt_us  min %.1f  p10 %.1f  p50 %.1f  p90 %.1f  p99 %.1f  p99.9 %.1f  max %.1f  "
           "mean %.1f\n",
           rtt[0], quantile(rtt, n, 0.10), quantile(rtt, n, 0.50), quantile(rtt, n, 0.90),
           quantile(rtt, n, 0.99), quantile(rtt, n, 0.999), rtt[n - 1], sum / (double)n);
    printf("pair medians %.1f to %.1f us; one-way delay taken as RTT/2\n", med_lo, med_hi);
}

static int write_profile(const lat_opts *o, int nranks, const double *rtt, size_t n)
{
    app_outfile f = {0};
    if (app_outfile_open(&f, o->profile) != 0) return -1;
    fprintf(f.fp,
            "# tessera bench latency profile: one-way delay (RTT/2) in microseconds,\n"
            "# %ld-byte messages, %d ranks, %zu samples; replay: --jitter trace:FILE\n",
            o->bytes, nranks, n);
    for (size_t i = 0; i < n; i++) fprintf(f.fp, "%.3f\n", rtt[i] / 2);
    return app_outfile_commit(&f);
}

/* Ten bins a decade from 1 µs: the paper's Figure 1 is a log-x histogram. */
static int write_histogram(const lat_opts *o, const double *rtt, size_t n)
{
    app_outfile f = {0};
    if (app_outfile_open(&f, o->histogram) != 0) return -1;
    fprintf(f.fp, "rtt_us_low,rtt_us_high,count\n");
    size_t i = 0;
    for (int bin = 0; bin < 100 && i < n; bin++) {
        double lo = pow(10, bin / 10.0), hi = pow(10, (bin + 1) / 10.0);
        size_t count = 0;
        while (i < n && (rtt[i] < hi || bin == 99)) count++, i++;
        if (count > 0 || rtt[0] < hi) fprintf(f.fp, "%.3f,%.3f,%zu\n", lo, hi, count);
    }
    return app_outfile_commit(&f);
}

#if TESS_HAVE_MPI

/* Wait for every rank without spinning on a core the measured pair needs. */
static void quiet_barrier(void)
{
    MPI_Request req;
    int done = 0;
    MPI_Ibarrier(MPI_COMM_WORLD, &req);
    struct timespec nap = {0, 100000};
    for (MPI_Test(&req, &done, MPI_STATUS_IGNORE); !done; MPI_Test(&req, &done, MPI_STATUS_IGNORE))
        nanosleep(&nap, NULL);
}

/* One pair: a times, b echoes.  a's RTTs (µs) into rtt. */
static void measure_pair(const lat_opts *o, int me, int a, int b, char *buf, double *rtt)
{
    int peer = me == a ? b : a;
    for (long r = 0; r < o->warmup + o->rounds; r++) {
        if (me == a) {
            double t0 = MPI_Wtime();
            MPI_Send(buf, (int)o->bytes, MPI_BYTE, peer, 0, MPI_COMM_WORLD);
            MPI_Recv(buf, (int)o->bytes, MPI_BYTE, peer, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
            if (r >= o->warmup) rtt[r - o->warmup] = (MPI_Wtime() - t0) * 1e6;
        } else {
            MPI_Recv(buf, (int)o->bytes, MPI_BYTE, peer, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
            MPI_Send(buf, (int)o->bytes, MPI_BYTE, peer, 0, MPI_COMM_WORLD);
        }
    }
}

/* Every pair in turn; rank 0 gathers every RTT into all (npairs * rounds)
 * and each pair's median range. */
static void measure_all(const lat_opts *o, int me, int nranks, double *all, double *med_lo,
                        double *med_hi)
{
    char *buf = calloc((size_t)o->bytes, 1);
    double *rtt = malloc((size_t)o->rounds * sizeof *rtt);
    size_t filled = 0;
    *med_lo = INFINITY, *med_hi = 0;
    for (int a = 0; a < nranks; a++)
        for (int b = a + 1; b < nranks; b++) {
            quiet_barrier();
            if (me == a || me == b) measure_pair(o, me, a, b, buf, rtt);
            if (me == a && a != 0) MPI_Send(rtt, (int)o->rounds, MPI_DOUBLE, 0, 1, MPI_COMM_WORLD);
            if (me != 0) continue;
            double *dst = all + filled;
            if (a != 0)
                MPI_Recv(dst, (int)o->rounds, MPI_DOUBLE, a, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
            else memcpy(dst, rtt, (size_t)o->rounds * sizeof *rtt);
            double med = bench_median(dst, (int)o->rounds);
            *med_lo = fmin(*med_lo, med), *med_hi = fmax(*med_hi, med);
            filled += (size_t)o->rounds;
        }
    free(rtt);
    free(buf);
}

static int run(const lat_opts *o)
{
    int me = 0, nranks = 1;
    MPI_Init(NULL, NULL);
    MPI_Comm_rank(MPI_COMM_WORLD, &me);
    MPI_Comm_size(MPI_COMM_WORLD, &nranks);
    if (nranks < 2) {
        fprintf(stderr, "tessera %s: needs 2 or more ranks: mpirun -np 2 tessera %s\n", NAME, NAME);
        MPI_Finalize();
        return 2;
    }
    size_t n = (size_t)nranks * (size_t)(nranks - 1) / 2 * (size_t)o->rounds;
    double *all = me == 0 ? malloc(n * sizeof *all) : NULL;
    int ok = me != 0 || all != NULL;
    MPI_Allreduce(MPI_IN_PLACE, &ok, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
    int rc = ok ? 0 : 1;
    if (!ok && me == 0) fprintf(stderr, "tessera %s: out of memory for %zu samples\n", NAME, n);
    double med_lo = 0, med_hi = 0;
    if (ok) measure_all(o, me, nranks, all, &med_lo, &med_hi);
    if (ok && me == 0) {
        print_summary(o, nranks, all, n, med_lo, med_hi); /* sorts all */
        if (o->profile && write_profile(o, nranks, all, n) != 0) rc = 1;
        if (rc == 0 && o->histogram && write_histogram(o, all, n) != 0) rc = 1;
    }
    free(all);
    MPI_Bcast(&rc, 1, MPI_INT, 0, MPI_COMM_WORLD);
    MPI_Finalize();
    return rc;
}

#else

static int run(const lat_opts *o)
{
    (void)o;
    (void)print_summary, (void)write_profile, (void)write_histogram;
    fprintf(stderr, "tessera %s: this build has no MPI\n", NAME);
    return 1;
}

#endif

int bench_latency_main(int argc, char **argv)
{
    lat_opts o;
    int rc = parse(argc, argv, &o);
    if (rc == 1) return fputs(usage_text, stdout), 0;
    if (rc != 0) return rc;
    if (o.profile && app_outfile_check(o.profile) != 0) return 2;
    if (o.histogram && app_outfile_check(o.histogram) != 0) return 2;
    return run(&o);
}
