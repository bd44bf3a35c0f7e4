/*
 * fuzz_cache.c — libFuzzer target for the binary graph cache readers.  The
 * checksum would stop nearly every mutation at the door, so when the input
 * is long enough the target also re-seals it with a valid XXH64 trailer and
 * parses that copy: the structural checks behind the checksum get fuzzed too.
 * Each input is also written to a file and streamed into an in-edge CSR
 * (tg_load_in_csr, which maps the file and never builds the edge list): it
 * must accept exactly what the parser accepts, with the same CSR as
 * tg_build_in_csr of the parsed graph.  A file that does not start like a
 * cache is read by tg_load_in_csr as an edge list (as `--graph` reads any
 * graph file), so for those the reference is tg_load_file.
 */
#include <stdint.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <xxhash.h>

#include "graph.h"
#include "graph_internal.h"

/* The streamed CSR of the same bytes, written to a file, against the
 * parsed graph (ok: the parser accepted it). */
static void stream_and_compare(const uint8_t *data, size_t size, const tg_graph *parsed, int ok)
{
    static char path[64];
    if (path[0] == '\0') /* memory-backed when there is /dev/shm: thousands of files a second */
        snprintf(path, sizeof path, "%s/fuzz_cache.%ld.bin",
                 access("/dev/shm", W_OK) == 0 ? "/dev/shm" : "/tmp", (long)getpid());
    FILE *f = fopen(path, "wb");
    if (f == NULL) return;
    int written = fwrite(data, 1, size, f) == size;
    if (fclose(f) != 0 || !written) return;
    tg_graph g, text;
    tg_in_csr csr, want;
    char err[256];
    memset(&text, 0, sizeof text);
    if (tg__is_cache(path, err, sizeof err) ==
        0) { /* an edge list: what tg_load_file makes of it */
        ok = tg_load_file(path, &text, err, sizeof err) == 0;
        parsed = &text;
    }
    int streamed = tg_load_in_csr(path, NULL, &g, &csr, err, sizeof err) == 0;
    if (streamed != ok) __builtin_trap();
    if (ok) {
        if (tg_build_in_csr(parsed, &want, err, sizeof err) != 0) __builtin_trap();
        if (g.nv != parsed->nv || g.ne != parsed->ne || g.src != NULL ||
            memcmp(g.ids, parsed->ids, g.nv * sizeof *g.ids) != 0 ||
            memcmp(csr.in_first, want.in_first, (g.nv + 1) * sizeof *csr.in_first) != 0 ||
            memcmp(csr.in_src, want.in_src, g.ne * sizeof *csr.in_src) != 0 ||
            memcmp(csr.outdeg, want.outdeg, g.nv * sizeof *csr.outdeg) != 0)
            __builtin_trap();
        tg_in_csr_free(&want);
    }
    tg_in_csr_free(&csr);
    tg_free(&g);
    tg_free(&text);
    unlink(path);
}

static void parse(const uint8_t *data, size_t size)
{
    tg_graph g;
    char err[256];
    int ok = tg_parse_cache("fuzz.bin", data, size, &g, err, sizeof err) == 0;
    if (ok) {
        for (uint64_t e = 0; e < g.ne; e++)
            if (g.src[e] >= g.nv || g.dst[e] >= g.nv) __builtin_trap();
    }
    stream_and_compare(data, size, &g, ok);
    tg_free(&g);
}

#include "fuzz_sealed.h"
