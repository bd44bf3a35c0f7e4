/*
 * fuzz_particles.c — libFuzzer target for the particle reader of `tessera
 * run nbody` (apps/nbody/nbody_particles.c): any bytes give particles or a
 * one-line error, never a crash; what is accepted is finite, inside the
 * box, sorted by id with no id twice.
 */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "nbody.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size == 0) return 0;
    FILE *fp = fmemopen((void *)data, size, "r");
    if (!fp) return 0;
    nbody_particle *p = NULL;
    size_t n = 0;
    char err[256];
    const double box = 10.0;
    int ok = nbody_read_stream(fp, "fuzz", box, &p, &n, err, sizeof err) == 0;
    fclose(fp);
    if (!ok && (strchr(err, '\n') || err[0] == '\0')) __builtin_trap();
    for (size_t i = 0; ok && i < n; i++) {
        for (int k = 0; k < 3; k++)
            if (!(p[i].x[k] >= 0 && p[i].x[k] < box) || !isfinite(p[i].v[k])) __builtin_trap();
        if (i > 0 && p[i].id <= p[i - 1].id) __builtin_trap();
    }
    free(p);
    return 0;
}
