/*
 * kmeans.h — k-means clustering (Piccolo §4.2) on the tables face, and the
 * point sets it clusters: a points file reader and the --gen generator.
 * Formats and the generator are specified in docs/kmeans.md.
 */
#ifndef TESS_APPS_KMEANS_H
#define TESS_APPS_KMEANS_H

#include <stddef.h>
#include <stdint.h>

/* N points of DIM coordinates, point i at coords[i*dim .. i*dim+dim-1].
 * Owned by the struct; release with kmeans_points_free(). */
typedef struct kmeans_points {
    double *coords;
    uint64_t n;
    int dim;
} kmeans_points;

/* The --gen N:DIM:K[:SEED] spec; seed defaults to 1. */
typedef struct kmeans_gen_spec {
    uint64_t n;
    int dim;
    int k;
    uint64_t seed;
} kmeans_gen_spec;

#define KMEANS_MAX_DIM 4096
#define KMEANS_MAX_K 1000000
#define KMEANS_MAX_POINTS (UINT64_C(1) << 40)
/* |coordinate| limit: with up to KMEANS_MAX_DIM dimensions a squared
 * distance (sum of (2 x 1e150)^2 terms) and a centre's coordinate sum over
 * KMEANS_MAX_POINTS points stay finite, so no result silently overflows. */
#define KMEANS_MAX_ABS 1e150

/* Read a points file (docs/kmeans.md).  0, or -1 with a one-line message
 * ("FILE:LINE: ...", no newline) in err; *out is set only on success. */
int kmeans_points_read(const char *path, kmeans_points *out, char *err, size_t err_cap);

/* Parse "N:DIM:K[:SEED]" (1 <= K <= N).  0, or -1 with the reason in err. */
int kmeans_gen_parse(const char *text, kmeans_gen_spec *out, char *err, size_t err_cap);

/* Generate the points of a spec; the same points on any rank or machine.
 * 0, or -1 when out of memory. */
int kmeans_points_generate(const kmeans_gen_spec *spec, kmeans_points *out);

/* The K true centres of a spec (K*DIM doubles, caller frees); NULL on OOM. */
double *kmeans_gen_centres(const kmeans_gen_spec *spec);

/* Point i of a spec into row_out[0 .. DIM-1], given its true centres. */
void kmeans_gen_point(const kmeans_gen_spec *spec, const double *centres, uint64_t i,
                      double *row_out);

/* Accepts a zeroed struct. */
void kmeans_points_free(kmeans_points *p);

/* The index of point x's nearest centre by squared Euclidean distance, ties
 * to the lowest index; the K centres transposed (ct[d*K + j]). */
int32_t kmeans_nearest_centre(const double *x, const double *ct, int k, int dim);
/* The same, and x added to row c of acc (K rows of DIM sums and a count):
 * one point of an iteration, as the kernel and bench kmeans do it. */
int32_t kmeans_assign_point(const double *x, const double *ct, int k, int dim, double *acc);

/* `tessera gen-points N:DIM:K[:SEED] FILE` (argv[0] = "gen-points"). */
int kmeans_gen_points_main(int argc, char **argv);

/* `tessera run kmeans ...` (argv[0] = "kmeans"); also declared in common.h. */
int kmeans_main(int argc, char **argv);

#endif
