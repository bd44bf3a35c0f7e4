/*
 * cuda.c — CUDA processors of the tiles face.  The driver API is loaded at
 * run time (dlopen of libcuda.so.1), never linked: the same binary starts on
 * a machine without a driver or a GPU, and only asking for a `cuda`
 * processor there fails, with one line.  "cuda:N" uses device N's primary
 * context.
 *
 * A tile runs in parts of whole rows over NSLOT streams, taken in turn
 * across tiles, so that the input copy of part k+1, the kernel of part k
 * and the output copy of part k-1 overlap (APC+'s copy/compute overlap).
 * A small tile is one part; the processor (proc.c) submits the next tile
 * before it waits for the last (tess__tile_cuda_submit, _finish), so tile
 * i+1's input goes over while tile i computes.  Each slot owns a pinned
 * input and output staging buffer and device buffers, grown as needed and
 * kept for the run (pooled).  A driver error becomes one line naming the
 * device and the driver's reason (out of memory, launch failure).
 */
#include <dlfcn.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "tessera/tile_cuda.h"
#include "tile/proc.h"

#ifndef TESS_HAVE_CUDA
#define TESS_HAVE_CUDA 0
#endif
#ifndef TESS_CUDA_ARCHS
#define TESS_CUDA_ARCHS ""
#endif

/* The few driver types and entry points used, declared here so that the
 * file compiles without the toolkit's headers (cuda.h's ABI is stable). */
typedef int CUresult;
typedef int CUdevice;
typedef unsigned long long CUdeviceptr;
typedef void *CUcontext, *CUmodule, *CUfunction, *CUstream;

#define CU_FN(X)                                                                               \
    X(cuInit, (unsigned))                                                                      \
    X(cuDriverGetVersion, (int *))                                                             \
    X(cuDeviceGetCount, (int *))                                                               \
    X(cuDeviceGet, (CUdevice *, int))                                                          \
    X(cuDeviceGetName, (char *, int, CUdevice))                                                \
    X(cuDeviceGetAttribute, (int *, int, CUdevice))                                            \
    X(cuDevicePrimaryCtxRetain, (CUcontext *, CUdevice))                                       \
    X(cuDevicePrimaryCtxRelease_v2, (CUdevice))                                                \
    X(cuCtxSetCurrent, (CUcontext))                                                            \
    X(cuModuleLoadData, (CUmodule *, const void *))                                            \
    X(cuModuleGetFunction, (CUfunction *, CUmodule, const char *))                             \
    X(cuModuleUnload, (CUmodule))                                                              \
    X(cuMemAlloc_v2, (CUdeviceptr *, size_t))                                                  \
    X(cuMemFree_v2, (CUdeviceptr))                                                             \
    X(cuMemAllocHost_v2, (void **, size_t))                                                    \
    X(cuMemFreeHost, (void *))                                                                 \
    X(cuMemcpyHtoD_v2, (CUdeviceptr, const void *, size_t))                                    \
    X(cuMemcpyHtoDAsync_v2, (CUdeviceptr, const void *, size_t, CUstream))                     \
    X(cuMemcpyDtoHAsync_v2, (void *, CUdeviceptr, size_t, CUstream))                           \
    X(cuStreamCreate, (CUstream *, unsigned))                                                  \
    X(cuStreamDestroy_v2, (CUstream))                                                          \
    X(cuStreamSynchronize, (CUstream))                                                         \
    X(cuLaunchKernel, (CUfunction, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned, \
                       unsigned, CUstream, void **, void **))                                  \
    X(cuGetErrorName, (CUresult, const char **))

#define CU_DECLARE(name, args) CUresult(*name) args;
static struct {
    CU_FN(CU_DECLARE)
    int loaded;    /* 1 driver library loaded, -1 not */
    int inited;    /* 1 cuInit succeeded, -1 not */
    char why[200]; /* why not */
    int version;
    double init_s; /* cuInit's seconds */
} cu;

enum { ATTR_CC_MAJOR = 75, ATTR_CC_MINOR = 76, NSLOT = 3, BLOCK = 128, MAX_MODULES = 8 };
/* Each slot's first buffers (4 pairs of 4 MiB: a part is at least 1 MiB),
 * allocated in the processor's start-up thread, beside the others' work. */
#define POOL_START ((size_t)4 << 20)

static pthread_once_t cu_once = PTHREAD_ONCE_INIT, cu_init_once = PTHREAD_ONCE_INIT;

