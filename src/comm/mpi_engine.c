/*
 * mpi_engine.c — the progress engine: one thread per rank that owns every
 * MPI call (it initialises MPI with MPI_THREAD_FUNNELED and finalises it).
 *
 * Other threads queue messages with tess__comm_post() and ring a doorbell.
 * Each turn of the loop packs everything queued for one destination into a
 * single batch and sends it with MPI_Isend, reaps finished sends, and
 * receives and dispatches incoming batches.  OpenMPI's shared-memory
 * transport makes no progress on its own, so an idle engine keeps polling,
 * but with exponential back-off (yield, then sleeps of 5 µs doubling up to
 * 1 ms) so that it does not burn a core while every worker computes.
 */
#include <mpi.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include "mpi_engine.h"

#define TAG_BATCH 7
#define BATCH_LIMIT (4u << 20)   /* send a batch early once it holds 4 MiB */
#define ALONE_LIMIT (256u << 10) /* a message this large is sent unpacked */
#define MAX_SLEEP_US 1000
#define RECV_PER_TURN 64
#define REST_POLL_SECONDS 0.002

typedef struct out_msg {
    struct out_msg *next;
    int dst;
    size_t len; /* bytes in data: header + payload */
    uint8_t data[];
} out_msg;

typedef struct msg_hdr {
    uint32_t type;
    uint32_t len; /* payload bytes; the record is padded to 8 */
} msg_hdr;

typedef struct batch {
    uint8_t *buf;
    size_t len, cap;
} batch;

typedef struct pending_send {
    MPI_Request req;
    void *buf; /* freed when the send completes: a batch, or an out_msg sent alone */
} pending_send;

struct tess__comm {
    tess_ctx *ctx;
    pthread_t thread;
    pthread_mutex_t mu;      /* guards the queue, stop and ready */
    pthread_cond_t doorbell; /* rung when a message is queued or stop is set */
    pthread_cond_t ready_cv;
    out_msg *head, *tail;
    int stop, ready, init_rc;
    int *worker_counts; /* from the start-up allgather */
    /* owned by the progress thread */
    batch *batches;
    pending_send *sends;
    int nsends, sends_cap;
    /* the batch being received (MPI_Irecv): one at a time, so batches are
     * dispatched in the order they arrive */
    MPI_Request rx_req;
    uint8_t *rx_buf;
    int rx_len, rx_src, rx_active;
    unsigned idle_turns;
    int poll_at_rest; /* the rank has a core of its own for this thread */
    int abort_sent;
    /* a call another thread asked the progress thread to make (c->mu) */
    tess__progress_fn *call_fn;
    void *call_arg;
    int call_rc, call_pending;
    void *share; /* mpi_share.c */
    /* messages posted to each rank, and dispatched from each (handlers
     * returned): a report that travels outside the link (node-shared
     * memory) says how many messages preceded it on the link */
    _Atomic uint64_t *posted, *dispatched;
    tess__watch *watch;   /* the liveness watchdog (mpi_watch.c) */
    _Atomic int end_code; /* non-zero: end the job with it (tess__comm_end_job) */
    /* a local failure the job has this long to report the usual way
     * (tess__comm_fail_after); 0: none.  c->mu guards fail_why. */
    _Atomic uint64_t fail_by_us;
    char fail_why[480];
    /* statistics (tess_stats) */
    _Atomic uint64_t msgs_sent, bytes_sent, msgs_recv, bytes_recv, batches_sent;
    _Atomic uint64_t progress_cpu_ns;
};

static size_t padded(size_t n) { return (n + 7) & ~(size_t)7; }

int tess__comm_post(tess_ctx *ctx, int dst, uint32_t type, const tess__part *parts, int nparts)
{
    tess__comm *c = ctx->comm;
    if (c == NULL || dst < 0 || dst >= ctx->nranks) return TESS_ERR_INVAL;
    size_t len = tess__parts_len(parts, nparts);
    if (len > UINT32_MAX) return TESS_ERR_INVAL;
    out_msg *m = malloc(sizeof *m + sizeof(msg_hdr) + len);
    if (m == NULL) return TESS_ERR_NOMEM;
    msg_hdr h = {.type = type, .len = (uint32_t)len};
    memcpy(m->data, &h, sizeof h);
    tess__parts_gather(m->data + sizeof h, parts, nparts);
    m->next = NULL;
    m->dst = dst;
    m->len = sizeof h + len;
    atomic_fetch_add(&c->msgs_sent, 1);
    atomic_fetch_add(&c->bytes_sent, m->len);
    pthread_mutex_lock(&c->mu);
    if (c->tail) c->tail->next = m;
    else c->head = m;
    c->tail = m;
    atomic_fetch_add_explicit(&c->posted[dst], 1, memory_order_relaxed);
    pthread_cond_signal(&c->doorbell);
    pthread_mutex_unlock(&c->mu);
    return TESS_OK;
}

