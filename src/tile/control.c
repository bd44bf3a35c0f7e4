/*
 * control.c — the controller of one rank (the APC+ paper's Algorithm 1 in
 * its distributed form): start the rank's processors, learn every rank's
 * input slab, then until the output rank announces that every output is
 * gathered: hand tiles to processors (policy.c), fetch stolen input
 * (store.c), steal when out of work (steal.c), answer peers, and tell them
 * periodically how much work it holds and how fast it goes, so every
 * controller knows the global estimated end time.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "comm/comm.h"
#include "tile/tile_internal.h"

#define STATUS_EVERY_S 0.1

typedef struct tile_status_msg {
    uint64_t left;
    double rate;
} tile_status_msg;

double tess__tile_now(const tess__tile_ctl *c) { return tess_now() - c->t0; }

int tess__tile_send(tess__tile_ctl *c, int dst, uint32_t type, const void *a, size_t alen,
                    const void *b, size_t blen)
{
    uint8_t small[sizeof(tess__tile_hdr) + 256];
    uint8_t *head = alen <= 256 ? small : malloc(sizeof(tess__tile_hdr) + alen);
    if (head == NULL) return TESS_ERR_NOMEM;
    tess__tile_hdr h = {.run_id = c->args.run_id, .type = type, .src = c->me};
    memcpy(head, &h, sizeof h);
    if (alen) memcpy(head + sizeof h, a, alen);
    int rc = tess__worker_send2(c->ctx, c->my_worker, c->ctx->worker_base[dst], head,
                                sizeof h + alen, b, blen);
    if (head != small) free(head);
    /* A message the controller could not send would leave a peer waiting:
     * end the run (processor threads report their failures in TILE_DONE). */
    if (rc != TESS_OK && type != TILE_ABORT && pthread_equal(pthread_self(), c->thread))
        tess__tile_abort_all(c, rc, "tiles: a message could not be sent");
    return rc;
}

void tess__tile_abort_all(tess__tile_ctl *c, int status, const char *msg)
{
    if (c->status != TESS_OK) return;
    c->status = status < 0 ? status : TESS_ERR_KERNEL;
    if (msg != tess_last_error(c->ctx)) tess_set_error(c->ctx, c->status, "%s", msg);
    char text[400];
    snprintf(text, sizeof text, "rank %d: %s", c->me, tess_last_error(c->ctx));
    int32_t st = c->status;
    for (int r = 0; r < c->nranks; r++)
        if (r != c->me) tess__tile_send(c, r, TILE_ABORT, &st, sizeof st, text, strlen(text) + 1);
}

/* ---- setup ---- */

/* Bind CPU processors one to a core when they take every core of the
 * rank's mask and the cores are its own (StarPU binds its workers too);
 * TESS_TILE_PIN=0 turns it off.  Fewer processors than cores stay free: two
 * one-processor jobs on one machine would both be bound to its first core.
 * More processors than cores, or cores shared with other ranks, too. */
static int pin_processors(const tess__tile_ctl *c)
{
    const char *e = getenv("TESS_TILE_PIN");
    if (e != NULL && strcmp(e, "0") == 0) return 0;
    int cpus = 0;
    for (int i = 0; i < c->nprocs; i++) cpus += c->specs[i].kind == TESS_TILE_CPU;
    return cpus == tess__usable_cores() && tess__rank_owns_cores();
}

static int start_processors(tess__tile_ctl *c)
{
    int rc = tess__tile_parse_processors(c->ctx, c->args.processors, c->specs, &c->nprocs);
    int pin = rc == TESS_OK && pin_processors(c), k = 0;
    for (int i = 0; rc == TESS_OK && i < c->nprocs; i++) {
        int cpu = pin && c->specs[i].kind == TESS_TILE_CPU ? tess__nth_usable_cpu(k++) : -1;
        rc = tess__tile_proc_start(&c->procs[i], c, i, &c->specs[i], cpu);
    }
    return rc;
}

