/*
 * bench_ckpt.h — what the files of `tessera bench ckpt` share (not part of
 * the library).  Two measurements of include/tessera/checkpoint.h:
 *
 *   overhead  time per iteration of `tessera run pagerank` and `run kmeans`
 *             checkpointing every E iterations against the same run without
 *             checkpoints, in alternating rounds (plain, ckpt, plain, …)
 *   restore   tess_checkpoint_restore of a dense table of N doubles, per N,
 *             through the public API in this process (embedded)
 *
 *   bench_ckpt.c          options, main, the overhead rounds and their report
 *   bench_ckpt_child.c    one child run: spawn, timeout, the metrics it wrote
 *   bench_ckpt_restore.c  the restore measurement
 */
#ifndef TESS_BENCH_CKPT_H
#define TESS_BENCH_CKPT_H

#include <limits.h>
#include <signal.h>
#include <stdint.h>
#include "bench_util.h"

#define BC_NAME "bench ckpt"
#define BC_MAX_SIZES 16

enum { BC_PAGERANK = 1u << 0, BC_KMEANS = 1u << 1, BC_NBODY = 1u << 2 };
enum { BC_OVERHEAD = 1u << 0, BC_RESTORE = 1u << 1 };

typedef struct bc_options {
    unsigned what, apps;
    long rounds, iterations, every, workers, mpirun_np, restore_reps;
    double timeout_s;
    const char *pagerank_gen, *kmeans_gen, *nbody_particles, *tmp_parent;
    uint64_t sizes[BC_MAX_SIZES]; /* restore: doubles per table */
    int nsizes;
    int dry_run;
    int compare_writer; /* also ckpt runs with TESS_CKPT_WRITER=normal */
} bc_options;

/* ---- one child run (bench_ckpt_child.c) ---- */
typedef struct bc_runner {
    char exe[PATH_MAX];    /* this binary */
    char mpirun[PATH_MAX]; /* empty: embedded children */
    char tmpdir[PATH_MAX / 2];
    double timeout_s;
} bc_runner;

/* What a run's metrics say. */
typedef struct bc_result {
    double mean_iteration;   /* mean of iteration_seconds */
    double steady_iteration; /* the mean from iteration `skip` on (bc_read_metrics) */
    double wall, load;       /* wall_seconds, load_seconds */
    double cpu;              /* user + system CPU seconds of the child and its ranks */
    int iterations;
    uint64_t ckpt_bytes; /* bytes left in its checkpoint directory */
    /* the runtime's own figures (rank 0), NAN when the metrics lack them */
    double cut_seconds, write_seconds, bytes_written, checkpoints;
} bc_result;

int bc_runner_init(bc_runner *r, const bc_options *o);
/* Run argv (NULL-terminated) with output into the tmpdir; 0 with the CPU
 * seconds it used in *cpu_out, or -1 after a one-line message (failure,
 * timeout, interruption). */
int bc_run_child(bc_runner *r, char **argv, const char *label, double *cpu_out);
/* Read `path` (a metrics JSON) into *out; 0 or -1 after a message.
 * steady_iteration is the mean over iterations `skip` on: after the first
 * checkpoints, which also save the static tables. */
int bc_read_metrics(const char *path, int skip, bc_result *out);
/* Bytes of the regular files under `dir` (recursively); 0 if none. */
uint64_t bc_dir_bytes(const char *dir);
/* rm -r of a directory this bench made (files and subdirectories). */
void bc_remove_tree(const char *dir);
void bc_print_command(char **argv);

/* ---- restore time (bench_ckpt_restore.c) ---- */
int bc_restore_bench(const bc_options *o, const char *tmpdir);

#endif