void tess__comm_stats(const tess_ctx *ctx, tess_stats *st)
{
    const tess__comm *c = ctx->comm;
    if (c == NULL) return;
    st->messages_sent = atomic_load(&c->msgs_sent);
    st->bytes_sent = atomic_load(&c->bytes_sent);
    st->messages_received = atomic_load(&c->msgs_recv);
    st->bytes_received = atomic_load(&c->bytes_recv);
    st->batches_sent = atomic_load(&c->batches_sent);
    st->progress_cpu_seconds = 1e-9 * (double)atomic_load(&c->progress_cpu_ns);
}

uint64_t tess__comm_posted_to(tess_ctx *ctx, int dst)
{
    tess__comm *c = ctx->comm;
    return c != NULL ? atomic_load(&c->posted[dst]) : 0;
}

uint64_t tess__comm_dispatched_from(tess_ctx *ctx, int src)
{
    tess__comm *c = ctx->comm;
    return c != NULL ? atomic_load_explicit(&c->dispatched[src], memory_order_acquire) : 0;
}

static int batch_append(batch *b, const out_msg *m)
{
    size_t need = b->len + padded(m->len);
    if (tess__grow_bytes(&b->buf, &b->cap, need, 65536) != TESS_OK) return TESS_ERR_NOMEM;
    memcpy(b->buf + b->len, m->data, m->len);
    memset(b->buf + b->len + m->len, 0, padded(m->len) - m->len);
    b->len = need;
    return TESS_OK;
}

/* MPI_Isend of data[0..len) to dst; `owner` is freed once it completes. */
static void start_send(tess__comm *c, void *owner, const uint8_t *data, size_t len, int dst)
{
    if (c->nsends == c->sends_cap) {
        int cap = c->sends_cap ? 2 * c->sends_cap : 16;
        pending_send *grown = realloc(c->sends, (size_t)cap * sizeof *grown);
        if (grown == NULL) abort(); /* cannot keep the link's order otherwise */
        c->sends = grown;
        c->sends_cap = cap;
    }
    pending_send *s = &c->sends[c->nsends++];
    s->buf = owner;
    MPI_Isend(data, (int)len, MPI_BYTE, dst, TAG_BATCH, MPI_COMM_WORLD, &s->req);
    atomic_fetch_add(&c->batches_sent, 1);
}

static void send_batch(tess__comm *c, int dst)
{
    batch *b = &c->batches[dst];
    if (b->len == 0) return;
    start_send(c, b->buf, b->buf, b->len, dst);
    b->buf = NULL;
    b->len = b->cap = 0;
}

/* A large message goes out as a batch of its own, straight from the queued
 * copy: packing it would copy it again (and again at every doubling of the
 * batch), and into fresh memory, whose page faults can cost more than the
 * copy itself. */
static void send_alone(tess__comm *c, out_msg *m)
{
    send_batch(c, m->dst); /* what was queued before it goes first */
    start_send(c, m, m->data, m->len, m->dst);
}

/* Pack everything queued, per destination in queue order, and send it. */
static int flush_outgoing(tess__comm *c)
{
    pthread_mutex_lock(&c->mu);
    out_msg *m = c->head;
    c->head = c->tail = NULL;
    pthread_mutex_unlock(&c->mu);
    if (m == NULL) return 0;
    while (m != NULL) {
        out_msg *next = m->next;
        if (m->len >= ALONE_LIMIT) {
            send_alone(c, m);
            m = next;
            continue;
        }
        if (batch_append(&c->batches[m->dst], m) != TESS_OK) abort();
        if (c->batches[m->dst].len >= BATCH_LIMIT) send_batch(c, m->dst);
        free(m);
        m = next;
    }
    for (int r = 0; r < c->ctx->nranks; r++) send_batch(c, r);
    return 1;
}

