/*
 * crawl_options.c — the command line of `tessera run crawl`.
 */
#include <string.h>

#include "crawl_app.h"

static const char crawl_usage[] =
    "usage: tessera run crawl --seeds FILE --output DIR [--max-pages N] [--per-site-rate R]\n"
    "         [--fetchers F] [--workers W] [--partitions P] [--timeout S]\n"
    "         [--max-page-bytes B] [--rounds [--round-seconds S]] [--user-agent NAME]\n"
    "         [--scope seeds|any] [--allow-hosts H,...] [--allow-addresses A[/BITS],...]\n"
    "         [--checkpoint-dir DIR [--checkpoint-seconds S] [--restore]\n"
    "         [--checkpoint-overwrite]]\n"
    "         [--metrics FILE] [--progress | --quiet] [--help]\n"
    "  Crawl the web from the URLs of FILE (one http or https URL per line; blank\n"
    "  lines and lines starting with '#' are skipped).  A site is an origin (scheme,\n"
    "  host, port); its robots.txt is honoured, at most R fetches per second start on\n"
    "  it (default 1) and one at a time; every URL is fetched once.  Each worker runs\n"
    "  F transfers at once (default 8).  Pages with status 2xx are stored as\n"
    "  DIR/pages/KEY.html and every URL met is listed in DIR/manifest.tsv:\n"
    "    URL  STATE  STATUS  BYTES  FILE  NOTE\n"
    "  STATE is done, blacklisted (robots.txt) or to-fetch (--max-pages reached).\n"
    "  Redirects are not followed but their targets are crawled as links.  A page of\n"
    "  more than B bytes (default 16 MiB) is recorded as too-large.  The crawl ends\n"
    "  when nothing is left to fetch or after N pages (without --rounds each\n"
    "  partition fetches at most its share of N).\n"
    "  Links and redirects are followed only to the seeds' hosts and the hosts of\n"
    "  --allow-hosts ('*.NAME' for subdomains), unless --scope any.  Loopback,\n"
    "  private and link-local addresses (127/8, 10/8, 172.16/12, 192.168/16,\n"
    "  169.254/16, ::1, fc00::/7, fe80::/10, ...) are never connected to unless\n"
    "  --allow-addresses lists them (e.g. 127.0.0.1 or 10.0.0.0/8).\n"
    "  One kernel instance per partition crawls until every instance is idle with\n"
    "  no link in flight (each rank needs a worker per partition it holds);\n"
    "  --rounds crawls in barrier rounds of --round-seconds (default 1) instead.\n"
    "  --checkpoint-seconds S (default 10) takes a consistent checkpoint every S\n"
    "  seconds while the kernels run (CpPeriodic; with --rounds at the end of a\n"
    "  round); --restore continues from the newest one: pages fetched after it are\n"
    "  fetched again (counted as refetched), none is lost.  A DIR holding another\n"
    "  job's checkpoints is refused unless --checkpoint-overwrite deletes them.\n"
    "  See docs/crawl.md.\n";

int crawl_opts_parse(int argc, char **argv, crawl_opts *o)
{
    memset(o, 0, sizeof *o);
    o->per_site_rate = 1.0;
    o->fetchers = 8;
    o->timeout_seconds = 30.0;
    o->max_page_bytes = 16L << 20;
    o->user_agent = "tessera-crawl/1.0";
    const app_opt opts[] = {
        {"seeds", APP_OPT_STRING, &o->seeds, 0, 0, 0, NULL, NULL},
        {"user-agent", APP_OPT_STRING, &o->user_agent, 0, 0, 0, NULL, NULL},
        {"scope", APP_OPT_STRING, &o->scope, 0, 0, 0, NULL, NULL},
        {"allow-hosts", APP_OPT_STRING, &o->allow_hosts, 0, 0, 0, NULL, NULL},
        {"allow-addresses", APP_OPT_STRING, &o->allow_addresses, 0, 0, 0, NULL, NULL},
        {"max-pages", APP_OPT_INT, &o->max_pages, 1, 1e12, 0, NULL, NULL},
        {"per-site-rate", APP_OPT_DOUBLE, &o->per_site_rate, 0.001, 1000, 0, NULL, NULL},
        {"fetchers", APP_OPT_INT, &o->fetchers, 1, 1024, 0, NULL, NULL},
        {"timeout", APP_OPT_DOUBLE, &o->timeout_seconds, 0.01, 3600, 0, NULL, NULL},
        {"max-page-bytes", APP_OPT_INT, &o->max_page_bytes, 1, 1L << 31, 0, NULL, NULL},
        {"round-seconds", APP_OPT_DOUBLE, &o->round_seconds, 0.01, 3600, 0, NULL, NULL},
        {"rounds", APP_OPT_FLAG, &o->rounds, 0, 0, 1, NULL, NULL},
        {"checkpoint-dir", APP_OPT_STRING, &o->ckpt.dir, 0, 0, 0, NULL, NULL},
        {"checkpoint-seconds", APP_OPT_DOUBLE, &o->checkpoint_seconds, 0.01, 1e6, 0, NULL, NULL},
        {"restore", APP_OPT_FLAG, &o->ckpt.restore, 0, 0, 1, NULL, NULL},
        {"checkpoint-overwrite", APP_OPT_FLAG, &o->ckpt.overwrite, 0, 0, 1, NULL, NULL},
    };
    int rc = app_run_parse(CRAWL_APP, crawl_usage, &o->run, 1 << 16, NULL, opts,
                           (int)(sizeof opts / sizeof *opts), argc, argv);
    if (rc != 0) return rc;
    if (o->seeds == NULL || o->run.output == NULL) {
        app_error(CRAWL_APP, "option --%s is required", o->seeds ? "output" : "seeds");
        return -1;
    }
    if (o->checkpoint_seconds > 0 && o->ckpt.dir == NULL) {
        app_error(CRAWL_APP, "option --checkpoint-seconds needs --checkpoint-dir");
        return -1;
    }
    if (o->round_seconds > 0 && !o->rounds) {
        app_error(CRAWL_APP, "option --round-seconds needs --rounds");
        return -1;
    }
    if (o->round_seconds == 0) o->round_seconds = 1.0;
    if (o->checkpoint_seconds == 0) o->checkpoint_seconds = 10.0;
    return app_ckpt_cli_check(CRAWL_APP, &o->ckpt);
}
