/*
 * process_exchange.c — a tick process's messages (sending its tuples,
 * receiving and merging its neighbours', the bsp barrier, the final state)
 * and its partitioning (PART at the start and every --repart-every ticks).
 * The loop that drives them is process.c.
 */
#include <stdio.h>
#include <stdlib.h>
#include <sys/prctl.h>
#include <string.h>
#include <time.h>
#include "tick/process_impl.h"

/* ---- messages ---- */

static int defer(proc *p, const tick_msg *m)
{
    if (tess__grow_items(&p->deferred, &p->capdeferred, p->ndeferred, sizeof *p->deferred, 32) !=
        TESS_OK)
        return TESS_ERR_NOMEM;
    p->deferred[p->ndeferred++] = *m;
    return TESS_OK;
}

static int round_applicable(const proc *p, const tick_msg *m)
{
    return m->h.epoch == p->epoch && m->h.tick <= p->done + p->A && m->h.tick >= 0;
}

/* A round applies within the window of versions, a snapshot or a move in
 * the epoch it was sent in (a process that re-partitioned already may send
 * the next snapshot before this one did). */
static int applicable(const proc *p, const tick_msg *m)
{
    if (m->h.type == TICK_ROUND) return round_applicable(p, m);
    return m->h.epoch == p->epoch;
}

static int apply_round(proc *p, const tick_msg *m)
{
    int x = p->in_index[m->h.src];
    if (x < 0 || p->recv_round[x] != m->h.tick)
        return tess__tick_proc_fail(p, TESS_ERR_FORMAT, "tick %s: unexpected round message (%s)",
                                    "sender");
    /* Replica layers computed ahead may hold some of these tuples already. */
    const version *v = ver_of(p, m->h.tick);
    tess_region r = {.npos = 1, .pos = &p->Lown[p->m + 1], .nneg = 1, .neg = &p->Lown[v->width]};
    const tess_region *only = v->v == m->h.tick && v->width > 0 ? &r : NULL;
    int rc = p->app->state->merge(p->st, slot_of(p, m->h.tick), m->payload, m->len, only);
    if (rc != TESS_OK)
        return tess__tick_proc_fail(p, rc, "tick %s: %s", "cannot merge received tuples");
    p->recv_round[x] = m->h.tick + p->k;
    tess__tick_proc_note_ghost(p, m->h.tick, m->h.src);
    tess__tick_proc_note_round(p, m->h.tick);
    return TESS_OK;
}

int tess__tick_proc_record_final(proc *p, int src, const tess_tick_figures *f, const void *tuples,
                                 size_t len)
{
    p->result->per_process[src] = *f;
    return tess_buf_append(&p->result->final_state, tuples, len);
}

/*
 * Process 0: one more process finished `tick`; release it when all have.
 * Arrivals are counted per tick and a release never moves back: one shared
 * counter once let an arrival of one tick complete the barrier of another
 * (seen once under TSan, bsp with stalls, 4 workers), moving `released`
 * back and leaving every process waiting for a release that never came.
 */
static int bar_arrival(proc *p, int64_t tick)
{
    int s = (int)(tick % BAR_SLOTS);
    if (tick < 0 || tick <= p->released) return TESS_OK; /* stale: already released */
    if (p->bar_tick[s] != tick) p->bar_tick[s] = tick, p->bar_n[s] = 0;
    if (++p->bar_n[s] < p->n) return TESS_OK;
    p->bar_n[s] = 0;
    p->bar_tick[s] = -1;
    p->released = tick;
    for (int j = 1; j < p->n; j++) {
        int rc = tess__tick_link_send(&p->link, j, TICK_REL, p->epoch, tick, NULL, 0);
        if (rc != TESS_OK) return rc;
    }
    return TESS_OK;
}

static int leader_part(proc *p);

/* The next PART's queries, from process 0. */
static int apply_part(proc *p, const tick_msg *m)
{
    if (m->h.src != 0 || m->len != (size_t)p->n * sizeof *p->Q_next)
        return tess__tick_proc_fail(p, TESS_ERR_FORMAT, "tick %s: %s",
                                    "malformed re-partitioning message");
    memcpy(p->Q_next, m->payload, m->len);
    p->part_got = 1;
    return TESS_OK;
}

