/*
 * cache.c — the binary graph cache (docs/formats.md, "Graph cache"):
 *
 *   0   "TSSGRAPH"            8 bytes
 *   8   version   u32         1
 *   12  flags     u32         bit 0: site bounds present; other bits zero
 *   16  nv, ne, nsites  u64
 *   40  ids[nv] u64, src[ne] u32, dst[ne] u32, site_first[nsites+1] u64 (if bit 0)
 *   end XXH64 (seed 0) of every preceding byte, u64
 *
 * All integers little-endian.  The reader trusts nothing: sizes are checked
 * against the file length before any allocation, the checksum before any
 * decoding, and the decoded graph is validated like a freshly built one.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>
#include <xxhash.h>

#include "graph_internal.h"
#include "tessera/tessera.h"

#define CACHE_VERSION 1u
#define CACHE_FLAG_SITES 1u
#define CACHE_HEADER 40u
#define CACHE_TRAILER 8u

#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__
#define CACHE_SWAP 1
#else
#define CACHE_SWAP 0
#endif

/* Whole arrays are copied and swapped only on big-endian hosts; single
 * fields go through core/bytes.h. */
static uint64_t le64(uint64_t v) { return CACHE_SWAP ? __builtin_bswap64(v) : v; }

/* Reverses the bytes of each of n words of `width` bytes (8 or 4) at p;
 * through memcpy, as p may be any buffer. */
static void swap_words(unsigned char *p, uint64_t n, int width)
{
    for (uint64_t i = 0; i < n; i++, p += width) {
        uint64_t v64;
        uint32_t v32;
        if (width == 8) {
            memcpy(&v64, p, 8);
            v64 = __builtin_bswap64(v64);
            memcpy(p, &v64, 8);
        } else {
            memcpy(&v32, p, 4);
            v32 = __builtin_bswap32(v32);
            memcpy(p, &v32, 4);
        }
    }
}

/* n words of `width` bytes from src to dst, little-endian on one side and
 * host order on the other: reading and writing the file are the same copy. */
static void copy_words(void *dst, const void *src, uint64_t n, int width)
{
    memcpy(dst, src, (size_t)n * (size_t)width);
    if (CACHE_SWAP) swap_words(dst, n, width);
}

typedef struct cache_header {
    uint32_t version, flags;
    uint64_t nv, ne, nsites;
} cache_header;

static int check_header(const char *name, const unsigned char *d, size_t len, cache_header *h,
                        char *err, size_t errlen)
{
    if (len < TG__CACHE_MAGIC_LEN || memcmp(d, TG__CACHE_MAGIC, TG__CACHE_MAGIC_LEN) != 0)
        return tg__err(TESS_ERR_FORMAT, err, errlen, "%s: not a tessera graph cache (bad magic)",
                       name);
    if (len < CACHE_HEADER + CACHE_TRAILER)
        return tg__err(TESS_ERR_FORMAT, err, errlen,
                       "%s: truncated graph cache (%zu bytes, header needs %u)", name, len,
                       CACHE_HEADER + CACHE_TRAILER);
    h->version = tg__get_le32(d + 8);
    h->flags = tg__get_le32(d + 12);
    h->nv = tg__get_le64(d + 16);
    h->ne = tg__get_le64(d + 24);
    h->nsites = tg__get_le64(d + 32);
    if (h->version != CACHE_VERSION)
        return tg__err(TESS_ERR_FORMAT, err, errlen,
                       "%s: unsupported graph cache version %u (this build reads %u)", name,
                       h->version, CACHE_VERSION);
    if (h->flags & ~CACHE_FLAG_SITES)
        return tg__err(TESS_ERR_FORMAT, err, errlen, "%s: unknown graph cache flags 0x%x", name,
                       h->flags);
    if (!(h->flags & CACHE_FLAG_SITES) && h->nsites != 0)
        return tg__err(TESS_ERR_FORMAT, err, errlen, "%s: %llu sites but no site flag", name,
                       (unsigned long long)h->nsites);
    if ((h->flags & CACHE_FLAG_SITES) && h->nsites == 0)
        return tg__err(TESS_ERR_FORMAT, err, errlen, "%s: site flag set but zero sites", name);
    return 0;
}

