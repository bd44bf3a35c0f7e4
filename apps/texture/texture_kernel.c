/*
 * texture_kernel.c — the features of each block of a tile on the CPU
 * (texture_features.h holds the arithmetic, shared with OpenCL).
 */
#include <math.h>
#include "texture.h"
#include "texture_features.h"

#define TEX_GLOBAL
#define tex_sqrt sqrt
TEX_FORMULA(TEX_AS_C)

const char *const tex_feature_names[TEX_FEATURES] = {
    "contrast", "dissimilarity", "homogeneity", "energy", "correlation", "asm",  "lbp0", "lbp1",
    "lbp2",     "lbp3",          "lbp4",        "lbp5",   "lbp6",        "lbp7", "lbp8", "lbp9"};

void tex_block_features(const tex_params *p, int64_t by, int64_t bx, const uint8_t *rec,
                        float f[TEX_FEATURES])
{
    int s = p->block;
    tex_glcm(rec, s, f);
    tex_lbp(rec, s, (long)(by * s), (long)(bx * s), (long)p->height, (long)p->width, f);
}

int tex_kernel_cpu(const tess_tile_box *box, const void *in, void *out, void *device, void *arg)
{
    (void)device;
    const tex_params *p = arg;
    const uint8_t *rec = in;
    float *f = out;
    size_t step = tex_record_bytes(p->block);
    for (int64_t by = box->lo[0]; by < box->hi[0]; by++)
        for (int64_t bx = box->lo[1]; bx < box->hi[1]; bx++, rec += step, f += TEX_FEATURES)
            tex_block_features(p, by, bx, rec, f);
    return TESS_OK;
}
