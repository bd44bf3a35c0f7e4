/*
 * link.c — messages between tick processes, through the worker mailboxes of
 * the message layer, delayed by the latency model (DESIGN §1, §6).
 *
 * The sender computes each message's delivery time from the model (per link,
 * deterministic in (seed, src, dst, sequence), never reordering a link); the
 * receiver holds a message until that time.  Held messages are kept sorted by
 * (delivery time, arrival), so a link's order is kept: its delivery times
 * never decrease and its messages arrive in order.  Clocks are µs on
 * CLOCK_MONOTONIC from a common origin, which is one clock for every process
 * of one machine (the experiments); across machines the origin differs and
 * the delays are only approximate.  With --clock virtual each process has
 * its own simulated clock instead (vclock.c): waits and modelled compute
 * move it, and the wait for a message is a wait for its turn there.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include "comm/comm.h"
#include "tick/tick_internal.h"

double tess__tick_now_us(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec * 1e6 + (double)ts.tv_nsec / 1e3;
}

double tess__tick_link_now(const tick_link *l)
{
    return l->vc != NULL ? l->vnow : tess__tick_now_us() - l->t0_us;
}

int tess__tick_link_open(tick_link *l, tess_ctx *ctx, int me, const tick_args *a)
{
    memset(l, 0, sizeof *l);
    l->ctx = ctx;
    l->me = me;
    l->n = ctx->workers_total;
    l->run_id = a->run_id;
    l->t0_us = a->t0_us;
    if (a->virtual_clock) l->vc = ctx->tick->vclock;
    /* Spin only where it steals no core from another worker: real compute
     * (no emulated step cost, which oversubscribes on purpose) and no more
     * workers on this rank than cores. */
    l->spin_us = a->step_cost_us <= 0 && ctx->workers <= tess__usable_cores() ? 50 : 0;
    if (a->jitter.kind != TESS__LATENCY_NONE) {
        l->model = tess__latency_new_sender(&a->jitter, a->seed, l->n, me);
        if (l->model == NULL) return TESS_ERR_NOMEM;
    }
    return TESS_OK;
}

void tess__tick_link_close(tick_link *l)
{
    if (l->vc != NULL) tess__tick_vclock_leave(l->vc, l->me);
    for (int i = 0; i < l->nheld; i++) free(l->held[i].mem);
    for (int i = 0; i < l->nspare; i++) free(l->spare[i]);
    free(l->held);
    tess__latency_free(l->model);
    memset(l, 0, sizeof *l);
}

void tess__tick_link_release(tick_link *l, void *mem)
{
    if (mem == NULL) return;
    size_t cap = tess__worker_block_cap(mem);
    if (l->nspare == TICK_LINK_SPARES || cap > TICK_LINK_SPARE_BYTES) {
        free(mem);
        return;
    }
    l->spare_cap[l->nspare] = cap;
    l->spare[l->nspare++] = mem;
}

/*
 * A block for a message of `need` bytes: the newest spare that holds it,
 * else a new one rounded up to a power of two, so that blocks of messages
 * whose sizes vary a little fit each other.  Blocks go round between the
 * processes of a rank: a malloc and a free per message, from many threads,
 * were a tenth of fish's runtime CPU at the paper's scale (2 KB messages,
 * past glibc's per-thread cache).  Larger messages are few and malloc
 * recycles them well; pooled, they cost more in fresh pages than they save
 * (Jacobi's 11 KB halos: 5% more runtime CPU in a 100-tick run).
 */
static void *take_block(tick_link *l, size_t need)
{
    if (need > TICK_LINK_SPARE_BYTES) return tess__worker_block_new(need);
    for (int i = l->nspare - 1; i >= 0; i--) {
        if (l->spare_cap[i] >= need) {
            void *mem = l->spare[i];
            l->nspare--;
            l->spare[i] = l->spare[l->nspare];
            l->spare_cap[i] = l->spare_cap[l->nspare];
            return mem;
        }
    }
    size_t cap = 256;
    while (cap < need) cap *= 2;
    return tess__worker_block_new(cap);
}

int tess__tick_link_send(tick_link *l, int dst, int type, uint32_t epoch, int64_t tick,
                         const void *payload, size_t len)
{
    tick_hdr h = {.run_id = l->run_id, .tick = tick, .type = type, .src = l->me, .epoch = epoch};
    /* Checkpoint traffic is outside the algorithms: not delayed, not counted. */
    int timed = type != TICK_FINAL && type != TICK_ABORT && type != TICK_START && type != TICK_GO &&
                type != TICK_SAVE && type != TICK_LOAD;
    h.deliver_at = 0;
    if (timed && l->model != NULL)
        h.deliver_at =
            tess__latency_deliver_at(l->model, l->me, dst, tess__tick_link_now(l), sizeof h + len);
    if (l->vc != NULL && h.deliver_at < l->vnow + TICK_VCLOCK_MIN_LATENCY_US)
        h.deliver_at = l->vnow + TICK_VCLOCK_MIN_LATENCY_US; /* control messages too */
    if (len > SIZE_MAX - sizeof h) return TESS_ERR_NOMEM;
    void *mem = take_block(l, sizeof h + len);
    if (mem == NULL) return TESS_ERR_NOMEM;
    uint8_t *d = tess__worker_block_data(mem);
    memcpy(d, &h, sizeof h);
    if (len) memcpy(d + sizeof h, payload, len);
    int rc = tess__worker_send_block(l->ctx, l->me, dst, &mem, sizeof h + len);
    tess__tick_link_release(l, mem); /* NULL when a process of this rank took it */
    if (l->vc != NULL && rc == TESS_OK) tess__tick_vclock_sent(l->vc, dst, h.deliver_at);
    if (timed) {
        l->messages++;
        l->bytes += sizeof h + len;
    }
    return rc;
}

