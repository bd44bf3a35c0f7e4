/*
 * process_ckpt.c — a tick process's side of checkpoints (docs/checkpoints.md,
 * "Ticks").
 *
 * Saving: when tick v becomes complete and v is a multiple of the interval,
 * the process's own tuples of v (its query Q_i, in the state class's save
 * form) go to process 0, which writes the epoch once every part of v is in
 * (ckpt.c).  Own tuples of a complete version are final and the queries
 * partition the universe, so the parts together are the whole state of tick
 * v — a consistent cut whatever pace each process keeps.  Replica layers and
 * work computed ahead of late data are not saved: they are recomputed from
 * tick v after a restore, and saving them would tie the checkpoint to one
 * partition, algorithm and timing.
 *
 * Restoring: process 0 sends every part to every other process; each builds
 * the partition with PART on that state (so another worker or rank count
 * re-splits it), then loads the tuples of its own query into version v and
 * starts the epoch there, as after a re-partitioning.
 */
#include <stdlib.h>
#include <string.h>
#include "tick/process_impl.h"

/* ---- saving ---- */

static int save_own(proc *p, int64_t v, tess_buf *out)
{
    const tess_state_class *cls = p->app->state;
    tess_region own = {.npos = 1, .pos = &p->Q[p->me]};
    if (cls->save) return cls->save(p->st, slot_of(p, v), &own, out);
    return cls->pack(p->st, slot_of(p, v), &own, out);
}

int tess__tick_proc_save_if_due(proc *p, int64_t v)
{
    int64_t every = p->a->ckpt_every;
    if (every <= 0 || v <= p->first || v >= p->a->ticks || v % every != 0) return TESS_OK;
    tess__tick_proc_meter(p, METER_RUNTIME);
    tess_buf *b = &p->packbuf;
    b->len = 0;
    int rc = save_own(p, v, b);
    if (rc != TESS_OK) return tess__tick_proc_fail(p, rc, "tick %s: %s", "cannot save the state");
    if (p->me != 0) return tess__tick_link_send(&p->link, 0, TICK_SAVE, 0, v, b->data, b->len);
    return tess__tick_ckpt_add_part(p->ctx, p->ctx->tick->ckpt, v, 0, b->data, b->len);
}

int tess__tick_proc_on_save(proc *p, const tick_msg *m)
{
    if (p->me != 0 || p->ctx->tick->ckpt == NULL) return TESS_ERR_FORMAT;
    return tess__tick_ckpt_add_part(p->ctx, p->ctx->tick->ckpt, m->h.tick, m->h.src, m->payload,
                                    m->len);
}

/* ---- the restored state, to every process ---- */

/* [u32 n][u32 0][u64 len x n][the parts], one message. */
static int send_loaded(proc *p)
{
    uint32_t head[2] = {(uint32_t)p->nloaded, 0};
    tess_buf b = {0};
    int rc = tess_buf_append(&b, head, sizeof head);
    for (int i = 0; i < p->nloaded && rc == TESS_OK; i++) {
        uint64_t len = p->loaded[i].len;
        rc = tess_buf_append(&b, &len, sizeof len);
    }
    for (int i = 0; i < p->nloaded && rc == TESS_OK; i++)
        rc = tess_buf_append(&b, p->loaded[i].data, p->loaded[i].len);
    for (int j = 1; j < p->n && rc == TESS_OK; j++)
        rc = tess__tick_link_send(&p->link, j, TICK_LOAD, 0, p->a->restore_tick, b.data, b.len);
    tess_buf_free(&b);
    return rc;
}

int tess__tick_proc_on_load(proc *p, tick_msg *m)
{
    uint32_t head[2];
    if (p->load_got || m->len < sizeof head) return TESS_ERR_FORMAT;
    memcpy(head, m->payload, sizeof head);
    size_t n = head[0], off = sizeof head + n * sizeof(uint64_t);
    if (n > (m->len - sizeof head) / sizeof(uint64_t)) return TESS_ERR_FORMAT;
    p->load_views = calloc(n ? n : 1, sizeof *p->load_views);
    if (p->load_views == NULL) return TESS_ERR_NOMEM;
    for (size_t i = 0; i < n; i++) {
        uint64_t len;
        memcpy(&len, m->payload + sizeof head + i * sizeof len, sizeof len);
        if (len > m->len - off) return TESS_ERR_FORMAT;
        p->load_views[i] = (tess_buf){.data = m->payload + off, .len = len};
        off += len;
    }
    p->loaded = p->load_views;
    p->nloaded = (int)n;
    p->load_mem = m->mem;
    p->load_got = 1;
    return TESS_OK;
}

void tess__tick_proc_ckpt_free(proc *p)
{
    free(p->load_views);
    free(p->load_mem);
    p->load_views = NULL;
    p->load_mem = NULL;
}

/* ---- setting up from it ---- */

static int load_own(proc *p, int64_t v)
{
    const tess_state_class *cls = p->app->state;
    tess_region own = {.npos = 1, .pos = &p->Q[p->me]};
    int rc = TESS_OK;
    for (int i = 0; i < p->nloaded && rc == TESS_OK; i++)
        rc = (cls->load ? cls->load : cls->merge)(p->st, slot_of(p, v), p->loaded[i].data,
                                                  p->loaded[i].len, &own);
    if (rc != TESS_OK)
        return tess__tick_proc_fail(p, rc, "tick %s: %s",
                                    "the checkpoint's state does not load (damaged?)");
    return TESS_OK;
}

int tess__tick_proc_setup_restored(proc *p)
{
    int64_t v = p->a->restore_tick;
    int rc = TESS_OK;
    if (p->me == 0) {
        p->loaded = tess__tick_ckpt_loaded(p->ctx->tick->ckpt, &p->nloaded);
        rc = send_loaded(p);
    } else {
        rc = tess__tick_proc_wait_until(p, &p->load_got, 1);
    }
    /* PART sees the saved state; the parts carry no partition of their own. */
    if (rc == TESS_OK) rc = tess__tick_proc_part_from(p, p->loaded, p->nloaded, 0);
    if (rc == TESS_OK) rc = tess__tick_proc_plan_build(p, v);
    if (rc == TESS_OK) rc = tess__tick_proc_state_create(p);
    if (rc != TESS_OK) return rc;
    p->first = p->low = p->released = v;
    p->done = v - 1;
    p->epoch_start = p->widths.epoch_start = v; /* rounds start at v, as after PART */
    for (int64_t w = v; w <= v + p->A; w++) tess__tick_proc_version_reset(p, w);
    rc = load_own(p, v);
    version *x = ver_of(p, v);
    x->computed_any = x->full = 1;
    x->width = 0;
    if (rc == TESS_OK) tess__tick_proc_note_held(p, v, &p->Q[p->me]);
    tess__tick_proc_ckpt_free(p); /* the whole state is no longer needed */
    p->loaded = NULL;
    p->nloaded = 0;
    return rc == TESS_OK ? tess__tick_proc_own_count(p, v) : rc;
}