/* A round, a snapshot (process 0), PART's queries or a move of this epoch. */
static int apply_deferrable(proc *p, const tick_msg *m)
{
    if (m->h.type == TICK_ROUND) return apply_round(p, m);
    if (m->h.type == TICK_PART) return apply_part(p, m);
    if (m->h.type == TICK_MOVE) {
        p->moves_got++;
        return tess_buf_append(&p->moves[m->h.src], m->payload, m->len);
    }
    if (p->me != 0)
        return tess__tick_proc_fail(p, TESS_ERR_FORMAT, "tick %s: %s",
                                    "snapshot sent to a process other than 0");
    p->repart_got++;
    int rc = tess_buf_append(&p->repart[m->h.src], m->payload, m->len);
    return rc == TESS_OK ? leader_part(p) : rc;
}

static int proc_handle(proc *p, tick_msg *m)
{
    switch (m->h.type) {
    case TICK_ABORT: return TESS_ERR_KERNEL;
    case TICK_ROUND:
    case TICK_REPART:
    case TICK_PART:
    case TICK_MOVE:
        if (m->h.src < 0 || m->h.src >= p->n) return TESS_ERR_FORMAT;
        for (int i = 0; i < p->ndeferred; i++) /* keep the link's order */
            if (p->deferred[i].h.src == m->h.src)
                return defer(p, m) == TESS_OK ? 1 : TESS_ERR_NOMEM;
        if (!applicable(p, m)) return defer(p, m) == TESS_OK ? 1 : TESS_ERR_NOMEM;
        return apply_deferrable(p, m);
    case TICK_BAR: return bar_arrival(p, m->h.tick);
    case TICK_REL:
        if (m->h.tick > p->released) p->released = m->h.tick;
        return TESS_OK;
    case TICK_START: p->starts++; return TESS_OK;
    case TICK_SAVE: return tess__tick_proc_on_save(p, m);
    case TICK_LOAD: {
        int rc = tess__tick_proc_on_load(p, m);
        return rc == TESS_OK ? 1 : rc; /* 1: the message's memory is kept */
    }
    case TICK_GO: p->go = 1; return TESS_OK;
    case TICK_FINAL: {
        tess_tick_figures f;
        if (p->result == NULL || m->len < sizeof f) return TESS_ERR_FORMAT;
        memcpy(&f, m->payload, sizeof f);
        p->finals++;
        return tess__tick_proc_record_final(p, m->h.src, &f, m->payload + sizeof f,
                                            m->len - sizeof f);
    }
    default: return TESS_ERR_FORMAT;
    }
}

/* Apply deferred messages that have become applicable, in link order.
 * p->blocked (n, all zero between calls): links with a message kept. */
static int retry_deferred(proc *p, int *progressed)
{
    int kept = 0;
    unsigned char *blocked = p->blocked;
    int rc = TESS_OK;
    for (int i = 0; i < p->ndeferred; i++) {
        tick_msg *m = &p->deferred[i];
        if (rc == TESS_OK && !blocked[m->h.src] && applicable(p, m)) {
            tess__tick_proc_meter(p, METER_RUNTIME);
            rc = apply_deferrable(p, m);
            tess__tick_link_release(&p->link, m->mem);
            *progressed = 1;
            continue;
        }
        blocked[m->h.src] = 1;
        p->deferred[kept++] = *m;
    }
    p->ndeferred = kept;
    for (int i = 0; i < kept; i++) blocked[p->deferred[i].h.src] = 0;
    return rc;
}

/* Handle every message that is due.  Returns <0 on error, else whether any was. */
int tess__tick_proc_pump(proc *p)
{
    int any = 0;
    for (;;) {
        tick_msg m;
        int got = tess__tick_link_poll(&p->link, &m);
        if (got < 0) return got;
        if (got == 0) break;
        any = 1;
        tess__tick_proc_meter(p, METER_RUNTIME);
        int rc = proc_handle(p, &m);
        if (rc == 1) continue; /* deferred: the message now belongs to the list */
        tess__tick_link_release(&p->link, m.mem);
        if (rc < 0) return rc;
    }
    if (p->ndeferred > 0) {
        int rc = retry_deferred(p, &any);
        if (rc != TESS_OK) return rc;
    }
    return any;
}

