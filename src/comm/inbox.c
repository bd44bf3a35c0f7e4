/*
 * inbox.c — worker mailboxes.  Within a rank a message is handed to the
 * destination's inbox; across ranks it travels as a TESS_MSG_WORKER message
 * and the receiving progress engine hands it over.  Each inbox is a FIFO, so
 * the order of every (src worker, dst worker) link is kept.  Only the
 * addressed worker is woken.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include "comm.h"

typedef struct inbox_msg {
    struct inbox_msg *next;
    int src;
    size_t len, cap; /* cap: bytes of data[] allocated (a block may be reused) */
    uint8_t data[];
} inbox_msg;

struct tess__inbox {
    pthread_mutex_t mu;
    pthread_cond_t cv;
    inbox_msg *head, *tail;
};

typedef struct worker_hdr {
    int32_t src, dst;
} worker_hdr;

int tess__inboxes_create(tess_ctx *ctx)
{
    ctx->inboxes = calloc((size_t)ctx->workers, sizeof *ctx->inboxes);
    if (ctx->inboxes == NULL) return TESS_ERR_NOMEM;
    for (int i = 0; i < ctx->workers; i++) {
        pthread_mutex_init(&ctx->inboxes[i].mu, NULL);
        pthread_cond_init(&ctx->inboxes[i].cv, NULL);
    }
    return TESS_OK;
}

void tess__inboxes_destroy(tess_ctx *ctx)
{
    if (ctx->inboxes == NULL) return;
    for (int i = 0; i < ctx->workers; i++) {
        tess__inbox *b = &ctx->inboxes[i];
        for (inbox_msg *m = b->head, *next; m != NULL; m = next) {
            next = m->next;
            free(m);
        }
        pthread_mutex_destroy(&b->mu);
        pthread_cond_destroy(&b->cv);
    }
    free(ctx->inboxes);
    ctx->inboxes = NULL;
}

static int rank_of_worker(const tess_ctx *ctx, int w)
{
    int lo = 0, hi = ctx->nranks - 1;
    while (lo < hi) {
        int mid = (lo + hi + 1) / 2;
        if (ctx->worker_base[mid] <= w) lo = mid;
        else hi = mid - 1;
    }
    return lo;
}

void *tess__worker_block_new(size_t cap)
{
    if (cap > SIZE_MAX - sizeof(inbox_msg)) return NULL;
    inbox_msg *m = malloc(sizeof *m + cap);
    if (m != NULL) m->cap = cap;
    return m;
}

uint8_t *tess__worker_block_data(void *mem) { return ((inbox_msg *)mem)->data; }

size_t tess__worker_block_cap(const void *mem) { return ((const inbox_msg *)mem)->cap; }

/* Queue the block m (its len set) at local worker local_dst's inbox. */
static void inbox_link(tess_ctx *ctx, int src, int local_dst, inbox_msg *m)
{
    m->next = NULL;
    m->src = src;
    tess__inbox *b = &ctx->inboxes[local_dst];
    pthread_mutex_lock(&b->mu);
    if (b->tail) b->tail->next = m;
    else __atomic_store_n(&b->head, m, __ATOMIC_RELEASE); /* a poll may look without the lock */
    b->tail = m;
    pthread_cond_signal(&b->cv);
    pthread_mutex_unlock(&b->mu);
}

/* The message is head (hlen bytes) followed by data (len bytes). */
static int inbox_push(tess_ctx *ctx, int src, int local_dst, const void *head, size_t hlen,
                      const void *data, size_t len)
{
    inbox_msg *m = tess__worker_block_new(hlen + len);
    if (m == NULL) return TESS_ERR_NOMEM;
    m->len = hlen + len;
    if (hlen) memcpy(m->data, head, hlen);
    if (len) memcpy(m->data + hlen, data, len);
    inbox_link(ctx, src, local_dst, m);
    return TESS_OK;
}

