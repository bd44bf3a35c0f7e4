/*
 * message.c — sending, dispatching to registered handlers, and request/reply
 * over the message layer.
 * The transport (in-process or MPI) is chosen per destination: a message to
 * this rank is handled at once by the sender's thread, one to another rank
 * goes to the progress engine.
 */
#include <stdlib.h>
#include <string.h>
#include "comm.h"

int tess__send(tess_ctx *ctx, int dst, uint32_t type, const void *a, size_t alen, const void *b,
               size_t blen)
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

static void on_reply(tess_ctx *ctx, int src, uint32_t type, const uint8_t *p, size_t len)
{
    (void)src, (void)type;
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

int tess__comm_handle(tess_ctx *ctx, uint32_t type, tess__msg_handler *fn)
{
    TESS_RETURN_IF(ctx, type == 0 || type >= TESS__MSG_TYPES || fn == NULL, TESS_ERR_INVAL,
                   "message type %u: out of range or no handler", type);
    TESS_RETURN_IF(ctx, ctx->handlers[type] != NULL, TESS_ERR_MISUSE,
                   "message type %u registered twice", type);
    ctx->handlers[type] = fn;
    return TESS_OK;
}

/* A signal on some rank: tess_interrupted() turns true here, and the
 * control thread waiting on ctl_cv looks at it at once. */
static void on_abort(tess_ctx *ctx, int src, uint32_t type, const uint8_t *p, size_t len)
{
    (void)src, (void)type, (void)p, (void)len;
    atomic_store(&ctx->interrupted, 1);
    pthread_mutex_lock(&ctx->ctl_mu);
    pthread_cond_broadcast(&ctx->ctl_cv);
    pthread_mutex_unlock(&ctx->ctl_mu);
}

int tess__comm_handlers_init(tess_ctx *ctx)
{
    int rc = tess__comm_handle(ctx, TESS_MSG_ABORT, on_abort);
    if (rc == TESS_OK) rc = tess__comm_handle(ctx, TESS_MSG_REPLY, on_reply);
    if (rc == TESS_OK) rc = tess__comm_handle(ctx, TESS_MSG_WORKER, tess__inbox_on_message);
    return rc;
}

void tess__dispatch(tess_ctx *ctx, int src, uint32_t type, const uint8_t *p, size_t len)
{
    tess__msg_handler *fn = type < TESS__MSG_TYPES ? ctx->handlers[type] : NULL;
    if (fn != NULL) fn(ctx, src, type, p, len);
    else tess__warn(ctx, "dropped a message of unknown type %u from rank %d", type, src);
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

int tess__reply(tess_ctx *ctx, int src, const tess__req_hdr *req, int status, const void *payload,
                size_t len)
{
    tess__reply_hdr h = {.slot = req->slot, .status = status, .req_id = req->req_id};
    return tess__send(ctx, src, TESS_MSG_REPLY, &h, sizeof h, payload, len);
}
