/*
 * texture_io.c — the images of `tessera run texture`: binary PGM/PPM files
 * (netpbm's P5 and P6, 8 bits), the synthetic slides of `--gen`, and the
 * per-block input records the storage layer moves.
 */
#include <ctype.h>
#include <math.h>
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "tessera/rng.h"
#include "slurp.h"
#include "texture.h"

#define TEX_HEADER_MAX 65536 /* header bytes read by a header-only parse */

/* The next header number after blanks and '#' comments; -1 if none. */
static long header_number(const uint8_t *buf, size_t len, size_t *at)
{
    for (;;) {
        while (*at < len && isspace(buf[*at])) ++*at;
        if (*at < len && buf[*at] == '#') {
            while (*at < len && buf[*at] != '\n' && buf[*at] != '\r') ++*at;
            continue;
        }
        break;
    }
    long v = 0;
    size_t start = *at;
    while (*at < len && isdigit(buf[*at]) && *at - start < 9) v = v * 10 + (buf[(*at)++] - '0');
    if (*at == start || (*at < len && isdigit(buf[*at]))) return -1;
    return v;
}

static int parse_header(const uint8_t *buf, size_t len, const char *name, int *channels,
                        long dims[3], size_t *raster_at, char *err, size_t errlen)
{
    if (len < 2 || buf[0] != 'P' || (buf[1] != '5' && buf[1] != '6'))
        return app_fail(err, errlen, "%s: not a binary PGM (P5) or PPM (P6) image", name);
    *channels = buf[1] == '5' ? 1 : 3;
    size_t at = 2;
    static const char *const what[3] = {"width", "height", "maxval"};
    for (int k = 0; k < 3; k++) {
        dims[k] = header_number(buf, len, &at);
        if (dims[k] < 0) return app_fail(err, errlen, "%s: cannot read the %s", name, what[k]);
    }
    if (at >= len || !isspace(buf[at]))
        return app_fail(err, errlen, "%s: no blank after the maxval", name);
    *raster_at = at + 1;
    if (dims[0] == 0 || dims[1] == 0)
        return app_fail(err, errlen, "%s: image %ld x %ld has no pixels", name, dims[0], dims[1]);
    if (dims[0] > (1L << 20) || dims[1] > (1L << 20))
        return app_fail(err, errlen, "%s: image %ld x %ld (each side at most 1048576)", name,
                        dims[0], dims[1]);
    if (dims[2] < 1 || dims[2] > 255)
        return app_fail(err, errlen, "%s: maxval %ld (only 8-bit images: 1..255)", name, dims[2]);
    return 0;
}

int tex_parse_pnm(const uint8_t *buf, size_t len, size_t file_size, int header_only,
                  const char *name, tex_image *img, char *err, size_t errlen)
{
    memset(img, 0, sizeof *img);
    int channels = 1;
    long dims[3];
    size_t at = 0;
    /* Every rank parses the header from the same first bytes, whether it
     * read the whole file (the data rank) or only those bytes: a header
     * that does not fit in them is refused alike everywhere. */
    size_t head = len < TEX_HEADER_MAX ? len : TEX_HEADER_MAX;
    if (parse_header(buf, head, name, &channels, dims, &at, err, errlen) != 0) {
        if (head == TEX_HEADER_MAX)
            return app_fail(err, errlen, "%s: no complete header in the first %d bytes", name,
                            TEX_HEADER_MAX);
        return -1;
    }
    uint64_t pixels = (uint64_t)dims[0] * (uint64_t)dims[1];
    uint64_t want = pixels * (uint64_t)channels, have = file_size - at;
    if (have != want)
        return app_fail(err, errlen, "%s: expected %llu bytes of pixels, found %llu", name,
                        (unsigned long long)want, (unsigned long long)have);
    img->width = (uint32_t)dims[0];
    img->height = (uint32_t)dims[1];
    img->raster_at = at;
    img->channels = channels;
    if (header_only) return 0;
    img->pixels = malloc((size_t)pixels);
    if (img->pixels == NULL)
        return app_fail(err, errlen, "%s: out of memory for %llu pixels", name,
                        (unsigned long long)pixels);
    const uint8_t *raster = buf + at;
    if (channels == 1) {
        memcpy(img->pixels, raster, (size_t)pixels);
    } else {
        for (uint64_t i = 0; i < pixels; i++)
            img->pixels[i] =
                (uint8_t)(((unsigned)raster[3 * i] + raster[3 * i + 1] + raster[3 * i + 2]) / 3);
    }
    return 0;
}

int tex_read_pnm(const char *path, int header_only, tex_image *img, char *err, size_t errlen)
{
    memset(img, 0, sizeof *img);
    uint8_t *buf;
    size_t len, size;
    if (app_slurp(path, header_only ? TEX_HEADER_MAX : 0, &buf, &len, &size, err, errlen) != 0)
        return -1;
    int rc = tex_parse_pnm(buf, len, size, header_only, path, img, err, errlen);
    free(buf);
    return rc;
}

/* ---------------------------------------------------------------- --gen */

