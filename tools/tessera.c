/*
 * tessera.c — the `tessera` command: run an application, generate or convert
 * inputs, benchmark, and describe the build.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "common.h"
#include "graph.h"
#include "tessera/tessera.h"

int kmeans_gen_points_main(int argc, char **argv);
int bench_pagerank_main(int argc, char **argv);
int bench_tick_main(int argc, char **argv);
int bench_ckpt_main(int argc, char **argv);
int supervise_main(int argc, char **argv);
int workqueue_main(int argc, char **argv);

static void usage(FILE *out)
{
    fprintf(out,
            "usage: tessera COMMAND [ARGS]\n"
            "\n"
            "commands:\n"
            "  run APP [OPTIONS]        run an application (APP: pagerank, kmeans,\n"
            "                           jacobi, fish, pagerank-tick, workqueue);\n"
            "                           'tessera run APP --help' lists its options\n"
            "  gen SPEC FILE [--cache]  write a generated graph as a SNAP edge list\n"
            "                           (or as a binary graph cache with --cache);\n"
            "                           SPEC: rmat:SCALE[:EF[:SEED]], uniform:N:M[:SEED],\n"
            "                           web:PAGES[:SEED]\n"
            "  gen-points N:DIM:K[:SEED] FILE   write generated k-means points\n"
            "  convert IN OUT           convert a SNAP edge list (plain or gzip) to a\n"
            "                           binary graph cache for fast reloading\n"
            "  bench pagerank [OPTIONS] PageRank against a CSR reference (--help)\n"
            "  bench tick [OPTIONS]     the tick face's algorithms under jitter (--help)\n"
            "  bench ckpt [OPTIONS]     checkpoint overhead and restore time (--help)\n"
            "  supervise [--max-restarts K] -- COMMAND ARGS...\n"
            "                           run COMMAND; after a failure run it again\n"
            "                           with --restore appended (at most K times)\n"
            "  info                     version and build configuration\n"
            "\n"
            "  --help, --version\n"
            "\n"
            "Launched directly tessera runs embedded (one process, worker threads);\n"
            "under mpirun/srun the same command runs on every rank.\n");
}

#define APP_NAMES "pagerank, kmeans, jacobi, fish, pagerank-tick, workqueue"

static int cmd_run(int argc, char **argv)
{
    if (argc < 2) {
        fprintf(stderr, "tessera run: name an application (%s)\n", APP_NAMES);
        return 2;
    }
    if (strcmp(argv[1], "pagerank") == 0) return pagerank_main(argc - 1, argv + 1);
    if (strcmp(argv[1], "kmeans") == 0) return kmeans_main(argc - 1, argv + 1);
    if (strcmp(argv[1], "jacobi") == 0) return jacobi_main(argc - 1, argv + 1);
    if (strcmp(argv[1], "fish") == 0) return fish_main(argc - 1, argv + 1);
    if (strcmp(argv[1], "pagerank-tick") == 0) return pagerank_tick_main(argc - 1, argv + 1);
    if (strcmp(argv[1], "workqueue") == 0) return workqueue_main(argc - 1, argv + 1);
    fprintf(stderr, "tessera run: unknown application '%s' (%s)\n", argv[1], APP_NAMES);
    return 2;
}

static int write_graph(const char *spec, const char *in, const char *out, int cache)
{
    tg_graph g;
    char err[512] = "";
    int rc = spec ? tg_generate(spec, &g, err, sizeof err) : tg_load_file(in, &g, err, sizeof err);
    if (rc == 0)
        rc = cache ? tg_write_cache(out, &g, err, sizeof err) : tg_write_snap(out, &g, err, sizeof err);
    if (rc != 0) fprintf(stderr, "tessera %s: %s\n", spec ? "gen" : "convert", err);
    tg_free(&g);
    return rc == 0 ? 0 : 1;
}

static int cmd_gen(int argc, char **argv)
{
    const char *pos[2] = {NULL, NULL};
    int npos = 0, cache = 0;
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--cache") == 0) cache = 1;
        else if (strcmp(argv[i], "--help") == 0) {
            printf("usage: tessera gen SPEC FILE [--cache]\n");
            return 0;
        } else if (argv[i][0] == '-' && argv[i][1] == '-') {
            fprintf(stderr, "tessera gen: unknown option '%s'\n", argv[i]);
            return 2;
        } else if (npos < 2) pos[npos++] = argv[i];
        else {
            fprintf(stderr, "tessera gen: unexpected argument '%s'\n", argv[i]);
            return 2;
        }
    }
    if (npos != 2) {
        fprintf(stderr, "tessera gen: usage: tessera gen SPEC FILE [--cache]\n");
        return 2;
    }
    return write_graph(pos[0], NULL, pos[1], cache);
}

static int cmd_convert(int argc, char **argv)
{
    if (argc == 2 && strcmp(argv[1], "--help") == 0) {
        printf("usage: tessera convert IN OUT   (SNAP edge list -> binary graph cache)\n");
        return 0;
    }
    if (argc != 3) {
        fprintf(stderr, "tessera convert: usage: tessera convert IN OUT\n");
        return 2;
    }
    return write_graph(NULL, argv[1], argv[2], 1);
}

static int cmd_bench(int argc, char **argv)
{
    if (argc >= 2 && strcmp(argv[1], "pagerank") == 0) return bench_pagerank_main(argc - 1, argv + 1);
    if (argc >= 2 && strcmp(argv[1], "tick") == 0) return bench_tick_main(argc - 1, argv + 1);
    if (argc >= 2 && strcmp(argv[1], "ckpt") == 0) return bench_ckpt_main(argc - 1, argv + 1);
    fprintf(stderr, "tessera bench: unknown benchmark '%s' (pagerank, tick, ckpt)\n",
            argc >= 2 ? argv[1] : "");
    return 2;
}

static int cmd_info(void)
{
    printf("tessera %s (library %s)\n", TESS_VERSION_STRING, tess_version());
    printf("mpi: %s\n", tess_have_mpi() ? "yes" : "no (embedded mode only)");
    printf("applications: %s\n", APP_NAMES);
    return 0;
}

int main(int argc, char **argv)
{
    if (argc < 2) {
        usage(stderr);
        return 2;
    }
    const char *cmd = argv[1];
    if (strcmp(cmd, "--help") == 0 || strcmp(cmd, "-h") == 0 || strcmp(cmd, "help") == 0) {
        usage(stdout);
        return 0;
    }
    if (strcmp(cmd, "--version") == 0 || strcmp(cmd, "version") == 0) {
        printf("tessera %s\n", tess_version());
        return 0;
    }
    if (strcmp(cmd, "run") == 0) return cmd_run(argc - 1, argv + 1);
    if (strcmp(cmd, "gen") == 0) return cmd_gen(argc - 1, argv + 1);
    if (strcmp(cmd, "gen-points") == 0) return kmeans_gen_points_main(argc - 1, argv + 1);
    if (strcmp(cmd, "convert") == 0) return cmd_convert(argc - 1, argv + 1);
    if (strcmp(cmd, "bench") == 0) return cmd_bench(argc - 1, argv + 1);
    if (strcmp(cmd, "supervise") == 0) return supervise_main(argc - 1, argv + 1);
    if (strcmp(cmd, "info") == 0) return cmd_info();
    fprintf(stderr, "tessera: unknown command '%s' (see tessera --help)\n", cmd);
    return 2;
}
