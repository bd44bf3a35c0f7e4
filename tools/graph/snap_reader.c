/*
 * snap_reader.c — SNAP edge lists: '#' comment lines, blank lines, and lines
 * of exactly two unsigned decimal vertex ids separated by spaces or tabs,
 * optionally ending in "\r\n".  Files may be gzip-compressed (detected by
 * the magic bytes 1f 8b, decompressed with zlib's inflate so that a damaged
 * or truncated stream is an error rather than silently short input).
 *
 * The reader streams the file through one buffer holding whole lines and a
 * hand-written scanner, so a 300 MB file parses in about a second.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>

#include "graph_internal.h"
#include "tessera/tessera.h"

#define SNAP_BUF_INITIAL (8u << 20)
#define SNAP_GZ_INPUT (256u << 10)

typedef struct snap_parser {
    const char *name;
    uint64_t line; /* physical lines completed so far */
    tg__edges edges;
    char *err;
    size_t errlen;
} snap_parser;

static int is_blank(char c) { return c == ' ' || c == '\t'; }

static int is_digit(char c) { return (unsigned char)(c - '0') < 10; }

static int bad_line(snap_parser *p, const char *s, const char *eol)
{
    char q[80];
    tg__quote_line(s, (size_t)(eol - s), q, sizeof q);
    return tg__err(TESS_ERR_FORMAT, p->err, p->errlen,
                   "%s:%llu: expected two vertex ids, got \"%s\"", p->name,
                   (unsigned long long)p->line + 1, q);
}

/* Explain why no id starts at q (q points at something that is not a digit). */
static int bad_id(snap_parser *p, const char *s, const char *q, const char *eol)
{
    if (*q == '-' && q + 1 < eol && is_digit(q[1])) {
        char t[80];
        tg__quote_line(s, (size_t)(eol - s), t, sizeof t);
        return tg__err(TESS_ERR_FORMAT, p->err, p->errlen, "%s:%llu: negative vertex id in \"%s\"",
                       p->name, (unsigned long long)p->line + 1, t);
    }
    return bad_line(p, s, eol);
}

static int too_big(snap_parser *p, const char *digits, const char *eol)
{
    const char *e = digits;
    while (e < eol && is_digit(*e)) e++;
    char t[80];
    tg__quote_line(digits, (size_t)(e - digits), t, sizeof t);
    return tg__err(TESS_ERR_FORMAT, p->err, p->errlen,
                   "%s:%llu: vertex id %s does not fit in 64 bits", p->name,
                   (unsigned long long)p->line + 1, t);
}

/* Scan one id at *qp (a digit).  Returns 0, or an error for overflow. */
static int scan_id(snap_parser *p, const char **qp, const char *eol, uint64_t *out)
{
    const char *q = *qp;
    uint64_t v = 0;
    while (q < eol && is_digit(*q)) {
        unsigned d = (unsigned)(*q - '0');
        if (v > (UINT64_MAX - d) / 10) return too_big(p, *qp, eol);
        v = v * 10 + d;
        q++;
    }
    *qp = q;
    *out = v;
    return 0;
}

static int add_edge(snap_parser *p, uint64_t a, uint64_t b)
{
    tg__edges *e = &p->edges;
    if (e->n == e->cap && tg__edges_reserve(e, e->cap < 1024 ? 1024 : 2 * e->cap) != 0)
        return tg__err(TESS_ERR_NOMEM, p->err, p->errlen, "%s:%llu: out of memory", p->name,
                       (unsigned long long)p->line + 1);
    e->src[e->n] = a;
    e->dst[e->n] = b;
    e->n++;
    return 0;
}

