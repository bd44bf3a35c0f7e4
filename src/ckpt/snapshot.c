/*
 * snapshot.c — the checkpoint API of include/tessera/checkpoint.h.
 * (Being wired in: until then every call reports TESS_ERR_UNSUPPORTED.)
 */
#include <string.h>
#include "core/internal.h"

int tess_checkpoint_enable(tess_ctx *ctx, const char *dir, const char *job, int keep)
{
    (void)dir, (void)job, (void)keep;
    return tess__fail(ctx, TESS_ERR_UNSUPPORTED, "checkpoints are not wired in yet");
}
int tess_table_set_static(tess_table *t) { (void)t; return TESS_ERR_UNSUPPORTED; }
int tess_checkpoint_barrier(tess_ctx *ctx, const void *user, size_t len)
{
    (void)user, (void)len;
    return tess_barrier(ctx);
}
int tess_checkpoint_periodic(tess_ctx *ctx, double s, const void *user, size_t len)
{
    (void)ctx, (void)s, (void)user, (void)len;
    return TESS_ERR_UNSUPPORTED;
}
int tess_task_checkpoint_point(tess_task *task, const void *pos, size_t len)
{
    (void)task, (void)pos, (void)len;
    return TESS_OK;
}
const void *tess_task_restored_position(const tess_task *task, size_t *len_out)
{
    (void)task;
    *len_out = 0;
    return NULL;
}
int tess_checkpoint_restore(tess_ctx *ctx, void **user_out, size_t *len_out, uint64_t *e)
{
    (void)user_out, (void)len_out, (void)e;
    return tess__fail(ctx, TESS_ERR_UNSUPPORTED, "checkpoints are not wired in yet");
}
int tess_checkpoint_wait(tess_ctx *ctx, uint64_t *epoch_out)
{
    (void)ctx;
    if (epoch_out) *epoch_out = 0;
    return TESS_OK;
}
void tess_checkpoint_get_stats(const tess_ctx *ctx, tess_checkpoint_stats *out)
{
    (void)ctx;
    memset(out, 0, sizeof *out);
}
