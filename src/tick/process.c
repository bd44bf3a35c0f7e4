/*
 * process.c — one tick process: the five algorithms as one loop
 * (docs/ticks.md).
 *
 * Notation: Q_i is this process's query, hold(X) = RD(WD(X)) the tuples at
 * tick t needed to compute the tuples of X at t+1 (the paper's WD∘RD), and
 * inner(X) = WX(RX(X)) the tuples at t+1 that stepping X alone determines
 * (Table 1's RX and WX shrink).  L_s = hold^s(Q_i), I_s = inner^s(Q_i).
 *
 * Every k ticks (a *round start* c) each process sends to each neighbour j
 * its own tuples of tick c that lie in L_{m+1}(Q_j); having received from all
 * of its neighbours it holds every tuple of L_{m+1}(Q_i) at tick c, from
 * which it computes tick c+s on the target region L_{m+1-s}(Q_i) for
 * s = 1 .. k-1 and Q_i at c+k (replication: k, m; k = 1, m = 0 is local
 * synchronisation; replica layers beyond what the next round needs are
 * computed lazily, width.c).  Dependency scheduling (depth d) lets the
 * process compute up to d ticks beyond the last tick it could complete: at
 * tick v it computes its target within I_(v - r), r the oldest round some
 * neighbour has not delivered — tuples that its own tuples of tick r alone
 * determine, which late data cannot change.
 * Each tuple of each tick is computed once by STEP from the same inputs as
 * the sequential program, so the state is bitwise the sequential state.
 *
 * A version (tick) is *full* when its target region is computed and
 * *complete* when, besides, its round data have arrived (round starts), the
 * global barrier released it (bsp) and re-partitioning at it is done.  Slots
 * hold versions done .. done + d + 1, where done is the last complete tick.
 */
#include <stdio.h>
#include <stdlib.h>
#include <sys/prctl.h>
#include <string.h>
#include <time.h>
#include "tessera/tick_particles.h"
#include "tick/process_impl.h"

double tess__tick_proc_thread_cpu_us(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
    return (double)ts.tv_sec * 1e6 + (double)ts.tv_nsec / 1e3;
}

/*
 * The CPU meter (proc_meter).  A STEP, a wait or the emulated compute does
 * not end with a read of its own: it lasts until the next state is entered,
 * and the runtime's work enters METER_RUNTIME where it starts (a message
 * handled, a round's data packed and sent, PART's snapshot and moves, a
 * checkpoint, the end).  The loop's few checks between two accounted
 * states (what to compute or wait for next, an empty mailbox polled) count
 * with the state left.
 *
 * The thread CPU clock is a system call (0.36 us here): it is read only
 * where a STEP starts or ends, and at the start and the end, so a STEP's
 * CPU is exact.  Between two STEPs the runtime's work and the waits take
 * turns several times a tick (each message handled, each round sent); each
 * change there reads only the monotonic clock (vDSO, 20 ns), and the CPU
 * between two reads of the CPU clock is split: the runtime gets its wall
 * time, at most that CPU, the waits the rest.  A thread uses no more CPU
 * than the wall time it runs, so the runtime's share is an upper bound:
 * preempted inside the runtime's work, the thread is charged for the time
 * it did not run.  Reading the CPU clock at every change, as until
 * 2026-11-29 (TESS_TICK_METER=exact), was part of what it measured: at the
 * paper's scale, 17.7 against 13.2 us a process-tick for fish sched d=1,
 * 7.7 against 4.7 for Jacobi local (medians of 5 rounds).  Per process, on
 * its own thread: nothing shared.
 */
/* Give the CPU since the last read of the CPU clock to what ran since. */
static void meter_read_cpu(proc_meter *m)
{
    double cpu = tess__tick_proc_thread_cpu_us();
    double c = cpu - m->cpu_us;
    m->cpu_us = cpu;
    if (m->exact || m->state == METER_STEP) {
        m->us[m->state] += c;
    } else {
        double r = m->runtime_wall_us < c ? m->runtime_wall_us : c;
        m->us[METER_RUNTIME] += r;
        m->us[METER_WAIT] += c - r;
    }
    m->runtime_wall_us = 0;
}

/* Close the state being left at `now` (monotonic µs). */
static void meter_leave(proc_meter *m, double now, int reading)
{
    if (m->state == METER_RUNTIME) m->runtime_wall_us += now - m->wall_us;
    m->wall_us = now;
    if (reading) meter_read_cpu(m);
}

void tess__tick_proc_meter(proc *p, int state)
{
    proc_meter *m = &p->meter;
    if (!m->on || state == m->state) return;
    int reading = m->exact || m->state == METER_STEP || state == METER_STEP;
    meter_leave(m, tess__tick_now_us(), reading);
    m->state = state;
}

static void meter_start(proc *p, int exact)
{
    p->meter = (proc_meter){.on = 1, .exact = exact, .state = METER_RUNTIME};
    p->meter.wall_us = tess__tick_now_us();
    p->meter.cpu_us = tess__tick_proc_thread_cpu_us();
}