int tess__tick_proc_wait_for_messages(proc *p, double max_wait_us)
{
    if (tess_interrupted(p->ctx)) return TESS_ERR_INTERRUPTED;
    if (tess__run_failed(p->ctx)) return TESS_ERR_KERNEL; /* a process beside this one failed */
    if (tess__fault(p->ctx, "tick"))
        return tess__tick_proc_fail(p, TESS_ERR_IO, "tick %s: %s", "injected fault (TESS_FAULT)");
    p->emu_busy = 0;
    /* Blocking costs CPU too (the futex, the switch, the virtual clock's
     * turn-taking); it belongs to waiting, not to the runtime's own share.
     * The wait lasts until a message is handled or something else starts
     * (tess__tick_proc_meter): waits with nothing due between read once. */
    tess__tick_proc_meter(p, METER_WAIT);
    return tess__tick_link_wait(&p->link, max_wait_us);
}

/* ---- partitioning ---- */

/* The application's PART; a PART that fails without saying why still leaves
 * a message.  Only a failure writes the context's error: the tick processes
 * share it, and a message set ahead of every PART overwrote another
 * process's report of why it failed (seen under TSan's timing in CI). */
static int call_part(proc *p, const void *snapshot, tess_query *out)
{
    char before[256], after[256];
    tess__last_error_copy(p->ctx, before, sizeof before);
    /* PART is the application's, as STEP is: its CPU (every process calls it
     * at the start, process 0 at each re-partitioning) is counted with
     * STEP's, not the runtime's. */
    tess__tick_proc_meter(p, METER_STEP);
    int rc = p->app->part(p->ctx, p->app->user, snapshot, p->n, out);
    tess__tick_proc_meter(p, METER_RUNTIME);
    if (rc == 0) return TESS_OK;
    tess__last_error_copy(p->ctx, after, sizeof after);
    if (strcmp(before, after) == 0)
        tess__fail(p->ctx, TESS_ERR_INVAL, "tick %s: PART failed", p->app->name);
    return rc < 0 ? rc : TESS_ERR_INVAL;
}

/* PART on the tuples of bufs[0 .. nbufs) (and NEW's, init_all), into out. */
static int part_into(proc *p, const tess_buf *bufs, int nbufs, int init_all, tess_query *out)
{
    const tess_state_class *cls = p->app->state;
    if (p->app->part_ignores_state) return call_part(p, NULL, out);
    void *all = cls->create(p->app, 1, &p->app->universe, &p->app->universe);
    if (all == NULL)
        return tess__tick_proc_fail(p, TESS_ERR_NOMEM, "tick %s: %s", "out of memory (partition)");
    tess_region uni = {.npos = 1, .pos = &p->app->universe};
    int rc = TESS_OK;
    if (init_all) rc = cls->init(all, 0, &uni);
    for (int i = 0; i < nbufs && rc == TESS_OK; i++)
        rc = cls->merge(all, 0, bufs[i].data, bufs[i].len, NULL);
    if (rc == TESS_OK) rc = call_part(p, cls->snapshot(all, 0), out);
    cls->destroy(all);
    return rc;
}

int tess__tick_proc_part_from(proc *p, const tess_buf *bufs, int nbufs, int init_all)
{
    return part_into(p, bufs, nbufs, init_all, p->Q);
}

int tess__tick_proc_state_create(proc *p)
{
    if (p->st != NULL) p->app->state->destroy(p->st);
    p->st = p->app->state->create(p->app, p->nslots, &p->Q[p->me], &p->Lown[p->m + 1]);
    return p->st ? TESS_OK
                 : tess__tick_proc_fail(p, TESS_ERR_NOMEM, "tick %s: %s", "out of memory (state)");
}

int tess__tick_proc_own_count(proc *p, int64_t v)
{
    tess_region own = {.npos = 1, .pos = &p->Q[p->me]};
    int64_t c = p->app->state->count(p->st, slot_of(p, v), &own);
    if (c < 0) return (int)c;
    p->own_count = c;
    return TESS_OK;
}

int tess__tick_proc_pack_own(proc *p, int64_t v, tess_buf *out)
{
    tess_region own = {.npos = 1, .pos = &p->Q[p->me]};
    return p->app->state->pack(p->st, slot_of(p, v), &own, out);
}