static int setup(tess__tile_ctl *c)
{
    int rc = tess__tile_parse_policy(c->ctx, c->args.policy, c->job->ndims, &c->policy);
    if (rc == TESS_OK) rc = tess__tile_job_area(c->ctx, c->job, &c->policy, &c->area);
    if (rc != TESS_OK) return rc;
    c->total_cells = tess__tile_area_cells(&c->area);
    c->slab_lo = calloc((size_t)c->nranks, sizeof *c->slab_lo);
    c->slab_hi = calloc((size_t)c->nranks, sizeof *c->slab_hi);
    c->peer_empty = calloc((size_t)c->nranks, 1);
    c->peer_left = calloc((size_t)c->nranks, sizeof *c->peer_left);
    c->peer_rate = calloc((size_t)c->nranks, sizeof *c->peer_rate);
    TESS_RETURN_IF(c->ctx,
                   !c->slab_lo || !c->slab_hi || !c->peer_empty || !c->peer_left || !c->peer_rate,
                   TESS_ERR_NOMEM, "out of memory");
    const tess_tile_job *job = c->job;
    if (job->input != NULL) {
        c->slab_lo[c->me] = job->input_lo;
        c->slab_hi[c->me] = job->input_hi;
    }
    rc = start_processors(c);
    if (rc == TESS_OK) rc = tess__tile_policy_setup(c);
    return rc;
}

static int slab_job(const tess__tile_ctl *c)
{
    return c->job->in_bytes > 0 && c->job->read == NULL;
}

/* Rank r's slab lies in the area.  Each rank checks its own before any
 * work (its tiles must not reach outside the output), the others' when
 * their HELLO came. */
static int check_slab(tess__tile_ctl *c, int r)
{
    TESS_RETURN_IF(c->ctx,
                   slab_job(c) && (c->slab_lo[r] < 0 || c->slab_hi[r] < c->slab_lo[r] ||
                                   c->slab_hi[r] > c->area.extent[0]),
                   TESS_ERR_INVAL,
                   "tile job '%s': rank %d's input rows [%lld, %lld) are outside the area",
                   c->job->name, r, (long long)c->slab_lo[r], (long long)c->slab_hi[r]);
    return TESS_OK;
}

/* Every rank's slab: they must tile the first dimension exactly. */
static int check_slabs(tess__tile_ctl *c)
{
    const tess_tile_job *job = c->job;
    if (!slab_job(c)) return TESS_OK;
    uint64_t rows = 0;
    for (int r = 0; r < c->nranks; r++) {
        int rc = check_slab(c, r);
        if (rc != TESS_OK) return rc;
        for (int q = 0; q < r; q++)
            TESS_RETURN_IF(c->ctx, c->slab_lo[r] < c->slab_hi[q] && c->slab_lo[q] < c->slab_hi[r],
                           TESS_ERR_INVAL, "tile job '%s': ranks %d and %d both own input rows",
                           job->name, q, r);
        rows += (uint64_t)(c->slab_hi[r] - c->slab_lo[r]);
    }
    TESS_RETURN_IF(c->ctx, rows != (uint64_t)c->area.extent[0], TESS_ERR_INVAL,
                   "tile job '%s': the ranks own input for %llu of the %lld rows", job->name,
                   (unsigned long long)rows, (long long)c->area.extent[0]);
    return TESS_OK;
}

/* ---- messages ---- */

/* Processor proc's unstarted tiles go back to the work, for the plan to
 * share anew. */
static void recall_queue(tess__tile_ctl *c, int proc)
{
    tess__tile_item back[64];
    int n = tess__tile_proc_recall(&c->procs[proc], back, 64);
    tess__tile_proc *q = &c->plan.procs[proc];
    for (int k = 0; k < n; k++) {
        tess__tile_segment s = {.column = back[k].column,
                                .r0 = back[k].box.lo[0],
                                .r1 = back[k].box.hi[0],
                                .owner = c->me,
                                .chunk = back[k].chunk};
        q->queued_s = q->queued_s > back[k].est ? q->queued_s - back[k].est : 0.0;
        q->queued_tiles--;
        if (tess__tile_plan_push(&c->plan, &s) != TESS_OK)
            tess__tile_abort_all(c, TESS_ERR_NOMEM, "tiles: out of memory");
    }
}

/* A tile took far longer than its processor's model said: the processor
 * slowed down (another job took its core, a GPU throttled).  Its queue,
 * estimated at the old speed, would now end long after everyone else's, so
 * its unstarted tiles go back to the work and the plan shares them anew. */
static void recall_if_slowed(tess__tile_ctl *c, const tess__tile_done *d)
{
    if (c->policy.kind != TILE_APC || !(d->est > 0) || d->seconds < 4 * d->est) return;
    recall_queue(c, d->proc);
}

/*
 * The end game, on this rank: processor `idle` has nothing queued and no
 * work is left to hand out, while another still has tiles it has not
 * started (handed out on estimates, and the last one's processor ran
 * slower than estimated).  The queue that ends last goes back to the work,
 * so that the plan shares it between the two; without this the idle
 * processor waited for up to a tile (3-5 ms in the texture runs).
 */