/* The CPU since meter_start, everything up to now attributed. */
static double meter_total_us(proc *p)
{
    proc_meter *m = &p->meter;
    meter_leave(m, tess__tick_now_us(), 1);
    return m->us[METER_RUNTIME] + m->us[METER_STEP] + m->us[METER_WAIT];
}

int tess__tick_proc_fail(proc *p, int code, const char *fmt, const char *what)
{
    tess__fail(p->ctx, code, fmt, p->app->name, what);
    return code;
}

/* ---- queries ---- */

static void hold_of(const proc *p, const tess_query *q, tess_query *out)
{
    tess_query t;
    p->app->wd(p->app->user, q, &t);
    p->app->rd(p->app->user, &t, out);
}

static void inner_of(const proc *p, const tess_query *q, tess_query *out)
{
    tess_query t;
    p->app->rx(p->app->user, q, &t);
    p->app->wx(p->app->user, &t, out);
}

static void hold_pow(const proc *p, const tess_query *q, int s, tess_query *out)
{
    tess_query cur = *q;
    for (int i = 0; i < s; i++) {
        tess_query next;
        hold_of(p, &cur, &next);
        cur = next;
    }
    *out = cur;
}

/* Per side: out[s] holds every tuple whose value s ticks later may depend
 * on one of q now (IX^s(q), s = 0..A). */
static void reach_of(const proc *p, const tess_query *q, tess_query *out)
{
    out[0] = *q;
    for (int s = 1; s <= p->A; s++) p->app->ix(p->app->user, &out[s - 1], &out[s]);
}

static void proc_plan_free(proc *p)
{
    free(p->Lown);
    free(p->in_ids);
    free(p->out_ids);
    free(p->in_index);
    free(p->inner);
    free(p->out_L);
    free(p->reach);
    free(p->hold_in);
    free(p->side_w);
    free(p->recv_round);
    free(p->send_next);
    p->send_next = NULL;
    p->Lown = p->inner = p->out_L = p->reach = p->hold_in = NULL;
    p->side_w = NULL;
    p->in_ids = p->out_ids = p->in_index = NULL;
    p->recv_round = NULL;
}

/* Neighbours, replica regions and inner regions for the partition in p->Q. */
int tess__tick_proc_plan_build(proc *p, int64_t first_round)
{
    proc_plan_free(p);
    const tess_tick_app *app = p->app;
    int n = p->n, m = p->m;
    p->Lown = malloc((size_t)(m + 2) * sizeof *p->Lown);
    p->in_ids = malloc((size_t)n * sizeof *p->in_ids);
    p->out_ids = malloc((size_t)n * sizeof *p->out_ids);
    p->in_index = malloc((size_t)n * sizeof *p->in_index);
    p->inner = malloc((size_t)(p->A + 1) * sizeof *p->inner);
    p->out_L = malloc((size_t)n * sizeof *p->out_L);
    p->recv_round = malloc((size_t)n * sizeof *p->recv_round);
    p->send_next = malloc((size_t)n * sizeof *p->send_next);
    if (!p->Lown || !p->in_ids || !p->out_ids || !p->in_index || !p->inner || !p->out_L ||
        !p->recv_round || !p->send_next)
        return TESS_ERR_NOMEM;
    p->Lown[0] = p->Q[p->me];
    for (int s = 1; s <= m + 1; s++) hold_of(p, &p->Lown[s - 1], &p->Lown[s]);
    p->inner[0] = p->Q[p->me];
    for (int s = 1; s <= p->A; s++) inner_of(p, &p->inner[s - 1], &p->inner[s]);
    p->n_in = p->n_out = 0;
    if (p->sides) {
        p->reach = malloc((size_t)n * (size_t)(p->A + 1) * sizeof *p->reach);
        if (p->reach == NULL) return TESS_ERR_NOMEM;
    }
    int side_replicas = p->sides && m + 1 >= 2 * p->k; /* lazy replicas per side */
    if (side_replicas) {
        p->hold_in = malloc((size_t)n * (size_t)(p->k + 1) * sizeof *p->hold_in);
        if (p->hold_in == NULL) return TESS_ERR_NOMEM;
    }
    for (int j = 0; j < n; j++) {
        p->in_index[j] = -1;
        if (j == p->me) continue;
        /* j sends to i exactly when Q_j meets L_{m+1}(Q_i): both sides ask
         * DISJOINT with the same arguments, so they agree. */
        if (!app->disjoint(app->user, &p->Q[j], &p->Lown[m + 1])) {
            int x = p->n_in++;
            p->in_ids[x] = j;
            p->in_index[j] = x;
            p->recv_round[x] = first_round;
            if (p->sides) reach_of(p, &p->Q[j], p->reach + (size_t)x * (size_t)(p->A + 1));
            if (side_replicas) {
                tess_query *h = p->hold_in + (size_t)x * (size_t)(p->k + 1);
                h[0] = p->Q[j];
                for (int s = 1; s <= p->k; s++) hold_of(p, &h[s - 1], &h[s]);
            }
        }
        tess_query Lj;
        hold_pow(p, &p->Q[j], m + 1, &Lj);
        if (!app->disjoint(app->user, &p->Q[p->me], &Lj)) {
            p->out_L[p->n_out] = Lj;
            p->send_next[p->n_out] = first_round;
            p->out_ids[p->n_out++] = j;
        }
    }
    if (side_replicas) {
        size_t nw = (size_t)p->nslots * (size_t)(p->n_in > 0 ? p->n_in : 1);
        p->side_w = malloc(nw * sizeof *p->side_w);
        if (p->side_w == NULL) return TESS_ERR_NOMEM;
        for (size_t e = 0; e < nw; e++) p->side_w[e] = (side_width){-1, -1};
    }
    return TESS_OK;
}

