/*
 * crawl_fetch.c — the crawler's kernels on one partition (Piccolo §4.5):
 * the long-running one (the default) and one round (--rounds).
 *
 * The instance takes a snapshot of its partition's URLs still to fetch,
 * groups them by site and fetches with libcurl's multi interface, at most
 * --fetchers transfers at once, one per site at a time, a site's starts at
 * least 1/R seconds apart (the politeness table, in wall-clock time so it
 * survives a restore).  A site's robots.txt is fetched first and its rules
 * kept in the robots table; a URL they disallow becomes Blacklisted.  A
 * fetched page is stored, its links sent as ToFetch to their sites'
 * partitions (the max accumulator leaves a URL already further along as it
 * is) and its URL set to Done.  The round ends at the deadline, on the
 * page budget, or when the partition has nothing left to fetch; transfers
 * under way finish first, so at a barrier nothing is half fetched.  Links
 * out of scope are dropped, and a connection to an address the scope
 * refuses is never opened (crawl_scope.c).
 *
 * The long-running kernel does the same without rounds: it keeps its sites
 * (politeness, robots rules) for the whole crawl, scans its partition again
 * for URLs it has not taken yet, takes each URL at most once (the `taken`
 * set, so its own writes need not be visible to its next scan), and stops
 * when crawl_term.c finds every instance idle.  Between two transfers'
 * results it calls tess_task_checkpoint_point(): a checkpoint never holds a
 * transfer's results in part (page record, links, Done and counters are
 * issued between two points); a transfer under way at the cut is Fetching
 * in the checkpoint and is fetched again after a restore.
 */
#include <curl/curl.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "crawl_app.h"

/* ---------------------------------------------------------------- a set of URL hashes */

typedef struct url_set {
    uint64_t *slot; /* 0 = empty; a hash of 0 is stored as 1 */
    size_t cap, n;
} url_set;

static int set_has(const url_set *s, uint64_t h)
{
    if (h == 0) h = 1;
    for (size_t j = s->cap ? h % s->cap : 0; s->cap && s->slot[j]; j = (j + 1) % s->cap)
        if (s->slot[j] == h) return 1;
    return 0;
}

/* 1 if h was added, 0 if already there, -1 out of memory. */
static int set_add(url_set *s, uint64_t h)
{
    if (h == 0) h = 1;
    if (2 * (s->n + 1) > s->cap) {
        size_t cap = s->cap ? 2 * s->cap : 1024;
        uint64_t *slot = calloc(cap, sizeof *slot);
        if (slot == NULL) return -1;
        for (size_t i = 0; i < s->cap; i++)
            for (size_t j = s->slot[i] % cap; s->slot[i]; j = (j + 1) % cap)
                if (slot[j] == 0) {
                    slot[j] = s->slot[i];
                    break;
                }
        free(s->slot);
        s->slot = slot, s->cap = cap;
    }
    for (size_t j = h % s->cap;; j = (j + 1) % s->cap) {
        if (s->slot[j] == h) return 0;
        if (s->slot[j] == 0) {
            s->slot[j] = h;
            s->n++;
            return 1;
        }
    }
}

/* ---------------------------------------------------------------- the round's state */

typedef struct site {
    uint64_t hash;
    char origin[CRAWL_URL_MAX - 32];
    crawl_key *urls; /* still to look at, this round (owned) */
    size_t n, next;
    double next_start; /* wall clock */
    unsigned char *robots;
    size_t robots_len;
    int busy; /* a transfer of this site is under way */
} site;

typedef struct body {
    char *data;
    size_t len, cap, limit;
    int too_large;
} body;

typedef struct transfer {
    CURL *easy;
    site *site; /* NULL when the slot is free */
    crawl_key key;
    int robots; /* fetching the site's robots.txt */
    char url[CRAWL_URL_MAX];
    body body;
    double started; /* wall clock */
    const crawl_scope *scope;
    int attempts, refusals; /* connections tried, and refused by the scope */
    char refused[160];      /* why the last one was */
} transfer;

