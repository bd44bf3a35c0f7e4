/*
 * proc.c — processor threads of the tiles face.  A processor takes tiles
 * from its queue in order, runs the job's kernel for its kind on each, puts
 * the output where it belongs (straight into the output array on the output
 * rank, else a message to it) and tells its controller how long the tile
 * took.  A CUDA processor keeps two tiles in flight (cuda_loop).  A slowed processor (cpu@F) sleeps t(1/F - 1) after a tile of t
 * seconds, so that heterogeneity can be tested on any machine.
 */
#include <sched.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>
#include "comm/comm.h"
#include "tessera/tile_pipe.h"
#include "tile/model.h"
#include "tile/proc.h"

static void sleep_s(double s)
{
    if (s <= 0) return;
    struct timespec ts = {(time_t)s, (long)((s - (double)(time_t)s) * 1e9)};
    while (nanosleep(&ts, &ts) != 0) {
    }
}

static void *grow(void **buf, size_t *cap, size_t need)
{
    if (need <= *cap) return *buf;
    void *p = realloc(*buf, need);
    if (p == NULL) return NULL;
    *buf = p;
    *cap = need;
    return p;
}

/* The tile's input in the rank's own slab, when the tile is contiguous
 * there (whole rows): the kernel reads it in place instead of
 * a copy (37 MB per 8192x4096 slide for texture; no time measurable). */
static const uint8_t *input_in_place(const tess__tile_processor *p, const tess__tile_item *it)
{
    const tess__tile_link *l = p->link;
    if (l->job->read != NULL || !tess__tile_box_whole_rows(&l->area, &it->box)) return NULL;
    int64_t lo, hi;
    tess__tile_store_own_slab(p->store, &lo, &hi);
    uint64_t row_cells = tess__tile_area_cells(&l->area) / (uint64_t)l->area.extent[0];
    uint64_t first = (uint64_t)(it->box.lo[0] - lo) * row_cells;
    return (const uint8_t *)l->job->input + first * l->job->in_bytes;
}

/* The tile's input: given by the controller, read, or gathered from the
 * rank's own slab. */
static int tile_input(tess__tile_processor *p, const tess__tile_item *it, const void **in)
{
    const tess__tile_link *c = p->link;
    const tess_tile_job *job = c->job;
    *in = it->in;
    if (it->in != NULL || job->in_bytes == 0) return TESS_OK;
    if ((*in = input_in_place(p, it)) != NULL) return TESS_OK;
    uint8_t *buf = grow(&p->in_buf, &p->in_cap, it->cells * job->in_bytes);
    if (buf == NULL) return tess_set_error(c->ctx, TESS_ERR_NOMEM, "out of memory for a tile");
    if (job->read) {
        int rc = job->read(&it->box, buf, job->read_arg ? job->read_arg : job->arg);
        if (rc != TESS_OK) return rc;
    } else {
        int64_t lo, hi;
        tess__tile_store_own_slab(p->store, &lo, &hi);
        tess__tile_copy_box(&c->area, &it->box, job->in_bytes, (uint8_t *)job->input, lo, buf, 1);
    }
    *in = buf;
    return TESS_OK;
}

static int output_here(const tess__tile_link *c) { return c->me == c->job->output_rank; }

/* Where the kernel writes: the output array itself when the tile is
 * contiguous in it (*direct 1: nothing left to do), the output rank's
 * shared image when that is (*in_image 1), else scratch. */
static void *tile_output(tess__tile_processor *p, const tess__tile_item *it, int *direct,
                         int *in_image)
{
    const tess__tile_link *c = p->link;
    const tess_tile_job *job = c->job;
    uint8_t *at = tess__tile_output_place(c, &it->box, output_here(c) ? job->output : NULL);
    *direct = at != NULL;
    if (at == NULL && !output_here(c))
        at = tess__tile_output_place(c, &it->box, tess__tile_shared_output(c));
    *in_image = !*direct && at != NULL;
    if (at != NULL) return at;
    if (output_here(c) && job->write) return malloc(it->cells * job->out_bytes);
    return grow(&p->out_buf, &p->out_cap, it->cells * job->out_bytes);
}