/* Expected file length, or 0 if the counts cannot fit in `len` bytes
 * (checked before multiplying, so nothing overflows). */
static uint64_t expected_length(const cache_header *h, size_t len)
{
    if (h->nv > len / 8 || h->ne > len / 8 || h->nsites > len / 8) return 0;
    uint64_t n = CACHE_HEADER + 8 * h->nv + 8 * h->ne + CACHE_TRAILER;
    if (h->flags & CACHE_FLAG_SITES) n += 8 * (h->nsites + 1);
    return n;
}

/* What a mapped file's pages cost in resident memory once read: nothing,
 * after this (MADV_DONTNEED on a read-only private file mapping drops the
 * pages; a later access reads them again from the page cache).  NULL base:
 * the data is not a mapping. */
typedef struct cache_map {
    const unsigned char *base;
    size_t len;
} cache_map;

static void release_pages(const cache_map *m, size_t from, size_t to)
{
    if (m == NULL || m->base == NULL) return;
    size_t page = (size_t)sysconf(_SC_PAGESIZE);
    size_t lo = (from + page - 1) / page * page, hi = to / page * page;
    if (hi > lo) madvise((void *)(m->base + lo), hi - lo, MADV_DONTNEED);
}

#define CACHE_CHUNK ((size_t)16 << 20)

/* n elements of `width` bytes from p into dst in chunks, releasing what was
 * copied (offset `at` in the file). */
static void copy_section(void *dst, const unsigned char *p, uint64_t n, int width, size_t at,
                         const cache_map *m)
{
    size_t per = CACHE_CHUNK / (size_t)width;
    for (uint64_t i = 0; i < n; i += per) {
        size_t take = n - i < per ? (size_t)(n - i) : per;
        copy_words((unsigned char *)dst + i * (size_t)width, p + i * (size_t)width, take, width);
        release_pages(m, at + i * (size_t)width, at + (i + take) * (size_t)width);
    }
}

static int decode_body(const unsigned char *d, const cache_header *h, const cache_map *m,
                       tg_graph *g)
{
    g->ids = malloc((size_t)(h->nv ? h->nv : 1) * sizeof *g->ids);
    g->src = malloc((size_t)(h->ne ? h->ne : 1) * sizeof *g->src);
    g->dst = malloc((size_t)(h->ne ? h->ne : 1) * sizeof *g->dst);
    if (h->nsites) g->site_first = malloc((size_t)(h->nsites + 1) * sizeof *g->site_first);
    if (!g->ids || !g->src || !g->dst || (h->nsites && !g->site_first)) return TESS_ERR_NOMEM;
    g->nv = h->nv;
    g->ne = h->ne;
    g->nsites = h->nsites;
    const unsigned char *p = d + CACHE_HEADER;
    copy_section(g->ids, p, h->nv, 8, (size_t)(p - d), m);
    p += 8 * h->nv;
    copy_section(g->src, p, h->ne, 4, (size_t)(p - d), m);
    p += 4 * h->ne;
    copy_section(g->dst, p, h->ne, 4, (size_t)(p - d), m);
    p += 4 * h->ne;
    if (h->nsites) copy_words(g->site_first, p, h->nsites + 1, 8);
    return 0;
}

/* XXH64 of data[0, n), releasing mapped pages as it goes. */
static uint64_t checksum(const unsigned char *d, size_t n, const cache_map *m)
{
    XXH64_state_t *st = XXH64_createState();
    if (st == NULL) return XXH64(d, n, 0);
    XXH64_reset(st, 0);
    for (size_t off = 0; off < n; off += CACHE_CHUNK) {
        size_t take = n - off < CACHE_CHUNK ? n - off : CACHE_CHUNK;
        XXH64_update(st, d + off, take);
        release_pages(m, off, off + take);
    }
    uint64_t h = XXH64_digest(st);
    XXH64_freeState(st);
    return h;
}