typedef struct round {
    crawl_app *app;
    tess_ctx *ctx;
    int part;
    crawl_round_args args;
    double deadline;
    site **sites;
    size_t nsites, cursor;
    /* the long-running kernel: */
    int run;
    tess_task *task;
    url_set taken;               /* URLs this instance started or blacklisted */
    double next_scan;            /* when to scan the partition again while busy */
    double scan_seconds;         /* what the last scan took */
    int64_t saved[CRAWL_NCOUNT]; /* counts already written to crawl_counts */
    transfer *slots;
    int nslots, busy;
    CURLM *multi;
    url_set sent; /* links already sent this round */
    int64_t count[CRAWL_NCOUNT];
    int rc;
} round;

static double wall_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static int fail(round *r, int rc, const char *what)
{
    if (r->rc == 0) r->rc = tess_set_error(r->ctx, rc, "crawl partition %d: %s", r->part, what);
    return r->rc;
}

/* A variable-length value of key into a fresh buffer (NUL added); NULL if absent. */
static unsigned char *get_blob(tess_table *t, const void *key, size_t *len_out)
{
    size_t len = 0;
    unsigned char small[256];
    int rc = tess_table_get(t, key, small, sizeof small, &len);
    if (rc != 0 && !(rc == TESS_ERR_INVAL && len > sizeof small)) return NULL;
    unsigned char *buf = malloc(len + 1);
    if (buf == NULL) return NULL;
    if (rc == 0) memcpy(buf, small, len);
    else if (tess_table_get(t, key, buf, len, &len) != 0) {
        free(buf);
        return NULL;
    }
    buf[len] = '\0';
    *len_out = len;
    return buf;
}

/* ---------------------------------------------------------------- the snapshot */

/* The partition's URLs to fetch (ToFetch, or Fetching left by a run that
 * was stopped), sorted by site. */
static int collect_keys(round *r, crawl_key **keys_out, size_t *n_out)
{
    tess_iter *it = NULL;
    int rc = tess_table_iter(r->app->url, r->part, &it);
    crawl_key *keys = NULL;
    size_t n = 0, cap = 0;
    const void *k, *v;
    size_t len;
    while (rc >= 0 && (rc = tess_iter_next(it, &k, &v, &len)) == 1) {
        int32_t state;
        memcpy(&state, v, sizeof state);
        if (state >= CRAWL_BLACKLISTED) continue;
        if (r->run && set_has(&r->taken, ((const crawl_key *)k)->url)) continue;
        if (n == cap) {
            cap = cap ? 2 * cap : 256;
            crawl_key *grown = realloc(keys, cap * sizeof *keys);
            if (grown == NULL) {
                rc = TESS_ERR_NOMEM;
                break;
            }
            keys = grown;
        }
        memcpy(&keys[n++], k, sizeof *keys);
    }
    tess_iter_free(it);
    if (rc < 0) {
        free(keys);
        return fail(r, rc, "reading the URL table");
    }
    if (n > 1) qsort(keys, n, sizeof *keys, crawl_key_cmp);
    *keys_out = keys, *n_out = n;
    return 0;
}

/* Load a site's politeness time and robots rules. */
static void site_load(round *r, site *s)
{
    double t;
    size_t len;
    if (tess_table_get(r->app->polite, &s->hash, &t, sizeof t, &len) == 0) s->next_start = t;
    s->robots = get_blob(r->app->robots, &s->hash, &s->robots_len);
}

/* The site's origin from one of its URLs.  A link's text and state travel
 * as two writes: while none of its URLs has its text yet, the site waits
 * (for the next round, or the next scan). */
static void site_origin(round *r, site *s)
{
    size_t len;
    for (size_t i = 0; s->origin[0] == '\0' && i < s->n; i++) {
        unsigned char *url = get_blob(r->app->text, &s->urls[i], &len);
        if (url == NULL) continue;
        crawl_url_origin((const char *)url, s->origin, sizeof s->origin);
        free(url);
    }
    if (s->origin[0] == '\0') s->next = s->n; /* nothing to do for this site yet */
}

static void sites_free(round *r)
{
    for (size_t i = 0; i < r->nsites; i++) {
        free(r->sites[i]->robots);
        free(r->sites[i]->urls);
        free(r->sites[i]);
    }
    free(r->sites);
    r->sites = NULL, r->nsites = 0, r->cursor = 0;
}

/* The site of hash h, made (and loaded) if new; NULL when out of memory.
 * sites[0..nsites) is sorted by hash. */
