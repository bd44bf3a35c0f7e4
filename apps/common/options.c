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
