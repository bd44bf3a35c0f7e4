/*
 * outfile.c — output files that appear only when complete.  Data goes to a
 * temporary "DIR/.BASENAME.tmp.PID.XXXXXX" in the destination's directory
 * (so the final rename stays on one file system and is atomic), which is
 * flushed, fsync'ed and renamed onto the final path on commit, or removed on
 * abort.  A reader therefore sees either no file or the whole file, never a
 * prefix.  The temporary is created with O_EXCL under a random name: in a
 * shared directory nobody can plant a file or a symbolic link there for us
 * to write through.
 *
 * A destination that exists and is not a regular file (/dev/null,
 * /dev/stdout, a FIFO, a device) is written directly: renaming a temporary
 * onto it would replace the device node with a file (as root, /dev/full
 * became a regular file), and a stream has no "whole file" to protect.
 */
#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <libgen.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "common.h"

static void outfile_report(const char *path, int err)
{
    fprintf(stderr, "tessera: cannot write %s: %s\n", path, strerror(err));
}

/* Six characters no other process can guess; unpredictability is a second
 * line of defence: O_EXCL alone already refuses a planted name. */
static void outfile_random_suffix(char out[7])
{
    static const char alphabet[] = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789";
    static unsigned long counter;
    unsigned char bytes[6];
    if (getrandom(bytes, sizeof bytes, GRND_NONBLOCK) != (ssize_t)sizeof bytes) {
        struct timespec ts;
        clock_gettime(CLOCK_REALTIME, &ts);
        unsigned long x = (unsigned long)ts.tv_nsec ^ ((unsigned long)getpid() << 20) ^ ++counter;
        for (size_t i = 0; i < sizeof bytes;
             i++, x = x * 6364136223846793005UL + 1442695040888963407UL)
            bytes[i] = (unsigned char)(x >> 33);
    }
    for (int i = 0; i < 6; i++) out[i] = alphabet[bytes[i] % (sizeof alphabet - 1)];
    out[6] = '\0';
}

int app_tmpfile_create(const char *path, char **tmp_out)
{
    const char *slash = strrchr(path, '/');
    const char *base = slash ? slash + 1 : path;
    int dir_len = (int)(base - path);
    size_t cap = strlen(path) + 48;
    char *tmp = malloc(cap);
    if (tmp == NULL) return errno = ENOMEM, -1;
    int fd = -1;
    for (int attempt = 0; fd < 0 && attempt < 100; attempt++) {
        char suffix[7];
        outfile_random_suffix(suffix);
        snprintf(tmp, cap, "%.*s.%s.tmp.%ld.%s", dir_len, path, base, (long)getpid(), suffix);
        /* O_EXCL: never an existing name, and (with O_CREAT) never through a
         * symbolic link planted there, dangling or not */
        fd = open(tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0666);
        if (fd < 0 && errno != EEXIST) break;
    }
    if (fd < 0) {
        int err = errno;
        free(tmp);
        errno = err;
        return -1;
    }
    *tmp_out = tmp;
    return fd;
}

/* ".BASENAME.tmp.PID" (older runs) or ".BASENAME.tmp.PID.XXXXXX": the PID,
 * or 0 when `name` is not one of `path`'s temporaries. */
static long outfile_tmp_pid(const char *name, const char *prefix, size_t plen)
{
    if (strncmp(name, prefix, plen) != 0) return 0;
    char *end;
    long pid = strtol(name + plen, &end, 10);
    if (end == name + plen || pid <= 0) return 0;
    if (*end == '\0') return pid;
    if (*end != '.' || strlen(end + 1) != 6) return 0;
    for (const char *c = end + 1; *c; c++)
        if (!isalnum((unsigned char)*c)) return 0;
    return pid;
}

/* A temporary to sweep: a regular file of ours (not a link, not another
 * user's file) whose process no longer runs on this machine. */
static int outfile_is_stale(int dfd, const char *name, long pid)
{
    struct stat st;
    if (pid == (long)getpid() || kill((pid_t)pid, 0) == 0 || errno != ESRCH) return 0;
    return fstatat(dfd, name, &st, AT_SYMLINK_NOFOLLOW) == 0 && S_ISREG(st.st_mode) &&
           st.st_uid == geteuid();
}

/*
 * Remove the temporaries that earlier runs left for `path` when they were
 * killed (kill -9, a lost node).  A temporary of a live process is left alone.
 */
static void outfile_clean_stale(const char *path)
{
    const char *slash = strrchr(path, '/');
    const char *base = slash ? slash + 1 : path;
    char *dir = slash ? strndup(path, (size_t)(slash - path) + 1) : strdup(".");
    char prefix[300];
    int plen = snprintf(prefix, sizeof prefix, ".%s.tmp.", base);
    DIR *d = dir && plen > 0 && (size_t)plen < sizeof prefix ? opendir(dir) : NULL;
    for (struct dirent *e; d && (e = readdir(d)) != NULL;) {
        long pid = outfile_tmp_pid(e->d_name, prefix, (size_t)plen);
        if (pid > 0 && outfile_is_stale(dirfd(d), e->d_name, pid)) unlinkat(dirfd(d), e->d_name, 0);
    }
    if (d) closedir(d);
    free(dir);
}

