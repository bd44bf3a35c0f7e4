/*
 * texture_features.h — the per-block feature arithmetic, written once as a
 * macro (as bs_formula.h is) and expanded both as C (texture_kernel.c) and
 * as the text of the OpenCL kernel (texture_opencl.c), so both do the same
 * operations in the same order.  TEX_GLOBAL qualifies the record pointer.
 *
 * Co-occurrence: levels v >> 3 of each pixel and its right neighbour in the
 * block, counted both ways (symmetric), normalised; the 6 properties as
 * scikit-image's graycoprops defines them.  LBP: P=8, R=1, rotation-
 * invariant uniform, over block pixels whose 8 neighbours are in the image.
 */
#ifndef TESS_APPS_TEXTURE_FEATURES_H
#define TESS_APPS_TEXTURE_FEATURES_H

#define TEX_AS_C(...) __VA_ARGS__
#define TEX_AS_TEXT(...) #__VA_ARGS__

#define TEX_FORMULA(EMIT)                                                                        \
    EMIT(                                                                                        \
        void tex_glcm(TEX_GLOBAL const unsigned char *rec, int s, float *f) {                    \
            int cnt[32 * 32];                                                                    \
            for (int k = 0; k < 32 * 32; k++) cnt[k] = 0;                                        \
            for (int r = 0; r < s; r++) {                                                        \
                TEX_GLOBAL const unsigned char *row = rec + (r + 1) * (s + 2) + 1;               \
                for (int c = 0; c + 1 < s; c++) {                                                \
                    int i = row[c] >> 3, j = row[c + 1] >> 3;                                    \
                    cnt[i * 32 + j] += 1;                                                        \
                    cnt[j * 32 + i] += 1;                                                        \
                }                                                                                \
            }                                                                                    \
            double total = 2.0 * s * (s - 1);                                                    \
            double con = 0, dis = 0, hom = 0, asm2 = 0, mi = 0, mj = 0;                          \
            for (int i = 0; i < 32; i++)                                                         \
                for (int j = 0; j < 32; j++) {                                                   \
                    if (cnt[i * 32 + j] == 0) continue;                                          \
                    double p = cnt[i * 32 + j] / total, d = (double)(i - j);                     \
                    con += p * d * d;                                                            \
                    dis += p * (d < 0 ? -d : d);                                                 \
                    hom += p / (1.0 + d * d);                                                    \
                    asm2 += p * p;                                                               \
                    mi += p * i;                                                                 \
                    mj += p * j;                                                                 \
                }                                                                                \
            double vi = 0, vj = 0, cov = 0;                                                      \
            for (int i = 0; i < 32; i++)                                                         \
                for (int j = 0; j < 32; j++) {                                                   \
                    if (cnt[i * 32 + j] == 0) continue;                                          \
                    double p = cnt[i * 32 + j] / total, di = i - mi, dj = j - mj;                \
                    vi += p * di * di;                                                           \
                    vj += p * dj * dj;                                                           \
                    cov += p * di * dj;                                                          \
                }                                                                                \
            double si = tex_sqrt(vi), sj = tex_sqrt(vj);                                         \
            f[0] = (float)con;                                                                   \
            f[1] = (float)dis;                                                                   \
            f[2] = (float)hom;                                                                   \
            f[3] = (float)tex_sqrt(asm2);                                                        \
            f[4] = si < 1e-15 || sj < 1e-15 ? 1.0f : (float)(cov / (si * sj));                   \
            f[5] = (float)asm2;                                                                  \
        } void tex_lbp(TEX_GLOBAL const unsigned char *rec, int s, long gy0, long gx0, long h,   \
                       long w, float *f) {                                                       \
            const int dy[8] = {-1, -1, -1, 0, 1, 1, 1, 0};                                       \
            const int dx[8] = {-1, 0, 1, 1, 1, 0, -1, -1};                                       \
            int hist[10];                                                                        \
            for (int k = 0; k < 10; k++) hist[k] = 0;                                            \
            int n = 0;                                                                           \
            for (int r = 0; r < s; r++) {                                                        \
                long gy = gy0 + r;                                                               \
                if (gy < 1 || gy > h - 2) continue;                                              \
                for (int c = 0; c < s; c++) {                                                    \
                    long gx = gx0 + c;                                                           \
                    if (gx < 1 || gx > w - 2) continue;                                          \
                    int centre = rec[(r + 1) * (s + 2) + c + 1], bits[8], ones = 0, turns = 0;   \
                    for (int k = 0; k < 8; k++) {                                                \
                        bits[k] = rec[(r + 1 + dy[k]) * (s + 2) + c + 1 + dx[k]] >= centre;      \
                        ones += bits[k];                                                         \
                    }                                                                            \
                    for (int k = 0; k < 8; k++) turns += bits[k] != bits[(k + 1) % 8];           \
                    hist[turns <= 2 ? ones : 9] += 1;                                            \
                    n += 1;                                                                      \
                }                                                                                \
            }                                                                                    \
            for (int k = 0; k < 10; k++) f[6 + k] = n > 0 ? (float)((double)hist[k] / n) : 0.0f; \
        })

#endif
