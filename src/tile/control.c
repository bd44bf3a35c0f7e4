/*
 * control.c — the controller of one rank (the APC+ paper's Algorithm 1 in
 * its distributed form).  It builds the rank's modules (tile_internal.h
 * lists them), each routing its own message types, then until the output
 * rank announces that every output is gathered: hands tiles to processors
 * (policy.c), fetches stolen input (store.c), steals when out of work
 * (steal.c), runs the handlers of the messages that came (link.c), and
 * tells the peers periodically how much work it holds and how fast it
 * goes, so every controller knows the global estimated end time, which
 * sizes its tiles near the end (plan.h, global_left_s).  The
 * processors' reports (TILE_DONE) and the peers' status (TILE_STATUS) are
 * routed here.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "tile/policy_central.h"
#include "tile/stats.h"
#include "tile/steal.h"

#define STATUS_EVERY_S 0.1

typedef struct ctl {
    tess__tile_link link; /* first: the others point into it */
    tess__tile_store store;
    tess__tile_procs procs;
    tess__tile_policy policy;
    tess__tile_steal steal;
    tess__tile_tally tally;
    tess__tile_central central; /* --policy capc (central_on): rank 0 plans for all */
    int central_on;
    /* per rank: cells not finished and aggregate rate, from its last status */
    uint64_t *peer_left;
    double *peer_rate;
    uint64_t completed; /* cells this rank's processors finished */
    double est_end;     /* the last global estimated end time */
    double last_status, last_progress;
    FILE *trace; /* TESS_TILE_TRACE: one line per finished tile, or NULL */
} ctl;

typedef struct tile_status_msg {
    uint64_t left;
    double rate;
} tile_status_msg;

/* Cells this rank holds and has not finished: its own work and what it
 * stole, less what it gave, less what its processors finished. */
static uint64_t cells_left(const ctl *c)
{
    uint64_t received = c->policy.own_cells + c->steal.stolen_in - c->steal.stolen_out;
    uint64_t held = tess__tile_policy_left(&c->policy) + received;
    return held > c->completed ? held - c->completed : 0; /* capc: rank 0 holds the work */
}

/* ---- messages ---- */

static void handle_done(ctl *c, tess__tile_done *d)
{
    if (c->link.status != TESS_OK) { /* the run failed: only release what the tile held */
        d->status = c->link.status;
        tess__tile_store_done(&c->store, d);
        return;
    }
    if (d->warm) { /* a processor's start-up ended: it may take tiles now */
        if (c->trace != NULL)
            fprintf(c->trace, "# started %d %.6f %.6f\n", d->proc, d->started, d->seconds);
        if (d->status != TESS_OK) tess__tile_abort_all(&c->link, d->status, NULL);
        else tess__tile_policy_started(&c->policy, d->proc, d->seconds);
        if (d->status == TESS_OK && c->central_on) tess__tile_central_done(&c->central, d);
        return;
    }
    if (c->trace != NULL)
        fprintf(c->trace, "%d %d %.6f %.6f %.6f %llu\n", c->link.me, d->proc, d->started,
                d->seconds, d->est, (unsigned long long)d->cells);
    const tess__tile_policy *pol = &c->policy;
    int after_boot = c->central_on ? c->central.booted && d->started >= c->central.boot_seconds
                                   : pol->booted && d->started >= pol->boot_seconds;
    tess__tile_tally_done(&c->tally, d, after_boot);
    tess__tile_policy_done(&c->policy, d);
    if (c->central_on) tess__tile_central_done(&c->central, d);
    c->completed += d->cells;
    int rc = tess__tile_store_done(&c->store, d);
    if (rc != TESS_OK) tess__tile_abort_all(&c->link, rc, NULL);
}

/* TILE_DONE: a processor of this rank finished a tile.  It learns that
 * the report was read, after the plan took in what it says (a processor
 * that slowed down waits for that: proc.c, wait_until_seen). */
static void on_done_message(void *state, int src, const uint8_t *p, size_t len)
{
    ctl *c = state;
    tess__tile_done d;
    (void)src;
    if (!tess__tile_unpack(p, len, &d, sizeof d)) return;
    handle_done(c, &d);
    if (!d.warm && d.proc >= 0 && d.proc < c->procs.n) tess__tile_proc_seen(&c->procs.p[d.proc]);
}

/* The global estimated end time: all work left over the summed rates, from
 * the latest figures every rank sent (and this rank's own). */
static void estimate_end(ctl *c)
{
    int me = c->link.me;
    c->peer_left[me] = cells_left(c);
    c->peer_rate[me] = tess__tile_policy_rate(&c->policy);
    double left = 0, rate = 0;
    for (int r = 0; r < c->link.nranks; r++) {
        left += (double)c->peer_left[r];
        rate += c->peer_rate[r];
    }
    if (rate > 0) c->est_end = tess__tile_now(&c->link) + left / rate;
}

