/*
 * share.c — requests for memory shared by the ranks of one node, served at
 * tess_main() in one collective (the engine's part is mpi_share.c).
 *
 * Layers ask while tables and jobs are made, before tess_main(): every rank
 * makes the same requests in the same order, each for the bytes it will
 * write.  One collective for all of them keeps the ranks in step even when
 * their requests differ (a rank that made other tables meets the others
 * here, and the setup check after it reports the mismatch).
 */
#include <stdlib.h>
#include "comm.h"

typedef struct tess__share_req {
    size_t bytes;
    tess__share_attach_fn *attach;
    void *arg;
} tess__share_req;

int tess__comm_share_request(tess_ctx *ctx, size_t bytes, tess__share_attach_fn *attach, void *arg)
{
    TESS_RETURN_IF(ctx, ctx->started, TESS_ERR_MISUSE,
                   "node-shared memory asked for after tess_main() started");
    tess__share_req *grown =
        realloc(ctx->share_reqs, (size_t)(ctx->nshare_reqs + 1) * sizeof *grown);
    TESS_RETURN_IF(ctx, grown == NULL, TESS_ERR_NOMEM, "out of memory");
    grown[ctx->nshare_reqs++] = (tess__share_req){bytes, attach, arg};
    ctx->share_reqs = grown;
    return TESS_OK;
}

static int serve_all(tess_ctx *ctx, size_t *sizes, uint8_t **ptrs)
{
    int n = ctx->nshare_reqs;
    for (int i = 0; i < n; i++) sizes[i] = ctx->share_reqs[i].bytes;
    int rc = tess__comm_share_alloc(ctx, n, sizes, ptrs);
    for (int i = 0; rc == TESS_OK && i < n; i++)
        ctx->share_reqs[i].attach(ctx, ptrs + (size_t)i * (size_t)ctx->nranks,
                                  ctx->share_reqs[i].arg);
    return rc == TESS_ERR_UNSUPPORTED ? TESS_OK : rc;
}

int tess__comm_share_serve(tess_ctx *ctx)
{
    if (!ctx->mpi || ctx->nranks < 2) return TESS_OK;
    int n = ctx->nshare_reqs;
    size_t *sizes = calloc((size_t)n + 1, sizeof *sizes);
    uint8_t **ptrs = calloc((size_t)n * (size_t)ctx->nranks + 1, sizeof *ptrs);
    int rc = sizes && ptrs ? serve_all(ctx, sizes, ptrs) : TESS_ERR_NOMEM;
    free(sizes);
    free(ptrs);
    TESS_RETURN_IF(ctx, rc == TESS_ERR_NOMEM, rc, "out of memory");
    return rc;
}

void tess__comm_share_requests_free(tess_ctx *ctx)
{
    free(ctx->share_reqs);
    ctx->share_reqs = NULL;
    ctx->nshare_reqs = 0;
}
