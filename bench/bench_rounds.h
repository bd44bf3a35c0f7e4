/*
 * bench_rounds.h — the one way the benches compare two systems on a noisy
 * machine (DESIGN §7): run A and B in alternating rounds (A first in even
 * rounds, B first in odd ones, so neither always runs on a machine the other
 * has just warmed or heated), then take the median of the rounds' ratios
 * with a distribution-free confidence interval (bench_median_ci).
 */
#ifndef TESS_BENCH_ROUNDS_H
#define TESS_BENCH_ROUNDS_H

#include <stddef.h>

#define BENCH_MAX_ROUNDS 64

/* One timed run of side 0 (A) or 1 (B): seconds, or <= 0 when it failed. */
typedef double (*bench_side_fn)(void *ctx, int side);

/* The seconds of the rounds where both sides ran: t[side][k], k < n. */
typedef struct bench_pair {
    double t[2][BENCH_MAX_ROUNDS];
    int n;
} bench_pair;

/* When a run fails: leave its round out and go on, or end the rounds. */
typedef enum { BENCH_SKIP_FAILED, BENCH_STOP_AT_FAILED } bench_on_failure;

/* Up to `rounds` rounds (at most BENCH_MAX_ROUNDS) of run(ctx, 0) and
 * run(ctx, 1), alternating which goes first, into *out; returns out->n. */
int bench_alternate(bench_side_fn run, void *ctx, long rounds, bench_on_failure on_failure,
                    bench_pair *out);

/* A bench that times several systems in every round (bench matmul,
 * mapreduce, scaling), as bench_rounds_main runs it on its state. */
typedef struct bench_rounds_def {
    size_t state_size; /* the state, zeroed before parse */
    /* argv into the state's options: 0 to run, 1 after --help, -1 after a
     * usage error (message printed). */
    int (*parse)(void *state, int argc, char **argv);
    /* What the rounds need (the programs, a temporary directory) and the
     * banner line: the number of rounds, or -1 after the message. */
    long (*start)(void *state);
    /* Round r, alternating the order of its systems by r: 0 or a failure. */
    int (*one_round)(void *state, int round);
    void (*report)(const void *state); /* when every round ran */
    void (*finish)(void *state);       /* after start, whatever happened */
} bench_rounds_def;

/* The whole of such a bench: the exit status (0, 1 on a failure, 2 on a
 * usage error; 0 after --help). */
int bench_rounds_main(const bench_rounds_def *def, int argc, char **argv);

/* The median of the rounds' ratios, its confidence interval [lo, hi] and
 * that interval's coverage (bench_median_ci). */
typedef struct bench_ratio {
    double median, lo, hi, coverage;
} bench_ratio;

/* The ratios num[k] / den[k] of n >= 1 rounds. */
bench_ratio bench_median_ratio(const double *num, const double *den, int n);

#endif
