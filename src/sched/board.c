/*
 * board.c — a launch posted on a board in rank 0's node-shared memory.
 *
 * A RUN message reaches a rank beside rank 0 through two progress threads
 * (about 4.6 us on these VMs), and rank 0's own workers start only once its
 * progress thread has taken the message (queue.c: else a bound rank's
 * progress thread gets its core back only when the workers finish).  So
 * rank 0 also writes each launch on a board, and an idle worker of a rank on
 * its node takes the run from there: one that watches for tasks before it
 * sleeps, or one asleep on its rank's bell, which rank 0 rings.
 *
 * The message is still sent, and whichever copy comes second is dropped
 * (runs are numbered): a rank on another node gets the message as before.
 * The board says how many messages rank 0 had posted to each rank before
 * the run, and a rank takes it only once it has handled as many from rank
 * 0, so a run never overtakes what was sent before it
 * (writes, a checkpoint's cut, a partition) — except the replica switch
 * rank 0 sends just before a run: the board carries its number, and the
 * rank makes it first (table_replica.c numbers the switches, so the
 * message that follows is known for a repeat).  Rank 0 writes under a
 * sequence lock: a reader that raced a newer launch drops its copy and
 * looks again.
 */
#include <limits.h>
#include <linux/futex.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>
#include "sched/queue_impl.h"
#include "table/table_internal.h"

/* Kernel arguments of most programs fit; a bigger RUN goes as a message only. */
#define BOARD_PAYLOAD 2048

struct tess__run_board {
    _Atomic uint64_t lock;     /* odd while rank 0 writes */
    _Atomic uint64_t seq;      /* the run on the board, 0 before the first */
    _Atomic uint64_t len;      /* bytes of its RUN message */
    _Atomic uint64_t switches; /* replica switches every rank makes before it */
    _Atomic uint64_t after[];  /* per rank: messages rank 0 posted to it before */
    /* then BOARD_PAYLOAD bytes: the RUN message, header and body */
};

static size_t board_bytes(int nranks)
{
    return sizeof(tess__run_board) + (size_t)nranks * sizeof(uint64_t) + BOARD_PAYLOAD;
}

static uint8_t *board_payload(tess__run_board *b, int nranks)
{
    return (uint8_t *)&b->after[nranks];
}

static void attach_board(tess_ctx *ctx, uint8_t *const *ptrs, void *arg)
{
    (void)arg;
    /* rank 0's segment, where this rank sees it; readers also need their
     * own line of reports, which holds their bell */
    if (ctx->node_counts != NULL) ctx->sched->run_board = (tess__run_board *)(void *)ptrs[0];
}

int tess__board_request(tess_ctx *ctx)
{
    size_t bytes = ctx->rank == 0 ? board_bytes(ctx->nranks) : 0;
    return tess__comm_share_request(ctx, bytes, attach_board, NULL);
}

/*
 * Rank 0, before the RUN messages are posted: the run on the board, and
 * the bells of the ranks beside it rung.  1 if every other rank is beside
 * it: each then takes the run from here, from a worker that watches, that
 * wakes, or that finishes what it runs, without waiting for the message.
 */
int tess__board_post(tess_ctx *ctx, const run_msg *r, const void *body, size_t blen)
{
    tess__run_board *b = ctx->sched->run_board;
    if (b == NULL || ctx->rank != 0 || sizeof *r + blen > BOARD_PAYLOAD) return 0;
    uint64_t lock = atomic_load_explicit(&b->lock, memory_order_relaxed);
    atomic_store_explicit(&b->lock, lock + 1, memory_order_relaxed);
    atomic_thread_fence(memory_order_release); /* readers see odd before the new body */
    for (int k = 1; k < ctx->nranks; k++) {
        uint64_t posted = tess__comm_posted_to(ctx, k), before = 0;
        /* the switch just before the run is made from the board too */
        if (tess__replica_switch_was_last(ctx, k, posted, &before)) posted = before;
        atomic_store_explicit(&b->after[k], posted, memory_order_relaxed);
    }
    atomic_store_explicit(&b->switches, tess__replica_switches(ctx), memory_order_relaxed);
    uint8_t *payload = board_payload(b, ctx->nranks);
    memcpy(payload, r, sizeof *r);
    if (blen) memcpy(payload + sizeof *r, body, blen);
    atomic_store_explicit(&b->len, sizeof *r + blen, memory_order_relaxed);
    atomic_store_explicit(&b->seq, r->seq, memory_order_relaxed);
    atomic_store(&b->lock, lock + 2); /* seq_cst: before the bells' loads of `sleeping` */
    int all = 1;
    for (int k = 1; k < ctx->nranks; k++) {
        tess__board_ring(ctx, k);
        all &= ctx->node_counts[k] != NULL;
    }
    return all;
}

