/*
 * mrmpi_pagerank.cpp — the MR-MPI peer of `tessera bench mapreduce` for
 * PageRank (Piccolo's Figure 9, with MapReduce over MPI standing in for
 * Hadoop): the formula of DESIGN §6 (PR0 = 1/N; PR' = (1-d)/N + d (sum of
 * PR(u)/outdeg(u) over in-edges + D/N), D the rank of the dangling
 * vertices; duplicate edges count) as MapReduce jobs, the way a Hadoop
 * program writes it:
 *
 *   graph  key v -> its out-neighbours, spread by MR-MPI's hash of v;
 *   ranks  key v -> PR(v), spread the same way.
 *   Per iteration: map both into one job (tagged values), collate by v,
 *   reduce: emit (u, PR(v)/outdeg(v)) per out-edge and (v, 0) so that every
 *   vertex appears, add PR(v) of a dangling v to this rank's D; an
 *   MPI_Allreduce of D; collate the contributions by u; reduce: the new
 *   rank.  The graph is joined with the ranks every iteration, as a
 *   MapReduce program keeps no state between jobs.
 *
 *   mpirun -np R tessera-mrmpi-pagerank --gen SPEC --iterations I [--output FILE]
 *                                       [--memsize MB (default: fitted to the graph)]
 *
 * Every rank generates the graph (tools/graph, the same as `tessera run
 * pagerank --gen SPEC`) and maps its share of the edges into the graph job,
 * outside the clock.  Rank 0 prints "iteration_seconds S1 S2 ...", each
 * between barriers; --output writes "id<TAB>rank" lines by ascending id, as
 * tessera's --output does.
 */
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
#include "graph.h"
}

using MAPREDUCE_NS::KeyValue;
using MAPREDUCE_NS::MapReduce;

#define DAMPING 0.85

typedef struct state {
    const tg_graph *g;
    int rank, nranks;
    double dangling; /* this rank's share of D in the current iteration */
    double base;     /* (1 - d) / N + d D / N, for the second reduce */
    double *all;     /* rank 0 at the end: every rank, by internal index */
} state;

enum { TAG_ADJ = 1, TAG_RANK = 2 };

/* Rank r's share of the edges, grouped by source: (src, [dst...]). */
static void map_edges(int task, KeyValue *kv, void *arg)
{
    state *s = static_cast<state *>(arg);
    const tg_graph *g = s->g;
    uint64_t lo = g->ne * (uint64_t)task / (uint64_t)s->nranks;
    uint64_t hi = g->ne * (uint64_t)(task + 1) / (uint64_t)s->nranks;
    for (uint64_t e = lo; e < hi; e++) {
        uint64_t v = g->src[e];
        uint32_t rec[2] = {TAG_ADJ, g->dst[e]};
        kv->add(reinterpret_cast<char *>(&v), sizeof v, reinterpret_cast<char *>(rec), sizeof rec);
    }
}

/* The first ranks, 1/N, for rank r's share of the vertices. */
static void map_initial_ranks(int task, KeyValue *kv, void *arg)
{
    state *s = static_cast<state *>(arg);
    uint64_t n = s->g->nv;
    for (uint64_t v = n * (uint64_t)task / (uint64_t)s->nranks;
         v < n * (uint64_t)(task + 1) / (uint64_t)s->nranks; v++) {
        double pr = 1.0 / (double)n;
        kv->add(reinterpret_cast<char *>(&v), sizeof v, reinterpret_cast<char *>(&pr), sizeof pr);
    }
}

/* Copy a job's pairs into another job, adding the tag of ranks. */
static void tag_rank(uint64_t, char *key, int keybytes, char *value, int valuebytes, KeyValue *kv,
                     void *)
{
    char rec[16];
    uint32_t tag = TAG_RANK;
    memcpy(rec, &tag, 4);
    memcpy(rec + 8, value, (size_t)valuebytes);
    kv->add(key, keybytes, rec, 16);
}

static void copy_pair(uint64_t, char *key, int keybytes, char *value, int valuebytes, KeyValue *kv,
                      void *)
{
    kv->add(key, keybytes, value, valuebytes);
}

/* v's out-neighbours and rank: its contributions. */
static void contribute(char *key, int keybytes, char *mv, int nvalues, int *sizes, KeyValue *kv,
                       void *arg)
{
    state *s = static_cast<state *>(arg);
    double pr = 0;
    std::vector<uint32_t> out;
    for (int i = 0; i < nvalues; i++) {
        uint32_t tag;
        memcpy(&tag, mv, 4);
        if (tag == TAG_RANK) memcpy(&pr, mv + 8, sizeof pr);
        else {
            uint32_t u;
            memcpy(&u, mv + 4, 4);
            out.push_back(u);
        }
        mv += sizes[i];
    }
    double zero = 0;
    kv->add(key, keybytes, reinterpret_cast<char *>(&zero), sizeof zero);
    if (out.empty()) {
        s->dangling += pr;
        return;
    }
    double share = pr / (double)out.size();
    for (uint32_t u : out) {
        uint64_t k = u;
        kv->add(reinterpret_cast<char *>(&k), sizeof k, reinterpret_cast<char *>(&share),
                sizeof share);
    }
}

