/*
 * starpu_tiles.c — the StarPU peer of `tessera bench tile`: the same
 * kernels as tessera's tiles applications (Black-Scholes, SAR
 * backprojection, slide texture) on the same data, under StarPU's
 * history-based `dmda` scheduler, the work area cut into a given number of
 * equal blocks of cells (options, pixels, texture blocks).  Built only where
 * StarPU is installed (Debian: libstarpu-dev).
 *
 *   tessera-starpu-tiles --app blackscholes --options N --iterations K ...
 *   tessera-starpu-tiles --app sar --gen P:B:W:H ...
 *   tessera-starpu-tiles --app texture --image FILE.pgm [--block S] ...
 *     common: --blocks B --cpus C [--slow-last F] [--calibrate R]
 *
 * --slow-last F slows the last CPU worker to the fraction F of its speed the
 * way tessera's cpu@F does (it sleeps t(1/F - 1) after a block of t
 * seconds), so both systems see the same heterogeneous mix.  --calibrate R
 * first runs R untimed rounds so that dmda's performance model has history.
 * Prints "seconds S" (the timed run) and "kernel_seconds K" (the sum over
 * workers of the time inside the kernel, slowed worker's sleep excluded).
 */
#include <starpu.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "blackscholes/blackscholes.h"
#include "sar/sar.h"
#include "texture/texture.h"

/* An application: cells of in_bytes (0: no input) and out_bytes, and the
 * kernel over cells [first, first + n). */
typedef struct peer_app {
    const char *name;
    size_t in_bytes, out_bytes;
    long cells;
    void (*run)(const struct peer_app *a, const void *in, void *out, long first, long n);
    bs_params bs;
    sar_scene scene;
    tex_params tex;
    uint8_t *records;
} peer_app;

typedef struct block_arg {
    const peer_app *app;
    const char *in_base, *out_base;
} block_arg;

static double slow_fraction = 1.0;
static int slow_worker = -1;
/* Seconds each worker spent in the kernel (the timed run only), to tell the
 * runtime's own cost from the kernel's speed. */
#define MAX_WORKERS 64
static double kernel_seconds[MAX_WORKERS];

static void run_bs(const peer_app *a, const void *in, void *out, long first, long n)
{
    (void)first;
    bs_price(in, out, n, &a->bs);
}

static void run_sar(const peer_app *a, const void *in, void *out, long first, long n)
{
    (void)in;
    float *o = out;
    for (long i = first; i < first + n; i++, o += 2)
        sar_pixel(&a->scene, i % a->scene.width, i / a->scene.width, o);
}

static void run_texture(const peer_app *a, const void *in, void *out, long first, long n)
{
    const uint8_t *rec = in;
    float *f = out;
    size_t step = tex_record_bytes(a->tex.block);
    for (long i = first; i < first + n; i++, rec += step, f += TEX_FEATURES)
        tex_block_features(&a->tex, i / a->tex.grid_w, i % a->tex.grid_w, rec, f);
}

static void run_block(void *buffers[], void *arg)
{
    const block_arg *b = arg;
    const peer_app *a = b->app;
    double t0 = tess_now();
    int out_at = a->in_bytes ? 1 : 0;
    char *out = (char *)STARPU_VECTOR_GET_PTR(buffers[out_at]);
    long n = (long)STARPU_VECTOR_GET_NX(buffers[out_at]);
    long first = (long)((out - b->out_base) / (long)a->out_bytes);
    a->run(a, a->in_bytes ? (const void *)STARPU_VECTOR_GET_PTR(buffers[0]) : NULL, out, first, n);
    int me = starpu_worker_get_id();
    if (me >= 0 && me < MAX_WORKERS) kernel_seconds[me] += tess_now() - t0;
    if (me == slow_worker) {
        double extra = (tess_now() - t0) * (1.0 / slow_fraction - 1.0);
        struct timespec ts = {(time_t)extra, (long)((extra - (double)(time_t)extra) * 1e9)};
        nanosleep(&ts, NULL);
    }
}

static struct starpu_perfmodel models[3] = {
    {.type = STARPU_HISTORY_BASED, .symbol = "tessera_blackscholes"},
    {.type = STARPU_HISTORY_BASED, .symbol = "tessera_sar"},
    {.type = STARPU_HISTORY_BASED, .symbol = "tessera_texture"}};
static struct starpu_codelet with_input = {
    .cpu_funcs = {run_block}, .nbuffers = 2, .modes = {STARPU_R, STARPU_W}};
static struct starpu_codelet output_only = {
    .cpu_funcs = {run_block}, .nbuffers = 1, .modes = {STARPU_W}};

static double run_once(const peer_app *a, void *in, void *out, int blocks)
{
    starpu_data_handle_t hin = NULL, hout;
    struct starpu_data_filter f = {.filter_func = starpu_vector_filter_block,
                                   .nchildren = (unsigned)blocks};
    if (a->in_bytes) {
        starpu_vector_data_register(&hin, STARPU_MAIN_RAM, (uintptr_t)in, (uint32_t)a->cells,
                                    a->in_bytes);
        starpu_data_partition(hin, &f);
    }
    starpu_vector_data_register(&hout, STARPU_MAIN_RAM, (uintptr_t)out, (uint32_t)a->cells,
                                a->out_bytes);
    starpu_data_partition(hout, &f);
    block_arg arg = {a, in, out};
    struct starpu_codelet *cl = a->in_bytes ? &with_input : &output_only;
    double t0 = tess_now();
    for (int i = 0; i < blocks; i++) {
        struct starpu_task *t = starpu_task_create();
        t->cl = cl;
        int k = 0;
        if (hin) t->handles[k++] = starpu_data_get_sub_data(hin, 1, i);
        t->handles[k] = starpu_data_get_sub_data(hout, 1, i);
        t->cl_arg = &arg;
        t->cl_arg_size = sizeof arg;
        if (starpu_task_submit(t) != 0) return -1;
    }
    starpu_task_wait_for_all();
    double secs = tess_now() - t0;
    if (hin) {
        starpu_data_unpartition(hin, STARPU_MAIN_RAM);
        starpu_data_unregister(hin);
    }
    starpu_data_unpartition(hout, STARPU_MAIN_RAM);
    starpu_data_unregister(hout);
    return secs;
}

