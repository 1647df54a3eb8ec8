// SPDX-License-Identifier: GPL-2.0
/*
 * The codectl tool, "codectl status": one screen telling whether user
 * stacks will be complete, and if not why.
 *
 *   codectl status [--state FILE] [PID | FILE]
 *
 * Module and ABI version, the tracer hooks (per kernel function), the
 * kernel's lockdown (when on), discovery, the daemon (alive, its queue),
 * imports (count, bytes), the last objects the daemon could not cover;
 * then every object file the running processes map, and each one nothing
 * covers, with why (coverage.c); with PID, each executable mapping of
 * that process and how the walk covers it (SFrame: the file's, an import
 * and its cache entry, the process's; a JIT table; frame pointers:
 * regions.c), or why nothing does; with FILE, that object file's
 * verdict.  Exit status 0 when all is well, 1 when something is off (each
 * such line starts with "!"), 2 for bad arguments, 3 when it could not
 * see everything (lines starting with "?": without root, other users'
 * processes, the imports and the queue are hidden).
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <codectl.h>

#include "commands.h"
#include "coverage.h"

#define DEBUGFS		"/sys/kernel/debug/codectl/"
#define PARAMS		"/sys/module/codectl/parameters/"
#define STATE_FILE	"/run/codectl/daemon"

static int off;		/* something is off: exit 1 */
static int unseen;	/* something could not be seen: exit 3 */