/*
 * Re-partitioning at tick R (every N = --repart-every ticks) is taken off
 * the critical path in two steps:
 *   - at tick R - N/2 (when that version is full) every process sends its
 *     own tuples to process 0: the snapshot PART will see.  Process 0 calls
 *     PART once it holds them all and sends every process the n queries.
 *     Meanwhile the processes go on computing;
 *   - at R every process takes those queries and sends each process j the
 *     tuples of tick R in its old query that lie in j's new one, where
 *     DISJOINT says there may be some; j expects a move from each process
 *     whose old query may meet its new one.  These are neighbours, not all
 *     processes.
 * It used to be one all-to-all of tick R's tuples at R, which every process
 * waited for: under `cloud` the slowest of n-1 messages, about one latency
 * spike per re-partitioning, with the run-ahead drained (fish at the
 * paper's scale: 24% of the combined algorithm's throughput).  Then the
 * snapshot went to every process and each called PART on it: n copies of
 * the whole state merged for one answer, a quarter of the runtime's own
 * CPU for fish at the paper's scale.  PART must partition the universe,
 * not only the tuples it was shown: tuples of tick R that no new query
 * holds are an error, never lost.
 */
static int64_t snapshot_lead(const proc *p)
{
    int64_t half = p->a->repart_every / 2;
    return half > 0 ? half : 1;
}

/* At the full version v: the snapshot for the next re-partitioning, if v is its tick. */
static int send_snapshot(proc *p, int64_t v)
{
    int64_t next = tess__tick_proc_next_repart(p);
    /* After a restore less than the lead before it: at once. */
    int64_t at =
        next - snapshot_lead(p) > p->epoch_start ? next - snapshot_lead(p) : p->epoch_start;
    if (next == INT64_MAX || p->app->part_ignores_state || v != at || p->snapshot_for == next)
        return TESS_OK;
    p->snapshot_for = next;
    tess__tick_proc_pay_step_cost(p); /* the data leave when their computation would have ended */
    tess__tick_proc_meter(p, METER_RUNTIME);
    tess_buf *mine = &p->repart[p->me];
    mine->len = 0;
    int rc = tess__tick_proc_pack_own(p, v, mine);
    if (rc != TESS_OK) return rc;
    if (p->me == 0) return leader_part(p);
    rc = tess__tick_link_send(&p->link, 0, TICK_REPART, p->epoch, next, mine->data, mine->len);
    mine->len = 0;
    return rc;
}

/* Process 0 (its callers see to it), once it holds the whole snapshot
 * (its own part included): PART, and its queries to every process.
 * parted_for keeps snapshots that all arrived before process 0 took its own
 * from running PART for the previous re-partitioning again. */
static int leader_part(proc *p)
{
    int64_t next = p->snapshot_for;
    if (next < 0 || p->parted_for == next || p->repart_got < p->n - 1) return TESS_OK;
    p->parted_for = next;
    int rc = part_into(p, p->repart, p->n, 0, p->Q_next);
    for (int j = 0; j < p->n; j++) tess_buf_free(&p->repart[j]);
    p->repart_got = 0;
    p->part_got = rc == TESS_OK;
    for (int j = 1; j < p->n && rc == TESS_OK; j++)
        rc = tess__tick_link_send(&p->link, j, TICK_PART, p->epoch, next, p->Q_next,
                                  (size_t)p->n * sizeof *p->Q_next);
    return rc;
}

int tess__tick_proc_wait_until(proc *p, const int *got, int want)
{
    int rc = TESS_OK;
    while (rc == TESS_OK && *got < want) {
        int any = tess__tick_proc_pump(p);
        if (any < 0) rc = any;
        else if (any == 0) rc = tess__tick_proc_wait_for_messages(p, 50000);
    }
    return rc;
}

/* Tuples of tick v in old[me] that lie in p->Q[j], packed into out. */
static int pack_moving(proc *p, int64_t v, const tess_query *old, int j, tess_buf *out)
{
    tess_query pos[2] = {old[p->me], p->Q[j]};
    tess_region r = {.npos = 2, .pos = pos};
    return p->app->state->pack(p->st, slot_of(p, v), &r, out);
}

