/*
 * crawl_term.c — when the long-running crawl is over: distributed
 * termination detection through the crawl_term table (docs/crawl.md, "When
 * the crawl is over").
 *
 * Key p (p < partitions, so partition p) holds instance p's status
 * {gen, ack, idle}; key `partitions` (partition 0) holds {probe, done, 0}.
 * An instance publishes every status with a put and a flush, so what a
 * reader gets is what the instance last said:
 *   - busy(gen): before it does anything after finding work; gen grows by
 *     one at every such activation and never repeats (a restored instance
 *     continues from the gen in the table);
 *   - idle(gen, ack = P): after flushing all its table writes, it read probe
 *     P, then scanned its partition and found nothing to fetch and no
 *     transfer under way.  An idle instance writes nothing but its status.
 * Instance 0 detects the end, while it is idle itself: it reads every status
 * (S1); if all are idle it remembers their gens and publishes probe P+1
 * (time T).  When a later read shows every instance idle with the same gen
 * and ack >= P+1, the crawl is over: each was idle from its S1 read to its
 * last read, so at T every write ever issued had been applied and nobody
 * wrote after; and each scanned its partition after T and found nothing.
 * Instance 0 then publishes done, and the others stop when they read it.
 */
#include <stdlib.h>
#include <string.h>

#include "crawl_app.h"

enum { TERM_GEN, TERM_ACK, TERM_IDLE };
enum { TERM_PROBE, TERM_DONE };

static int term_get(const crawl_term *t, uint64_t key, int64_t v[3])
{
    size_t len = 0;
    int rc = tess_table_get(t->table, &key, v, 3 * sizeof *v, &len);
    if (rc == TESS_ERR_NOTFOUND) {
        memset(v, 0, 3 * sizeof *v);
        return 0;
    }
    return rc;
}

/* Put and flush: the status is visible once this returns. */
static int term_put(const crawl_term *t, uint64_t key, const int64_t v[3])
{
    int rc = tess_table_put(t->table, &key, v, 3 * sizeof *v);
    return rc == 0 ? tess_table_flush(t->table) : rc;
}

static int publish(crawl_term *t)
{
    int64_t v[3] = {t->gen, t->ack, t->idle};
    return term_put(t, (uint64_t)t->part, v);
}

int crawl_term_start(crawl_term *t, tess_table *table, int part, int partitions)
{
    memset(t, 0, sizeof *t);
    t->table = table, t->part = part, t->partitions = partitions;
    int64_t v[3];
    int rc = term_get(t, (uint64_t)part, v);
    if (rc == 0 && part == 0) {
        int64_t p[3];
        rc = term_get(t, (uint64_t)partitions, p);
        t->probe = p[TERM_PROBE];
        t->gens = calloc((size_t)partitions, sizeof *t->gens);
        t->cur = calloc(3 * (size_t)partitions, sizeof *t->cur);
        if (rc == 0 && (t->gens == NULL || t->cur == NULL)) rc = TESS_ERR_NOMEM;
    }
    t->gen = v[TERM_GEN] + 1; /* above any gen an earlier life published */
    return rc == 0 ? publish(t) : rc;
}

int crawl_term_read_probe(crawl_term *t, int *done)
{
    int64_t v[3];
    int rc = term_get(t, (uint64_t)t->partitions, v);
    t->probe_seen = v[TERM_PROBE];
    *done = rc == 0 && v[TERM_DONE] != 0;
    return rc;
}

int crawl_term_busy(crawl_term *t)
{
    if (!t->idle) return 0;
    t->idle = 0;
    t->gen++;
    return publish(t);
}

int crawl_term_idle(crawl_term *t)
{
    if (t->idle && t->ack == t->probe_seen) return 0;
    t->idle = 1;
    t->ack = t->probe_seen;
    return publish(t);
}

/* Instance 0, idle: one step of the detection; *done set when it is over. */
int crawl_term_detect(crawl_term *t, int *done)
{
    *done = 0;
    int all_idle = 1, same = 1, acked = 1, rc = 0;
    for (int p = 0; rc == 0 && p < t->partitions; p++) {
        int64_t *v = &t->cur[3 * p];
        rc = term_get(t, (uint64_t)p, v);
        all_idle &= v[TERM_IDLE] != 0;
        same &= v[TERM_GEN] == t->gens[p];
        acked &= v[TERM_ACK] >= t->probe;
    }
    if (rc != 0 || !all_idle) {
        t->phase = 0;
        return rc;
    }
    if (t->phase == 1 && same && acked) {
        int64_t v[3] = {t->probe, 1, 0};
        *done = 1;
        return term_put(t, (uint64_t)t->partitions, v);
    }
    if (t->phase == 1 && same) return 0; /* waiting for the acks */
    /* All idle: this read is S1 (someone who worked since an earlier S1
     * makes it a new one).  Remember the gens and publish a new probe (T). */
    for (int p = 0; p < t->partitions; p++) t->gens[p] = t->cur[3 * p + TERM_GEN];
    int64_t v[3] = {++t->probe, 0, 0};
    t->phase = 1;
    return term_put(t, (uint64_t)t->partitions, v);
}

void crawl_term_free(crawl_term *t)
{
    free(t->gens);
    free(t->cur);
    t->gens = t->cur = NULL;
}
