/*
 * crawl_app.h — the state of `tessera run crawl`, shared by crawl.c (the
 * control function and the setup), crawl_fetch.c (the kernel),
 * crawl_options.c and the helpers (crawl_url.c, crawl_robots.c,
 * crawl_html.c).  Private to apps/crawl.
 *
 * The tables (all partitioned by site, co-located):
 *   crawl_url    key crawl_key, value int32 state, max accumulator: a URL
 *                only moves forward, ToFetch < Fetching < Blacklisted < Done;
 *   crawl_text   key crawl_key, the URL itself (variable length);
 *   crawl_page   key crawl_key, a crawl_page_info once fetched;
 *   crawl_polite key site, the wall-clock time its next fetch may start;
 *   crawl_robots key site, its parsed robots.txt (crawl_robots.c).
 * and crawl_counts, a dense table of per-partition counters.  The
 * long-running crawl (the default) adds crawl_term, the instances' statuses
 * for termination detection (crawl_term.c); --rounds runs barrier rounds.
 */
#ifndef TESS_APPS_CRAWL_APP_H
#define TESS_APPS_CRAWL_APP_H

#include <stddef.h>
#include <stdint.h>

#include "../common/ckpt_cli.h"
#include "../common/common.h"

#define CRAWL_APP "crawl"

enum crawl_state { CRAWL_TO_FETCH = 1, CRAWL_FETCHING = 2, CRAWL_BLACKLISTED = 3, CRAWL_DONE = 4 };

/* A URL's key: the hash of its origin (the partitioner reads only this) and
 * of the whole normalised URL. */
typedef struct crawl_key {
    uint64_t site;
    uint64_t url;
} crawl_key;

/* What a fetch gave: the HTTP status (0: no response; error says why). */
typedef struct crawl_page_info {
    int32_t status;
    int32_t error; /* crawl_error */
    int64_t bytes;
} crawl_page_info;

enum crawl_error {
    CRAWL_OK = 0,
    CRAWL_ERR_NETWORK = 1,   /* no response: refused, reset, timed out */
    CRAWL_ERR_TOO_LARGE = 2, /* more than --max-page-bytes */
    CRAWL_ERR_ROBOTS = 3,    /* disallowed by robots.txt (Blacklisted) */
    CRAWL_ERR_WRITE = 4,     /* the page could not be stored */
    CRAWL_ERR_REFUSED = 5    /* its address is one the crawler may not contact */
};

/* Per-partition counters in crawl_counts (key partition * CRAWL_NCOUNT + c). */
enum crawl_counter {
    CRAWL_C_FETCHED,   /* pages fetched (any response or failure) */
    CRAWL_C_OK,        /* of them with status 200 */
    CRAWL_C_BYTES,     /* body bytes received */
    CRAWL_C_REFETCHED, /* pages fetched again after a restore */
    CRAWL_C_BLACKLISTED,
    CRAWL_C_ROBOTS,  /* robots.txt fetches */
    CRAWL_C_PENDING, /* URLs to fetch found at the start of the last round */
    CRAWL_NCOUNT
};

typedef struct crawl_opts {
    const char *seeds;
    long max_pages; /* 0: no limit */
    double per_site_rate;
    long fetchers; /* concurrent fetches per worker */
    double round_seconds;
    int rounds; /* --rounds: barrier rounds instead of long-running kernels */
    double checkpoint_seconds;
    double timeout_seconds;
    long max_page_bytes;
    const char *user_agent;
    const char *scope;           /* "seeds" (default) or "any" */
    const char *allow_hosts;     /* comma-separated hosts beyond the seeds' */
    const char *allow_addresses; /* comma-separated ADDR[/BITS] */
    app_run_opts run;            /* run.output: the output directory */
    app_ckpt_cli ckpt;
} crawl_opts;

/* What the crawler may contact (crawl_scope.c); read-only once built, so
 * every fetcher thread reads it without locks. */
struct sockaddr;
typedef struct crawl_scope {
    int any;      /* --scope any */
    char **hosts; /* sorted: the seeds' hosts and --allow-hosts ("*.NAME" too) */
    size_t nhosts, cap;
    struct crawl_net *nets; /* --allow-addresses */
    size_t nnets;
} crawl_scope;

/* What the control function hands each kernel instance per round. */
typedef struct crawl_round_args {
    int64_t round;
    int64_t budget; /* pages this partition may fetch this round; -1: no limit */
    double seconds; /* start no fetch after this long */
} crawl_round_args;

/* What the control function hands each long-running instance. */
typedef struct crawl_run_args {
    int64_t budget; /* pages all partitions may still fetch; -1: no limit */
} crawl_run_args;

typedef struct crawl_app {
    crawl_opts opt;
    int partitions;
    tess_table *url, *text, *page, *polite, *robots, *counts;
    tess_table *term; /* long-running mode only */
    crawl_scope scope;
    double start;
    char *pages_dir; /* OUTPUT/pages */
    /* control function (rank 0) only: */
    int64_t rounds;
    int64_t totals[CRAWL_NCOUNT];
    uint64_t restored_epoch;
    int64_t restored_fetched;
    app_outfile out_manifest, out_metrics;
} crawl_app;

int crawl_opts_parse(int argc, char **argv, crawl_opts *o);

