// SPDX-License-Identifier: GPL-2.0
/*
 * codectl: command-line front end of the codectl module.
 *
 *   codectl version          what the loaded module offers
 *   codectl stats            the module's live objects (debugfs, root)
 *   codectl self [--all]     register this program's own loaded objects
 *                            through libcodectl and list what the kernel
 *                            now holds for it; --all: every executable
 *                            segment, with SFrame synthesised from
 *                            .eh_frame where an object has none
 *                            (codectl_register_all())
 *   codectl list [PID]       the registrations of process PID (default:
 *                            this one, which has only what discovery
 *                            found in it): range, kind, origin, SFrame
 *                            version, FDEs, coverage, table, build id,
 *                            pathname; then its anonymous executable
 *                            regions (JIT code) and how each is walked
 *                            (JIT table or frame pointers); another
 *                            process needs the permission its
 *                            /proc/PID/maps needs
 *   codectl unwind           the unwinder's counters: unwinds, frames by
 *                            method, stops by reason; then each tracer
 *                            hook's (perf, ftrace, deferred): attached,
 *                            calls redirected and declined, its frames
 *                            and stops (any user)
 *   codectl synth [-o OUT] [-a ADDR] [-n N] FILE...
 *                            SFrame synthesised from each FILE's .eh_frame
 *                            (codectl_sframe_synth()): coverage, size and
 *                            time (the median of N runs, default 1); -o
 *                            writes the section (one FILE only), to be
 *                            decoded at ADDR (default 0: function starts
 *                            then decode to link-time addresses)
 *   codectl synth -r ADDR[,ADDR...] FILE
 *                            the rule synthesised for each link-time ADDR
 *                            of FILE, one line each: "ADDR: cfa BASE+OFF
 *                            ra ... fp ...", BASE sp, fp, cfa or rN
 *                            (DWARF register N: known only in the
 *                            innermost frame), *(...) a load; or "ADDR:
 *                            none"
 *   codectl synth -c FILE... the module's verdict on each section
 *                            (CODECTL_CHECK_SFRAME: the checks registration
 *                            runs), synthesised in this process's memory
 *   codectl import FILE... | --system | --remove FILE... | --clear | --list
 *                            SFrame synthesised for object files, handed
 *                            to the module for every process (import.c)
 *   codectl daemon [...]     the same on demand, for every object an
 *                            unwind meets (daemon.c)
 *   codectl status [PID|FILE] will stacks be complete, and if not why:
 *                            every object in use; with PID, how each of
 *                            its executable mappings is walked; with
 *                            FILE, that object (status.c, coverage.c)
 *
 * Registrations belong to an address space, so "self" is the way a shell
 * user sees them: it shows exactly what an application linking libcodectl
 * registers.
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <codectl.h>

#include "commands.h"
#include "sframe.h"

#define STATS_PATH "/sys/kernel/debug/codectl/stats"

static int fail(const char *what)
{
	int err = errno;

	fprintf(stderr, "codectl: %s: %s%s\n", what, strerror(err),
		err == ENODEV ? " (is the codectl module loaded?)" : "");
	return 1;
}

static int cmd_version(void)
{
	struct codectl_version v;

	if (codectl_version(&v))
		return fail("version");
	printf("abi_version       %u\n", v.abi_version);
	printf("options           0x%" PRIx64 "\n", (uint64_t)v.options);
	printf("max_registrations %" PRIu64 "\n", (uint64_t)v.max_registrations);
	printf("max_bytes         %" PRIu64 "\n", (uint64_t)v.max_bytes);
	return 0;
}

static int cmd_stats(void)
{
	char line[256];
	FILE *f = fopen(STATS_PATH, "re");

	if (!f)
		return fail(STATS_PATH);
	while (fgets(line, sizeof(line), f))
		fputs(line, stdout);
	fclose(f);
	return 0;
}

/* A QUERY at cursor @addr with buffers for the pathname and build id. */
static void query_init(struct codectl_query_info *q, uint64_t addr,
		       char *path, size_t path_len, unsigned char *build_id,
		       size_t build_id_len)
{
	memset(q, 0, sizeof(*q));
	q->addr = addr;
	q->pathname = (uintptr_t)path;
	q->pathname_len = path_len;
	q->build_id = (uintptr_t)build_id;
	q->build_id_len = build_id_len;
}

