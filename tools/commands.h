/* SPDX-License-Identifier: GPL-2.0 */
#ifndef CODECTL_TOOLS_COMMANDS_H
#define CODECTL_TOOLS_COMMANDS_H

#include <sys/types.h>
#include <time.h>

/* The commands of their own files; @argc/@argv: the arguments after it. */
int cmd_import(int argc, char **argv);	/* import.c */
int cmd_daemon(int argc, char **argv);	/* daemon.c */
int cmd_status(int argc, char **argv);	/* status.c */

/* regions.c: PID's executable regions and how each is walked. */
struct cov_ctx;
int regions_show(pid_t pid, const struct cov_ctx *c, int *uncovered);

/* Milliseconds of CLOCK_MONOTONIC: for timing what the commands do. */
static inline double now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

#endif
