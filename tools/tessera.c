/*
 * tessera.c — the `tessera` command: run an application, generate or convert
 * inputs, benchmark, and describe the build.
 */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "common.h"
#ifndef TESS_TILES_ONLY
#define TESS_TILES_ONLY 0
#endif
#if !TESS_TILES_ONLY
#include "graph.h"
#endif
#include "tessera/tessera.h"
#include "tessera/tile_cuda.h"
#include <sched.h>
#include <unistd.h>
#if TESS_HAVE_OPENCL
#define CL_TARGET_OPENCL_VERSION 120
#include <CL/cl.h>
#endif

int kmeans_gen_points_main(int argc, char **argv);
int bench_pagerank_main(int argc, char **argv);
int bench_kmeans_main(int argc, char **argv);
int bench_tick_main(int argc, char **argv);
int bench_ckpt_main(int argc, char **argv);
int bench_tile_main(int argc, char **argv);
int bench_matmul_main(int argc, char **argv);
int bench_mapreduce_main(int argc, char **argv);
int bench_scaling_main(int argc, char **argv);
int bench_crawl_main(int argc, char **argv);
int bench_latency_main(int argc, char **argv);
int supervise_main(int argc, char **argv);
int workqueue_main(int argc, char **argv);

static void usage(FILE *out)
{
    fprintf(out,
            "usage: tessera COMMAND [ARGS]\n"
            "\n"
            "commands:\n"
            "  run APP [OPTIONS]        run an application (APP: pagerank, kmeans,\n"
            "                           jacobi, fish, pagerank-tick, workqueue,\n"
            "                           blackscholes, sar, texture, nbody, matmul,\n"
            "                           crawl);\n"
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
            "  bench tile [OPTIONS]     the tiles face's policies, the APC+ sweep (--help)\n"
            "  bench ckpt [OPTIONS]     checkpoint overhead and restore time (--help)\n"
            "  bench matmul [OPTIONS]   matmul against ScaLAPACK's pdgemm (--help)\n"
            "  bench mapreduce [OPTIONS] PageRank, k-means against MR-MPI (--help)\n"
            "  bench kmeans [OPTIONS]   k-means against a plain C loop (--help)\n"
            "  bench scaling [OPTIONS]  the tables apps on 1-4 processes, strong and weak\n"
            "  bench crawl [OPTIONS]    crawler throughput vs fetchers and processes\n"
            "  bench latency [OPTIONS]  RTTs between MPI ranks, a profile for --jitter\n"
            "  serve-web [OPTIONS]      a synthetic web on 127.0.0.1 to crawl (--help)\n"
            "  supervise [--max-restarts K] -- COMMAND ARGS...\n"
            "                           run COMMAND; after a failure run it again\n"
            "                           with --restore appended (at most K times)\n"
            "  info                     version and build configuration\n"
            "\n"
            "  --help, --version\n"
            "\n"
            "Launched directly tessera runs embedded (one process, worker threads);\n"
            "under mpirun/srun the same command runs on every rank.\n"
            "\n"
            "Environment (docs/tables.md, docs/tiles.md):\n"
            "  TESS_WORKERS=N       worker threads per rank (a command's --workers wins)\n"
            "  TESS_STEAL=0|1       work stealing off or on\n"
            "  TESS_VERBOSE=1       the runtime's log on stderr\n"
            "  TESS_NODE_SHARE=0    under MPI, ranks of one machine send messages\n"
            "                       instead of sharing memory\n"
            "  TESS_NODE_RANKS=K    treat each K consecutive ranks as one machine\n"
            "                       (tests the paths between machines on one)\n"
            "  TESS_TILE_TRACE=P    tiles: append each finished tile to P.RANK\n"
            "  TESS_TILE_PIN=0      tiles: leave CPU processors unbound (bound one to a\n"
            "                       core when they take all of the rank's own cores)\n"
            "  TESS_WATCHDOG=S      under MPI, end the job when a rank has not answered\n"
            "                       for S seconds (default 60; 0: never); TESS_WATCHDOG_WARN\n"
            "                       says so after fewer (default 10) (docs/failures.md)\n"
            "  TESS_FAULT=P@R[:A]   tests: rank R fails at point P (setup, kernel, tick,\n"
            "                       tile, barrier, checkpoint, shutdown); A: fail, stop, exit\n");
}