static site *site_of(round *r, uint64_t h, size_t *cap)
{
    size_t lo = 0, hi = r->nsites;
    while (lo < hi) {
        size_t mid = (lo + hi) / 2;
        if (r->sites[mid]->hash < h) lo = mid + 1;
        else hi = mid;
    }
    if (lo < r->nsites && r->sites[lo]->hash == h) return r->sites[lo];
    if (r->nsites == *cap) {
        size_t grown_cap = *cap ? 2 * *cap : 16;
        site **grown = realloc(r->sites, grown_cap * sizeof *grown);
        if (grown == NULL) return NULL;
        r->sites = grown, *cap = grown_cap;
    }
    site *s = calloc(1, sizeof *s);
    if (s == NULL) return NULL;
    s->hash = h;
    site_load(r, s);
    memmove(&r->sites[lo + 1], &r->sites[lo], (r->nsites - lo) * sizeof *r->sites);
    r->sites[lo] = s;
    r->nsites++;
    return s;
}

/* Hand keys[0..n) (sorted by site) to their sites as what is left to look
 * at; a site not among them has nothing left. */
static int assign_keys(round *r, const crawl_key *keys, size_t n)
{
    size_t cap = r->nsites;
    for (size_t i = 0; i < r->nsites; i++) {
        free(r->sites[i]->urls);
        r->sites[i]->urls = NULL, r->sites[i]->n = r->sites[i]->next = 0;
    }
    for (size_t i = 0, j; i < n; i = j) {
        for (j = i + 1; j < n && keys[j].site == keys[i].site;) j++;
        site *s = site_of(r, keys[i].site, &cap);
        crawl_key *urls = malloc((j - i) * sizeof *urls);
        if (s == NULL || urls == NULL) {
            free(urls);
            return fail(r, TESS_ERR_NOMEM, "out of memory");
        }
        memcpy(urls, &keys[i], (j - i) * sizeof *urls);
        s->urls = urls, s->n = j - i, s->next = 0;
        site_origin(r, s);
    }
    if (r->cursor >= r->nsites) r->cursor = 0;
    return 0;
}

/* Take a new snapshot; 0 with r->nsites sites (0: nothing to fetch).  The
 * long-running kernel keeps its sites from one scan to the next. */
static int snapshot(round *r)
{
    crawl_key *keys = NULL;
    size_t n = 0;
    double t0 = wall_now();
    if (!r->run) sites_free(r);
    if (collect_keys(r, &keys, &n) != 0) return r->rc;
    int rc = assign_keys(r, keys, n);
    free(keys);
    r->scan_seconds = wall_now() - t0;
    return rc;
}

/* ---------------------------------------------------------------- sending links */

static void set_state(round *r, crawl_key k, int32_t state)
{
    int rc = tess_table_update(r->app->url, &k, &state, sizeof state);
    if (rc != 0) fail(r, rc, "updating the URL table");
}

typedef struct link_ctx {
    round *r;
    const char *base;
} link_ctx;

/* A link found on a page: a URL to fetch, at its site's partition. */
static void send_link(round *r, const char *base, const char *href)
{
    char url[CRAWL_URL_MAX];
    if (crawl_url_normalize(base, href, url, sizeof url, NULL, 0) != 0) return;
    if (!crawl_scope_allows(&r->app->scope, url)) return;
    crawl_key k = crawl_url_key(url);
    int added = set_add(&r->sent, k.url);
    if (added < 0) fail(r, TESS_ERR_NOMEM, "out of memory");
    if (added <= 0) return;
    int rc = tess_table_put(r->app->text, &k, url, strlen(url) + 1);
    if (rc != 0) fail(r, rc, "updating the URL text table");
    set_state(r, k, CRAWL_TO_FETCH);
}

static void on_link(const char *href, void *arg)
{
    link_ctx *l = arg;
    send_link(l->r, l->base, href);
}

/* ---------------------------------------------------------------- transfers */

static size_t on_body(char *data, size_t size, size_t n, void *arg)
{
    body *b = arg;
    size_t len = size * n;
    if (b->len + len > b->limit) {
        b->too_large = 1;
        return 0; /* aborts the transfer */
    }
    if (b->len + len + 1 > b->cap) {
        size_t cap = b->cap ? b->cap : 16384;
        while (cap < b->len + len + 1) cap *= 2;
        char *grown = realloc(b->data, cap);
        if (grown == NULL) return 0;
        b->data = grown, b->cap = cap;
    }
    memcpy(b->data + b->len, data, len);
    b->len += len;
    b->data[b->len] = '\0';
    return len;
}