/* Print every registration of this process, in address order. */
static int list_registrations(void)
{
	char path[CODECTL_PATH_MAX], link[CODECTL_PATH_MAX];
	unsigned char build_id[CODECTL_BUILD_ID_MAX];
	struct codectl_query_info q;
	uint64_t addr = 0;
	int n = 0;

	for (;;) {
		query_init(&q, addr, path, sizeof(path), build_id,
			   sizeof(build_id));
		q.debug_link_pathname = (uintptr_t)link;
		q.debug_link_len = sizeof(link);
		if (codectl_query(&q)) {
			if (errno == ENOENT)
				break;
			return fail("query");
		}
		printf("%s text %#" PRIx64 "-%#" PRIx64, q.kind == CODECTL_KIND_JIT ?
		       "jit" : "elf", (uint64_t)q.text_start,
		       (uint64_t)q.text_end);
		if (q.sframe_start)
			printf(" sframe %#" PRIx64 "-%#" PRIx64,
			       (uint64_t)q.sframe_start, (uint64_t)q.sframe_end);
		else
			printf(" no-sframe");
		printf(" build-id ");
		for (unsigned int i = 0; i < q.build_id_len; i++)
			printf("%02x", build_id[i]);
		if (!q.build_id_len)
			printf("-");
		printf(" %s\n", q.pathname_len ? path : "-");
		addr = q.text_end;
		n++;
	}
	printf("%d registrations\n", n);
	return 0;
}

static double pct(uint64_t part, uint64_t whole);

static const char *origin_name(uint32_t origin)
{
	/* Discovery with a section codectl import gave the module. */
	if ((origin & CODECTL_ORIGIN_SYNTH) &&
	    (origin & CODECTL_ORIGIN_DISCOVERED))
		return "imported";
	if (origin & CODECTL_ORIGIN_SYNTH)
		return "synthesised";
	if (origin & CODECTL_ORIGIN_DISCOVERED)
		return "discovered";
	if (origin & CODECTL_ORIGIN_REGISTERED)
		return "registered";
	return "unknown";
}

static const char *table_name(uint32_t table)
{
	static const char *const names[] = {
		[CODECTL_TABLE_NONE] = "-",
		[CODECTL_TABLE_FLAT] = "flat",
		[CODECTL_TABLE_FLAT_SHARED] = "flat-shared",
		[CODECTL_TABLE_USER_INDEX] = "user-index",
		[CODECTL_TABLE_USER] = "user",
		[CODECTL_TABLE_KERNEL] = "kernel",
	};

	if (table < sizeof(names) / sizeof(names[0]))
		return names[table];
	return "unknown";
}

/* Why QUERY of another process failed, in words. */
static int list_fail(pid_t pid, int err)
{
	const char *why = strerror(err);

	switch (err) {
	case ENODEV:
		why = "no /dev/codectl (is the codectl module loaded?)";
		break;
	case ESRCH:
		why = "no such process, or it has no address space "
		      "(a kernel thread or a zombie)";
		break;
	case EACCES:
	case EPERM:
		why = "permission denied (reading a process's registrations "
		      "needs what reading its /proc/PID/maps needs)";
		break;
	case E2BIG:
		why = "the loaded codectl module is too old to read "
		      "another process's registrations";
		break;
	}
	if (pid)
		fprintf(stderr, "codectl: list %d: %s\n", (int)pid, why);
	else
		fprintf(stderr, "codectl: list: %s\n", why);
	return 1;
}

/*
 * codectl list [PID]: one line per registration of PID's address space,
 * in address order (CODECTL_QUERY VER2).  Columns: text range, kind,
 * origin, SFrame version, FDEs, coverage (bytes and percent of the text),
 * lookup table, build id, pathname; "-" where there is none.  Then its
 * anonymous executable regions (JIT code) and how each is walked
 * (regions.c).
 */
