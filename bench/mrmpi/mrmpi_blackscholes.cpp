/*
 * mrmpi_blackscholes.cpp — the MR-MPI peer of `tessera bench tile`, as the
 * APC+ paper compared with MapReduce: the same Black-Scholes kernel
 * (apps/blackscholes/bs_kernel.c) over the same options spread over the
 * ranks, as a map over option blocks (each rank maps the blocks of its own
 * share, MR-MPI's chunk map style) emitting (block, prices), then a gather
 * of the key/value pairs to rank 0, which scans them into the price array.
 * Built only where MR-MPI is installed (Debian: libmrmpi-dev), in C++:
 * Debian's library exports MR-MPI's C++ classes, not its C interface.
 *
 *   mpirun -np R tessera-mrmpi-bs --options N --iterations K --blocks B [--check]
 *
 * Each rank generates its share of the book before the clock starts, as
 * `tessera run blackscholes` does.  Timed: from a barrier to the prices
 * complete on rank 0.  --check compares them with the kernel run over the
 * whole book on rank 0.  Rank 0 prints one line: "seconds S".
 */
#include <mpi.h>
#include <mrmpi/keyvalue.h>
#include <mrmpi/mapreduce.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

extern "C" {
#include "blackscholes/blackscholes.h"
}

using MAPREDUCE_NS::KeyValue;
using MAPREDUCE_NS::MapReduce;

typedef struct peer {
    long n, blocks, first; /* options, blocks, first option of this rank's share */
    float *in;             /* this rank's share */
    float *out;            /* rank 0: every price */
    bs_params p;
} peer;

static long block_start(const peer *q, long b) { return q->n * b / q->blocks; }

/* Map task b (MR-MPI runs it on the rank that holds block b: chunk style). */
static void price_block(int b, KeyValue *kv, void *arg)
{
    peer *q = static_cast<peer *>(arg);
    long lo = block_start(q, b), hi = block_start(q, b + 1);
    float *prices = static_cast<float *>(malloc((size_t)(hi - lo) * BS_OUT_BYTES + 1));
    if (prices == NULL) MPI_Abort(MPI_COMM_WORLD, 1);
    bs_price(q->in + 3 * (lo - q->first), prices, hi - lo, &q->p);
    kv->add(reinterpret_cast<char *>(&b), sizeof b, reinterpret_cast<char *>(prices),
            (int)((hi - lo) * BS_OUT_BYTES));
    free(prices);
}

static void collect(char *key, int keybytes, char *value, int valuebytes, void *arg)
{
    peer *q = static_cast<peer *>(arg);
    int b;
    (void)keybytes;
    memcpy(&b, key, sizeof b);
    memcpy(q->out + 2 * block_start(q, b), value, (size_t)valuebytes);
}

static long arg_long(int argc, char **argv, const char *name, long dflt)
{
    for (int i = 1; i + 1 < argc; i++)
        if (strcmp(argv[i], name) == 0) return strtol(argv[i + 1], NULL, 10);
    return dflt;
}

/* This rank's share: the blocks MR-MPI's chunk style maps here. */
static int setup(peer *q, int rank, int nranks)
{
    long b0 = q->blocks * rank / nranks, b1 = q->blocks * (rank + 1) / nranks;
    q->first = block_start(q, b0);
    long count = block_start(q, b1) - q->first;
    q->in = static_cast<float *>(malloc((size_t)(count > 0 ? count : 1) * BS_IN_BYTES));
    if (rank == 0) q->out = static_cast<float *>(malloc((size_t)q->n * BS_OUT_BYTES));
    if (q->in == NULL || (rank == 0 && q->out == NULL)) return -1;
    bs_generate(0, q->first, count, q->in);
    return 0;
}

static int check(const peer *q)
{
    float *in = static_cast<float *>(malloc((size_t)q->n * BS_IN_BYTES));
    float *ref = static_cast<float *>(malloc((size_t)q->n * BS_OUT_BYTES));
    if (in == NULL || ref == NULL) return -1;
    bs_generate(0, 0, q->n, in);
    bs_price(in, ref, q->n, &q->p);
    int same = memcmp(ref, q->out, (size_t)q->n * BS_OUT_BYTES) == 0;
    free(in);
    free(ref);
    return same ? 0 : -1;
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int rank, nranks, do_check = 0;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &nranks);
    for (int i = 1; i < argc; i++) do_check |= strcmp(argv[i], "--check") == 0;
    peer q = {};
    q.n = arg_long(argc, argv, "--options", 1000000);
    q.blocks = arg_long(argc, argv, "--blocks", 64);
    q.p = bs_params{0.02f, 0.30f, (int)arg_long(argc, argv, "--iterations", 1), NULL, -1, NULL};
    if (q.n < 1 || q.blocks < nranks || q.blocks > q.n || q.p.iterations < 1 ||
        q.n / q.blocks * BS_OUT_BYTES > (1L << 30)) {
        if (rank == 0) fprintf(stderr, "tessera-mrmpi-bs: bad arguments\n");
        MPI_Finalize();
        return 2;
    }
    if (setup(&q, rank, nranks) != 0) MPI_Abort(MPI_COMM_WORLD, 1);
    MapReduce *mr = new MapReduce(MPI_COMM_WORLD);
    mr->mapstyle = 0; /* chunk: task b on the rank that holds block b */
    mr->memsize = (int)((q.n / q.blocks * BS_OUT_BYTES >> 20) * 2 + 64);
    mr->verbosity = 0;
    MPI_Barrier(MPI_COMM_WORLD);
    double t0 = MPI_Wtime();
    mr->map((int)q.blocks, price_block, &q);
    mr->gather(1);
    mr->scan(collect, &q); /* collective; after the gather only rank 0 has pairs */
    double secs = MPI_Wtime() - t0;
    delete mr;
    int rc = 0;
    if (rank == 0 && do_check && check(&q) != 0) {
        fprintf(stderr, "tessera-mrmpi-bs: prices differ from the kernel's\n");
        rc = 1;
    }
    if (rank == 0 && rc == 0) printf("seconds %.6f\n", secs);
    free(q.in);
    free(q.out);
    MPI_Finalize();
    return rc;
}
