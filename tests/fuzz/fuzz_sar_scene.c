/*
 * fuzz_sar_scene.c — libFuzzer target for the TSAR scene reader of `tessera
 * run sar` (apps/sar/sar_io.c): any bytes give a scene or a one-line error,
 * never a crash; an accepted scene has the sizes its header promises and
 * only finite numbers.
 */
#include <math.h>
#include <stdint.h>
#include <stddef.h>
#include "sar.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    sar_scene s;
    char err[256];
    if (sar_parse(data, size, "fuzz", &s, err, sizeof err) != 0) {
        if (err[0] == '\0') __builtin_trap();
        return 0;
    }
    size_t want = SAR_HEADER_BYTES + 24 * (size_t)s.pulses + 8 * (size_t)s.pulses * s.bins;
    if (want != size || s.pulses == 0 || s.bins < 2 || s.width == 0 || s.height == 0)
        __builtin_trap();
    if (!(s.dr > 0) || !isfinite(s.samples[2 * (size_t)s.pulses * s.bins - 1])) __builtin_trap();
    sar_free(&s);
    return 0;
}