/* Print a status line; @bad marks it (and the exit status): 1 "!", 2 "?". */
static void line(int bad, const char *what, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
static void line(int bad, const char *what, const char *fmt, ...)
{
	va_list ap;

	off |= bad == 1;
	unseen |= bad == 2;
	printf("%c %-10s ", " !?"[bad], what);
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
	char names[768] = "";

	for (n = 0; !codectl_hook_stats(n, &h); n++) {
		size_t l = strlen(names);

		snprintf(names + l, sizeof(names) - l, "%s%s %s", n ? ", " : "",
			 h.name, h.flags & CODECTL_HOOK_ATTACHED ? "attached" :
			 "NOT attached");
		attached += !!(h.flags & CODECTL_HOOK_ATTACHED);
	}
	if (errno == EPERM) {
		line(2, "hooks", "(needs CAP_PERFMON to see them)");
		return;
	}
	if (!n) {
		line(1, "hooks", "none: %s", strerror(errno));
		return;
	}
	/*
	 * The module lists the walkers this kernel has: say which it lacks,
	 * and what that means (5.10 .. 6.12 and 7.x's arm64 have no
	 * deferred unwinder; 6.1's arm64 no user stack traces for ftrace).
	 */
	if (!strstr(names, "arch_stack_walk_user"))
		snprintf(names + strlen(names), sizeof(names) - strlen(names),
			 "; no arch_stack_walk_user in this kernel (no CONFIG_USER_STACKTRACE_SUPPORT: ftrace and BPF get no user stacks)");
	if (!strstr(names, "unwind_user"))
		snprintf(names + strlen(names), sizeof(names) - strlen(names),
			 "; no unwind_user in this kernel (no deferred unwinding, CONFIG_UNWIND_USER: perf's fp,defer callchains unavailable)");
	/* perf's walker is the one every kernel has: it must be attached. */
	line(!attached || strstr(names, "perf_callchain_user NOT"), "hooks",
	     "%s", names);
}

/*
 * The kernel's lockdown (securityfs), when it is on: what it leaves to
 * codectl and its tracers, as make check-distros measured it (nothing
 * refused under integrity; tracefs under confidentiality).  Nothing is
 * printed without the lockdown LSM or with "[none]".
 */
static void show_lockdown(void)
{
	char buf[128], *mode, *end;

	first_line("/sys/kernel/security/lockdown", buf, sizeof(buf));
	mode = strchr(buf, '[');
	end = mode ? strchr(mode, ']') : NULL;
	if (!end)
		return;
	*end = 0;
	mode++;
	if (!strcmp(mode, "integrity"))
		line(0, "lockdown", "integrity (Secure Boot's): nothing codectl "
		     "or its tracers use is refused; modules must be signed "
		     "by a key the kernel trusts (docs/install.md)");
	else if (!strcmp(mode, "confidentiality"))
		line(0, "lockdown", "confidentiality: tracefs is refused, so "
		     "trace-cmd, ftrace's userstacktrace and perf's tracepoint "
		     "events record nothing; perf -g's sampling and bpftrace's "
		     "profile probes get complete stacks (docs/install.md)");
	else if (strcmp(mode, "none"))
		line(2, "lockdown", "%s: not a mode this tool knows", mode);
}

/* The daemon's background priming (--prime-share), from STATE.prime. */
static void show_priming(const char *state)
{
	char path[4200], end[640] = "", buf[640];
	long long done;
	FILE *f;

	snprintf(path, sizeof(path), "%s.prime", state);
	done = keyed(path, "prime_done");
	if (done < 0)
		return;
	f = fopen(path, "re");
	while (f && fgets(buf, sizeof(buf), f))
		if (!strncmp(buf, "prime_end ", 10))
			snprintf(end, sizeof(end), ": %s", buf + 10);
	if (f)
		fclose(f);
	end[strcspn(end, "\n")] = 0;
	printf("  %-10s %s: %lld objects looked at, %lld synthesised into the "
	       "cache (%.1f MiB), %lld s%s\n", "priming",
	       done ? "done" : *end ? "stopped" : "in progress",
	       keyed(path, "prime_objects"), keyed(path, "prime_written"),
	       keyed(path, "prime_cache_bytes") / 1048576.0,
	       keyed(path, "prime_seconds"), end);
}

static void show_daemon(const char *state, long long reader)
{
	long long pid = keyed(state, "pid"), pending, queued, dropped;
	char buf[640];
	FILE *f;

	if (reader < 0) {
		line(2, "daemon", "(needs root and debugfs to see the queue)");
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
	show_priming(state);
}

/*
 * codectl status PID: each executable mapping of the process and how the
 * walk covers it; a file mapping without rules is a line marked !.
 */
static void show_process(const struct cov_ctx *c, long pid)
{
	int n, uncovered;

	printf("  %-10s %ld\n", "process", pid);
	n = regions_show(pid, c, &uncovered);
	if (n < 0)
		line(1, "process", "%ld: %s", pid, strerror(errno));
	else if (uncovered)
		line(1, "process", "%d of %d executable mappings without rules: "
		     "stacks through them are cut where they have no frame "
		     "pointers", uncovered, n);
}

/* codectl status FILE: that object file's verdict. */
static void show_file(const struct cov_ctx *c, const char *path)
{
	struct coverage v;
	int fd = open(path, O_RDONLY | O_CLOEXEC);

	printf("  %-10s %s\n", "file", path);
	if (fd < 0) {
		line(1, "file", "%s: %s", path, strerror(errno));
		return;
	}
	cov_file(c, fd, path, 1, &v);
	close(fd);
	line(v.state == COV_NO ? 1 : v.state == COV_UNKNOWN ? 2 : 0, "file",
	     "%s", v.how);
}

/* An object file in use, seen once (device, inode). */
struct seen_obj {
	unsigned int maj, min;
	unsigned long long ino;
};

#define OBJ_SHOWN	20	/* uncovered objects named, at most */

/*
 * codectl status: every object file the running processes map for
 * execution, each once; those nothing covers named (!), with why.
 */
static void show_objects(const struct cov_ctx *c)
{
	char line_[4352], perms[8], name[4096], maps[300];
	unsigned long long start, end, ino;
	unsigned int maj, min, nseen = 0, i, nbad = 0, nunknown = 0, hidden = 0;
	struct seen_obj *seen = NULL, *t;
	struct dirent *e;
	struct coverage v;
	DIR *proc = opendir("/proc");
	FILE *f;
	int fd;

	if (!proc) {
		line(2, "objects", "/proc: %s", strerror(errno));
		return;
	}
	while ((e = readdir(proc))) {
		if (e->d_name[0] < '1' || e->d_name[0] > '9')
			continue;
		snprintf(maps, sizeof(maps), "/proc/%s/maps", e->d_name);
		f = fopen(maps, "re");
		if (!f) {
			hidden += errno == EACCES || errno == EPERM;
			continue;
		}
		while (fgets(line_, sizeof(line_), f)) {
			if (sscanf(line_, "%llx-%llx %7s %*s %x:%x %llu %4095[^\n]",
				   &start, &end, perms, &maj, &min, &ino,
				   name) < 7 || perms[2] != 'x' || name[0] != '/')
				continue;
			for (i = 0; i < nseen; i++)
				if (seen[i].ino == ino && seen[i].maj == maj &&
				    seen[i].min == min)
					break;
			if (i < nseen)
				continue;
			t = realloc(seen, (nseen + 1) * sizeof(*seen));
			if (!t)
				break;
			seen = t;
			seen[nseen++] = (struct seen_obj) { maj, min, ino };
			fd = cov_open(atoi(e->d_name), start, end, ino, name);
			if (fd < 0) {
				if (errno == ENOENT || errno == ESRCH)
					continue;	/* it exited */
				v.state = COV_UNKNOWN;
				snprintf(v.how, sizeof(v.how),
					 "cannot open it: %s", strerror(errno));
			} else {
				cov_file(c, fd, name, 0, &v);
				close(fd);
			}
			if (v.state == COV_YES)
				continue;
			if (v.state == COV_NO)
				nbad++;
			else
				nunknown++;
			if (nbad + nunknown <= OBJ_SHOWN)
				printf("%c %-10s %s (pid %s): %s\n",
				       v.state == COV_NO ? '!' : '?', "", name,
				       e->d_name, v.how);
		}
		fclose(f);
	}
	closedir(proc);
	free(seen);
	if (nbad + nunknown > OBJ_SHOWN)
		printf("  %-10s ... and %u more\n", "",
		       nbad + nunknown - OBJ_SHOWN);
	if (nbad)
		line(1, "objects", "%u of the %u object files in use not "
		     "covered (above): stacks through them are cut where they "
		     "have no frame pointers", nbad, nseen);
	if (nunknown || hidden)
		line(2, "objects", "%u of the %u object files seen not known, "
		     "%u processes not seen (run it as root)", nunknown, nseen,
		     hidden);
	if (!nbad && !nunknown && !hidden)
		line(0, "objects", "all %u object files in use are covered",
		     nseen);
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
	const char *state = STATE_FILE, *file = NULL;
	struct codectl_version v;
	char ver[64], p[64], *end;
	long long n, bytes, reader;
	struct cov_ctx c;
	long pid = 0;

	if (argc >= 2 && !strcmp(argv[0], "--state")) {
		state = argv[1];
		argc -= 2;
		argv += 2;
	}
	if (argc == 1 && argv[0][0] >= '0' && argv[0][0] <= '9') {
		errno = 0;
		pid = strtol(argv[0], &end, 10);
		if (*end || errno || pid <= 0 || pid > INT32_MAX)
			argc = 2;
	} else if (argc == 1) {
		file = argv[0];
		if (!*file || access(file, F_OK)) {
			fprintf(stderr, "codectl status: %s: %s\n", file,
				*file ? strerror(errno) : "empty name");
			return 2;
		}
	}
	if (argc > 1) {
		fputs("usage: codectl status [--state FILE] [PID | FILE]\n",
		      stderr);
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
	show_lockdown();
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
		line(2, "imports", "(needs root and debugfs to see them)");
	cov_load(&c, state);
	if (pid)
		show_process(&c, pid);
	else if (file)
		show_file(&c, file);
	else
		show_objects(&c);
	cov_free(&c);
	if (off)
		printf("Something is off (lines marked !): %s will be cut.\n",
		       pid ? "some of its stacks" : file ?
		       "stacks through it" : "some stacks");
	else if (unseen)
		printf("Cannot tell whether %s be complete (lines marked ?).\n",
		       pid ? "its stacks will" : file ?
		       "stacks through it will" : "stacks will");
	else
		printf("%s\n", pid ? "Its stacks will be complete." : file ?
		       "Stacks through it will be complete." :
		       "Stacks will be complete: every object file in use is "
		       "covered.");
	return off ? 1 : unseen ? 3 : 0;
}
