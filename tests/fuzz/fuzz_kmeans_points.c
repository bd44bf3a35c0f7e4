/*
 * fuzz_kmeans_points.c — libFuzzer target for k-means' points file reader
 * (`tessera run kmeans --points FILE`, apps/kmeans/points.c
 * kmeans_points_read) and its --gen N:DIM:K[:SEED] parser
 * (kmeans_gen_parse).  Any file gives points or a one-line error naming the
 * file, never a crash or a leak.  Accepted points have 1..4096 coordinates,
 * all finite and within KMEANS_MAX_ABS, one point per line that is neither
 * a comment nor refused, and written back with %.17g (as gen-points writes
 * them) they read back to the same doubles.  The first line of the input
 * is also a --gen spec: an accepted one is in range (1 <= K <= N, DIM <=
 * 4096) and its canonical text parses back to it.  The bytes go through a
 * memfd, a regular file the reader opens by path.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>
#include <math.h>

#include "kmeans.h"

/* A memfd holding the bytes, opened by the reader as "/proc/self/fd/N". */
static const char *as_file(int *fd, char *path, size_t cap, const void *data, size_t size)
{
    if (*fd < 0) {
        if ((*fd = memfd_create("points", 0)) < 0) return NULL;
        snprintf(path, cap, "/proc/self/fd/%d", *fd);
    }
    if (ftruncate(*fd, 0) != 0 || pwrite(*fd, data, size, 0) != (ssize_t)size) return NULL;
    return path;
}

/* Physical lines whose first non-blank character is not '#'. */
static uint64_t data_lines(const uint8_t *data, size_t size)
{
    uint64_t n = 0;
    for (size_t i = 0; i < size;) {
        size_t j = i;
        while (j < size && data[j] != '\n' &&
               (data[j] == ' ' || (data[j] >= '\t' && data[j] <= '\r')))
            j++;
        if (j == size || data[j] != '#') n++;
        while (i < size && data[i] != '\n') i++;
        i++; /* past the newline, or past the end */
    }
    return n;
}

static void write_back(const kmeans_points *p, int *fd, char *path, size_t cap)
{
    size_t len = 0, room = (size_t)p->n * (size_t)p->dim * 26 + 1;
    char *text = malloc(room);
    if (text == NULL) return;
    for (uint64_t i = 0; i < p->n; i++)
        for (int d = 0; d < p->dim; d++)
            len +=
                (size_t)snprintf(text + len, room - len, "%.17g%c",
                                 p->coords[i * (uint64_t)p->dim + d], d + 1 < p->dim ? ' ' : '\n');
    kmeans_points again;
    char err[512];
    const char *file = as_file(fd, path, cap, text, len);
    free(text);
    if (file == NULL) return;
    if (kmeans_points_read(path, &again, err, sizeof err) != 0 || again.n != p->n ||
        again.dim != p->dim ||
        memcmp(again.coords, p->coords, (size_t)p->n * (size_t)p->dim * sizeof(double)) != 0)
        __builtin_trap();
    kmeans_points_free(&again);
}

static void check_points(const uint8_t *data, size_t size)
{
    static int fd = -1;
    static char path[64];
    kmeans_points p;
    char err[512];
    if (as_file(&fd, path, sizeof path, data, size) == NULL) return;
    if (kmeans_points_read(path, &p, err, sizeof err) != 0) {
        if (strstr(err, path) == NULL || strchr(err, '\n') != NULL) __builtin_trap();
        return;
    }
    if (p.n == 0 || p.dim < 1 || p.dim > KMEANS_MAX_DIM || p.n != data_lines(data, size))
        __builtin_trap();
    for (uint64_t i = 0; i < p.n * (uint64_t)p.dim; i++)
        if (!isfinite(p.coords[i]) || fabs(p.coords[i]) > KMEANS_MAX_ABS) __builtin_trap();
    write_back(&p, &fd, path, sizeof path);
    kmeans_points_free(&p);
}

static void check_gen(const uint8_t *data, size_t size)
{
    char text[96], again_text[96], err[256];
    size_t n = 0;
    while (n < size && n + 1 < sizeof text && data[n] != '\n') text[n] = (char)data[n], n++;
    text[n] = '\0';
    kmeans_gen_spec g, again;
    if (kmeans_gen_parse(text, &g, err, sizeof err) != 0) {
        if (err[0] == '\0') __builtin_trap();
        return;
    }
    if (g.n < 1 || g.n > KMEANS_MAX_POINTS || g.dim < 1 || g.dim > KMEANS_MAX_DIM || g.k < 1 ||
        g.k > KMEANS_MAX_K || (uint64_t)g.k > g.n)
        __builtin_trap();
    snprintf(again_text, sizeof again_text, "%llu:%d:%d:%llu", (unsigned long long)g.n, g.dim, g.k,
             (unsigned long long)g.seed);
    if (kmeans_gen_parse(again_text, &again, err, sizeof err) != 0 ||
        memcmp(&again, &g, sizeof g) != 0)
        __builtin_trap();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    check_points(data, size);
    check_gen(data, size);
    return 0;
}
