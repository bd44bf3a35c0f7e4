/*
 * sar.h — synthetic aperture radar image formation by backprojection, as
 * the PERFECT suite formulates it, as a tiles-face job: one pixel of the
 * output image per cell of a 2-D area (rows, columns).  docs/tiles.md.
 */
#ifndef TESS_APPS_SAR_H
#define TESS_APPS_SAR_H

#include <stddef.h>
#include <stdio.h>
#include <stdint.h>
#include "tessera/tile.h"

#define SAR_HEADER_BYTES 80 /* magic .. dy of the TSAR file */
#define SAR_PIXEL_BYTES 8   /* complex64: float re, im */

/* A scene: the pulses (platform positions and range-compressed samples)
 * and the image grid.  Pixel (ix, iy) lies at (x0 + ix*dx, y0 + iy*dy, 0). */
typedef struct sar_scene {
    uint32_t pulses, bins, width, height;
    double r0, dr, ku; /* range of bin 0 (m), bin spacing (m), 2*pi*fc/c (rad/m) */
    double x0, y0, dx, dy;
    double *pos;    /* 3 per pulse: x, y, z */
    float *samples; /* 2 per bin, pulse-major: re, im */
} sar_scene;

/* Parse a TSAR file held in memory; `name` names it in errors.  0, or -1
 * with a one-line reason in err ("NAME: ..."). */
int sar_parse(const uint8_t *buf, size_t len, const char *name, sar_scene *s, char *err,
              size_t errlen);
/* Read and parse FILE (a regular file); 0 or -1 with err filled. */
int sar_read(const char *path, sar_scene *s, char *err, size_t errlen);
/* Write the scene as a TSAR file; 0 or -1 (errno). */
int sar_write(const sar_scene *s, FILE *fp);
/* A straight flight path past a few point scatterers on the ground plane
 * (positions in *targets, 2 per scatterer, at most 8), with noise:
 * sar_generate fills everything from the sizes and the seed.  0, or -1
 * (out of memory, or sizes it cannot build). */
int sar_generate(uint32_t pulses, uint32_t bins, uint32_t width, uint32_t height, uint64_t seed,
                 sar_scene *s, double targets[16], int *ntargets);
void sar_free(sar_scene *s);

/* The value of pixel (ix, iy) (docs/tiles.md gives the arithmetic). */
void sar_pixel(const sar_scene *s, int64_t ix, int64_t iy, float out[2]);
/* The cosine and sine of a phase, as all the kernels compute them
 * (sar_trig.h): the same bits on every processor. */
void sar_phase_cos_sin(double phase, double *c, double *s);
/* The tiles-face kernels; arg is the scene. */
int sar_kernel_cpu(const tess_tile_box *box, const void *in, void *out, void *device, void *arg);
extern const tess_tile_kernel_fn sar_kernel_opencl;
extern const tess_tile_kernel_fn sar_kernel_cuda; /* NULL without CUDA in the build */

#endif