/* Every tuple of old[me] at tick v lies in exactly one new query. */
static int check_cover(proc *p, int64_t v, const tess_query *old)
{
    tess_region own = {.npos = 1, .pos = &old[p->me]};
    int64_t have = p->app->state->count(p->st, slot_of(p, v), &own), placed = 0;
    for (int j = 0; j < p->n && have >= 0; j++) {
        if (p->app->disjoint(p->app->user, &old[p->me], &p->Q[j])) continue;
        tess_query pos[2] = {old[p->me], p->Q[j]};
        tess_region r = {.npos = 2, .pos = pos};
        int64_t c = p->app->state->count(p->st, slot_of(p, v), &r);
        if (c < 0) return (int)c;
        placed += c;
    }
    if (have < 0) return (int)have;
    if (placed == have) return TESS_OK;
    return tess__tick_proc_fail(p, TESS_ERR_INVAL, "tick %s: %s",
                                "PART's queries do not hold every tuple "
                                "once (with --repart-every, PART must partition the universe)");
}

/* Send the moves of tick v and count the ones to expect. */
static int send_moves(proc *p, int64_t v, const tess_query *old, int *expect)
{
    int rc = check_cover(p, v, old);
    *expect = 0;
    for (int j = 0; j < p->n && rc == TESS_OK; j++) {
        if (j == p->me) continue;
        if (!p->app->disjoint(p->app->user, &old[j], &p->Q[p->me])) (*expect)++;
        if (p->app->disjoint(p->app->user, &old[p->me], &p->Q[j])) continue;
        tess_buf *b = &p->packbuf;
        b->len = 0;
        rc = pack_moving(p, v, old, j, b);
        if (rc == TESS_OK)
            rc = tess__tick_link_send(&p->link, j, TICK_MOVE, p->epoch, v, b->data, b->len);
    }
    return rc;
}

/* PART on the snapshot, the moves, and the new state from tick v's tuples. */
static int repartition(proc *p, int64_t v)
{
    tess__tick_proc_pay_step_cost(p);
    tess__tick_proc_meter(p, METER_RUNTIME);
    int n = p->n, expect = 0, rc = TESS_OK;
    tess_query *old = malloc((size_t)n * sizeof *old);
    if (old == NULL) return TESS_ERR_NOMEM;
    memcpy(old, p->Q, (size_t)n * sizeof *old);
    if (p->app->part_ignores_state) {
        rc = tess__tick_proc_part_from(p, NULL, 0, 0);
    } else {
        rc = tess__tick_proc_wait_until(p, &p->part_got, 1);
        if (rc == TESS_OK) memcpy(p->Q, p->Q_next, (size_t)n * sizeof *p->Q);
    }
    if (rc == TESS_OK) rc = send_moves(p, v, old, &expect);
    tess_buf *mine = &p->repart[p->me]; /* the snapshot is used: its room holds what stays */
    mine->len = 0;
    if (rc == TESS_OK) rc = pack_moving(p, v, old, p->me, mine);
    if (rc == TESS_OK) rc = tess__tick_proc_wait_until(p, &p->moves_got, expect);
    if (rc == TESS_OK) rc = tess__tick_proc_plan_build(p, v);
    if (rc == TESS_OK) rc = tess__tick_proc_state_create(p);
    if (rc == TESS_OK) {
        tess_region own = {.npos = 1, .pos = &p->Q[p->me]};
        for (int64_t w = p->done; w <= p->done + p->A; w++) tess__tick_proc_version_reset(p, w);
        rc = p->app->state->merge(p->st, slot_of(p, v), mine->data, mine->len, &own);
        for (int j = 0; j < n && rc == TESS_OK; j++)
            if (j != p->me)
                rc = p->app->state->merge(p->st, slot_of(p, v), p->moves[j].data, p->moves[j].len,
                                          &own);
        version *x = ver_of(p, v);
        x->computed_any = x->full = 1;
        x->width = 0;
        if (rc == TESS_OK) tess__tick_proc_note_held(p, v, &p->Q[p->me]);
    }
    free(old);
    for (int j = 0; j < n; j++) {
        tess_buf_free(&p->repart[j]);
        tess_buf_free(&p->moves[j]);
    }
    p->moves_got = p->part_got = 0;
    p->epoch++;
    p->epoch_start = v;
    p->widths.epoch_start = v;
    p->widths.base = -1; /* until round v arrives from the new neighbours */
    if (rc == TESS_OK) rc = tess__tick_proc_own_count(p, v);
    return rc;
}