static void rebalance_at_end(tess__tile_ctl *c, int idle)
{
    if (c->policy.kind != TILE_APC || c->plan.remaining > 0 || c->plan.procs[idle].queued_tiles > 0)
        return;
    int victim = -1;
    double latest = 0;
    tess__tile_policy_note_running(c);
    for (int i = 0; i < c->nprocs; i++) {
        double left = tess__tile_plan_queue_left(&c->plan, i);
        if (i != idle && c->plan.procs[i].queued_tiles >= 2 && left > latest)
            latest = left, victim = i;
    }
    if (victim >= 0) recall_queue(c, victim);
}

static void on_done(tess__tile_ctl *c, tess__tile_done *d)
{
    if (c->status != TESS_OK) { /* the run failed: only release what the tile held */
        d->status = c->status;
        tess__tile_store_done(c, d);
        return;
    }
    if (c->trace != NULL)
        fprintf(c->trace, "%d %d %.6f %.6f %.6f %llu\n", c->me, d->proc, d->started, d->seconds,
                d->est, (unsigned long long)d->cells);
    recall_if_slowed(c, d);
    if (d->started >= c->rs.boot_seconds && c->booted) c->busy_after_boot[d->proc] += d->seconds;
    tess__tile_policy_done(c, d);
    rebalance_at_end(c, d->proc);
    c->completed += d->cells;
    int rc = tess__tile_store_done(c, d);
    if (rc != TESS_OK) tess__tile_abort_all(c, rc, tess_last_error(c->ctx));
}

static void on_boot(tess__tile_ctl *c, uint64_t size)
{
    if (size > c->boot_agreed) c->boot_agreed = size;
    if (++c->boots == c->nranks)
        c->plan.floor_cells =
            c->boot_agreed < c->plan.max_cells ? c->boot_agreed : c->plan.max_cells;
}

static void on_abort(tess__tile_ctl *c, const uint8_t *p, size_t len)
{
    int32_t st = TESS_ERR_KERNEL;
    if (len >= sizeof st) memcpy(&st, p, sizeof st);
    const char *msg = len > sizeof st ? (const char *)p + sizeof st : "another rank failed";
    if (c->status == TESS_OK) {
        c->status = st < 0 ? st : TESS_ERR_KERNEL;
        tess_set_error(c->ctx, c->status, "%.*s", (int)(len - sizeof st), msg);
    }
}

/* The global estimated end time: all work left over the summed rates, from
 * the latest figures every rank sent (and this rank's own). */
static void estimate_end(tess__tile_ctl *c)
{
    c->peer_left[c->me] = tess__tile_policy_left(c) + c->received - c->completed;
    c->peer_rate[c->me] = tess__tile_rank_rate(c);
    double left = 0, rate = 0;
    for (int r = 0; r < c->nranks; r++) {
        left += (double)c->peer_left[r];
        rate += c->peer_rate[r];
    }
    if (rate > 0) c->rs.est_end = tess__tile_now(c) + left / rate;
}

/* Every rank's slab is known: check that they tile the area, give write()
 * the outputs held so far, and announce the end if the output was complete
 * before (tess__tile_store_finish_if_done). */
static void on_all_hellos(tess__tile_ctl *c)
{
    int rc = check_slabs(c);
    if (rc == TESS_OK) rc = tess__tile_store_slabs_checked(c);
    if (rc != TESS_OK) tess__tile_abort_all(c, rc, tess_last_error(c->ctx));
    else tess__tile_store_finish_if_done(c);
}

