/*
 * message.c — sending, dispatching, and request/reply over the message layer.
 * The transport (in-process or MPI) is chosen per destination: a message to
 * this rank is handled at once by the sender's thread, one to another rank
 * goes to the progress engine.
 */
#include <stdlib.h>
#include <string.h>
#include "comm.h"

int tess__send(tess_ctx *ctx, int dst, uint32_t type, const void *a, size_t alen,
               const void *b, size_t blen)
{
    if (dst != ctx->rank) return tess__comm_post(ctx, dst, type, a, alen, b, blen);
    if (blen == 0 || alen == 0) {
        tess__dispatch(ctx, dst, type, alen ? a : b, alen ? alen : blen);
        return TESS_OK;
    }
    uint8_t *joined = malloc(alen + blen);
    if (joined == NULL) return TESS_ERR_NOMEM;
    memcpy(joined, a, alen);
    memcpy(joined + alen, b, blen);
    tess__dispatch(ctx, dst, type, joined, alen + blen);
    free(joined);
    return TESS_OK;
}

int tess__send_all(tess_ctx *ctx, uint32_t type, const void *a, size_t alen)
{
    for (int r = 0; r < ctx->nranks; r++) {
        int rc = tess__send(ctx, r, type, a, alen, NULL, 0);
        if (rc != TESS_OK) return rc;
    }
    return TESS_OK;
}

static void on_reply(tess_ctx *ctx, const uint8_t *p, size_t len)
{
    tess__reply_hdr h;
    if (len < sizeof h) return;
    memcpy(&h, p, sizeof h);
    if (h.slot > (uint32_t)ctx->workers) return;
    tess__slot *s = &ctx->slots[h.slot];
    void *copy = malloc(len - sizeof h + 1);
    pthread_mutex_lock(&s->mu);
    if (s->req_id == h.req_id && !s->replied) {
        if (copy != NULL) memcpy(copy, p + sizeof h, len - sizeof h);
        s->reply = copy;
        s->reply_len = len - sizeof h;
        s->reply_status = copy != NULL ? h.status : TESS_ERR_NOMEM;
        s->replied = 1;
        copy = NULL;
        pthread_cond_signal(&s->cv);
    }
    pthread_mutex_unlock(&s->mu);
    free(copy);
}

void tess__dispatch(tess_ctx *ctx, int src, uint32_t type, const uint8_t *p, size_t len)
{
    switch (type) {
    case TESS_MSG_RUN: tess__sched_on_run(ctx, p, len); break;
    case TESS_MSG_DONE: tess__sched_on_done(ctx, src, p, len); break;
    case TESS_MSG_SHUTDOWN: tess__sched_on_shutdown(ctx, p, len); break;
    case TESS_MSG_ABORT: tess__sched_on_abort(ctx); break;
    case TESS_MSG_REPLY: on_reply(ctx, p, len); break;
    case TESS_MSG_WORKER: tess__inbox_on_message(ctx, p, len); break;
    case TESS_MSG_READY: tess__sched_on_ready(ctx, src, p, len); break;
    case TESS_MSG_COUNT_REQ: tess__sched_on_count_req(ctx, src, p, len); break;
    case TESS_MSG_CKPT_MARK:
    case TESS_MSG_CKPT_FILES:
    case TESS_MSG_CKPT_RESTORE:
    case TESS_MSG_CKPT_RESTORED:
    case TESS_MSG_CKPT_HURRY: tess__ckpt_on_message(ctx, src, type, p, len); break;
    case TESS_MSG_STEAL_QUERY:
    case TESS_MSG_STEAL_TAKE:
    case TESS_MSG_MIG_DONE:
    case TESS_MSG_STEAL_COVERED: tess__steal_on_message(ctx, src, type, p, len); break;
    case TESS_MSG_MIG_BEGIN:
    case TESS_MSG_MIG_ANNOUNCE:
    case TESS_MSG_MIG_MARKER:
    case TESS_MSG_MIG_DATA:
    case TESS_MSG_MIG_FWD: tess__migrate_on_message(ctx, src, type, p, len); break;
    default: tess__table_deliver(ctx, src, type, p, len); break;
    }
}

/* Wait for this slot's reply; gives up when the run is interrupted. */
static int wait_reply(tess_ctx *ctx, tess__slot *s)
{
    pthread_mutex_lock(&s->mu);
    while (!s->replied && !tess_interrupted(ctx)) {
        struct timespec ts;
        tess__deadline_after(&ts, 0.1);
        pthread_cond_timedwait(&s->cv, &s->mu, &ts);
    }
    int rc = s->replied ? s->reply_status : TESS_ERR_INTERRUPTED;
    pthread_mutex_unlock(&s->mu);
    return rc;
}

int tess__request(tess_ctx *ctx, int dst, uint32_t type, const void *body, size_t blen,
                  void **reply_out, size_t *reply_len_out)
{
    tess__slot *s = tess__current_slot(ctx);
    pthread_mutex_lock(&s->mu);
    free(s->reply);
    s->reply = NULL;
    s->replied = 0;
    tess__req_hdr h = {.slot = (uint32_t)s->index, .req_id = ++s->req_id};
    pthread_mutex_unlock(&s->mu);
    int rc = tess__send(ctx, dst, type, &h, sizeof h, body, blen);
    if (rc == TESS_OK) rc = wait_reply(ctx, s);
    pthread_mutex_lock(&s->mu);
    if (rc == TESS_OK && reply_out != NULL) {
        *reply_out = s->reply;
        *reply_len_out = s->reply_len;
        s->reply = NULL;
    }
    free(s->reply);
    s->reply = NULL;
    s->replied = 1; /* a late reply to an abandoned request is dropped */
    pthread_mutex_unlock(&s->mu);
    return rc;
}

int tess__reply(tess_ctx *ctx, int src, const tess__req_hdr *req, int status,
                const void *payload, size_t len)
{
    tess__reply_hdr h = {.slot = req->slot, .status = status, .req_id = req->req_id};
    return tess__send(ctx, src, TESS_MSG_REPLY, &h, sizeof h, payload, len);
}
