/*
 * serve_web.c — `tessera serve-web`: a deterministic synthetic web on the
 * loopback address for the crawler's tests and bench (libmicrohttpd).
 *
 * Site s listens on 127.0.0.1:PORT+s.  Its "/" links to /p/0.html and to
 * the next site's "/"; page /p/i.html links to /p/(i+1).html (so every page
 * is reachable from site 0's "/"), to three other pages of the site written
 * as relative, root-relative and absolute URLs with fragments, now and then
 * to a page of another site, to /private/ pages that robots.txt disallows,
 * and to mailto: and javascript: URLs a crawler must skip.  Pages are 2 to
 * 34 KB of text, the same bytes on every run for the same --seed.
 *
 * --traps adds, on site 0's "/", links to a 404, a 500, a redirect, a
 * 50 MB page, a page of binary junk served as HTML, a site whose port
 * does not answer, pages robots.txt disallows spelled with escapes
 * (/%70rivate/, /doc.pd%66), a redirect to another host (localhost) and
 * links to private and link-local addresses (10.0.0.1, 169.254.169.254)
 * that a crawler must not contact; --junk-robots I serves binary junk as site I's
 * robots.txt; --slow-site I:MS delays every answer of site I.  --log FILE
 * records every request (wall-clock time, port, path, status) so tests can
 * check politeness, robots compliance and exactly-once; --list prints the
 * URLs of the site model's pages (what a complete crawl from site 0 must
 * fetch with status 200) and exits.  No socket leaves 127.0.0.1.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <microhttpd.h>
#include <netinet/in.h>
#include <pthread.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "common.h"

#define SW_APP "serve-web"
#define BIG_PAGE_BYTES (50L << 20)

typedef struct web {
    long sites, pages, port, seed;
    long junk_robots;        /* -1: none */
    long slow_site, slow_ms; /* -1: none */
    int traps, list;
    double duration;
    const char *log_path;
    char away[64]; /* where /trap/away redirects: another host name */
    FILE *log;
    pthread_mutex_t log_lock;
} web;

typedef struct site_ref {
    web *w;
    long index;
} site_ref;

static uint64_t mix(uint64_t x)
{
    x += 0x9e3779b97f4a7c15ULL;
    x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
    x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
    return x ^ (x >> 31);
}

static uint64_t draw(const web *w, long site, long page, long k)
{
    return mix(mix(mix((uint64_t)w->seed) ^ (uint64_t)site) ^ (uint64_t)page * 1000003u ^
               (uint64_t)k);
}

/* ---------------------------------------------------------------- text */

typedef struct text {
    char *data;
    size_t len, cap;
} text;

