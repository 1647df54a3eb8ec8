// SPDX-License-Identifier: GPL-2.0
/*
 * The codectl tool: a process's executable regions (/proc/PID/maps)
 * against its registrations (CODECTL_QUERY), and how the unwinder walks
 * each: with SFrame (the object's own, an import, a registration), with a
 * JIT table (codectl_jit), or by frame pointers, which is how anonymous
 * code no table covers (a JIT runtime's: V8, HotSpot, ...) is walked.
 * For "codectl list PID" and "codectl status PID"; for the latter, where
 * the SFrame of a file mapping comes from (the file, an import and its
 * cache entry, the process), and for one without rules why it has none
 * (coverage.c).
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/types.h>
#include <unistd.h>

#include <codectl.h>

#include "commands.h"
#include "coverage.h"

/* A registration as the walk sees it: its range, kind and origin. */
struct reg {
	uint64_t start, end;
	uint32_t kind, origin;
	int sframe;
};

static int regs_load(pid_t pid, struct reg **out, int *nr)
{
	struct codectl_query_info q;
	struct reg *r = NULL, *t;
	uint64_t addr = 0;
	int n = 0, tries = 0;

	for (;;) {
		memset(&q, 0, sizeof(q));
		q.addr = addr;
		if (codectl_query_pid(pid, &q)) {
			if (errno == ENOENT)
				break;
			if (errno == EAGAIN && ++tries < 10)
				continue;
			free(r);
			return -1;
		}
		t = realloc(r, (n + 1) * sizeof(*r));
		if (!t) {
			free(r);
			return -1;
		}
		r = t;
		r[n++] = (struct reg) {
			q.text_start, q.text_end, q.kind, q.origin,
			q.sframe_start != 0,
		};
		addr = q.text_end;
	}
	*out = r;
	*nr = n;
	return 0;
}

/* How the walk covers [start, end): what the registrations there say. */
static const char *walked_by(const struct reg *r, int n, uint64_t start,
			     uint64_t end, int anon, uint32_t *origin)
{
	int i, jit = 0, sframe = 0;
	const char *how = NULL;

	*origin = 0;
	for (i = 0; i < n; i++) {
		if (r[i].end <= start || r[i].start >= end)
			continue;
		if (r[i].kind == CODECTL_KIND_JIT) {
			jit = 1;
		} else if (r[i].sframe) {
			sframe = 1;
			*origin |= r[i].origin;
		}
	}
	if (jit)
		how = "JIT table (codectl_jit), frame pointers elsewhere";
	else if (sframe)
		how = "SFrame";
	else if (anon)
		how = "frame pointers (no JIT table)";
	return how;
}

/*
 * A file mapping of @pid, for codectl status: where its SFrame comes
 * from (@origin: its registrations'), or why it has none, into @buf.
 * Return: 1 when stacks through it are cut (no rules, and none to come).
 */
static int file_verdict(const struct cov_ctx *c, pid_t pid,
			unsigned long long start, unsigned long long end,
			unsigned long long ino, const char *name, int has_rules,
			uint32_t origin, char *buf, size_t len)
{
	struct coverage v;
	int fd;

	if (has_rules && !(origin & CODECTL_ORIGIN_SYNTH)) {
		snprintf(buf, len, "%s", origin & CODECTL_ORIGIN_REGISTERED ?
			 "SFrame registered by the process" :
			 "SFrame in the file");
		return 0;
	}
	if (has_rules && (origin & CODECTL_ORIGIN_REGISTERED)) {
		snprintf(buf, len, "SFrame synthesised by libcodectl, "
			 "registered by the process");
		return 0;
	}
	fd = cov_open(pid ? pid : getpid(), start, end, ino, name);
	if (fd < 0) {
		snprintf(buf, len, "%s; cannot open the file: %s", has_rules ?
			 "SFrame, imported" : "no rules: frame pointers only",
			 strerror(errno));
		return !has_rules;
	}
	cov_file(c, fd, name, 1, &v);
	close(fd);
	if (has_rules) {
		snprintf(buf, len, "SFrame, %s", v.how);
		return 0;
	}
	if (v.state == COV_YES) {
		snprintf(buf, len, "%s; used at the first unwind that meets "
			 "it", v.how);
		return 0;
	}
	snprintf(buf, len, "no rules: frame pointers only; %s", v.how);
	return 1;
}

/**
 * regions_show() - print PID's executable mappings and how each is walked
 * @pid:	the process (0: this one)
 * @c:		codectl status: file mappings too, with where their rules
 *		come from or why they have none (coverage.c); NULL for
 *		codectl list: anonymous code only
 * @uncovered:	set to the number of file mappings without rules
 *
 * Return: the number of regions printed, or -1 with errno set (the
 * registrations or /proc/PID/maps could not be read).
 */
int regions_show(pid_t pid, const struct cov_ctx *c, int *uncovered)
{
	char path[64], line[4352], perms[8], name[4096], buf[COV_HOW_MAX + 64];
	unsigned long long start, end, ino;
	struct reg *r = NULL;
	int n = 0, shown = 0;
	uint32_t origin;
	FILE *f;

	*uncovered = 0;
	if (regs_load(pid, &r, &n))
		return -1;
	if (pid)
		snprintf(path, sizeof(path), "/proc/%d/maps", (int)pid);
	else
		snprintf(path, sizeof(path), "/proc/self/maps");
	f = fopen(path, "re");
	if (!f) {
		free(r);
		return -1;
	}
	while (fgets(line, sizeof(line), f)) {
		const char *how;
		int anon;

		name[0] = '\0';
		if (sscanf(line, "%llx-%llx %7s %*s %*s %llu %4095[^\n]",
			   &start, &end, perms, &ino, name) < 4 ||
		    perms[2] != 'x')
			continue;
		/* Anonymous: no name, or one prctl(PR_SET_VMA) gave it. */
		anon = !name[0] || !strncmp(name, "[anon:", 6);
		if (!anon && !c)
			continue;
		how = walked_by(r, n, start, end, anon, &origin);
		if (!anon && name[0] == '/') {
			*uncovered += file_verdict(c, pid, start, end, ino,
						   name, how != NULL, origin,
						   buf, sizeof(buf));
			how = buf;
		} else if (!how) {
			how = name[0] == '[' ? "frame pointers (the kernel's)" :
			      "no rules: frame pointers only";
			*uncovered += name[0] != '[';
		}
		if (!shown++)
			printf("%-33s %-46s %s\n", c ? "EXECUTABLE" :
			       "ANONYMOUS CODE", "WALKED BY", "MAPPING");
		printf("%016llx-%016llx %-46s %s\n", start, end, how,
		       anon ? "(anonymous)" : name);
	}
	fclose(f);
	free(r);
	return shown;
}