/* Header, length and checksum of a cache in memory (mapped pages released
 * as they are hashed); 0 with *h, or an error with its message. */
static int check_cache(const char *name, const unsigned char *d, size_t len, const cache_map *m,
                       cache_header *h, char *err, size_t errlen)
{
    int rc = check_header(name, d, len, h, err, errlen);
    if (rc != 0) return rc;
    uint64_t want = expected_length(h, len);
    if (want == 0) /* counts beyond what the file could hold: no length to name */
        return tg__err(TESS_ERR_FORMAT, err, errlen,
                       "%s: graph cache is %zu bytes, too short for the %llu vertices, %llu edges "
                       "and %llu sites its header claims (truncated or corrupt)",
                       name, len, (unsigned long long)h->nv, (unsigned long long)h->ne,
                       (unsigned long long)h->nsites);
    if (want != len)
        return tg__err(TESS_ERR_FORMAT, err, errlen,
                       "%s: graph cache is %zu bytes but its header (%llu vertices, %llu edges, "
                       "%llu sites) needs %llu",
                       name, len, (unsigned long long)h->nv, (unsigned long long)h->ne,
                       (unsigned long long)h->nsites, (unsigned long long)want);
    if (checksum(d, len - CACHE_TRAILER, m) != tg__get_le64(d + len - CACHE_TRAILER))
        return tg__err(TESS_ERR_FORMAT, err, errlen,
                       "%s: graph cache checksum mismatch (corrupt file)", name);
    return 0;
}

static int parse_cache(const char *name, const void *data, size_t len, const cache_map *m,
                       tg_graph *g, char *err, size_t errlen)
{
    memset(g, 0, sizeof *g);
    const unsigned char *d = data;
    cache_header h = {0};
    int rc = check_cache(name, d, len, m, &h, err, errlen);
    if (rc != 0) return rc;
    rc = decode_body(d, &h, m, g);
    if (rc != 0) tg__err(rc, err, errlen, "%s: out of memory", name);
    else rc = tg__validate(g, name, err, errlen);
    if (rc != 0) tg_free(g);
    return rc;
}

int tg_parse_cache(const char *name, const void *data, size_t len, tg_graph *g, char *err,
                   size_t errlen)
{
    return parse_cache(name, data, len, NULL, g, err, errlen);
}

/* The file mapped read-only; 1 when it cannot be (not a regular file, empty,
 * mmap refused): the caller falls back to reading it. */
static int map_file(const char *path, cache_map *m)
{
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    struct stat st;
    if (fd < 0 || fstat(fd, &st) != 0 || !S_ISREG(st.st_mode) || st.st_size <= 0) {
        if (fd >= 0) close(fd);
        return 1; /* let the reader say what is wrong */
    }
    void *p = mmap(NULL, (size_t)st.st_size, PROT_READ, MAP_PRIVATE, fd, 0);
    close(fd);
    if (p == MAP_FAILED) return 1;
    *m = (cache_map){p, (size_t)st.st_size};
    return 0;
}

int tg__cache_open(const char *path, tg__cache_view *v, char *err, size_t errlen)
{
    memset(v, 0, sizeof *v);
    cache_map m;
    if (map_file(path, &m) != 0) return 1;
    cache_header h = {0};
    int rc = check_cache(path, m.base, m.len, &m, &h, err, errlen);
    if (rc != 0) {
        munmap((void *)m.base, m.len);
        return rc;
    }
    v->base = m.base;
    v->len = m.len;
    v->nv = h.nv;
    v->ne = h.ne;
    v->nsites = h.nsites;
    v->ids = m.base + CACHE_HEADER;
    v->src = v->ids + 8 * h.nv;
    v->dst = v->src + 4 * h.ne;
    v->sites = h.nsites ? v->dst + 4 * h.ne : NULL;
    return 0;
}

void tg__cache_release(const tg__cache_view *v, const void *from, const void *to)
{
    cache_map m = {v->base, v->len};
    release_pages(&m, (size_t)((const unsigned char *)from - v->base),
                  (size_t)((const unsigned char *)to - v->base));
}

