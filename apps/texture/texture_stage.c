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
    return tex_records_parse(h, (uint64_t)st.st_size, path, p, err, errlen);
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