/* Round v's tuples of Q_i within L_{m+1}(Q_o) to out-neighbour o. */
static int send_round_to(proc *p, int64_t v, int o)
{
    tess_query pos[2] = {p->Q[p->me], p->out_L[o]};
    tess_region r = {.npos = 2, .pos = pos};
    tess_buf *b = &p->packbuf; /* kept across rounds: no allocation per message */
    b->len = 0;
    int rc = p->app->state->pack(p->st, slot_of(p, v), &r, b);
    if (rc == TESS_OK)
        rc =
            tess__tick_link_send(&p->link, p->out_ids[o], TICK_ROUND, p->epoch, v, b->data, b->len);
    p->send_next[o] = v + p->k;
    return rc;
}

/*
 * Per side, a round start v computed ahead of late neighbours holds Q_i less
 * what their missing rounds reach by v (p->negs[0 .. nneg), proc_try_compute).
 * An out-neighbour o whose L_{m+1}(Q_o) none of those reaches gets its part
 * now, not when the whole version is full: a late message then holds up
 * only the sides it reaches, not every neighbour of every process it
 * delays (fish at the paper's scale, virtual clock: sched d = 1 ÷ local
 * 1.12 -> 1.30).  The test is DISJOINT on all of L_{m+1}(Q_o), not its part
 * in Q_i (the queries have no intersection): conservative, never wrong.
 * Each link's rounds still leave in order (send_next), and the rest of the
 * round leaves when the version is full (tess__tick_proc_after_full).
 */
int tess__tick_proc_send_early(proc *p, int64_t v, int nneg)
{
    /* A round start after the epoch's first tick (its target is Q_i: the
     * version is not full yet, so nothing of it was sent), not one that
     * re-partitions (its neighbours change there). */
    if (tess__tick_width_std(&p->widths, v) != 0 || v >= p->a->ticks) return TESS_OK;
    if (tess__tick_proc_is_repart_tick(p, v)) return TESS_OK;
    int rc = TESS_OK, paid = 0;
    for (int o = 0; o < p->n_out && rc == TESS_OK; o++) {
        if (p->send_next[o] != v) continue;
        int ready = 1;
        for (int x = 0; x < nneg && ready; x++)
            ready = p->app->disjoint(p->app->user, &p->out_L[o], &p->negs[x]);
        if (!ready) continue;
        if (!paid) {
            tess__tick_proc_pay_step_cost(p);
            tess__tick_proc_meter(p, METER_RUNTIME);
            paid = 1;
        }
        rc = send_round_to(p, v, o);
    }
    return rc;
}

/* After version v became full: re-partition, send round data, report to the barrier. */
int tess__tick_proc_after_full(proc *p, int64_t v)
{
    version *x = ver_of(p, v);
    int rc = TESS_OK;
    tess__tick_proc_note_round(p, v);
    if (tess__tick_proc_is_repart_tick(p, v) && p->epoch_start < v) {
        if (v != p->done + 1) return TESS_OK; /* wait until it is next */
        rc = repartition(p, v);
        if (rc != TESS_OK) return rc;
    }
    rc = send_snapshot(p, v);
    if (rc != TESS_OK) return rc;
    if (is_round_start(p, v) && v < p->a->ticks && !x->sent) {
        tess__tick_proc_pay_step_cost(
            p); /* the data leave when their computation would have ended */
        tess__tick_proc_meter(p, METER_RUNTIME);
        x->sent = 1;
        /* The emulated cost scales with the partition's size, so it is
         * known every round: STEP's own tally when it wrote all of Q_i
         * (most rounds), else a count; without an emulated cost it only
         * feeds tuple_ticks_per_second, and a count every 64 rounds spares
         * walks over the partition. */
        if (v > 0 && x->own_stepped && !x->own_mixed) {
            p->own_count = x->own_kept; /* STEP counted them: no walk over the partition */
        } else if (v > 0 && (p->a->step_cost_us > 0 || ++p->rounds_uncounted >= 64)) {
            p->rounds_uncounted = 0;
            rc = tess__tick_proc_own_count(p, v);
        }
        for (int o = 0; o < p->n_out && rc == TESS_OK; o++)
            if (p->send_next[o] <= v) rc = send_round_to(p, v, o);
    }
    if (rc == TESS_OK && p->a->alg == TESS_TICK_BSP && v < p->a->ticks && !x->barred) {
        x->barred = 1;
        tess__tick_proc_meter(p, METER_RUNTIME);
        if (p->me == 0) {
            tick_msg self = {.h = {.type = TICK_BAR, .tick = v, .src = 0}};
            rc = proc_handle(p, &self);
        } else {
            rc = tess__tick_link_send(&p->link, 0, TICK_BAR, p->epoch, v, NULL, 0);
        }
    }
    return rc;
}