static void add(text *t, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void add(text *t, const char *fmt, ...)
{
    for (;;) {
        va_list ap;
        va_start(ap, fmt);
        size_t room = t->cap - t->len;
        int n = vsnprintf(t->data ? t->data + t->len : NULL, t->data ? room : 0, fmt, ap);
        va_end(ap);
        if (n < 0) return;
        if (t->data && (size_t)n < room) {
            t->len += (size_t)n;
            return;
        }
        size_t cap = t->cap ? t->cap * 2 : 4096;
        while (cap < t->len + (size_t)n + 1) cap *= 2;
        char *grown = realloc(t->data, cap);
        if (grown == NULL) return;
        t->data = grown, t->cap = cap;
    }
}

static const char *const words[] = {"tessera",  "table",   "partition", "kernel",  "crawl",
                                    "origin",   "robots",  "polite",    "barrier", "epoch",
                                    "tile",     "tick",    "replica",   "latency", "accumulate",
                                    "snapshot", "cluster", "bandwidth", "cache",   "graph"};

static void filler(text *t, const web *w, long site, long page, size_t bytes)
{
    size_t start = t->len;
    for (long k = 0; t->len - start < bytes; k++) {
        if (k % 60 == 0) add(t, "%s<p>", k ? "</p>\n" : "");
        add(t, "%s ", words[draw(w, site, page, 100 + k) % (sizeof words / sizeof *words)]);
    }
    add(t, "</p>\n");
}

/* ---------------------------------------------------------------- pages */

static void link_page(text *t, const web *w, long site, long j, uint64_t form)
{
    switch (form % 4) {
    case 0: add(t, "<a href=\"/p/%ld.html\">page %ld</a>\n", j, j); break;
    case 1: add(t, "<a href=\"%ld.html\">page %ld</a>\n", j, j); break;
    case 2:
        add(t, "<a href=\"./%ld.html#part%lu\">page %ld</a>\n", j, (unsigned long)(form % 9), j);
        break;
    default:
        add(t, "<a href=\"http://127.0.0.1:%ld/p/%ld.html\">page %ld</a>\n", w->port + site, j, j);
    }
}

static void page_body(text *t, const web *w, long site, long i)
{
    add(t, "<!DOCTYPE html>\n<html><head><title>site %ld page %ld</title></head><body>\n", site, i);
    add(t, "<h1>Site %ld, page %ld</h1>\n", site, i);
    if (i + 1 < w->pages) add(t, "<a href=\"%ld.html\">next</a>\n", i + 1);
    for (long k = 0; k < 3; k++)
        link_page(t, w, site, (long)(draw(w, site, i, k) % (uint64_t)w->pages),
                  draw(w, site, i, 10 + k));
    uint64_t h = draw(w, site, i, 20);
    if (w->sites > 1 && h % 3 == 0) {
        long other = (site + 1 + (long)(h / 3 % (uint64_t)(w->sites - 1))) % w->sites;
        add(t, "<a href=\"http://127.0.0.1:%ld/p/%ld.html\">elsewhere</a>\n", w->port + other,
            (long)(h / 7 % (uint64_t)w->pages));
    }
    if (h % 5 == 0) add(t, "<a href=\"/private/%ld.html\">private</a>\n", (long)(h / 11 % 100));
    if (h % 7 == 0)
        add(t,
            "<a href=\"mailto:web@example.org\">mail</a> <a href=\"javascript:void(0)\">js</a>\n");
    filler(t, w, site, i, 2000 + draw(w, site, i, 30) % 32000);
    add(t, "</body></html>\n");
}

static void index_body(text *t, const web *w, long site)
{
    add(t, "<html><head><title>site %ld</title></head><body>\n<a href=\"/p/0.html\">start</a>\n",
        site);
    if (w->sites > 1)
        add(t, "<a href=\"http://127.0.0.1:%ld/\">next site</a>\n",
            w->port + (site + 1) % w->sites);
    if (w->traps && site == 0)
        add(t,
            "<a href=\"/trap/missing\">404</a> <a href=\"/trap/error\">500</a>\n"
            "<a href=\"/trap/redirect\">moved</a> <a href=\"/trap/big\">big</a>\n"
            "<a href=\"/trap/garbage\">junk</a> <a href=\"http://127.0.0.1:1/\">dead</a>\n"
            "<a href=\"/%%70rivate/enc.html\">hidden</a> <a href=\"/doc.pd%%66\">pdf</a>\n"
            "<a href=\"/trap/away\">away</a> <a href=\"http://10.0.0.1:%ld/\">lan</a>\n"
            "<a href=\"http://169.254.169.254/latest/meta-data/\">metadata</a>\n",
            w->port);
    add(t, "</body></html>\n");
}

/* ---------------------------------------------------------------- answers */

static ssize_t big_chunk(void *cls, uint64_t pos, char *buf, size_t max)
{
    (void)cls;
    for (size_t i = 0; i < max; i++) buf[i] = (pos + i) % 80 == 79 ? '\n' : 'x';
    return (ssize_t)max;
}

/* One line of --log; `arrived` is when the request came in, not when the
 * answer was ready: politeness is about the crawler's sending, and a busy
 * machine can take a while to build a page. */
static void log_request(web *w, long site, const char *path, int status,
                        const struct timespec *arrived)
{
    if (w->log == NULL) return;
    const struct timespec ts = *arrived;
    pthread_mutex_lock(&w->log_lock);
    fprintf(w->log, "%.6f\t%ld\t%s\t%d\n", (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec,
            w->port + site, path, status);
    fflush(w->log);
    pthread_mutex_unlock(&w->log_lock);
}

static void junk(text *t, const web *w, long site, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        char c = (char)(draw(w, site, -1, (long)i) & 0xff);
        add(t, "%c", c ? c : 1);
    }
}

/* What site `site` answers to `path`: status and body (t), or a redirect. */
static int answer(const web *w, long site, const char *path, text *t, const char **location)
{
    long i;
    char tail;
    *location = NULL;
    if (strcmp(path, "/robots.txt") == 0) {
        if (site == w->junk_robots) junk(t, w, site, 3000);
        else
            add(t,
                "# robots.txt of site %ld\nUser-agent: *\nDisallow: /private/\n"
                "Disallow: /*.pdf$\n\n"
                "User-agent: BadBot\nDisallow: /\n",
                site);
        return 200;
    }
    if (strcmp(path, "/") == 0) return index_body(t, w, site), 200;
    if (sscanf(path, "/p/%ld.htm%c", &i, &tail) == 2 && tail == 'l' && i >= 0 && i < w->pages)
        return page_body(t, w, site, i), 200;
    if (strncmp(path, "/private/", 9) == 0) return add(t, "<html>private</html>\n"), 200;
    if (w->traps && site == 0) {
        if (strcmp(path, "/trap/error") == 0) return add(t, "oops\n"), 500;
        if (strcmp(path, "/trap/redirect") == 0) return *location = "/r/target.html", 301;
        if (strcmp(path, "/trap/away") == 0) return *location = w->away, 301;
        if (strcmp(path, "/doc.pdf") == 0) return add(t, "%%PDF-1.4\n"), 200;
        if (strcmp(path, "/r/target.html") == 0 || strcmp(path, "/r/away.html") == 0)
            return add(t, "<html><body>moved here</body></html>\n"), 200;
        if (strcmp(path, "/trap/garbage") == 0) return junk(t, w, site + 1, 20000), 200;
    }
    add(t, "<html>not found</html>\n");
    return 404;
}

static enum MHD_Result on_request(void *cls, struct MHD_Connection *conn, const char *url,
                                  const char *method, const char *version, const char *upload,
                                  size_t *upload_size, void **state)
{
    (void)version, (void)upload, (void)upload_size, (void)state;
    site_ref *ref = cls;
    web *w = ref->w;
    struct timespec arrived;
    clock_gettime(CLOCK_REALTIME, &arrived);
    if (ref->index == w->slow_site) usleep((useconds_t)(w->slow_ms * 1000));
    struct MHD_Response *resp;
    int status;
    if (strcmp(method, "GET") != 0 && strcmp(method, "HEAD") != 0) {
        status = 405;
        resp = MHD_create_response_from_buffer(0, (void *)"", MHD_RESPMEM_PERSISTENT);
    } else if (w->traps && ref->index == 0 && strcmp(url, "/trap/big") == 0) {
        status = 200;
        resp = MHD_create_response_from_callback(BIG_PAGE_BYTES, 65536, big_chunk, NULL, NULL);
    } else {
        text t = {0};
        const char *location;
        status = answer(w, ref->index, url, &t, &location);
        resp = MHD_create_response_from_buffer(t.len, t.data ? t.data : (void *)"",
                                               t.data ? MHD_RESPMEM_MUST_FREE
                                                      : MHD_RESPMEM_PERSISTENT);
        if (resp && location) MHD_add_response_header(resp, "Location", location);
    }
    if (resp == NULL) return MHD_NO;
    MHD_add_response_header(resp, "Content-Type",
                            strcmp(url, "/robots.txt") == 0 ? "text/plain" : "text/html");
    log_request(w, ref->index, url, status, &arrived);
    enum MHD_Result r = MHD_queue_response(conn, (unsigned)status, resp);
    MHD_destroy_response(resp);
    return r;
}

/* ---------------------------------------------------------------- main */

static const char sw_usage[] =
    "usage: tessera serve-web --sites S --pages P --port PORT [--seed N] [--traps]\n"
    "         [--junk-robots I] [--slow-site I:MS] [--log FILE] [--duration SEC] [--list]\n"
    "  Serve a deterministic synthetic web on 127.0.0.1, site s on port PORT+s, P\n"
    "  pages per site, until SIGINT/SIGTERM (or --duration seconds).  Crawl it from\n"
    "  http://127.0.0.1:PORT/.  --log records every request as\n"
    "    TIME PORT PATH STATUS   (tab-separated, wall-clock seconds)\n"
    "  --list prints the URLs of every page a complete crawl must fetch and exits.\n"
    "  --traps adds a 404, a 500, a redirect, a 50 MB page, binary junk, a dead\n"
    "  site, escaped disallowed paths, a redirect to host localhost and links to\n"
    "  10.0.0.1 and 169.254.169.254 to site 0; --junk-robots I serves junk as site\n"
    "  I's robots.txt; --slow-site I:MS delays site I's answers by MS milliseconds.\n";

static int parse(web *w, int argc, char **argv)
{
    const char *slow = NULL;
    const app_opt opts[] = {
        {"sites", APP_OPT_INT, &w->sites, 1, 1000, 0, NULL, NULL},
        {"pages", APP_OPT_INT, &w->pages, 1, 1000000, 0, NULL, NULL},
        {"port", APP_OPT_INT, &w->port, 1024, 65000, 0, NULL, NULL},
        {"seed", APP_OPT_INT, &w->seed, 0, 1L << 62, 0, NULL, NULL},
        {"junk-robots", APP_OPT_INT, &w->junk_robots, 0, 999, 0, NULL, NULL},
        {"slow-site", APP_OPT_STRING, &slow, 0, 0, 0, NULL, NULL},
        {"log", APP_OPT_STRING, &w->log_path, 0, 0, 0, NULL, NULL},
        {"duration", APP_OPT_DOUBLE, &w->duration, 0, 1e7, 0, NULL, NULL},
        {"traps", APP_OPT_FLAG, &w->traps, 0, 0, 1, NULL, NULL},
        {"list", APP_OPT_FLAG, &w->list, 0, 0, 1, NULL, NULL},
    };
    int rc =
        app_parse_options(SW_APP, sw_usage, argc, argv, opts, (int)(sizeof opts / sizeof *opts));
    if (rc != 0) return rc;
    if (w->sites == 0 || w->pages == 0 || w->port == 0) {
        app_error(SW_APP, "options --sites, --pages and --port are required");
        return -1;
    }
    if (w->port + w->sites - 1 > 65535) {
        app_error(SW_APP, "option --port: %ld + %ld sites passes port 65535", w->port, w->sites);
        return -1;
    }
    snprintf(w->away, sizeof w->away, "http://localhost:%ld/r/away.html", w->port);
    if (slow) {
        static const app_int_field f[] = {{"site", 0, 999}, {"milliseconds", 0, 600000}};
        long v[2];
        if (app_parse_int_fields(SW_APP, "slow-site", "I:MS", slow, f, 2, 2, v) < 0) return -1;
        w->slow_site = v[0], w->slow_ms = v[1];
    }
    return 0;
}

static void print_list(const web *w)
{
    for (long s = 0; s < w->sites; s++) {
        printf("http://127.0.0.1:%ld/\n", w->port + s);
        for (long i = 0; i < w->pages; i++)
            printf("http://127.0.0.1:%ld/p/%ld.html\n", w->port + s, i);
    }
}

static struct MHD_Daemon *start_site(site_ref *ref)
{
    struct sockaddr_in addr;
    memset(&addr, 0, sizeof addr);
    addr.sin_family = AF_INET;
    addr.sin_port = htons((uint16_t)(ref->w->port + ref->index));
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    return MHD_start_daemon(MHD_USE_INTERNAL_POLLING_THREAD | MHD_USE_THREAD_PER_CONNECTION,
                            (uint16_t)(ref->w->port + ref->index), NULL, NULL, on_request, ref,
                            MHD_OPTION_SOCK_ADDR, (struct sockaddr *)&addr,
                            MHD_OPTION_CONNECTION_TIMEOUT, 60u, MHD_OPTION_END);
}

/* Wait for SIGINT/SIGTERM, or the duration. */
static void wait_for_stop(const web *w, const sigset_t *set)
{
    struct timespec ts = {w->duration > 0 ? (time_t)w->duration : 1000000000, 0};
    int sig;
    do {
        sig = sigtimedwait(set, NULL, &ts);
    } while (sig < 0 && errno == EINTR);
}

int serve_web_main(int argc, char **argv)
{
    web w;
    memset(&w, 0, sizeof w);
    w.junk_robots = -1, w.slow_site = -1;
    int rc = parse(&w, argc, argv);
    if (rc != 0) return rc > 0 ? 0 : 2;
    if (w.list) {
        print_list(&w);
        return fflush(stdout) == 0 ? 0 : 1;
    }
    if (w.log_path && (w.log = fopen(w.log_path, "a")) == NULL) {
        app_error(SW_APP, "option --log: cannot write %s: %s", w.log_path, strerror(errno));
        return 1;
    }
    pthread_mutex_init(&w.log_lock, NULL);
    sigset_t set;
    sigemptyset(&set);
    sigaddset(&set, SIGINT), sigaddset(&set, SIGTERM);
    pthread_sigmask(SIG_BLOCK, &set, NULL); /* the daemons' threads inherit it */
    site_ref *refs = calloc((size_t)w.sites, sizeof *refs);
    struct MHD_Daemon **d = calloc((size_t)w.sites, sizeof *d);
    for (long s = 0; refs && d && s < w.sites && rc == 0; s++) {
        refs[s] = (site_ref){&w, s};
        if ((d[s] = start_site(&refs[s])) == NULL) {
            app_error(SW_APP, "cannot listen on 127.0.0.1:%ld (in use?)", w.port + s);
            rc = 1;
        }
    }
    if (!refs || !d) rc = 1;
    if (rc == 0) {
        printf("serve-web: %ld sites of %ld pages on http://127.0.0.1:%ld/ to :%ld\n", w.sites,
               w.pages, w.port, w.port + w.sites - 1);
        fflush(stdout);
        wait_for_stop(&w, &set);
    }
    for (long s = 0; d && s < w.sites; s++)
        if (d[s]) MHD_stop_daemon(d[s]);
    free(d), free(refs);
    if (w.log) fclose(w.log);
    pthread_mutex_destroy(&w.log_lock);
    return rc;
}