/* The output in the output rank's shared image (unless the kernel wrote it
 * there), then the box, which tells the output rank to take it. */
static int deliver_shared(tess__tile_link *c, const tess__tile_item *it, void *out, int in_image,
                          uint8_t *image)
{
    if (!in_image) tess__tile_copy_box(&c->area, &it->box, c->job->out_bytes, image, 0, out, 0);
    tess__shared_fence(); /* the output before the notice */
    return tess__tile_send(c, c->job->output_rank, TILE_OUTPUT_SHARED, &it->box, sizeof it->box,
                           NULL, 0);
}

/* Put a tile's output where it belongs; `d->out` takes a buffer the
 * controller hands to write(). */
static int deliver(tess__tile_processor *p, const tess__tile_item *it, void *out, int in_image,
                   tess__tile_done *d)
{
    tess__tile_link *c = p->link;
    const tess_tile_job *job = c->job;
    uint8_t *image = tess__tile_shared_output(c);
    if (!output_here(c) && image != NULL) return deliver_shared(c, it, out, in_image, image);
    if (!output_here(c))
        return tess__tile_send(c, job->output_rank, TILE_OUTPUT, &it->box, sizeof it->box, out,
                               it->cells * job->out_bytes);
    if (job->write) {
        d->out = out;
        return TESS_OK;
    }
    if (job->output)
        tess__tile_copy_box(&c->area, &it->box, job->out_bytes, job->output, 0, out, 0);
    return TESS_OK; /* neither an array nor write(): the output is dropped */
}

static double slowdown(const tess__tile_processor *p, double started, double seconds)
{
    const tess__tile_proc_spec *s = &p->spec;
    if (s->frac >= 1.0 || started < s->after_s) return 0.0;
    return seconds * (1.0 / s->frac - 1.0);
}

/* A tile between its set-up and its report: what it needs to finish. */
typedef struct flight {
    tess__tile_item it;
    tess__tile_done d;
    void *out;
    int direct, in_image, rc;
    double t0;
    unsigned ticket; /* a CUDA tile's submission */
} flight;

/* Set a tile up and start it: its input found, read or gathered, its
 * output's place, then the kernel (a CPU's or OpenCL's runs here; a CUDA
 * tile is submitted). */
static void tile_begin(tess__tile_processor *p, const tess__tile_item *it, flight *f)
{
    tess__tile_link *c = p->link;
    const tess_tile_job *job = c->job;
    *f = (flight){.it = *it,
                  .d = {.proc = p->index,
                        .cells = it->cells,
                        .est = it->est,
                        .chunk = it->chunk,
                        .box = it->box}};
    f->t0 = tess_now();
    f->d.started = f->t0 - c->t0;
    const void *in;
    f->rc = tile_input(p, it, &in);
    f->d.input_s = tess_now() - f->t0;
    f->out = f->rc == TESS_OK ? tile_output(p, it, &f->direct, &f->in_image) : NULL;
    if (f->rc == TESS_OK && f->out == NULL)
        f->rc = tess_set_error(c->ctx, TESS_ERR_NOMEM, "out of memory for a tile's output");
    if (f->rc != TESS_OK) return;
    tess_tile_kernel_fn k = job->kernel[p->spec.kind];
    if (p->spec.kind == TESS_TILE_CUDA)
        f->rc = tess__tile_cuda_submit(p->device, k, &it->box, in, it->cells * job->in_bytes,
                                       f->out, it->cells * job->out_bytes, job->arg, &f->ticket);
    else f->rc = k(&it->box, in, f->out, p->device, job->arg);
    if (f->rc > 0) f->rc = TESS_ERR_KERNEL;
}

/* Finish a tile tile_begin started: a CUDA tile's output home, a slowed
 * processor's sleep, the output delivered.  `since`: when the processor
 * began on it (a CUDA tile submitted while the last one ran counts from
 * that one's end, so its seconds are its own). */
