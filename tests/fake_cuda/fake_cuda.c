/*
 * fake_cuda.c — a stand-in for the CUDA driver (built as libcuda.so.1 in
 * build/tests/fake_cuda), so that the host side of the CUDA processors
 * (src/tile/cuda.c: loading the driver, devices, pooled and pinned memory,
 * tiles in parts over streams, error messages) is tested on machines
 * without a GPU.  Device memory is host memory, a stream runs its work only
 * when it is synchronised (as late as a GPU may run it), and a
 * "launch" runs a host stand-in of the kernel that writes where each
 * output cell came from (its option's inputs, its pixel or block
 * coordinates), so a test sees every part land in its place.  It does NOT
 * run the device code: bitwise equality with the CPU is a GPU-only check
 * (scripts/gpu-check.sh).
 *
 * Environment: FAKE_CUDA_DEVICES (default 1), FAKE_CUDA_OOM_ABOVE=BYTES
 * (device allocations above it fail: CUDA_ERROR_OUT_OF_MEMORY),
 * FAKE_CUDA_LAUNCH_FAIL=1 (every launch fails: CUDA_ERROR_LAUNCH_FAILED),
 * FAKE_CUDA_INIT_MS=MS (cuInit takes that long, as a real driver's 0.1-0.3 s:
 * with its nearly free stand-in kernels, the fake device is then the fast
 * processor that starts late, to reproduce the end game of a GPU run).
 */
#include <limits.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

typedef int CUresult;
#define API __attribute__((visibility("default")))

static long env_long(const char *name, long dflt)
{
    const char *e = getenv(name);
    return e && *e ? strtol(e, NULL, 10) : dflt;
}

API CUresult cuInit(unsigned f)
{
    long ms = env_long("FAKE_CUDA_INIT_MS", 0);
    struct timespec ts = {ms / 1000, (ms % 1000) * 1000000L};
    if (ms > 0) nanosleep(&ts, NULL);
    return f == 0 ? 0 : 1;
}
API CUresult cuDriverGetVersion(int *v) { return *v = 13000, 0; }
API CUresult cuDeviceGetCount(int *n) { return *n = (int)env_long("FAKE_CUDA_DEVICES", 1), 0; }
API CUresult cuDeviceGet(int *d, int i) { return *d = i, 0; }
API CUresult cuDeviceGetName(char *s, int len, int d)
{
    (void)d;
    strncpy(s, "Fake GPU", (size_t)len);
    return 0;
}
API CUresult cuDeviceGetAttribute(int *v, int attr, int d)
{
    (void)d;
    *v = attr == 75 ? 9 : 0;
    return 0;
}
API CUresult cuDevicePrimaryCtxRetain(void **c, int d) { return *c = (void *)(intptr_t)(d + 1), 0; }
API CUresult cuDevicePrimaryCtxRelease_v2(int d) { return (void)d, 0; }
API CUresult cuCtxSetCurrent(void *c) { return c ? 0 : 201; }
API CUresult cuModuleLoadData(void **m, const void *image)
{
    uint32_t magic;
    memcpy(&magic, image, 4);
    if (magic != 0xBA55ED50u) return 200; /* CUDA_ERROR_INVALID_IMAGE: not a fat binary */
    *m = (void *)image;
    return 0;
}
API CUresult cuModuleGetFunction(void **f, void *m, const char *name)
{
    (void)m;
    if (strcmp(name, "bs") && strcmp(name, "sar") && strcmp(name, "tex")) return 500;
    *f = (void *)name;
    return 0;
}
API CUresult cuModuleUnload(void *m) { return (void)m, 0; }
API CUresult cuMemAlloc_v2(unsigned long long *p, size_t n)
{
    if ((long)n > env_long("FAKE_CUDA_OOM_ABOVE", LONG_MAX)) return 2;
    void *q = malloc(n);
    *p = (uintptr_t)q;
    return q ? 0 : 2;
}
API CUresult cuMemFree_v2(unsigned long long p) { return free((void *)(uintptr_t)p), 0; }
API CUresult cuMemAllocHost_v2(void **p, size_t n) { return (*p = malloc(n)) ? 0 : 2; }
API CUresult cuMemFreeHost(void *p) { return free(p), 0; }
API CUresult cuMemcpyHtoD_v2(unsigned long long d, const void *h, size_t n)
{
    return memcpy((void *)(uintptr_t)d, h, n), 0;
}
/* Streams run their work at cuStreamSynchronize, not at once, as a GPU
 * runs it later: a host that reads a part's output before waiting for it,
 * or writes its staged input before the copy ran, sees the wrong bytes. */
