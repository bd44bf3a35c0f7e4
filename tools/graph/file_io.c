/*
 * file_io.c — whole-file input and crash-safe output for the graph tools.
 * Output goes to a temp file in the target's directory (so rename() stays on
 * one file system), is fsync'ed, then renamed over the target: a failed or
 * interrupted write never leaves a partial file under the final name.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "graph_internal.h"
#include "tessera/tessera.h"

/*
 * `tessera gen` and `convert` write outputs of hundreds of MB: Ctrl-C in the
 * middle left the temporary behind, and nothing sweeps it.  With
 * tg_remove_temporaries_on_signal() the temporary being written is named
 * here, and SIGINT/SIGTERM remove it (unlink is async-signal-safe) before
 * the signal ends the process as it would have.  One output at a time: the
 * commands write one file.
 */
static char signal_tmp[PATH_MAX];
static volatile sig_atomic_t signal_tmp_set;

static void remove_tmp_and_die(int sig)
{
    if (signal_tmp_set) unlink(signal_tmp);
    signal(sig, SIG_DFL);
    raise(sig);
}

void tg_remove_temporaries_on_signal(void)
{
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = remove_tmp_and_die;
    sigemptyset(&sa.sa_mask);
    sigaction(SIGINT, &sa, NULL);
    sigaction(SIGTERM, &sa, NULL);
}

static void note_tmp(const char *path)
{
    signal_tmp_set = 0;
    if (path == NULL || strlen(path) >= sizeof signal_tmp) return;
    memcpy(signal_tmp, path, strlen(path) + 1);
    signal_tmp_set = 1;
}

int tg__read_file(const char *path, char **data_out, size_t *len_out, char *err, size_t errlen)
{
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0) return tg__err(TESS_ERR_IO, err, errlen, "%s: %s", path, strerror(errno));
    struct stat st = {0};
    errno = 0;
    if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
        int e = errno;
        const char *why = S_ISDIR(st.st_mode) ? strerror(EISDIR) : "not a regular file";
        close(fd);
        return tg__err(TESS_ERR_IO, err, errlen, "%s: %s", path, e ? strerror(e) : why);
    }
    size_t len = (size_t)st.st_size;
    char *data = malloc(len ? len : 1);
    if (data == NULL) {
        close(fd);
        return tg__err(TESS_ERR_NOMEM, err, errlen, "%s: out of memory (%zu bytes)", path, len);
    }
    size_t have = 0;
    while (have < len) {
        ssize_t r = read(fd, data + have, len - have);
        if (r < 0 && errno == EINTR) continue;
        if (r <= 0) {
            int e = r < 0 ? errno : 0;
            free(data);
            close(fd);
            return tg__err(TESS_ERR_IO, err, errlen, "%s: %s", path,
                           e ? strerror(e) : "file shrank while reading");
        }
        have += (size_t)r;
    }
    close(fd);
    *data_out = data;
    *len_out = len;
    return 0;
}

/* A destination that exists and is not a regular file (/dev/null, a FIFO, a
 * device) is written in place: renaming a temporary onto it would replace
 * the node with a file (as root, `gen SPEC /dev/full` did), and a stream has
 * no whole file to protect.  tmp_path stays NULL. */
static int out_open_stream(tg__outfile *o, const char *path, char *err, size_t errlen)
{
    o->f = fopen(path, "wb");
    if (o->f == NULL) return tg__err(TESS_ERR_IO, err, errlen, "%s: %s", path, strerror(errno));
    return 0;
}

int tg__out_open(tg__outfile *o, const char *path, char *err, size_t errlen)
{
    memset(o, 0, sizeof *o);
    o->path = path;
    struct stat st;
    if (stat(path, &st) == 0 && !S_ISREG(st.st_mode) && !S_ISDIR(st.st_mode))
        return out_open_stream(o, path, err, errlen);
    size_t n = strlen(path);
    o->tmp_path = malloc(n + sizeof ".tmp.XXXXXX");
    if (o->tmp_path == NULL) return tg__err(TESS_ERR_NOMEM, err, errlen, "%s: out of memory", path);
    memcpy(o->tmp_path, path, n);
    memcpy(o->tmp_path + n, ".tmp.XXXXXX", sizeof ".tmp.XXXXXX");
    int fd = mkstemp(o->tmp_path);
    if (fd < 0) {
        int e = errno;
        free(o->tmp_path);
        o->tmp_path = NULL;
        return tg__err(TESS_ERR_IO, err, errlen, "%s: %s", path, strerror(e));
    }
    note_tmp(o->tmp_path);
    (void)fchmod(fd, 0644); /* mkstemp creates 0600; outputs are ordinary files */
    o->f = fdopen(fd, "wb");
    if (o->f == NULL) {
        int e = errno;
        close(fd);
        tg__out_abort(o);
        return tg__err(TESS_ERR_IO, err, errlen, "%s: %s", path, strerror(e));
    }
    setvbuf(o->f, NULL, _IOFBF, 1 << 20);
    return 0;
}

int tg__out_commit(tg__outfile *o, char *err, size_t errlen)
{
    int e = 0;
    if (fflush(o->f) != 0 || ferror(o->f)) e = errno ? errno : EIO;
    else if (o->tmp_path != NULL && fsync(fileno(o->f)) != 0) e = errno; /* not a device */
    if (fclose(o->f) != 0 && e == 0) e = errno;
    o->f = NULL;
    if (e == 0 && o->tmp_path != NULL && rename(o->tmp_path, o->path) != 0) e = errno;
    note_tmp(NULL);
    if (e != 0) {
        tg__out_abort(o);
        return tg__err(TESS_ERR_IO, err, errlen, "%s: %s", o->path, strerror(e));
    }
    free(o->tmp_path);
    o->tmp_path = NULL;
    return 0;
}

void tg__out_abort(tg__outfile *o)
{
    if (o->f != NULL) fclose(o->f);
    o->f = NULL;
    note_tmp(NULL);
    if (o->tmp_path != NULL) {
        unlink(o->tmp_path);
        free(o->tmp_path);
    }
    o->tmp_path = NULL;
}
