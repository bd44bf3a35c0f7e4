/*
 * progress.c — whether an application prints per-iteration progress lines.
 * By default only when someone is watching: stderr is a terminal.
 */
#include <unistd.h>

#include "common.h"

int app_progress_enabled(app_progress_mode mode)
{
    if (mode == APP_PROGRESS_ON) return 1;
    if (mode == APP_PROGRESS_OFF) return 0;
    return isatty(STDERR_FILENO);
}
