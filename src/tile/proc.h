/*
 * proc.h — the processors of a rank's tiles run: a thread each, with a
 * queue of tiles the controller fills (tess__tile_proc_push) and a report
 * to the controller per finished tile (TILE_DONE through the link).  They
 * read the run's facts (link) and the storage layer's helpers, and write
 * nothing the controller's modules own.  Private to src/tile.
 */
#ifndef TESS_SRC_TILE_PROC_H
#define TESS_SRC_TILE_PROC_H

#include <pthread.h>
#include "tile/store.h"

typedef struct tess__tile_processor {
    tess__tile_link *link;
    const tess__tile_store *store;
    int index;
    tess__tile_proc_spec spec;
    pthread_t thread;
    int started;
    pthread_mutex_t mu;
    pthread_cond_t cv;
    tess__tile_item *queue; /* ring of capacity qcap */
    int qhead, qlen, qcap;
    int stop;
    /* 1 while a device processor opens its device and runs its warm-up
     * (set before its thread starts; the controller learns the end from a
     * TILE_DONE with warm set) */
    int starting;
    /* the tile running now (under mu): when it started (tess_now) and its
     * estimate; run_since 0 while none runs */
    double run_since, run_est;
    int pin_cpu;            /* the CPU its thread is bound to, or -1 */
    void *in_buf, *out_buf; /* scratch, grown as needed */
    size_t in_cap, out_cap;
    void *out_spare;  /* a CUDA processor's second output scratch: the tile */
    size_t spare_cap; /* in flight keeps one while the next is set up */
    void *device;     /* OpenCL or CUDA device state, or NULL */
    /* tiles reported (TILE_DONE) and reports the controller has handled
     * (tess__tile_proc_seen), under mu: after a slowed tile the processor
     * waits for the two to meet (proc.c, wait_until_seen) */
    unsigned reported, seen;
    /* statistics (written by the thread, read after it stopped) */
    double busy, idle;
    uint64_t tiles, cells;
} tess__tile_processor;

/* The rank's processors, as --processors named them. */
typedef struct tess__tile_procs {
    tess__tile_processor p[TILE_MAX_PROCS];
    tess__tile_proc_spec specs[TILE_MAX_PROCS];
    int n;
} tess__tile_procs;

/* Parse the run's --processors and start a thread for each.  TESS_OK or
 * the error (set on the context); those started run until stopped. */
int tess__tile_procs_start(tess__tile_procs *ps, tess__tile_link *l, const tess__tile_store *s);
/* Stop every processor (their queues dropped) and free their buffers; again is harmless. */
void tess__tile_procs_stop(tess__tile_procs *ps);

/* Seconds the processor's running tile has run, at most its estimate; 0
 * when it runs none. */
double tess__tile_proc_running(tess__tile_processor *p);
/* Queue a tile (copied).  TESS_ERR_NOMEM or TESS_OK. */
int tess__tile_proc_push(tess__tile_processor *p, const tess__tile_item *it);
/* Take back up to max tiles the processor has not started (into out);
 * returns how many. */
int tess__tile_proc_recall(tess__tile_processor *p, tess__tile_item *out, int max);
/* The controller has handled one more of the processor's reports. */
void tess__tile_proc_seen(tess__tile_processor *p);

/* OpenCL devices (opencl.c). */
int tess__tile_opencl_open(tess_ctx *ctx, const tess__tile_proc_spec *spec, void **device);
void tess__tile_opencl_close(void *device);

/* CUDA devices (cuda.c): the driver is loaded at run time.  probe: is the
 * driver library there (fast, before any thread starts); open: the driver's
 * initialisation, the device the spec names, its context and streams (slow
 * on a real GPU, 0.1-0.3 s: in the processor's own thread, as OpenCL's). */
int tess__tile_cuda_probe(tess_ctx *ctx, const tess__tile_proc_spec *spec);
int tess__tile_cuda_open(tess_ctx *ctx, const tess__tile_proc_spec *spec, void **device);
void tess__tile_cuda_close(void *device);
/* Run a CUDA kernel on a tile of host input and output (in parts over
 * streams, copies overlapping kernels); TESS_OK or the error, set. */
int tess__tile_cuda_run(void *device, tess_tile_kernel_fn kernel, const tess_tile_box *box,
                        const void *in, size_t in_bytes, void *out, size_t out_bytes, void *arg);
/* The same in two halves: submit queues the tile (its input already
 * copied to staging when it returns, so `in` may be reused; `out` must
 * stay until finish) and numbers it; finish waits for that tile and puts
 * its output in `out`.  Tiles finish in the order they were submitted.
 * A failed submit has dropped its parts: no finish for it. */
int tess__tile_cuda_submit(void *device, tess_tile_kernel_fn kernel, const tess_tile_box *box,
                           const void *in, size_t in_bytes, void *out, size_t out_bytes, void *arg,
                           unsigned *ticket);
int tess__tile_cuda_finish(void *device, unsigned ticket);

#endif
