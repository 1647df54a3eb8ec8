// SPDX-License-Identifier: GPL-2.0
/*
 * QUERY VER2: another process's registrations (@pid), with the permission
 * /proc/PID/maps needs, and the SFrame summary (version, counts,
 * coverage, table, charge).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <grp.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include "codectl-test.h"

#define ULL(x) ((unsigned long long)(x))
#define NOBODY 65534

/* QUERY VER2 of @pid at @addr, no buffers: 0 or -errno. */
static int query_pid(pid_t pid, uint64_t addr, struct codectl_query_info *q)
{
	memset(q, 0, sizeof(*q));
	q->addr = addr;
	q->pid = pid;
	return cc_call(g_fd, CODECTL_QUERY, (uintptr_t)q,
		       CODECTL_QUERY_INFO_SIZE_VER2, 0, 0);
}

/* Register an sfr_obj's function with the whole code page as its text. */
static int reg_obj(const struct sfr_obj *o, const char *path)
{
	struct codectl_elf_info ei = {
		.text_start = (uintptr_t)o->base,
		.text_end = (uintptr_t)o->base + g_page,
		.sframe_start = o->sframe,
		.sframe_end = o->sframe_end,
		.pathname = (uintptr_t)path,
	};

	return cc_register_elf(g_fd, &ei);
}

/* The registrations of @pid, walked; -errno of the first failure. */
static long walk_pid(pid_t pid, struct codectl_query_info *out, long max)
{
	struct codectl_query_info q;
	uint64_t addr = 0;
	long n = 0;
	int rc;

	for (;;) {
		rc = query_pid(pid, addr, &q);
		if (rc == -ENOENT)
			return n;
		if (rc)
			return rc;
		if (n < max)
			out[n] = q;
		n++;
		addr = q.text_end;
	}
}

TEST(query_summary)
{
	static const char path[] = "/query/summary";
	struct codectl_query_info q, q0;
	struct sfr_obj o[3] = {};
	void *code = NULL;
	int v, rc;

	for (v = 1; v <= 3; v++) {
		REQUIRE(!sfr_obj_create(&o[v - 1], v), "SFrame v%d object", v);
		REQUIRE_RC(reg_obj(&o[v - 1], path), 0, "REGISTER_ELF v%d", v);
		rc = query_pid(0, (uintptr_t)o[v - 1].base, &q);
		if (!EXPECT_RC(rc, 0, "QUERY VER2 v%d", v))
			continue;
		EXPECT(q.sframe_version == (uint32_t)v && q.num_fdes == 1 &&
		       q.num_fres == 1,
		       "v%d: version %u, %u FDEs, %u FREs; expected %d, 1, 1",
		       v, q.sframe_version, q.num_fdes, q.num_fres, v);
		/* One 16-byte function in a page of text. */
		EXPECT(q.coverage == 16, "v%d: coverage %llu, expected 16", v,
		       ULL(q.coverage));
		EXPECT(q.sframe_table == CODECTL_TABLE_FLAT,
		       "v%d: table %u, expected FLAT", v, q.sframe_table);
		EXPECT(q.charge > sizeof(path), "v%d: charge %u", v, q.charge);
		EXPECT(q.pid == 0, "v%d: pid came back %d", v, q.pid);
		/* A VER1 caller gets 120 bytes, nothing beyond. */
		memset(&q0, 0x5a, sizeof(q0));
		q0.addr = (uintptr_t)o[v - 1].base;
		q0.__reserved = q0.__reserved2 = 0;
		q0.pathname = q0.debug_link_pathname = q0.build_id = 0;
		rc = cc_call(g_fd, CODECTL_QUERY, (uintptr_t)&q0,
			     CODECTL_QUERY_INFO_SIZE_VER1, 0, 0);
		EXPECT_RC(rc, 0, "QUERY VER1");
		EXPECT(q0.sframe_version == 0x5a5a5a5a,
		       "VER1 QUERY wrote past its 120 bytes");
	}
	/* Without SFrame: nothing to summarise. */
	code = map_code(1);
	REQUIRE(code, "map_code");
	REQUIRE_RC(cc_register_range(false, (uintptr_t)code,
				     (uintptr_t)code + 64, 0, NULL), 0,
		   "REGISTER_ELF without SFrame");
	rc = query_pid(0, (uintptr_t)code, &q);
	if (EXPECT_RC(rc, 0, "QUERY without SFrame"))
		EXPECT(!q.sframe_version && !q.num_fdes && !q.num_fres &&
		       !q.coverage && q.sframe_table == CODECTL_TABLE_NONE,
		       "no SFrame: version %u, %u FDEs, %u FREs, coverage %llu, table %u",
		       q.sframe_version, q.num_fdes, q.num_fres,
		       ULL(q.coverage), q.sframe_table);
	cc_unregister(g_fd, (uintptr_t)code, (uintptr_t)code + 64);
out:
	for (v = 0; v < 3; v++) {
		if (o[v].base)
			cc_unregister(g_fd, (uintptr_t)o[v].base,
				      (uintptr_t)o[v].base + g_page);
		sfr_obj_destroy(&o[v]);
	}
	unmap_pages(code, 1);
	return T_PASS;
}

