/*
 * png.c — 8-bit grayscale and RGB PNG files through libpng (Debian's
 * libpng-dev), for the pictures the tiles applications draw.
 */
#include <png.h>
#include <setjmp.h>
#include "common.h"

int app_png_write(FILE *fp, int width, int height, int channels, const uint8_t *pixels)
{
    if (width <= 0 || height <= 0 || (channels != 1 && channels != 3)) return -1;
    png_structp png = png_create_write_struct(PNG_LIBPNG_VER_STRING, NULL, NULL, NULL);
    png_infop info = png ? png_create_info_struct(png) : NULL;
    if (info == NULL) {
        png_destroy_write_struct(&png, NULL);
        return -1;
    }
    /* libpng reports errors by jumping back here */
    if (setjmp(png_jmpbuf(png))) {
        png_destroy_write_struct(&png, &info);
        return -1;
    }
    png_init_io(png, fp);
    png_set_IHDR(png, info, (png_uint_32)width, (png_uint_32)height, 8,
                 channels == 1 ? PNG_COLOR_TYPE_GRAY : PNG_COLOR_TYPE_RGB, PNG_INTERLACE_NONE,
                 PNG_COMPRESSION_TYPE_DEFAULT, PNG_FILTER_TYPE_DEFAULT);
    png_write_info(png, info);
    size_t stride = (size_t)width * (size_t)channels;
    for (int y = 0; y < height; y++) png_write_row(png, pixels + (size_t)y * stride);
    png_write_end(png, NULL);
    png_destroy_write_struct(&png, &info);
    return ferror(fp) ? -1 : 0;
}
