/*
 * bs_formula.h — the Black-Scholes formula of the CUDA SDK sample, written
 * once for both the C kernel and the OpenCL kernel: BS_FORMULA(M) hands the
 * code to M, which either compiles it (BS_AS_C) or makes it a string for
 * the OpenCL program (BS_AS_TEXT).  exp and log are computed here too (a
 * Cody-Waite reduction and short polynomials, each within about 1 ulp) so
 * that both kernels perform the same float operations and agree to the bit,
 * which the devices' own exp and log would not (the OpenCL standard allows
 * them 3 ulp).  The code speaks the common subset of C and OpenCL C;
 * bs_bits/bs_float, bs_fabs and bs_sqrt are defined by each side.
 */
#ifndef TESS_APPS_BS_FORMULA_H
#define TESS_APPS_BS_FORMULA_H

#define BS_AS_C(...) __VA_ARGS__
#define BS_AS_TEXT(...) #__VA_ARGS__

#define BS_FORMULA(M)                                                                             \
    M(                                                                                            \
        static float bs_exp(float x) {                                                            \
            if (x != x) return x;                                                                 \
            if (x > 88.72283f) return INFINITY;                                                   \
            if (x < -103.97208f) return 0.0f;                                                     \
            float n = (float)(int)(x * 1.44269504f + (x < 0 ? -0.5f : 0.5f));                     \
            float r = (x - n * 0.693145752f) - n * 1.42860677e-06f;                               \
            float p =                                                                             \
                1.0f +                                                                            \
                r * (1.0f +                                                                       \
                     r * (0.5f + r * (1.66666672e-01f +                                           \
                                      r * (4.16666679e-02f +                                      \
                                           r * (8.33333377e-03f +                                 \
                                                r * (1.38888892e-03f + r * 1.98412701e-04f)))))); \
            int e = (int)n;                                                                       \
            if (e < -125) { /* the result is subnormal: scale in two steps */                     \
                p *= bs_float((unsigned)(e + 64 + 127) << 23);                                    \
                return p * bs_float((unsigned)(-64 + 127) << 23);                                 \
            }                                                                                     \
            if (e > 127) return p * 2.0f * bs_float((unsigned)(e - 1 + 127) << 23);               \
            return p * bs_float((unsigned)(e + 127) << 23);                                       \
        } static float bs_log(float x) {                                                          \
            if (x != x || x < 0) return NAN;                                                      \
            if (x == 0) return -INFINITY;                                                         \
            if (x == INFINITY) return x;                                                          \
            int e = 0;                                                                            \
            if (x < 1.17549435e-38f) { /* subnormal: make it normal first */                      \
                x *= 8388608.0f;                                                                  \
                e = -23;                                                                          \
            }                                                                                     \
            unsigned u = bs_bits(x);                                                              \
            e += (int)((u >> 23) & 255) - 127;                                                    \
            float m = bs_float((u & 0x007fffffu) | 0x3f800000u);                                  \
            if (m > 1.41421356f) {                                                                \
                m *= 0.5f;                                                                        \
                e++;                                                                              \
            }                                                                                     \
            float f = m - 1.0f, s = f / (2.0f + f), z = s * s;                                    \
            float lm =                                                                            \
                2.0f * s *                                                                        \
                (1.0f + z * (0.333333343f + z * (0.2f + z * (0.142857149f + z * 0.111111112f)))); \
            return (float)e * 1.42860677e-06f + lm + (float)e * 0.693145752f;                     \
        } static float bs_cnd(float d) {                                                          \
            const float a1 = 0.31938153f, a2 = -0.356563782f, a3 = 1.781477937f,                  \
                        a4 = -1.821255978f, a5 = 1.330274429f,                                    \
                        rsqrt2pi = 0.39894228040143267793994605993438f;                           \
            float k = 1.0f / (1.0f + 0.2316419f * bs_fabs(d));                                    \
            float c = rsqrt2pi * bs_exp(-0.5f * d * d) *                                          \
                      (k * (a1 + k * (a2 + k * (a3 + k * (a4 + k * a5)))));                       \
            return d > 0 ? 1.0f - c : c;                                                          \
        } static void bs_price_one(float s, float x, float t, float r, float v, float *call,      \
                                   float *put) {                                                  \
            float sqrt_t = bs_sqrt(t);                                                            \
            float d1 = (bs_log(s / x) + (r + 0.5f * v * v) * t) / (v * sqrt_t);                   \
            float d2 = d1 - v * sqrt_t;                                                           \
            float cnd1 = bs_cnd(d1), cnd2 = bs_cnd(d2);                                           \
            float exp_rt = bs_exp(-r * t);                                                        \
            *call = s * cnd1 - x * exp_rt * cnd2;                                                 \
            *put = x * exp_rt * (1.0f - cnd2) - s * (1.0f - cnd1);                                \
        })

#endif