TEST(query_pid_self)
{
	struct codectl_query_info a[8], b[8];
	struct sfr_obj o[2] = {};
	long na, nb, i;
	int k;

	for (k = 0; k < 2; k++) {
		REQUIRE(!sfr_obj_create(&o[k], 2 + k), "SFrame object");
		REQUIRE_RC(reg_obj(&o[k], "/query/self"), 0, "REGISTER_ELF");
	}
	na = walk_pid(0, a, 8);
	nb = walk_pid(getpid(), b, 8);
	REQUIRE(na >= 2 && na <= 8, "walk of pid 0: %ld", na);
	EXPECT(nb == na, "walk of getpid(): %ld, of pid 0: %ld", nb, na);
	for (i = 0; i < na && i < nb; i++) {
		b[i].pid = 0;
		EXPECT(!memcmp(&a[i], &b[i], sizeof(a[i])),
		       "registration %ld: the answers for pid 0 and getpid() differ",
		       i);
	}
	/* A thread id of our own address space is ours too. */
	EXPECT(walk_pid(gettid(), b, 8) == na, "walk of gettid()");
	EXPECT_RC(query_pid(-1, 0, &b[0]), EINVAL, "QUERY pid -1");
	EXPECT_RC(query_pid(INT32_MIN, 0, &b[0]), EINVAL, "QUERY pid INT32_MIN");
out:
	for (k = 0; k < 2; k++) {
		if (o[k].base)
			cc_unregister(g_fd, (uintptr_t)o[k].base,
				      (uintptr_t)o[k].base + g_page);
		sfr_obj_destroy(&o[k]);
	}
	return T_PASS;
}

/*
 * A child that registers an object of SFrame version @version (0: only
 * drops dumpability when @version is -1), reports the object's text start
 * on @fd, and waits to be killed.
 */
struct reg_child {
	int version;
	int fd;
};

static int reg_child_main(void *arg)
{
	const struct reg_child *c = arg;
	uint64_t text = 0;
	struct sfr_obj o;

	if (c->version < 0)
		prctl(PR_SET_DUMPABLE, 0);
	if (sfr_obj_create(&o, c->version < 0 ? 2 : c->version) ||
	    reg_obj(&o, "/query/child"))
		text = 0;
	else
		text = (uintptr_t)o.base;
	if (write(c->fd, &text, sizeof(text)) != sizeof(text))
		return 1;
	for (;;)
		pause();
}

/* Fork a reg_child; *@text gets its object's text start (0: failed). */
static pid_t start_reg_child(int version, uint64_t *text)
{
	struct reg_child c = { .version = version };
	int p[2];
	pid_t pid;

	*text = 0;
	if (pipe(p)) {
		FAIL("pipe: %m");
		return -1;
	}
	c.fd = p[1];
	pid = t_fork_child(reg_child_main, &c);
	close(p[1]);
	if (pid > 0 && read(p[0], text, sizeof(*text)) != sizeof(*text))
		*text = 0;
	close(p[0]);
	return pid;
}

static void stop_child(pid_t pid)
{
	if (pid > 0) {
		kill(pid, SIGKILL);
		t_wait_child(pid, SIGKILL, "registering child");
	}
}

/* The child's registration is seen through its pid, not through ours. */
static void expect_child_reg(pid_t pid, uint64_t text, const char *who)
{
	char path[64] = "";
	struct codectl_query_info q;
	int rc;

	memset(&q, 0, sizeof(q));
	q.addr = text;
	q.pid = pid;
	q.pathname = (uintptr_t)path;
	q.pathname_len = sizeof(path);
	rc = cc_call(g_fd, CODECTL_QUERY, (uintptr_t)&q,
		     CODECTL_QUERY_INFO_SIZE_VER2, 0, 0);
	if (!EXPECT_RC(rc, 0, "%s: QUERY of the child %d", who, pid))
		return;
	EXPECT(q.text_start == text && q.text_end == text + g_page &&
	       q.sframe_version >= 1 && q.num_fdes == 1 && q.coverage == 16 &&
	       !strcmp(path, "/query/child") &&
	       q.origin == CODECTL_ORIGIN_REGISTERED,
	       "%s: child's registration [%#llx,%#llx) v%u %u FDEs coverage %llu '%s' origin %#x; expected [%#llx,+page)",
	       who, ULL(q.text_start), ULL(q.text_end), q.sframe_version,
	       q.num_fdes, ULL(q.coverage), path, q.origin, ULL(text));
}