/* The kernel of one round (crawl_fetch.c). */
int crawl_round_kernel(tess_task *task, const void *args, size_t args_len);
/* The long-running kernel: fetches until the crawl is over (crawl_fetch.c). */
int crawl_run_kernel(tess_task *task, const void *args, size_t args_len);

/* ---- termination of the long-running crawl (crawl_term.c) ---- */
typedef struct crawl_term {
    tess_table *table;
    int part, partitions;
    int64_t gen, ack, probe_seen;
    int idle;
    /* instance 0, the detector: */
    int phase;     /* 0: no probe out; 1: waiting for the acks of `probe` */
    int64_t probe; /* the last probe published */
    int64_t *gens; /* every instance's gen when the probe went out */
    int64_t *cur;  /* the statuses just read, 3 per instance */
} crawl_term;
/* Read this instance's last gen and publish busy with the next one. */
int crawl_term_start(crawl_term *t, tess_table *table, int part, int partitions);
/* Read the probe (into t->probe_seen) and whether the crawl is over. */
int crawl_term_read_probe(crawl_term *t, int *done);
/* Publish busy (a new gen) if idle, before doing anything. */
int crawl_term_busy(crawl_term *t);
/* Publish idle with ack = the probe read before the scan that found nothing. */
int crawl_term_idle(crawl_term *t);
/* Instance 0 while idle: one step of the detection; *done when over. */
int crawl_term_detect(crawl_term *t, int *done);
void crawl_term_free(crawl_term *t);

/* ---- URLs (crawl_url.c) ---- */
#define CRAWL_URL_MAX 2048
/* Resolve href against base (NULL: href must be absolute), drop the
 * fragment, and write "scheme://host[:port]/path[?query]" (scheme and host
 * lower case, default port omitted) to out, and the origin
 * "scheme://host:port" to origin (may be NULL).  Only http and https.
 * 0, or -1 for anything else. */
int crawl_url_normalize(const char *base, const char *href, char *out, size_t cap, char *origin,
                        size_t ocap);
/* qsort order of keys: by site, then URL hash. */
int crawl_key_cmp(const void *a, const void *b);
/* "scheme://host:port" of a normalised URL. */
void crawl_url_origin(const char *url, char *origin, size_t cap);
/* The key of a normalised URL. */
crawl_key crawl_url_key(const char *url);
/* The path and query of a normalised URL ("/" at least). */
const char *crawl_url_path(const char *url);
/* Partitioner: the site hash's partition. */
int crawl_site_partition(const void *key, size_t key_size, int partitions);

/* "host" of a normalised URL (an IPv6 literal keeps its brackets). */
void crawl_url_host(const char *url, char *host, size_t cap);

/* ---- scope (crawl_scope.c) ---- */
/* From --scope, --allow-hosts and --allow-addresses; -1 after a one-line
 * message if one is malformed. */
int crawl_scope_init(crawl_scope *s, const crawl_opts *o);
/* Add the host of a normalised seed URL (a read_seeds callback; s is the
 * crawl_scope); then crawl_scope_finish once all are in. */
int crawl_scope_add_seed(const char *url, void *s);
void crawl_scope_finish(crawl_scope *s);
/* 1 if links to this normalised URL are followed. */
int crawl_scope_allows(const crawl_scope *s, const char *url);
/* 1 if the crawler must not connect to sa, with why ("ADDR is a link-local
 * address ...") in why. */
int crawl_scope_refuses(const crawl_scope *s, const struct sockaddr *sa, char *why, size_t cap);
void crawl_scope_free(crawl_scope *s);

/* ---- robots.txt (crawl_robots.c) ---- */
/* Parse a robots.txt body into the blob stored in crawl_robots (the rules of
 * the group for user agent `agent`, or of "*").  *len_out its size; the
 * caller frees it.  NULL when out of memory. */
unsigned char *crawl_robots_parse(const char *body, size_t len, const char *agent, size_t *len_out);
/* A blob that allows everything (no robots.txt) or nothing (robots.txt
 * unreachable), with the reason for the manifest. */
unsigned char *crawl_robots_fixed(int allow_all, const char *reason, size_t *len_out);
/* 1 if `path` may be fetched under the blob's rules, 0 if not. */
int crawl_robots_allows(const unsigned char *blob, size_t len, const char *path);
/* The normal form in which rules and paths are compared (RFC 9309 2.2.2): an
 * escape of an unreserved character decoded, other escapes in upper-case
 * hex, octets that a URI may not hold raw escaped.  The caller frees it;
 * NULL when out of memory. */
char *crawl_robots_normalize(const char *path);
/* The reason stored in a blob ("" for a parsed robots.txt). */
const char *crawl_robots_reason(const unsigned char *blob, size_t len);

/* ---- HTML (crawl_html.c) ---- */
/* Call fn(href, arg) for every <a href> of the page, in document order. */
typedef void (*crawl_link_fn)(const char *href, void *arg);
void crawl_html_links(const char *body, size_t len, crawl_link_fn fn, void *arg);

/* ---- the output directory ---- */
/* OUTPUT/pages/<32 hex digits of the key>.html */
void crawl_page_path(const crawl_app *app, crawl_key k, char *out, size_t cap);

#endif