/* One physical line [s, eol), eol excluding the '\n'. */
static int parse_line(snap_parser *p, const char *s, const char *eol)
{
    if (eol > s && eol[-1] == '\r') eol--;
    const char *q = s;
    while (q < eol && is_blank(*q)) q++;
    if (q == eol || *q == '#') return 0;
    uint64_t a, b;
    int rc;
    if (!is_digit(*q)) return bad_id(p, s, q, eol);
    if ((rc = scan_id(p, &q, eol, &a)) != 0) return rc;
    if (q == eol || !is_blank(*q)) return bad_line(p, s, eol);
    while (q < eol && is_blank(*q)) q++;
    if (q == eol || !is_digit(*q)) return q == eol ? bad_line(p, s, eol) : bad_id(p, s, q, eol);
    if ((rc = scan_id(p, &q, eol, &b)) != 0) return rc;
    while (q < eol && is_blank(*q)) q++;
    if (q != eol) return bad_line(p, s, eol);
    return add_edge(p, a, b);
}

/* Parse the complete lines of data[0, len); with `final`, also a last line
 * without '\n'.  *used is set to the bytes consumed. */
static int parse_lines(snap_parser *p, const char *data, size_t len, int final, size_t *used)
{
    const char *s = data, *end = data + len;
    while (s < end) {
        const char *nl = memchr(s, '\n', (size_t)(end - s));
        if (nl == NULL && !final) break;
        const char *eol = nl ? nl : end;
        int rc = parse_line(p, s, eol);
        if (rc != 0) return rc;
        p->line++;
        s = nl ? nl + 1 : end;
    }
    *used = (size_t)(s - data);
    return 0;
}

static int finish(snap_parser *p, tg_graph *g)
{
    int rc = tg__renumber(p->edges.src, p->edges.dst, p->edges.n, g, p->name, p->err, p->errlen);
    tg__edges_free(&p->edges);
    return rc;
}

int tg_parse_snap(const char *name, const char *data, size_t len, tg_graph *g, char *err,
                  size_t errlen)
{
    memset(g, 0, sizeof *g);
    snap_parser p = {.name = name, .err = err, .errlen = errlen};
    size_t used;
    int rc = parse_lines(&p, data, len, 1, &used);
    if (rc != 0) {
        tg__edges_free(&p.edges);
        return rc;
    }
    return finish(&p, g);
}

/* ---- byte sources: a plain file descriptor or a gzip stream on one ---- */

typedef struct snap_source {
    int fd;
    int gzip;
    int in_eof;
    int member_end;
    z_stream z;
    unsigned char *in;
} snap_source;

static int read_fd(snap_source *src, void *buf, size_t cap, size_t *got, snap_parser *p)
{
    ssize_t r;
    do r = read(src->fd, buf, cap > (1u << 30) ? (1u << 30) : cap);
    while (r < 0 && errno == EINTR);
    if (r < 0) return tg__err(TESS_ERR_IO, p->err, p->errlen, "%s: %s", p->name, strerror(errno));
    *got = (size_t)r;
    return 0;
}

static int gz_fail(snap_parser *p, const char *why)
{
    return tg__err(TESS_ERR_FORMAT, p->err, p->errlen, "%s: corrupt gzip stream: %s", p->name, why);
}

/* Inflate into out[cap]; *got 0 means the end of the last gzip member.
 * Concatenated members are read as one stream, like gzip -d does. */
static int read_gz(snap_source *src, char *out, size_t cap, size_t *got, snap_parser *p)
{
    z_stream *z = &src->z;
    z->next_out = (unsigned char *)out;
    z->avail_out = cap > (1u << 30) ? (1u << 30) : (unsigned)cap;
    unsigned want = z->avail_out;
    while (z->avail_out == want) {
        if (z->avail_in == 0 && !src->in_eof) {
            size_t n = 0;
            int rc = read_fd(src, src->in, SNAP_GZ_INPUT, &n, p);
            if (rc != 0) return rc;
            src->in_eof = n == 0;
            z->next_in = src->in;
            z->avail_in = (unsigned)n;
        }
        if (src->member_end) {
            if (z->avail_in == 0) break; /* clean end of the last member */
            if (inflateReset(z) != Z_OK) return gz_fail(p, "cannot restart inflate");
            src->member_end = 0;
        }
        if (z->avail_in == 0) return gz_fail(p, "unexpected end of file");
        int zr = inflate(z, Z_NO_FLUSH);
        if (zr == Z_STREAM_END) src->member_end = 1;
        else if (zr == Z_MEM_ERROR)
            return tg__err(TESS_ERR_NOMEM, p->err, p->errlen, "%s: out of memory", p->name);
        else if (zr != Z_OK && zr != Z_BUF_ERROR) return gz_fail(p, z->msg ? z->msg : zError(zr));
    }
    *got = want - z->avail_out;
    return 0;
}

