/*
 * graph_internal.h — helpers shared by the modules of tools/graph: error
 * messages, renumbering of raw 64-bit edge lists, whole-file reading and
 * crash-safe (temp file + fsync + rename) writing, little-endian fields.
 * Not part of graph.h.
 */
#ifndef TESS_TOOLS_GRAPH_INTERNAL_H
#define TESS_TOOLS_GRAPH_INTERNAL_H

#include <stdio.h>
#include <stddef.h>
#include <stdint.h>

#include "graph.h"

#define TG__CACHE_MAGIC "TSSGRAPH"
#define TG__CACHE_MAGIC_LEN 8

#if defined(__GNUC__)
#define TG__PRINTF(a, b) __attribute__((format(printf, a, b)))
#else
#define TG__PRINTF(a, b)
#endif

/* Format a one-line message into err[errlen] (NULL/0 allowed); newlines and
 * other control characters become spaces.  Returns `status` for tail calls. */
int tg__err(int status, char *err, size_t errlen, const char *fmt, ...) TG__PRINTF(4, 5);

/* Copy `len` bytes of line text into out[outlen] for a message: control and
 * non-ASCII bytes become '?', longer text is cut to ~60 chars plus "...". */
void tg__quote_line(const char *text, size_t len, char *out, size_t outlen);

/* The cache's little-endian fields, whatever the host.  tools/graph keeps
 * its own four helpers rather than reach into the library's private
 * src/core/bytes.h: the graph library depends on public headers only. */
static inline void tg__put_le32(unsigned char *p, uint32_t v)
{
    for (int i = 0; i < 4; i++) p[i] = (unsigned char)(v >> (8 * i));
}

static inline void tg__put_le64(unsigned char *p, uint64_t v)
{
    for (int i = 0; i < 8; i++) p[i] = (unsigned char)(v >> (8 * i));
}

static inline uint32_t tg__get_le32(const unsigned char *p)
{
    return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

static inline uint64_t tg__get_le64(const unsigned char *p)
{
    return (uint64_t)tg__get_le32(p) | (uint64_t)tg__get_le32(p + 4) << 32;
}

/* Growable pair of raw (original-id) edge arrays. */
typedef struct tg__edges {
    uint64_t *src, *dst;
    uint64_t n, cap;
} tg__edges;

int tg__edges_reserve(tg__edges *e, uint64_t cap); /* 0 or TESS_ERR_NOMEM */
void tg__edges_free(tg__edges *e);

/* Build g (nv, ids, ne, src, dst) from raw edges: index i = i-th smallest
 * distinct id.  The raw arrays stay owned by the caller.  `name` is for
 * messages (nv >= 2^32, no edges, out of memory). */
int tg__renumber(const uint64_t *raw_src, const uint64_t *raw_dst, uint64_t ne, tg_graph *g,
                 const char *name, char *err, size_t errlen);

/* Read a whole regular file into a malloc'd buffer (*data_out, freed by caller). */
int tg__read_file(const char *path, char **data_out, size_t *len_out, char *err, size_t errlen);

/* Crash-safe output: a temp file next to `path`, renamed over it on commit;
 * a destination that exists and is not a regular file (a device, a FIFO) is
 * written in place (tmp_path NULL). */
typedef struct tg__outfile {
    FILE *f;
    char *tmp_path;
    const char *path;
} tg__outfile;

int tg__out_open(tg__outfile *o, const char *path, char *err, size_t errlen);
/* Flush, fsync, close and rename; on failure removes the temp file. */
int tg__out_commit(tg__outfile *o, char *err, size_t errlen);
/* Close and remove the temp file.  Safe after a failed open or a commit. */
void tg__out_abort(tg__outfile *o);

/* A graph cache mapped and checked (header, length, checksum), its sections
 * in place for a reader that streams them (in_csr.c).  Little-endian data. */
typedef struct tg__cache_view {
    const unsigned char *base;
    size_t len;
    uint64_t nv, ne, nsites;
    const unsigned char *ids, *src, *dst, *sites; /* sites NULL without sites */
} tg__cache_view;
/* 0, an error (message in err), or 1 when the file cannot be mapped. */
int tg__cache_open(const char *path, tg__cache_view *v, char *err, size_t errlen);
/* Drop the mapped pages wholly inside [from, to) from memory (re-read on access). */
void tg__cache_release(const tg__cache_view *v, const void *from, const void *to);
void tg__cache_close(tg__cache_view *v);
/* 1 if the file starts with the cache magic, 0 if not, negative on error. */
int tg__is_cache(const char *path, char *err, size_t errlen);

/* Check that a graph is well formed (used by the cache reader and writer). */
int tg__validate(const tg_graph *g, const char *name, char *err, size_t errlen);
/* The part of it that does not read the edges: ne > 0, vertex count, ids
 * strictly ascending, site bounds. */
int tg__validate_vertices(const tg_graph *g, const char *name, char *err, size_t errlen);

#endif
