/*
 * texture_stream.c — streamed input and output of `tessera run texture`
 * (texture.h, docs/tiles.md "Streamed input and output").
 *
 * Input: a tile's records are made from the band of the image its blocks
 * and their one-pixel halo cover, read from the PGM/PPM file with pread on
 * the processor's own thread (one read for a band as wide as the image,
 * else one per pixel row), so no rank ever holds the whole image.
 *
 * Output: a line of text per block, in block order, whose length depends on
 * the numbers, so a tile's place in --output is not known until every
 * block before it was printed.  Each tile's lines are printed when it
 * arrives (on the output rank's controller thread, beside the processors'
 * work) and appended to a scratch file beside --output, a piece per block
 * row of the tile; after the run the pieces are copied in order.  Memory
 * holds the piece index (a few words per row of each tile), not the text.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "common.h"
#include "texture.h"
#include "tile_stream.h"

/* ---------------------------------------------------------------- input */

int tex_reader_open(tex_reader *src, tess_ctx *ctx, const char *path, const char *app)
{
    char err[512];
    src->ctx = ctx;
    src->path = path;
    src->fd = -1;
    int rank = tess_rank(ctx);
    if (tex_read_pnm(path, 1, &src->head, err, sizeof err) != 0) {
        if (rank == 0) app_error(app, "%s", err);
        return -1;
    }
    return app_tile_input_open(app, path, rank, &src->fd);
}

/* Pixel rows [y0, y1), columns [x0, x1) of the file into grey `band`. */
static int read_band(const tex_reader *src, int64_t y0, int64_t y1, int64_t x0, int64_t x1,
                     uint8_t *band)
{
    const tex_image *h = &src->head;
    size_t ch = (size_t)h->channels, w = (size_t)(x1 - x0);
    size_t rows = (size_t)(y1 - y0), whole = x0 == 0 && x1 == h->width;
    uint8_t *raw = ch == 1 ? band : malloc(ch * w * (whole ? rows : 1));
    if (raw == NULL) return tess_set_error(src->ctx, TESS_ERR_NOMEM, "out of memory for a band");
    int rc = 0;
    for (size_t r = 0; rc == 0 && r < rows; r += whole ? rows : 1) {
        size_t n = whole ? rows : 1;
        off_t at = (off_t)(h->raster_at + ch * ((size_t)(y0 + (int64_t)r) * h->width + (size_t)x0));
        uint8_t *dst = ch == 1 ? band + r * w : raw;
        rc = app_pread_full(src->fd, dst, ch * w * n, at);
        for (size_t i = 0; rc == 0 && ch == 3 && i < w * n; i++) /* as tex_parse_pnm */
            band[r * w + i] =
                (uint8_t)(((unsigned)dst[3 * i] + dst[3 * i + 1] + dst[3 * i + 2]) / 3);
    }
    int err = errno;
    if (raw != band) free(raw);
    return rc == 0 ? TESS_OK : app_tile_input_error(src->ctx, src->path, err);
}

int tex_read_records(const tess_tile_box *box, void *buf, void *arg)
{
    const tex_params *p = arg;
    int64_t s = p->block;
    int64_t y0 = box->lo[0] * s - 1, y1 = box->hi[0] * s + 1;
    int64_t x0 = box->lo[1] * s - 1, x1 = box->hi[1] * s + 1;
    y0 = y0 < 0 ? 0 : y0;
    x0 = x0 < 0 ? 0 : x0;
    y1 = y1 > p->height ? p->height : y1;
    x1 = x1 > p->width ? p->width : x1;
    uint8_t *band = malloc((size_t)(y1 - y0) * (size_t)(x1 - x0));
    if (band == NULL)
        return tess_set_error(p->src->ctx, TESS_ERR_NOMEM, "out of memory for a band");
    int rc = read_band(p->src, y0, y1, x0, x1, band);
    if (rc == TESS_OK) tex_band_records(band, y0, x0, (size_t)(x1 - x0), p, box, buf);
    free(band);
    return rc;
}

/* ---------------------------------------------------------------- output */

