/*
 * options.c — option parsing helpers and the one-line error format shared
 * by every application: "tessera APP: option --NAME: REASON".  Parsers accept
 * the whole text or nothing: no leading blanks, no trailing garbage.
 */
#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "common.h"

void app_error(const char *app, const char *fmt, ...)
{
    char msg[1024];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    /* One fprintf so that lines from several ranks do not interleave. */
    fprintf(stderr, "tessera %s: %s\n", app, msg);
}

/* Option names are accepted with or without their leading "--". */
static const char *option_dashes(const char *opt) { return strncmp(opt, "--", 2) == 0 ? "" : "--"; }

static int text_is_number_like(const char *text)
{
    return text[0] != '\0' && !isspace((unsigned char)text[0]);
}

int app_parse_int(const char *app, const char *opt, const char *text, long min, long max, long *out)
{
    if (!text) {
        app_error(app, "option %s%s: missing value", option_dashes(opt), opt);
        return -1;
    }
    char *end = NULL;
    errno = 0;
    long v = text_is_number_like(text) ? strtol(text, &end, 10) : 0;
    if (!end || *end != '\0' || errno != 0 || v < min || v > max) {
        app_error(app, "option %s%s: expected an integer in [%ld, %ld], got '%s'",
                  option_dashes(opt), opt, min, max, text);
        return -1;
    }
    *out = v;
    return 0;
}

int app_parse_double(const char *app, const char *opt, const char *text, double min, double max,
                     double *out)
{
    if (!text) {
        app_error(app, "option %s%s: missing value", option_dashes(opt), opt);
        return -1;
    }
    char *end = NULL;
    double v = text_is_number_like(text) ? strtod(text, &end) : NAN;
    if (!end || *end != '\0' || !isfinite(v) || v < min || v > max) {
        app_error(app, "option %s%s: expected a number in [%g, %g], got '%s'", option_dashes(opt),
                  opt, min, max, text);
        return -1;
    }
    *out = v;
    return 0;
}

int app_parse_int_fields(const char *app, const char *opt, const char *format, const char *text,
                         const app_int_field *fields, int nfields, int required, long *out)
{
    const char *at = text;
    for (int n = 0; n < nfields; n++) {
        const char *colon = strchr(at, ':');
        size_t len = colon ? (size_t)(colon - at) : strlen(at);
        char field[32], name[64];
        if (len == 0 || len >= sizeof field) break; /* an empty or absurd field */
        memcpy(field, at, len);
        field[len] = '\0';
        snprintf(name, sizeof name, "%s (%s)", opt, fields[n].name);
        if (app_parse_int(app, name, field, fields[n].min, fields[n].max, &out[n]) != 0) return -1;
        if (colon == NULL) {
            if (n + 1 >= required) return n + 1;
            break; /* too few */
        }
        at = colon + 1;
    }
    app_error(app, "option --%s: expected %s, got '%s'", opt, format, text);
    return -1;
}

/* ---------------------------------------------------------------- tables of options */

static const app_opt *find_opt(const app_opt *opts, int n, const char *name, size_t len)
{
    for (int i = 0; i < n; i++)
        if (strlen(opts[i].name) == len && strncmp(opts[i].name, name, len) == 0) return &opts[i];
    return NULL;
}

static int set_opt_value(const char *app, const app_opt *o, const char *value)
{
    long v;
    switch (o->kind) {
    case APP_OPT_INT:
        return app_parse_int(app, o->name, value, (long)o->min, (long)o->max, (long *)o->dest);
    case APP_OPT_INT32:
        if (app_parse_int(app, o->name, value, (long)o->min, (long)o->max, &v) != 0) return -1;
        *(int *)o->dest = (int)v;
        return 0;
    case APP_OPT_DOUBLE:
        return app_parse_double(app, o->name, value, o->min, o->max, (double *)o->dest);
    case APP_OPT_STRING:
        if (value[0] == '\0') {
            app_error(app, "option --%s: empty value", o->name);
            return -1;
        }
        *(const char **)o->dest = value;
        return 0;
    case APP_OPT_TEXT: *(const char **)o->dest = value; return 0;
    case APP_OPT_CUSTOM: return o->parse(app, o, value);
    default: /* a flag */
        if (o->parse != NULL) return o->parse(app, o, NULL);
        *(int *)o->dest = o->flag_value;
        return 0;
    }
}

/* One "--name", "--name value" or "--name=value" at argv[*i]. */
static int parse_one_opt(const char *app, const app_opt *opts, int n, int argc, char **argv, int *i)
{
    const char *arg = argv[*i] + 2;
    const char *eq = strchr(arg, '=');
    size_t len = eq ? (size_t)(eq - arg) : strlen(arg);
    const app_opt *o = find_opt(opts, n, arg, len);
    if (o == NULL) {
        app_error(app, "unknown option '%s' (see --help)", argv[*i]);
        return -1;
    }
    if (o->seen != NULL && (*o->seen)++) {
        app_error(app, "option --%s: given more than once", o->name);
        return -1;
    }
    if (o->kind == APP_OPT_FLAG) {
        if (eq) {
            app_error(app, "option --%s takes no value", o->name);
            return -1;
        }
        return set_opt_value(app, o, NULL);
    }
    const char *value = eq ? eq + 1 : (*i + 1 < argc ? argv[++*i] : NULL);
    if (value == NULL) {
        app_error(app, "option --%s: missing value", o->name);
        return -1;
    }
    return set_opt_value(app, o, value);
}

int app_parse_options(const char *app, const char *usage, int argc, char **argv,
                      const app_opt *opts, int n)
{
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--help") == 0 || strcmp(argv[i], "-h") == 0) {
            fputs(usage, stdout);
            return 1;
        }
        if (strncmp(argv[i], "--", 2) != 0) {
            app_error(app, "unexpected argument '%s' (see --help)", argv[i]);
            return -1;
        }
        if (parse_one_opt(app, opts, n, argc, argv, &i) != 0) return -1;
    }
    return 0;
}

int app_parse_path(const char *app, const app_opt *o, const char *text)
{
    if (text[0] == '\0') {
        app_error(app, "option --%s: missing value", o->name);
        return -1;
    }
    *(const char **)o->dest = text;
    return 0;
}

int app_parse_open_interval(const char *app, const app_opt *o, const char *text)
{
    double *v = o->dest;
    if (app_parse_double(app, o->name, text, o->min, o->max, v) != 0) return -1;
    if (*v > o->min && *v < o->max) return 0;
    app_error(app, "option --%s: must be in (%g, %g), got '%s'", o->name, o->min, o->max, text);
    return -1;
}

int app_parse_options_with(const char *app, const char *usage, int argc, char **argv,
                           const app_opt *own, int n, const app_opt *shared, int m)
{
    app_opt opts[APP_OPT_MAX];
    if (n + m > APP_OPT_MAX) {
        app_error(app, "too many options for one table (%d)", n + m);
        return -1;
    }
    memcpy(opts, shared, (size_t)m * sizeof *opts);
    memcpy(opts + m, own, (size_t)n * sizeof *opts);
    return app_parse_options(app, usage, argc, argv, opts, n + m);
}
