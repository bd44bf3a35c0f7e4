/*
 * sar_trig.h — the cosine and sine of a double phase, written once for the
 * CPU, OpenCL and CUDA SAR kernels: SAR_TRIG(M) hands the code to M, which
 * either compiles it (SAR_AS_C) or makes it a string for the OpenCL program
 * (SAR_AS_TEXT), as bs_formula.h does for Black-Scholes.  Each platform's
 * own cos and sin differ in the last place, and so did the images; this
 * code uses only +, -, * and integer operations, which every IEEE machine
 * does alike without contraction, so the three kernels agree to the bit.
 *
 * The phase x is reduced to r in about [-pi/4, pi/4] and a quadrant q with
 * x = q*pi/2 + r.  Below 2^32 (every phase of a real scene: ku <= 1e6 rad/m
 * and a 2 km range make 4e9) a Cody-Waite reduction: k = x*2/pi rounded,
 * pi/2 in four 21-bit pieces (k < 2^32, so k*piece is exact) and a fifth.
 * Above, Payne-Hanek: 128 bits of 2/pi at the phase's exponent, multiplied
 * by its 53-bit integer significand, give x*2/pi modulo 4 in 64-bit fixed
 * point.  Then the Taylor polynomials of sin (to r^17) and cos (to r^18),
 * whose truncation is under 1e-19 on [-pi/4, pi/4].  Against glibc the
 * largest difference measured is 2.2e-16, from 1e-9 to 1e300 and near
 * multiples of pi/2 (tests/unit/test_app_sar_trig.c): far below the float
 * rounding of the kernels.
 *
 * Each side defines sar_u64 and sar_i64 (64-bit integers), sar_bits (the
 * bits of a double) and SAR_TABLE (the qualifiers of a constant table).
 */
#ifndef TESS_APPS_SAR_TRIG_H
#define TESS_APPS_SAR_TRIG_H

#define SAR_AS_C(...) __VA_ARGS__
#define SAR_AS_TEXT(...) #__VA_ARGS__

/* 2/pi in 64-bit words after a word of zeros (so a window may start before
 * its first bit); 18 words reach the bits a double's largest exponent
 * needs.  sar_mulhi is the high half of a 64x64-bit product, in 32-bit
 * parts (OpenCL C and CUDA have no common 128-bit type). */