static void new_rank(char *key, int keybytes, char *mv, int nvalues, int *sizes, KeyValue *kv,
                     void *arg)
{
    state *s = static_cast<state *>(arg);
    double sum = 0;
    for (int i = 0; i < nvalues; i++) {
        double c;
        memcpy(&c, mv, sizeof c);
        sum += c;
        mv += sizes[i];
    }
    double pr = s->base + DAMPING * sum;
    kv->add(key, keybytes, reinterpret_cast<char *>(&pr), sizeof pr);
}

static void collect(char *key, int, char *value, int, void *arg)
{
    state *s = static_cast<state *>(arg);
    uint64_t v;
    memcpy(&v, key, sizeof v);
    memcpy(&s->all[v], value, sizeof(double));
}

/* One iteration: the ranks in `ranks` become the next ones, in `job`.
 * map() without the add flag starts a new data set in the job's pages, so
 * the two objects take turns instead of a new object per iteration paying
 * for fresh pages every time. */
static void iterate(MapReduce *graph, MapReduce *ranks, MapReduce *job, state *s)
{
    job->map(graph, copy_pair, NULL);
    job->map(ranks, tag_rank, NULL, 1);
    job->collate(NULL);
    s->dangling = 0;
    job->reduce(contribute, s);
    double d = 0;
    MPI_Allreduce(&s->dangling, &d, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
    double n = (double)s->g->nv;
    s->base = (1.0 - DAMPING) / n + DAMPING * d / n;
    job->collate(NULL);
    job->reduce(new_rank, s);
}

static MapReduce *new_job(int memsize)
{
    MapReduce *mr = new MapReduce(MPI_COMM_WORLD);
    mr->verbosity = 0;
    mr->memsize = memsize;
    return mr;
}

static int write_ranks(const char *path, const state *s)
{
    FILE *fp = fopen(path, "w");
    if (!fp) return -1;
    for (uint64_t v = 0; v < s->g->nv; v++)
        fprintf(fp, "%llu\t%.17g\n", (unsigned long long)s->g->ids[v], s->all[v]);
    return fclose(fp) == 0 ? 0 : -1;
}

int main(int argc, char **argv)
{
    state s = {};
    mrmpi_start(&argc, &argv, &s.rank, &s.nranks);
    const char *spec = mrmpi_arg(argc, argv, "--gen", "web:200000");
    const char *output = mrmpi_arg(argc, argv, "--output", NULL);
    int iterations = atoi(mrmpi_arg(argc, argv, "--iterations", "10"));
    tg_graph g = {};
    char err[256];
    if (iterations < 1 || tg_generate(spec, &g, err, sizeof err) != 0) {
        if (s.rank == 0) fprintf(stderr, "tessera-mrmpi-pagerank: %s\n", iterations < 1 ? "bad --iterations" : err);
        MPI_Finalize();
        return 2;
    }
    s.g = &g;
    /* Pages big enough that no job spills to disk (MR-MPI writes a data set
     * larger than one page to files), and no bigger: MR-MPI touches its
     * pages, and on this VM a fresh page costs more than its use.  A pair
     * of a job is about 48 bytes with MR-MPI's alignment; twice that. */
    long fit = (long)((g.ne + g.nv) * 96 / (uint64_t)s.nranks >> 20) + 8;
    int memsize = atoi(mrmpi_arg(argc, argv, "--memsize", "0"));
    if (memsize <= 0) memsize = (int)(fit < 16 ? 16 : fit);
    MapReduce *graph = new_job(memsize), *turn[2] = {new_job(memsize), new_job(memsize)};
    graph->map(s.nranks, map_edges, &s);
    graph->aggregate(NULL); /* the edges of v where MR-MPI's hash puts v */
    turn[0]->map(s.nranks, map_initial_ranks, &s);
    std::vector<double> secs;
    for (int it = 0; it < iterations; it++) {
        MPI_Barrier(MPI_COMM_WORLD);
        double t0 = MPI_Wtime();
        iterate(graph, turn[it % 2], turn[(it + 1) % 2], &s);
        MPI_Barrier(MPI_COMM_WORLD);
        secs.push_back(MPI_Wtime() - t0);
    }
    MapReduce *ranks = turn[iterations % 2];
    int rc = 0;
    if (output) {
        ranks->gather(1);
        if (s.rank == 0) s.all = static_cast<double *>(calloc(g.nv, sizeof(double)));
        ranks->scan(collect, &s);
        if (s.rank == 0 && write_ranks(output, &s) != 0) {
            fprintf(stderr, "tessera-mrmpi-pagerank: cannot write %s\n", output);
            rc = 1;
        }
    }
    mrmpi_report(s.rank, rc, secs);
    delete graph;
    delete turn[0];
    delete turn[1];
    free(s.all);
    tg_free(&g);
    MPI_Finalize();
    return rc;
}