int tess__worker_send(tess_ctx *ctx, int src_worker, int dst_worker, const void *data, size_t len)
{
    if (dst_worker < 0 || dst_worker >= ctx->workers_total) return TESS_ERR_INVAL;
    int r = rank_of_worker(ctx, dst_worker);
    if (r == ctx->rank)
        return inbox_push(ctx, src_worker, dst_worker - ctx->worker_base[r], NULL, 0, data, len);
    worker_hdr h = {.src = src_worker, .dst = dst_worker};
    return tess__send(ctx, r, TESS_MSG_WORKER, &h, sizeof h, data, len);
}

int tess__worker_send2(tess_ctx *ctx, int src_worker, int dst_worker, const void *head, size_t hlen,
                       const void *data, size_t len)
{
    if (dst_worker < 0 || dst_worker >= ctx->workers_total) return TESS_ERR_INVAL;
    int r = rank_of_worker(ctx, dst_worker);
    if (r == ctx->rank)
        return inbox_push(ctx, src_worker, dst_worker - ctx->worker_base[r], head, hlen, data, len);
    uint8_t *m = malloc(hlen + len + 1); /* another rank: one payload for the engine */
    if (m == NULL) return TESS_ERR_NOMEM;
    if (hlen) memcpy(m, head, hlen);
    if (len) memcpy(m + hlen, data, len);
    int rc = tess__worker_send(ctx, src_worker, dst_worker, m, hlen + len);
    free(m);
    return rc;
}

int tess__worker_send_block(tess_ctx *ctx, int src_worker, int dst_worker, void **mem, size_t len)
{
    if (dst_worker < 0 || dst_worker >= ctx->workers_total) return TESS_ERR_INVAL;
    inbox_msg *m = *mem;
    if (len > m->cap) return TESS_ERR_INVAL;
    int r = rank_of_worker(ctx, dst_worker);
    if (r != ctx->rank) return tess__worker_send(ctx, src_worker, dst_worker, m->data, len);
    m->len = len;
    inbox_link(ctx, src_worker, dst_worker - ctx->worker_base[r], m);
    *mem = NULL;
    return TESS_OK;
}

void tess__inbox_on_message(tess_ctx *ctx, int src, uint32_t type, const uint8_t *p, size_t len)
{
    (void)src, (void)type;
    worker_hdr h;
    if (tess__msg_head(&h, sizeof h, p, len) != 0) return;
    int local = h.dst - ctx->worker_base[ctx->rank];
    if (local < 0 || local >= ctx->workers) return;
    inbox_push(ctx, h.src, local, NULL, 0, p + sizeof h, len - sizeof h);
}

int tess__worker_recv(tess_ctx *ctx, int w, double timeout, int *src_out, void **mem_out,
                      uint8_t **data_out, size_t *len_out)
{
    tess__inbox *b = &ctx->inboxes[w];
    /* A poll of an empty inbox takes no lock: the tick links poll several
     * times a tick, and the mutex's line is usually in the last sender's
     * cache.  A message pushed meanwhile is seen by the next poll. */
    if (timeout == 0 && __atomic_load_n(&b->head, __ATOMIC_ACQUIRE) == NULL) return 0;
    struct timespec deadline;
    if (timeout > 0) tess__deadline_after(&deadline, timeout);
    pthread_mutex_lock(&b->mu);
    while (b->head == NULL) {
        if (timeout == 0) break; /* a poll: no deadline, no futex call */
        if (timeout < 0) pthread_cond_wait(&b->cv, &b->mu);
        else if (pthread_cond_timedwait(&b->cv, &b->mu, &deadline) != 0) break;
    }
    inbox_msg *m = b->head;
    if (m != NULL) {
        __atomic_store_n(&b->head, m->next, __ATOMIC_RELAXED);
        if (m->next == NULL) b->tail = NULL;
    }
    pthread_mutex_unlock(&b->mu);
    if (m == NULL) return 0;
    /* Hand over the message's own block, the payload where it lies: no
     * second allocation, no copy per message. */
    *src_out = m->src;
    *mem_out = m;
    *data_out = m->data;
    *len_out = m->len;
    return 1;
}