/* Keep the message of len bytes at data (in the block mem, now the link's). */
static int hold(tick_link *l, void *mem, uint8_t *data, size_t len)
{
    tick_hdr h;
    if (len < sizeof h) {
        free(mem);
        return TESS_OK;
    }
    memcpy(&h, data, sizeof h);
    if (h.run_id != l->run_id) { /* left over from an earlier, failed run */
        free(mem);
        return TESS_OK;
    }
    if (tess__grow_items(&l->held, &l->capheld, l->nheld, sizeof *l->held, 64) != TESS_OK) {
        free(mem);
        return TESS_ERR_NOMEM;
    }
    tick_msg m = {.h = h, .arrival = l->arrivals++, .len = len - sizeof h, .mem = mem};
    m.payload = data + sizeof h;
    int i = l->nheld++;
    while (i > 0 && l->held[i - 1].h.deliver_at > h.deliver_at) { /* stable: ties stay behind */
        l->held[i] = l->held[i - 1];
        i--;
    }
    l->held[i] = m;
    return TESS_OK;
}

/* Move everything waiting in the mailbox into the held list. */
static int drain(tick_link *l, double timeout_s)
{
    int local = l->me - l->ctx->worker_base[l->ctx->rank];
    for (;;) {
        int src;
        void *mem;
        uint8_t *data;
        size_t len;
        int got = tess__worker_recv(l->ctx, local, timeout_s, &src, &mem, &data, &len);
        if (got < 0) return got;
        if (got == 0) return TESS_OK;
        int rc = hold(l, mem, data, len);
        if (rc != TESS_OK) return rc;
        timeout_s = 0;
    }
}

int tess__tick_link_poll(tick_link *l, tick_msg *out)
{
    int rc = drain(l, 0);
    if (rc != TESS_OK) return rc;
    if (l->nheld == 0 || l->held[0].h.deliver_at > tess__tick_link_now(l)) return 0;
    *out = l->held[0];
    memmove(l->held, l->held + 1, (size_t)(l->nheld - 1) * sizeof *l->held);
    l->nheld--;
    return 1;
}

/* Sleep to an absolute time on CLOCK_MONOTONIC (µs since t0). */
static void sleep_until(const tick_link *l, double at_us)
{
    double abs_us = at_us + l->t0_us;
    struct timespec ts = {.tv_sec = (time_t)(abs_us / 1e6)};
    ts.tv_nsec = (long)((abs_us - (double)ts.tv_sec * 1e6) * 1e3);
    if (ts.tv_nsec >= 1000000000L) ts.tv_nsec = 999999999L;
    if (ts.tv_nsec < 0) ts.tv_nsec = 0;
    while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, NULL) != 0) {
    }
}

/*
 * Poll the mailbox for up to spin_us before blocking.  A message handed to a
 * thread that is not blocked costs the sender no futex wake-up and the
 * receiver no sleep: with real compute on a machine that is not
 * oversubscribed, neighbours finish their ticks within microseconds of each
 * other.  1 when a message arrived.
 */
static int spin(tick_link *l, double until)
{
    double stop = tess__tick_link_now(l) + l->spin_us;
    if (stop > until) stop = until;
    int before = l->nheld;
    do {
        if (drain(l, 0) != TESS_OK) return 0;
        if (l->nheld > before) return 1;
    } while (tess__tick_link_now(l) < stop);
    return 0;
}

/* Virtual clock: sleep in simulated time until the first held message is
 * due or max_wait_us passed, or a message sent meanwhile is due earlier. */
static int virtual_wait(tick_link *l, double max_wait_us)
{
    int rc = drain(l, 0);
    if (rc != TESS_OK) return rc;
    double until = l->vnow + max_wait_us;
    if (l->nheld > 0 && l->held[0].h.deliver_at < until) until = l->held[0].h.deliver_at;
    double woke = tess__tick_vclock_wait(l->vc, l->me, l->vnow, until);
    l->wait_us += woke - l->vnow;
    l->vnow = woke;
    return TESS_OK;
}

void tess__tick_link_compute_until(tick_link *l, double at_us)
{
    if (l->vc != NULL) {
        if (at_us > l->vnow) l->vnow = at_us;
        tess__tick_vclock_advance(l->vc, l->me, l->vnow);
    } else {
        sleep_until(l, at_us);
    }
}

int tess__tick_link_wait(tick_link *l, double max_wait_us)
{
    if (l->vc != NULL) return virtual_wait(l, max_wait_us);
    double start = tess__tick_link_now(l);
    double until = start + max_wait_us;
    if (l->nheld > 0 && l->held[0].h.deliver_at < until) until = l->held[0].h.deliver_at;
    int rc = TESS_OK;
    if (until > start) {
        /* A held message is due at `until`; a new one may be due earlier
         * (it wakes the mailbox).  Short waits sleep precisely instead. */
        if (l->nheld > 0 && until - start < 200 && until == l->held[0].h.deliver_at)
            sleep_until(l, until);
        else if (l->spin_us > 0 && spin(l, until))
            rc = TESS_OK; /* a message came while spinning: no futex on either side */
        else rc = drain(l, (until - start) / 1e6);
    }
    l->wait_us += tess__tick_link_now(l) - start;
    return rc;
}
