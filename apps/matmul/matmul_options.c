/*
 * matmul_options.c — the command line of `tessera run matmul`.
 */
#include <stdio.h>
#include <string.h>

#include "matmul_app.h"

static const char mm_usage[] =
    "usage: tessera run matmul --n N [--block B] [--input-a FILE --input-b FILE] [--seed S]\n"
    "         [--workers W] [--partitions P] [--output FILE] [--metrics FILE] [--check]\n"
    "         [--progress | --quiet] [--help]\n"
    "  C = A * B for N x N matrices cut into B x B blocks (default: the least padding\n"
    "  with B <= 512) held in three co-located tables; kernel instance p computes the\n"
    "  block rows of C in its partition with OpenBLAS dgemm on blocks.  Matrix files\n"
    "  are raw little-endian float64, row-major, N*N values (numpy's tofile); without\n"
    "  them A and B are uniform in [-1, 1) from --seed (default 1).  --output writes C\n"
    "  the same way.  --check compares C with one dgemm of the whole matrices on rank 0\n"
    "  against the rounding-error bound 2 N eps (|A||B|).  C is the same bits for every\n"
    "  worker, rank and partition count.  See docs/matmul.md.\n";

static int opts_check(mm_opts *o)
{
    if (o->n == 0) {
        app_error(MM_APP, "option --n is required");
        return -1;
    }
    if (!o->input_a != !o->input_b) {
        app_error(MM_APP, "option --%s: give both --input-a and --input-b, or neither",
                  o->input_a ? "input-b" : "input-a");
        return -1;
    }
    if (o->block > o->n) {
        app_error(MM_APP, "option --block: %ld is larger than --n %ld", o->block, o->n);
        return -1;
    }
    if (o->block == 0) o->block = mm_default_block(o->n);
    const char *const names[] = {"output", "metrics"};
    const char *const paths[] = {o->output, o->metrics};
    return app_outputs_distinct(MM_APP, names, paths, 2);
}

int mm_opts_parse(int argc, char **argv, mm_opts *o)
{
    memset(o, 0, sizeof *o);
    o->seed = 1;
    int progress = APP_PROGRESS_AUTO;
    const app_opt opts[] = {
        {"n", APP_OPT_INT, &o->n, 1, 100000, 0},
        {"block", APP_OPT_INT, &o->block, 1, 8192, 0},
        {"seed", APP_OPT_INT, &o->seed, 0, (double)(1L << 62), 0},
        {"workers", APP_OPT_INT, &o->workers, 1, 4096, 0},
        {"partitions", APP_OPT_INT, &o->partitions, 1, 1 << 20, 0},
        {"input-a", APP_OPT_STRING, &o->input_a, 0, 0, 0},
        {"input-b", APP_OPT_STRING, &o->input_b, 0, 0, 0},
        {"output", APP_OPT_STRING, &o->output, 0, 0, 0},
        {"metrics", APP_OPT_STRING, &o->metrics, 0, 0, 0},
        {"check", APP_OPT_FLAG, &o->check, 0, 0, 1},
        {"progress", APP_OPT_FLAG, &progress, 0, 0, APP_PROGRESS_ON},
        {"quiet", APP_OPT_FLAG, &progress, 0, 0, APP_PROGRESS_OFF},
    };
    int rc =
        app_parse_options(MM_APP, mm_usage, argc, argv, opts, (int)(sizeof opts / sizeof *opts));
    o->progress = (app_progress_mode)progress;
    return rc != 0 ? rc : opts_check(o);
}
