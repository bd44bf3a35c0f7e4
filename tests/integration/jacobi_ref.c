/*
 * jacobi_ref.c — the independent sequential Jacobi of DESIGN §6, for the
 * tests: a direct double loop over an (R+2) x (C+2) array, written without
 * the tick face.  Usage: jacobi_ref R C T OUT (the --dump format).
 */
#include <stdio.h>
#include <stdlib.h>

int main(int argc, char **argv)
{
    if (argc != 5) {
        fprintf(stderr, "usage: jacobi_ref ROWS COLS TICKS OUT\n");
        return 2;
    }
    long R = atol(argv[1]), C = atol(argv[2]), T = atol(argv[3]);
    long W = C + 2, H = R + 2;
    double *u = calloc((size_t)(W * H), sizeof *u), *v = calloc((size_t)(W * H), sizeof *v);
    if (u == NULL || v == NULL) return 1;
    for (long j = 0; j < W; j++) u[j] = v[j] = 1.0;
    for (long t = 0; t < T; t++) {
        for (long i = 1; i <= R; i++)
            for (long j = 1; j <= C; j++)
                v[i * W + j] = 0.25 * ((u[(i - 1) * W + j] + u[(i + 1) * W + j]) +
                                       (u[i * W + j - 1] + u[i * W + j + 1]));
        double *s = u;
        u = v;
        v = s;
    }
    FILE *fp = fopen(argv[4], "wb");
    if (fp == NULL || fwrite(u, sizeof *u, (size_t)(W * H), fp) != (size_t)(W * H) || fclose(fp))
        return 1;
    free(u);
    free(v);
    return 0;
}