/* libcurl's hook before each connection: the address it resolved for this
 * one (so a name that turns into 169.254.169.254 later is caught too). */
static curl_socket_t open_socket(void *arg, curlsocktype purpose, struct curl_sockaddr *addr)
{
    transfer *t = arg;
    t->attempts++;
    if (purpose == CURLSOCKTYPE_IPCXN &&
        crawl_scope_refuses(t->scope, &addr->addr, t->refused, sizeof t->refused)) {
        t->refusals++;
        return CURL_SOCKET_BAD;
    }
    return socket(addr->family, addr->socktype | SOCK_CLOEXEC, addr->protocol);
}

/* Whether a transfer failed because every address it tried was refused. */
static int was_refused(const transfer *t, CURLcode res)
{
    return res != CURLE_OK && t->refusals > 0 && t->refusals == t->attempts;
}

static int start_transfer(round *r, transfer *t, site *s, int robots)
{
    const crawl_opts *o = &r->app->opt;
    t->site = s, t->robots = robots;
    t->body.len = 0, t->body.too_large = 0;
    t->scope = &r->app->scope;
    t->attempts = t->refusals = 0;
    t->body.limit = robots ? 512 * 1024 : (size_t)o->max_page_bytes;
    if (t->easy == NULL && (t->easy = curl_easy_init()) == NULL)
        return fail(r, TESS_ERR_NOMEM, "curl_easy_init failed");
    curl_easy_reset(t->easy);
    curl_easy_setopt(t->easy, CURLOPT_URL, t->url);
    curl_easy_setopt(t->easy, CURLOPT_WRITEFUNCTION, on_body);
    curl_easy_setopt(t->easy, CURLOPT_WRITEDATA, &t->body);
    curl_easy_setopt(t->easy, CURLOPT_USERAGENT, o->user_agent);
    curl_easy_setopt(t->easy, CURLOPT_TIMEOUT_MS, (long)(o->timeout_seconds * 1000));
    curl_easy_setopt(t->easy, CURLOPT_CONNECTTIMEOUT_MS, (long)(o->timeout_seconds * 1000));
    curl_easy_setopt(t->easy, CURLOPT_MAXFILESIZE_LARGE, (curl_off_t)t->body.limit);
    curl_easy_setopt(t->easy, CURLOPT_NOSIGNAL, 1L);
    curl_easy_setopt(t->easy, CURLOPT_PROTOCOLS_STR, "http,https");
    curl_easy_setopt(t->easy, CURLOPT_OPENSOCKETFUNCTION, open_socket);
    curl_easy_setopt(t->easy, CURLOPT_OPENSOCKETDATA, t);
    /* Direct connections only: through a proxy (http_proxy and the like)
     * the address checked would be the proxy's, not the site's. */
    curl_easy_setopt(t->easy, CURLOPT_PROXY, "");
    /* Redirects are links: the target is fetched from its own site, under
     * that site's robots.txt and rate. */
    curl_easy_setopt(t->easy, CURLOPT_FOLLOWLOCATION, 0L);
    curl_easy_setopt(t->easy, CURLOPT_ACCEPT_ENCODING, "");
    curl_easy_setopt(t->easy, CURLOPT_PRIVATE, t);
    if (curl_multi_add_handle(r->multi, t->easy) != CURLM_OK)
        return fail(r, TESS_ERR_IO, "curl_multi_add_handle failed");
    s->busy = 1;
    t->started = wall_now();
    r->busy++;
    return 0;
}

static void start_robots(round *r, transfer *t, site *s)
{
    snprintf(t->url, sizeof t->url, "%s/robots.txt", s->origin);
    start_transfer(r, t, s, 1);
}

/* The next URL of site s that robots.txt allows into t; 0 if none is left.
 * Disallowed URLs on the way become Blacklisted. */
static int next_allowed(round *r, site *s, transfer *t)
{
    while (s->next < s->n) {
        crawl_key k = s->urls[s->next++];
        size_t len;
        unsigned char *url = get_blob(r->app->text, &k, &len);
        if (url == NULL) continue; /* its text comes later (see site_origin) */
        if (r->run && set_add(&r->taken, k.url) < 0) {
            free(url);
            return fail(r, TESS_ERR_NOMEM, "out of memory"), 0;
        }
        int allowed =
            crawl_robots_allows(s->robots, s->robots_len, crawl_url_path((const char *)url));
        if (allowed) {
            snprintf(t->url, sizeof t->url, "%s", (const char *)url);
            t->key = k;
        }
        free(url);
        if (allowed) return 1;
        set_state(r, k, CRAWL_BLACKLISTED);
        r->count[CRAWL_C_BLACKLISTED]++;
    }
    return 0;
}

