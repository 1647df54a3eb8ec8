// SPDX-License-Identifier: GPL-2.0
/*
 * The codectl tool, "codectl status": one screen telling whether user
 * stacks will be complete, and if not why.
 *
 *   codectl status [--state FILE] [PID]
 *
 * Module and ABI version, the tracer hooks (per kernel function),
 * discovery, the daemon (alive, its queue), imports (count, bytes), the
 * last objects the daemon could not cover; with PID, each executable
 * mapping of that process and how the walk covers it (SFrame, a JIT
 * table, frame pointers: regions.c).  Exit status 0 when all is
 * well, 1 when something is off (each such line starts with "!"), 2 for
 * bad arguments.  Counters need root (debugfs, CAP_PERFMON): without,
 * it says what it could not see.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <codectl.h>

#include "commands.h"

#define DEBUGFS		"/sys/kernel/debug/codectl/"
#define PARAMS		"/sys/module/codectl/parameters/"
#define STATE_FILE	"/run/codectl/daemon"

static int off;		/* something is off: exit 1 */

/* Print a status line; @bad marks it (and the exit status). */
static void line(int bad, const char *what, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
static void line(int bad, const char *what, const char *fmt, ...)
{
	va_list ap;

	off |= bad;
	printf("%c %-10s ", bad ? '!' : ' ', what);
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	putchar('\n');
}

/* The value of "NAME value" in file @path, or -1. */
static long long keyed(const char *path, const char *name)
{
	char line[640], key[128];
	long long v, found = -1;
	FILE *f = fopen(path, "re");

	if (!f)
		return -1;
	/* Line by line: values that are not numbers ("cache DIR") too. */
	while (fgets(line, sizeof(line), f))
		if (sscanf(line, "%127s %lld", key, &v) == 2 &&
		    !strcmp(key, name)) {
			found = v;
			break;
		}
	fclose(f);
	return found;
}

/* The first line of a small file, without its newline, or "". */
static void first_line(const char *path, char *buf, size_t len)
{
	FILE *f = fopen(path, "re");

	buf[0] = 0;
	if (!f)
		return;
	if (!fgets(buf, len, f))
		buf[0] = 0;
	buf[strcspn(buf, "\n")] = 0;
	fclose(f);
}

static void show_hooks(void)
{
	struct codectl_hook_stats h;
	unsigned int n, attached = 0;
	char names[512] = "";

	for (n = 0; !codectl_hook_stats(n, &h); n++) {
		size_t l = strlen(names);

		snprintf(names + l, sizeof(names) - l, "%s%s %s", n ? ", " : "",
			 h.name, h.flags & CODECTL_HOOK_ATTACHED ? "attached" :
			 "NOT attached");
		attached += !!(h.flags & CODECTL_HOOK_ATTACHED);
	}
	if (errno == EPERM) {
		line(0, "hooks", "(needs CAP_PERFMON to see them)");
		return;
	}
	if (!n) {
		line(1, "hooks", "none: %s", strerror(errno));
		return;
	}
	/* perf's walker is the one every kernel has: it must be attached. */
	line(!attached || strstr(names, "perf_callchain_user NOT"), "hooks",
	     "%s", names);
}

static void show_daemon(const char *state, long long reader)
{
	long long pid = keyed(state, "pid"), pending, queued, dropped;
	char buf[640];
	FILE *f;

	if (reader < 0) {
		line(0, "daemon", "(needs root and debugfs to see the queue)");
	} else if (!reader) {
		line(1, "daemon", "not running: executables and libraries "
		     "without SFrame or an import get frame pointers only "
		     "(systemctl start codectl-daemon)");
	} else {
		pending = keyed(DEBUGFS "demand", "pending");
		queued = keyed(DEBUGFS "demand", "queued");
		dropped = keyed(DEBUGFS "demand", "dropped");
		line(pid > 0 && pid != reader, "daemon",
		     "running, pid %lld; queue: %lld pending, %lld queued, "
		     "%lld dropped%s", reader, pending, queued, dropped,
		     pid > 0 && pid != reader ?
		     " (its state file names another pid)" : "");
	}
	if (pid <= 0)
		return;
	printf("  %-10s imported %lld (from its cache %lld, synthesised %lld), "
	       "without CFI %lld, own SFrame %lld, failed %lld\n", "",
	       keyed(state, "imported"), keyed(state, "from_cache"),
	       keyed(state, "synthesised"), keyed(state, "no_cfi"),
	       keyed(state, "own_sframe"), keyed(state, "failed"));
	f = fopen(state, "re");
	if (!f)
		return;
	while (fgets(buf, sizeof(buf), f))
		if (!strncmp(buf, "uncovered ", 10))
			printf("  %-10s not covered: %s", "", buf + 10);
	fclose(f);
}

/*
 * codectl status PID: each executable mapping of the process and how the
 * walk covers it; a file mapping without rules is a line marked !.
 */
static void show_process(long pid)
{
	int n, uncovered;

	printf("  %-10s %ld\n", "process", pid);
	n = regions_show(pid, 1, &uncovered);
	if (n < 0)
		line(1, "process", "%ld: %s", pid, strerror(errno));
	else if (uncovered)
		line(1, "process", "%d of %d executable mappings without rules: "
		     "stacks through them are cut where they have no frame "
		     "pointers", uncovered, n);
}

/**
 * cmd_status() - codectl status
 * @argc:	arguments after "status"
 * @argv:	them
 *
 * Return: the exit status.
 */
int cmd_status(int argc, char **argv)
{
	const char *state = STATE_FILE;
	struct codectl_version v;
	char ver[64], p[64], *end;
	long long n, bytes, reader;
	long pid = 0;

	if (argc >= 2 && !strcmp(argv[0], "--state")) {
		state = argv[1];
		argc -= 2;
		argv += 2;
	}
	if (argc == 1) {
		pid = strtol(argv[0], &end, 10);
		if (!*argv[0] || *end || pid <= 0 || pid > INT32_MAX)
			argc = 2;
	}
	if (argc > 1) {
		fputs("usage: codectl status [--state FILE] [PID]\n", stderr);
		return 2;
	}
	if (codectl_version(&v)) {
		line(1, "module", "not loaded (%s): the kernel's own unwinder "
		     "only (modprobe codectl)", strerror(errno));
		return 1;
	}
	first_line("/sys/module/codectl/version", ver, sizeof(ver));
	line(v.abi_version < CODECTL_ABI_VERSION, "module",
	     "codectl %s, ABI %u%s", ver[0] ? ver : "?", v.abi_version,
	     v.abi_version < CODECTL_ABI_VERSION ?
	     " (older than this tool's: no demand queue)" : "");
	show_hooks();
	first_line(PARAMS "discover", p, sizeof(p));
	line(p[0] != 'Y', "discovery", "%s", p[0] == 'Y' ?
	     "on: objects with SFrame or an import are covered at the first "
	     "unwind that meets them" :
	     "OFF (parameter discover): only registered objects are covered");
	reader = keyed(DEBUGFS "demand", "reader");
	show_daemon(state, reader);
	n = keyed(DEBUGFS "imports", "imports");
	bytes = keyed(DEBUGFS "imports", "bytes");
	if (n >= 0)
		line(0, "imports", "%lld objects, %.1f MiB of SFrame", n,
		     bytes / 1048576.0);
	else
		line(0, "imports", "(needs root and debugfs to see them)");
	if (pid)
		show_process(pid);
	if (pid)
		printf("%s\n", off ? "Something is off (lines marked !): some "
		       "of its stacks will be cut." : "Its stacks will be "
		       "complete.");
	else
		printf("%s\n", off ? "Something is off (lines marked !): some "
		       "stacks will be cut." : "Stacks will be complete for "
		       "every object with SFrame or CFI.");
	return off;
}
