/*
 * fuzz_latency_trace.c — libFuzzer target for the `--jitter trace:FILE`
 * reader: any file must give a profile or a one-line "trace: FILE:LINE: ..."
 * error, never a crash or a leak.  An accepted profile's quantiles must be
 * finite, non-negative and non-decreasing, its canonical text must parse
 * back to it, and its delays must lie between its smallest and largest.
 * The bytes go through a memfd, a regular file the reader opens by path.
 */
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "tick/latency.h"
#include "core/internal.h"

static void check_profile(const tess__latency_spec *s)
{
    const double *q = s->quantile_us;
    for (int i = 0; i < TESS__LATENCY_QUANTILES_N; i++)
        if (!(q[i] >= 0 && q[i] <= 1e12) || (i > 0 && q[i] < q[i - 1])) __builtin_trap();
    char text[TESS__LATENCY_FORMAT_MAX];
    tess__latency_spec again;
    if (tess__latency_format(s, text, sizeof text) != 0) __builtin_trap();
    if (tess__latency_parse(text, &again, NULL) != 0 ||
        memcmp(again.quantile_us, q, sizeof again.quantile_us) != 0)
        __builtin_trap();
    for (uint64_t seq = 0; seq < 8; seq++) {
        double d = tess__latency_sample_delay(s, 3, 0, 1, seq, 100);
        if (!(d >= q[0] && d <= q[TESS__LATENCY_QUANTILES_N - 1])) __builtin_trap();
    }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static tess_ctx *ctx; /* one for the whole fuzzing process: messages only */
    static int fd = -1;
    static char spec[64];
    if (ctx == NULL && (ctx = tess__ctx_alloc(NULL)) == NULL) return 0;
    if (fd < 0) {
        if ((fd = memfd_create("trace", 0)) < 0) return 0;
        snprintf(spec, sizeof spec, "trace:/proc/self/fd/%d", fd);
    }
    if (ftruncate(fd, 0) != 0 || pwrite(fd, data, size, 0) != (ssize_t)size) return 0;
    tess__latency_spec s;
    if (tess__latency_resolve(spec, &s, ctx) != 0) {
        const char *err = tess_last_error(ctx);
        if (strncmp(err, "trace: ", 7) != 0 || strchr(err, '\n') != NULL) __builtin_trap();
    } else {
        check_profile(&s);
    }
    return 0;
}
