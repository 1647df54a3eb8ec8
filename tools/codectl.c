// SPDX-License-Identifier: GPL-2.0
/*
 * codectl: command-line front end of the codectl module.
 *
 *   codectl version          what the loaded module offers
 *   codectl stats            the module's live objects (debugfs, root)
 *   codectl self             register this program's own loaded objects
 *                            through libcodectl and list what the kernel
 *                            now holds for it
 *   codectl unwind           the unwinder's counters: unwinds, frames by
 *                            method, stops by reason; then each tracer
 *                            hook's (perf, ftrace, deferred): attached,
 *                            calls redirected and declined, its frames
 *                            and stops (any user)
 *
 * Registrations belong to an address space, so "self" is the way a shell
 * user sees them: it shows exactly what an application linking libcodectl
 * registers.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <codectl.h>

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

/* Print every registration of this process, in address order. */
static int list_registrations(void)
{
	char path[CODECTL_PATH_MAX], link[CODECTL_PATH_MAX];
	unsigned char build_id[CODECTL_BUILD_ID_MAX];
	struct codectl_query_info q;
	uint64_t addr = 0;
	int n = 0;

	for (;;) {
		memset(&q, 0, sizeof(q));
		q.addr = addr;
		q.pathname = (uintptr_t)path;
		q.pathname_len = sizeof(path);
		q.debug_link_pathname = (uintptr_t)link;
		q.debug_link_len = sizeof(link);
		q.build_id = (uintptr_t)build_id;
		q.build_id_len = sizeof(build_id);
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

static int cmd_self(void)
{
	int n = codectl_register_self();

	if (n < 0)
		return fail("register_self");
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

static void usage(FILE *f)
{
	fputs("usage: codectl version | stats | self | unwind\n", f);
}

int main(int argc, char **argv)
{
	if (argc != 2) {
		usage(stderr);
		return 2;
	}
	if (!strcmp(argv[1], "version"))
		return cmd_version();
	if (!strcmp(argv[1], "stats"))
		return cmd_stats();
	if (!strcmp(argv[1], "self"))
		return cmd_self();
	if (!strcmp(argv[1], "unwind"))
		return cmd_unwind();
	if (!strcmp(argv[1], "-h") || !strcmp(argv[1], "--help")) {
		usage(stdout);
		return 0;
	}
	usage(stderr);
	return 2;
}
