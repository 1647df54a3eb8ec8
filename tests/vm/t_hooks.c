// SPDX-License-Identifier: GPL-2.0
/*
 * CODECTL_IOC_HOOK_STATS and the hooks module parameter.  What the hooks
 * do for perf, trace-cmd and bpftrace is tests/vm/tracers.sh's part.
 */
#include <errno.h>
#include <string.h>
#include <sys/mman.h>

#include <unistd.h>

#include "codectl-test.h"

/* The functions hooked, in index order; unwind_user only where it exists. */
static const char *const hook_names[] = {
	"perf_callchain_user", "arch_stack_walk_user", "unwind_user",
};

static int hook_stats(unsigned int index, struct codectl_hook_stats *s)
{
	memset(s, 0, sizeof(*s));
	s->index = index;
	return cc_ioctl(g_fd, CODECTL_IOC_HOOK_STATS, s);
}

#if defined(__x86_64__)
#define HOOKS_IN_ORDER	1
#else
#define HOOKS_IN_ORDER	0
#endif

/*
 * The number of hooks, each checked for its name (in hook_names[]'s order,
 * those the kernel lacks left out); -1 on a failure.
 */
static int hooks_listed(unsigned int want_flags)
{
	struct codectl_hook_stats s;
	unsigned int i, j = 0;
	int rc;

	for (i = 0; (rc = hook_stats(i, &s)) == 0; i++, j++) {
		while (j < 3 && strcmp(s.name, hook_names[j]))
			j++;
		/* x86-64 kernels have all of them but the last, arm64 6.1 one. */
		if (!EXPECT(j < 3 && (i || !j) && (!HOOKS_IN_ORDER || j == i),
			    "hook %u is '%.32s'", i, s.name))
			return -1;
		if (!EXPECT((s.flags & CODECTL_HOOK_ATTACHED) == want_flags,
			    "hook %s flags %#x, want attached %#x", s.name,
			    s.flags, want_flags))
			return -1;
		if (!EXPECT(s.calls == s.redirected + s.declined,
			    "hook %s: calls %llu != redirected %llu + declined %llu",
			    s.name, (unsigned long long)s.calls,
			    (unsigned long long)s.redirected,
			    (unsigned long long)s.declined))
			return -1;
	}
	if (!EXPECT_RC(rc, ENOENT, "HOOK_STATS past hook %u", i))
		return -1;
	return i;
}

TEST(hook_stats)
{
	struct codectl_unwind_stats us;
	struct codectl_hook_stats s;
	void *hole;
	int n;

	if (geteuid()) {
		/* Everyone's activity: CAP_PERFMON or CAP_SYS_ADMIN only. */
		EXPECT_RC(hook_stats(0, &s), EPERM,
			  "HOOK_STATS without CAP_PERFMON");
		EXPECT_RC(cc_ioctl(g_fd, CODECTL_IOC_UNWIND_STATS, &us), EPERM,
			  "UNWIND_STATS without CAP_PERFMON");
		return T_PASS;
	}
	EXPECT_RC(cc_ioctl(g_fd, CODECTL_IOC_UNWIND_STATS, &us), 0,
		  "UNWIND_STATS as root");
	n = hooks_listed(CODECTL_HOOK_ATTACHED);
#if defined(__x86_64__)
	EXPECT(n == 2 || n == 3, "%d hooks, want 2 (+ unwind_user where the kernel has it)", n);
#else
	/* arm64 6.1 has no arch_stack_walk_user() (USER_STACKTRACE_SUPPORT). */
	EXPECT(n >= 1 && n <= 3, "%d hooks, want perf_callchain_user and those the kernel has", n);
#endif
	memset(&s, 0, sizeof(s));
	s.__reserved = 1;
	EXPECT_RC(cc_ioctl(g_fd, CODECTL_IOC_HOOK_STATS, &s), EINVAL,
		  "HOOK_STATS with __reserved set");
	EXPECT_RC(hook_stats(1000, &s), ENOENT, "HOOK_STATS index 1000");
	EXPECT_RC(cc_ioctl(g_fd, CODECTL_IOC_HOOK_STATS, NULL), EFAULT,
		  "HOOK_STATS at NULL");
	hole = mmap(NULL, 4096, PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (EXPECT(hole != MAP_FAILED, "mmap: %s", strerror(errno))) {
		EXPECT_RC(cc_ioctl(g_fd, CODECTL_IOC_HOOK_STATS, hole), EFAULT,
			  "HOOK_STATS into a read-only page");
		munmap(hole, 4096);
	}
	return t_nr_failed() ? T_FAIL : T_PASS;
}

TEST(hooks_param)
{
	char buf[16];
	int i;

	REQUIRE_RC(param_read_str("hooks", buf, sizeof(buf)), 0, "read hooks");
	EXPECT(!strcmp(buf, "Y"), "hooks is '%s' at load, want Y", buf);
	for (i = 0; i < 5; i++) {
		REQUIRE_RC(param_write_str("hooks", "0"), 0, "hooks=0");
		if (hooks_listed(0) < 0)
			break;
		REQUIRE_RC(param_write_str("hooks", "1"), 0, "hooks=1");
		if (hooks_listed(CODECTL_HOOK_ATTACHED) < 0)
			break;
	}
	EXPECT_RC(param_write_str("hooks", "maybe"), EINVAL, "hooks=maybe");
	hooks_listed(CODECTL_HOOK_ATTACHED);
out:
	param_write_str("hooks", "1");
	return t_nr_failed() ? T_FAIL : T_PASS;
}