/* ---- versions ---- */

/*
 * Slots: versions take a state-class slot when first written and give it
 * back once no tick reads them, and the slot given back last is taken
 * first.  With messages on time a process cycles through a few warm slots
 * however many versions replication or scheduling may keep (a fixed slot
 * per version number walked the whole, cold, set every tick).
 */
int tess__tick_proc_slot(proc *p, int64_t v)
{
    version *x = ver_of(p, v);
    if (x->slot < 0) {
        x->slot = p->free_slots[--p->nfree]; /* one slot per version entry: never empty */
        p->app->state->clear(p->st, x->slot);
    }
    return x->slot;
}

static void release(proc *p, version *x)
{
    if (x->slot < 0) return;
    p->free_slots[p->nfree++] = x->slot;
    x->slot = -1;
}

void tess__tick_proc_release_below(proc *p, int64_t below)
{
    for (; p->low < below; p->low++) {
        version *x = ver_of(p, p->low);
        if (x->v == p->low) release(p, x);
    }
}

void tess__tick_proc_version_reset(proc *p, int64_t v)
{
    version *x = ver_of(p, v);
    release(p, x);
    *x = (version){.v = v, .width = -1, .slot = -1};
}

int tess__tick_proc_is_repart_tick(const proc *p, int64_t v)
{
    return p->a->repart_every > 0 && v > 0 && v < p->a->ticks && v % p->a->repart_every == 0;
}

/* The region version v must hold to be full: L_{k-s}(Q_i) at place s of its
 * round, Q_i at its end (width.c); wider layers only on demand. */
static const tess_query *target_of(const proc *p, int64_t v)
{
    return &p->Lown[tess__tick_width_std(&p->widths, v)];
}

/* ---- the checking mode ---- */

static void note_held_region(proc *p, int64_t v, const tess_region *r)
{
    if (!p->check || p->app->state != &tess_particles_class) return;
    tess__tick_proc_meter(p, METER_RUNTIME);
    tess__particles_held(p->st, slot_of(p, v), r);
}

void tess__tick_proc_note_held(proc *p, int64_t v, const tess_query *q)
{
    tess_region r = {.npos = 1, .pos = q};
    note_held_region(p, v, &r);
}

/* Round v of in-neighbour src is merged into version v: it holds src's part
 * of L_{m+1}(Q_i) from now on, whatever else it holds yet (computing ahead
 * per side reads it before the version is full). */
void tess__tick_proc_note_ghost(proc *p, int64_t v, int src)
{
    if (!p->check) return; /* before copying two queries, at every round merged */
    tess_query part[2] = {p->Lown[p->m + 1], p->Q[src]};
    tess_region r = {.npos = 2, .pos = part};
    note_held_region(p, v, &r);
}

/* A full round start holds L_{m+1}(Q_i) once every neighbour's tuples are
 * in; computing ahead per side (p->sides) reads the neighbours' parts that
 * came before the others, so it holds L_{m+1}(Q_i) less the parts of those
 * still late (one entry: a read across two parts is within it). */
void tess__tick_proc_note_round(proc *p, int64_t v)
{
    if (!p->check || v < p->epoch_start || !is_round_start(p, v)) return;
    const version *x = ver_of(p, v);
    if (x->v != v || !x->full || x->slot < 0) return;
    int nlate = 0;
    for (int j = 0; j < p->n_in; j++)
        if (p->recv_round[j] <= v) p->negs[nlate++] = p->Q[p->in_ids[j]];
    if (nlate > 0 && !p->sides) return;
    tess_region r = {.npos = 1, .pos = &p->Lown[p->m + 1], .nneg = nlate, .neg = p->negs};
    note_held_region(p, v, &r);
}

/* ---- step and its emulated cost ---- */

/*
 * STEP over a region.  On the virtual clock real time costs no simulated
 * time, so every STEP is metered and the runtime's share there counts no
 * real STEP.  On the real clock a replica piece (`piece`, one layer ring)
 * takes a few microseconds: entered from the runtime's work, a clock read
 * would cost as much as the piece (two were 2.5% of the process's samples
 * at m=14), so its CPU time is its wall time (being preempted within a few
 * microseconds is rare enough not to bias the share); after a STEP or a
 * wait it is metered, at most one read.
 */
