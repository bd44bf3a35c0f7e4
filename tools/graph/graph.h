/*
 * graph.h — edge lists for the graph applications: SNAP text readers (plain
 * or gzip), a binary cache, and the counter-based generators rmat:, uniform:
 * and web: (DESIGN §6).  Vertex ids are uint64_t, not necessarily dense; a
 * loaded graph is renumbered so internal index i is the i-th smallest id that
 * appears in the edge list.  Part of tools/, used by apps and the CLI; not
 * part of the library.
 */
#ifndef TESS_TOOLS_GRAPH_H
#define TESS_TOOLS_GRAPH_H

#include <stddef.h>
#include <stdint.h>

typedef struct tg_graph {
    uint64_t nv;         /* vertices: distinct ids appearing in the edges */
    uint64_t ne;         /* edges, duplicates kept, in input/generation order */
    uint64_t *ids;       /* nv original ids, strictly ascending */
    uint32_t *src, *dst; /* ne internal indices (nv < 2^32 is required) */
    /* web: graphs only: nsites+1 ascending bounds in internal numbering;
     * site s holds internal vertices [site_first[s], site_first[s+1]).
     * nsites 0 and site_first NULL otherwise. */
    uint64_t nsites;
    uint64_t *site_first;
} tg_graph;

/* All functions return 0 or a negative tess_status code and on error write a
 * one-line message (naming the file and 1-based physical line, or the spec)
 * into err[errlen] and leave *g zeroed. */

/* SNAP edge list: '#' comment lines, blank lines, "src dst" separated by
 * spaces/tabs; gzip detected by its magic bytes. */
int tg_read_snap(const char *path, tg_graph *g, char *err, size_t errlen);
/* The same parser on a memory buffer already decompressed; `name` is used in messages. */
int tg_parse_snap(const char *name, const char *data, size_t len, tg_graph *g, char *err,
                  size_t errlen);

/* Binary cache (docs/formats.md): magic, version, counts, ids, edges, sites, checksum. */
int tg_read_cache(const char *path, tg_graph *g, char *err, size_t errlen);
int tg_parse_cache(const char *name, const void *data, size_t len, tg_graph *g, char *err,
                   size_t errlen);
int tg_write_cache(const char *path, const tg_graph *g, char *err, size_t errlen);

/* SNAP text with original ids (a header comment, then "src\tdst" lines). */
/* For the commands that write graph files: SIGINT and SIGTERM remove the
 * temporary being written before they end the process (they would leave it
 * behind otherwise).  Installs process-wide handlers: not for programs
 * whose runtime handles those signals itself. */
void tg_remove_temporaries_on_signal(void);

int tg_write_snap(const char *path, const tg_graph *g, char *err, size_t errlen);

/* Generators: "rmat:SCALE[:EDGEFACTOR[:SEED]]", "uniform:N:M[:SEED]",
 * "web:PAGES[:SEED]".  Same graph for any caller (counter-based RNG). */
int tg_generate(const char *spec, tg_graph *g, char *err, size_t errlen);
/* Check a generator spec without generating (for option parsing): 0 or
 * TESS_ERR_INVAL with the same message tg_generate would give. */
int tg_check_spec(const char *spec, char *err, size_t errlen);

/* Load a file: binary cache if it starts with the cache magic, else SNAP. */
int tg_load_file(const char *path, tg_graph *g, char *err, size_t errlen);

void tg_free(tg_graph *g); /* accepts NULL; leaves *g zeroed */

/* A graph's in-edges grouped by destination, each vertex's in the input
 * order, and its out-degrees: what a pull kernel reads (in_csr.c). */
typedef struct tg_in_csr {
    uint64_t *in_first; /* nv+1 offsets into in_src */
    uint32_t *in_src;   /* ne sources */
    uint32_t *outdeg;   /* nv */
} tg_in_csr;

/* The in-CSR of a graph in memory (its edges kept). */
int tg_build_in_csr(const tg_graph *g, tg_in_csr *csr, char *err, size_t errlen);
/* A graph file or generator spec (exactly one non-NULL) loaded as *g
 * without its edge list (src and dst NULL, ne set) and its in-CSR.  A
 * graph cache is streamed from the mapped file, so the edge list is never
 * held: about 4 bytes per edge at the peak instead of 12. */
int tg_load_in_csr(const char *path, const char *spec, tg_graph *g, tg_in_csr *csr, char *err,
                   size_t errlen);
void tg_in_csr_free(tg_in_csr *csr); /* accepts NULL; leaves it zeroed */
/* Give the memory of the in-lists of vertices [lo, hi) back to the system
 * (whole pages only) once they are no longer needed: they read as zeros
 * afterwards.  For a loader that copies the graph elsewhere piece by piece. */
void tg_in_csr_release(tg_in_csr *csr, uint64_t lo, uint64_t hi);

#endif