/* A subcommand: its name and its main, which gets argv from its own name on. */
typedef struct command {
    const char *name;
    int (*main)(int argc, char **argv);
} command;

static const command apps[] = {
#if !TESS_TILES_ONLY
    {"pagerank", pagerank_main},
    {"kmeans", kmeans_main},
    {"jacobi", jacobi_main},
    {"fish", fish_main},
    {"pagerank-tick", pagerank_tick_main},
    {"workqueue", workqueue_main},
#endif
    {"blackscholes", blackscholes_main},
    {"sar", sar_main},
    {"texture", texture_main},
#if !TESS_TILES_ONLY /* TESS_TILES_ONLY: the tiles applications alone (scripts/gpu-check.sh) */
    {"nbody", nbody_main},
    {"matmul", matmul_main},
    {"crawl", crawl_main},
#endif
};

#if !TESS_TILES_ONLY

static const command benches[] = {
    {"pagerank", bench_pagerank_main}, {"tick", bench_tick_main},
    {"tile", bench_tile_main},         {"ckpt", bench_ckpt_main},
    {"matmul", bench_matmul_main},     {"mapreduce", bench_mapreduce_main},
    {"scaling", bench_scaling_main},   {"crawl", bench_crawl_main},
    {"kmeans", bench_kmeans_main},     {"latency", bench_latency_main},
};
#endif

#define COUNT(a) (sizeof(a) / sizeof *(a))

static const command *find_command(const command *table, size_t n, const char *name)
{
    for (size_t i = 0; name != NULL && i < n; i++)
        if (strcmp(table[i].name, name) == 0) return &table[i];
    return NULL;
}

/* "a, b, c": the names of a table, for messages. */
static const char *names_of(const command *table, size_t n, char *buf, size_t len)
{
    size_t at = 0;
    buf[0] = '\0';
    for (size_t i = 0; i < n && at < len; i++)
        at += (size_t)snprintf(buf + at, len - at, "%s%s", i ? ", " : "", table[i].name);
    return buf;
}

/* Dispatch argv[1] to an entry of table (`what`: "application", ...). */
static int dispatch(const char *cmd, const char *what, const command *table, size_t n, int argc,
                    char **argv)
{
    char names[256];
    const command *c = find_command(table, n, argc >= 2 ? argv[1] : NULL);
    if (c != NULL) return c->main(argc - 1, argv + 1);
    if (argc >= 2 && (strcmp(argv[1], "--help") == 0 || strcmp(argv[1], "-h") == 0)) {
        printf("usage: tessera %s NAME [OPTIONS]; NAME: %s\n"
               "'tessera %s NAME --help' lists its options\n",
               cmd, names_of(table, n, names, sizeof names), cmd);
        return 0;
    }
    if (argc < 2)
        fprintf(stderr, "tessera %s: name an %s (%s)\n", cmd, what,
                names_of(table, n, names, sizeof names));
    else
        fprintf(stderr, "tessera %s: unknown %s '%s' (%s)\n", cmd, what, argv[1],
                names_of(table, n, names, sizeof names));
    return 2;
}

static int cmd_run(int argc, char **argv)
{
    return dispatch("run", "application", apps, COUNT(apps), argc, argv);
}

#if !TESS_TILES_ONLY
static int write_graph(const char *spec, const char *in, const char *out, int cache)
{
    tg_graph g;
    char err[512] = "";
    tg_remove_temporaries_on_signal(); /* a Ctrl-C leaves no temporary of hundreds of MB */
    int rc = spec ? tg_generate(spec, &g, err, sizeof err) : tg_load_file(in, &g, err, sizeof err);
    if (rc == 0)
        rc = cache ? tg_write_cache(out, &g, err, sizeof err)
                   : tg_write_snap(out, &g, err, sizeof err);
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
    /* the cache is renamed over OUT at the end: it must not be IN */
    const char *const name[] = {"IN"}, *const in[] = {argv[1]}, *const out[] = {argv[2]};
    if (app_outputs_spare_inputs(NULL, name, in, 1, name, out, 1) != 0) {
        fprintf(stderr, "tessera convert: %s and %s are the same file; write the cache elsewhere\n",
                argv[1], argv[2]);
        return 2;
    }
    return write_graph(NULL, argv[1], argv[2], 1);
}