/* Only a STEP that read (or was about to read) a tuple its version does not
 * hold fails with TESS_ERR_MISUSE: the checking mode's (grid.c, graph_class.c,
 * particles.c) and the graph class's in-neighbour check, which is always on;
 * the class left a note of what was read. */
static int step_failed(proc *p, int code, int64_t tick)
{
    if (code != TESS_ERR_MISUSE) return code;
    const char *note = tess__tick_check_take_note();
    char what[400];
    snprintf(what, sizeof what,
             "%sSTEP at tick %lld read a tuple this process does not hold then "
             "(RD or IX too small, or RX or WX too large)%s%s",
             p->check ? "TESS_TICK_CHECK: " : "", (long long)tick, note[0] ? ": " : "", note);
    return tess__tick_proc_fail(p, code, "tick %s: %s", what);
}

static int step_region(proc *p, int64_t v, const tess_query *pos, int npos, int nneg, int piece,
                       int64_t *kept)
{
    tess_region r = {.npos = npos, .nneg = nneg, .pos = pos, .neg = p->negs};
    int metered = p->link.vc != NULL || !piece || p->meter.state != METER_RUNTIME;
    double t = proc_now_us(p);
    if (metered) tess__tick_proc_meter(p, METER_STEP);
    int64_t c = p->app->state->step(p->st, slot_of(p, v - 1), slot_of(p, v), &r, v - 1);
    double end = proc_now_us(p);
    if (!metered) p->piece_wall_us += end - t;
    p->step_us += end - t;
    if (c < 0) return step_failed(p, (int)c, v - 1);
    if (kept) *kept = c;
    p->tuple_ticks += c;
    if (p->a->step_cost_us > 0 && c > 0)
        p->emu_owed_us +=
            p->a->step_cost_us * (double)c / (double)(p->own_count > 0 ? p->own_count : 1);
    return TESS_OK;
}

/*
 * The emulated compute of the steps taken since the last call, as one sleep
 * (many small pieces after a late message would each cost a wake-up).
 * DESIGN §6: to absolute deadlines, so errors do not accumulate.  Called
 * before the process sends what it computed or waits.
 */
void tess__tick_proc_pay_step_cost(proc *p)
{
    if (p->emu_owed_us <= 0) return;
    double start = proc_now_us(p);
    /* Compute that follows compute continues from the last deadline, so a
     * late wake-up is made up for instead of adding up; after a wait for
     * messages it starts now. */
    double base = p->emu_busy ? p->emu_deadline : start;
    p->emu_deadline = base + p->emu_owed_us;
    p->emu_owed_us = 0;
    p->emu_busy = 1;
    /* Its CPU (a sleep, or the virtual clock's turn-taking) is the
     * emulation's, not the runtime's: metered with waiting.  The caller
     * enters METER_RUNTIME before work of its own after it. */
    tess__tick_proc_meter(p, METER_WAIT);
    tess__tick_link_compute_until(&p->link, p->emu_deadline);
    p->step_us += proc_now_us(p) - start;
}

int64_t tess__tick_proc_next_repart(const proc *p)
{
    if (p->a->repart_every <= 0) return INT64_MAX;
    int64_t next = (p->epoch_start / p->a->repart_every + 1) * p->a->repart_every;
    return next < p->a->ticks ? next : INT64_MAX;
}

/* Compute what can be computed of version v now.  1 if anything was tried;
 * *stale set when v was left behind the data that arrived since, so later
 * ticks must wait for it. */

