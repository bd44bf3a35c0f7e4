/*
 * mrmpi_kmeans.cpp — the MR-MPI peer of `tessera bench mapreduce` for
 * k-means (Piccolo's Figure 9, MapReduce over MPI standing in for Hadoop):
 * Lloyd's iterations exactly as `tessera run kmeans` defines them (the
 * first K points as initial centres, the nearest centre by squared
 * distance with ties to the lowest index, an empty cluster keeps its
 * centre), as one MapReduce job per iteration:
 *
 *   map      each rank over its share of the points: (nearest centre j,
 *            [coordinates, 1]) per point;
 *   compress the pairs of each rank summed per centre (Hadoop's combiner);
 *   collate  by centre, across ranks;
 *   reduce   the new centre = sums / count;
 *   then the centres are gathered to rank 0 and broadcast for the next map.
 *
 *   mpirun -np R tessera-mrmpi-kmeans --gen N:DIM:K[:SEED] --iterations I [--output FILE]
 *
 * Every rank generates the points (apps/kmeans, the same as `tessera run
 * kmeans --gen`) outside the clock.  Rank 0 prints "iteration_seconds S1
 * S2 ...", each between barriers; --output writes the K centres, one line
 * of DIM %.17g numbers each, as tessera's --output does.
 */
#include <math.h>
#include <mpi.h>
#include <mrmpi/keyvalue.h>
#include <mrmpi/mapreduce.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <vector>

#include "mrmpi_peer.h"

extern "C" {
#include "kmeans/kmeans.h"
}

using MAPREDUCE_NS::KeyValue;
using MAPREDUCE_NS::MapReduce;

typedef struct state {
    kmeans_points pts;
    int k, dim, rank, nranks;
    std::vector<double> centres; /* K * DIM */
} state;

/* The nearest centre with tessera's own function (the same arithmetic and
 * vector code as its kernel): the comparison is of the frameworks, not of
 * two distance loops. */
static int nearest(const double *x, const std::vector<double> &transposed, const state *s)
{
    return kmeans_nearest_centre(x, transposed.data(), s->k, s->dim);
}

static void map_points(int task, KeyValue *kv, void *arg)
{
    state *s = static_cast<state *>(arg);
    uint64_t n = s->pts.n, lo = n * (uint64_t)task / (uint64_t)s->nranks,
             hi = n * (uint64_t)(task + 1) / (uint64_t)s->nranks;
    std::vector<double> rec((size_t)s->dim + 1, 1.0), ct((size_t)s->k * (size_t)s->dim);
    for (int j = 0; j < s->k; j++) /* centres transposed: ct[d*K + j] */
        for (int d = 0; d < s->dim; d++)
            ct[(size_t)d * s->k + j] = s->centres[(size_t)j * s->dim + d];
    for (uint64_t i = lo; i < hi; i++) {
        const double *x = s->pts.coords + i * (uint64_t)s->dim;
        int32_t j = nearest(x, ct, s);
        memcpy(rec.data(), x, (size_t)s->dim * sizeof(double));
        kv->add(reinterpret_cast<char *>(&j), sizeof j, reinterpret_cast<char *>(rec.data()),
                (int)(rec.size() * sizeof(double)));
    }
}

/* Sum the [coordinates, count] records of one centre (compress and reduce). */
static void sum_records(char *key, int keybytes, char *mv, int nvalues, int *sizes, KeyValue *kv,
                        void *arg)
{
    state *s = static_cast<state *>(arg);
    std::vector<double> total((size_t)s->dim + 1, 0.0), rec((size_t)s->dim + 1);
    for (int i = 0; i < nvalues; i++) {
        memcpy(rec.data(), mv, rec.size() * sizeof(double));
        for (size_t d = 0; d < rec.size(); d++) total[d] += rec[d];
        mv += sizes[i];
    }
    kv->add(key, keybytes, reinterpret_cast<char *>(total.data()),
            (int)(total.size() * sizeof(double)));
}

static void take_centre(char *key, int, char *value, int, void *arg)
{
    state *s = static_cast<state *>(arg);
    int32_t j;
    memcpy(&j, key, sizeof j);
    std::vector<double> total((size_t)s->dim + 1);
    memcpy(total.data(), value, total.size() * sizeof(double));
    for (int d = 0; total[(size_t)s->dim] > 0 && d < s->dim; d++)
        s->centres[(size_t)j * s->dim + d] = total[(size_t)d] / total[(size_t)s->dim];
}

/* One job per iteration on the same MapReduce object: map() without the
 * add flag starts a new data set in the pages already allocated (a new
 * object per iteration paid for fresh pages every time). */
static void iterate(MapReduce *mr, state *s)
{
    mr->map(s->nranks, map_points, s);
    mr->compress(sum_records, s);
    mr->collate(NULL);
    mr->reduce(sum_records, s);
    mr->gather(1);
    mr->scan(take_centre, s);
    MPI_Bcast(s->centres.data(), (int)s->centres.size(), MPI_DOUBLE, 0, MPI_COMM_WORLD);
}

int main(int argc, char **argv)
{
    state s = {};
    mrmpi_start(&argc, &argv, &s.rank, &s.nranks);
    const char *output = mrmpi_arg(argc, argv, "--output", NULL);
    int iterations = atoi(mrmpi_arg(argc, argv, "--iterations", "10"));
    kmeans_gen_spec spec;
    char err[256];
    if (iterations < 1 ||
        kmeans_gen_parse(mrmpi_arg(argc, argv, "--gen", "1000000:8:16"), &spec, err, sizeof err) != 0 ||
        kmeans_points_generate(&spec, &s.pts) != 0) {
        if (s.rank == 0) fprintf(stderr, "tessera-mrmpi-kmeans: bad --gen or --iterations\n");
        MPI_Finalize();
        return 2;
    }
    s.k = spec.k;
    s.dim = s.pts.dim;
    s.centres.assign(s.pts.coords, s.pts.coords + (size_t)s.k * (size_t)s.dim);
    MapReduce *mr = new MapReduce(MPI_COMM_WORLD);
    mr->verbosity = 0;
    mr->memsize = 16; /* MB per page: the compressed pairs are K per rank */
    std::vector<double> secs;
    for (int it = 0; it < iterations; it++) {
        MPI_Barrier(MPI_COMM_WORLD);
        double t0 = MPI_Wtime();
        iterate(mr, &s);
        MPI_Barrier(MPI_COMM_WORLD);
        secs.push_back(MPI_Wtime() - t0);
    }
    int rc = 0;
    if (s.rank == 0 && output) {
        FILE *fp = fopen(output, "w");
        for (int j = 0; fp && j < s.k; j++) {
            for (int d = 0; d < s.dim; d++)
                fprintf(fp, d ? " %.17g" : "%.17g", s.centres[(size_t)j * s.dim + d]);
            fputc('\n', fp);
        }
        if (!fp || fclose(fp) != 0) {
            fprintf(stderr, "tessera-mrmpi-kmeans: cannot write %s\n", output);
            rc = 1;
        }
    }
    mrmpi_report(s.rank, rc, secs);
    delete mr;
    kmeans_points_free(&s.pts);
    MPI_Finalize();
    return rc;
}