static void handle(tess__tile_ctl *c, const tess__tile_hdr *h, const uint8_t *p, size_t len)
{
    switch (h->type) {
    case TILE_HELLO: {
        int64_t s[2];
        if (len < sizeof s) return;
        memcpy(s, p, sizeof s);
        if (h->src != c->me) { /* this rank's own: set at setup, read by its processors */
            c->slab_lo[h->src] = s[0];
            c->slab_hi[h->src] = s[1];
        }
        if (++c->hellos == c->nranks) on_all_hellos(c);
        break;
    }
    case TILE_DONE: {
        tess__tile_done d;
        if (len < sizeof d) return;
        memcpy(&d, p, sizeof d);
        on_done(c, &d);
        break;
    }
    case TILE_STEAL: { /* the thief's rate and how long its queues last */
        double req[2] = {0, 0};
        memcpy(req, p, len < sizeof req ? len : sizeof req);
        tess__tile_steal_on_request(c, h->src, req[0], req[1]);
        break;
    }
    case TILE_GIVE: {
        int n = (int)(len / sizeof(tess__tile_wire_seg));
        tess__tile_wire_seg *w = malloc((size_t)(n ? n : 1) * sizeof *w);
        if (w == NULL) {
            tess__tile_abort_all(c, TESS_ERR_NOMEM, "tiles: out of memory");
            return;
        }
        memcpy(w, p, (size_t)n * sizeof *w);
        tess__tile_steal_on_give(c, h->src, w, n);
        free(w);
        break;
    }
    case TILE_FETCH: {
        tess__tile_wire_seg w;
        if (len >= sizeof w) memcpy(&w, p, sizeof w), tess__tile_store_on_fetch(c, h->src, &w);
        break;
    }
    case TILE_DATA: {
        tess__tile_wire_seg w;
        if (len < sizeof w) return;
        memcpy(&w, p, sizeof w);
        tess__tile_store_on_data(c, &w, p + sizeof w, len - sizeof w);
        break;
    }
    case TILE_OUTPUT: {
        tess__tile_box box;
        if (len < sizeof box) return;
        memcpy(&box, p, sizeof box);
        tess__tile_store_on_output(c, &box, p + sizeof box, len - sizeof box);
        break;
    }
    case TILE_OUTPUT_SHARED: {
        tess__tile_box box;
        if (len < sizeof box) return;
        memcpy(&box, p, sizeof box);
        tess__tile_store_on_shared_output(c, &box);
        break;
    }
    case TILE_STATUS: {
        tile_status_msg m;
        if (len < sizeof m) return;
        memcpy(&m, p, sizeof m);
        c->peer_left[h->src] = m.left;
        c->peer_rate[h->src] = m.rate;
        estimate_end(c);
        break;
    }
    case TILE_BOOT: {
        uint64_t size = 0;
        if (len >= sizeof size) memcpy(&size, p, sizeof size);
        on_boot(c, size);
        break;
    }
    case TILE_FINISH:
        if (len >= sizeof c->finish_at) memcpy(&c->finish_at, p, sizeof c->finish_at);
        c->finished = 1;
        break;
    case TILE_STATS: tess__tile_stats_on_message(c, h->src, p, len); break;
    case TILE_ABORT: on_abort(c, p, len); break;
    default: break;
    }
}

/* One message, waiting up to timeout seconds; 0 when none came. */
static int receive(tess__tile_ctl *c, double timeout)
{
    int src;
    void *data;
    size_t len;
    int local = c->my_worker - c->ctx->worker_base[c->me];
    if (!tess__worker_recv(c->ctx, local, timeout, &src, &data, &len)) return 0;
    tess__tile_hdr h;
    if (len >= sizeof h) {
        memcpy(&h, data, sizeof h);
        if (h.run_id == c->args.run_id && h.src >= 0 && h.src < c->nranks)
            handle(c, &h, (const uint8_t *)data + sizeof h, len - sizeof h);
    }
    free(data);
    return 1;
}

/* ---- the loop ---- */

static int all_idle(const tess__tile_ctl *c)
{
    for (int i = 0; i < c->nprocs; i++)
        if (c->plan.procs[i].queued_tiles > 0) return 0;
    return 1;
}

static void check_boot(tess__tile_ctl *c)
{
    if (c->booted) return;
    uint64_t largest = 0;
    for (int i = 0; i < c->nprocs; i++) {
        if (!c->plan.procs[i].boot.done) return;
        uint64_t s = c->plan.procs[i].boot.next;
        if (s > largest) largest = s;
    }
    c->booted = 1;
    c->rs.boot_seconds = c->policy.kind == TILE_APC ? tess__tile_now(c) : 0.0;
    for (int r = 0; r < c->nranks; r++)
        tess__tile_send(c, r, TILE_BOOT, &largest, sizeof largest, NULL, 0);
}

static void periodic(tess__tile_ctl *c)
{
    double now = tess__tile_now(c);
    if (c->nranks > 1 && now - c->last_status >= STATUS_EVERY_S) {
        c->last_status = now;
        tile_status_msg m = {tess__tile_policy_left(c) + c->received - c->completed,
                             tess__tile_rank_rate(c)};
        for (int r = 0; r < c->nranks; r++)
            if (r != c->me) tess__tile_send(c, r, TILE_STATUS, &m, sizeof m, NULL, 0);
    }
    if (c->args.progress && c->me == c->job->output_rank && now - c->last_progress >= 1.0) {
        c->last_progress = now;
        fprintf(stderr, "tiles %s: %5.1f%% of %llu cells, %.1f s\n", c->job->name,
                100.0 * (double)c->gathered / (double)c->total_cells,
                (unsigned long long)c->total_cells, now);
    }
}