static int proc_try_compute(proc *p, int64_t v, int *err, int *stale)
{
    version *x = ver_of(p, v);
    if (x->full || v > p->a->ticks) return 0;
    if (p->a->alg == TESS_TICK_BSP && p->released < v - 1) return 0;
    if (v > tess__tick_proc_next_repart(p))
        return 0; /* nothing beyond a re-partitioning not yet done */
    /* The oldest round r < v some neighbour has not delivered: of tick v,
     * only what Q_i of tick r alone determines, I_(v-r), can be computed. */
    int ahead = 0;
    int64_t sig = 0;
    for (int j = 0; j < p->n_in; j++) {
        if (p->recv_round[j] < v && v - p->recv_round[j] > ahead)
            ahead = (int)(v - p->recv_round[j]);
        sig += p->recv_round[j] < v ? p->recv_round[j] : v;
    }
    if (ahead > p->A) return 0; /* cannot happen: rounds <= done have arrived */
    if (x->computed_any && (p->sides ? sig == x->late_sig : ahead == x->ahead)) return 0;
    /* Work ahead of late data is dependency scheduling: only with a depth,
     * and no further than d ticks past the last complete one. */
    if (ahead > 0 && (p->a->depth == 0 || v > p->done + p->a->depth + 1)) return 0;
    /* The paper's Algorithm 2: every version in the window is refined on
     * each arrival (x->ahead, or per side x->late_sig, is its DEPTH
     * bookkeeping).  TESS_TICK_REFINE=next refines a version computed ahead
     * only once it is the oldest open tick: a version left as it was then
     * stops the window, so deeper schedules gained less than d = 1 (fish
     * at the paper's scale, virtual clock: d = 4 at 0.96x of d = 1, against
     * 1.00x refining on every arrival); with real compute refining on
     * every arrival was 0.997-1.03x as fast for up to 37% more CPU
     * (docs/benchmarks.md, "Refinement on every arrival becomes the
     * default"). */
    if (!p->refine_every && x->computed_any && v > p->done + 1 && ahead > 0) {
        *stale = 1; /* what it holds is older than what later ticks would assume */
        return 0;
    }
    /* The target within I_ahead; once computed, only what arrivals added
     * since (I_ahead grows as the oldest missing round moves on).  Per side
     * (the app gives IX), the target less what each late neighbour's
     * missing round r_j reaches by tick v, IX^(v-r_j)(Q_j): tuples next to
     * neighbours whose data came are computed too, and a refinement steps
     * the whole remainder (STEP skips the tuples the version holds). */
    tess_query pos[2] = {*target_of(p, v), p->inner[ahead]};
    int npos = ahead > 0 ? 2 : 1, nneg = 0;
    if (p->sides) {
        npos = 1;
        for (int j = 0; j < p->n_in; j++)
            if (p->recv_round[j] < v)
                p->negs[nneg++] =
                    p->reach[(size_t)j * (size_t)(p->A + 1) + (size_t)(v - p->recv_round[j])];
    } else if (x->computed_any) {
        p->negs[nneg++] = p->inner[x->ahead];
    }
    int64_t kept = 0;
    *err = step_region(p, v, pos, npos, nneg, 0, &kept);
    if (*err != TESS_OK) return 1;
    /* A round start's target is Q_i: what STEP kept is its own tuples. */
    if (tess__tick_width_std(&p->widths, v) == 0) x->own_kept += kept, x->own_stepped = 1;
    else x->own_mixed = 1;
    x->ahead = ahead;
    x->late_sig = sig;
    x->computed_any = 1;
    /* Per side, a round start computed ahead already holds the parts of
     * Q_i that no late neighbour reaches: they leave now (send_early). */
    if (ahead > 0 && p->send_early) {
        *err = tess__tick_proc_send_early(p, v, nneg);
        if (*err != TESS_OK) return 1;
    }
    if (ahead == 0) {
        x->full = 1;
        int w = tess__tick_width_std(&p->widths, v);
        if (x->width < w) x->width = w;
    }
    return 1;
}

static int width_of_version(void *arg, int64_t v)
{
    const version *x = ver_of(arg, v);
    return x->v == v ? x->width : -1;
}

/* Widen version v to all of L_w(Q_i): one piece of lazy replication. */
static int replica_piece(proc *p, int64_t v, int w, int *err)
{
    version *x = ver_of(p, v);
    int nneg = 0;
    if (x->width >= 0) p->negs[nneg++] = p->Lown[x->width]; /* only the new layers */
    *err = step_region(p, v, &p->Lown[w], 1, nneg, 1, NULL);
    if (*err != TESS_OK) return 1;
    if (x->width < 0) x->own_mixed = 1; /* stepped Q_i and layers beyond it together */
    int was_full = x->full;
    x->width = w;
    x->computed_any = x->full = 1;
    if (!was_full) *err = tess__tick_proc_after_full(p, v);
    return 1;
}

/* Per side: the entry of version v's slot for in-neighbour x. */
static side_width *side_entry(const proc *p, int64_t v, int x)
{
    return &p->side_w[(size_t)(v % p->nslots) * (size_t)p->n_in + (size_t)x];
}

/* Per side: w when version v holds L_w(Q_i) ∩ hold^(R-v)(Q_j) for
 * in-neighbour x (R the round at or after v); -1: nothing beyond its width. */
static int side_width_of(const proc *p, int64_t v, int x)
{
    const side_width *e = side_entry(p, v, x);
    return e->v == v ? e->w : -1;
}

/*
 * Per side: widen version v (at most the next round start R) only where
 * late in-neighbour x's missing tuples of round R are made from: L_w(Q_i)
 * within hold^(R-v)(Q_x).  Stepping it reads L_(w+1)(Q_i) within
 * hold^(R-v+1)(Q_x) at v - 1 — the same piece one tick lower, or the base
 * round's tuples — and at R it is x's part of L_w(Q_i), so with the
 * on-time neighbours' parts merged, R holds L_w(Q_i) whole.
 */
static int side_piece(proc *p, int64_t v, int64_t R, int x, int w, int *err)
{
    version *ver = ver_of(p, v);
    tess_query pos[2] = {p->Lown[w], p->hold_in[(size_t)x * (size_t)(p->k + 1) + (size_t)(R - v)]};
    p->negs[0] = p->Lown[ver->width]; /* only the new layers */
    *err = step_region(p, v, pos, 2, 1, 1, NULL);
    if (*err != TESS_OK) return 1;
    *side_entry(p, v, x) = (side_width){v, w};
    return 1;
}

