// SPDX-License-Identifier: GPL-2.0
/*
 * QUERY VER2: another process's registrations (@pid), with the permission
 * /proc/PID/maps needs, and the SFrame summary (version, counts,
 * coverage, table, charge).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <grp.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/mount.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include "codectl-test.h"

#define ULL(x) ((unsigned long long)(x))
#define NOBODY 65534

/*
 * QUERY VER3 of @pid through @q (its cursor and buffers set), as
 * libcodectl makes it: with an fd of /proc/PID/maps for another pid (an
 * open that fails gives its errno, ENOENT as ESRCH).  0 or -errno.
 */
static int query_pid_call(pid_t pid, struct codectl_query_info *q)
{
	char path[32];
	int rc;

	q->pid = pid;
	q->maps_fd = -1;
	if (pid > 0) {
		snprintf(path, sizeof(path), "/proc/%d/maps", (int)pid);
		q->maps_fd = open(path, O_RDONLY | O_CLOEXEC);
		if (q->maps_fd < 0)
			return errno == ENOENT ? -ESRCH : -errno;
	}
	rc = cc_call(g_fd, CODECTL_QUERY, (uintptr_t)q,
		     CODECTL_QUERY_INFO_SIZE_VER3, 0, 0);
	if (q->maps_fd >= 0)
		close(q->maps_fd);
	q->maps_fd = -1;
	return rc;
}