/* Whether site s can start a transfer now. */
static int site_ready(const site *s, double now)
{
    return !s->busy && now >= s->next_start && s->next < s->n;
}

static transfer *free_slot(round *r)
{
    for (int i = 0; i < r->nslots; i++)
        if (r->slots[i].site == NULL) return &r->slots[i];
    return NULL;
}

/* Start what may start: sites in turn, from where the last pass stopped. */
static void start_ready(round *r)
{
    double now = wall_now();
    if (r->args.budget == 0) return;
    for (size_t tried = 0; tried < r->nsites && r->busy < r->nslots && r->rc == 0; tried++) {
        site *s = r->sites[r->cursor];
        r->cursor = (r->cursor + 1) % r->nsites;
        if (!site_ready(s, now)) continue;
        transfer *t = free_slot(r);
        if (s->robots == NULL) {
            start_robots(r, t, s);
        } else if (r->args.budget != 0 && next_allowed(r, s, t)) {
            if (r->args.budget > 0) r->args.budget--;
            set_state(r, t->key, CRAWL_FETCHING);
            start_transfer(r, t, s, 0);
        }
    }
}

/* ---------------------------------------------------------------- results */

static void finish_robots(round *r, transfer *t, CURLcode res, long status)
{
    site *s = t->site;
    unsigned char *blob;
    size_t len = 0;
    char reason[320];
    if (was_refused(t, res)) {
        /* never contacted: every URL of the site is blacklisted with why */
        snprintf(reason, sizeof reason, "refused: %s", t->refused);
        blob = crawl_robots_fixed(0, reason, &len);
    } else if (res == CURLE_OK && status >= 200 && status < 300) {
        blob = crawl_robots_parse(t->body.data ? t->body.data : "", t->body.len, "tessera", &len);
    } else if (res == CURLE_OK && status >= 300 && status < 500) {
        /* RFC 9309: an unavailable robots.txt (4xx; redirects not followed
         * here) means no restriction. */
        snprintf(reason, sizeof reason, "robots.txt: HTTP %ld, no rules", status);
        blob = crawl_robots_fixed(1, reason, &len);
    } else {
        /* Unreachable (5xx or no answer): assume everything is disallowed. */
        if (res != CURLE_OK)
            snprintf(reason, sizeof reason, "robots.txt unreachable: %s", curl_easy_strerror(res));
        else snprintf(reason, sizeof reason, "robots.txt unreachable: HTTP %ld", status);
        blob = crawl_robots_fixed(0, reason, &len);
    }
    if (blob == NULL) {
        fail(r, TESS_ERR_NOMEM, "out of memory");
        return;
    }
    int rc = tess_table_put(r->app->robots, &s->hash, blob, len);
    if (rc != 0) fail(r, rc, "updating the robots table");
    s->robots = blob, s->robots_len = len;
    r->count[CRAWL_C_ROBOTS]++;
}

/* Write the page as OUTPUT/pages/KEY.html (a temporary renamed, so a page
 * file is always whole); 1 if it was there already (fetched again after a
 * restore), 0 if new, -1 on a write error. */
static int store_page(round *r, const transfer *t)
{
    char path[4096], *tmp = NULL;
    crawl_page_path(r->app, t->key, path, sizeof path);
    int existed = access(path, F_OK) == 0;
    int fd = app_tmpfile_create(path, &tmp); /* a fresh name: no planted link is followed */
    FILE *fp = fd >= 0 ? fdopen(fd, "wb") : NULL;
    if (fd >= 0 && fp == NULL) close(fd);
    int ok = fp != NULL;
    if (ok && t->body.len) ok = fwrite(t->body.data, 1, t->body.len, fp) == t->body.len;
    if (fp && fclose(fp) != 0) ok = 0;
    if (ok) ok = rename(tmp, path) == 0;
    if (!ok && tmp) unlink(tmp);
    free(tmp);
    return ok ? existed : -1;
}

static int is_html(CURL *easy)
{
    char *type = NULL;
    curl_easy_getinfo(easy, CURLINFO_CONTENT_TYPE, &type);
    return type == NULL || strstr(type, "html") != NULL;
}