/*
 * Lazy replication per side, while round R = base + k is late from some
 * in-neighbours and the goal needs no later round (r = R + k): versions up
 * to R are widened toward the late neighbours only (side_piece), those
 * after R as usual.  A version not yet full takes a whole piece.
 */
static int side_replicas(proc *p, int64_t goal, int64_t r, int *err)
{
    int64_t R = p->widths.base + p->k;
    for (int64_t v = p->widths.base + 1; v <= goal; v++) {
        version *x = ver_of(p, v);
        int need = (int)(r - v);
        if (x->width >= need) continue;
        if (v > R || !x->full || x->width < 0) return replica_piece(p, v, need, err);
        for (int j = 0; j < p->n_in; j++)
            if (p->recv_round[j] <= R && side_width_of(p, v, j) < need)
                return side_piece(p, v, R, j, need, err);
    }
    return 0;
}

/*
 * Lazy replication (Algorithm 3): while the next round's tuples are late,
 * widen the replica layers of the versions after the base round, lowest
 * first, one piece at a time, until the next version after the last full
 * one can be stepped — up to m+1 ticks past the base.  Called only when the
 * process would otherwise wait, so replica layers cost nothing beyond the
 * wider ghost data when messages are on time.  Per side (p->sides), only
 * toward the neighbours whose round is late, where the goal needs only
 * that round (side_replicas).  1 when a piece was computed.
 */
static int extend_replicas(proc *p, int *err)
{
    if (p->widths.W < 2 * p->k || p->widths.base < 0) return 0; /* no round start to reach */
    int64_t limit = p->done + p->A < p->a->ticks ? p->done + p->A : p->a->ticks;
    if (tess__tick_proc_next_repart(p) < limit) limit = tess__tick_proc_next_repart(p);
    int64_t goal = p->widths.base + 1;
    while (goal <= limit && ver_of(p, goal)->v == goal && ver_of(p, goal)->full) goal++;
    if (goal > limit) return 0;
    int64_t r = tess__tick_width_round_at_or_after(&p->widths, goal);
    if (p->hold_in && r == p->widths.base + 2 * p->k) /* per side, W >= 2k */
        return side_replicas(p, goal, r, err);
    int64_t v;
    int w;
    if (!tess__tick_width_next(&p->widths, goal, width_of_version, p, &v, &w)) return 0;
    return replica_piece(p, v, w, err);
}

/* ---- the loop ---- */

static int finish(proc *p)
{
    tess__tick_proc_pay_step_cost(p);
    p->end_us = proc_now_us(p);
    tess_tick_figures f = {0};
    f.wall_seconds = (p->end_us - p->start_us) / 1e6;
    f.step_seconds = p->step_us / 1e6;
    f.wait_seconds = p->link.wait_us / 1e6;
    f.runtime_seconds = f.wall_seconds - f.step_seconds - f.wait_seconds;
    if (f.runtime_seconds < 0) f.runtime_seconds = 0;
    f.cpu_seconds = meter_total_us(p) / 1e6;
    f.step_cpu_seconds = (p->meter.us[METER_STEP] + p->piece_wall_us) / 1e6;
    f.wait_cpu_seconds = p->meter.us[METER_WAIT] / 1e6;
    f.runtime_cpu_seconds = f.cpu_seconds - f.step_cpu_seconds - f.wait_cpu_seconds;
    if (f.runtime_cpu_seconds < 0) f.runtime_cpu_seconds = 0;
    f.messages = p->link.messages;
    f.bytes = p->link.bytes;
    f.tuple_ticks = p->tuple_ticks;
    f.own_tuple_ticks = p->own_tuple_ticks;
    f.layer_ratio = p->layer_ratio;
    f.wait_median_seconds = tess__tick_median(p->tick_wait_us, p->ntick_waits) / 1e6;
    tess_buf b = {0};
    int rc = tess_buf_append(&b, &f, sizeof f);
    if (rc == TESS_OK) rc = tess__tick_proc_pack_own(p, p->a->ticks, &b);
    if (rc == TESS_OK) {
        if (p->me == 0)
            rc = tess__tick_proc_record_final(p, 0, &f, b.data + sizeof f, b.len - sizeof f);
        else
            rc =
                tess__tick_link_send(&p->link, 0, TICK_FINAL, p->epoch, p->a->ticks, b.data, b.len);
    }
    tess_buf_free(&b);
    p->final_sent = 1;
    return rc;
}

/*
 * Compute in tick order.  Whole versions go on to the next one; after a
 * partial piece (work ahead of late data) the process looks at its messages
 * first, so urgent work — completing the oldest tick, whose data its
 * neighbours wait for — is not queued behind more speculative work.
 */