typedef struct op {
    int kind; /* 0 copy, 1 bs, 2 sar, 3 tex */
    void *dst;
    const void *src;
    size_t n;
    long v[6];
} op;
typedef struct stream {
    op *ops;
    size_t len, cap;
} stream;

static CUresult enqueue(void *s, op o)
{
    stream *st = s;
    if (st->len == st->cap) {
        size_t cap = st->cap ? 2 * st->cap : 16;
        op *ops = realloc(st->ops, cap * sizeof *ops);
        if (ops == NULL) return 2;
        st->ops = ops, st->cap = cap;
    }
    st->ops[st->len++] = o;
    return 0;
}

API CUresult cuMemcpyHtoDAsync_v2(unsigned long long d, const void *h, size_t n, void *s)
{
    return enqueue(s, (op){.kind = 0, .dst = (void *)(uintptr_t)d, .src = h, .n = n});
}
API CUresult cuMemcpyDtoHAsync_v2(void *h, unsigned long long d, size_t n, void *s)
{
    return enqueue(s, (op){.kind = 0, .dst = h, .src = (const void *)(uintptr_t)d, .n = n});
}
API CUresult cuStreamCreate(void **s, unsigned f)
{
    return (void)f, (*s = calloc(1, sizeof(stream))) ? 0 : 2;
}

/* The stand-ins: bs writes (price, strike) of each option; sar (ix, iy) of
 * each pixel; tex (by, bx) of each block then zeros. */
static void fake_bs(const op *o)
{
    const float *in = o->src;
    float *out = o->dst;
    for (long i = 0; i < o->v[0]; i++) out[2 * i] = in[3 * i], out[2 * i + 1] = in[3 * i + 1];
}
static void fake_sar(const op *o)
{
    long ix0 = o->v[0], iy0 = o->v[1], tw = o->v[2], n = o->v[3];
    float *out = o->dst;
    for (long i = 0; i < n; i++)
        out[2 * i] = (float)(ix0 + i % tw), out[2 * i + 1] = (float)(iy0 + i / tw);
}
static void fake_tex(const op *o)
{
    float *out = o->dst;
    long by0 = o->v[0], bx0 = o->v[1], tw = o->v[2], n = o->v[3];
    for (long i = 0; i < n; i++) {
        memset(out + 16 * i, 0, 16 * sizeof(float));
        out[16 * i] = (float)(by0 + i / tw), out[16 * i + 1] = (float)(bx0 + i % tw);
    }
}

API CUresult cuStreamSynchronize(void *s)
{
    stream *st = s;
    for (size_t i = 0; i < st->len; i++) {
        const op *o = &st->ops[i];
        if (o->kind == 0) memcpy(o->dst, o->src, o->n);
        if (o->kind == 1) fake_bs(o);
        if (o->kind == 2) fake_sar(o);
        if (o->kind == 3) fake_tex(o);
    }
    st->len = 0;
    return 0;
}
API CUresult cuStreamDestroy_v2(void *s)
{
    cuStreamSynchronize(s);
    free(((stream *)s)->ops);
    return free(s), 0;
}

/* A launch takes its arguments' values now, as the driver does. */
API CUresult cuLaunchKernel(void *f, unsigned gx, unsigned gy, unsigned gz, unsigned bx,
                            unsigned by, unsigned bz, unsigned shared, void *s, void **a,
                            void **extra)
{
    (void)gx, (void)gy, (void)gz, (void)bx, (void)by, (void)bz, (void)shared;
    (void)extra;
    if (env_long("FAKE_CUDA_LAUNCH_FAIL", 0)) return 719;
    const char *name = f;
    if (strcmp(name, "bs") == 0)
        return enqueue(
            s,
            (op){.kind = 1, .src = *(float **)a[0], .dst = *(float **)a[1], .v = {*(int *)a[5]}});
    if (strcmp(name, "sar") == 0)
        return enqueue(s,
                       (op){.kind = 2,
                            .dst = *(float **)a[15],
                            .v = {*(long *)a[11], *(long *)a[12], *(long *)a[13], *(long *)a[14]}});
    if (strcmp(name, "tex") == 0)
        return enqueue(s, (op){.kind = 3,
                               .dst = *(float **)a[1],
                               .v = {*(long *)a[3], *(long *)a[4], *(long *)a[5], *(long *)a[6]}});
    return 0;
}

API CUresult cuGetErrorName(CUresult r, const char **s)
{
    *s = r == 2     ? "CUDA_ERROR_OUT_OF_MEMORY"
         : r == 200 ? "CUDA_ERROR_INVALID_IMAGE"
         : r == 719 ? "CUDA_ERROR_LAUNCH_FAILED"
                    : "CUDA_ERROR_UNKNOWN";
    return 0;
}