static int reap_sends(tess__comm *c)
{
    int reaped = 0;
    for (int i = 0; i < c->nsends;) {
        int done = 0;
        MPI_Test(&c->sends[i].req, &done, MPI_STATUS_IGNORE);
        if (!done) {
            i++;
            continue;
        }
        free(c->sends[i].buf);
        c->sends[i] = c->sends[--c->nsends];
        reaped = 1;
    }
    return reaped;
}

static void dispatch_batch(tess_ctx *ctx, int src, const uint8_t *buf, size_t len)
{
    _Atomic uint64_t *dispatched = &ctx->comm->dispatched[src];
    size_t off = 0;
    while (off + sizeof(msg_hdr) <= len) {
        msg_hdr h;
        memcpy(&h, buf + off, sizeof h);
        if (off + sizeof h + h.len > len) break;
        atomic_fetch_add(&ctx->comm->msgs_recv, 1);
        tess__dispatch(ctx, src, h.type, buf + off + sizeof h, h.len);
        atomic_fetch_add_explicit(dispatched, 1, memory_order_release);
        off += padded(sizeof h + h.len);
    }
    atomic_fetch_add(&ctx->comm->bytes_recv, len);
}

static void deliver(tess__comm *c)
{
    double started = tess_now();
    dispatch_batch(c->ctx, c->rx_src, c->rx_buf, (size_t)c->rx_len);
    tess__throttle(c->ctx, started); /* a slowed rank handles messages slowly too */
    free(c->rx_buf);
    c->rx_buf = NULL;
    c->rx_active = 0;
}

/*
 * Receive what has arrived.  A batch is received with MPI_Irecv and tested
 * on later turns rather than with a blocking MPI_Recv: a batch above the
 * eager limit moves only as fast as its sender's progress thread pushes it,
 * and a blocking receive spun the whole while (on a busy 2-core machine the
 * receiving rank's progress thread took 40% of a core from its processors).
 */
static int poll_incoming(tess__comm *c)
{
    int got = 0;
    for (int i = 0; i < RECV_PER_TURN; i++) {
        if (c->rx_active) {
            int done = 0;
            MPI_Test(&c->rx_req, &done, MPI_STATUS_IGNORE);
            if (!done) break;
            deliver(c);
            got = 1;
            continue;
        }
        int flag = 0, count = 0;
        MPI_Status st;
        MPI_Iprobe(MPI_ANY_SOURCE, TAG_BATCH, MPI_COMM_WORLD, &flag, &st);
        if (!flag) break;
        MPI_Get_count(&st, MPI_BYTE, &count);
        c->rx_buf = malloc(count > 0 ? (size_t)count : 1);
        if (c->rx_buf == NULL) abort();
        c->rx_len = count;
        c->rx_src = st.MPI_SOURCE;
        c->rx_active = 1;
        MPI_Irecv(c->rx_buf, count, MPI_BYTE, st.MPI_SOURCE, TAG_BATCH, MPI_COMM_WORLD, &c->rx_req);
        got = 1;
    }
    return got;
}

/* A signal on this rank tells every rank, so rank 0's control can stop. */
static void forward_signal(tess__comm *c)
{
    if (c->abort_sent || !tess__signal_pending()) return;
    c->abort_sent = 1;
    for (int r = 0; r < c->ctx->nranks; r++)
        if (r != c->ctx->rank) tess__comm_post(c->ctx, r, TESS_MSG_ABORT, NULL, 0);
    tess__dispatch(c->ctx, c->ctx->rank, TESS_MSG_ABORT, NULL, 0);
}

/* CPU time of the progress thread, for tess_stats: what keeping MPI moving costs. */
static void note_cpu(tess__comm *c)
{
    struct timespec ts;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
    atomic_store(&c->progress_cpu_ns, (uint64_t)ts.tv_sec * 1000000000ULL + (uint64_t)ts.tv_nsec);
}

/* Every worker of this rank went idle less than REST_POLL_SECONDS ago: the
 * next message (the barrier's count, the next run) is what the rank waits
 * for, and no worker of its own needs the core. */
