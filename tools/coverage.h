/* SPDX-License-Identifier: GPL-2.0 */
/*
 * What covers an object file, and if nothing, why (coverage.c): for
 * "codectl status", "status PID" and "status FILE".
 */
#ifndef CODECTL_TOOLS_COVERAGE_H
#define CODECTL_TOOLS_COVERAGE_H

#include <stdint.h>
#include <sys/types.h>

#include <linux/codectl.h>

#define COV_HOW_MAX	640
/* A line of the daemon's state file naming an object it did not cover. */
#define COV_LINE_MAX	(CODECTL_DEMAND_PATH_MAX + 80)

/*
 * What the module and the daemon say, read once: the imports (debugfs,
 * root), the daemon's state (its cache directory, the objects it could
 * not cover), whether it reads the queue and how many records wait.
 */
struct cov_ctx {
	struct cov_import { uint64_t dev, ino, size; } *imports;
	unsigned int nimports;
	int imports_known;		/* debugfs readable */
	char cache[4096];
	char (*uncovered)[COV_LINE_MAX];	/* "PATH (why)", the state's */
	unsigned int nuncovered;
	long long reader, pending;	/* -1: not known */
};

/* An object's verdict. */
enum cov_state { COV_YES, COV_NO, COV_UNKNOWN };

struct coverage {
	enum cov_state state;
	char how[COV_HOW_MAX];	/* how it is covered, or why it is not */
};

void cov_load(struct cov_ctx *c, const char *state);
void cov_free(struct cov_ctx *c);
void cov_file(const struct cov_ctx *c, int fd, const char *path, int key,
	      struct coverage *v);
int cov_open(pid_t pid, unsigned long long start, unsigned long long end,
	     unsigned long long ino, const char *path);

#endif