static int compute_window(proc *p, int *progressed)
{
    /* d+1 ticks past the last complete one, as without replica layers to
     * spare: the versions beyond are for extend_replicas alone, while a
     * round is late.  More versions in flight on time would only spread the
     * state over more slots (large partitions then leave the cache). */
    int64_t reach = p->done + p->a->depth + 1;
    int64_t hi = reach < p->a->ticks ? reach : p->a->ticks;
    for (int64_t v = p->done + 1 > 1 ? p->done + 1 : 1; v <= hi; v++) {
        int err = TESS_OK, stale = 0;
        int did = proc_try_compute(p, v, &err, &stale);
        if (err != TESS_OK) return err;
        if (stale) return TESS_OK;
        if (did) *progressed = 1;
        if (ver_of(p, v)->full) {
            int rc = tess__tick_proc_after_full(p, v);
            if (rc != TESS_OK) return rc;
        } else if (did) {
            return TESS_OK; /* its emulated cost is paid before the next send or wait */
        }
    }
    return TESS_OK;
}

/*
 * Before replica layers are widened ahead of a late round, wait about one
 * tick's STEP for it: a message that is only a little late (the neighbour
 * finished its tick a moment later) then costs no speculative layers, which
 * would also walk the state through more versions than the few warm ones
 * (a 1000x1000 partition, no latency: k=2, m=14 at 0.45x of m=1 without
 * this wait).  The grace is a deadline: another neighbour's message that
 * ends the wait early does not end it (it did, and then widening started at
 * once after most stalls: fish at the paper's scale, no latency, stepped 1.7x
 * the tuples it needed).  When the last stall was long (latency, not a
 * neighbour a moment behind) the process widens at once: waiting first
 * would cost every round (12% of Jacobi's throughput 5 ms late).
 */
static int grace_wait(proc *p)
{
    double now = proc_now_us(p);
    p->stalled = 1;
    p->stall_start_us = p->grace_until_us = now;
    if (p->widths.W < 2 * p->k || p->widths.base < 0 || !p->grace) return TESS_OK;
    double per_tick = p->done > 0 ? p->step_us / (double)p->done : 0;
    if (p->a->step_cost_us > per_tick) per_tick = p->a->step_cost_us;
    if (p->last_stall_us > 4 * per_tick) return TESS_OK;
    p->grace_until_us = now + (per_tick > 20 ? per_tick : 20);
    return tess__tick_proc_wait_for_messages(p, p->grace_until_us - now);
}

/* Nothing to compute: wait for messages, within the grace of a new stall
 * first (grace_wait), then widen replica layers while they stay late. */
static int idle_turn(proc *p, int *progressed)
{
    int rc = TESS_OK;
    double left = p->stalled ? p->grace_until_us - proc_now_us(p) : 0;
    if (p->stalled && left <= 0) *progressed = extend_replicas(p, &rc);
    if (rc != TESS_OK || *progressed) return rc;
    tess__tick_proc_pay_step_cost(p);
    if (!p->stalled) return grace_wait(p);
    return tess__tick_proc_wait_for_messages(p, left > 0 ? left : 50000);
}

static int loop(proc *p)
{
    int rc = tess__tick_proc_after_full(p, p->first);
    while (rc == TESS_OK) {
        int progressed = tess__tick_proc_advance(p);
        if (progressed < 0) {
            rc = progressed;
            break;
        }
        if (p->done == p->a->ticks && !p->final_sent) {
            rc = finish(p);
            if (rc != TESS_OK) break;
        }
        if (p->final_sent && (p->me != 0 || p->finals == p->n - 1)) break;
        int got = tess__tick_proc_pump(p);
        if (got < 0) {
            rc = got;
            break;
        }
        int computed = 0;
        rc = compute_window(p, &computed);
        progressed |= got | computed;
        if (computed && p->stalled) { /* a stall ends with compute, not any message */
            p->stalled = 0;
            p->last_stall_us = proc_now_us(p) - p->stall_start_us;
        }
        if (rc == TESS_OK && !progressed) rc = idle_turn(p, &progressed);
    }
    return rc;
}

/* Variants for measurements (docs/ticks.md, "Variants"): the environment,
 * read once per process at setup. */
static int env_is(const char *name, const char *value)
{
    const char *v = getenv(name);
    return v != NULL && strcmp(v, value) == 0;
}

