/*
 * mpi_watch.c — the liveness watchdog of the progress engine.
 *
 * Every rank's progress thread sends a heartbeat twice a second: rank 0 to
 * every rank, the others to rank 0 (a star, so n ranks cost 2n small
 * messages a second, not n^2).  A heartbeat carries the sender's phase
 * (setting up, running, ending).  A rank that hears nothing from a peer it
 * watches for TESS_WATCHDOG_WARN seconds says so once; past TESS_WATCHDOG
 * seconds (default 60; 0 turns the watchdog off) it ends the job on every
 * rank with MPI_Abort, so a stopped rank (SIGSTOP, a hung node) never hangs
 * a job forever.  A rank whose progress thread still answers is alive, even
 * if its main thread is slow (a long input read before tess_main): for that
 * the waiting ranks only report, every TESS_WATCHDOG_WARN seconds, which
 * ranks they wait for and where those are.
 *
 * Heartbeats use their own tag and are received here, never dispatched, so
 * they flow before tess_main and while a rank waits in tess__comm_meet.
 */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include "mpi_engine.h"

#define TAG_LIVE 8
#define BEAT_SECONDS 0.5

struct tess__watch {
    tess_ctx *ctx;
    double limit, warn_after; /* seconds of silence; limit 0: never end the job */
    double last_beat, last_wait_note;
    double *heard; /* per rank: when its last heartbeat arrived */
    int *phase;    /* per rank: the phase its last heartbeat said */
    int *warned;   /* per rank: its silence was reported */
    MPI_Request *beat_req;
    int my_phase;
    int out; /* the value being sent (MPI reads it until the send completes) */
};

static const char *phase_name(int phase)
{
    switch (phase) {
    case TESS__PHASE_SETUP: return "setting up, before tess_main";
    case TESS__PHASE_RUN: return "running";
    default: return "ending";
    }
}

/* Seconds from an environment variable; `dflt` when unset, and also, with
 * a warning from rank 0, when it is not a number of seconds in [0, 1e6]. */
static double env_seconds(const tess_ctx *ctx, const char *name, double dflt)
{
    const char *v = getenv(name);
    if (v == NULL || v[0] == '\0') return dflt;
    char *end = NULL;
    double s = strtod(v, &end);
    if (end != v && *end == '\0' && s >= 0 && s <= 1e6) return s;
    if (ctx->rank == 0)
        tess__warn(ctx, "%s: expected seconds in [0, 1e6], got '%s' (ignored: %g s)", name, v,
                   dflt);
    return dflt;
}

int tess__watch_create(tess_ctx *ctx, tess__watch **out)
{
    *out = NULL;
    double limit = env_seconds(ctx, "TESS_WATCHDOG", 60);
    double warn = env_seconds(ctx, "TESS_WATCHDOG_WARN", 10);
    tess__watch *w = calloc(1, sizeof *w);
    int n = ctx->nranks;
    if (w == NULL) return TESS_ERR_NOMEM;
    w->ctx = ctx;
    w->heard = calloc((size_t)n, sizeof *w->heard);
    w->phase = calloc((size_t)n, sizeof *w->phase);
    w->warned = calloc((size_t)n, sizeof *w->warned);
    w->beat_req = calloc((size_t)n, sizeof *w->beat_req);
    if (w->heard == NULL || w->phase == NULL || w->warned == NULL || w->beat_req == NULL) {
        tess__watch_free(w);
        return TESS_ERR_NOMEM;
    }
    w->limit = limit;
    w->warn_after = limit > 0 && warn > limit / 2 ? limit / 2 : warn;
    double now = tess_now();
    for (int r = 0; r < n; r++) w->heard[r] = now, w->beat_req[r] = MPI_REQUEST_NULL;
    w->last_wait_note = now;
    *out = w;
    return TESS_OK;
}

/* Does this rank watch rank r: rank 0 watches everyone, the others rank 0. */
static int watches(const tess__watch *w, int r)
{
    return r != w->ctx->rank && (w->ctx->rank == 0 || r == 0);
}

