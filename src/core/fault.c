/*
 * fault.c — named failure points for tests (TESS_FAULT).
 *
 * TESS_FAULT=POINT@RANK[:ACTION] makes rank RANK fail at the named point
 * the first time it passes there, so tests can reach every path by which
 * one rank fails while the others carry on.  ACTION is what the rank does:
 *   fail  (default) the code at that point reports an error, as a real
 *         failure there would (a reader that meets bad input, a kernel that
 *         returns non-zero, a disk that fills);
 *   stop  the process stops (SIGSTOP), as a rank that hangs in a read or
 *         was stopped by an operator: only the liveness watchdog sees it;
 *   exit  the process ends at once (_exit(3)), as a rank that crashed.
 * The points: setup (before tess_main), kernel, tick, tile, barrier,
 * checkpoint, shutdown.  A value that names no point is refused by tess_init
 * with a one-line error, so a typo cannot make a fault test pass vacuously.
 */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "internal.h"

static const char *const points[] = {"setup",   "kernel",     "tick",     "tile",
                                     "barrier", "checkpoint", "shutdown", NULL};

static int known_point(const char *name, size_t len)
{
    for (int i = 0; points[i] != NULL; i++)
        if (strlen(points[i]) == len && strncmp(points[i], name, len) == 0) return 1;
    return 0;
}

static int parse_action(const char *s)
{
    if (s == NULL || strcmp(s, "fail") == 0) return TESS__FAULT_FAIL;
    if (strcmp(s, "stop") == 0) return TESS__FAULT_STOP;
    if (strcmp(s, "exit") == 0) return TESS__FAULT_EXIT;
    return -1;
}

int tess__fault_init(tess_ctx *ctx)
{
    const char *env = getenv("TESS_FAULT");
    memset(&ctx->fault, 0, sizeof ctx->fault);
    if (env == NULL || env[0] == '\0') return TESS_OK;
    const char *at = strchr(env, '@');
    const char *colon = at != NULL ? strchr(at, ':') : NULL;
    char *end = NULL;
    long rank = at != NULL ? strtol(at + 1, &end, 10) : -1;
    int action = parse_action(colon != NULL ? colon + 1 : NULL);
    int ok = at != NULL && known_point(env, (size_t)(at - env)) && end != at + 1 && rank >= 0 &&
             rank < 1 << 30 && (colon == NULL ? *end == '\0' : end == colon) && action >= 0;
    TESS_RETURN_IF(ctx, !ok, TESS_ERR_INVAL,
                   "TESS_FAULT: expected POINT@RANK[:fail|stop|exit] with POINT one of setup, "
                   "kernel, tick, tile, barrier, checkpoint, shutdown; got '%s'",
                   env);
    snprintf(ctx->fault.point, sizeof ctx->fault.point, "%.*s", (int)(at - env), env);
    ctx->fault.rank = (int)rank;
    ctx->fault.action = action;
    ctx->fault.armed = 1;
    return TESS_OK;
}

int tess__fault(tess_ctx *ctx, const char *point)
{
    if (ctx == NULL || !__atomic_load_n(&ctx->fault.armed, __ATOMIC_ACQUIRE) ||
        ctx->fault.rank != ctx->rank || strcmp(ctx->fault.point, point) != 0)
        return 0;
    if (!__atomic_exchange_n(&ctx->fault.armed, 0, __ATOMIC_ACQ_REL))
        return 0; /* once: a fault fires at its first passage, on one thread */
    tess__warn(ctx, "TESS_FAULT: injected fault at '%s' on rank %d", point, ctx->rank);
    if (ctx->fault.action == TESS__FAULT_STOP) raise(SIGSTOP);
    if (ctx->fault.action == TESS__FAULT_EXIT) _exit(3);
    return ctx->fault.action == TESS__FAULT_FAIL;
}