TEST(query_pid_child)
{
	struct codectl_query_info q;
	uint64_t text;
	pid_t pid;
	int rc;

	/* The unprivileged pass: a setuid process's children are undumpable. */
	prctl(PR_SET_DUMPABLE, 1);
	pid = start_reg_child(3, &text);
	REQUIRE(pid > 0 && text, "child registering an object");
	expect_child_reg(pid, text, "parent");
	/* Not in our own registry (the child registered after fork). */
	rc = query_pid(0, text, &q);
	EXPECT(rc == -ENOENT || q.text_start != text,
	       "the child's registration is in the parent's registry");
out:
	stop_child(pid);
	return T_PASS;
}

static int exit_at_once(void *arg)
{
	(void)arg;
	return 0;
}

TEST(query_pid_esrch)
{
	struct codectl_query_info q;
	siginfo_t si;
	pid_t pid;

	/* A zombie: exited, not reaped, no address space. */
	pid = t_fork_child(exit_at_once, NULL);
	REQUIRE(pid > 0, "fork");
	memset(&si, 0, sizeof(si));
	REQUIRE(!waitid(P_PID, pid, &si, WEXITED | WNOWAIT) && si.si_pid == pid,
		"waitid WNOWAIT: %m");
	EXPECT_RC(query_pid(pid, 0, &q), ESRCH, "QUERY of a zombie");
	t_wait_child(pid, 0, "zombie");
	/* Reaped: its pid names nobody (until it is reused, not this soon). */
	EXPECT_RC(query_pid(pid, 0, &q), ESRCH, "QUERY of a reaped child");
	/* kthreadd, pid 2: a kernel thread has no address space. */
	EXPECT_RC(query_pid(2, 0, &q), ESRCH, "QUERY of kthreadd (pid 2)");
	EXPECT_RC(query_pid(INT32_MAX, 0, &q), ESRCH, "QUERY of pid INT32_MAX");
out:
	return T_PASS;
}

/*
 * As an unprivileged user (dumpable, so that its own children can be
 * read): init (pid 1, root) and @root_pid are not readable, its own
 * child is, a child that made itself undumpable is not.
 */
static int perm_main(void *arg)
{
	pid_t root_pid = *(pid_t *)arg, pid;
	struct codectl_query_info q;
	uint64_t text;

	if (!geteuid()) {
		if (setgroups(0, NULL) || setresgid(NOBODY, NOBODY, NOBODY) ||
		    setresuid(NOBODY, NOBODY, NOBODY)) {
			FAIL("dropping root: %m");
			return 1;
		}
	}
	/* What setuid() took away: our children would be undumpable. */
	prctl(PR_SET_DUMPABLE, 1);
	EXPECT_RC(query_pid(1, 0, &q), EACCES, "uid %d: QUERY of init",
		  (int)geteuid());
	if (root_pid > 0)
		EXPECT_RC(query_pid(root_pid, 0, &q), EACCES,
			  "uid %d: QUERY of a root process", (int)geteuid());
	pid = start_reg_child(2, &text);
	if (pid > 0 && text)
		expect_child_reg(pid, text, "unprivileged parent");
	else
		FAIL("child registering an object");
	stop_child(pid);
	/* The same uid, but not dumpable: ptrace says no, so do we. */
	pid = start_reg_child(-1, &text);
	if (pid > 0 && text)
		EXPECT_RC(query_pid(pid, text, &q), EACCES,
			  "uid %d: QUERY of an undumpable child",
			  (int)geteuid());
	else
		FAIL("undumpable child registering an object");
	stop_child(pid);
	return 0;
}

TEST(query_pid_perm)
{
	pid_t root_pid = 0, pid;

	if (geteuid())
		return perm_main(&root_pid) ? T_FAIL : T_PASS;
	/* Root: we are the root process; the checks run in a child. */
	root_pid = getpid();
	pid = t_fork_child(perm_main, &root_pid);
	t_wait_child(pid, 0, "unprivileged child");
	return T_PASS;
}
