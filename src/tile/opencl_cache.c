/*
 * opencl_cache.c — OpenCL program binaries cached across runs
 * (opencl_cache.h).  An entry file: "TESSCLB1", u64 key length, the key,
 * u64 binary length, u64 FNV-1a checksum of the binary, the binary.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include "tile/opencl_cache.h"

#define MAGIC "TESSCLB1"

static uint64_t fnv1a(const void *p, size_t n)
{
    const unsigned char *b = p;
    uint64_t h = 1469598103934665603ull;
    for (size_t i = 0; i < n; i++) h = (h ^ b[i]) * 1099511628211ull;
    return h | 1; /* never 0, which means "none" */
}

/* Without OpenCL too, so that the fuzz target can read entries anywhere. */
int tess__cl_cache_entry_parse(const unsigned char *all, size_t n, const char *key, size_t *off,
                               size_t *len, uint64_t *sum)
{
    uint64_t kl = 0, bl = 0, h = 0;
    size_t klen = strlen(key), head = 8 + 8 + klen + 16;
    if (n < head || memcmp(all, MAGIC, 8) != 0) return -1;
    memcpy(&kl, all + 8, 8);
    memcpy(&bl, all + head - 16, 8);
    memcpy(&h, all + head - 8, 8);
    if (kl != klen || memcmp(all + 16, key, klen) != 0 || bl != n - head || bl == 0 ||
        fnv1a(all + head, bl) != h)
        return -1;
    *off = head;
    *len = bl;
    *sum = h;
    return 0;
}

#if TESS_HAVE_OPENCL

#define MAX_ENTRY (256u << 20) /* larger files are not entries of ours */

/* mkdir -p, mode 0700; 0 when dir exists afterwards. */
static int make_dirs(char *dir)
{
    for (char *s = dir + 1; *s; s++) {
        if (*s != '/') continue;
        *s = '\0';
        int rc = mkdir(dir, 0700);
        *s = '/';
        if (rc != 0 && errno != EEXIST) return -1;
    }
    return mkdir(dir, 0700) == 0 || errno == EEXIST ? 0 : -1;
}

/* The cache directory (malloc'd, created), or NULL when the cache is off. */
static char *cache_dir(void)
{
    const char *env = getenv("TESS_CL_CACHE"), *xdg = getenv("XDG_CACHE_HOME");
    const char *home = getenv("HOME");
    if (env != NULL && strcmp(env, "0") == 0) return NULL;
    char buf[4096];
    if (env != NULL && *env) snprintf(buf, sizeof buf, "%s", env);
    else if (xdg != NULL && *xdg == '/') snprintf(buf, sizeof buf, "%s/tessera", xdg);
    else if (home != NULL && *home == '/') snprintf(buf, sizeof buf, "%s/.cache/tessera", home);
    else return NULL;
    return make_dirs(buf) == 0 ? strdup(buf) : NULL;
}

static void info_str(cl_device_id d, cl_platform_id p, cl_uint what, int platform, char *out,
                     size_t cap)
{
    out[0] = '\0';
    if (platform) clGetPlatformInfo(p, what, cap - 1, out, NULL);
    else clGetDeviceInfo(d, what, cap - 1, out, NULL);
    out[cap - 1] = '\0';
}

/* Everything the binary depends on, as text (malloc'd). */
static char *make_key(const tess_tile_opencl *dev, const char *source, const char *options)
{
    char pn[256], pv[256], dn[256], dv[256], drv[256];
    info_str(dev->device, dev->platform, CL_PLATFORM_NAME, 1, pn, sizeof pn);
    info_str(dev->device, dev->platform, CL_PLATFORM_VERSION, 1, pv, sizeof pv);
    info_str(dev->device, dev->platform, CL_DEVICE_NAME, 0, dn, sizeof dn);
    info_str(dev->device, dev->platform, CL_DEVICE_VERSION, 0, dv, sizeof dv);
    info_str(dev->device, dev->platform, CL_DRIVER_VERSION, 0, drv, sizeof drv);
    const char *fmt = "platform %s\nplatform version %s\ndevice %s\ndevice version %s\n"
                      "driver %s\noptions %s\nsource\n%s";
    const char *opt = options ? options : "";
    int n = snprintf(NULL, 0, fmt, pn, pv, dn, dv, drv, opt, source);
    char *key = n >= 0 ? malloc((size_t)n + 1) : NULL;
    if (key != NULL) snprintf(key, (size_t)n + 1, fmt, pn, pv, dn, dv, drv, opt, source);
    return key;
}

