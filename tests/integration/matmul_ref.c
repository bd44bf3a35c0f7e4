/*
 * matmul_ref.c — an independent reference for `tessera run matmul`: the
 * textbook triple loop (no BLAS, no blocks), sharing no code with
 * apps/matmul.
 *
 *   matmul_ref N A.bin B.bin C.bin BOUND.bin
 *
 * reads A and B (raw float64, row-major) and writes C = A * B the same way,
 * and |A| * |B| to BOUND.bin: both products are within N eps |A||B| of the
 * exact one, so they may differ by 2 N eps |A||B| element by element.
 * Its additions run in another order than tessera's blocked dgemm calls, so
 * the test compares within the rounding-error bound, not bit for bit.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

static double *load(const char *path, size_t n2)
{
    FILE *fp = fopen(path, "rb");
    double *m = malloc(n2 * sizeof *m);
    if (!fp || !m || fread(m, sizeof *m, n2, fp) != n2) {
        fprintf(stderr, "matmul_ref: cannot read %s\n", path);
        exit(1);
    }
    fclose(fp);
    return m;
}

int main(int argc, char **argv)
{
    if (argc != 6) {
        fprintf(stderr, "usage: matmul_ref N A.bin B.bin C.bin BOUND.bin\n");
        return 2;
    }
    size_t n = (size_t)atol(argv[1]), n2 = n * n;
    double *a = load(argv[2], n2), *b = load(argv[3], n2);
    double *c = calloc(n2, sizeof *c), *bound = calloc(n2, sizeof *bound);
    for (size_t i = 0; i < n; i++)
        for (size_t k = 0; k < n; k++)
            for (size_t j = 0; j < n; j++) {
                double x = a[i * n + k], y = b[k * n + j];
                c[i * n + j] += x * y;
                bound[i * n + j] += fabs(x) * fabs(y);
            }
    for (int f = 0; f < 2; f++) {
        FILE *fp = fopen(argv[4 + f], "wb");
        if (!fp || fwrite(f ? bound : c, sizeof *c, n2, fp) != n2 || fclose(fp) != 0) return 1;
    }
    free(a), free(b), free(c), free(bound);
    return 0;
}