static int tile_end(tess__tile_processor *p, flight *f, double since)
{
    if (f->rc == TESS_OK && p->spec.kind == TESS_TILE_CUDA)
        f->rc = tess__tile_cuda_finish(p->device, f->ticket);
    double t = tess_now() - since;
    double extra = slowdown(p, f->d.started, t);
    sleep_s(extra);
    f->d.seconds = t + extra;
    int rc = f->rc;
    double t1 = tess_now();
    if (rc == TESS_OK && !f->direct) rc = deliver(p, &f->it, f->out, f->in_image, &f->d);
    f->d.deliver_s = tess_now() - t1;
    f->d.out_here = output_here(p->link);
    int scratch = f->out == p->out_buf || f->out == p->out_spare;
    if (f->d.out == NULL && f->out != NULL && !f->direct && !f->in_image && !scratch) free(f->out);
    return rc;
}

static int run_tile(tess__tile_processor *p, const tess__tile_item *it, tess__tile_done *d)
{
    flight f;
    tile_begin(p, it, &f);
    int rc = tile_end(p, &f, f.t0);
    *d = f.d;
    return rc;
}

/* Take the next tile from the queue, waiting for one when `wait`; 0 when
 * there is none (or the processor stops). */
static int take(tess__tile_processor *p, tess__tile_item *it, int wait)
{
    pthread_mutex_lock(&p->mu);
    double w0 = tess_now();
    while (wait && p->qlen == 0 && !p->stop) pthread_cond_wait(&p->cv, &p->mu);
    double now = tess_now();
    p->idle += now - w0;
    int got = p->qlen > 0 && !(p->stop && !wait);
    if (got) {
        *it = p->queue[p->qhead];
        p->qhead = (p->qhead + 1) % p->qcap;
        p->qlen--;
        p->run_since = now;
        p->run_est = it->est;
    }
    pthread_mutex_unlock(&p->mu);
    return got;
}

static int pop(tess__tile_processor *p, tess__tile_item *it) { return take(p, it, 1); }

/* A CPU processor given a core of its own runs there: the scheduler
 * otherwise moved it between cores whenever the controller woke, and its
 * tiles ran 1-2% longer on the caches it left behind (texture, cpu*2). */
static void pin_maybe(const tess__tile_processor *p)
{
    if (p->pin_cpu < 0) return;
    cpu_set_t one;
    CPU_ZERO(&one);
    CPU_SET(p->pin_cpu, &one);
    pthread_setaffinity_np(pthread_self(), sizeof one, &one); /* best effort */
}

/* The warm-up's input: the tile's own input where this rank has it, else
 * zeros (its output is thrown away; only the build and first run count). */
static int warm_input(tess__tile_processor *p, const tess__tile_item *it, const void **in)
{
    const tess_tile_job *job = p->link->job;
    int64_t lo = 0, hi = 0;
    if (job->in_bytes > 0 && job->read == NULL) tess__tile_store_own_slab(p->store, &lo, &hi);
    /* a pipeline's stream gives each cell once: not to the warm-up */
    int stream = job->read == tess_tile_stream_read;
    if (job->in_bytes == 0 || (job->read != NULL && !stream) || it->box.hi[0] <= hi)
        return tile_input(p, it, in);
    uint8_t *buf = grow(&p->in_buf, &p->in_cap, it->cells * job->in_bytes);
    if (buf == NULL) return tess_set_error(p->link->ctx, TESS_ERR_NOMEM, "out of memory");
    memset(buf, 0, it->cells * job->in_bytes);
    *in = buf;
    return TESS_OK;
}

/* A device processor's start-up, in its own thread so that it overlaps
 * the other processors' work: open the device, then run the kernel once on
 * a copy of the smallest tile at the start of the rank's rows (the program
 * build, the JIT) with its output thrown away.  No work waits for it: the
 * controller hands the processor tiles only once it reports (warm).  A run
 * that ended meanwhile skips the build. */
