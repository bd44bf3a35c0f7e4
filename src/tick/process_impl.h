/*
 * process_impl.h — the state of one tick process, shared by process.c (the
 * plan, versions, STEP and the loop) and process_exchange.c (messages and
 * partitioning).  Private to src/tick.
 */
#ifndef TESS_SRC_TICK_PROCESS_IMPL_H
#define TESS_SRC_TICK_PROCESS_IMPL_H

#include "tick/tick_internal.h"

#define BAR_SLOTS 4 /* ticks whose barrier may be open at once, with room */

/* What the thread is doing, for the CPU split (tess__tick_proc_meter). */
enum { METER_RUNTIME, METER_STEP, METER_WAIT, METER_STATES };

/*
 * The process thread's CPU split into the runtime's own, STEP (and PART)
 * and waiting (and the emulated compute).  The thread CPU clock is a system
 * call, read where a STEP starts or ends; the changes between the
 * runtime's work and waiting read the monotonic clock (process.c, "The CPU
 * meter").
 */
typedef struct proc_meter {
    int on;                 /* from the common start (start_together) on */
    int exact;              /* TESS_TICK_METER=exact: the CPU clock at every change */
    int state;              /* METER_* the thread is in since wall_us */
    double wall_us;         /* monotonic clock at the last change */
    double cpu_us;          /* thread CPU clock at its last read */
    double runtime_wall_us; /* METER_RUNTIME's wall time since that read */
    double us[METER_STATES];
} proc_meter;

typedef struct version {
    int64_t v;
    int computed_any, full, sent, barred;
    int width; /* holds all of L_width(Q_i); -1: not even Q_i (width.c) */
    int slot;  /* the state class's slot holding it, or -1 (tess__tick_proc_slot) */
    int ahead; /* computed ahead of late data: within (WX∘RX)^ahead(Q_i); 0: not */
    /* Per side: the sum over in-neighbours of min(recv_round, v) when last
     * computed.  Rounds only arrive, so it grows whenever any late side's
     * data did: the version is behind exactly when it differs. */
    int64_t late_sig;
    /* Tuples of Q_i that STEP put in it, when every write to the version
     * was a STEP of a target within Q_i or a piece outside it (own_mixed
     * 0, own_stepped 1): then they are all of its tuples in Q_i, and a
     * round needs no count over the partition (after_full). */
    int64_t own_kept;
    int own_stepped, own_mixed;
} version;

/* Per side: a version's width toward one in-neighbour (side_width_of). */
typedef struct side_width {
    int64_t v;
    int w;
} side_width;

typedef struct proc {
    tess_ctx *ctx;
    const tess_tick_app *app;
    const tick_args *a;
    int me, n, k, m, A; /* A: versions computed beyond done */
    tick_widths widths; /* replica widths: W = m+1, the base round */
    tick_link link;

    /* plan: depends on the partition */
    tess_query *Q;    /* n */
    tess_query *Lown; /* L_0 .. L_{m+1} */
    int n_in, n_out;
    int *in_ids, *out_ids, *in_index; /* in_index[src]: index in in_ids or -1 */
    tess_query *inner;                /* A+1: (WX∘RX)^s(Q_i), what Q_i alone determines */
    tess_query *out_L;                /* n_out: L_{m+1}(Q_j) */
    int64_t *send_next;               /* n_out: the next round start to send out-neighbour o */
    tess_query *reach;                /* per side: n_in x (A+1), IX^s(Q_j) */
    tess_query *hold_in;              /* per side, lazy replicas: n_in x (k+1), hold^s(Q_j) */
    side_width *side_w;               /* per side, lazy replicas: nslots x n_in */
    int64_t *recv_round;
    uint32_t epoch;
    int64_t epoch_start;

    void *st;
    int nslots;
    version *ver;
    int *free_slots; /* a stack: the slot released last is used first (warm) */
    int nfree;
    int64_t low; /* versions below it hold no slot */
    int64_t done;
    int64_t released;            /* bsp: last tick every process finished */
    int64_t bar_tick[BAR_SLOTS]; /* process 0: arrivals counted per tick */
    int bar_n[BAR_SLOTS];

    /* Re-partitioning at tick R: every process sends its tuples of tick
     * R - N/2 to process 0 (a snapshot), which calls PART once and sends
     * every process the new queries; at R only the tuples that change owner
     * move.  process_exchange.c, "partitioning". */
    tess_buf *repart;   /* n, process 0: the snapshot for the pending PART */
    tess_buf *moves;    /* n: tuples of tick R moving here */
    tess_query *Q_next; /* n: the pending PART's queries (part_got) */
    int repart_got, moves_got, part_got;
    int64_t snapshot_for; /* the re-partitioning tick whose snapshot was sent */
    int64_t parted_for;   /* process 0: the re-partitioning tick PART ran for */

    /* Checkpoints (process_ckpt.c): the first tick (0, or the restored
     * one), and on a restore the saved parts (process 0: the control
     * function's; others: views into the TICK_LOAD message, load_mem). */
    int64_t first;
    const tess_buf *loaded;
    int nloaded, load_got;
    tess_buf *load_views;
    void *load_mem;

    tick_msg *deferred;
    int ndeferred, capdeferred;
    unsigned char *blocked; /* n: scratch of retry_deferred */

    tess_query *negs; /* scratch: the one query a region subtracts */
    tess_buf packbuf; /* scratch: tuples of one outgoing message */
    double step_us, emu_deadline, emu_owed_us, start_us, end_us;
    int emu_busy;     /* no wait for messages since the last emulated compute */
    int stalled;      /* nothing to do since the last grace wait (grace_wait) */
    int check;        /* TESS_TICK_CHECK=1 (check.c), read once at setup */
    int refine_every; /* Algorithm 2: refine on every arrival (unless TESS_TICK_REFINE=next) */
    int sides;        /* compute ahead per late neighbour (app->ix, unless TESS_TICK_SIDES=off) */
    int send_early;   /* per side, send a round's parts before it is full (TESS_TICK_SEND) */
    int grace;        /* wait a tick's STEP before widening replicas (TESS_TICK_GRACE) */
    double stall_start_us, last_stall_us;
    double grace_until_us; /* no replica layers widened before (grace_wait) */
    proc_meter meter;
    double piece_wall_us; /* replica pieces on the real clock, unmetered: their wall time */
    int64_t tuple_ticks, own_tuple_ticks, own_count;
    double layer_ratio; /* |L_1(Q_i)| / |Q_i| - 1 at tick 0 (tess_tick_figures) */
    /* The wait before each of the first ticks was complete, for the median
     * (tess_tick_figures.wait_median_seconds). */
    double tick_wait_us[TESS_TICK_WAIT_SAMPLES], wait_at_done_us;
    int ntick_waits;
    int rounds_uncounted;
    int final_sent;

    tess_tick_result *result; /* process 0 */
    int finals;
    int starts, go; /* start barrier */
    double last_progress_us;
} proc;