void tg__cache_close(tg__cache_view *v)
{
    if (v->base != NULL) munmap((void *)v->base, v->len);
    memset(v, 0, sizeof *v);
}

/* The file mapped rather than read: its pages are dropped as they are
 * checked and decoded, so loading holds little more than the graph. */
static int read_mapped(const char *path, tg_graph *g, char *err, size_t errlen)
{
    cache_map m;
    if (map_file(path, &m) != 0) return 1;
    int rc = parse_cache(path, m.base, m.len, &m, g, err, errlen);
    munmap((void *)m.base, m.len);
    return rc;
}

int tg_read_cache(const char *path, tg_graph *g, char *err, size_t errlen)
{
    memset(g, 0, sizeof *g);
    int rc = read_mapped(path, g, err, errlen);
    if (rc != 1) return rc;
    char *data;
    size_t len;
    rc = tg__read_file(path, &data, &len, err, errlen);
    if (rc != 0) return rc;
    rc = tg_parse_cache(path, data, len, g, err, errlen);
    free(data);
    return rc;
}

/* ---- writer ---- */

typedef struct cache_out {
    FILE *f;
    XXH64_state_t *hash;
    int failed; /* errno of the first failed write, 0 if none */
} cache_out;

static void put_bytes(cache_out *o, const void *p, size_t n)
{
    XXH64_update(o->hash, p, n);
    if (fwrite(p, 1, n, o->f) != n && !o->failed) o->failed = errno ? errno : EIO;
}

/* n words of `width` bytes, little-endian, through a 32 KiB stage (the
 * arrays are the caller's and stay untouched). */
static void put_words(cache_out *o, const void *a, uint64_t n, int width)
{
    uint64_t stage[4096];
    const unsigned char *src = a;
    size_t per = sizeof stage / (size_t)width;
    for (uint64_t i = 0; i < n; i += per) {
        size_t k = n - i < per ? (size_t)(n - i) : per;
        copy_words(stage, src + i * (size_t)width, k, width);
        put_bytes(o, stage, k * (size_t)width);
    }
}

static void put_graph(cache_out *o, const tg_graph *g)
{
    unsigned char head[CACHE_HEADER];
    memcpy(head, TG__CACHE_MAGIC, TG__CACHE_MAGIC_LEN);
    tg__put_le32(head + 8, CACHE_VERSION);
    tg__put_le32(head + 12, g->nsites ? CACHE_FLAG_SITES : 0);
    tg__put_le64(head + 16, g->nv);
    tg__put_le64(head + 24, g->ne);
    tg__put_le64(head + 32, g->nsites);
    put_bytes(o, head, sizeof head);
    put_words(o, g->ids, g->nv, 8);
    put_words(o, g->src, g->ne, 4);
    put_words(o, g->dst, g->ne, 4);
    if (g->nsites) put_words(o, g->site_first, g->nsites + 1, 8);
    uint64_t sum = le64(XXH64_digest(o->hash));
    if (fwrite(&sum, 1, sizeof sum, o->f) != sizeof sum && !o->failed)
        o->failed = errno ? errno : EIO;
}

int tg_write_cache(const char *path, const tg_graph *g, char *err, size_t errlen)
{
    /* Refuse to write what the reader would reject. */
    int rc = tg__validate(g, path, err, errlen);
    if (rc != 0) return rc;
    tg__outfile out;
    if ((rc = tg__out_open(&out, path, err, errlen)) != 0) return rc;
    cache_out o = {.f = out.f, .hash = XXH64_createState()};
    if (o.hash == NULL) {
        tg__out_abort(&out);
        return tg__err(TESS_ERR_NOMEM, err, errlen, "%s: out of memory", path);
    }
    XXH64_reset(o.hash, 0);
    put_graph(&o, g);
    XXH64_freeState(o.hash);
    if (o.failed) {
        tg__out_abort(&out);
        return tg__err(TESS_ERR_IO, err, errlen, "%s: write failed: %s", path, strerror(o.failed));
    }
    return tg__out_commit(&out, err, errlen);
}
