/*
 * gen_points.c — `tessera gen-points N:DIM:K[:SEED] FILE`: write the points
 * that `tessera run kmeans --gen N:DIM:K[:SEED]` clusters, so that tests and
 * other programs can read exactly the same points.  Streams point by point
 * (no N*DIM array) and publishes the file atomically.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../common/common.h"
#include "kmeans.h"

static const char gen_points_usage[] =
    "usage: tessera gen-points N:DIM:K[:SEED] FILE\n"
    "  Write N points of DIM coordinates drawn around K true centres (seed 1 by\n"
    "  default), one point per line, coordinates printed with %.17g.\n";

static void gen_points_write(FILE *fp, const kmeans_gen_spec *g, const double *centres, double *row)
{
    fprintf(fp, "# tessera gen-points %llu:%d:%d:%llu\n", (unsigned long long)g->n, g->dim, g->k,
            (unsigned long long)g->seed);
    for (uint64_t i = 0; i < g->n; i++) {
        kmeans_gen_point(g, centres, i, row);
        for (int d = 0; d < g->dim; d++) fprintf(fp, d ? " %.17g" : "%.17g", row[d]);
        fputc('\n', fp);
    }
}

static int gen_points_run(const kmeans_gen_spec *g, const char *path)
{
    double *centres = kmeans_gen_centres(g);
    double *row = malloc((size_t)g->dim * sizeof *row);
    app_outfile out;
    int rc = 1;
    if (!centres || !row) app_error("gen-points", "out of memory");
    else if (app_outfile_open(&out, path) == 0) {
        gen_points_write(out.fp, g, centres, row);
        rc = app_outfile_commit(&out) == 0 ? 0 : 1;
    }
    free(row);
    free(centres);
    return rc;
}

int kmeans_gen_points_main(int argc, char **argv)
{
    if (argc == 2 && (strcmp(argv[1], "--help") == 0 || strcmp(argv[1], "-h") == 0)) {
        fputs(gen_points_usage, stdout);
        return 0;
    }
    if (argc != 3) {
        app_error("gen-points", "expected N:DIM:K[:SEED] FILE (see --help)");
        return 2;
    }
    kmeans_gen_spec g;
    char err[256];
    if (kmeans_gen_parse(argv[1], &g, err, sizeof err) != 0) {
        app_error("gen-points", "%s", err);
        return 2;
    }
    return gen_points_run(&g, argv[2]);
}
