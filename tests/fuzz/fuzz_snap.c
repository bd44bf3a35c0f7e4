/*
 * fuzz_snap.c — libFuzzer target for the SNAP text parser: any bytes must
 * give a graph or a one-line error, never a crash or a leak.
 */
#include <stdint.h>
#include <stddef.h>
#include <string.h>

#include "graph.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    tg_graph g;
    char err[256];
    if (tg_parse_snap("fuzz.txt", (const char *)data, size, &g, err, sizeof err) == 0) {
        /* A parsed graph must satisfy the renumbering contract. */
        for (uint64_t v = 1; v < g.nv; v++)
            if (g.ids[v - 1] >= g.ids[v]) __builtin_trap();
        for (uint64_t e = 0; e < g.ne; e++)
            if (g.src[e] >= g.nv || g.dst[e] >= g.nv) __builtin_trap();
    } else if (memchr(err, '\n', strlen(err)) != NULL) {
        __builtin_trap();
    }
    tg_free(&g);
    return 0;
}
