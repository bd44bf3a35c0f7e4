/*
 * link.c — the messages of a rank's tiles run (link.h): sending to another
 * rank's controller through the worker mailboxes, receiving and dispatching
 * to the handler a module routed the type to, and ending the run on every
 * rank when one fails (TILE_ABORT, routed here).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "comm/comm.h"
#include "tile/link.h"

double tess__tile_now(const tess__tile_link *l) { return tess_now() - l->t0; }

int tess__tile_send(tess__tile_link *l, int dst, uint32_t type, const void *a, size_t alen,
                    const void *b, size_t blen)
{
    uint8_t small[sizeof(tess__tile_hdr) + 256];
    uint8_t *head = alen <= 256 ? small : malloc(sizeof(tess__tile_hdr) + alen);
    if (head == NULL) return TESS_ERR_NOMEM;
    tess__tile_hdr h = {.run_id = l->args.run_id, .type = type, .src = l->me};
    memcpy(head, &h, sizeof h);
    if (alen) memcpy(head + sizeof h, a, alen);
    int rc = tess__worker_send2(l->ctx, l->my_worker, l->ctx->worker_base[dst] + l->args.stage,
                                head, sizeof h + alen, b, blen);
    if (head != small) free(head);
    /* A message the controller could not send would leave a peer waiting:
     * end the run (processor threads report their failures in TILE_DONE). */
    if (rc != TESS_OK && type != TILE_ABORT && pthread_equal(pthread_self(), l->thread))
        tess__tile_abort_all(l, rc, "tiles: a message could not be sent");
    return rc;
}

void tess__tile_abort_all(tess__tile_link *l, int status, const char *msg)
{
    if (l->status != TESS_OK) return;
    l->status = status < 0 ? status : TESS_ERR_KERNEL;
    char text[400];
    int head = snprintf(text, sizeof text, "rank %d: ", l->me);
    /* The context's error is written by processor threads too: copy it under
     * its lock rather than reading the buffer in place. */
    if (msg == NULL) tess__last_error_copy(l->ctx, text + head, sizeof text - (size_t)head);
    else {
        tess_set_error(l->ctx, l->status, "%s", msg);
        snprintf(text + head, sizeof text - (size_t)head, "%s", msg);
    }
    int32_t st = l->status;
    tess__tile_pipe_fail(l->ctx, l->status); /* a pipeline's other stages stop too */
    for (int r = 0; r < l->nranks; r++)
        if (r != l->me) tess__tile_send(l, r, TILE_ABORT, &st, sizeof st, text, strlen(text) + 1);
}

/* TILE_ABORT: another rank failed; the first failure's message wins. */
static void on_abort(void *state, int src, const uint8_t *p, size_t len)
{
    tess__tile_link *l = state;
    (void)src;
    int32_t st = TESS_ERR_KERNEL;
    if (len >= sizeof st) memcpy(&st, p, sizeof st);
    const char *msg = len > sizeof st ? (const char *)p + sizeof st : "another rank failed";
    if (l->status == TESS_OK) {
        l->status = st < 0 ? st : TESS_ERR_KERNEL;
        tess_set_error(l->ctx, l->status, "%.*s", (int)(len - sizeof st), msg);
    }
}

void tess__tile_link_init(tess__tile_link *l, tess_ctx *ctx, const tess_tile_job *job,
                          const tess__tile_args *a)
{
    memset(l, 0, sizeof *l);
    l->ctx = ctx;
    l->job = job;
    l->args = *a;
    l->me = tess_rank(ctx);
    l->nranks = tess_nranks(ctx);
    l->my_worker = ctx->worker_base[l->me] + a->stage; /* a pipeline's stage: its own worker */
    l->thread = pthread_self();
    /* Rank 0's clock starts at tess_tile_run; other ranks (maybe on other
     * machines, other clocks) start theirs when their controller starts. */
    l->t0 = l->me == 0 ? a->t0 : tess_now();
    tess__tile_link_route(l, TILE_ABORT, on_abort, l);
}

void tess__tile_link_route(tess__tile_link *l, uint32_t type, tess__tile_handler *fn, void *state)
{
    if (type < TESS__TILE_MSG_TYPES) l->routes[type] = (tess__tile_route){fn, state};
}

static void dispatch(tess__tile_link *l, const tess__tile_hdr *h, const uint8_t *p, size_t len)
{
    const tess__tile_route *r = h->type < TESS__TILE_MSG_TYPES ? &l->routes[h->type] : NULL;
    if (r != NULL && r->fn != NULL) r->fn(r->state, h->src, p, len);
}

int tess__tile_link_receive(tess__tile_link *l, double timeout)
{
    int src;
    void *mem;
    uint8_t *data;
    size_t len;
    int local = l->my_worker - l->ctx->worker_base[l->me];
    if (!tess__worker_recv(l->ctx, local, timeout, &src, &mem, &data, &len)) return 0;
    tess__tile_hdr h;
    if (len >= sizeof h) {
        memcpy(&h, data, sizeof h);
        if (h.run_id == l->args.run_id && h.src >= 0 && h.src < l->nranks)
            dispatch(l, &h, data + sizeof h, len - sizeof h);
    }
    free(mem);
    return 1;
}