static void finish_page(round *r, transfer *t, CURLcode res, long status)
{
    crawl_page_info info = {(int32_t)status, CRAWL_OK, (int64_t)t->body.len};
    if (res != CURLE_OK)
        info.error = t->body.too_large || res == CURLE_FILESIZE_EXCEEDED ? CRAWL_ERR_TOO_LARGE
                     : was_refused(t, res)                               ? CRAWL_ERR_REFUSED
                                                                         : CRAWL_ERR_NETWORK;
    if (info.error == CRAWL_OK && status >= 200 && status < 300) {
        int stored = store_page(r, t);
        if (stored < 0) info.error = CRAWL_ERR_WRITE;
        if (stored > 0) r->count[CRAWL_C_REFETCHED]++;
        if (stored >= 0 && is_html(t->easy)) {
            link_ctx l = {r, t->url};
            crawl_html_links(t->body.data, t->body.len, on_link, &l);
        }
    }
    if (info.error == CRAWL_OK && status >= 300 && status < 400) {
        char *target = NULL;
        curl_easy_getinfo(t->easy, CURLINFO_REDIRECT_URL, &target);
        if (target) send_link(r, t->url, target);
    }
    int rc = tess_table_put(r->app->page, &t->key, &info, sizeof info);
    if (rc != 0) fail(r, rc, "updating the page table");
    set_state(r, t->key, CRAWL_DONE);
    r->count[CRAWL_C_FETCHED]++;
    r->count[CRAWL_C_OK] += info.error == CRAWL_OK && status == 200;
    r->count[CRAWL_C_BYTES] += (int64_t)t->body.len;
}

static void finish_transfers(round *r)
{
    CURLMsg *msg;
    int left;
    while ((msg = curl_multi_info_read(r->multi, &left)) != NULL) {
        if (msg->msg != CURLMSG_DONE) continue;
        transfer *t = NULL;
        long status = 0;
        curl_easy_getinfo(msg->easy_handle, CURLINFO_PRIVATE, (char **)&t);
        curl_easy_getinfo(msg->easy_handle, CURLINFO_RESPONSE_CODE, &status);
        CURLcode res = msg->data.result;
        /* Politeness counts from when the request left, after any connect:
         * that is when the site sees it. */
        curl_off_t sent_us = 0;
        curl_easy_getinfo(msg->easy_handle, CURLINFO_PRETRANSFER_TIME_T, &sent_us);
        t->site->next_start = t->started + 1e-6 * (double)sent_us + 1.0 / r->app->opt.per_site_rate;
        /* Long-running: into the table at once, so a checkpoint holds it. */
        int rc = r->run ? tess_table_put(r->app->polite, &t->site->hash, &t->site->next_start,
                                         sizeof(double))
                        : 0;
        if (rc != 0) fail(r, rc, "updating the politeness table");
        curl_multi_remove_handle(r->multi, msg->easy_handle);
        if (t->robots) finish_robots(r, t, res, status);
        else finish_page(r, t, res, status);
        t->site->busy = 0;
        t->site = NULL;
        r->busy--;
    }
}

/* ---------------------------------------------------------------- the loop */

/* Seconds until some site may start (a large value when none will, or
 * when every slot is taken: then only a transfer's end frees one, and the
 * poll wakes for that by itself). */
static double next_ready_in(const round *r, double now)
{
    double best = 1e9;
    if (r->args.budget == 0 || r->busy >= r->nslots) return best;
    for (size_t i = 0; i < r->nsites; i++) {
        const site *s = r->sites[i];
        if (s->busy || s->next >= s->n) continue;
        double in = s->next_start - now;
        if (in < best) best = in;
    }
    return best < 0 ? 0 : best;
}

/* Nothing in flight and nothing left to start this snapshot: look again
 * (links sent meanwhile, by this instance or others), once the updates of
 * this instance are visible. */
static void save_politeness(round *r);

static int exhausted_snapshot(round *r)
{
    save_politeness(r); /* the new snapshot reads it back */
    int rc = tess_table_flush(r->app->url);
    if (rc == 0) rc = tess_table_flush(r->app->text);
    if (rc != 0) return fail(r, rc, "flushing the URL tables");
    return snapshot(r);
}