static int setup(proc *p)
{
    int n = p->n;
    p->Q = calloc((size_t)n, sizeof *p->Q);
    p->ver = calloc((size_t)p->nslots, sizeof *p->ver);
    p->repart = calloc((size_t)n, sizeof *p->repart);
    p->moves = calloc((size_t)n, sizeof *p->moves);
    p->Q_next = calloc((size_t)n, sizeof *p->Q_next);
    p->blocked = calloc((size_t)n, 1);
    p->negs = calloc((size_t)n + 1, sizeof *p->negs);
    p->snapshot_for = p->parted_for = -1;
    p->check = tess__tick_check_on();
    p->refine_every = !env_is("TESS_TICK_REFINE", "next");
    p->grace = !env_is("TESS_TICK_GRACE", "off");
    p->sides = p->app->ix != NULL && !env_is("TESS_TICK_SIDES", "off");
    p->send_early = p->sides && !env_is("TESS_TICK_SEND", "full");
    if (!p->Q || !p->ver || !p->repart || !p->moves || !p->Q_next || !p->blocked || !p->negs)
        return TESS_ERR_NOMEM;
    p->free_slots = malloc((size_t)p->nslots * sizeof *p->free_slots);
    if (p->free_slots == NULL) return TESS_ERR_NOMEM;
    for (int s = 0; s < p->nslots; s++) {
        p->ver[s] = (version){.v = -1, .width = -1, .slot = -1};
        p->free_slots[p->nfree++] = p->nslots - 1 - s; /* slot 0 on top */
    }
    if (p->a->restore_tick > 0) return tess__tick_proc_setup_restored(p);
    int rc = tess__tick_proc_part_from(p, NULL, 0, 1);
    if (rc == TESS_OK) rc = tess__tick_proc_plan_build(p, 0);
    if (rc == TESS_OK) rc = tess__tick_proc_state_create(p);
    if (rc != TESS_OK) return rc;
    p->done = -1;
    for (int64_t v = 0; v <= p->A; v++) tess__tick_proc_version_reset(p, v);
    tess_region own = {.npos = 1, .pos = &p->Q[p->me]};
    rc = p->app->state->init(p->st, slot_of(p, 0), &own);
    if (rc != TESS_OK) return tess__tick_proc_fail(p, rc, "tick %s: %s", "NEW failed");
    ver_of(p, 0)->computed_any = ver_of(p, 0)->full = 1;
    ver_of(p, 0)->width = 0;
    return tess__tick_proc_own_count(p, 0);
}

/* Every process set up before anyone starts the clock: setup times differ
 * (process 0 also built the result), and skew would count as waiting. */
static int start_together(proc *p)
{
    int rc = TESS_OK;
    if (p->me != 0) rc = tess__tick_link_send(&p->link, 0, TICK_START, 0, 0, NULL, 0);
    if (rc == TESS_OK)
        rc = p->me == 0 ? tess__tick_proc_wait_until(p, &p->starts, p->n - 1)
                        : tess__tick_proc_wait_until(p, &p->go, 1);
    for (int j = 1; j < p->n && rc == TESS_OK && p->me == 0; j++)
        rc = tess__tick_link_send(&p->link, j, TICK_GO, 0, 0, NULL, 0);
    p->link.wait_us = 0;
    return rc;
}

static void teardown(proc *p)
{
    tess__tick_proc_ckpt_free(p);
    if (p->st) p->app->state->destroy(p->st);
    for (int j = 0; p->repart && j < p->n; j++) tess_buf_free(&p->repart[j]);
    for (int j = 0; p->moves && j < p->n; j++) tess_buf_free(&p->moves[j]);
    free(p->moves);
    free(p->Q_next);
    free(p->blocked);
    for (int i = 0; i < p->ndeferred; i++) free(p->deferred[i].mem);
    free(p->deferred);
    tess_buf_free(&p->packbuf);
    free(p->repart);
    free(p->ver);
    free(p->free_slots);
    free(p->negs);
    free(p->Q);
    proc_plan_free(p);
    tess__tick_link_close(&p->link);
}

static void abort_others(proc *p)
{
    for (int j = 0; j < p->n; j++)
        if (j != p->me) tess__tick_link_send(&p->link, j, TICK_ABORT, p->epoch, 0, NULL, 0);
}

int tess__tick_process_run(tess_ctx *ctx, const tess_tick_app *app, const tick_args *a, int me,
                           tess_tick_result *result)
{
    proc p = {.ctx = ctx,
              .app = app,
              .a = a,
              .me = me,
              .n = ctx->workers_total,
              .k = a->period,
              .m = a->layers,
              .result = result};
    /* Versions: d ticks of scheduling beyond the last complete tick, and with
     * replica layers to spare for a later round start (m+1 >= 2k) up to m+1
     * past the base round, which is kept (it can lie k-1 behind the last
     * complete tick). */
    int W = a->layers + 1, spare = W >= 2 * a->period;
    p.widths = (tick_widths){.W = W, .k = a->period, .epoch_start = 0, .base = -1};
    p.A = a->depth + (spare ? W : 1);
    p.nslots = p.A + (spare ? a->period : 1);
    /* Sleeps (emulated step cost, held messages) end on time: DESIGN §6. */
    int slack = prctl(PR_GET_TIMERSLACK, 0, 0, 0, 0);
    prctl(PR_SET_TIMERSLACK, 1UL, 0, 0, 0);
    int rc = tess__tick_link_open(&p.link, ctx, me, a);
    if (rc == TESS_OK) rc = setup(&p);
    if (rc == TESS_OK) rc = start_together(&p);
    p.start_us = p.last_progress_us = proc_now_us(&p);
    meter_start(&p, env_is("TESS_TICK_METER", "exact"));
    if (rc == TESS_OK) rc = loop(&p);
    if (rc != TESS_OK && rc != TESS_ERR_KERNEL) abort_others(&p);
    teardown(&p);
    if (slack > 0) prctl(PR_SET_TIMERSLACK, (unsigned long)slack, 0, 0, 0);
    return rc;
}
