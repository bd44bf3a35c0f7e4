/*
 * texture.h — texture features of a (slide) image per block of S x S
 * pixels, as a tiles-face job: one block per cell of a 2-D area (block
 * rows, block columns).  Each block yields 6 grey-level co-occurrence
 * features and 10 local-binary-pattern bins (docs/tiles.md).
 */
#ifndef TESS_APPS_TEXTURE_H
#define TESS_APPS_TEXTURE_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include "tessera/tile.h"

#define TEX_FEATURES 16
#define TEX_OUT_BYTES (TEX_FEATURES * 4) /* float32 each */
#define TEX_LEVELS 32                    /* co-occurrence grey levels: v >> 3 */

/* Feature names in output order. */
extern const char *const tex_feature_names[TEX_FEATURES];

struct tex_reader;

typedef struct tex_params {
    int block;              /* S */
    uint32_t width, height; /* the image, pixels */
    int64_t grid_w, grid_h; /* whole blocks across and down */
    struct tex_reader *src; /* the image read by band (streamed), else NULL */
    const uint8_t *pixels;  /* else the whole image in memory (stage 1 of two), or NULL */
    /* stage 2 alone (--stage 2 --input FILE): the records file */
    tess_ctx *ctx;
    const char *records_path;
    int records_fd;
} tex_params;

/* An 8-bit grey image, row-major. */
typedef struct tex_image {
    uint32_t width, height;
    uint8_t *pixels;  /* NULL after a header-only parse */
    size_t raster_at; /* where the pixels start in the file */
    int channels;     /* 1 (P5) or 3 (P6) */
} tex_image;

/*
 * Parse a binary PGM (P5) or PPM (P6, grey = (r+g+b)/3 rounded down) held in
 * memory; `name` names it in errors.  With header_only, `buf` may hold only
 * the start of the file and `file_size` is the whole file's size (checked
 * against the header).  0, or -1 with a one-line reason in err.
 */
int tex_parse_pnm(const uint8_t *buf, size_t len, size_t file_size, int header_only,
                  const char *name, tex_image *img, char *err, size_t errlen);
/* Read FILE: everything, or only its header; 0 or -1 with err filled. */
int tex_read_pnm(const char *path, int header_only, tex_image *img, char *err, size_t errlen);
/* A synthetic tissue-like slide (stroma fibres, nuclei, density varying
 * over the slide), the same for a seed whoever generates it; 0 or -1. */
int tex_generate(uint32_t width, uint32_t height, uint64_t seed, tex_image *img);

/* Bytes of one block's input record: the block with a 1-pixel halo,
 * (S+2)^2 bytes row-major, 0 where the halo leaves the image. */
size_t tex_record_bytes(int block);
/* The records of block rows [row_lo, row_hi), every block column. */
void tex_make_records(const tex_image *img, const tex_params *p, int64_t row_lo, int64_t row_hi,
                      uint8_t *out);
/* The records of the blocks of `box` (row-major) from a band of the image:
 * pixel rows from y0, columns [x0, x0 + stride), which must hold every
 * pixel of the image the blocks and their halo touch. */
void tex_band_records(const uint8_t *band, int64_t y0, int64_t x0, size_t stride,
                      const tex_params *p, const tess_tile_box *box, uint8_t *out);

/*
 * Streamed input and output (texture_stream.c, docs/tiles.md): the image
 * file read by band as tiles need it, and the features written as tiles
 * finish to a scratch file beside --output (a piece per row of a tile),
 * put in order into --output after the run.
 */
typedef struct tex_reader {
    tess_ctx *ctx;
    const char *path;
    int fd;
    tex_image head; /* size, raster_at, channels; no pixels */
} tex_reader;
/* Open the image for reads by band; 0, or -1 after rank 0 printed why. */
int tex_reader_open(tex_reader *src, tess_ctx *ctx, const char *path, const char *app);
/* The job's read(): arg is the tex_params. */
int tex_read_records(const tess_tile_box *box, void *buf, void *arg);

typedef struct tex_piece {
    int64_t row, col;  /* its first block */
    uint64_t off, len; /* where its text lies in the scratch file */
} tex_piece;
typedef struct tex_sink {
    tess_ctx *ctx;
    const char *path; /* --output */
    int fd;           /* the scratch file (already unlinked), or -1 */
    uint64_t end;
    tex_piece *pieces;
    size_t npieces, cap_pieces;
    char *text;
    size_t cap_text;
} tex_sink;
/* Format block (by, bx)'s line ("by<TAB>bx<TAB>16 features\n") into dst
 * (TEX_LINE_MAX bytes); its length. */
#define TEX_LINE_MAX 512
size_t tex_format_line(char *dst, int64_t by, int64_t bx, const float f[TEX_FEATURES]);
/* Make the scratch file beside `path`; 0, or -1 after printing why. */
int tex_sink_open(tex_sink *k, tess_ctx *ctx, const char *path, const char *app);
/* The job's write(): arg is the tex_sink. */
int tex_sink_write(const tess_tile_box *box, const void *out, void *arg);
/* After the run: the pieces in block order into fp; 0 or -1 (errno). */
int tex_sink_finish(tex_sink *k, FILE *fp);
void tex_sink_free(tex_sink *k);
/* The 16 features of block (by, bx) from its record. */
void tex_block_features(const tex_params *p, int64_t by, int64_t bx, const uint8_t *rec,
                        float f[TEX_FEATURES]);
int tex_kernel_cpu(const tess_tile_box *box, const void *in, void *out, void *device, void *arg);
extern const tess_tile_kernel_fn tex_kernel_opencl;
extern const tess_tile_kernel_fn tex_kernel_cuda; /* NULL without CUDA in the build */

/*
 * Two stages (texture_stage.c, docs/tiles.md "Pipelines"): stage 1 turns
 * the image into block records (grey conversion of a PPM, the block and
 * its halo cut out), stage 2 computes the features from them.  Run at once
 * as a pipeline (--stages 2), or one after the other through a records
 * file (--stage 1 --output FILE, then --stage 2 --input FILE): magic
 * "TXRC", u32 version 1, u32 block, u32 width, u32 height, u32 0 (24
 * bytes), then every block's record in row-major block order.
 */
#define TEX_REC_HEADER 24
/* Stage 1's kernel: the records of box's blocks (arg: the tex_params). */
int tex_kernel_records(const tess_tile_box *box, const void *in, void *out, void *device,
                       void *arg);
/* The header of a records file for p. */
void tex_records_header(const tex_params *p, uint8_t out[TEX_REC_HEADER]);
/* Check a records file's header h and its size, and set p's block and
 * image size from it (texture_io.c, fuzzed by fuzz_tex_records); 0, or -1
 * with a one-line reason in err. */
int tex_records_parse(const uint8_t h[TEX_REC_HEADER], uint64_t file_size, const char *path,
                      tex_params *p, char *err, size_t len);
/* Open a records file and set p's block and image size from it; 0, or -1
 * with a one-line reason in err. */
int tex_records_open(const char *path, tex_params *p, char *err, size_t errlen);
/* Stage 2's read() from the records file (arg: the tex_params). */
int tex_read_records_file(const tess_tile_box *box, void *buf, void *arg);

#endif
