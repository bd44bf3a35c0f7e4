/*
 * texture_stage.c — texture as two stages (texture.h, docs/tiles.md
 * "Pipelines"): stage 1's kernel makes each block's record (the block and
 * its one-pixel halo, grey) from the image, read by band from its file or
 * cut from memory; stage 2 is the features kernel of a single-stage run,
 * so the two give its output to the bit.  Between them the records travel
 * through a pipeline's stream, or through a records file when the stages
 * run one after the other.
 */
#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include "texture.h"
#include "tile_stream.h"

int tex_kernel_records(const tess_tile_box *box, const void *in, void *out, void *device, void *arg)
{
    const tex_params *p = arg;
    (void)in, (void)device;
    if (p->src != NULL) return tex_read_records(box, out, arg);
    tex_band_records(p->pixels, 0, 0, p->width, p, box, out);
    return TESS_OK;
}

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

/* The header's fields into p, checked; 0 or -1 with err. */
static int parse_header(const uint8_t *h, const char *path, tex_params *p, char *err, size_t len)
{
    if (memcmp(h, "TXRC", 4) != 0 || get_u32(h + 4) != 1) {
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
    return 0;
}

int tex_records_open(const char *path, tex_params *p, char *err, size_t errlen)
{
    uint8_t h[TEX_REC_HEADER];
    struct stat st;
    p->records_path = path;
    p->records_fd = open(path, O_RDONLY | O_CLOEXEC);
    if (p->records_fd < 0 || fstat(p->records_fd, &st) != 0) {
        snprintf(err, errlen, "cannot read %s: %s", path, strerror(errno));
        return -1;
    }
    if (app_pread_full(p->records_fd, h, sizeof h, 0) != 0) {
        snprintf(err, errlen, "%s: shorter than a records header", path);
        return -1;
    }
    if (parse_header(h, path, p, err, errlen) != 0) return -1;
    uint64_t want = TEX_REC_HEADER + (uint64_t)p->grid_w * (uint64_t)p->grid_h *
                                         (uint64_t)tex_record_bytes(p->block);
    if ((uint64_t)st.st_size == want) return 0;
    snprintf(err, errlen, "%s: expected %llu bytes of records, found %llu", path,
             (unsigned long long)want, (unsigned long long)st.st_size);
    return -1;
}

int tex_read_records_file(const tess_tile_box *box, void *buf, void *arg)
{
    const tex_params *p = arg;
    size_t rec = tex_record_bytes(p->block), w = (size_t)(box->hi[1] - box->lo[1]);
    uint8_t *out = buf;
    for (int64_t by = box->lo[0]; by < box->hi[0]; by++, out += w * rec) {
        off_t at = (off_t)(TEX_REC_HEADER +
                           ((uint64_t)by * (uint64_t)p->grid_w + (uint64_t)box->lo[1]) * rec);
        if (app_pread_full(p->records_fd, out, w * rec, at) != 0)
            return app_tile_input_error(p->ctx, p->records_path, errno);
    }
    return TESS_OK;
}