static int freshly_at_rest(const tess__comm *c)
{
    tess_ctx *ctx = c->ctx;
    if (!c->poll_at_rest || atomic_load(&ctx->workers_resting) < ctx->workers) return 0;
    double since = (double)atomic_load(&ctx->all_resting_since_us) * 1e-6;
    return tess_now() - since < REST_POLL_SECONDS;
}

/*
 * Idle: yield, then sleep longer and longer.  Not while a thread of this
 * rank waits for a reply (a round trip's latency is then all its time: a
 * matmul rank fetching B spent a fifth of the copy in these sleeps), nor
 * for a while after its workers went idle (freshly_at_rest), and not while
 * a send is pending:
 * a batch above the eager limit moves in fragments, each pushed by a
 * progress call of the sender, while the receiver waits in MPI_Recv
 * spinning inside the library.  A sender asleep here for up to 1 ms per
 * fragment made the receiver's progress thread burn about as much CPU as
 * its worker (perf: mca_btl_vader and opal_progress under MPI_Recv) and
 * moved the batches at a few tens of MB/s.
 */
static void back_off(tess__comm *c)
{
    unsigned k = ++c->idle_turns;
    if ((k & 15) == 0) note_cpu(c);
    if (k < 32 || c->nsends > 0 || c->rx_active || atomic_load(&c->ctx->requests_waiting) > 0 ||
        freshly_at_rest(c)) {
        sched_yield();
        return;
    }
    unsigned shift = k - 32 > 8 ? 8 : k - 32;
    long us = 5L << shift;
    if (us > MAX_SLEEP_US) us = MAX_SLEEP_US;
    struct timespec ts;
    tess__deadline_after(&ts, (double)us * 1e-6);
    pthread_mutex_lock(&c->mu);
    if (c->head == NULL && !c->stop && !c->call_pending)
        pthread_cond_timedwait(&c->doorbell, &c->mu, &ts);
    pthread_mutex_unlock(&c->mu);
}

void tess__comm_wait_sent(tess_ctx *ctx, double seconds)
{
    tess__comm *c = ctx->comm;
    if (c == NULL) return;
    double until = tess_now() + seconds;
    for (;;) {
        pthread_mutex_lock(&c->mu);
        int queued = c->head != NULL;
        pthread_mutex_unlock(&c->mu);
        if (!queued || tess_now() >= until) return;
        sched_yield();
    }
}

static int stop_requested(tess__comm *c)
{
    pthread_mutex_lock(&c->mu);
    int stop = c->stop && c->head == NULL;
    pthread_mutex_unlock(&c->mu);
    return stop;
}

/* A request to end the job (tess__comm_end_job), or a local failure that
 * the job did not report in time (tess__comm_fail_after): honoured now. */
static void check_end_request(tess__comm *c)
{
    int code = atomic_load(&c->end_code);
    if (code != 0) tess__comm_abort_now(c->ctx, code);
    uint64_t by = atomic_load(&c->fail_by_us);
    if (by == 0 || tess_now() * 1e6 < (double)by) return;
    pthread_mutex_lock(&c->mu);
    tess__warn(c->ctx, "%s; the other ranks still wait for this one: ending the job on every rank",
               c->fail_why);
    pthread_mutex_unlock(&c->mu);
    tess__comm_abort_now(c->ctx, 1);
}

void tess__comm_fail_after(tess_ctx *ctx, double seconds, const char *why)
{
    tess__comm *c = ctx->comm;
    if (c == NULL || ctx->nranks < 2 || atomic_load(&c->fail_by_us) != 0) return;
    pthread_mutex_lock(&c->mu);
    snprintf(c->fail_why, sizeof c->fail_why, "%s", why);
    pthread_mutex_unlock(&c->mu);
    atomic_store(&c->fail_by_us, (uint64_t)((tess_now() + seconds) * 1e6));
}

void tess__comm_fail_clear(tess_ctx *ctx)
{
    if (ctx->comm != NULL) atomic_store(&ctx->comm->fail_by_us, 0);
}

void tess__comm_abort_now(tess_ctx *ctx, int code)
{
    (void)ctx;
    fflush(stdout);
    fflush(stderr);
    MPI_Abort(MPI_COMM_WORLD, code);
    _exit(code); /* MPI_Abort does not return; if it did, this rank still ends */
}

