/*
 * engine_none.c — the progress engine of builds without MPI: there is only
 * ever one rank, so nothing is posted to another rank.
 */
#include "comm.h"

#if !TESS_HAVE_MPI
int tess__comm_start(tess_ctx *ctx)
{
    return tess__fail(ctx, TESS_ERR_UNSUPPORTED, "this build of tessera has no MPI");
}

int tess__comm_allgather_workers(tess_ctx *ctx, int *counts)
{
    (void)ctx;
    (void)counts;
    return TESS_ERR_UNSUPPORTED;
}

int tess__comm_post(tess_ctx *ctx, int dst, uint32_t type, const tess__part *parts, int nparts)
{
    (void)dst, (void)type, (void)parts, (void)nparts;
    return tess__fail(ctx, TESS_ERR_UNSUPPORTED, "no other rank in a build without MPI");
}

int tess__comm_share_alloc(tess_ctx *ctx, int n, const size_t *sizes, uint8_t **ptrs)
{
    (void)ctx, (void)n, (void)sizes, (void)ptrs;
    return TESS_ERR_UNSUPPORTED;
}

void tess__comm_stop(tess_ctx *ctx) { (void)ctx; }

void tess__comm_end_job(tess_ctx *ctx, int code) { (void)ctx, (void)code; }

void tess__comm_fail_after(tess_ctx *ctx, double seconds, const char *why)
{
    (void)ctx, (void)seconds, (void)why;
}

void tess__comm_fail_clear(tess_ctx *ctx) { (void)ctx; }

void tess__comm_wait_sent(tess_ctx *ctx, double seconds) { (void)ctx, (void)seconds; }

void tess__comm_stats(const tess_ctx *ctx, tess_stats *st) { (void)ctx, (void)st; }

uint64_t tess__comm_posted_to(tess_ctx *ctx, int dst)
{
    (void)ctx, (void)dst;
    return 0;
}

uint64_t tess__comm_dispatched_from(tess_ctx *ctx, int src)
{
    (void)ctx, (void)src;
    return 0;
}
#endif