static void outfile_release(app_outfile *o)
{
    free(o->path);
    free(o->tmp_path);
    o->fp = NULL;
    o->path = NULL;
    o->tmp_path = NULL;
}

/* Create the temporary next to `path` and open it; errno set on failure. */
static FILE *outfile_create(const char *path, char **tmp_out)
{
    int fd = app_tmpfile_create(path, tmp_out);
    if (fd < 0) return NULL;
    FILE *fp = fdopen(fd, "w");
    if (!fp) {
        int err = errno;
        close(fd);
        unlink(*tmp_out);
        free(*tmp_out);
        *tmp_out = NULL;
        errno = err;
    }
    return fp;
}

/* A device, FIFO or socket: written in place, no temporary (tmp_path NULL). */
static int outfile_open_stream(app_outfile *o, const char *path)
{
    o->path = strdup(path);
    o->fp = o->path ? fopen(path, "w") : NULL;
    if (!o->fp) {
        outfile_report(path, o->path ? errno : ENOMEM);
        outfile_release(o);
        return -1;
    }
    return 0;
}

/* An output path naming a directory would only fail at the final rename,
 * after the work: 1 after the message, else 0. */
static int names_directory(const char *path)
{
    const char *slash = strrchr(path, '/');
    struct stat st;
    if (path[0] != '\0' && !(slash && slash[1] == '\0') &&
        !(stat(path, &st) == 0 && S_ISDIR(st.st_mode)))
        return 0;
    outfile_report(path, EISDIR);
    return 1;
}

int app_outfile_check(const char *path)
{
    const char *slash = strrchr(path, '/');
    struct stat st;
    if (names_directory(path)) return -1;
    if (stat(path, &st) == 0 && !S_ISREG(st.st_mode)) return 0; /* a stream: opened later */
    char *dir = slash ? strndup(path, (size_t)(slash - path) + 1) : strdup(".");
    int rc = dir && access(dir, W_OK | X_OK) == 0 ? 0 : -1;
    if (rc != 0) outfile_report(path, dir ? errno : ENOMEM);
    free(dir);
    return rc;
}

int app_outfile_open(app_outfile *o, const char *path)
{
    memset(o, 0, sizeof *o);
    struct stat st;
    if (names_directory(path)) return -1;
    if (stat(path, &st) == 0 && !S_ISREG(st.st_mode)) return outfile_open_stream(o, path);
    outfile_clean_stale(path);
    o->path = strdup(path);
    if (!o->path) {
        outfile_report(path, ENOMEM);
        return -1;
    }
    o->fp = outfile_create(path, &o->tmp_path);
    if (!o->fp) {
        outfile_report(path, errno);
        outfile_release(o);
        return -1;
    }
    return 0;
}

/* Make the rename itself durable; failure here loses nothing already written. */
static void outfile_sync_dir(const char *path)
{
    const char *slash = strrchr(path, '/');
    char *dir = slash ? strndup(path, (size_t)(slash - path) + 1) : strdup(".");
    int fd = dir ? open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC) : -1;
    if (fd >= 0) {
        (void)fsync(fd);
        close(fd);
    }
    free(dir);
}

/* Flush, fsync and close o->fp; 0 or an errno value. */
static int outfile_close_synced(app_outfile *o)
{
    int err = 0;
    if (fflush(o->fp) != 0 || ferror(o->fp)) err = errno ? errno : EIO;
    else if (fsync(fileno(o->fp)) != 0) err = errno;
    if (fclose(o->fp) != 0 && err == 0) err = errno ? errno : EIO;
    o->fp = NULL;
    return err;
}

/* Phase one of a commit: everything written is on disk (a stream: flushed
 * and closed) and the temporary is closed, still under its own name.  0, or
 * -1 after the message with o aborted. */
static int outfile_settle(app_outfile *o)
{
    if (!o->fp) return -1;
    errno = 0;
    int err = 0;
    if (o->tmp_path == NULL) { /* a stream: flush and close, nothing to rename */
        if (fflush(o->fp) != 0 || ferror(o->fp)) err = errno ? errno : EIO;
        if (fclose(o->fp) != 0 && err == 0) err = errno ? errno : EIO;
        o->fp = NULL;
    } else err = outfile_close_synced(o);
    if (err == 0) return 0;
    outfile_report(o->path, err);
    app_outfile_abort(o);
    return -1;
}