/* QUERY of @pid at @addr, no buffers: 0 or -errno. */
static int query_pid(pid_t pid, uint64_t addr, struct codectl_query_info *q)
{
	memset(q, 0, sizeof(*q));
	q->addr = addr;
	return query_pid_call(pid, q);
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
	q.pathname = (uintptr_t)path;
	q.pathname_len = sizeof(path);
	rc = query_pid_call(pid, &q);
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

/* QUERY of @pid with @fd as maps_fd (no open of ours), VER3: -errno. */
static int query_fd(pid_t pid, int fd, size_t size)
{
	struct codectl_query_info q;

	memset(&q, 0, sizeof(q));
	q.pid = pid;
	q.maps_fd = fd;
	return cc_call(g_fd, CODECTL_QUERY, (uintptr_t)&q, size, 0, 0);
}

static int open_proc(pid_t pid, const char *what)
{
	char path[128];

	snprintf(path, sizeof(path), "/proc/%d/%s", (int)pid, what);
	return open(path, O_RDONLY | O_CLOEXEC);
}

/* maps_fd must be procfs's maps file of that very pid. */
TEST(query_pid_maps_fd)
{
	int fd_self = -1, fd_child = -1, fd_status = -1, fd_task = -1;
	char tpath[32];
	uint64_t text;
	pid_t pid;

	/* After a setuid() (the -u pass) our children are not dumpable. */
	prctl(PR_SET_DUMPABLE, 1);
	pid = start_reg_child(3, &text);
	REQUIRE(pid > 0 && text, "child registering an object");
	fd_self = open_proc(getpid(), "maps");
	fd_child = open_proc(pid, "maps");
	fd_status = open_proc(pid, "status");
	snprintf(tpath, sizeof(tpath), "task/%d/maps", (int)pid);
	fd_task = open_proc(pid, tpath);
	REQUIRE(fd_self >= 0 && fd_child >= 0 && fd_status >= 0 &&
		fd_task >= 0, "opening /proc files: %m");
	EXPECT_RC(query_fd(pid, fd_child, CODECTL_QUERY_INFO_SIZE_VER3), 0,
		  "maps_fd of /proc/CHILD/maps");
	EXPECT_RC(query_fd(pid, fd_task, CODECTL_QUERY_INFO_SIZE_VER3), 0,
		  "maps_fd of /proc/CHILD/task/CHILD/maps");
	EXPECT_RC(query_fd(pid, fd_self, CODECTL_QUERY_INFO_SIZE_VER3),
		  EACCES, "maps_fd of our own maps for the child's pid");
	EXPECT_RC(query_fd(pid, fd_status, CODECTL_QUERY_INFO_SIZE_VER3),
		  EACCES, "maps_fd of /proc/CHILD/status");
	EXPECT_RC(query_fd(pid, g_fd, CODECTL_QUERY_INFO_SIZE_VER3), EACCES,
		  "maps_fd of /dev/codectl");
	EXPECT_RC(query_fd(pid, -1, CODECTL_QUERY_INFO_SIZE_VER3), EBADF,
		  "maps_fd -1");
	EXPECT_RC(query_fd(pid, fd_child, CODECTL_QUERY_INFO_SIZE_VER2), EBADF,
		  "a VER2 struct (no maps_fd) for another pid");
	EXPECT_RC(query_fd(0, -1, CODECTL_QUERY_INFO_SIZE_VER2), ENOENT,
		  "a VER2 struct for pid 0");
	EXPECT_RC(query_fd(getpid(), -1, CODECTL_QUERY_INFO_SIZE_VER2), ENOENT,
		  "a VER2 struct for our own pid");
out:
	stop_child(pid);
	/* Its pid is gone: the directory of the fd stands for a dead process. */
	if (fd_child >= 0)
		EXPECT_RC(query_fd(pid, fd_child, CODECTL_QUERY_INFO_SIZE_VER3),
			  ESRCH, "maps_fd of a process reaped since");
	if (fd_self >= 0)
		close(fd_self);
	if (fd_child >= 0)
		close(fd_child);
	if (fd_status >= 0)
		close(fd_status);
	if (fd_task >= 0)
		close(fd_task);
	return T_PASS;
}

static int write_file(const char *path, const char *s)
{
	int fd = open(path, O_WRONLY | O_CLOEXEC), ok;

	if (fd < 0)
		return -1;
	ok = write(fd, s, strlen(s)) == (ssize_t)strlen(s);
	close(fd);
	return ok ? 0 : -1;
}

/* QUERY of @pid, or for a module before VER3 its VER2 form (its own open). */
static int query_compat(pid_t pid, struct codectl_query_info *q)
{
	int rc;

	memset(q, 0, sizeof(*q));
	rc = query_pid_call(pid, q);
	if (rc == -E2BIG) {
		memset(q, 0, sizeof(*q));
		q->pid = pid;
		rc = cc_call(g_fd, CODECTL_QUERY, (uintptr_t)q,
			     CODECTL_QUERY_INFO_SIZE_VER2, 0, 0);
	}
	return rc;
}

/*
 * As nobody in a user and mount namespace of its own, /proc/VICTIM made
 * our own /proc/SELF by a bind mount: a QUERY of VICTIM with the fd that
 * path opens must not read VICTIM's registrations.  Exit status 0: the
 * QUERY was refused; 1: it answered (the bypass); 2: set-up failed;
 * 3: no user namespaces (skip).
 */
static int redirect_main(void *arg)
{
	pid_t victim = *(pid_t *)arg;
	struct codectl_query_info q;
	char path[64], map[64];
	int rc;

	if (setgroups(0, NULL) || setresgid(NOBODY, NOBODY, NOBODY) ||
	    setresuid(NOBODY, NOBODY, NOBODY))
		return 2;
	/* setuid() made us undumpable: /proc/self would be root's. */
	prctl(PR_SET_DUMPABLE, 1);
	snprintf(map, sizeof(map), "0 %d 1", NOBODY);
	if (unshare(CLONE_NEWUSER | CLONE_NEWNS))
		return 3;
	if (write_file("/proc/self/setgroups", "deny") ||
	    write_file("/proc/self/uid_map", map) ||
	    write_file("/proc/self/gid_map", map) ||
	    mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL)) {
		printf("# user namespace set-up: %m\n");
		return 2;
	}
	snprintf(path, sizeof(path), "/proc/%d", (int)victim);
	if (mount("/proc/self/", path, NULL, MS_BIND, NULL)) {
		printf("# bind mount over %s: %m\n", path);
		return 2;
	}
	rc = query_compat(victim, &q);
	printf("# QUERY of pid %d through the redirected /proc: %s\n",
	       (int)victim, ename(rc));
	return rc ? 0 : 1;
}

TEST(query_pid_redirected)
{
	struct codectl_query_info q;
	pid_t victim, pid;
	uint64_t text;
	int status;

	if (geteuid())
		SKIP("needs root for the victim");
	victim = start_reg_child(3, &text);
	REQUIRE(victim > 0 && text, "root child registering an object");
	REQUIRE_RC(query_compat(victim, &q), 0, "root: QUERY of the victim");
	pid = fork();
	REQUIRE(pid >= 0, "fork: %m");
	if (!pid)
		_exit(redirect_main(&victim));
	REQUIRE(waitpid(pid, &status, 0) == pid, "waitpid: %m");
	if (WIFEXITED(status) && WEXITSTATUS(status) == 3) {
		stop_child(victim);
		SKIP("no unprivileged user namespaces");
	}
	EXPECT(WIFEXITED(status) && WEXITSTATUS(status) == 0,
	       "nobody read a root process's registrations through a redirected /proc (status %#x: %s)",
	       status, WIFEXITED(status) && WEXITSTATUS(status) == 1 ?
	       "answered" : "set-up failed");
out:
	stop_child(victim);
	return T_PASS;
}