#define TEX_CELL 12 /* one candidate nucleus per cell of 12 x 12 pixels */

/* Tissue density in [0, 1], smooth over the slide: the sum of a term per
 * column and a term per row (phases a, b from the seed). */
static double density_x(double a, double x) { return 0.3 * sin(x / 97.0 + a); }
static double density_y(double b, double y) { return 0.3 * cos(y / 131.0 + b); }
static double density_of(double dx, double dy)
{
    double d = 0.5 + dx + dy;
    return d < 0 ? 0 : d > 1 ? 1 : d;
}

/* At most one nucleus per cell of TEX_CELL x TEX_CELL pixels: more where the
 * tissue is denser.  dark 0: none. */
typedef struct tex_nucleus {
    double x, y, r, dark;
} tex_nucleus;

static tex_nucleus make_nucleus(uint64_t seed, double a, double b, uint64_t i, uint64_t j)
{
    uint64_t cell = j << 32 | i;
    tex_nucleus n;
    n.x = ((double)i + tess_rng_unit(seed, 3, cell)) * TEX_CELL;
    n.y = ((double)j + tess_rng_unit(seed, 4, cell)) * TEX_CELL;
    n.r = 2.5 + 3.5 * tess_rng_unit(seed, 5, cell);
    n.dark = 90 + 60 * tess_rng_unit(seed, 6, cell);
    double d = density_of(density_x(a, n.x), density_y(b, n.y));
    if (tess_rng_unit(seed, 2, cell) > 0.8 * d) n.dark = 0;
    return n;
}

/* Darkness of the nuclei covering (x, y) among the cells around it. */
static double nucleus_at(const tex_nucleus *cells, int64_t cw, int64_t ch, int64_t x, int64_t y)
{
    int64_t cx = x / TEX_CELL, cy = y / TEX_CELL;
    double dark = 0;
    for (int64_t j = cy - 1; j <= cy + 1; j++)
        for (int64_t i = cx - 1; i <= cx + 1; i++) {
            if (i < 0 || j < 0 || i >= cw || j >= ch) continue;
            const tex_nucleus *n = &cells[j * cw + i];
            double d2 = (x - n->x) * (x - n->x) + (y - n->y) * (y - n->y);
            if (n->dark > 0 && d2 < n->r * n->r) {
                double v = n->dark - 30 * (1 - sqrt(d2) / n->r);
                if (v > dark) dark = v;
            }
        }
    return dark;
}

/* What every row of a slide is made from. */
typedef struct tex_gen {
    uint64_t seed;
    double b;
    const tex_nucleus *cells;
    int64_t cw, ch;
    const double *column;
    tex_image *img;
} tex_gen;

static void gen_rows(const tex_gen *g, uint32_t y0, uint32_t y1)
{
    uint32_t width = g->img->width;
    for (uint32_t y = y0; y < y1; y++) {
        double row = density_y(g->b, y), wave = 3 * sin(y / 40.0);
        for (uint32_t x = 0; x < width; x++) {
            double d = density_of(g->column[x], row);
            double fibre = sin((0.8 * x + 0.3 * y) / 5.0 + wave);
            double v = 225 - 45 * d + 18 * d * fibre;
            double dark = nucleus_at(g->cells, g->cw, g->ch, x, y);
            if (dark > 0) v = 255 - dark;
            v += 16 * (tess_rng_unit(g->seed, 7, (uint64_t)y << 32 | x) - 0.5);
            g->img->pixels[(size_t)y * width + x] = (uint8_t)(v < 0 ? 0 : v > 255 ? 255 : v);
        }
    }
}

typedef struct gen_band {
    const tex_gen *g;
    uint32_t y0, y1;
    pthread_t thread;
    int started;
} gen_band;

static void *gen_band_main(void *arg)
{
    gen_band *b = arg;
    gen_rows(b->g, b->y0, b->y1);
    return NULL;
}

/* The rows in bands, one thread a band and a core (a pixel is a function of
 * the seed and its place alone: the same bytes for any number of threads).
 * A 32768^2 slide took about a minute on one core of the GPU machine,
 * longer than the job it feeds.  A band whose thread cannot start is made
 * here. */
static void gen_all_rows(const tex_gen *g)
{
    enum { MAX_BANDS = 64, MIN_BAND_PIXELS = 1 << 20 };
    cpu_set_t set; /* the cores this process may run on (mpirun --bind-to, taskset) */
    long cores = sched_getaffinity(0, sizeof set, &set) == 0 ? CPU_COUNT(&set)
                                                             : sysconf(_SC_NPROCESSORS_ONLN);
    uint64_t pixels = (uint64_t)g->img->width * g->img->height;
    int n = cores < 1 ? 1 : cores > MAX_BANDS ? MAX_BANDS : (int)cores;
    if ((uint64_t)n > pixels / MIN_BAND_PIXELS) n = (int)(pixels / MIN_BAND_PIXELS);
    if (n <= 1) {
        gen_rows(g, 0, g->img->height);
        return;
    }
    gen_band bands[MAX_BANDS];
    for (int i = 0; i < n; i++) {
        bands[i] = (gen_band){.g = g,
                              .y0 = (uint32_t)((uint64_t)g->img->height * i / n),
                              .y1 = (uint32_t)((uint64_t)g->img->height * (i + 1) / n)};
        if (i > 0)
            bands[i].started =
                pthread_create(&bands[i].thread, NULL, gen_band_main, &bands[i]) == 0;
    }
    for (int i = 0; i < n; i++)
        if (!bands[i].started) gen_rows(g, bands[i].y0, bands[i].y1);
    for (int i = 1; i < n; i++)
        if (bands[i].started) pthread_join(bands[i].thread, NULL);
}