/* TILE_STATUS: a peer's work left and rate. */
static void on_status(void *state, int src, const uint8_t *p, size_t len)
{
    ctl *c = state;
    tile_status_msg m;
    if (!tess__tile_unpack(p, len, &m, sizeof m)) return;
    c->peer_left[src] = m.left;
    c->peer_rate[src] = m.rate;
    estimate_end(c);
}

/* The storage layer fetched input: the work is ready, and a steal that
 * waited for it took this long. */
static void on_ready(void *arg, const tess__tile_segment *s)
{
    ctl *c = arg;
    if (c->central_on) { /* a tile rank 0 handed here, its input fetched whole */
        tess__tile_central_ready(&c->central, s);
        return;
    }
    tess__tile_steal_timed(&c->steal);
    if (tess__tile_policy_add_work(&c->policy, s) != TESS_OK)
        tess__tile_abort_all(&c->link, TESS_ERR_NOMEM, "tiles: out of memory for a transfer");
}

/* ---- setup ---- */

static int setup(ctl *c)
{
    tess__tile_link *l = &c->link;
    tess__tile_policy_spec spec;
    int rc = tess__tile_parse_policy(l->ctx, l->args.policy, l->job->ndims, &spec);
    if (rc == TESS_OK) tess__tile_policy_fit(l->job, &spec);
    if (rc == TESS_OK) rc = tess__tile_job_area(l->ctx, l->job, &spec, &l->area);
    if (rc == TESS_OK) rc = tess__tile_store_init(&c->store, l, on_ready, c);
    if (rc == TESS_OK) rc = tess__tile_steal_init(&c->steal, l, &c->store, &c->policy);
    if (rc != TESS_OK) return rc;
    c->peer_left = calloc((size_t)l->nranks, sizeof *c->peer_left);
    c->peer_rate = calloc((size_t)l->nranks, sizeof *c->peer_rate);
    TESS_RETURN_IF(l->ctx, !c->peer_left || !c->peer_rate, TESS_ERR_NOMEM, "out of memory");
    tess__tile_tally_init(&c->tally, l);
    rc = tess__tile_procs_start(&c->procs, l, &c->store);
    if (rc == TESS_OK) rc = tess__tile_policy_init(&c->policy, l, &c->store, &c->procs, &spec);
    c->central_on = spec.kind == TILE_CAPC;
    if (rc == TESS_OK && c->central_on)
        rc = tess__tile_central_init(&c->central, l, &c->store, &c->procs, &c->policy);
    return rc;
}

/* ---- the loop ---- */

static void periodic(ctl *c)
{
    tess__tile_link *l = &c->link;
    double now = tess__tile_now(l);
    if (l->nranks > 1 && now - c->last_status >= STATUS_EVERY_S) {
        c->last_status = now;
        tile_status_msg m = {cells_left(c), tess__tile_policy_rate(&c->policy)};
        for (int r = 0; r < l->nranks; r++)
            if (r != l->me) tess__tile_send(l, r, TILE_STATUS, &m, sizeof m, NULL, 0);
    }
    if (l->args.progress && l->me == l->job->output_rank && now - c->last_progress >= 1.0) {
        c->last_progress = now;
        fprintf(stderr, "tiles %s: %5.1f%% of %llu cells, %.1f s\n", l->job->name,
                100.0 * (double)c->store.gathered / (double)c->store.total_cells,
                (unsigned long long)c->store.total_cells, now);
    }
}

static int main_loop(ctl *c)
{
    tess__tile_link *l = &c->link;
    while (l->status == TESS_OK && !(c->store.finished && tess__tile_policy_idle(&c->policy))) {
        if (tess_interrupted(l->ctx)) {
            tess__tile_abort_all(l, TESS_ERR_INTERRUPTED, "interrupted by a signal");
            break;
        }
        if (tess__fault(l->ctx, "tile")) {
            tess__tile_abort_all(l, TESS_ERR_IO,
                                 "injected fault in the tiles controller (TESS_FAULT)");
            break;
        }
        if (tess__run_failed(l->ctx)) { /* a processor's kernel failed on this rank */
            tess__tile_abort_all(l, TESS_ERR_KERNEL, "a kernel of this run failed");
            break;
        }
        double now = tess__tile_now(l);
        c->policy.plan.global_left_s = c->est_end > now ? c->est_end - now : 0.0;
        if (c->central_on) tess__tile_central_dispatch(&c->central);
        else tess__tile_policy_dispatch(&c->policy);
        tess__tile_policy_check_boot(&c->policy);
        if (c->central_on ? c->central.booted : c->policy.booted)
            tess__tile_tally_boot(&c->tally, &c->store);
        tess__tile_store_request(&c->store);
        if (!c->central_on) tess__tile_steal_maybe(&c->steal);
        periodic(c);
        if (tess__tile_link_receive(l, 0.05)) /* drain what is there before deciding again */
            while (l->status == TESS_OK && tess__tile_link_receive(l, 0.0)) {
            }
    }
    return l->status;
}