static int cmd_list(pid_t pid)
{
	char path[CODECTL_PATH_MAX];
	unsigned char build_id[CODECTL_BUILD_ID_MAX];
	struct codectl_query_info q;
	uint64_t addr = 0, len;
	int n = 0, tries = 0, uncovered;

	for (;;) {
		query_init(&q, addr, path, sizeof(path), build_id,
			   sizeof(build_id));
		if (codectl_query_pid(pid, &q)) {
			if (errno == ENOENT)
				break;
			if (errno == EAGAIN && ++tries < 10)
				continue;
			return list_fail(pid, errno);
		}
		if (!n)
			printf("%-33s %-4s %-11s %-6s %6s %17s %-11s %-40s %s\n",
			       "TEXT", "KIND", "ORIGIN", "SFRAME", "FDES",
			       "COVERAGE", "TABLE", "BUILD-ID", "PATH");
		len = q.text_end - q.text_start;
		printf("%016" PRIx64 "-%016" PRIx64 " %-4s %-11s ",
		       (uint64_t)q.text_start, (uint64_t)q.text_end,
		       q.kind == CODECTL_KIND_JIT ? "jit" : "elf",
		       origin_name(q.origin));
		if (q.sframe_start)
			printf("v%-5u %6u %10" PRIu64 " %5.1f%% ",
			       q.sframe_version, q.num_fdes,
			       (uint64_t)q.coverage, pct(q.coverage, len));
		else
			printf("%-6s %6s %10s %6s ", "-", "-", "-", "-");
		printf("%-11s ", table_name(q.sframe_table));
		for (unsigned int i = 0; i < q.build_id_len &&
		     q.build_id_len <= sizeof(build_id); i++)
			printf("%02x", build_id[i]);
		if (!q.build_id_len)
			printf("%-40s", "-");
		else if (q.build_id_len < 20)
			printf("%*s", (int)(40 - 2 * q.build_id_len), "");
		printf(" %s\n", q.pathname_len && q.pathname_len <= sizeof(path) ?
		       path : "-");
		addr = q.text_end;
		n++;
	}
	printf("%d registrations\n", n);
	n = regions_show(pid, NULL, &uncovered);
	if (n < 0)
		return list_fail(pid, errno);
	printf("%d anonymous executable regions\n", n);
	return 0;
}

static int cmd_self(int all)
{
	int n = all ? codectl_register_all(0) : codectl_register_self();

	if (n < 0)
		return fail(all ? "register_all" : "register_self");
	return list_registrations();
}

/* The tracer hooks: one block per kernel function. */
static int cmd_hooks(void)
{
	struct codectl_hook_stats h;
	unsigned int n, i;

	for (n = 0; !codectl_hook_stats(n, &h); n++) {
		printf("hook %s: %s%s", h.name,
		       h.flags & CODECTL_HOOK_ATTACHED ? "attached" : "detached",
		       h.flags & CODECTL_HOOK_FTRACE ? " (ftrace)" : "");
		if (h.error)
			printf(", last attach failed: %s", strerror(-h.error));
		printf("\n  calls %" PRIu64 " redirected %" PRIu64
		       " declined %" PRIu64 " missed %" PRIu64
		       " sframe_fallbacks %" PRIu64 "\n  frames",
		       (uint64_t)h.calls, (uint64_t)h.redirected,
		       (uint64_t)h.declined, (uint64_t)h.missed,
		       (uint64_t)h.fallbacks);
		for (i = CODECTL_FRAME_REGS; i <= CODECTL_FRAME_SIGNAL; i++)
			printf(" %s %" PRIu64, codectl_frame_name(i),
			       (uint64_t)h.frames[i]);
		printf("\n  stops");
		for (i = CODECTL_STOP_OUTERMOST; i < CODECTL_STOP_NR; i++)
			printf(" %s %" PRIu64, codectl_stop_name(i),
			       (uint64_t)h.stops[i]);
		printf("\n");
	}
	if (errno != ENOENT)
		return fail("hook stats");
	return 0;
}

static int cmd_unwind(void)
{
	struct codectl_unwind_stats s;
	unsigned int i;

	if (codectl_unwind_stats(&s))
		return fail("unwind stats");
	printf("unwinds   %" PRIu64 "\n", (uint64_t)s.unwinds);
	printf("requests  %" PRIu64 "\n", (uint64_t)s.requests);
	printf("callbacks %" PRIu64 "\n", (uint64_t)s.callbacks);
	for (i = CODECTL_FRAME_REGS; i <= CODECTL_FRAME_SIGNAL; i++)
		printf("frames_%s %" PRIu64 "\n", codectl_frame_name(i),
		       (uint64_t)s.frames[i]);
	for (i = CODECTL_STOP_OUTERMOST; i < CODECTL_STOP_NR; i++)
		printf("stop_%s %" PRIu64 "\n", codectl_stop_name(i),
		       (uint64_t)s.stops[i]);
	return cmd_hooks();
}