static void cu_load(void)
{
    void *h = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
    if (h == NULL) {
        const char *e = dlerror();
        snprintf(cu.why, sizeof cu.why, "%s", e ? e : "libcuda.so.1 not found");
        cu.loaded = -1;
        return;
    }
#define CU_RESOLVE(name, args)                                                            \
    if ((*(void **)&cu.name = dlsym(h, #name)) == NULL) {                                 \
        snprintf(cu.why, sizeof cu.why, "libcuda.so.1 lacks %s (driver too old)", #name); \
        cu.loaded = -1;                                                                   \
        return;                                                                           \
    }
    CU_FN(CU_RESOLVE)
    cu.loaded = 1;
}

/* cuInit is slow on a datacenter GPU (`tessera info`, which is little else,
 * took 0.31 s on an H200, docs/results/gpu-check-2026-11-28.txt): a job
 * that asks for a cuda processor pays it in the processor's own start-up
 * thread, beside the other processors' work, not before the job starts. */
static void cu_init(void)
{
    double t0 = tess_now();
    CUresult r = cu.cuInit(0);
    cu.init_s = tess_now() - t0;
    if (r != 0) {
        const char *n = "?";
        cu.cuGetErrorName(r, &n);
        snprintf(cu.why, sizeof cu.why, "cuInit failed: %s", n);
        cu.inited = -1;
        return;
    }
    cu.cuDriverGetVersion(&cu.version);
    cu.inited = 1;
}

/* The driver library loaded (cheap: a job without one is refused at once). */
static int cu_loaded(void)
{
    pthread_once(&cu_once, cu_load);
    return cu.loaded == 1;
}

/* The driver loaded and initialised. */
static int cu_ready(void)
{
    if (!cu_loaded()) return 0;
    pthread_once(&cu_init_once, cu_init);
    return cu.inited == 1;
}

static const char *cu_name(CUresult r)
{
    const char *n = "unknown error";
    if (cu.cuGetErrorName) cu.cuGetErrorName(r, &n);
    return n;
}

/* A slot: a stream with its pinned staging and device buffers. */
typedef struct slot {
    CUstream stream;
    void *h_in, *h_out;
    CUdeviceptr d_in, d_out;
    size_t in_cap, out_cap;
    int64_t lo, hi; /* the rows in flight, hi == lo when none */
    uint8_t *dest;  /* where the part's output goes */
    size_t out_len;
    unsigned ticket; /* the tile the part belongs to */
} slot;

typedef struct impl {
    CUdevice dev;
    int retained;
    slot s[NSLOT];
    struct {
        const void *image;
        CUmodule mod;
    } mods[MAX_MODULES];
    int nmods;
    int next_slot;        /* parts take the slots in turn, across tiles */
    unsigned next_ticket; /* the next tile's number */
} impl;

static int fail(tess_tile_cuda *d, CUresult r, const char *what)
{
    return tess_set_error(d->ctx, TESS_ERR_KERNEL, "cuda:%d (%s): %s: %s", d->ordinal, d->name,
                          what, cu_name(r));
}

int tess__tile_cuda_probe(tess_ctx *ctx, const tess__tile_proc_spec *spec)
{
    if (!TESS_HAVE_CUDA)
        return tess_set_error(ctx, TESS_ERR_UNSUPPORTED,
                              "processor '%s': this build has no CUDA kernels (rebuild with nvcc "
                              "found: CUDA_HOME, -DTESS_WITH_CUDA=ON)",
                              spec->text);
    if (!cu_loaded())
        return tess_set_error(ctx, TESS_ERR_UNSUPPORTED,
                              "processor '%s': no CUDA device or driver was found (%s)", spec->text,
                              cu.why);
    return TESS_OK;
}

/* The driver initialised and the processor's device present (the slow
 * part of the checks: in the processor's start-up thread). */
static int check_device(tess_ctx *ctx, const tess__tile_proc_spec *spec)
{
    if (!cu_ready())
        return tess_set_error(ctx, TESS_ERR_UNSUPPORTED,
                              "processor '%s': no CUDA device or driver was found (%s)", spec->text,
                              cu.why);
    int count = 0;
    cu.cuDeviceGetCount(&count);
    if (count == 0)
        return tess_set_error(ctx, TESS_ERR_UNSUPPORTED,
                              "processor '%s': no CUDA device or driver was found (the driver "
                              "sees no device)",
                              spec->text);
    TESS_RETURN_IF(ctx, spec->device >= count, TESS_ERR_UNSUPPORTED,
                   "processor '%s': there are only %d CUDA devices on this machine", spec->text,
                   count);
    return TESS_OK;
}

static int slot_grow(tess_tile_cuda *d, slot *s, size_t in_len, size_t out_len);
int tess__tile_cuda_finish(void *device, unsigned ticket);

int tess__tile_cuda_open(tess_ctx *ctx, const tess__tile_proc_spec *spec, void **device)
{
    int rc = tess__tile_cuda_probe(ctx, spec);
    if (rc == TESS_OK) rc = check_device(ctx, spec);
    if (rc != TESS_OK) return rc;
    tess_tile_cuda *d = calloc(1, sizeof *d);
    impl *m = calloc(1, sizeof *m);
    if (d == NULL || m == NULL) {
        free(d);
        free(m);
        return tess_set_error(ctx, TESS_ERR_NOMEM, "out of memory");
    }
    d->ctx = ctx;
    d->ordinal = spec->device;
    d->impl = m;
    cu.cuDeviceGet(&m->dev, spec->device);
    cu.cuDeviceGetName(d->name, (int)sizeof d->name - 1, m->dev);
    cu.cuDeviceGetAttribute(&d->cc_major, ATTR_CC_MAJOR, m->dev);
    cu.cuDeviceGetAttribute(&d->cc_minor, ATTR_CC_MINOR, m->dev);
    double t0 = tess_now();
    CUresult r = cu.cuDevicePrimaryCtxRetain((CUcontext *)&d->context, m->dev);
    double t1 = tess_now();
    m->retained = r == 0;
    if (r == 0) r = cu.cuCtxSetCurrent(d->context);
    for (int i = 0; r == 0 && i < NSLOT; i++) r = cu.cuStreamCreate(&m->s[i].stream, 1);
    rc = r == 0 ? TESS_OK : fail(d, r, "cannot create a context or streams");
    for (int i = 0; rc == TESS_OK && i < NSLOT; i++) rc = slot_grow(d, &m->s[i], 1, 1);
    /* Where a GPU's start-up goes (0.2-0.35 s on an H200: TESS_VERBOSE=1). */
    tess__log(ctx, "cuda:%d (%s): cuInit %.3f s, context %.3f s, streams and buffers %.3f s",
              d->ordinal, d->name, cu.init_s, t1 - t0, tess_now() - t1);
    if (rc != TESS_OK) {
        tess__tile_cuda_close(d);
        return rc;
    }
    *device = d;
    return TESS_OK;
}

void tess__tile_cuda_close(void *device)
{
    tess_tile_cuda *d = device;
    if (d == NULL) return;
    impl *m = d->impl;
    if (d->context) cu.cuCtxSetCurrent(d->context);
    if (d->release && d->user) d->release(d->user);
    for (int i = 0; i < NSLOT; i++) {
        slot *s = &m->s[i];
        if (s->stream) cu.cuStreamSynchronize(s->stream), cu.cuStreamDestroy_v2(s->stream);
        if (s->h_in) cu.cuMemFreeHost(s->h_in);
        if (s->h_out) cu.cuMemFreeHost(s->h_out);
        if (s->d_in) cu.cuMemFree_v2(s->d_in);
        if (s->d_out) cu.cuMemFree_v2(s->d_out);
    }
    for (int i = 0; i < m->nmods; i++) cu.cuModuleUnload(m->mods[i].mod);
    if (m->retained) cu.cuDevicePrimaryCtxRelease_v2(m->dev);
    free(m);
    free(d);
}

/* Grow one pinned buffer and its device twin to hold len bytes (pooled:
 * never shrunk), at least doubling and never below POOL_START: pinned
 * allocation and its free synchronise the device and cost milliseconds, and
 * growing to each bootstrap size in turn (sizes double) made every
 * bootstrap tile on the H200 take 2 ms and the first 1M-cell tile twice the
 * next.  TESS_OK, or the error naming `what`. */
static int grow_pair(tess_tile_cuda *d, void **host, CUdeviceptr *dev, size_t *cap, size_t len,
                     const char *what)
{
    if (len <= *cap) return TESS_OK;
    if (len < 2 * *cap) len = 2 * *cap;
    if (len < POOL_START) len = POOL_START;
    if (*host) cu.cuMemFreeHost(*host), *host = NULL;
    if (*dev) cu.cuMemFree_v2(*dev), *dev = 0;
    *cap = 0;
    CUresult r = cu.cuMemAllocHost_v2(host, len);
    if (r == 0) r = cu.cuMemAlloc_v2(dev, len);
    if (r != 0) return fail(d, r, what);
    *cap = len;
    return TESS_OK;
}

/* Grow a slot's buffers to hold a part. */
static int slot_grow(tess_tile_cuda *d, slot *s, size_t in_len, size_t out_len)
{
    int rc = grow_pair(d, &s->h_in, &s->d_in, &s->in_cap, in_len,
                       "cannot allocate a tile's input on the device or pinned");
    if (rc != TESS_OK) return rc;
    return grow_pair(d, &s->h_out, &s->d_out, &s->out_cap, out_len,
                     "cannot allocate a tile's output on the device or pinned");
}

/* Wait for the slot's part and copy its output home. */
static int slot_drain(tess_tile_cuda *d, slot *s)
{
    if (s->hi == s->lo) return TESS_OK;
    CUresult r = cu.cuStreamSynchronize(s->stream);
    s->hi = s->lo;
    if (r != 0) return fail(d, r, "a tile's kernel or copy failed");
    memcpy(s->dest, s->h_out, s->out_len);
    return TESS_OK;
}

/* Rows per part: parts of at least 1 MiB of input or output each, at most
 * 2 NSLOT of them (a small tile is one part: a launch costs ~5 us). */
static int64_t part_rows(int64_t rows, size_t row_bytes)
{
    int64_t want = (int64_t)(((size_t)1 << 20) / (row_bytes ? row_bytes : 1)) + 1;
    int64_t least = (rows + 2 * NSLOT - 1) / (2 * NSLOT);
    return want > least ? (want < rows ? want : rows) : least;
}

/* Queue one part (rows [lo, hi) of the tile) on slot s: its input staged
 * and copied, the kernel, its output copied back (drained later). */
static int part_submit(tess_tile_cuda *d, slot *s, tess_tile_kernel_fn kernel,
                       const tess_tile_box *box, int64_t lo, int64_t hi, const uint8_t *in,
                       size_t row_in, uint8_t *out, size_t row_out, void *arg)
{
    size_t il = (size_t)(hi - lo) * row_in, ol = (size_t)(hi - lo) * row_out;
    int rc = slot_grow(d, s, il, ol);
    if (rc != TESS_OK) return rc;
    CUresult r = 0;
    if (il > 0) {
        memcpy(s->h_in, in + (size_t)lo * row_in, il);
        r = cu.cuMemcpyHtoDAsync_v2(s->d_in, s->h_in, il, s->stream);
    }
    if (r != 0) return fail(d, r, "cannot copy a tile's input to the device");
    tess_tile_box part = *box;
    part.lo[0] = box->lo[0] + lo;
    part.hi[0] = box->lo[0] + hi;
    d->stream = s->stream;
    rc = kernel(&part, il > 0 ? (void *)(uintptr_t)s->d_in : NULL, (void *)(uintptr_t)s->d_out, d,
                arg);
    if (rc > 0) rc = TESS_ERR_KERNEL;
    if (rc == TESS_OK && ol > 0) r = cu.cuMemcpyDtoHAsync_v2(s->h_out, s->d_out, ol, s->stream);
    if (r != 0) rc = fail(d, r, "cannot copy a tile's output from the device");
    s->lo = lo;
    s->hi = rc == TESS_OK ? hi : lo;
    s->dest = out + (size_t)lo * row_out;
    s->out_len = ol;
    return rc;
}

int tess__tile_cuda_submit(void *device, tess_tile_kernel_fn kernel, const tess_tile_box *box,
                           const void *in, size_t in_bytes, void *out, size_t out_bytes, void *arg,
                           unsigned *ticket)
{
    tess_tile_cuda *d = device;
    impl *m = d->impl;
    cu.cuCtxSetCurrent(d->context);
    *ticket = m->next_ticket++;
    int64_t rows = box->hi[0] - box->lo[0];
    if (rows <= 0) return TESS_OK;
    size_t row_in = in_bytes / (size_t)rows, row_out = out_bytes / (size_t)rows;
    int64_t step = part_rows(rows, row_in > row_out ? row_in : row_out);
    int rc = TESS_OK;
    for (int64_t lo = 0; rc == TESS_OK && lo < rows; lo += step) {
        slot *s = &m->s[m->next_slot];
        m->next_slot = (m->next_slot + 1) % NSLOT;
        rc = slot_drain(d, s); /* the part NSLOT before this one, maybe the last tile's */
        s->ticket = *ticket;
        int64_t hi = lo + step < rows ? lo + step : rows;
        if (rc == TESS_OK)
            rc = part_submit(d, s, kernel, box, lo, hi, in, row_in, out, row_out, arg);
    }
    if (rc != TESS_OK) tess__tile_cuda_finish(d, *ticket); /* its parts in flight, dropped */
    return rc;
}

int tess__tile_cuda_finish(void *device, unsigned ticket)
{
    tess_tile_cuda *d = device;
    impl *m = d->impl;
    cu.cuCtxSetCurrent(d->context);
    int rc = TESS_OK;
    for (int i = 0; i < NSLOT; i++) {
        if (m->s[i].ticket != ticket) continue;
        int r2 = slot_drain(d, &m->s[i]);
        if (rc == TESS_OK) rc = r2;
    }
    return rc;
}

int tess__tile_cuda_run(void *device, tess_tile_kernel_fn kernel, const tess_tile_box *box,
                        const void *in, size_t in_bytes, void *out, size_t out_bytes, void *arg)
{
    unsigned ticket;
    int rc =
        tess__tile_cuda_submit(device, kernel, box, in, in_bytes, out, out_bytes, arg, &ticket);
    return rc == TESS_OK ? tess__tile_cuda_finish(device, ticket) : rc;
}

int tess_tile_cuda_function(tess_tile_cuda *d, const void *image, const char *name, void **function)
{
    impl *m = d->impl;
    CUmodule mod = NULL;
    for (int i = 0; i < m->nmods; i++)
        if (m->mods[i].image == image) mod = m->mods[i].mod;
    if (mod == NULL) {
        if (m->nmods == MAX_MODULES)
            return tess_set_error(d->ctx, TESS_ERR_KERNEL, "cuda: more than %d modules",
                                  MAX_MODULES);
        CUresult r = cu.cuModuleLoadData(&mod, image);
        if (r != 0)
            return fail(d, r,
                        "cannot load the kernel's device code (built for " TESS_CUDA_ARCHS
                        "; is the driver older than the toolkit?)");
        m->mods[m->nmods].image = image;
        m->mods[m->nmods++].mod = mod;
    }
    CUresult r = cu.cuModuleGetFunction((CUfunction *)function, mod, name);
    if (r != 0) return fail(d, r, name);
    return TESS_OK;
}

int tess_tile_cuda_launch_1d(tess_tile_cuda *d, void *function, size_t n, void **args)
{
    if (n == 0) return TESS_OK;
    unsigned grid = (unsigned)((n + BLOCK - 1) / BLOCK);
    CUresult r = cu.cuLaunchKernel(function, grid, 1, 1, BLOCK, 1, 1, 0, d->stream, args, NULL);
    return r == 0 ? TESS_OK : fail(d, r, "cannot launch the kernel");
}

int tess_tile_cuda_upload(tess_tile_cuda *d, const void *host, size_t bytes, void **device_ptr)
{
    CUdeviceptr p = 0;
    CUresult r = cu.cuMemAlloc_v2(&p, bytes ? bytes : 1);
    if (r == 0 && bytes > 0) r = cu.cuMemcpyHtoD_v2(p, host, bytes);
    if (r != 0) {
        if (p) cu.cuMemFree_v2(p);
        return fail(d, r, "cannot copy the job's constant data to the device");
    }
    *device_ptr = (void *)(uintptr_t)p;
    return TESS_OK;
}

void tess_tile_cuda_free(tess_tile_cuda *d, void *device_ptr)
{
    (void)d;
    if (device_ptr) cu.cuMemFree_v2((CUdeviceptr)(uintptr_t)device_ptr);
}

void tess_tile_cuda_info(char *buf, size_t len)
{
    size_t at = 0;
#define PUT(...)                                                           \
    do {                                                                   \
        int w_ = snprintf(buf + at, at < len ? len - at : 0, __VA_ARGS__); \
        if (w_ > 0) at += (size_t)w_;                                      \
    } while (0)
    if (len == 0) return;
    buf[0] = '\0';
    if (!TESS_HAVE_CUDA) {
        PUT("cuda: not in this build (no nvcc at build time, or -DTESS_WITH_CUDA=OFF)\n");
        return;
    }
    PUT("cuda: kernels for %s\n", TESS_CUDA_ARCHS);
    if (!cu_ready()) {
        PUT("cuda driver: no driver (%s)\n", cu.why);
        return;
    }
    int count = 0;
    cu.cuDeviceGetCount(&count);
    PUT("cuda driver: %d.%d, %d device%s\n", cu.version / 1000, cu.version % 1000 / 10, count,
        count == 1 ? "" : "s");
    for (int i = 0; i < count; i++) {
        CUdevice dv;
        char name[128] = "";
        int ma = 0, mi = 0;
        cu.cuDeviceGet(&dv, i);
        cu.cuDeviceGetName(name, (int)sizeof name - 1, dv);
        cu.cuDeviceGetAttribute(&ma, ATTR_CC_MAJOR, dv);
        cu.cuDeviceGetAttribute(&mi, ATTR_CC_MINOR, dv);
        PUT("  cuda:%d %s (sm_%d%d)\n", i, name, ma, mi);
    }
#undef PUT
}
