/*
 * registry.c — kernels, accumulators and partitioners registered by name.
 * Function pointers cannot travel between processes, so messages carry the
 * index of a name; every rank registers the same names in the same order.
 */
#include <stdlib.h>
#include <string.h>
#include "internal.h"

int tess__registry_find(const tess__named *list, int n, const char *name)
{
    for (int i = 0; i < n; i++)
        if (strcmp(list[i].name, name) == 0) return i;
    return -1;
}

static int registry_add(tess_ctx *ctx, tess__named **list, int *n, const char *what,
                        const char *name, const tess__named *entry)
{
    TESS_RETURN_IF(ctx, ctx->started, TESS_ERR_MISUSE,
                   "%s '%s' registered after tess_main() started", what, name ? name : "?");
    TESS_RETURN_IF(ctx, name == NULL || name[0] == '\0', TESS_ERR_INVAL, "%s without a name", what);
    TESS_RETURN_IF(ctx, tess__registry_find(*list, *n, name) >= 0, TESS_ERR_INVAL,
                   "%s '%s' registered twice", what, name);
    tess__named *grown = realloc(*list, (size_t)(*n + 1) * sizeof **list);
    TESS_RETURN_IF(ctx, grown == NULL, TESS_ERR_NOMEM, "out of memory registering '%s'", name);
    *list = grown;
    grown[*n] = *entry;
    grown[*n].name = strdup(name);
    TESS_RETURN_IF(ctx, grown[*n].name == NULL, TESS_ERR_NOMEM, "out of memory");
    (*n)++;
    return TESS_OK;
}

int tess_register_kernel(tess_ctx *ctx, const char *name, tess_kernel_fn fn)
{
    if (ctx == NULL) return TESS_ERR_INVAL;
    TESS_RETURN_IF(ctx, fn == NULL, TESS_ERR_INVAL, "kernel '%s' is NULL", name ? name : "?");
    tess__named e = {.fn = (void *)fn};
    return registry_add(ctx, &ctx->reg.kernels, &ctx->reg.nkernels, "kernel", name, &e);
}

int tess_register_partitioner(tess_ctx *ctx, const char *name, tess_partitioner_fn fn)
{
    if (ctx == NULL) return TESS_ERR_INVAL;
    TESS_RETURN_IF(ctx, fn == NULL, TESS_ERR_INVAL, "partitioner '%s' is NULL", name ? name : "?");
    tess__named e = {.fn = (void *)fn};
    return registry_add(ctx, &ctx->reg.partitioners, &ctx->reg.npartitioners, "partitioner", name,
                        &e);
}

int tess_register_accumulator(tess_ctx *ctx, const char *name, const tess_accum_ops *ops)
{
    if (ctx == NULL) return TESS_ERR_INVAL;
    TESS_RETURN_IF(ctx, ops == NULL || ops->accumulate == NULL, TESS_ERR_INVAL,
                   "accumulator '%s' needs an accumulate function", name ? name : "?");
    tess__named e = {.accum = *ops};
    return registry_add(ctx, &ctx->reg.accums, &ctx->reg.naccums, "accumulator", name, &e);
}

static void free_list(tess__named *list, int n)
{
    for (int i = 0; i < n; i++) free(list[i].name);
    free(list);
}

void tess__registry_free(tess__registry *reg)
{
    free_list(reg->kernels, reg->nkernels);
    free_list(reg->accums, reg->naccums);
    free_list(reg->partitioners, reg->npartitioners);
    memset(reg, 0, sizeof *reg);
}