static int start_device(tess__tile_processor *p)
{
    tess__tile_link *c = p->link;
    int rc = p->spec.kind == TESS_TILE_CUDA ? tess__tile_cuda_open(c->ctx, &p->spec, &p->device)
                                            : tess__tile_opencl_open(c->ctx, &p->spec, &p->device);
    pthread_mutex_lock(&p->mu);
    int stop = p->stop;
    pthread_mutex_unlock(&p->mu);
    if (rc != TESS_OK || stop) return rc;
    int64_t lo = 0, hi = 0;
    if (c->job->in_bytes > 0 && c->job->read == NULL) tess__tile_store_own_slab(p->store, &lo, &hi);
    tess__tile_item it = {.cells = 0};
    int64_t first = lo < hi ? lo : 0, end = first + c->area.min[0];
    tess__tile_rows_box(&c->area, first, end < c->area.extent[0] ? end : c->area.extent[0],
                        &it.box);
    for (int d = 1; d < c->area.ndims; d++) it.box.hi[d] = c->area.max[d]; /* the smallest tile */
    it.cells = tess__tile_box_cells(&it.box);
    const void *in = NULL;
    rc = warm_input(p, &it, &in);
    void *out = rc == TESS_OK ? grow(&p->out_buf, &p->out_cap, it.cells * c->job->out_bytes) : NULL;
    if (rc == TESS_OK && out == NULL)
        rc = tess_set_error(c->ctx, TESS_ERR_NOMEM, "out of memory for a tile's output");
    tess_tile_kernel_fn k = c->job->kernel[p->spec.kind];
    double t0 = tess_now();
    if (rc == TESS_OK && p->spec.kind == TESS_TILE_CUDA) /* the module's load and JIT */
        rc = tess__tile_cuda_run(p->device, k, &it.box, in, it.cells * c->job->in_bytes, out,
                                 it.cells * c->job->out_bytes, c->job->arg);
    else if (rc == TESS_OK) rc = k(&it.box, in, out, p->device, c->job->arg);
    tess__log(c->ctx, "processor %s: warm-up tile (program load or build) %.3f s", p->spec.text,
              tess_now() - t0);
    return rc > 0 ? TESS_ERR_KERNEL : rc;
}

/* Tell the controller a tile is done; `next`: the tile in flight after it
 * (a CUDA processor's), which runs from now on. */
static void report(tess__tile_processor *p, tess__tile_done *d, const flight *next)
{
    p->busy += d->seconds;
    p->tiles++;
    p->cells += d->cells;
    pthread_mutex_lock(&p->mu); /* before DONE: the plan must not count it twice */
    p->run_since = next != NULL ? tess_now() : 0;
    if (next != NULL) p->run_est = next->it.est;
    p->reported++;
    pthread_mutex_unlock(&p->mu);
    tess__tile_send(p->link, p->link->me, TILE_DONE, d, sizeof *d, NULL, 0);
}

/* A CUDA processor submits the next queued tile before it waits for the
 * one on the device, so the next one's input crosses while this one
 * computes.  Only a tile already queued: waiting for one would hold back
 * the report the controller needs to hand out more.  The output scratch
 * of the tile in flight is kept aside while the next one is set up. */
static void cuda_loop(tess__tile_processor *p)
{
    flight f[2];
    int cur = 0, have = 0;
    double since = 0;
    tess__tile_item it;
    for (;;) {
        if (!have) {
            if (!pop(p, &it)) return;
            tile_begin(p, &it, &f[cur]);
            since = f[cur].t0;
            have = 1;
        }
        if (f[cur].out == p->out_buf) { /* the next tile takes the other scratch */
            void *b = p->out_buf;
            size_t cap = p->out_cap;
            p->out_buf = p->out_spare, p->out_cap = p->spare_cap;
            p->out_spare = b, p->spare_cap = cap;
        }
        int next = 1 - cur, more = f[cur].rc == TESS_OK && take(p, &it, 0);
        if (more) tile_begin(p, &it, &f[next]);
        if (more)
            f[next].d.input_s = 0; /* its input came while this tile ran: not in its seconds */
        f[cur].d.status = tile_end(p, &f[cur], since);
        since = tess_now();
        report(p, &f[cur].d, more ? &f[next] : NULL);
        cur = next;
        have = more;
    }
}

/*
 * After a tile that took TESS__TILE_SLOWED times its estimate, the
 * processor takes no other until the controller has read its report: the
 * controller then takes back the tiles queued for it at its old speed.
 * Taking the next one at once, as before, ran it at the slowed speed too:
 * with one CPU of two slowed to 5% mid-run, that tile ended 0.24 s after
 * the other processor had finished everything else (1.32x the ideal, bound
 * 1.3: tests/integration/tiles_long.sh).
 */