static void crawl_loop(round *r)
{
    int looked_again = 0;
    while (r->rc == 0) {
        double now = wall_now();
        int may_start = now < r->deadline && !tess_interrupted(r->ctx);
        if (may_start) start_ready(r);
        double wait = may_start ? next_ready_in(r, wall_now()) : 1e9;
        if (r->busy == 0 && (!may_start || wait >= 1e9)) {
            if (!may_start || r->args.budget == 0 || looked_again) break;
            if (exhausted_snapshot(r) != 0 || r->nsites == 0) break;
            looked_again = 1; /* at most one more look per round */
            continue;
        }
        if (r->busy == 0 && now + wait > r->deadline) {
            /* nothing may start before the deadline: the round is over */
            break;
        }
        /* Clamped in floating point: (int)(1e9 * 1000) overflowed to a
         * negative timeout, which curl_multi_poll refuses at once, so a
         * slow answer was waited for in a busy loop. */
        double ms = wait * 1000.0 + 1.0;
        int timeout_ms = ms >= 100 ? 100 : (int)ms;
        curl_multi_poll(r->multi, NULL, 0, timeout_ms, NULL);
        int running;
        curl_multi_perform(r->multi, &running);
        finish_transfers(r);
    }
}

/* ---------------------------------------------------------------- the kernel */

static void save_politeness(round *r)
{
    for (size_t i = 0; i < r->nsites && r->rc == 0; i++) {
        int rc = tess_table_put(r->app->polite, &r->sites[i]->hash, &r->sites[i]->next_start,
                                sizeof(double));
        if (rc != 0) fail(r, rc, "updating the politeness table");
    }
}

/* Add what the counters gained since the last call. */
static void save_counts(round *r)
{
    for (int c = 0; c < CRAWL_NCOUNT && r->rc == 0; c++) {
        uint64_t key = (uint64_t)r->part * CRAWL_NCOUNT + (uint64_t)c;
        int64_t add = r->count[c] - r->saved[c];
        int rc = add ? tess_table_update(r->app->counts, &key, &add, sizeof add) : 0;
        if (rc != 0) fail(r, rc, "updating the counters");
        r->saved[c] = r->count[c];
    }
}

static int round_init(round *r)
{
    r->nslots = (int)r->app->opt.fetchers;
    r->slots = calloc((size_t)r->nslots, sizeof *r->slots);
    r->multi = curl_multi_init();
    if (r->slots == NULL || r->multi == NULL) return fail(r, TESS_ERR_NOMEM, "out of memory");
    curl_multi_setopt(r->multi, CURLMOPT_MAX_TOTAL_CONNECTIONS, (long)r->nslots);
    return 0;
}

static void round_free(round *r)
{
    for (int i = 0; r->slots && i < r->nslots; i++) {
        if (r->slots[i].easy) curl_easy_cleanup(r->slots[i].easy);
        free(r->slots[i].body.data);
    }
    if (r->multi) curl_multi_cleanup(r->multi);
    free(r->slots);
    sites_free(r);
    free(r->sent.slot);
    free(r->taken.slot);
}

/* A zeroed round of the instance `task` runs. */
static void round_zero(round *r, tess_task *task)
{
    memset(r, 0, sizeof *r);
    r->app = tess_task_app(task);
    r->ctx = tess_task_ctx(task);
    r->part = tess_task_instance(task);
    r->task = task;
}

int crawl_round_kernel(tess_task *task, const void *args, size_t args_len)
{
    round r;
    round_zero(&r, task);
    if (args_len != sizeof r.args) return tess_set_error(r.ctx, TESS_ERR_INVAL, "crawl: bad args");
    memcpy(&r.args, args, sizeof r.args);
    r.deadline = wall_now() + r.args.seconds;
    if (round_init(&r) == 0 && snapshot(&r) == 0) {
        for (size_t i = 0; i < r.nsites; i++) r.count[CRAWL_C_PENDING] += (int64_t)r.sites[i]->n;
        crawl_loop(&r);
    }
    /* Transfers under way at an error are dropped with their handles; the
     * URLs stay Fetching and are fetched again by a later run. */
    save_politeness(&r);
    save_counts(&r);
    round_free(&r);
    return r.rc;
}

/* ---------------------------------------------------------------- the long-running kernel */

/* Whether this instance has anything to do: a transfer under way, or a URL
 * to look at that the budget allows. */