/* Phase two: the settled temporary onto the final path. */
static int outfile_publish(app_outfile *o)
{
    int err = o->tmp_path && rename(o->tmp_path, o->path) != 0 ? errno : 0;
    if (err != 0) {
        outfile_report(o->path, err);
        app_outfile_abort(o);
        return -1;
    }
    if (o->tmp_path) outfile_sync_dir(o->path);
    outfile_release(o);
    return 0;
}

int app_outfile_commit(app_outfile *o) { return outfile_settle(o) == 0 ? outfile_publish(o) : -1; }

void app_outfile_abort(app_outfile *o)
{
    if (!o) return;
    if (o->fp) fclose(o->fp);
    if (o->tmp_path) unlink(o->tmp_path);
    outfile_release(o);
}

/* Every output is settled before any is renamed: a write that fails (a full
 * disk, EIO, a file-size limit) changes no output.  Only a rename failing
 * half-way (the directory made read-only meanwhile) could leave some. */
int app_outfiles_finish(app_outfile *const *files, const char *const *paths, int n, int rc)
{
    for (int i = 0; i < n && rc == 0; i++)
        if (paths[i] && outfile_settle(files[i]) != 0) rc = -1;
    for (int i = 0; i < n && rc == 0; i++)
        if (paths[i] && outfile_publish(files[i]) != 0) rc = -1;
    if (rc != 0)
        for (int i = 0; i < n; i++) app_outfile_abort(files[i]);
    return rc;
}

/* The file `path` would become: its directory resolved, so "x", "./x" and
 * "d/../x" compare equal; NULL for an existing non-regular file (a stream
 * such as /dev/null may take several outputs) or when out of memory. */
static char *outfile_destination(const char *path)
{
    struct stat st;
    if (stat(path, &st) == 0 && !S_ISREG(st.st_mode)) return NULL;
    const char *slash = strrchr(path, '/');
    const char *base = slash ? slash + 1 : path;
    char *dir = slash ? strndup(path, (size_t)(slash - path) + 1) : strdup(".");
    char *real = dir ? realpath(dir, NULL) : NULL;
    free(dir);
    if (real == NULL) return strdup(path);
    size_t cap = strlen(real) + strlen(base) + 2;
    char *out = malloc(cap);
    if (out) snprintf(out, cap, "%s/%s", real, base);
    free(real);
    return out;
}

int app_outputs_distinct(const char *app, const char *const *options, const char *const *paths,
                         int n)
{
    int rc = 0;
    for (int i = 0; i < n && rc == 0; i++) {
        char *a = paths[i] ? outfile_destination(paths[i]) : NULL;
        for (int j = i + 1; a && j < n && rc == 0; j++) {
            char *b = paths[j] ? outfile_destination(paths[j]) : NULL;
            if (b && strcmp(a, b) == 0) {
                if (app)
                    app_error(app, "options --%s and --%s name the same file %s", options[i],
                              options[j], paths[j]);
                rc = -1;
            }
            free(b);
        }
        free(a);
    }
    return rc;
}

static int same_regular_file(const char *a, const char *b)
{
    struct stat sa, sb;
    return a && b && stat(a, &sa) == 0 && stat(b, &sb) == 0 && S_ISREG(sa.st_mode) &&
           sa.st_dev == sb.st_dev && sa.st_ino == sb.st_ino;
}

int app_outputs_spare_inputs(const char *app, const char *const *in_options,
                             const char *const *in_paths, int nin, const char *const *out_options,
                             const char *const *out_paths, int nout)
{
    for (int j = 0; j < nout; j++)
        for (int i = 0; i < nin; i++)
            if (same_regular_file(in_paths[i], out_paths[j])) {
                if (app)
                    app_error(app,
                              "option --%s: %s is the input given to --%s; write the output "
                              "elsewhere",
                              out_options[j], out_paths[j], in_options[i]);
                return -1;
            }
    return 0;
}

/* Option --opt's path (NULL: not given) can be written: 0, or -1 after the
 * message. */
static int check_output_dir(const char *app, const char *opt, const char *path)
{
    if (path == NULL) return 0;
    char *copy = strdup(path);
    if (copy == NULL) return -1;
    const char *dir = dirname(copy);
    struct stat st;
    int is_dir = stat(path, &st) == 0 && S_ISDIR(st.st_mode);
    int ok = !is_dir && access(dir, W_OK) == 0;
    if (!ok)
        app_error(app, "option --%s: cannot write %s: %s", opt, path,
                  is_dir ? strerror(EISDIR) : strerror(errno));
    free(copy);
    return ok ? 0 : -1;
}

int app_check_outputs(const char *app, const char *output, const char *metrics)
{
    const char *const names[] = {"output", "metrics"};
    const char *const paths[] = {output, metrics};
    if (app_outputs_distinct(app, names, paths, 2) != 0) return -1;
    if (check_output_dir(app, "output", output) || check_output_dir(app, "metrics", metrics))
        return -2; /* an I/O problem rather than a usage error */
    return 0;
}