/* Microseconds since the run's common clock origin (or on the virtual clock). */
static inline double proc_now_us(const proc *p) { return tess__tick_link_now(&p->link); }
static inline version *ver_of(proc *p, int64_t v) { return &p->ver[v % p->nslots]; }
/* The state-class slot of version v, taken from the free stack on first use. */
int tess__tick_proc_slot(proc *p, int64_t v);
static inline int slot_of(proc *p, int64_t v) { return tess__tick_proc_slot(p, v); }
/* Give back the slots of versions below `below` (no longer read). */
void tess__tick_proc_release_below(proc *p, int64_t below);
/* Rounds start every k ticks from the epoch's first tick (0, a re-partitioning
 * tick, which is a multiple of k, or a restored tick). */
static inline int is_round_start(const proc *p, int64_t v)
{
    return (v - p->epoch_start) % p->k == 0;
}

int tess__tick_proc_fail(proc *p, int code, const char *fmt, const char *what);
double tess__tick_proc_thread_cpu_us(void);
/* The thread enters `state` (METER_*): reads the thread CPU clock only if it
 * was in another.  Accounted states end where the runtime's work starts. */
void tess__tick_proc_meter(proc *p, int state);
int tess__tick_proc_plan_build(proc *p, int64_t first_round);
int tess__tick_proc_is_repart_tick(const proc *p, int64_t v);
void tess__tick_proc_version_reset(proc *p, int64_t v);
void tess__tick_proc_pay_step_cost(proc *p);
/* Block until a message may be due or max_wait_us passed (wait time and CPU counted). */
int tess__tick_proc_wait_for_messages(proc *p, double max_wait_us);
/* Handle messages, waiting for more, until *got (a counter the handlers
 * raise) reaches want. */
int tess__tick_proc_wait_until(proc *p, const int *got, int want);
/* The next re-partitioning tick after the epoch's start (none: INT64_MAX). */
int64_t tess__tick_proc_next_repart(const proc *p);
int tess__tick_proc_pump(proc *p);
int tess__tick_proc_record_final(proc *p, int src, const tess_tick_figures *f, const void *tuples,
                                 size_t len);
int tess__tick_proc_own_count(proc *p, int64_t v);
int tess__tick_proc_pack_own(proc *p, int64_t v, tess_buf *out);
int tess__tick_proc_state_create(proc *p);
int tess__tick_proc_part_from(proc *p, const tess_buf *bufs, int nbufs, int init_all);
int tess__tick_proc_advance(proc *p);

/* ---- checkpoints (process_ckpt.c) ---- */
/* Set up from the restored tick instead of NEW: PART on the saved state,
 * the plan, and this process's tuples of that tick. */
int tess__tick_proc_setup_restored(proc *p);
/* At the complete tick v: this process's part of a checkpoint, if v is one. */
int tess__tick_proc_save_if_due(proc *p, int64_t v);
/* Process 0: a part from another process (TICK_SAVE). */
int tess__tick_proc_on_save(proc *p, const tick_msg *m);
/* The restored checkpoint from process 0 (TICK_LOAD); takes m->mem. */
int tess__tick_proc_on_load(proc *p, tick_msg *m);
void tess__tick_proc_ckpt_free(proc *p);
int tess__tick_proc_after_full(proc *p, int64_t v);
/* Per side, round start v computed except where the late neighbours'
 * reaches p->negs[0 .. nneg) lie: send its round to every out-neighbour
 * whose part none of them meets. */
int tess__tick_proc_send_early(proc *p, int64_t v, int nneg);

/* ---- the checking mode (process.c; check.c) ---- */
/* Version v holds every tuple of q: a fact of received data that merge()
 * cannot see, told to the classes that check reads against what a version
 * holds (the particles class).  Nothing without TESS_TICK_CHECK=1. */
void tess__tick_proc_note_held(proc *p, int64_t v, const tess_query *q);
/* Checking mode: round v from in-neighbour src is merged into version v. */
void tess__tick_proc_note_ghost(proc *p, int64_t v, int src);
/* At a round start whose version is full and whose round data have all
 * arrived: it holds L_{m+1}(Q_i). */
void tess__tick_proc_note_round(proc *p, int64_t v);

#endif