static void wait_until_seen(tess__tile_processor *p, const tess__tile_done *d)
{
    if (!(d->est > 0) || d->seconds < TESS__TILE_SLOWED * d->est) return;
    pthread_mutex_lock(&p->mu);
    while (p->seen < p->reported && !p->stop) pthread_cond_wait(&p->cv, &p->mu);
    pthread_mutex_unlock(&p->mu);
}

void tess__tile_proc_seen(tess__tile_processor *p)
{
    if (!p->started) return;
    pthread_mutex_lock(&p->mu);
    p->seen++;
    pthread_cond_broadcast(&p->cv);
    pthread_mutex_unlock(&p->mu);
}

static void *proc_main(void *arg)
{
    tess__tile_processor *p = arg;
    tess__tile_link *c = p->link;
    pin_maybe(p);
    if (p->starting) {
        double t0 = tess_now();
        tess__tile_done d = {.proc = p->index, .warm = 1, .started = t0 - c->t0};
        /* The start-up is mostly CPU work (PoCL loads LLVM for 60-80 ms):
         * at a lower priority it uses the cores the others leave idle
         * rather than slow them down.  Best effort; restored after (which
         * needs CAP_SYS_NICE: without it the thread keeps the lower one). */
        id_t tid = (id_t)syscall(SYS_gettid);
        int prio = getpriority(PRIO_PROCESS, tid);
        setpriority(PRIO_PROCESS, tid, prio + 10);
        d.status = start_device(p);
        setpriority(PRIO_PROCESS, tid, prio);
        d.seconds = tess_now() - t0;
        tess__tile_send(c, c->me, TILE_DONE, &d, sizeof d, NULL, 0);
    }
    if (p->spec.kind == TESS_TILE_CUDA) cuda_loop(p);
    else
        for (tess__tile_item it; pop(p, &it);) {
            tess__tile_done d;
            d.status = run_tile(p, &it, &d);
            report(p, &d, NULL);
            wait_until_seen(p, &d);
        }
    return NULL;
}

static int start_one(tess__tile_processor *p, tess__tile_link *c, const tess__tile_store *store,
                     int index, const tess__tile_proc_spec *spec, int pin_cpu)
{
    memset(p, 0, sizeof *p);
    p->pin_cpu = pin_cpu;
    p->link = c;
    p->store = store;
    p->index = index;
    p->spec = *spec;
    if (spec->kind == TESS_TILE_CUDA) { /* no device or driver: say that first */
        int rc = tess__tile_cuda_probe(c->ctx, spec);
        if (rc != TESS_OK) return rc;
    }
    TESS_RETURN_IF(c->ctx, c->job->kernel[spec->kind] == NULL, TESS_ERR_INVAL,
                   "tile job '%s' has no %s kernel (processor '%s')", c->job->name,
                   spec->kind == TESS_TILE_CPU      ? "cpu"
                   : spec->kind == TESS_TILE_OPENCL ? "opencl"
                                                    : "cuda",
                   spec->text);
    /* devices are opened in their own thread (start_device) */
    p->starting = spec->kind == TESS_TILE_OPENCL || spec->kind == TESS_TILE_CUDA;
    p->qcap = 64;
    p->queue = malloc((size_t)p->qcap * sizeof *p->queue);
    TESS_RETURN_IF(c->ctx, p->queue == NULL, TESS_ERR_NOMEM, "out of memory");
    pthread_mutex_init(&p->mu, NULL);
    pthread_cond_init(&p->cv, NULL);
    if (pthread_create(&p->thread, NULL, proc_main, p) != 0) {
        pthread_mutex_destroy(&p->mu);
        pthread_cond_destroy(&p->cv);
        free(p->queue);
        p->queue = NULL;
        return tess_set_error(c->ctx, TESS_ERR_NOMEM, "cannot start processor thread '%s'",
                              spec->text);
    }
    p->started = 1;
    return TESS_OK;
}

/* Bind CPU processors one to a core when they take every core of the
 * rank's mask and the cores are its own (StarPU binds its workers too);
 * TESS_TILE_PIN=0 turns it off.  Fewer processors than cores stay free: two
 * one-processor jobs on one machine would both be bound to its first core.
 * More processors than cores, or cores shared with other ranks, too. */