#define SAR_TRIG(M)                                                                                \
    M(                                                                                             \
        SAR_TABLE sar_u64                                                                          \
            sar_2_over_pi[19] = {0x0000000000000000UL, 0xa2f9836e4e441529UL, 0xfc2757d1f534ddc0UL, \
                                 0xdb6295993c439041UL, 0xfe5163abdebbc561UL, 0xb7246e3a424dd2e0UL, \
                                 0x06492eea09d1921cUL, 0xfe1deb1cb129a73eUL, 0xe88235f52ebb4484UL, \
                                 0xe99c7026b45f7e41UL, 0x3991d639835339f4UL, 0x9c845f8bbdf9283bUL, \
                                 0x1ff897ffde05980fUL, 0xef2f118b5a0a6d1fUL, 0x6d367ecf27cb09b7UL, \
                                 0x4f463f669e5fea2dUL, 0x7527bac7ebe5f17bUL, 0x3d0739f78a5292eaUL, \
                                 0x6bfb5fb11f8d5d08UL};                                            \
        static sar_u64 sar_mulhi(sar_u64 a, sar_u64 b) {                                           \
            sar_u64 a0 = a & 0xffffffffUL, a1 = a >> 32, b0 = b & 0xffffffffUL, b1 = b >> 32;      \
            sar_u64 p01 = a0 * b1, p10 = a1 * b0;                                                  \
            sar_u64 mid = ((a0 * b0) >> 32) + (p01 & 0xffffffffUL) + (p10 & 0xffffffffUL);         \
            return a1 * b1 + (p01 >> 32) + (p10 >> 32) + (mid >> 32);                              \
        } /* ax >= 2^32, finite: r and the quadrant of ax = q*pi/2 + r */                          \
        static double sar_reduce_big(double ax, int *q) {                                          \
            sar_u64 u = sar_bits(ax);                                                              \
            int e = (int)(u >> 52) - 1075; /* ax = m * 2^e */                                      \
            sar_u64 m = (u & 0x000fffffffffffffUL) | 0x0010000000000000UL;                         \
            /* the window starts at bit e-1 of 2/pi: earlier bits times m*2^e are 0 mod 4 */       \
            int j = e + 62;                                                                        \
            int w = j >> 6, sh = j & 63;                                                           \
            sar_u64 w0 = sar_2_over_pi[w] << sh, w1 = sar_2_over_pi[w + 1] << sh;                  \
            if (sh) {                                                                              \
                w0 |= sar_2_over_pi[w + 1] >> (64 - sh);                                           \
                w1 |= sar_2_over_pi[w + 2] >> (64 - sh);                                           \
            }                                                                                      \
            sar_u64 f = m * w0 + sar_mulhi(m, w1); /* ax*2/pi mod 4, in units of 2^-62 */          \
            *q = (int)((f + 0x2000000000000000UL) >> 62);                                          \
            sar_u64 g = f << 2; /* the fraction; from 1/2 up it is negative */                     \
            double t = (g >> 63) ? -(double)(0UL - g) : (double)g;                                 \
            return t * 8.515303950216386e-20; /* pi/2 * 2^-64 */                                   \
        } static void sar_cos_sin(double x, double *c, double *s) {                                \
            double ax = x < 0 ? -x : x, r;                                                         \
            int q;                                                                                 \
            if (ax < 4294967296.0) {                                                               \
                double k = (x * 0.6366197723675814 + 6755399441055744.0) - 6755399441055744.0;     \
                r = (((x - k * 1.570796012878418) - k * 3.139164164167596e-07) -                   \
                     k * 6.22337468017542e-14) -                                                   \
                    k * -2.5082791584901525e-20 - k * 3.5215598651832e-27;                         \
                q = (int)(sar_i64)k;                                                               \
            } else if (ax - ax != 0) { /* infinite or NaN */                                       \
                *c = *s = x - x;                                                                   \
                return;                                                                            \
            } else {                                                                               \
                r = sar_reduce_big(ax, &q);                                                        \
                if (x < 0) {                                                                       \
                    r = -r;                                                                        \
                    q = -q;                                                                        \
                }                                                                                  \
            }                                                                                      \
            double z = r * r;                                                                      \
            double sr = r + r * z *                                                                \
                                (-0.16666666666666666 +                                            \
                                 z * (0.008333333333333333 +                                       \
                                      z * (-0.0001984126984126984 +                                \
                                           z * (2.7557319223985893e-06 +                           \
                                                z * (-2.505210838544172e-08 +                      \
                                                     z * (1.6059043836821613e-10 +                 \
                                                          z * (-7.647163731819816e-13 +            \
                                                               z * 2.8114572543455206e-15)))))));  \
            double cr =                                                                            \
                1.0 + z * (-0.5 +                                                                  \
                           z * (0.041666666666666664 +                                             \
                                z * (-0.001388888888888889 +                                       \
                                     z * (2.48015873015873e-05 +                                   \
                                          z * (-2.755731922398589e-07 +                            \
                                               z * (2.08767569878681e-09 +                         \
                                                    z * (-1.1470745597729725e-11 +                 \
                                                         z * (4.779477332387385e-14 +              \
                                                              z * -1.5619206968586225e-16)))))))); \
            switch (q & 3) {                                                                       \
            case 0: *c = cr, *s = sr; break;                                                       \
            case 1: *c = -sr, *s = cr; break;                                                      \
            case 2: *c = -cr, *s = -sr; break;                                                     \
            default: *c = sr, *s = -cr;                                                            \
            }                                                                                      \
        })

#endif