/* This rank's statistics for rank 0, from the modules that counted them. */
static void send_stats(ctl *c)
{
    const tess__tile_steal *st = &c->steal;
    const tess__tile_store *s = &c->store;
    tess_tile_rank_stats rs = {.stolen_in = st->stolen_in,
                               .stolen_out = st->stolen_out,
                               .steals_in = st->steals_in,
                               .steals_out = st->steals_out,
                               .bytes_in = s->bytes_in,
                               .bytes_out = s->bytes_out,
                               .output_bytes_shared = s->output_bytes_shared,
                               .boot_seconds = c->policy.boot_seconds,
                               .est_end = c->est_end};
    tess__tile_tally_controller(&c->tally, s, &rs);
    tess__tile_stats_send(&c->tally, &rs, s->finish_at, &c->procs, &c->policy);
}

static void teardown(ctl *c)
{
    tess__tile_procs_stop(&c->procs);
    tess__tile_policy_free(&c->policy);
    tess__tile_central_free(&c->central);
    tess__tile_steal_free(&c->steal);
    tess__tile_store_free(&c->store);
    free(c->peer_left);
    free(c->peer_rate);
}

/*
 * TESS_TILE_TRACE=PREFIX: each rank's controller appends a line per
 * finished tile to PREFIX.RANK — rank, processor, started and took
 * (seconds since the run started), the model's estimate, cells — to see
 * what the bootstrap and the end game did.  A debugging aid
 * (docs/tiles.md); a file that cannot be opened only loses the trace.
 */
static void open_trace(ctl *c)
{
    const char *prefix = getenv("TESS_TILE_TRACE");
    if (prefix == NULL || *prefix == '\0') return;
    char path[4096];
    if (c->link.args.nstages > 1) /* a pipeline: a file per stage */
        snprintf(path, sizeof path, "%s.%d.s%d", prefix, c->link.me, c->link.args.stage);
    else snprintf(path, sizeof path, "%s.%d", prefix, c->link.me);
    c->trace = fopen(path, "a");
    if (c->trace == NULL)
        tess__warn(c->link.ctx, "TESS_TILE_TRACE: cannot open %s: %s (no trace)", path,
                   strerror(errno));
    /* the clock's origin, so that ranks on one machine line up */
    if (c->trace != NULL) fprintf(c->trace, "# start %.6f\n", c->link.t0);
}

int tess__tile_control_run(tess_ctx *ctx, const tess_tile_job *job, const tess__tile_args *a)
{
    ctl *c = calloc(1, sizeof *c);
    TESS_RETURN_IF(ctx, c == NULL, TESS_ERR_NOMEM, "out of memory");
    tess__tile_link *l = &c->link;
    tess__tile_link_init(l, ctx, job, a);
    tess__tile_link_route(l, TILE_DONE, on_done_message, c);
    tess__tile_link_route(l, TILE_STATUS, on_status, c);
    open_trace(c);
    int rc = setup(c);
    if (rc != TESS_OK) tess__tile_abort_all(l, rc, NULL);
    rc = tess__tile_store_hello(&c->store);
    if (rc != TESS_OK) tess__tile_abort_all(l, rc, NULL);
    rc = main_loop(c);
    tess__tile_procs_stop(&c->procs);
    if (rc != TESS_OK) /* release the chunks of tiles that were running */
        while (tess__tile_link_receive(l, 0.0)) {
        }
    if (!c->policy.booted) c->policy.boot_seconds = c->store.finish_at; /* the work ran out first */
    if (c->central_on) /* capc: the bootstrap of rank 0's plan */
        c->policy.boot_seconds = c->central.booted ? c->central.boot_seconds : c->store.finish_at;
    if (rc == TESS_OK) send_stats(c);
    if (rc == TESS_OK && l->me == 0)
        while (c->tally.stats_in < l->nranks && l->status == TESS_OK && !tess_interrupted(ctx))
            tess__tile_link_receive(l, 0.05);
    rc = l->status;
    if (c->trace != NULL) {
        fprintf(c->trace, "# end %.6f\n", tess__tile_now(l));
        fclose(c->trace);
    }
    teardown(c);
    free(c);
    return rc;
}