static const char *arg_text(int argc, char **argv, const char *name, const char *dflt)
{
    for (int i = 1; i + 1 < argc; i++)
        if (strcmp(argv[i], name) == 0) return argv[i + 1];
    return dflt;
}

static long arg_long(int argc, char **argv, const char *name, long dflt)
{
    const char *t = arg_text(argc, argv, name, NULL);
    return t ? strtol(t, NULL, 10) : dflt;
}

/* The application's data (the input array, or NULL) and its cell count. */
static int setup(peer_app *a, int argc, char **argv, void **in)
{
    a->name = arg_text(argc, argv, "--app", "blackscholes");
    *in = NULL;
    if (strcmp(a->name, "blackscholes") == 0) {
        a->cells = arg_long(argc, argv, "--options", 1000000);
        a->bs =
            (bs_params){0.02f, 0.30f, (int)arg_long(argc, argv, "--iterations", 1), NULL, -1, NULL};
        a->in_bytes = BS_IN_BYTES, a->out_bytes = BS_OUT_BYTES, a->run = run_bs;
        if (a->cells < 1 || (*in = malloc((size_t)a->cells * BS_IN_BYTES)) == NULL) return -1;
        bs_generate(0, 0, a->cells, *in);
        with_input.model = &models[0];
        return 0;
    }
    if (strcmp(a->name, "sar") == 0) {
        unsigned p, b, w, h, seed = 1;
        const char *g = arg_text(argc, argv, "--gen", "256:1024:512:512");
        double t[16];
        int nt;
        if (sscanf(g, "%u:%u:%u:%u:%u", &p, &b, &w, &h, &seed) < 4 ||
            sar_generate(p, b, w, h, seed, &a->scene, t, &nt) != 0)
            return -1;
        a->cells = (long)w * h, a->out_bytes = SAR_PIXEL_BYTES, a->run = run_sar;
        output_only.model = &models[1];
        return 0;
    }
    tex_image img;
    char err[512];
    const char *path = arg_text(argc, argv, "--image", NULL);
    if (path == NULL || tex_read_pnm(path, 0, &img, err, sizeof err) != 0) return -1;
    a->tex = (tex_params){.block = (int)arg_long(argc, argv, "--block", 32),
                          .width = img.width,
                          .height = img.height,
                          .records_fd = -1};
    a->tex.grid_w = img.width / (uint32_t)a->tex.block;
    a->tex.grid_h = img.height / (uint32_t)a->tex.block;
    a->cells = a->tex.grid_w * a->tex.grid_h;
    a->in_bytes = tex_record_bytes(a->tex.block), a->out_bytes = TEX_OUT_BYTES;
    a->run = run_texture;
    *in = a->cells > 0 ? malloc((size_t)a->cells * a->in_bytes) : NULL;
    if (*in != NULL) tex_make_records(&img, &a->tex, 0, a->tex.grid_h, *in);
    free(img.pixels);
    with_input.model = &models[2];
    return *in ? 0 : -1;
}

int main(int argc, char **argv)
{
    peer_app a = {0};
    void *in = NULL;
    int blocks = (int)arg_long(argc, argv, "--blocks", 64);
    int cpus = (int)arg_long(argc, argv, "--cpus", 2),
        calibrate = (int)arg_long(argc, argv, "--calibrate", 2);
    const char *slow = arg_text(argc, argv, "--slow-last", NULL);
    if (slow) slow_fraction = strtod(slow, NULL);
    if (setup(&a, argc, argv, &in) != 0 || blocks < 1 || blocks > a.cells || cpus < 1 ||
        !(slow_fraction > 0)) {
        fprintf(stderr, "tessera-starpu-tiles: bad arguments or input\n");
        return 2;
    }
    struct starpu_conf conf;
    starpu_conf_init(&conf);
    conf.sched_policy_name = "dmda";
    conf.ncpus = cpus;
    conf.ncuda = 0;
    conf.nopencl = 0;
    if (starpu_init(&conf) != 0) {
        fprintf(stderr, "tessera-starpu-tiles: starpu_init failed\n");
        return 1;
    }
    if (slow_fraction < 1.0) slow_worker = (int)starpu_worker_get_count() - 1;
    void *out = malloc((size_t)a.cells * a.out_bytes);
    for (int r = 0; out && r < calibrate; r++) run_once(&a, in, out, blocks);
    free(out); /* fresh output pages, as tessera's run has */
    out = malloc((size_t)a.cells * a.out_bytes);
    memset(kernel_seconds, 0, sizeof kernel_seconds); /* the timed run's alone */
    double secs = out ? run_once(&a, in, out, blocks) : -1;
    double busy = 0;
    for (int w = 0; w < MAX_WORKERS; w++) busy += kernel_seconds[w];
    starpu_shutdown();
    free(in);
    free(out);
    sar_free(&a.scene);
    if (secs < 0) return 1;
    printf("seconds %.6f\nkernel_seconds %.6f\n", secs, busy);
    return 0;
}