void tess__comm_end_job(tess_ctx *ctx, int code)
{
    tess__comm *c = ctx->comm;
    if (c == NULL || ctx->nranks < 2) return;
    atomic_store(&c->end_code, code != 0 ? code : 1);
    pthread_mutex_lock(&c->mu);
    pthread_cond_signal(&c->doorbell);
    pthread_mutex_unlock(&c->mu);
    if (pthread_equal(pthread_self(), c->thread)) tess__comm_abort_now(ctx, code != 0 ? code : 1);
    for (;;) pause(); /* the progress thread ends the process */
}

/*
 * Every rank contributes where it is; a MIN over (where, -where) gives the
 * smallest and the largest, equal when all ranks came to the same place.
 * Heartbeats and requests to end the job are served while waiting, so a
 * rank that never comes is reported, and one that stopped ends the job.
 */
int tess__comm_meet(tess__comm *c, int where)
{
    tess__watch_set_phase(c->watch, where);
    int mine[2] = {where, -where}, all[2] = {0, 0};
    MPI_Request req;
    MPI_Iallreduce(mine, all, 2, MPI_INT, MPI_MIN, MPI_COMM_WORLD, &req);
    double since = tess_now();
    int done = 0;
    while (!done) {
        MPI_Test(&req, &done, MPI_STATUS_IGNORE);
        int work = flush_outgoing(c);
        work |= reap_sends(c);
        tess__watch_turn(c->watch);
        tess__watch_note_wait(c->watch, where, since);
        check_end_request(c);
        if (!(work | poll_incoming(c))) sched_yield();
    }
    return all[0] == -all[1];
}

void **tess__comm_share_state(tess__comm *c) { return &c->share; }

/*
 * This rank is leaving while the others started the job: it failed on its
 * own before tess_main (bad input only it read, memory, a signal), and the
 * others wait for it in tess_main.  End the job everywhere, with its reason.
 */
static void leave_alone(tess__comm *c)
{
    tess_ctx *ctx = c->ctx;
    tess__warn(ctx,
               "rank %d stopped before the job started (%s) while the other ranks went on: "
               "ending the job on every rank",
               ctx->rank, ctx->last_error[0] ? ctx->last_error : "see its message above");
    tess__comm_abort_now(ctx, 1);
}

/* Keep receiving until every rank has reached the end, then finalise. */
static void drain_and_finalize(tess__comm *c)
{
    while (c->nsends > 0) {
        reap_sends(c);
        poll_incoming(c);
    }
    if (!tess__comm_meet(c, TESS__PHASE_END)) leave_alone(c);
    while (c->rx_active) poll_incoming(c); /* a batch received before the barrier */
    tess__comm_share_release(c);
    tess__watch_free(c->watch);
    c->watch = NULL;
    MPI_Finalize();
}

/* The call another thread is waiting for, if any. */
static int run_call(tess__comm *c)
{
    pthread_mutex_lock(&c->mu);
    tess__progress_fn *fn = c->call_pending ? c->call_fn : NULL;
    void *arg = c->call_arg;
    pthread_mutex_unlock(&c->mu);
    if (fn == NULL) return 0;
    int rc = fn(c, arg);
    pthread_mutex_lock(&c->mu);
    c->call_rc = rc;
    c->call_pending = 0;
    pthread_cond_broadcast(&c->ready_cv);
    pthread_mutex_unlock(&c->mu);
    return 1;
}

int tess__comm_call(tess_ctx *ctx, tess__progress_fn *fn, void *arg)
{
    tess__comm *c = ctx->comm;
    if (c == NULL) return TESS_ERR_UNSUPPORTED;
    pthread_mutex_lock(&c->mu);
    while (c->call_pending) pthread_cond_wait(&c->ready_cv, &c->mu);
    c->call_fn = fn;
    c->call_arg = arg;
    c->call_pending = 1;
    pthread_cond_signal(&c->doorbell);
    while (c->call_pending) pthread_cond_wait(&c->ready_cv, &c->mu);
    int rc = c->call_rc;
    pthread_mutex_unlock(&c->mu);
    return rc;
}