static int source_read(snap_source *src, char *buf, size_t cap, size_t *got, snap_parser *p)
{
    return src->gzip ? read_gz(src, buf, cap, got, p) : read_fd(src, buf, cap, got, p);
}

static int source_open(snap_source *src, const char *path, uint64_t *size_out, snap_parser *p)
{
    memset(src, 0, sizeof *src);
    src->fd = open(path, O_RDONLY | O_CLOEXEC);
    if (src->fd < 0)
        return tg__err(TESS_ERR_IO, p->err, p->errlen, "%s: %s", path, strerror(errno));
    struct stat st;
    if (fstat(src->fd, &st) == 0 && S_ISDIR(st.st_mode))
        return tg__err(TESS_ERR_IO, p->err, p->errlen, "%s: %s", path, strerror(EISDIR));
    *size_out = S_ISREG(st.st_mode) ? (uint64_t)st.st_size : 0;
    unsigned char magic[2];
    ssize_t n = pread(src->fd, magic, 2, 0);
    if (n < 0) return tg__err(TESS_ERR_IO, p->err, p->errlen, "%s: %s", path, strerror(errno));
    src->gzip = n == 2 && magic[0] == 0x1f && magic[1] == 0x8b;
    if (!src->gzip) return 0;
    src->in = malloc(SNAP_GZ_INPUT);
    if (src->in == NULL || inflateInit2(&src->z, 15 + 16) != Z_OK) {
        free(src->in);
        src->in = NULL;
        return tg__err(TESS_ERR_NOMEM, p->err, p->errlen, "%s: out of memory", path);
    }
    return 0;
}

static void source_close(snap_source *src)
{
    if (src->in != NULL) inflateEnd(&src->z);
    free(src->in);
    if (src->fd >= 0) close(src->fd);
}

/* Keep whole lines in buf: parse what is complete, move the tail to the
 * front, grow the buffer only for a single line longer than it. */
static int stream_lines(snap_source *src, snap_parser *p)
{
    size_t cap = SNAP_BUF_INITIAL, have = 0;
    char *buf = malloc(cap);
    if (buf == NULL)
        return tg__err(TESS_ERR_NOMEM, p->err, p->errlen, "%s: out of memory", p->name);
    int rc = 0;
    for (;;) {
        if (have == cap) {
            char *bigger = cap < SIZE_MAX / 2 ? realloc(buf, 2 * cap) : NULL;
            if (bigger == NULL) {
                rc = tg__err(TESS_ERR_NOMEM, p->err, p->errlen, "%s:%llu: out of memory", p->name,
                             (unsigned long long)p->line + 1);
                break;
            }
            buf = bigger;
            cap *= 2;
        }
        size_t got = 0, used = 0;
        if ((rc = source_read(src, buf + have, cap - have, &got, p)) != 0) break;
        have += got;
        if ((rc = parse_lines(p, buf, have, got == 0, &used)) != 0 || got == 0) break;
        memmove(buf, buf + used, have - used);
        have -= used;
    }
    free(buf);
    return rc;
}

int tg_read_snap(const char *path, tg_graph *g, char *err, size_t errlen)
{
    memset(g, 0, sizeof *g);
    snap_parser p = {.name = path, .err = err, .errlen = errlen};
    snap_source src;
    uint64_t size = 0;
    int rc = source_open(&src, path, &size, &p);
    /* About 16 bytes per text line is typical; guessing saves reallocs. */
    if (rc == 0 && !src.gzip && size / 16 > 1024 && tg__edges_reserve(&p.edges, size / 16) != 0)
        rc = tg__err(TESS_ERR_NOMEM, err, errlen, "%s: out of memory", path);
    if (rc == 0) rc = stream_lines(&src, &p);
    source_close(&src);
    if (rc != 0) {
        tg__edges_free(&p.edges);
        return rc;
    }
    return finish(&p, g);
}