int tex_generate(uint32_t width, uint32_t height, uint64_t seed, tex_image *img)
{
    double a = 6.28318 * tess_rng_unit(seed, 1, 0), b = 6.28318 * tess_rng_unit(seed, 1, 1);
    int64_t cw = width / TEX_CELL + 1, ch = height / TEX_CELL + 1;
    tex_nucleus *cells = malloc(sizeof *cells * (size_t)(cw * ch));
    double *column = malloc(sizeof *column * width);
    img->width = width;
    img->height = height;
    img->pixels = cells && column ? malloc((size_t)width * height) : NULL;
    if (img->pixels == NULL) {
        free(cells);
        free(column);
        return -1;
    }
    for (int64_t j = 0; j < ch; j++)
        for (int64_t i = 0; i < cw; i++)
            cells[j * cw + i] = make_nucleus(seed, a, b, (uint64_t)i, (uint64_t)j);
    for (uint32_t x = 0; x < width; x++) column[x] = density_x(a, x);
    tex_gen g = {
        .seed = seed, .b = b, .cells = cells, .cw = cw, .ch = ch, .column = column, .img = img};
    gen_all_rows(&g);
    free(cells);
    free(column);
    return 0;
}

/* ---------------------------------------------------------------- records */

size_t tex_record_bytes(int block) { return (size_t)(block + 2) * (size_t)(block + 2); }

static void put_u32(uint8_t *p, uint32_t v)
{
    for (int i = 0; i < 4; i++) p[i] = (uint8_t)(v >> (8 * i));
}

static uint32_t get_u32(const uint8_t *p)
{
    return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

void tex_records_header(const tex_params *p, uint8_t out[TEX_REC_HEADER])
{
    memcpy(out, "TXRC", 4);
    put_u32(out + 4, 1);
    put_u32(out + 8, (uint32_t)p->block);
    put_u32(out + 12, p->width);
    put_u32(out + 16, p->height);
    put_u32(out + 20, 0);
}

int tex_records_parse(const uint8_t h[TEX_REC_HEADER], uint64_t file_size, const char *path,
                      tex_params *p, char *err, size_t len)
{
    if (memcmp(h, "TXRC", 4) != 0 || get_u32(h + 4) != 1 || get_u32(h + 20) != 0) {
        snprintf(err, len, "%s: not a texture records file (TXRC version 1)", path);
        return -1;
    }
    uint32_t block = get_u32(h + 8);
    p->width = get_u32(h + 12);
    p->height = get_u32(h + 16);
    if (block < 2 || block > 4096 || p->width < block || p->height < block ||
        p->width > (1u << 20) || p->height > (1u << 20)) {
        snprintf(err, len, "%s: block %u of a %u x %u image", path, block, p->width, p->height);
        return -1;
    }
    p->block = (int)block;
    p->grid_w = p->width / block;
    p->grid_h = p->height / block;
    uint64_t want = TEX_REC_HEADER + (uint64_t)p->grid_w * (uint64_t)p->grid_h *
                                         (uint64_t)tex_record_bytes(p->block);
    if (file_size == want) return 0;
    snprintf(err, len, "%s: expected %llu bytes of records, found %llu", path,
             (unsigned long long)want, (unsigned long long)file_size);
    return -1;
}

void tex_band_records(const uint8_t *band, int64_t y0, int64_t x0, size_t stride,
                      const tex_params *p, const tess_tile_box *box, uint8_t *out)
{
    int s = p->block;
    for (int64_t by = box->lo[0]; by < box->hi[0]; by++)
        for (int64_t bx = box->lo[1]; bx < box->hi[1]; bx++, out += tex_record_bytes(s))
            for (int r = -1; r <= s; r++) {
                int64_t gy = by * s + r;
                uint8_t *dst = out + (size_t)(r + 1) * (size_t)(s + 2);
                for (int c = -1; c <= s; c++) {
                    int64_t gx = bx * s + c;
                    int inside = gy >= 0 && gy < p->height && gx >= 0 && gx < p->width;
                    dst[c + 1] = inside ? band[(size_t)(gy - y0) * stride + (size_t)(gx - x0)] : 0;
                }
            }
}

void tex_make_records(const tex_image *img, const tex_params *p, int64_t row_lo, int64_t row_hi,
                      uint8_t *out)
{
    tess_tile_box rows = {.ndims = 2, .lo = {row_lo, 0}, .hi = {row_hi, p->grid_w}};
    tex_band_records(img->pixels, 0, 0, img->width, p, &rows, out);
}