size_t tex_format_line(char *dst, int64_t by, int64_t bx, const float f[TEX_FEATURES])
{
    int n = snprintf(dst, TEX_LINE_MAX, "%lld\t%lld", (long long)by, (long long)bx);
    for (int k = 0; k < TEX_FEATURES; k++)
        n += snprintf(dst + n, TEX_LINE_MAX - (size_t)n, "\t%.9g", (double)f[k]);
    dst[n++] = '\n';
    return (size_t)n;
}

int tex_sink_open(tex_sink *k, tess_ctx *ctx, const char *path, const char *app)
{
    memset(k, 0, sizeof *k);
    k->ctx = ctx;
    k->path = path;
    const char *slash = strrchr(path, '/');
    const char *base = slash ? slash + 1 : path;
    size_t cap = strlen(path) + 32;
    char *name = malloc(cap);
    if (name != NULL) {
        snprintf(name, cap, "%.*s.%s.parts.XXXXXX", (int)(base - path), path, base);
        k->fd = mkostemp(name, O_CLOEXEC);
    }
    int err = name ? errno : ENOMEM;
    if (name && k->fd >= 0) unlink(name); /* gone with the process, whatever happens */
    free(name);
    if (name && k->fd >= 0) return 0;
    k->fd = -1;
    app_error(app, "cannot write %s: %s", path, strerror(err));
    return -1;
}

static int add_piece(tex_sink *k, int64_t row, int64_t col, uint64_t len)
{
    if (k->npieces == k->cap_pieces) {
        size_t cap = k->cap_pieces ? 2 * k->cap_pieces : 256;
        tex_piece *p = realloc(k->pieces, cap * sizeof *p);
        if (p == NULL) return -1;
        k->pieces = p;
        k->cap_pieces = cap;
    }
    k->pieces[k->npieces++] = (tex_piece){row, col, k->end, len};
    k->end += len;
    return 0;
}

int tex_sink_write(const tess_tile_box *box, const void *out, void *arg)
{
    tex_sink *k = arg;
    const float *f = out;
    size_t width = (size_t)(box->hi[1] - box->lo[1]), need = width * TEX_LINE_MAX;
    if (need > k->cap_text) {
        char *t = realloc(k->text, need);
        if (t == NULL) return tess_set_error(k->ctx, TESS_ERR_NOMEM, "out of memory for text");
        k->text = t;
        k->cap_text = need;
    }
    for (int64_t by = box->lo[0]; by < box->hi[0]; by++) {
        size_t len = 0;
        for (int64_t bx = box->lo[1]; bx < box->hi[1]; bx++, f += TEX_FEATURES)
            len += tex_format_line(k->text + len, by, bx, f);
        uint64_t at = k->end;
        if (add_piece(k, by, box->lo[1], len) != 0)
            return tess_set_error(k->ctx, TESS_ERR_NOMEM, "out of memory for text");
        if (app_pwrite_full(k->fd, k->text, len, (off_t)at) != 0)
            return tess_set_error(k->ctx, TESS_ERR_IO, "cannot write beside %s: %s", k->path,
                                  strerror(errno));
    }
    return TESS_OK;
}

static int piece_order(const void *a, const void *b)
{
    const tex_piece *x = a, *y = b;
    if (x->row != y->row) return x->row < y->row ? -1 : 1;
    return x->col < y->col ? -1 : x->col > y->col;
}

int tex_sink_finish(tex_sink *k, FILE *fp)
{
    enum { BUF = 1 << 20 };
    qsort(k->pieces, k->npieces, sizeof *k->pieces, piece_order);
    char *buf = malloc(BUF);
    if (buf == NULL) return -1;
    int rc = 0;
    for (size_t i = 0; rc == 0 && i < k->npieces; i++)
        for (uint64_t done = 0; rc == 0 && done < k->pieces[i].len;) {
            size_t n = k->pieces[i].len - done < BUF ? (size_t)(k->pieces[i].len - done) : BUF;
            rc = app_pread_full(k->fd, buf, n, (off_t)(k->pieces[i].off + done));
            if (rc == 0 && fwrite(buf, 1, n, fp) != n) rc = -1;
            done += n;
        }
    free(buf);
    return rc;
}

void tex_sink_free(tex_sink *k)
{
    if (k->fd >= 0) close(k->fd);
    free(k->pieces);
    free(k->text);
    memset(k, 0, sizeof *k);
    k->fd = -1;
}