static int cmd_bench(int argc, char **argv)
{
    return dispatch("bench", "benchmark", benches, COUNT(benches), argc, argv);
}

#endif

/* The OpenCL platforms and devices the ICD loader lists (this build's
 * `opencl:N` numbering: devices counted over every platform). */
static void info_opencl(void)
{
#if TESS_HAVE_OPENCL
    cl_platform_id pls[16];
    cl_uint npl = 0;
    if (clGetPlatformIDs(16, pls, &npl) != CL_SUCCESS || npl == 0) {
        printf("opencl: no platform (no ICD installed)\n");
        return;
    }
    printf("opencl: %u platform%s\n", npl, npl == 1 ? "" : "s");
    int seen = 0;
    for (cl_uint p = 0; p < npl && p < 16; p++) {
        char pname[128] = "";
        clGetPlatformInfo(pls[p], CL_PLATFORM_NAME, sizeof pname - 1, pname, NULL);
        cl_device_id devs[16];
        cl_uint nd = 0;
        if (clGetDeviceIDs(pls[p], CL_DEVICE_TYPE_ALL, 16, devs, &nd) != CL_SUCCESS) nd = 0;
        for (cl_uint d = 0; d < nd && d < 16; d++, seen++) {
            char dname[128] = "";
            clGetDeviceInfo(devs[d], CL_DEVICE_NAME, sizeof dname - 1, dname, NULL);
            printf("  opencl:%d %s (%s)\n", seen, dname, pname);
        }
    }
#else
    printf("opencl: not in this build (no OpenCL headers and loader at build time)\n");
#endif
}

/* The processor kinds this build and machine offer (--processors). */
static void info_processors(void)
{
    cpu_set_t set;
    long online = sysconf(_SC_NPROCESSORS_ONLN);
    int usable = sched_getaffinity(0, sizeof set, &set) == 0 ? CPU_COUNT(&set) : (int)online;
    printf("cpu: %d cores usable (%ld online)\n", usable, online);
    info_opencl();
    char cuda[2048];
    tess_tile_cuda_info(cuda, sizeof cuda);
    fputs(cuda, stdout);
}

static int cmd_info(int argc, char **argv)
{
    if (argc > 1) {
        fprintf(stderr, "tessera info: unexpected argument '%s' (it takes none)\n", argv[1]);
        return 2;
    }
    char names[256];
    printf("tessera %s (library %s)\n", TESS_VERSION_STRING, tess_version());
    printf("mpi: %s\n", tess_have_mpi() ? "yes" : "no (embedded mode only)");
    printf("applications: %s\n", names_of(apps, COUNT(apps), names, sizeof names));
    info_processors();
    return 0;
}

static int cmd_help(int argc, char **argv)
{
    (void)argc, (void)argv;
    usage(stdout);
    return 0;
}

static int cmd_version(int argc, char **argv)
{
    (void)argc, (void)argv;
    printf("tessera %s\n", tess_version());
    return 0;
}

static const command commands[] = {
    {"run", cmd_run},
#if !TESS_TILES_ONLY
    {"gen", cmd_gen},
    {"gen-points", kmeans_gen_points_main},
    {"convert", cmd_convert},
    {"bench", cmd_bench},
    {"serve-web", serve_web_main},
#endif
    {"supervise", supervise_main},
    {"info", cmd_info},
    {"help", cmd_help},
    {"--help", cmd_help},
    {"-h", cmd_help},
    {"version", cmd_version},
    {"--version", cmd_version},
};

int main(int argc, char **argv)
{
    /* A file-size limit (ulimit -f) makes a write fail with EFBIG, handled
     * like a full disk (message, temporaries removed), instead of killing
     * the process and leaving partial temporaries behind. */
    signal(SIGXFSZ, SIG_IGN);
    if (argc < 2) {
        usage(stderr);
        return 2;
    }
    const command *c = find_command(commands, COUNT(commands), argv[1]);
    if (c != NULL) return c->main(argc - 1, argv + 1);
    fprintf(stderr, "tessera: unknown command '%s' (see tessera --help)\n", argv[1]);
    return 2;
}