static int complete(const proc *p, int64_t v)
{
    const version *x = &p->ver[v % p->nslots];
    if (x->v != v || !x->full) return 0;
    if (v < p->a->ticks) {
        if (tess__tick_proc_is_repart_tick(p, v) && p->epoch_start < v) return 0;
        if (is_round_start(p, v))
            for (int j = 0; j < p->n_in; j++)
                if (p->recv_round[j] <= v) return 0;
        if (p->a->alg == TESS_TICK_BSP && p->released < v) return 0;
        if (!x->sent && is_round_start(p, v)) return 0;
    }
    return 1;
}

/* Process 0 reports every progress_every ticks, or (-1) about once a second. */
static void progress_line(proc *p)
{
    int64_t e = p->a->progress_every;
    if (p->me != 0 || e == 0 || p->done <= p->first) return;
    double now = proc_now_us(p);
    if (e > 0 && p->done % e != 0) return;
    if (e < 0 && now - p->last_progress_us < 1e6) return;
    tess__tick_proc_meter(p, METER_RUNTIME);
    p->last_progress_us = now;
    double secs = (now - p->start_us) / 1e6;
    fprintf(stderr, "tessera %s: tick %lld/%lld, %.1f ticks/s\n", p->app->name, (long long)p->done,
            (long long)p->a->ticks, secs > 0 ? (double)(p->done - p->first) / secs : 0.0);
}

/* What one ghost layer adds to the process's tuples, from tick 0 (which
 * holds L_1(Q_i) and more once round 0 is in): TESS_TICK_AUTO weighs
 * replication with it. */
static void measure_layer(proc *p)
{
    tess__tick_proc_meter(p, METER_RUNTIME);
    tess_region l1 = {.npos = 1, .pos = &p->Lown[1]};
    int64_t n = p->app->state->count(p->st, slot_of(p, 0), &l1);
    if (n >= 0 && p->own_count > 0) p->layer_ratio = (double)n / (double)p->own_count - 1.0;
}

int tess__tick_proc_advance(proc *p)
{
    int any = 0;
    while (p->done < p->a->ticks && complete(p, p->done + 1)) {
        p->done++;
        int rc = tess__tick_proc_save_if_due(p, p->done);
        if (rc != TESS_OK) return rc;
        p->own_tuple_ticks += p->done > p->first ? p->own_count : 0;
        if (p->done > p->first && p->ntick_waits < TESS_TICK_WAIT_SAMPLES)
            p->tick_wait_us[p->ntick_waits++] = p->link.wait_us - p->wait_at_done_us;
        p->wait_at_done_us = p->link.wait_us;
        if (p->done == 0) measure_layer(p);
        if (is_round_start(p, p->done) && p->done >= p->epoch_start) {
            /* Every neighbour's tuples of this round are in: the new base. */
            ver_of(p, p->done)->width = p->m + 1;
            p->widths.base = p->done;
        }
        tess__tick_proc_version_reset(p, p->done + p->A);
        progress_line(p);
        any = 1;
    }
    /* Nothing reads below the last complete tick, or the base round that
     * replica layers grow from. */
    int64_t keep = p->widths.base >= 0 && p->widths.base < p->done ? p->widths.base : p->done;
    tess__tick_proc_release_below(p, keep);
    return any;
}
