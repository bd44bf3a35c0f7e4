/*
 * starpu_blackscholes.c — the StarPU peer of `tessera bench tile`: the same
 * Black-Scholes kernel (apps/blackscholes/bs_kernel.c) on the same options,
 * under StarPU's history-based `dmda` scheduler, the book cut into a given
 * number of equal blocks.  Built only where StarPU is installed (Debian:
 * libstarpu-dev).
 *
 *   tessera-starpu-bs --options N --iterations K --blocks B --cpus C
 *                     [--slow-last F] [--calibrate R]
 *
 * --slow-last F slows the last CPU worker to the fraction F of its speed the
 * way tessera's cpu@F does (it sleeps t(1/F - 1) after a block of t
 * seconds), so both systems see the same heterogeneous mix.  --calibrate R
 * first runs R untimed rounds so that dmda's performance model has history.
 * Prints one line: "seconds S".
 */
#include <starpu.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "blackscholes/blackscholes.h"

static double slow_fraction = 1.0;
static int slow_worker = -1;

static void bs_block(void *buffers[], void *arg)
{
    const bs_params *p = arg;
    double t0 = tess_now();
    bs_price((const float *)STARPU_VECTOR_GET_PTR(buffers[0]),
             (float *)STARPU_VECTOR_GET_PTR(buffers[1]), STARPU_VECTOR_GET_NX(buffers[0]), p);
    if (starpu_worker_get_id() == slow_worker) {
        double extra = (tess_now() - t0) * (1.0 / slow_fraction - 1.0);
        struct timespec ts = {(time_t)extra, (long)((extra - (double)(time_t)extra) * 1e9)};
        nanosleep(&ts, NULL);
    }
}

static struct starpu_perfmodel bs_model = {.type = STARPU_HISTORY_BASED,
                                           .symbol = "tessera_blackscholes"};
static struct starpu_codelet bs_codelet = {
    .cpu_funcs = {bs_block}, .nbuffers = 2, .modes = {STARPU_R, STARPU_W}, .model = &bs_model};

static double run_once(float *in, float *out, long n, int blocks, bs_params *p)
{
    starpu_data_handle_t hin, hout;
    starpu_vector_data_register(&hin, STARPU_MAIN_RAM, (uintptr_t)in, (uint32_t)n, 12);
    starpu_vector_data_register(&hout, STARPU_MAIN_RAM, (uintptr_t)out, (uint32_t)n, 8);
    struct starpu_data_filter f = {.filter_func = starpu_vector_filter_block,
                                   .nchildren = (unsigned)blocks};
    starpu_data_partition(hin, &f);
    starpu_data_partition(hout, &f);
    double t0 = tess_now();
    for (int i = 0; i < blocks; i++) {
        struct starpu_task *t = starpu_task_create();
        t->cl = &bs_codelet;
        t->handles[0] = starpu_data_get_sub_data(hin, 1, i);
        t->handles[1] = starpu_data_get_sub_data(hout, 1, i);
        t->cl_arg = p;
        t->cl_arg_size = sizeof *p;
        if (starpu_task_submit(t) != 0) return -1;
    }
    starpu_task_wait_for_all();
    double secs = tess_now() - t0;
    starpu_data_unpartition(hin, STARPU_MAIN_RAM);
    starpu_data_unpartition(hout, STARPU_MAIN_RAM);
    starpu_data_unregister(hin);
    starpu_data_unregister(hout);
    return secs;
}

static long arg_long(int argc, char **argv, const char *name, long dflt)
{
    for (int i = 1; i + 1 < argc; i++)
        if (strcmp(argv[i], name) == 0) return strtol(argv[i + 1], NULL, 10);
    return dflt;
}

int main(int argc, char **argv)
{
    long n = arg_long(argc, argv, "--options", 1000000);
    int blocks = (int)arg_long(argc, argv, "--blocks", 64);
    int cpus = (int)arg_long(argc, argv, "--cpus", 2),
        calibrate = (int)arg_long(argc, argv, "--calibrate", 2);
    bs_params p = {0.02f, 0.30f, (int)arg_long(argc, argv, "--iterations", 1), NULL};
    for (int i = 1; i + 1 < argc; i++)
        if (strcmp(argv[i], "--slow-last") == 0) slow_fraction = strtod(argv[i + 1], NULL);
    if (n < 1 || blocks < 1 || blocks > n || cpus < 1 || !(slow_fraction > 0)) {
        fprintf(stderr, "tessera-starpu-bs: bad arguments\n");
        return 2;
    }
    struct starpu_conf conf;
    starpu_conf_init(&conf);
    conf.sched_policy_name = "dmda";
    conf.ncpus = cpus;
    conf.ncuda = 0;
    conf.nopencl = 0;
    if (starpu_init(&conf) != 0) {
        fprintf(stderr, "tessera-starpu-bs: starpu_init failed\n");
        return 1;
    }
    if (slow_fraction < 1.0) slow_worker = (int)starpu_worker_get_count() - 1;
    float *in = malloc((size_t)n * 12), *out = malloc((size_t)n * 8);
    if (in == NULL || out == NULL) return 1;
    bs_generate(0, 0, n, in);
    for (int r = 0; r < calibrate; r++) run_once(in, out, n, blocks, &p);
    free(out); /* fresh output pages, as tessera's run has */
    out = malloc((size_t)n * 8);
    double secs = out ? run_once(in, out, n, blocks, &p) : -1;
    starpu_shutdown();
    free(in);
    free(out);
    if (secs < 0) return 1;
    printf("seconds %.6f\n", secs);
    return 0;
}