static int pin_processors(const tess__tile_procs *ps, tess_ctx *ctx)
{
    const char *e = getenv("TESS_TILE_PIN");
    if (e != NULL && strcmp(e, "0") == 0) return 0;
    if (e != NULL && strcmp(e, "1") != 0 && tess_rank(ctx) == 0)
        tess__warn(ctx, "TESS_TILE_PIN: expected 0 or 1, got '%s' (ignored)", e);
    int cpus = 0;
    for (int i = 0; i < ps->n; i++) cpus += ps->specs[i].kind == TESS_TILE_CPU;
    return cpus == tess__usable_cores() && tess__rank_owns_cores();
}

int tess__tile_procs_start(tess__tile_procs *ps, tess__tile_link *l, const tess__tile_store *s)
{
    int rc = tess__tile_parse_processors(l->ctx, l->args.processors, ps->specs, &ps->n);
    /* a pipeline's stages would bind theirs to the same cores: none bind */
    int pin = rc == TESS_OK && l->args.nstages <= 1 && pin_processors(ps, l->ctx), k = 0;
    for (int i = 0; rc == TESS_OK && i < ps->n; i++) {
        int cpu = pin && ps->specs[i].kind == TESS_TILE_CPU ? tess__nth_usable_cpu(k++) : -1;
        rc = start_one(&ps->p[i], l, s, i, &ps->specs[i], cpu);
    }
    return rc;
}

int tess__tile_proc_push(tess__tile_processor *p, const tess__tile_item *it)
{
    pthread_mutex_lock(&p->mu);
    if (p->qlen == p->qcap) { /* grow the ring, unrolled in order */
        tess__tile_item *q = malloc((size_t)p->qcap * 2 * sizeof *q);
        if (q == NULL) {
            pthread_mutex_unlock(&p->mu);
            return TESS_ERR_NOMEM;
        }
        for (int i = 0; i < p->qlen; i++) q[i] = p->queue[(p->qhead + i) % p->qcap];
        free(p->queue);
        p->queue = q;
        p->qhead = 0;
        p->qcap *= 2;
    }
    p->queue[(p->qhead + p->qlen) % p->qcap] = *it;
    p->qlen++;
    pthread_cond_signal(&p->cv);
    pthread_mutex_unlock(&p->mu);
    return TESS_OK;
}

double tess__tile_proc_running(tess__tile_processor *p)
{
    if (!p->started) return 0.0;
    pthread_mutex_lock(&p->mu);
    double run = p->run_since > 0 ? tess_now() - p->run_since : 0.0;
    if (run > p->run_est) run = p->run_est;
    pthread_mutex_unlock(&p->mu);
    return run;
}

int tess__tile_proc_recall(tess__tile_processor *p, tess__tile_item *out, int max)
{
    pthread_mutex_lock(&p->mu);
    int n = 0;
    while (p->qlen > 0 && n < max) /* from the back: the latest given first */
        out[n++] = p->queue[(p->qhead + --p->qlen) % p->qcap];
    pthread_mutex_unlock(&p->mu);
    return n;
}

static void stop_one(tess__tile_processor *p)
{
    if (p->started) {
        pthread_mutex_lock(&p->mu);
        p->stop = 1;
        p->qlen = 0; /* a failed run drops what is queued */
        pthread_cond_signal(&p->cv);
        pthread_mutex_unlock(&p->mu);
        pthread_join(p->thread, NULL);
        pthread_mutex_destroy(&p->mu);
        pthread_cond_destroy(&p->cv);
        p->started = 0;
    }
    if (p->device && p->spec.kind == TESS_TILE_CUDA) tess__tile_cuda_close(p->device);
    else if (p->device) tess__tile_opencl_close(p->device);
    p->device = NULL;
    free(p->queue);
    free(p->in_buf);
    free(p->out_buf);
    free(p->out_spare);
    p->queue = NULL;
    p->in_buf = p->out_buf = p->out_spare = NULL;
}

void tess__tile_procs_stop(tess__tile_procs *ps)
{
    for (int i = 0; i < ps->n; i++) stop_one(&ps->p[i]);
}
