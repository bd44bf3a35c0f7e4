/*
 * fuzz_latency_spec.c — libFuzzer target for the --jitter spec parser: any
 * bytes must give a spec or a one-line "--jitter: ..." error, never a crash
 * or a leak.  An accepted spec must format to canonical text that parses
 * back to an equal spec and formats to the same text again, and the delays
 * it gives must be finite and non-negative.
 */
#include <math.h>
#include <stdint.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "tick/latency.h"
#include "core/internal.h"

static void check_round_trip(const tess__latency_spec *s)
{
    char text[TESS__LATENCY_FORMAT_MAX], again_text[TESS__LATENCY_FORMAT_MAX];
    tess__latency_spec again;
    if (tess__latency_format(s, text, sizeof text) != 0) __builtin_trap();
    if (tess__latency_parse(text, &again, NULL) != 0 || !tess__latency_spec_equal(s, &again))
        __builtin_trap();
    if (tess__latency_format(&again, again_text, sizeof again_text) != 0 ||
        strcmp(text, again_text) != 0)
        __builtin_trap();
}

static void check_delays(const tess__latency_spec *s)
{
    for (uint64_t seq = 0; seq < 4; seq++) {
        double d = tess__latency_sample_delay(s, seq, 1, 2, seq, 1000);
        if (!(d >= 0) || isinf(d)) __builtin_trap();
    }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char *text = malloc(size + 1);
    if (text == NULL) return 0;
    memcpy(text, data, size);
    text[size] = '\0';
    static tess_ctx *ctx; /* one for the whole fuzzing process: messages only */
    if (ctx == NULL && (ctx = tess__ctx_alloc(NULL)) == NULL) return 0;
    tess__latency_spec s;
    if (tess__latency_parse(text, &s, ctx) != 0) {
        const char *err = tess_last_error(ctx);
        if (err[0] == '\0' || strchr(err, '\n') != NULL) __builtin_trap();
    } else {
        check_round_trip(&s);
        check_delays(&s);
    }
    free(text);
    return 0;
}
