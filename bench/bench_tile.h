/*
 * bench_tile.h — what the parts of `tessera bench tile` share: the options,
 * a child run of a tiles application with its statistics, the arguments
 * that size each application, and the JSON Lines record.
 */
#ifndef TESS_BENCH_TILE_H
#define TESS_BENCH_TILE_H

#include <stddef.h>

typedef struct bt_opts {
    long options, rounds, min_size, confirm;
    const char *mixes, *ccrs, *out, *policies, *parts, *apps;
    char self[4096], tmp[4096], mpirun[4096];
} bt_opts;

/* The tiles applications the bench runs. */
typedef enum { BT_BS, BT_SAR, BT_TEXTURE, BT_APPS } bt_app;

extern const char *const bt_tile_app_names[BT_APPS];

/*
 * A problem of application `app` for `ranks` ranks (weak scaling: the work
 * grows with the rank count; 1 for everything else) at compute/communication
 * ratio `ccr` (Black-Scholes' --iterations; ignored by the others): its
 * arguments appended to argv at *n (strings kept in `buf`), and its cell
 * count.  The texture slide is written once per size into o->tmp.
 */
long bt_app_args(bt_opts *o, bt_app app, int ranks, long ccr, char **argv, int *n, char *buf,
                 size_t cap);
/* Run `tessera run APP ARGS --stats F` (under mpirun -np np when np > 0):
 * its seconds, or -1 when it failed; the statistics JSON (on one line) into
 * stats_copy when given. */
double bt_run_child(bt_opts *o, bt_app app, int np, char **extra, int nextra, char *stats_copy,
                    size_t cap);
/* A 1-rank run once pinned to each core this process may use: the seconds
 * at the mean of their rates (the vCPUs of these machines can differ by
 * 30%, and an unpinned run measures whichever it drew), or -1.  stats gets
 * the last run's statistics. */
double bt_one_rank_seconds(bt_opts *o, bt_app app, char **extra, int nextra, char *stats,
                           size_t cap);
/* Append one JSON Lines record of a run to o->out. */
void bt_record(bt_opts *o, bt_app app, const char *mix, long ccr, int ranks, const char *policy,
               long size, double secs, const char *stats);
/* mpirun found and set up for root and containers; 0, or -1 (a line printed). */
int bt_find_mpirun(bt_opts *o, const char *part);

/* The scaling parts (bench_tile_scale.c). */
void bt_weak_scaling(bt_opts *o);
void bt_strong_scaling(bt_opts *o);
/* Black-Scholes against MR-MPI at 1, 2, 4 ranks (tessera-mrmpi-bs). */
void bt_mrmpi_peer(bt_opts *o);
/* The centralised APC against APC+ at 2 and 3 ranks (bench_tile_central.c). */
void bt_central(bt_opts *o);

#endif