static int has_work(const round *r)
{
    if (r->busy > 0) return 1;
    if (r->args.budget == 0) return 0;
    for (size_t i = 0; i < r->nsites; i++)
        if (r->sites[i]->next < r->sites[i]->n) return 1;
    return 0;
}

/* Scan the partition for URLs not taken yet; while busy at most every 50 ms
 * and every ten scans' time, so a large partition is not scanned away. */
static void rescan(round *r)
{
    snapshot(r);
    double every = 10 * r->scan_seconds;
    r->next_scan = wall_now() + (every > 0.05 ? every : 0.05);
}

/* Between two transfers' results: the counters written, and a checkpoint
 * may cut here (docs/crawl.md, "What a checkpoint holds"). */
static void safe_point(round *r, const crawl_term *t)
{
    save_counts(r);
    int64_t gen = t->gen; /* the position: the next life reads its own from crawl_term */
    int rc = r->rc == 0 ? tess_task_checkpoint_point(r->task, &gen, sizeof gen) : 0;
    if (rc != 0) fail(r, rc, "at a checkpoint point");
}

/* Nothing under way and nothing to start: make this instance's links
 * visible where they go, read the probe, then scan again; idle when that
 * finds nothing (crawl_term.c).  1 when the crawl is over. */
static int idle_step(round *r, crawl_term *t)
{
    int done = 0;
    save_counts(r);
    int rc = tess_table_flush(r->app->url);
    if (rc == 0) rc = tess_table_flush(r->app->text);
    if (rc == 0) rc = crawl_term_read_probe(t, &done);
    if (rc == 0 && !done) {
        rescan(r);
        if (r->rc == 0 && has_work(r)) rc = crawl_term_busy(t);
        else if (r->rc == 0) rc = crawl_term_idle(t);
        if (rc == 0 && r->rc == 0 && t->idle && r->part == 0) rc = crawl_term_detect(t, &done);
    }
    if (rc != 0) fail(r, rc, "detecting the end of the crawl");
    return done;
}

static void sleep_seconds(double s)
{
    struct timespec ts = {.tv_sec = (time_t)s, .tv_nsec = (long)((s - (double)(time_t)s) * 1e9)};
    while (nanosleep(&ts, &ts) != 0 && errno == EINTR) {
    }
}

static void run_loop(round *r, crawl_term *t)
{
    double nap = 0.001;
    while (r->rc == 0) {
        if (tess_interrupted(r->ctx)) {
            fail(r, TESS_ERR_INTERRUPTED, "interrupted");
            break;
        }
        if (wall_now() >= r->next_scan) rescan(r);
        start_ready(r);
        if (!has_work(r)) {
            if (idle_step(r, t) || r->rc != 0) break;
            if (t->idle) {
                /* idle: look again soon, less often the longer it lasts */
                sleep_seconds(nap);
                nap = nap < 0.016 ? 2 * nap : nap;
                safe_point(r, t);
            }
            continue;
        }
        nap = 0.001;
        double ms = next_ready_in(r, wall_now()) * 1000.0 + 1.0;
        int timeout_ms = ms >= 50 ? 50 : (int)ms;
        curl_multi_poll(r->multi, NULL, 0, timeout_ms, NULL);
        int running;
        curl_multi_perform(r->multi, &running);
        finish_transfers(r);
        safe_point(r, t);
    }
}

/* This partition's share of the pages all may still fetch. */
static int64_t budget_share(int64_t total, int part, int partitions)
{
    if (total < 0) return -1;
    return total / partitions + (part < total % partitions);
}

int crawl_run_kernel(tess_task *task, const void *args, size_t args_len)
{
    round r;
    round_zero(&r, task);
    r.run = 1;
    crawl_run_args a;
    if (args_len != sizeof a) return tess_set_error(r.ctx, TESS_ERR_INVAL, "crawl: bad args");
    memcpy(&a, args, sizeof a);
    r.args.budget = budget_share(a.budget, r.part, r.app->partitions);
    crawl_term t;
    int rc = crawl_term_start(&t, r.app->term, r.part, r.app->partitions);
    if (rc != 0) fail(&r, rc, "publishing its status");
    else if (round_init(&r) == 0) run_loop(&r, &t);
    /* As in a round: transfers under way at an error stay Fetching. */
    save_politeness(&r);
    save_counts(&r);
    crawl_term_free(&t);
    round_free(&r);
    return r.rc;
}