static int init_mpi(tess__comm *c)
{
    int provided = 0, size = 0, rank = 0;
    if (MPI_Init_thread(NULL, NULL, MPI_THREAD_FUNNELED, &provided) != MPI_SUCCESS)
        return TESS_ERR_MPI;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    c->ctx->rank = rank;
    c->ctx->nranks = size;
    c->worker_counts = calloc((size_t)size, sizeof(int));
    c->batches = calloc((size_t)size, sizeof(batch));
    /* before the allgather: no other rank can send (READY) until it completes */
    c->ctx->views = calloc((size_t)size, sizeof *c->ctx->views);
    if (c->worker_counts == NULL || c->batches == NULL || c->ctx->views == NULL)
        return TESS_ERR_NOMEM;
    int mine = c->ctx->workers;
    MPI_Allgather(&mine, 1, MPI_INT, c->worker_counts, 1, MPI_INT, MPI_COMM_WORLD);
    return size > 1 ? tess__watch_create(c->ctx, &c->watch) : TESS_OK;
}

static void *progress_main(void *arg)
{
    tess__comm *c = arg;
    int rc = init_mpi(c);
    /* after MPI's own threads are created, so that they keep their names */
    pthread_setname_np(pthread_self(), "tess-progress"); /* for top -H, perf */
    pthread_mutex_lock(&c->mu);
    c->init_rc = rc;
    c->ready = 1;
    pthread_cond_broadcast(&c->ready_cv);
    pthread_mutex_unlock(&c->mu);
    if (rc != TESS_OK) return NULL;
    for (;;) {
        int work = flush_outgoing(c);
        work |= reap_sends(c);
        work |= poll_incoming(c);
        work |= run_call(c);
        forward_signal(c);
        tess__watch_turn(c->watch);
        check_end_request(c);
        if (work) c->idle_turns = 0;
        else if (stop_requested(c)) break;
        else back_off(c);
    }
    note_cpu(c);
    drain_and_finalize(c);
    return NULL;
}

int tess__comm_start(tess_ctx *ctx)
{
    tess__comm *c = calloc(1, sizeof *c);
    if (c == NULL) return TESS_ERR_NOMEM;
    c->ctx = ctx;
    c->poll_at_rest = ctx->workers <= tess__rank_cores(); /* as the workers' idle spin */
    pthread_mutex_init(&c->mu, NULL);
    pthread_cond_init(&c->doorbell, NULL);
    pthread_cond_init(&c->ready_cv, NULL);
    ctx->comm = c;
    if (pthread_create(&c->thread, NULL, progress_main, c) != 0) {
        ctx->comm = NULL;
        free(c);
        return tess__fail(ctx, TESS_ERR_MPI, "cannot start the progress thread");
    }
    pthread_mutex_lock(&c->mu);
    while (!c->ready) pthread_cond_wait(&c->ready_cv, &c->mu);
    pthread_mutex_unlock(&c->mu);
    TESS_RETURN_IF(ctx, c->init_rc != TESS_OK, c->init_rc, "MPI initialisation failed");
    c->posted = calloc((size_t)ctx->nranks, sizeof *c->posted);
    c->dispatched = calloc((size_t)ctx->nranks, sizeof *c->dispatched);
    TESS_RETURN_IF(ctx, c->posted == NULL || c->dispatched == NULL, TESS_ERR_NOMEM,
                   "out of memory");
    return TESS_OK;
}

int tess__comm_allgather_workers(tess_ctx *ctx, int *counts)
{
    memcpy(counts, ctx->comm->worker_counts, (size_t)ctx->nranks * sizeof *counts);
    return TESS_OK;
}

void tess__comm_stop(tess_ctx *ctx)
{
    tess__comm *c = ctx->comm;
    if (c == NULL) return;
    pthread_mutex_lock(&c->mu);
    c->stop = 1;
    pthread_cond_signal(&c->doorbell);
    pthread_mutex_unlock(&c->mu);
    pthread_join(c->thread, NULL);
    for (int r = 0; c->batches != NULL && r < ctx->nranks; r++) free(c->batches[r].buf);
    TESS_FREE_ALL(c->batches, c->sends, c->worker_counts, c->posted, c->dispatched);
    pthread_mutex_destroy(&c->mu);
    pthread_cond_destroy(&c->doorbell);
    pthread_cond_destroy(&c->ready_cv);
    free(c);
    ctx->comm = NULL;
}
