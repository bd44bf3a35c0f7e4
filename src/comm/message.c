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

size_t tess__parts_len(const tess__part *parts, int nparts)
{
    size_t len = 0;
    for (int i = 0; i < nparts; i++) len += parts[i].len;
    return len;
}

void tess__parts_gather(void *dst, const tess__part *parts, int nparts)
{
    uint8_t *at = dst;
    for (int i = 0; i < nparts; i++) {
        if (parts[i].len) memcpy(at, parts[i].data, parts[i].len);
        at += parts[i].len;
    }
}

int tess__sendv(tess_ctx *ctx, int dst, uint32_t type, const tess__part *parts, int nparts)
{
    if (dst != ctx->rank) return tess__comm_post(ctx, dst, type, parts, nparts);
    size_t len = tess__parts_len(parts, nparts);
    for (int i = 0; i < nparts; i++)
        if (parts[i].len == len) { /* to this rank in one piece: no copy */
            tess__dispatch(ctx, dst, type, parts[i].data, len);
            return TESS_OK;
        }
    if (len == 0) {
        tess__dispatch(ctx, dst, type, NULL, 0);
        return TESS_OK;
    }
    uint8_t *joined = malloc(len);
    if (joined == NULL) return TESS_ERR_NOMEM;
    tess__parts_gather(joined, parts, nparts);
    tess__dispatch(ctx, dst, type, joined, len);
    free(joined);
    return TESS_OK;
}

int tess__send(tess_ctx *ctx, int dst, uint32_t type, const void *a, size_t alen, const void *b,
               size_t blen)
{
    tess__part parts[2] = {{a, alen}, {b, blen}};
    return tess__sendv(ctx, dst, type, parts, 2);
}

int tess__send_all(tess_ctx *ctx, uint32_t type, const void *a, size_t alen)
{
    for (int r = 0; r < ctx->nranks; r++) {
        int rc = tess__send(ctx, r, type, a, alen, NULL, 0);
        if (rc != TESS_OK) return rc;
    }
    return TESS_OK;
}

/* Copy a reply's payload into the waiter's sink when it fits there. */
static int sink_payload(const tess__reply_sink *sink, const uint8_t *p, size_t len)
{
    if (sink == NULL || len < sink->head_len || len - sink->head_len > sink->body_cap) return 0;
    if (sink->head_len) memcpy(sink->head, p, sink->head_len);
    if (len > sink->head_len) memcpy(sink->body, p + sink->head_len, len - sink->head_len);
    return 1;
}

static void on_reply(tess_ctx *ctx, int src, uint32_t type, const uint8_t *p, size_t len)
{
    (void)src, (void)type;
    tess__reply_hdr h;
    if (tess__msg_head(&h, sizeof h, p, len) != 0) return;
    if (h.slot > (uint32_t)ctx->workers) return;
    tess__slot *s = &ctx->slots[h.slot];
    const uint8_t *payload = p + sizeof h;
    size_t plen = len - sizeof h;
    pthread_mutex_lock(&s->mu);
    if (s->req_id == h.req_id && !s->replied) {
        void *copy = NULL;
        int sunk = sink_payload(s->sink, payload, plen);
        if (!sunk && (copy = malloc(plen + 1)) != NULL) memcpy(copy, payload, plen);
        s->reply = copy;
        s->reply_len = plen;
        s->reply_status = sunk || copy != NULL ? h.status : TESS_ERR_NOMEM;
        s->replied = 1;
        pthread_cond_signal(&s->cv);
    }
    pthread_mutex_unlock(&s->mu);
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

int tess__request_into(tess_ctx *ctx, int dst, uint32_t type, const void *body, size_t blen,
                       const tess__reply_sink *sink, void **reply_out, size_t *reply_len_out)
{
    tess__slot *s = tess__current_slot(ctx);
    pthread_mutex_lock(&s->mu);
    free(s->reply);
    s->reply = NULL;
    s->sink = sink;
    s->replied = 0;
    tess__req_hdr h = {.slot = (uint32_t)s->index, .req_id = ++s->req_id};
    pthread_mutex_unlock(&s->mu);
    atomic_fetch_add(&ctx->requests_waiting, 1);
    int rc = tess__send(ctx, dst, type, &h, sizeof h, body, blen);
    if (rc == TESS_OK) rc = wait_reply(ctx, s);
    atomic_fetch_sub(&ctx->requests_waiting, 1);
    pthread_mutex_lock(&s->mu);
    if (rc == TESS_OK && reply_out != NULL) {
        *reply_out = s->reply;
        *reply_len_out = s->reply_len;
        s->reply = NULL;
    }
    free(s->reply);
    s->reply = NULL;
    s->sink = NULL;
    s->replied = 1; /* a late reply to an abandoned request is dropped */
    pthread_mutex_unlock(&s->mu);
    return rc;
}

int tess__request(tess_ctx *ctx, int dst, uint32_t type, const void *body, size_t blen,
                  void **reply_out, size_t *reply_len_out)
{
    return tess__request_into(ctx, dst, type, body, blen, NULL, reply_out, reply_len_out);
}

int tess__reply(tess_ctx *ctx, int src, const tess__req_hdr *req, int status, const void *payload,
                size_t len)
{
    tess__part part = {payload, len};
    return tess__replyv(ctx, src, req, status, &part, 1);
}

int tess__replyv(tess_ctx *ctx, int src, const tess__req_hdr *req, int status,
                 const tess__part *parts, int nparts)
{
    tess__reply_hdr h = {.slot = req->slot, .status = status, .req_id = req->req_id};
    tess__part all[8] = {{&h, sizeof h}};
    if (nparts < 0 || nparts > 7) return TESS_ERR_INVAL;
    for (int i = 0; i < nparts; i++) all[i + 1] = parts[i];
    return tess__sendv(ctx, src, TESS_MSG_REPLY, all, nparts + 1);
}