static double pct(uint64_t part, uint64_t whole)
{
	return whole ? 100.0 * part / whole : 0.0;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

static int write_file(const char *path, const void *buf, size_t size)
{
	FILE *f = fopen(path, "we");

	if (!f || fwrite(buf, 1, size, f) != size) {
		if (f)
			fclose(f);
		return -1;
	}
	return fclose(f);
}

/*
 * The kernel's verdict on the section synthesised from @fd, in this
 * process's memory (CODECTL_CHECK_SFRAME: every check registration runs).
 */
static int synth_check(const char *path, int fd)
{
	struct codectl_sframe_check c;
	size_t size;
	void *sec;

	if (codectl_sframe_synth(fd, 0, 0, CODECTL_SYNTH_AT_BUFFER, &sec,
				 &size, NULL))
		return fail(path);
	memset(&c, 0, sizeof(c));
	c.sframe_start = (uintptr_t)sec;
	c.sframe_end = (uintptr_t)sec + size;
	if (codectl_check_sframe(&c)) {
		free(sec);
		return fail("check_sframe");
	}
	free(sec);
	printf("%s: kernel: %s (version %u, %u FDEs, %u FREs)\n", path,
	       c.error ? "refused" : "valid", c.version, c.num_fdes,
	       c.num_fres);
	if (c.error)
		printf("%s: kernel: error %u\n", path, c.error);
	return c.error ? 1 : 0;
}

/* A rule's location as "sp+8", "*(cfa-16)", "r3+32", "same", "undefined". */
static void print_loc(const struct sframe_loc *l)
{
	char base[16];

	if (l->kind == SFRAME_LOC_SAME || l->kind == SFRAME_LOC_UNDEF) {
		printf(l->kind == SFRAME_LOC_SAME ? "same" : "undefined");
		return;
	}
	if (l->base == SFRAME_BASE_SP)
		strcpy(base, "sp");
	else if (l->base == SFRAME_BASE_FP)
		strcpy(base, "fp");
	else if (l->base == SFRAME_BASE_CFA)
		strcpy(base, "cfa");
	else
		snprintf(base, sizeof(base), "r%u", l->base);
	printf(l->kind == SFRAME_LOC_MEM ? "*(%s%+d)" : "%s%+d", base, l->off);
}

/* -r: the rule synthesised for each link-time address in @list. */
static int synth_rules(const char *path, const char *list)
{
	struct codectl_synth_stats st;
	struct sframe_sec dec;
	size_t size;
	void *sec;
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	const char *p = list;
	char *end;

	if (fd < 0)
		return fail(path);
	if (codectl_sframe_synth(fd, 0, 0, 0, &sec, &size, &st)) {
		close(fd);
		return fail(path);
	}
	close(fd);
	if (sframe_init(&dec, 0, size, sec, NULL, NULL) != SFRAME_OK) {
		free(sec);
		fprintf(stderr, "codectl: %s: the section does not decode\n", path);
		return 1;
	}
	while (*p) {
		struct sframe_rule r;
		uint64_t pc = strtoull(p, &end, 0);

		if (end == p || (*end && *end != ',')) {
			free(sec);
			fprintf(stderr, "codectl: not an address: %s\n", p);
			return 2;
		}
		printf("0x%" PRIx64 ": ", pc);
		if (sframe_find(&dec, pc, &r) != SFRAME_OK) {
			printf("none\n");
		} else {
			printf("cfa ");
			print_loc(&r.cfa);
			printf(" ra ");
			print_loc(&r.ra);
			printf(" fp ");
			print_loc(&r.fp);
			printf("\n");
		}
		p = *end ? end + 1 : end;
	}
	free(sec);
	return 0;
}

/* One FILE: synthesise N times, print the figures, maybe write it. */
static int synth_one(const char *path, uint64_t addr, int runs,
		     const char *out, int check)
{
	struct codectl_synth_stats st;
	double ms[64];
	size_t size = 0;
	void *sec = NULL;
	int fd, i;

	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return fail(path);
	if (check) {
		i = synth_check(path, fd);
		close(fd);
		return i;
	}
	for (i = 0; i < runs; i++) {
		struct timespec a, b;

		free(sec);
		clock_gettime(CLOCK_MONOTONIC, &a);
		if (codectl_sframe_synth(fd, 0, addr, 0, &sec, &size, &st)) {
			close(fd);
			return fail(path);
		}
		clock_gettime(CLOCK_MONOTONIC, &b);
		ms[i] = (b.tv_sec - a.tv_sec) * 1e3 +
			(b.tv_nsec - a.tv_nsec) / 1e6;
	}
	close(fd);
	qsort(ms, runs, sizeof(ms[0]), cmp_double);
	printf("%s: text %" PRIu64 " B, with rules %" PRIu64 " B (%.1f%%; "
	       "%.1f%% of the %" PRIu64 " B the CFI covers)\n", path,
	       st.text_bytes, st.covered_bytes,
	       pct(st.covered_bytes, st.text_bytes),
	       pct(st.covered_bytes, st.cfi_bytes), st.cfi_bytes);
	printf("%s: FDEs %u, with rules %u (%.1f%%; %u at every pc)\n", path,
	       st.cfi_fdes, st.fdes_full + st.fdes_partial,
	       pct(st.fdes_full + st.fdes_partial, st.cfi_fdes), st.fdes_full);
	printf("%s: CFI rows %u, left out %u (CFA %u, RA %u, rbp %u), "
	       "outermost %u\n", path, st.rows, st.rows - st.rows_kept,
	       st.rows_cfa, st.rows_ra, st.rows_fp, st.outermost_rows);
	printf("%s: section %zu B: %u FDEs (%u FLEX), %u FREs; "
	       "%.2f ms (median of %d)\n", path, size, st.sframe_fdes,
	       st.flex_fdes, st.sframe_fres, ms[runs / 2], runs);
	if (out && write_file(out, sec, size)) {
		free(sec);
		return fail(out);
	}
	free(sec);
	return 0;
}

static int cmd_synth(int argc, char **argv)
{
	const char *out = NULL, *rules = NULL;
	uint64_t addr = 0;
	int opt, runs = 1, ret = 0, check = 0;

	while ((opt = getopt(argc, argv, "co:a:n:r:")) != -1) {
		switch (opt) {
		case 'c':
			check = 1;
			break;
		case 'r':
			rules = optarg;
			break;
		case 'o':
			out = optarg;
			break;
		case 'a':
			addr = strtoull(optarg, NULL, 0);
			break;
		case 'n':
			runs = atoi(optarg);
			if (runs < 1 || runs > 64)
				runs = 0;
			break;
		default:
			runs = 0;
		}
	}
	if (!runs || optind >= argc || (out && argc - optind != 1) ||
	    (check && out) ||
	    (rules && (out || check || argc - optind != 1))) {
		fputs("usage: codectl synth [-o OUT] [-a ADDR] [-n 1-64] "
		      "FILE... | -c FILE... | -r ADDR[,ADDR...] FILE\n", stderr);
		return 2;
	}
	if (rules)
		return synth_rules(argv[optind], rules);
	for (; optind < argc; optind++)
		ret |= synth_one(argv[optind], addr, runs, out, check);
	return ret;
}

static void usage(FILE *f)
{
	fputs("usage: codectl version | stats | self [--all] | list [PID] | "
	      "unwind |\n"
	      "       synth [-o OUT] [-a ADDR] [-n N] FILE... | "
	      "synth -c FILE... | synth -r ADDR[,ADDR...] FILE |\n"
	      "       import FILE... | import --system | import --remove FILE... | "
	      "import --clear | import --list |\n"
	      "       daemon [--cache DIR] [--cache-max BYTES] [--state FILE] | "
	      "status [PID | FILE]\n", f);
}

int main(int argc, char **argv)
{
	if (argc >= 2 && !strcmp(argv[1], "synth"))
		return cmd_synth(argc - 1, argv + 1);
	if (argc >= 2 && !strcmp(argv[1], "import"))
		return cmd_import(argc - 2, argv + 2);
	if (argc >= 2 && !strcmp(argv[1], "daemon"))
		return cmd_daemon(argc - 2, argv + 2);
	if (argc >= 2 && !strcmp(argv[1], "status"))
		return cmd_status(argc - 2, argv + 2);
	if (argc == 3 && !strcmp(argv[1], "self") && !strcmp(argv[2], "--all"))
		return cmd_self(1);
	if ((argc == 2 || argc == 3) && !strcmp(argv[1], "list")) {
		char *end = NULL;
		long pid = argc == 3 ? strtol(argv[2], &end, 10) : 0;

		if (argc == 3 && (!*argv[2] || *end || pid <= 0 ||
				  pid > INT32_MAX)) {
			fprintf(stderr, "codectl: list: '%s' is not a pid\n",
				argv[2]);
			return 2;
		}
		return cmd_list(pid);
	}
	if (argc != 2) {
		usage(stderr);
		return 2;
	}
	if (!strcmp(argv[1], "version"))
		return cmd_version();
	if (!strcmp(argv[1], "stats"))
		return cmd_stats();
	if (!strcmp(argv[1], "self"))
		return cmd_self(0);
	if (!strcmp(argv[1], "unwind"))
		return cmd_unwind();
	if (!strcmp(argv[1], "-h") || !strcmp(argv[1], "--help")) {
		usage(stdout);
		return 0;
	}
	usage(stderr);
	return 2;
}