/* The entry's binary if the file is a whole, matching entry (malloc'd). */
static unsigned char *read_entry(const char *path, const char *key, size_t *len, uint64_t *sum)
{
    FILE *f = fopen(path, "rb");
    if (f == NULL) return NULL;
    unsigned char *bin = NULL, *all = NULL;
    struct stat st;
    size_t n = 0, off, bl;
    uint64_t h;
    if (fstat(fileno(f), &st) == 0 && st.st_size > 0 && (uint64_t)st.st_size < MAX_ENTRY &&
        (all = malloc((size_t)st.st_size)) != NULL)
        n = fread(all, 1, (size_t)st.st_size, f);
    fclose(f);
    if (all != NULL && n == (size_t)st.st_size &&
        tess__cl_cache_entry_parse(all, n, key, &off, &bl, &h) == 0 && (bin = malloc(bl)) != NULL) {
        memcpy(bin, all + off, bl);
        *len = bl;
        *sum = h;
    }
    free(all);
    return bin;
}

static cl_program from_binary(tess_tile_opencl *dev, const unsigned char *bin, size_t len,
                              const char *options)
{
    cl_int err, status;
    cl_program p =
        clCreateProgramWithBinary(dev->context, 1, &dev->device, &len, &bin, &status, &err);
    if (err != CL_SUCCESS || status != CL_SUCCESS) {
        if (err == CL_SUCCESS) clReleaseProgram(p);
        return NULL;
    }
    if (clBuildProgram(p, 1, &dev->device, options ? options : "", NULL, NULL) != CL_SUCCESS) {
        clReleaseProgram(p);
        return NULL;
    }
    return p;
}

static cl_int from_source(tess_tile_opencl *dev, const char *source, const char *options,
                          cl_program *out)
{
    cl_int err;
    *out = clCreateProgramWithSource(dev->context, 1, &source, NULL, &err);
    if (err != CL_SUCCESS) return err;
    return clBuildProgram(*out, 1, &dev->device, options ? options : "", NULL, NULL);
}

/* rec's entry path for its key, in dir. */
static void set_path(tess__cl_cached *rec, const char *dir)
{
    size_t n = strlen(dir) + 32;
    rec->path = malloc(n);
    if (rec->path != NULL)
        snprintf(rec->path, n, "%s/%016llx.clbin", dir,
                 (unsigned long long)fnv1a(rec->key, strlen(rec->key)));
}

cl_int tess__cl_cache_build(tess_tile_opencl *dev, const char *source, const char *options,
                            cl_program *program, tess__cl_cached *rec)
{
    *rec = (tess__cl_cached){0};
    char *dir = cache_dir();
    rec->key = dir ? make_key(dev, source, options) : NULL;
    if (rec->key != NULL) set_path(rec, dir);
    free(dir);
    *program = NULL;
    if (rec->path != NULL) {
        size_t len = 0;
        unsigned char *bin = read_entry(rec->path, rec->key, &len, &rec->sum);
        if (bin != NULL) *program = from_binary(dev, bin, len, options);
        if (*program == NULL) rec->sum = 0; /* a bad entry: rebuilt and written anew */
        free(bin);
    }
    cl_int err = *program ? CL_SUCCESS : from_source(dev, source, options, program);
    if (err == CL_SUCCESS && rec->path != NULL && clRetainProgram(*program) == CL_SUCCESS)
        rec->program = *program;
    return err;
}

static int write_entry(const tess__cl_cached *rec, const unsigned char *bin, size_t len,
                       uint64_t sum)
{
    size_t n = strlen(rec->path) + 32;
    char *tmp = malloc(n);
    if (tmp == NULL) return -1;
    snprintf(tmp, n, "%s.%ld.tmp", rec->path, (long)getpid());
    FILE *f = fopen(tmp, "wb");
    uint64_t kl = strlen(rec->key), bl = len;
    int ok = f != NULL && fwrite(MAGIC, 1, 8, f) == 8 && fwrite(&kl, 8, 1, f) == 1 &&
             fwrite(rec->key, 1, kl, f) == kl && fwrite(&bl, 8, 1, f) == 1 &&
             fwrite(&sum, 8, 1, f) == 1 && fwrite(bin, 1, len, f) == len;
    if (f != NULL && fclose(f) != 0) ok = 0;
    if (ok) ok = rename(tmp, rec->path) == 0;
    if (!ok) unlink(tmp);
    free(tmp);
    return ok ? 0 : -1;
}

void tess__cl_cache_save(tess_tile_opencl *dev, tess__cl_cached *rec)
{
    size_t len = 0;
    unsigned char *bin = NULL;
    if (rec->program != NULL &&
        clGetProgramInfo(rec->program, CL_PROGRAM_BINARY_SIZES, sizeof len, &len, NULL) ==
            CL_SUCCESS &&
        len > 0 && len < MAX_ENTRY && (bin = malloc(len)) != NULL &&
        clGetProgramInfo(rec->program, CL_PROGRAM_BINARIES, sizeof bin, &bin, NULL) == CL_SUCCESS) {
        uint64_t sum = fnv1a(bin, len);
        if (sum != rec->sum) write_entry(rec, bin, len, sum); /* best effort */
    }
    (void)dev;
    free(bin);
    if (rec->program != NULL) clReleaseProgram(rec->program);
    free(rec->path);
    free(rec->key);
    *rec = (tess__cl_cached){0};
}

#endif
