/*
 * tile_stream.c — streamed input and output of the tiles-face applications
 * (tile_stream.h).
 */
#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include "tile_stream.h"

int app_pread_full(int fd, void *buf, size_t len, off_t off)
{
    uint8_t *p = buf;
    while (len > 0) {
        ssize_t n = pread(fd, p, len, off);
        if (n < 0 && errno == EINTR) continue;
        if (n <= 0) {
            if (n == 0) errno = 0; /* the file ended early */
            return -1;
        }
        p += n;
        len -= (size_t)n;
        off += n;
    }
    return 0;
}

int app_pwrite_full(int fd, const void *buf, size_t len, off_t off)
{
    const uint8_t *p = buf;
    while (len > 0) {
        ssize_t n = pwrite(fd, p, len, off);
        if (n < 0 && errno == EINTR) continue;
        if (n <= 0) {
            if (n == 0) errno = ENOSPC;
            return -1;
        }
        p += n;
        len -= (size_t)n;
        off += n;
    }
    return 0;
}

int app_tile_stream_output(const app_tile_cli *c, const char *path, int whole)
{
    struct stat st;
    if (path == NULL || c->in_memory || c->ckpt_dir != NULL || whole) return 0;
    /* a device or FIFO is written in place, in order (outfile.c): no offsets */
    return stat(path, &st) != 0 || S_ISREG(st.st_mode);
}

void app_tile_sink_init(app_tile_sink *k, tess_ctx *ctx, const tess_tile_job *job, const char *path,
                        off_t header)
{
    memset(k, 0, sizeof *k);
    k->ctx = ctx;
    k->path = path;
    k->fd = -1;
    k->header = header;
    k->cell_bytes = job->out_bytes;
    k->ndims = job->ndims;
    for (int d = 0; d < job->ndims; d++) k->extent[d] = job->extent[d];
}

int app_tile_sink_write(const tess_tile_box *box, const void *out, void *arg)
{
    app_tile_sink *k = arg;
    int nd = box->ndims;
    int64_t stride[TESS_TILE_MAX_DIMS]; /* cells between neighbours in the area */
    stride[nd - 1] = 1;
    for (int d = nd - 2; d >= 0; d--) stride[d] = stride[d + 1] * k->extent[d + 1];
    size_t run = (size_t)(box->hi[nd - 1] - box->lo[nd - 1]) * k->cell_bytes;
    int64_t idx[TESS_TILE_MAX_DIMS];
    for (int d = 0; d < nd; d++) idx[d] = box->lo[d];
    const uint8_t *p = out;
    for (;;) { /* a pwrite per run of the last dimension, odometer over the others */
        int64_t cell = 0;
        for (int d = 0; d < nd; d++) cell += idx[d] * stride[d];
        off_t at = k->header + (off_t)cell * (off_t)k->cell_bytes;
        if (k->fd < 0 || app_pwrite_full(k->fd, p, run, at) != 0)
            return tess_set_error(k->ctx, TESS_ERR_IO, "cannot write %s: %s", k->path,
                                  k->fd < 0 ? "not open" : strerror(errno));
        p += run;
        int d = nd - 2;
        for (; d >= 0; d--) {
            if (++idx[d] < box->hi[d]) break;
            idx[d] = box->lo[d];
        }
        if (d < 0) return TESS_OK;
    }
}

int app_tile_input_open(const char *app, const char *path, int rank, int *fd)
{
    *fd = open(path, O_RDONLY | O_CLOEXEC);
    if (*fd >= 0) return 0;
    if (rank == 0) app_error(app, "cannot read %s: %s", path, strerror(errno));
    return -1;
}

int app_tile_input_error(tess_ctx *ctx, const char *path, int err)
{
    return tess_set_error(ctx, TESS_ERR_IO, "cannot read %s: %s", path,
                          err ? strerror(err) : "short file (it changed during the run?)");
}
