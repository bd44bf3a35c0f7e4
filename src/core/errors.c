/*
 * errors.c — status names, the context's last detailed error, and log lines.
 * A failure is described once, where it is first detected (tess__fail), and
 * then only its code travels up.
 */
#include <stdio.h>
#include <string.h>
#include "internal.h"

const char *tess_strerror(int status)
{
    switch (status) {
    case TESS_OK: return "success";
    case TESS_ERR_INVAL: return "invalid argument";
    case TESS_ERR_NOMEM: return "out of memory";
    case TESS_ERR_IO: return "input/output error";
    case TESS_ERR_FORMAT: return "malformed input";
    case TESS_ERR_NOTFOUND: return "not found";
    case TESS_ERR_MISUSE: return "call out of order";
    case TESS_ERR_MPI: return "MPI error";
    case TESS_ERR_INTERRUPTED: return "interrupted";
    case TESS_ERR_TIMEOUT: return "timed out";
    case TESS_ERR_KERNEL: return "a kernel failed";
    case TESS_ERR_UNSUPPORTED: return "not supported by this build";
    default: return "unknown error";
    }
}

int tess__vfail(tess_ctx *ctx, int code, const char *fmt, va_list ap)
{
    if (ctx == NULL) return code;
    pthread_mutex_lock(&ctx->error_mu);
    vsnprintf(ctx->last_error, sizeof ctx->last_error, fmt, ap);
    pthread_mutex_unlock(&ctx->error_mu);
    return code;
}

void tess__last_error_copy(tess_ctx *ctx, char *buf, size_t len)
{
    pthread_mutex_lock(&ctx->error_mu);
    snprintf(buf, len, "%s", ctx->last_error);
    pthread_mutex_unlock(&ctx->error_mu);
}

int tess_set_error(tess_ctx *ctx, int status, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    tess__vfail(ctx, status, fmt, ap);
    va_end(ap);
    return status;
}

char *tess_last_error_copy(tess_ctx *ctx, char *buf, size_t len)
{
    if (len == 0) return buf;
    if (ctx == NULL) snprintf(buf, len, "no context");
    else tess__last_error_copy(ctx, buf, len);
    if (buf[0] == '\0') snprintf(buf, len, "no error");
    return buf;
}

const char *tess_last_error(const tess_ctx *ctx)
{
    if (ctx == NULL) return "no context";
    return ctx->last_error[0] ? ctx->last_error : "no error";
}

static void print_line(const tess_ctx *ctx, const char *fmt, va_list ap)
{
    char line[1024];
    vsnprintf(line, sizeof line, fmt, ap);
    if (ctx != NULL && ctx->nranks > 1) fprintf(stderr, "tessera[rank %d]: %s\n", ctx->rank, line);
    else fprintf(stderr, "tessera: %s\n", line);
}

void tess__log(const tess_ctx *ctx, const char *fmt, ...)
{
    if (ctx == NULL || !ctx->cfg.verbose) return;
    va_list ap;
    va_start(ap, fmt);
    print_line(ctx, fmt, ap);
    va_end(ap);
}

void tess__warn(const tess_ctx *ctx, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    print_line(ctx, fmt, ap);
    va_end(ap);
}