static int main_loop(tess__tile_ctl *c)
{
    while (c->status == TESS_OK && !(c->finished && all_idle(c))) {
        if (tess_interrupted(c->ctx)) {
            tess__tile_abort_all(c, TESS_ERR_INTERRUPTED, "interrupted by a signal");
            break;
        }
        tess__tile_policy_dispatch(c);
        check_boot(c);
        tess__tile_store_request(c);
        tess__tile_steal_maybe(c);
        periodic(c);
        if (receive(c, 0.05)) /* drain what is there before deciding again */
            while (c->status == TESS_OK && receive(c, 0.0)) {
            }
    }
    return c->status;
}

/* Tell every rank this rank's slab, and start at once: a rank's own work
 * needs nothing from the others.  Waiting for every HELLO first cost
 * milliseconds on ranks sharing cores (4 ranks on 2: a rank started its
 * first tile up to 9 ms after the run began).  The slabs are checked when
 * the last HELLO comes, and the end is not announced before. */
static int hello(tess__tile_ctl *c)
{
    int rc = check_slab(c, c->me);
    if (rc != TESS_OK) return rc;
    int64_t s[2] = {c->slab_lo[c->me], c->slab_hi[c->me]};
    for (int r = 0; r < c->nranks; r++) tess__tile_send(c, r, TILE_HELLO, s, sizeof s, NULL, 0);
    return c->status;
}

static void teardown(tess__tile_ctl *c)
{
    for (int i = 0; i < c->nprocs; i++) tess__tile_proc_stop(&c->procs[i]);
    tess__tile_plan_free(&c->plan);
    for (int i = 0; c->lists && i < c->nprocs; i++) free(c->lists[i]);
    free(c->lists);
    free(c->list_len);
    free(c->list_head);
    free(c->slab_lo);
    free(c->slab_hi);
    free(c->peer_empty);
    free(c->peer_left);
    free(c->peer_rate);
    free(c->pending);
    tess__tile_store_free_held(c);
}

/*
 * TESS_TILE_TRACE=PREFIX: each rank's controller appends a line per
 * finished tile to PREFIX.RANK — rank, processor, started and took
 * (seconds since the run started), the model's estimate, cells — to see
 * what the bootstrap and the end game did.  A debugging aid
 * (docs/tiles.md); a file that cannot be opened only loses the trace.
 */
static void open_trace(tess__tile_ctl *c)
{
    const char *prefix = getenv("TESS_TILE_TRACE");
    if (prefix == NULL || *prefix == '\0') return;
    char path[4096];
    snprintf(path, sizeof path, "%s.%d", prefix, c->me);
    c->trace = fopen(path, "a");
    /* the clock's origin, so that ranks on one machine line up */
    if (c->trace != NULL) fprintf(c->trace, "# start %.6f\n", c->t0);
}

int tess__tile_control_run(tess_ctx *ctx, const tess_tile_job *job, const tess__tile_args *a)
{
    tess__tile_ctl *c = calloc(1, sizeof *c);
    TESS_RETURN_IF(ctx, c == NULL, TESS_ERR_NOMEM, "out of memory");
    c->ctx = ctx;
    c->job = job;
    c->args = *a;
    c->me = tess_rank(ctx);
    c->nranks = tess_nranks(ctx);
    c->my_worker = ctx->worker_base[c->me];
    c->thread = pthread_self();
    /* Rank 0's clock starts at tess_tile_run; other ranks (maybe on other
     * machines, other clocks) start theirs when their controller starts. */
    c->t0 = c->me == 0 ? a->t0 : tess_now();
    c->rng = a->seed * 0x9E3779B97F4A7C15ULL + (uint64_t)c->me + 1;
    open_trace(c);
    int rc = setup(c);
    if (rc != TESS_OK) tess__tile_abort_all(c, rc, tess_last_error(ctx));
    rc = hello(c);
    if (rc != TESS_OK) tess__tile_abort_all(c, rc, tess_last_error(ctx));
    rc = main_loop(c);
    for (int i = 0; i < c->nprocs; i++) tess__tile_proc_stop(&c->procs[i]);
    if (rc != TESS_OK) /* release the chunks of tiles that were running */
        while (receive(c, 0.0)) {
        }
    if (!c->booted) c->rs.boot_seconds = c->finish_at; /* the work ran out first */
    if (rc == TESS_OK) tess__tile_stats_send(c);
    if (rc == TESS_OK && c->me == 0)
        while (c->stats_in < c->nranks && c->status == TESS_OK && !tess_interrupted(ctx))
            receive(c, 0.05);
    rc = c->status;
    if (c->trace != NULL) {
        fprintf(c->trace, "# end %.6f\n", tess__tile_now(c));
        fclose(c->trace);
    }
    teardown(c);
    free(c);
    return rc;
}
