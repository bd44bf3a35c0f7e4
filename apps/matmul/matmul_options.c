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
    const char *const paths[] = {o->run.output, o->run.metrics};
    const char *const in_o[] = {"input-a", "input-b"}, *const in_p[] = {o->input_a, o->input_b};
    if (app_outputs_spare_inputs(MM_APP, in_o, in_p, 2, names, paths, 2) != 0) return -1;
    return app_outputs_distinct(MM_APP, names, paths, 2);
}

int mm_opts_parse(int argc, char **argv, mm_opts *o)
{
    memset(o, 0, sizeof *o);
    o->seed = 1;
    const app_opt opts[] = {
        {"n", APP_OPT_INT, &o->n, 1, 100000, 0, NULL, NULL},
        {"block", APP_OPT_INT, &o->block, 1, 8192, 0, NULL, NULL},
        {"seed", APP_OPT_INT, &o->seed, 0, (double)(1L << 62), 0, NULL, NULL},
        {"input-a", APP_OPT_STRING, &o->input_a, 0, 0, 0, NULL, NULL},
        {"input-b", APP_OPT_STRING, &o->input_b, 0, 0, 0, NULL, NULL},
        {"check", APP_OPT_FLAG, &o->check, 0, 0, 1, NULL, NULL},
    };
    int rc = app_run_parse(MM_APP, mm_usage, &o->run, 1 << 20, NULL, opts,
                           (int)(sizeof opts / sizeof *opts), argc, argv);
    return rc != 0 ? rc : opts_check(o);
}
