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

static int opts_set_value(mm_opts *o, const char *name, const char *value)
{
    if (strcmp(name, "n") == 0) return app_parse_int(MM_APP, "n", value, 1, 100000, &o->n);
    if (strcmp(name, "block") == 0)
        return app_parse_int(MM_APP, "block", value, 1, 8192, &o->block);
    if (strcmp(name, "seed") == 0)
        return app_parse_int(MM_APP, "seed", value, 0, 1L << 62, &o->seed);
    if (strcmp(name, "workers") == 0)
        return app_parse_int(MM_APP, "workers", value, 1, 4096, &o->workers);
    if (strcmp(name, "partitions") == 0)
        return app_parse_int(MM_APP, "partitions", value, 1, 1 << 20, &o->partitions);
    if (strcmp(name, "input-a") == 0) o->input_a = value;
    else if (strcmp(name, "input-b") == 0) o->input_b = value;
    else if (strcmp(name, "output") == 0) o->output = value;
    else o->metrics = value;
    return 0;
}

static int opt_takes_value(const char *name)
{
    static const char *const names[] = {"n",       "block",   "seed",   "workers", "partitions",
                                        "input-a", "input-b", "output", "metrics"};
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++)
        if (strcmp(name, names[i]) == 0) return 1;
    return 0;
}

static int opts_set_flag(mm_opts *o, const char *name)
{
    if (strcmp(name, "progress") == 0) o->progress = APP_PROGRESS_ON;
    else if (strcmp(name, "quiet") == 0) o->progress = APP_PROGRESS_OFF;
    else if (strcmp(name, "check") == 0) o->check = 1;
    else return -1;
    return 0;
}

static int opts_one(mm_opts *o, int argc, char **argv, int *i)
{
    char name[32];
    const char *arg = argv[*i] + 2;
    const char *eq = strchr(arg, '=');
    size_t len = eq ? (size_t)(eq - arg) : strlen(arg);
    snprintf(name, sizeof name, "%.*s", (int)(len < sizeof name ? len : sizeof name - 1), arg);
    if (len < sizeof name && !eq && opts_set_flag(o, name) == 0) return 0;
    if (len >= sizeof name || !opt_takes_value(name)) {
        app_error(MM_APP, "unknown option '%s' (see --help)", argv[*i]);
        return -1;
    }
    const char *value = eq ? eq + 1 : (*i + 1 < argc ? argv[++*i] : NULL);
    if (!value) {
        app_error(MM_APP, "option --%s: missing value", name);
        return -1;
    }
    return opts_set_value(o, name, value);
}

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
    return 0;
}

int mm_opts_parse(int argc, char **argv, mm_opts *o)
{
    memset(o, 0, sizeof *o);
    o->seed = 1;
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--help") == 0 || strcmp(argv[i], "-h") == 0) {
            fputs(mm_usage, stdout);
            return 1;
        }
        if (strncmp(argv[i], "--", 2) != 0) {
            app_error(MM_APP, "unexpected argument '%s' (see --help)", argv[i]);
            return -1;
        }
        if (opts_one(o, argc, argv, &i) != 0) return -1;
    }
    return opts_check(o);
}