/* A copy of the board's run taken between two equal even lock values, or 0. */
static size_t copy_run(tess_ctx *ctx, tess__run_board *b, uint8_t *out, uint64_t *after,
                       uint64_t *switches)
{
    uint64_t lock = atomic_load_explicit(&b->lock, memory_order_acquire);
    if (lock & 1) return 0;
    size_t len = (size_t)atomic_load_explicit(&b->len, memory_order_relaxed);
    if (len < sizeof(run_msg) || len > BOARD_PAYLOAD) return 0;
    *after = atomic_load_explicit(&b->after[ctx->rank], memory_order_relaxed);
    *switches = atomic_load_explicit(&b->switches, memory_order_relaxed);
    memcpy(out, board_payload(b, ctx->nranks), len);
    atomic_thread_fence(memory_order_acquire); /* the copy before the second look */
    return atomic_load_explicit(&b->lock, memory_order_relaxed) == lock ? len : 0;
}

/*
 * A rank beside rank 0, from an idle worker: take the run on the board
 * if it is newer than the last one this rank took and every message posted
 * here before it has been handled.  1 if it was taken.
 */
int tess__board_take(tess_ctx *ctx)
{
    tess__run_board *b = ctx->sched->run_board;
    if (b == NULL || ctx->rank == 0) return 0;
    uint64_t seq = atomic_load_explicit(&b->seq, memory_order_acquire);
    if (seq <= atomic_load_explicit(&ctx->queue->run_taken, memory_order_relaxed)) return 0;
    uint8_t run[BOARD_PAYLOAD];
    uint64_t after = 0, switches = 0;
    size_t len = copy_run(ctx, b, run, &after, &switches);
    if (len == 0 || tess__comm_dispatched_from(ctx, 0) < after) return 0;
    if (!tess__replica_switch_to(ctx, switches)) return 0; /* an earlier switch is missing */
    tess__sched_on_run(ctx, 0, TESS_MSG_RUN, run, len);
    return 1;
}

/*
 * Workers beside rank 0 sleep on a futex word in their rank's line instead
 * of the queue's condition variable, so that rank 0 wakes them when it
 * posts a run: a rank whose threads outnumber its cores sleeps at once, and
 * its run otherwise waited for its progress thread's next look, which backs
 * off to a millisecond (4 ranks on 2 cores: the last rank got its run 1.7
 * ms after the first).  A process-shared futex, as the line is shared.
 */
static long futex(_Atomic uint32_t *word, int op, uint32_t val, const struct timespec *timeout)
{
    return syscall(SYS_futex, (uint32_t *)word, op, val, timeout, NULL, 0);
}

static tess__node_counts *bell_line(tess_ctx *ctx, int r)
{
    if (ctx->sched->run_board == NULL || r == 0 || ctx->node_counts == NULL) return NULL;
    return ctx->node_counts[r];
}

int tess__board_sleeps(tess_ctx *ctx) { return bell_line(ctx, ctx->rank) != NULL; }

void tess__board_ring(tess_ctx *ctx, int r)
{
    tess__node_counts *nc = bell_line(ctx, r);
    if (nc == NULL) return;
    atomic_fetch_add(&nc->bell, 1); /* seq_cst: before the look at `sleeping` */
    if (atomic_load(&nc->sleeping) > 0) futex(&nc->bell, FUTEX_WAKE, INT_MAX, NULL);
}

uint32_t tess__board_bell(tess_ctx *ctx)
{
    tess__node_counts *nc = bell_line(ctx, ctx->rank);
    return nc != NULL ? atomic_load(&nc->bell) : 0;
}

/* Sleep until the bell has rung since it read `seen` (or 100 ms, or a
 * signal), unless the board has a run for this rank. */
void tess__board_sleep(tess_ctx *ctx, uint32_t seen)
{
    tess__node_counts *nc = bell_line(ctx, ctx->rank);
    if (nc == NULL) return;
    atomic_fetch_add(&nc->sleeping, 1); /* seq_cst: before the look at the board */
    struct timespec timeout = {0, 100 * 1000 * 1000};
    if (!tess__board_take(ctx)) futex(&nc->bell, FUTEX_WAIT, seen, &timeout);
    atomic_fetch_sub(&nc->sleeping, 1);
}