static void send_beats(tess__watch *w, double now)
{
    if (now - w->last_beat < BEAT_SECONDS) return;
    w->last_beat = now;
    w->out = w->my_phase;
    for (int r = 0; r < w->ctx->nranks; r++) {
        if (!watches(w, r)) continue;
        int done = 1;
        if (w->beat_req[r] != MPI_REQUEST_NULL) MPI_Test(&w->beat_req[r], &done, MPI_STATUS_IGNORE);
        if (done) MPI_Isend(&w->out, 1, MPI_INT, r, TAG_LIVE, MPI_COMM_WORLD, &w->beat_req[r]);
    }
}

static void receive_beats(tess__watch *w, double now)
{
    for (;;) {
        int flag = 0, phase = 0;
        MPI_Status st;
        MPI_Iprobe(MPI_ANY_SOURCE, TAG_LIVE, MPI_COMM_WORLD, &flag, &st);
        if (!flag) return;
        MPI_Recv(&phase, 1, MPI_INT, st.MPI_SOURCE, TAG_LIVE, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        int r = st.MPI_SOURCE;
        if (w->warned[r])
            tess__warn(w->ctx, "rank %d answers again after %.0f s", r, now - w->heard[r]);
        w->heard[r] = now;
        w->phase[r] = phase;
        w->warned[r] = 0;
    }
}

static void check_silence(tess__watch *w, double now)
{
    for (int r = 0; r < w->ctx->nranks; r++) {
        if (!watches(w, r)) continue;
        double quiet = now - w->heard[r];
        if (w->limit > 0 && quiet >= w->limit) {
            tess__warn(w->ctx,
                       "rank %d has not answered for %.0f s (stopped or hung; last seen %s): "
                       "ending the job on every rank (TESS_WATCHDOG=%g)",
                       r, quiet, phase_name(w->phase[r]), w->limit);
            tess__comm_abort_now(w->ctx, 1);
        }
        if (quiet >= w->warn_after && !w->warned[r]) {
            w->warned[r] = 1;
            tess__warn(w->ctx,
                       "no word from rank %d for %.0f s (stopped or hung?); the job ends after "
                       "%g s of silence (TESS_WATCHDOG)",
                       r, quiet, w->limit);
        }
    }
}

void tess__watch_turn(tess__watch *w)
{
    if (w == NULL) return;
    double now = tess_now();
    send_beats(w, now);
    receive_beats(w, now);
    check_silence(w, now);
}

void tess__watch_set_phase(tess__watch *w, int phase)
{
    if (w == NULL) return;
    w->my_phase = phase;
    w->last_beat = 0; /* say it on the next turn: a peer that stops now is last seen here */
}

/* Rank 0 waiting at a meet: every warn_after seconds, which ranks it waits
 * for and where they are (alive, but not here yet). */
void tess__watch_note_wait(tess__watch *w, int where, double since)
{
    if (w == NULL || w->ctx->rank != 0 || w->warn_after <= 0) return;
    double now = tess_now();
    if (now - since < w->warn_after || now - w->last_wait_note < w->warn_after) return;
    w->last_wait_note = now;
    char list[256];
    size_t len = 0;
    list[0] = '\0';
    for (int r = 1; r < w->ctx->nranks && len + 48 < sizeof list; r++)
        if (w->phase[r] != where)
            len += (size_t)snprintf(list + len, sizeof list - len, "%s%d (%s)", len ? ", " : "", r,
                                    phase_name(w->phase[r]));
    if (len > 0) tess__warn(w->ctx, "waiting %.0f s for rank %s", now - since, list);
}

/* Before MPI_Finalize: every heartbeat sent has completed (all ranks are
 * alive and met, so each does at once). */
void tess__watch_free(tess__watch *w)
{
    if (w == NULL) return;
    for (int r = 0; w->beat_req != NULL && r < w->ctx->nranks; r++)
        if (w->beat_req[r] != MPI_REQUEST_NULL) MPI_Wait(&w->beat_req[r], MPI_STATUS_IGNORE);
    free(w->heard);
    free(w->phase);
    free(w->warned);
    free(w->beat_req);
    free(w);
}
