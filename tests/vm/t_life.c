// SPDX-License-Identifier: GPL-2.0
/*
 * codectl VM integration suite: the lifecycle of registrations (issue 5).
 *
 *   fork	the child has exactly the parent's registrations as of the
 *		fork, from its first instruction on (also with a signal, a
 *		stop or ptrace pending), and they are its own from then on;
 *		grandchildren too.  vfork() and CLONE_VM children share the
 *		parent's registry.
 *   exec	the new image has none; the old ones are freed (also when a
 *		non-main thread execs).
 *   exit	everything is freed whichever thread exits last, and on
 *		SIGKILL.
 *   munmap	unmapping (munmap, mremap away or shrinking, MAP_FIXED over)
 *		any part of a registration's text, SFrame section or first
 *		JIT table drops the registration before the call returns,
 *		also when it races with the registration itself; mprotect,
 *		madvise and unrelated unmaps change nothing.
 *
 * Every debugfs counter (mms, registrations, bytes and whatever else the
 * file lists: sets, works, fork_failures, unmap_nomem) must come back to
 * its baseline: the tests compare all of them, not a chosen few; only
 * counters of events (STATS_EVENTS: unmap_drops) are left out.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/ptrace.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "codectl-test.h"

#define ULL(x) ((unsigned long long)(x))
#define CHILD_STACK_PAGES 16

/* ---- processes -------------------------------------------------------- */

/* Exit status of a child: 0 when none of its checks failed since @before. */
static __attribute__((noreturn)) void child_exit(int before)
{
	fflush(stdout);
	_exit(t_nr_failed() != before ? 1 : 0);
}

static void close_pair(int p[2])
{
	if (p[0] >= 0)
		close(p[0]);
	if (p[1] >= 0)
		close(p[1]);
	p[0] = p[1] = -1;
}

/* Read one byte; 0 at EOF. */
static int read_byte(int fd)
{
	char c;
	ssize_t n;

	do {
		n = read(fd, &c, 1);
	} while (n < 0 && errno == EINTR);
	return n == 1 ? (unsigned char)c : 0;
}

static void write_byte(int fd, char c)
{
	if (write(fd, &c, 1) != 1)
		FAIL("write to pipe: %m");
}

/* Block until EOF on @fd. */
static void wait_eof(int fd)
{
	while (read_byte(fd))
		;
}

/* ---- stats ------------------------------------------------------------ */

struct lstats {
	int st;			/* T_PASS when debugfs stats can be read */
	struct cstats_all base;
};

/* Counters a live test process may legitimately have changed. */
static const char *const own_mm_state[] = { "mms", "sets", NULL };

/* Baseline of every counter; T_FAIL (recorded), T_SKIP or T_PASS. */
static int lstats_begin(struct lstats *ls)
{
	ls->st = stats_available();
	if (ls->st != T_PASS)
		return ls->st;
	if (stats_settle_all(&ls->base)) {
		FAIL("reading " STATS_PATH);
		return ls->st = T_FAIL;
	}
	stats_check_required(&ls->base);
	stats_print_all("baseline", &ls->base);
	return T_PASS;
}

/* Every counter (but @ignore) back to the baseline within 5 s. */
static bool lstats_back(struct lstats *ls, const char *when,
			const char *const *ignore)
{
	struct cstats_all now;
	bool ok;

	if (ls->st != T_PASS)
		return true;
	ok = stats_wait_eq(&ls->base, ignore, 5000, &now);
	stats_print_all(when, &now);
	if (!ok)
		stats_report_diff(when, &ls->base, &now, ignore);
	return ok;
}

static long long lstats_now(struct lstats *ls, const char *name)
{
	struct cstats_all now;

	if (ls->st != T_PASS || stats_read_all(&now))
		return -1;
	return stats_get(&now, name);
}

/*
 * The test's result.  Tests whose only way to see the outcome is the
 * counters (exit, exec) SKIP when they could not be read; the others
 * pass on their own checks.
 */
static int lstats_result(struct lstats *ls)
{
	(void)ls;
	return T_PASS;
}

static int lstats_result_only(struct lstats *ls)
{
	if (ls->st == T_SKIP && !t_nr_failed())
		return T_SKIP;
	return T_PASS;
}

/* ---- snapshots: everything QUERY tells about every registration ------- */

struct snap_ent {
	struct codectl_query_info q;	/* addr and buffer pointers cleared */
	char *path, *dlink;
	uint8_t bid[CODECTL_BUILD_ID_MAX];
};

struct snap {
	int n;
	struct snap_ent *e;
};

#define SNAP_MAX 2048

static void snap_free(struct snap *s)
{
	int i;

	for (i = 0; s->e && i < s->n; i++) {
		free(s->e[i].path);
		free(s->e[i].dlink);
	}
	free(s->e);
	s->e = NULL;
	s->n = 0;
}

/* QUERY walk with full buffers: 0 or -errno (-ELOOP: cursor stuck). */
static int snap_take(int fd, struct snap *s)
{
	static __thread char pbuf[CODECTL_PATH_MAX], dbuf[CODECTL_PATH_MAX];
	uint8_t bid[CODECTL_BUILD_ID_MAX];
	uint64_t addr = 0;
	int rc;

	snap_free(s);
	s->e = calloc(SNAP_MAX, sizeof(*s->e));
	if (!s->e)
		return -ENOMEM;
	for (;;) {
		struct codectl_query_info q = {
			.addr = addr,
			.pathname = (uintptr_t)pbuf,
			.pathname_len = sizeof(pbuf),
			.debug_link_pathname = (uintptr_t)dbuf,
			.debug_link_len = sizeof(dbuf),
			.build_id = (uintptr_t)bid,
			.build_id_len = sizeof(bid),
		};
		struct snap_ent *e;

		rc = cc_query(fd, &q);
		if (rc == -ENOENT)
			return 0;
		if (rc)
			return rc;
		if (q.text_end <= addr || s->n == SNAP_MAX)
			return -ELOOP;
		e = &s->e[s->n++];
		e->q = q;
		e->q.addr = 0;
		e->q.pathname = e->q.debug_link_pathname = e->q.build_id = 0;
		if (q.pathname_len && q.pathname_len <= sizeof(pbuf))
			e->path = strndup(pbuf, q.pathname_len);
		if (q.debug_link_len && q.debug_link_len <= sizeof(dbuf))
			e->dlink = strndup(dbuf, q.debug_link_len);
		if (q.build_id_len <= sizeof(bid))
			memcpy(e->bid, bid, q.build_id_len);
		addr = q.text_end;
	}
}

static const char *ent_str(const struct snap_ent *e, char *buf, size_t len)
{
	snprintf(buf, len,
		 "[%#llx,%#llx) kind %u elf [%#llx,%#llx) sframe [%#llx,%#llx) head %#llx path '%.60s' (%u) dlink '%.40s' (%u) crc %#x build id %u bytes",
		 ULL(e->q.text_start), ULL(e->q.text_end), e->q.kind,
		 ULL(e->q.elf_start), ULL(e->q.elf_end), ULL(e->q.sframe_start),
		 ULL(e->q.sframe_end), ULL(e->q.unwind_head),
		 e->path ? e->path : "", e->q.pathname_len,
		 e->dlink ? e->dlink : "", e->q.debug_link_len,
		 e->q.debug_link_crc, e->q.build_id_len);
	return buf;
}

static bool ent_same(const struct snap_ent *a, const struct snap_ent *b)
{
	if (memcmp(&a->q, &b->q, sizeof(a->q)))
		return false;
	if (!a->path != !b->path || (a->path && strcmp(a->path, b->path)))
		return false;
	if (!a->dlink != !b->dlink || (a->dlink && strcmp(a->dlink, b->dlink)))
		return false;
	return a->q.build_id_len > CODECTL_BUILD_ID_MAX ||
	       !memcmp(a->bid, b->bid, a->q.build_id_len);
}

/* FAIL (at most 4 lines) unless @got is exactly @want. */
static bool snap_cmp(const struct snap *want, const struct snap *got,
		     const char *who)
{
	char b1[400], b2[400];
	int i, shown = 0;

	if (want->n != got->n)
		FAIL("%s: QUERY walk shows %d registrations, expected %d", who,
		     got->n, want->n), shown++;
	for (i = 0; i < want->n && i < got->n && shown < 4; i++)
		if (!ent_same(&want->e[i], &got->e[i])) {
			FAIL("%s: registration %d is %s, expected %s", who, i,
			     ent_str(&got->e[i], b1, sizeof(b1)),
			     ent_str(&want->e[i], b2, sizeof(b2)));
			shown++;
		}
	return !shown;
}

/* ---- a set of registrations of every kind ----------------------------- */

#define SMALL_SLOT 64
#define SMALL_LEN 48
#define SPARE 16	/* default slots after the registered ones */

struct life_set {
	struct self_image si;
	struct sfr_obj so;
	bool have_so;
	uint8_t *code;
	size_t code_pages;
	struct codectl_jit_unwind_table *tbl;
	int nsmall;
	int cap;	/* small slots there is code for */
	int n;		/* registrations made by set_create() */
};

static const uint8_t life_bid[20] = {
	0x1f, 0xe0, 0x5c, 0x0d, 0xe1, 0x1f, 0xe0, 0x5c, 0x0d, 0xe1,
	0xa5, 0x5a, 0x00, 0xff, 0x01, 0x80, 0x7f, 0x42, 0x24, 0x99,
};

static void small_range(const struct life_set *ls, int i, uint64_t *s,
			uint64_t *e)
{
	*s = (uintptr_t)ls->code + g_page + (uint64_t)i * SMALL_SLOT;
	*e = *s + SMALL_LEN;
}

/* Slot @i: ELF with a pathname naming it (and @tag), or JIT every 3rd. */
static int set_reg_small(const struct life_set *ls, int i, const char *tag)
{
	char path[64];
	uint64_t s, e;

	if (i >= ls->cap) {
		FAIL("test bug: small slot %d of %d", i, ls->cap);
		return -ERANGE;
	}
	small_range(ls, i, &s, &e);
	snprintf(path, sizeof(path), "/life/%s/small%03d.so", tag, i);
	return cc_register_range(i % 3 == 1, s, e, (uintptr_t)ls->tbl, path);
}

static void set_destroy(struct life_set *ls)
{
	if (ls->have_so)
		sfr_obj_destroy(&ls->so);
	ls->have_so = false;
	unmap_pages(ls->code, ls->code_pages);
	ls->code = NULL;
	unmap_pages(ls->tbl, 1);
	ls->tbl = NULL;
}

/*
 * This program's own image with all metadata, a synthetic object with an
 * SFrame section, a JIT region and @nsmall small ranges: 0, or -1 with
 * the failure recorded and whatever was registered removed again.
 */
static int set_create(struct life_set *ls, int nsmall, int spare)
{
	struct codectl_elf_info ei;
	struct codectl_jit_info ji;
	int i, rc;

	memset(ls, 0, sizeof(*ls));
	ls->nsmall = nsmall;
	ls->cap = nsmall + spare;
	ls->code_pages = 1 + (ls->cap * SMALL_SLOT + g_page - 1) / g_page;
	ls->code = map_code(ls->code_pages);
	ls->tbl = map_pages(1, PROT_READ | PROT_WRITE);
	if (!ls->code || !ls->tbl)
		goto fail;
	jit_table_init(ls->tbl, 24, 24, 8, 2);
	if (self_image_get(&ls->si))
		goto fail;
	ei = (struct codectl_elf_info){
		.elf_start = ls->si.elf_start, .elf_end = ls->si.elf_end,
		.text_start = ls->si.text_start, .text_end = ls->si.text_end,
		.sframe_start = ls->si.sframe_start, .sframe_end = ls->si.sframe_end,
		.pathname = (uintptr_t)ls->si.path,
		.build_id = (uintptr_t)ls->si.build_id,
		.build_id_len = ls->si.build_id_len,
		.debug_link_pathname = (uintptr_t)"codectl-abi-test.debug",
		.debug_link_crc = 0xc0dec7,
	};
	rc = cc_register_elf(g_fd, &ei);
	if (!EXPECT_RC(rc, 0, "REGISTER_ELF of this program's image"))
		goto fail;
	ls->n++;
	if (sframe_host_abi()) {
		if (sfr_obj_create(&ls->so, 3))
			goto fail;
		ls->have_so = true;
		ei = (struct codectl_elf_info){
			.elf_start = (uintptr_t)ls->so.base,
			.elf_end = (uintptr_t)ls->so.base + 2 * g_page,
			.text_start = ls->so.text, .text_end = ls->so.text_end,
			.sframe_start = ls->so.sframe, .sframe_end = ls->so.sframe_end,
			.pathname = (uintptr_t)"/life/sframe-object.so",
			.build_id = (uintptr_t)life_bid,
			.build_id_len = sizeof(life_bid),
			.debug_link_pathname = (uintptr_t)"sframe-object.so.debug",
			.debug_link_crc = 7,
		};
		rc = cc_register_elf(g_fd, &ei);
		if (!EXPECT_RC(rc, 0, "REGISTER_ELF of an object with SFrame v3"))
			goto fail;
		ls->n++;
	}
	ji = (struct codectl_jit_info){
		.text_start = (uintptr_t)ls->code,
		.text_end = (uintptr_t)ls->code + 0x100,
		.unwind_head = (uintptr_t)ls->tbl,
	};
	rc = cc_register_jit(g_fd, &ji);
	if (!EXPECT_RC(rc, 0, "REGISTER_JIT"))
		goto fail;
	ls->n++;
	for (i = 0; i < nsmall; i++) {
		rc = set_reg_small(ls, i, "set");
		if (!EXPECT_RC(rc, 0, "registering small range %d", i))
			goto fail;
		ls->n++;
	}
	return 0;
fail:
	cc_unregister_all(g_fd);
	set_destroy(ls);
	return -1;
}

/* ---- fork ------------------------------------------------------------- */

struct inherit_ctx {
	struct snap want;
	struct codectl_version v;
	const char *who;
	int wait_fd;	/* >= 0: query only after EOF here */
	int close_fd;	/* >= 0: the parent's end of that pipe */
};

/*
 * In a fresh child: the registrations must be exactly the parent's, and
 * the child's own (it can remove all of them).
 */
static int check_inherited(struct inherit_ctx *c)
{
	struct codectl_version v;
	struct snap got = { 0 };
	long n;
	int rc;

	if (c->wait_fd >= 0) {
		close(c->close_fd);
		wait_eof(c->wait_fd);
	}
	rc = snap_take(g_fd, &got);
	if (EXPECT_RC(rc, 0, "%s: QUERY walk", c->who))
		snap_cmp(&c->want, &got, c->who);
	rc = cc_version(g_fd, &v);
	if (EXPECT_RC(rc, 0, "%s: VERSION", c->who))
		EXPECT(v.nr_registrations == c->v.nr_registrations &&
		       v.bytes == c->v.bytes,
		       "%s: VERSION says %llu registrations of %llu bytes, the parent had %llu of %llu",
		       c->who, ULL(v.nr_registrations), ULL(v.bytes),
		       ULL(c->v.nr_registrations), ULL(c->v.bytes));
	n = cc_unregister_all(g_fd);
	EXPECT(n == c->want.n, "%s: UNREGISTERed %ld of the %d inherited registrations",
	       c->who, n, c->want.n);
	EXPECT(cc_nr(g_fd) == 0, "%s: %ld registrations left after removing all",
	       c->who, cc_nr(g_fd));
	EXPECT(cc_version(g_fd, &v) == 0 && v.bytes == 0,
	       "%s: VERSION bytes %llu with no registrations", c->who,
	       ULL(v.bytes));
	snap_free(&got);
	return 0;
}

static int check_inherited_fn(void *p)
{
	return check_inherited(p);
}

/* The parent changes its registrations while the child looks at its own. */
static void parent_mutate(struct life_set *ls)
{
	uint64_t s, e;

	small_range(ls, 0, &s, &e);
	EXPECT_RC(cc_unregister(g_fd, s, e), 0, "parent: UNREGISTER after fork");
	EXPECT_RC(set_reg_small(ls, ls->nsmall, "after-fork"), 0,
		  "parent: REGISTER after fork");
}

static void parent_restore(struct life_set *ls)
{
	uint64_t s, e;

	small_range(ls, ls->nsmall, &s, &e);
	EXPECT_RC(cc_unregister(g_fd, s, e), 0, "parent: UNREGISTER");
	EXPECT_RC(set_reg_small(ls, 0, "set"), 0, "parent: REGISTER again");
}

static void *fork_thread(void *p)
{
	struct inherit_ctx *c = p;
	pid_t pid;

	fflush(stdout);
	pid = fork();
	if (!pid) {
		int before = t_nr_failed();

		check_inherited(c);
		child_exit(before);
	}
	return (void *)(intptr_t)pid;
}

static int clone_check(void *p)
{
	int before = t_nr_failed();

	check_inherited(p);
	child_exit(before);
}

TEST(fork_inherits)
{
	struct inherit_ctx c = { .wait_fd = -1 };
	struct snap now = { 0 };
	struct life_set set;
	struct lstats lst;
	uint8_t *stack = NULL;
	int sync[2] = { -1, -1 }, rc;
	pthread_t th;
	void *ret;
	pid_t pid;

	if (set_create(&set, 200, SPARE))
		return T_FAIL;
	REQUIRE_RC(snap_take(g_fd, &c.want), 0, "parent: QUERY walk");
	REQUIRE(c.want.n == set.n, "parent: walk shows %d of %d registrations",
		c.want.n, set.n);
	REQUIRE_RC(cc_version(g_fd, &c.v), 0, "VERSION");
	if (lstats_begin(&lst) == T_FAIL)
		goto out;

	/* 1. The child's first act is the QUERY walk; the parent changes
	 *    its own registrations at once. */
	c.who = "child (QUERY at once)";
	pid = t_fork_child(check_inherited_fn, &c);
	parent_mutate(&set);
	t_wait_child(pid, 0, c.who);
	parent_restore(&set);

	/* 2. The child looks only after the parent's changes. */
	REQUIRE(!pipe(sync), "pipe: %m");
	c.who = "child (QUERY after the parent's changes)";
	c.wait_fd = sync[0];
	c.close_fd = sync[1];
	pid = t_fork_child(check_inherited_fn, &c);
	close(sync[0]);
	sync[0] = -1;
	parent_mutate(&set);
	close(sync[1]);
	sync[1] = -1;
	t_wait_child(pid, 0, c.who);
	parent_restore(&set);
	c.wait_fd = -1;

	/* 3. fork() from a second thread. */
	c.who = "child forked by a second thread";
	REQUIRE(!pthread_create(&th, NULL, fork_thread, &c), "pthread_create");
	pthread_join(th, &ret);
	pid = (pid_t)(intptr_t)ret;
	if (EXPECT(pid > 0, "fork from a thread: %d", pid))
		t_wait_child(pid, 0, c.who);

	/* 4. clone() without CLONE_VM, sharing the fd table. */
	stack = map_pages(CHILD_STACK_PAGES, PROT_READ | PROT_WRITE);
	REQUIRE(stack, "mmap");
	c.who = "clone(CLONE_FILES) child";
	fflush(stdout);
	pid = clone(clone_check, stack + CHILD_STACK_PAGES * g_page,
		    CLONE_FILES | SIGCHLD, &c);
	if (EXPECT(pid > 0, "clone(CLONE_FILES): %m"))
		t_wait_child(pid, 0, c.who);

	/* The children removed theirs; the parent's are as they were. */
	rc = snap_take(g_fd, &now);
	if (EXPECT_RC(rc, 0, "parent: QUERY walk after the children"))
		snap_cmp(&c.want, &now, "parent after its children");
	lstats_back(&lst, "after the children exited", NULL);
out:
	close_pair(sync);
	cc_unregister_all(g_fd);
	set_destroy(&set);
	unmap_pages(stack, CHILD_STACK_PAGES);
	snap_free(&c.want);
	snap_free(&now);
	return lstats_result(&lst);
}

struct indep {
	struct life_set *set;
	struct snap want;
	int up, down;		/* the child's ends */
	int up_rd, down_wr;	/* the parent's */
};

static bool query_path_is(uint64_t s, uint64_t e, const char *path)
{
	char pbuf[128] = "";
	struct codectl_query_info q = {
		.addr = s, .pathname = (uintptr_t)pbuf,
		.pathname_len = sizeof(pbuf),
	};

	return !cc_query(g_fd, &q) && q.text_start == s && q.text_end == e &&
	       !strcmp(pbuf, path);
}

static bool registered(uint64_t s, uint64_t e)
{
	struct codectl_query_info q;

	return !cc_query_at(g_fd, s, &q) && q.text_start == s && q.text_end == e;
}

static int indep_child(void *p)
{
	struct indep *x = p;
	struct life_set *ls = x->set;
	uint64_t s0, e0, s1, e1, sa, ea, sd, ed;
	struct snap got = { 0 };

	close(x->up_rd);
	close(x->down_wr);
	small_range(ls, 0, &s0, &e0);
	small_range(ls, 1, &s1, &e1);
	small_range(ls, ls->nsmall, &sa, &ea);
	small_range(ls, ls->nsmall + 1, &sd, &ed);
	if (EXPECT_RC(snap_take(g_fd, &got), 0, "child: QUERY walk"))
		snap_cmp(&x->want, &got, "child");
	/* Replace an inherited registration, add one of its own. */
	EXPECT_RC(cc_unregister(g_fd, s0, e0), 0, "child: UNREGISTER inherited slot 0");
	EXPECT_RC(set_reg_small(ls, 0, "child"), 0, "child: REGISTER slot 0 anew");
	EXPECT_RC(set_reg_small(ls, ls->nsmall, "child"), 0, "child: REGISTER a new slot");
	EXPECT(query_path_is(s0, e0, "/life/child/small000.so"),
	       "child: slot 0 does not show the child's metadata");
	EXPECT(cc_nr(g_fd) == ls->n + 1, "child: %ld registrations, expected %d",
	       cc_nr(g_fd), ls->n + 1);
	write_byte(x->up, 'a');
	/* The parent registers slot nsmall + 1 meanwhile. */
	if (read_byte(x->down) != 'b')
		return 1;
	EXPECT(!registered(sd, ed), "child: sees the parent's registration made after the fork");
	EXPECT_RC(cc_unregister(g_fd, sd, ed), ENOENT,
		  "child: UNREGISTER of the parent's new registration");
	EXPECT_RC(cc_unregister(g_fd, s1, e1), 0, "child: UNREGISTER inherited slot 1");
	EXPECT(cc_nr(g_fd) == ls->n, "child: %ld registrations, expected %d",
	       cc_nr(g_fd), ls->n);
	write_byte(x->up, 'c');
	wait_eof(x->down);
	/* Exits with its registrations. */
	snap_free(&got);
	return 0;
}

TEST(fork_independent)
{
	struct indep x = { 0 };
	struct snap now = { 0 };
	struct life_set set;
	struct lstats lst;
	uint64_t s0, e0, s1, e1, sa, ea, sd, ed;
	int up[2] = { -1, -1 }, down[2] = { -1, -1 };
	pid_t pid = -1;

	if (set_create(&set, 20, SPARE))
		return T_FAIL;
	x.set = &set;
	small_range(&set, 0, &s0, &e0);
	small_range(&set, 1, &s1, &e1);
	small_range(&set, set.nsmall, &sa, &ea);
	small_range(&set, set.nsmall + 1, &sd, &ed);
	REQUIRE_RC(snap_take(g_fd, &x.want), 0, "parent: QUERY walk");
	if (lstats_begin(&lst) == T_FAIL)
		goto out;
	REQUIRE(!pipe(up) && !pipe(down), "pipe: %m");
	x.up = up[1];
	x.down = down[0];
	x.up_rd = up[0];
	x.down_wr = down[1];
	pid = t_fork_child(indep_child, &x);
	close(up[1]);
	close(down[0]);
	up[1] = down[0] = -1;
	REQUIRE(pid > 0, "fork");
	REQUIRE(read_byte(up[0]) == 'a', "child died early");
	/* The child's changes are not ours. */
	if (EXPECT_RC(snap_take(g_fd, &now), 0, "parent: QUERY walk"))
		snap_cmp(&x.want, &now, "parent after the child's changes");
	EXPECT(query_path_is(s0, e0, "/life/set/small000.so"),
	       "parent: slot 0 lost its metadata to the child's");
	EXPECT(!registered(sa, ea), "parent: sees the child's new registration");
	EXPECT_RC(cc_unregister(g_fd, sa, ea), ENOENT,
		  "parent: UNREGISTER of the child's registration");
	/* Ours are not the child's. */
	EXPECT_RC(set_reg_small(&set, set.nsmall + 1, "parent"), 0,
		  "parent: REGISTER after the fork");
	write_byte(down[1], 'b');
	EXPECT(read_byte(up[0]) == 'c', "child died");
	EXPECT(registered(s1, e1), "parent: slot 1 gone after the child removed its copy");
	EXPECT_RC(cc_unregister(g_fd, sd, ed), 0, "parent: UNREGISTER its new one");
	close(down[1]);
	down[1] = -1;
	t_wait_child(pid, 0, "child");
	pid = -1;
	if (EXPECT_RC(snap_take(g_fd, &now), 0, "parent: QUERY walk"))
		snap_cmp(&x.want, &now, "parent after the child exited");
	/* Both had slot 1: removing it in the parent works as well. */
	EXPECT_RC(cc_unregister(g_fd, s1, e1), 0, "parent: UNREGISTER slot 1");
	EXPECT_RC(set_reg_small(&set, 1, "set"), 0, "parent: REGISTER slot 1 again");
	lstats_back(&lst, "after the child exited", NULL);
out:
	close_pair(up);
	close_pair(down);
	if (pid > 0) {
		kill(pid, SIGKILL);
		waitpid(pid, NULL, 0);
	}
	cc_unregister_all(g_fd);
	set_destroy(&set);
	snap_free(&x.want);
	snap_free(&now);
	return lstats_result(&lst);
}

struct gchild {
	struct life_set *set;
	struct snap want;	/* the parent's */
	int res;		/* write end: grandchild's pid, then 'y'/'n' */
	int res_rd;
};

/* The grandchild: its parent is gone by the time it looks. */
static int grandchild(struct gchild *g, int gone_rd)
{
	struct snap got = { 0 }, ggot = { 0 };
	struct inherit_ctx c = { .wait_fd = -1, .who = "great-grandchild" };
	struct life_set *ls = g->set;
	uint64_t s0, e0, sc, ec;
	pid_t pid;
	int before = t_nr_failed();
	char r;
	char cpath[64];

	small_range(ls, 0, &s0, &e0);
	small_range(ls, ls->nsmall, &sc, &ec);
	snprintf(cpath, sizeof(cpath), "/life/child/small%03d.so", ls->nsmall);
	wait_eof(gone_rd);	/* the child has exited */
	if (EXPECT_RC(snap_take(g_fd, &got), 0, "grandchild: QUERY walk")) {
		EXPECT(got.n == g->want.n + 1,
		       "grandchild: %d registrations, expected the parent's %d and the child's one",
		       got.n, g->want.n);
		EXPECT(query_path_is(sc, ec, cpath),
		       "grandchild: the child's own registration is missing");
		EXPECT(query_path_is(s0, e0, "/life/set/small000.so"),
		       "grandchild: the grandparent's slot 0 is missing");
	}
	/* Its own changes; a great-grandchild inherits those. */
	EXPECT_RC(cc_unregister(g_fd, s0, e0), 0, "grandchild: UNREGISTER slot 0");
	EXPECT_RC(set_reg_small(ls, ls->nsmall + 1, "grandchild"), 0,
		  "grandchild: REGISTER");
	if (EXPECT_RC(snap_take(g_fd, &c.want), 0, "grandchild: QUERY walk") &&
	    EXPECT_RC(cc_version(g_fd, &c.v), 0, "VERSION")) {
		pid = t_fork_child(check_inherited_fn, &c);
		t_wait_child(pid, 0, "great-grandchild");
		if (EXPECT_RC(snap_take(g_fd, &ggot), 0, "grandchild: QUERY walk"))
			snap_cmp(&c.want, &ggot, "grandchild after the great-grandchild");
	}
	r = t_nr_failed() == before ? 'y' : 'n';
	if (write(g->res, &r, 1) != 1)
		_exit(1);
	snap_free(&got);
	snap_free(&ggot);
	snap_free(&c.want);
	return 0;
}

static int gchild_child(void *p)
{
	struct gchild *g = p;
	struct life_set *ls = g->set;
	struct snap got = { 0 };
	int gone[2];
	pid_t pid;

	close(g->res_rd);
	if (EXPECT_RC(snap_take(g_fd, &got), 0, "child: QUERY walk"))
		snap_cmp(&g->want, &got, "child");
	snap_free(&got);
	if (!EXPECT_RC(set_reg_small(ls, ls->nsmall, "child"), 0, "child: REGISTER"))
		return 1;
	if (pipe(gone))
		return 1;
	fflush(stdout);
	pid = fork();
	if (pid < 0)
		return 1;
	if (!pid) {
		int before = t_nr_failed();

		close(gone[1]);
		grandchild(g, gone[0]);
		child_exit(before);
	}
	/* Tell the parent who the grandchild is, then go away at once. */
	if (write(g->res, &pid, sizeof(pid)) != sizeof(pid))
		return 1;
	return 0;
}

TEST(fork_grandchild)
{
	struct gchild g = { 0 };
	struct snap now = { 0 };
	struct life_set set;
	struct lstats lst;
	int res[2] = { -1, -1 };
	pid_t pid, gpid = -1;
	char r = 0;

	if (set_create(&set, 30, SPARE))
		return T_FAIL;
	g.set = &set;
	REQUIRE_RC(snap_take(g_fd, &g.want), 0, "parent: QUERY walk");
	if (lstats_begin(&lst) == T_FAIL)
		goto out;
	/* Orphaned grandchildren come to us, so that we can reap them. */
	REQUIRE(!prctl(PR_SET_CHILD_SUBREAPER, 1), "PR_SET_CHILD_SUBREAPER: %m");
	REQUIRE(!pipe(res), "pipe: %m");
	g.res = res[1];
	g.res_rd = res[0];
	pid = t_fork_child(gchild_child, &g);
	close(res[1]);
	res[1] = -1;
	REQUIRE(pid > 0, "fork");
	if (read(res[0], &gpid, sizeof(gpid)) != sizeof(gpid))
		gpid = -1;
	t_wait_child(pid, 0, "child");
	REQUIRE(gpid > 0, "the child did not fork a grandchild");
	EXPECT(read(res[0], &r, 1) == 1 && r == 'y',
	       "grandchild's checks failed (see above)");
	t_wait_child(gpid, 0, "grandchild");
	if (EXPECT_RC(snap_take(g_fd, &now), 0, "parent: QUERY walk"))
		snap_cmp(&g.want, &now, "parent after its descendants");
	lstats_back(&lst, "after the descendants exited", NULL);
out:
	close_pair(res);
	prctl(PR_SET_CHILD_SUBREAPER, 0);
	cc_unregister_all(g_fd);
	set_destroy(&set);
	snap_free(&g.want);
	snap_free(&now);
	return lstats_result(&lst);
}

/*
 * A child with a signal pending when it first returns to user space: a
 * handled signal, a stop (job control) and ptrace's fork tracing (strace
 * -f, gdb), which queues SIGSTOP on every new child.  None of these may
 * cost the child its registrations.
 */
static volatile sig_atomic_t usr1_seen;

static void on_usr1(int sig)
{
	(void)sig;
	usr1_seen++;
}

/* In the child: 0 checks passed, 1 failed; +2 when no signal came first. */
static __attribute__((noreturn)) void sigchild(struct inherit_ctx *c)
{
	int early = usr1_seen, before = t_nr_failed();

	check_inherited(c);
	fflush(stdout);
	_exit((t_nr_failed() != before) | (early ? 0 : 2));
}

static int sig_rounds(struct inherit_ctx *c, int sig, int rounds)
{
	int i, status, early = 0;
	pid_t pid;

	for (i = 0; i < rounds; i++) {
		fflush(stdout);
		pid = fork();
		if (pid < 0) {
			FAIL("fork: %m");
			break;
		}
		if (!pid)
			sigchild(c);
		kill(pid, sig);
		if (waitpid(pid, &status, sig == SIGSTOP ? WUNTRACED : 0) == pid &&
		    WIFSTOPPED(status)) {
			kill(pid, SIGCONT);
			waitpid(pid, &status, 0);
		}
		if (!WIFEXITED(status)) {
			FAIL("%s: child died", c->who);
			continue;
		}
		if (WEXITSTATUS(status) & 1)
			FAIL("%s: round %d: the child's checks failed (see above)",
			     c->who, i);
		if (!(WEXITSTATUS(status) & 2))
			early++;
	}
	return early;
}

/* The tracee: forks a child that ptrace auto-attaches (SIGSTOP pending). */
static __attribute__((noreturn)) void traced_main(struct inherit_ctx *c)
{
	int status;
	pid_t pid;

	if (ptrace(PTRACE_TRACEME, 0, NULL, NULL))
		_exit(3);
	raise(SIGSTOP);		/* the tracer sets PTRACE_O_TRACEFORK now */
	fflush(stdout);
	pid = fork();
	if (!pid) {
		int before = t_nr_failed();

		check_inherited(c);
		child_exit(before);
	}
	if (pid < 0 || waitpid(pid, &status, 0) != pid)
		_exit(4);
	_exit(WIFEXITED(status) ? WEXITSTATUS(status) : 5);
}

static void traced_fork(struct inherit_ctx *c)
{
	int status, st_tracee = -1;
	pid_t tracee, w;

	fflush(stdout);
	tracee = fork();
	if (tracee < 0) {
		FAIL("fork: %m");
		return;
	}
	if (!tracee)
		traced_main(c);
	if (waitpid(tracee, &status, WUNTRACED) != tracee || !WIFSTOPPED(status)) {
		FAIL("tracee did not stop");
		kill(tracee, SIGKILL);
		waitpid(tracee, NULL, 0);
		return;
	}
	if (ptrace(PTRACE_SETOPTIONS, tracee, NULL,
		   (void *)(long)(PTRACE_O_TRACEFORK | PTRACE_O_EXITKILL)) ||
	    ptrace(PTRACE_CONT, tracee, NULL, NULL)) {
		FAIL("ptrace: %m");
		kill(tracee, SIGKILL);
		waitpid(tracee, NULL, 0);
		return;
	}
	/* Let everything run, swallowing the stops ptrace causes. */
	while ((w = waitpid(-1, &status, __WALL)) > 0) {
		if (WIFEXITED(status) || WIFSIGNALED(status)) {
			if (w == tracee) {
				st_tracee = status;
				break;
			}
			continue;
		}
		if (WIFSTOPPED(status)) {
			int sig = WSTOPSIG(status);

			if (status >> 16 || sig == SIGSTOP || sig == SIGTRAP)
				sig = 0;
			ptrace(PTRACE_CONT, w, NULL, (void *)(long)sig);
		}
	}
	if (!WIFEXITED(st_tracee) || WEXITSTATUS(st_tracee))
		FAIL("%s: exit status %d (its checks failed, see above)", c->who,
		     WIFEXITED(st_tracee) ? WEXITSTATUS(st_tracee) : -1);
}

TEST(fork_signal_pending)
{
	struct sched_param param = { .sched_priority = 1 };
	struct inherit_ctx c = { .wait_fd = -1 };
	struct sigaction sa = { .sa_handler = on_usr1 };
	cpu_set_t one, all;
	struct life_set set;
	struct lstats lst;
	int early, fifo;

	if (set_create(&set, 50, SPARE))
		return T_FAIL;
	REQUIRE_RC(snap_take(g_fd, &c.want), 0, "parent: QUERY walk");
	REQUIRE_RC(cc_version(g_fd, &c.v), 0, "VERSION");
	if (lstats_begin(&lst) == T_FAIL)
		goto out;
	/*
	 * On one CPU, with the parent SCHED_FIFO and its children reset to
	 * SCHED_OTHER at fork, a child cannot run before the parent's kill()
	 * and waitpid(): the signal is pending at its first return to user
	 * space.  (Without the policy the scheduler decides: the child of a
	 * PREEMPT_RT kernel ran first in every round.  Not root: no
	 * SCHED_FIFO, and the rounds' order is only reported.)
	 */
	CPU_ZERO(&one);
	CPU_SET(sched_getcpu() < 0 ? 0 : sched_getcpu(), &one);
	sched_getaffinity(0, sizeof(all), &all);
	sched_setaffinity(0, sizeof(one), &one);
	fifo = !sched_setscheduler(0, SCHED_FIFO | SCHED_RESET_ON_FORK, &param);
	if (!fifo && errno != EPERM)
		FAIL("sched_setscheduler(SCHED_FIFO): %m");

	sigaction(SIGUSR1, &sa, NULL);
	c.who = "child with SIGUSR1 pending";
	early = sig_rounds(&c, SIGUSR1, 10);
	printf("# %d of 10 children had SIGUSR1 delivered before their first instruction\n",
	       early);
	if (fifo)
		EXPECT(early == 10, "test setup: SIGUSR1 arrived before the child ran in %d of 10 rounds",
		       early);
	else
		printf("# not root (no SCHED_FIFO): the order was the scheduler's; the run as root requires all 10\n");
	signal(SIGUSR1, SIG_DFL);

	c.who = "child stopped and continued";
	sig_rounds(&c, SIGSTOP, 5);
	param.sched_priority = 0;
	if (fifo)
		sched_setscheduler(0, SCHED_OTHER, &param);

	c.who = "child of a process traced with PTRACE_O_TRACEFORK";
	traced_fork(&c);

	sched_setaffinity(0, sizeof(all), &all);
	EXPECT(cc_nr(g_fd) == set.n, "parent: %ld registrations, expected %d",
	       cc_nr(g_fd), set.n);
	lstats_back(&lst, "after the children exited", NULL);
out:
	cc_unregister_all(g_fd);
	set_destroy(&set);
	snap_free(&c.want);
	return lstats_result(&lst);
}

/*
 * Children that die before or just after their first instruction: a copy
 * (or whatever the fork left pending) must be freed all the same.
 */
TEST(fork_kill_early)
{
	struct life_set set;
	struct lstats lst;
	pid_t pid[32];
	int i;

	if (set_create(&set, 300, SPARE))
		return T_FAIL;
	if (lstats_begin(&lst) == T_FAIL)
		goto out;
	fflush(stdout);
	for (i = 0; i < 32; i++) {
		pid[i] = i % 4 == 3 ? vfork() : fork();
		if (!pid[i])
			_exit(0);
		if (pid[i] > 0 && i % 4 < 2)
			kill(pid[i], SIGKILL);
		if (i % 8 == 5) {
			/* Change the parent's set while copies may be pending. */
			uint64_t s, e;

			small_range(&set, 7, &s, &e);
			EXPECT_RC(cc_unregister(g_fd, s, e), 0, "UNREGISTER");
			EXPECT_RC(set_reg_small(&set, 7, "set"), 0, "REGISTER");
		}
	}
	for (i = 0; i < 32; i++) {
		char what[32];

		snprintf(what, sizeof(what), "child %d", i);
		t_wait_child(pid[i], i % 4 < 2 ? SIGKILL : 0, what);
	}
	EXPECT(cc_nr(g_fd) == set.n, "parent: %ld registrations, expected %d",
	       cc_nr(g_fd), set.n);
	lstats_back(&lst, "after the children died", NULL);
out:
	cc_unregister_all(g_fd);
	set_destroy(&set);
	return lstats_result_only(&lst);
}

/* ---- vfork / CLONE_VM: one address space, one registry ---------------- */

static volatile int vf_rc_query, vf_rc_reg, vf_rc_unreg;
static volatile long vf_nr;
static struct codectl_elf_info vf_ei;
static uint64_t vf_ps, vf_pe;

TEST(vfork_shares)
{
	struct codectl_query_info q;
	struct codectl_elf_info ei;
	uint8_t *code;
	pid_t pid;

	code = map_code(1);
	if (!code)
		return T_FAIL;
	vf_ps = (uintptr_t)code + 0x100;
	vf_pe = (uintptr_t)code + 0x200;
	ei = (struct codectl_elf_info){
		.text_start = vf_ps, .text_end = vf_pe,
		.pathname = (uintptr_t)"/vfork/parent.so",
	};
	vf_ei = (struct codectl_elf_info){
		.text_start = (uintptr_t)code + 0x400,
		.text_end = (uintptr_t)code + 0x500,
		.pathname = (uintptr_t)"/vfork/child.so",
	};
	REQUIRE_RC(cc_register_elf(g_fd, &ei), 0, "REGISTER_ELF");
	vf_rc_query = vf_rc_reg = vf_rc_unreg = 1;
	fflush(stdout);
	pid = vfork();
	if (!pid) {
		/* The parent's address space: its registration is here. */
		struct codectl_query_info cq;

		vf_rc_query = cc_query_at(g_fd, vf_ps, &cq);
		if (!vf_rc_query && cq.text_start != vf_ps)
			vf_rc_query = -EDOM;
		vf_rc_reg = cc_register_elf(g_fd, &vf_ei);
		vf_nr = cc_nr(g_fd);
		_exit(0);
	}
	REQUIRE(pid > 0, "vfork: %m");
	t_wait_child(pid, 0, "vfork child");
	EXPECT(vf_rc_query == 0, "vfork child: QUERY of the parent's registration: %s",
	       vf_rc_query == -EDOM ? "another range" : ename(vf_rc_query));
	EXPECT_RC(vf_rc_reg, 0, "vfork child: REGISTER_ELF");
	EXPECT(vf_nr == 2, "vfork child: %ld registrations, expected 2", vf_nr);
	EXPECT(query_path_is(vf_ei.text_start, vf_ei.text_end, "/vfork/child.so"),
	       "parent: the vfork child's registration is not there");
	EXPECT(cc_nr(g_fd) == 2, "parent: %ld registrations, expected 2", cc_nr(g_fd));

	/* The child removes the parent's registration: gone for the parent. */
	fflush(stdout);
	pid = vfork();
	if (!pid) {
		vf_rc_unreg = cc_unregister(g_fd, vf_ps, vf_pe);
		_exit(0);
	}
	REQUIRE(pid > 0, "vfork: %m");
	t_wait_child(pid, 0, "second vfork child");
	EXPECT_RC(vf_rc_unreg, 0, "vfork child: UNREGISTER of the parent's registration");
	EXPECT(!registered(vf_ps, vf_pe), "parent: still has what the vfork child removed");
	EXPECT(cc_nr(g_fd) == 1, "parent: %ld registrations, expected 1", cc_nr(g_fd));
	EXPECT_RC(cc_query_at(g_fd, 0, &q), 0, "QUERY");
out:
	cc_unregister_all(g_fd);
	unmap_pages(code, 1);
	return T_PASS;
}

struct cvm {
	int up, down;			/* child's ends */
	int up_rd, down_wr;		/* parent's ends */
	uint64_t ps, pe, vs, ve, ws, we;
	int rc_q1, rc_reg, rc_q3, rc_unreg;
	struct codectl_query_info q1, q3;
	struct codectl_elf_info vei;
};

static int cvm_read(int fd)
{
	char c;

	return read(fd, &c, 1) == 1 ? c : 0;
}

/*
 * Runs on the parent's memory, concurrently with it: no stdio, results in
 * *c, one step per token from the parent.
 */
static int cvm_child(void *p)
{
	struct cvm *c = p;
	char t;

	close(c->up_rd);	/* our own copy of the fd table */
	close(c->down_wr);
	if (cvm_read(c->down) != '1')
		_exit(1);
	c->rc_q1 = cc_query_at(g_fd, c->ps, &c->q1);
	c->rc_reg = cc_register_elf(g_fd, &c->vei);
	t = 'a';
	if (write(c->up, &t, 1) != 1 || cvm_read(c->down) != '2')
		_exit(1);
	c->rc_q3 = cc_query_at(g_fd, c->ws, &c->q3);
	c->rc_unreg = cc_unregister(g_fd, c->ps, c->pe);
	t = 'b';
	if (write(c->up, &t, 1) != 1)
		_exit(1);
	cvm_read(c->down);	/* EOF: exit */
	_exit(0);
}

TEST(clone_vm_shares)
{
	struct codectl_elf_info ei;
	static struct cvm c;
	struct lstats lst;
	uint8_t *code = NULL, *stack = NULL;
	int up[2] = { -1, -1 }, down[2] = { -1, -1 };
	long long r0 = -1, r1, m1;
	pid_t pid = -1;

	code = map_code(1);
	stack = map_pages(CHILD_STACK_PAGES, PROT_READ | PROT_WRITE);
	REQUIRE(code && stack, "mmap");
	memset(&c, 0, sizeof(c));
	c.ps = (uintptr_t)code + 0x100;
	c.pe = c.ps + 0x100;
	c.vs = (uintptr_t)code + 0x400;
	c.ve = c.vs + 0x100;
	c.ws = (uintptr_t)code + 0x800;
	c.we = c.ws + 0x100;
	c.vei = (struct codectl_elf_info){
		.text_start = c.vs, .text_end = c.ve,
		.pathname = (uintptr_t)"/clone-vm/child.so",
	};
	ei = (struct codectl_elf_info){
		.text_start = c.ps, .text_end = c.pe,
		.pathname = (uintptr_t)"/clone-vm/parent.so",
	};
	REQUIRE_RC(cc_register_elf(g_fd, &ei), 0, "REGISTER_ELF");
	if (lstats_begin(&lst) == T_FAIL)
		goto out;
	r0 = lstats_now(&lst, "registrations");
	REQUIRE(!pipe(up) && !pipe(down), "pipe: %m");
	c.up = up[1];
	c.down = down[0];
	c.up_rd = up[0];
	c.down_wr = down[1];
	fflush(stdout);
	pid = clone(cvm_child, stack + CHILD_STACK_PAGES * g_page,
		    CLONE_VM | SIGCHLD, &c);
	REQUIRE(pid > 0, "clone(CLONE_VM): %m");
	close(up[1]);
	close(down[0]);
	up[1] = down[0] = -1;

	write_byte(down[1], '1');
	REQUIRE(cvm_read(up[0]) == 'a', "CLONE_VM child died");
	EXPECT(c.rc_q1 == 0 && c.q1.text_start == c.ps && c.q1.text_end == c.pe,
	       "CLONE_VM child: QUERY of the parent's registration: %s [%#llx,%#llx)",
	       ename(c.rc_q1), ULL(c.q1.text_start), ULL(c.q1.text_end));
	EXPECT_RC(c.rc_reg, 0, "CLONE_VM child: REGISTER_ELF");
	EXPECT(query_path_is(c.vs, c.ve, "/clone-vm/child.so"),
	       "parent: the CLONE_VM child's registration is not there");
	EXPECT(cc_nr(g_fd) == 2, "parent: %ld registrations, expected 2", cc_nr(g_fd));
	r1 = lstats_now(&lst, "registrations");
	m1 = lstats_now(&lst, "mms");
	if (r0 >= 0)
		EXPECT(r1 == r0 + 1 && m1 == stats_get(&lst.base, "mms"),
		       "stats with the CLONE_VM child alive: registrations %lld (expected %lld), mms %lld (expected %lld): a copy was made?",
		       r1, r0 + 1, m1, stats_get(&lst.base, "mms"));

	ei.text_start = c.ws;
	ei.text_end = c.we;
	ei.pathname = (uintptr_t)"/clone-vm/parent2.so";
	EXPECT_RC(cc_register_elf(g_fd, &ei), 0, "parent: REGISTER_ELF");
	write_byte(down[1], '2');
	REQUIRE(cvm_read(up[0]) == 'b', "CLONE_VM child died");
	EXPECT(c.rc_q3 == 0 && c.q3.text_start == c.ws,
	       "CLONE_VM child: QUERY of the parent's new registration: %s",
	       ename(c.rc_q3));
	EXPECT_RC(c.rc_unreg, 0, "CLONE_VM child: UNREGISTER of the parent's registration");
	EXPECT(!registered(c.ps, c.pe), "parent: still has what the CLONE_VM child removed");
	close(down[1]);
	down[1] = -1;
	t_wait_child(pid, 0, "CLONE_VM child");
	pid = -1;
	/* The child's exit leaves the shared address space's registry alone. */
	EXPECT(registered(c.vs, c.ve) && registered(c.ws, c.we) && cc_nr(g_fd) == 2,
	       "parent: %ld registrations after the CLONE_VM child exited, expected its and ours (2)",
	       cc_nr(g_fd));
	EXPECT_RC(cc_unregister(g_fd, c.vs, c.ve), 0, "parent: UNREGISTER the child's");
	EXPECT_RC(cc_unregister(g_fd, c.ws, c.we), 0, "parent: UNREGISTER");
	ei.text_start = c.ps;
	ei.text_end = c.pe;
	ei.pathname = (uintptr_t)"/clone-vm/parent.so";
	EXPECT_RC(cc_register_elf(g_fd, &ei), 0, "REGISTER_ELF");
	lstats_back(&lst, "after the CLONE_VM child exited", NULL);
out:
	close_pair(up);
	close_pair(down);
	if (pid > 0) {
		kill(pid, SIGKILL);
		waitpid(pid, NULL, 0);
	}
	cc_unregister_all(g_fd);
	unmap_pages(code, 1);
	unmap_pages(stack, CHILD_STACK_PAGES);
	return lstats_result(&lst);
}

/* ---- exec ------------------------------------------------------------- */

struct execx {
	int mode;		/* EX_* */
	int up, down, up_rd, down_wr;
	struct life_set set;
};

enum { EX_MAIN, EX_INHERITED, EX_THREAD };

static void exec_helper(struct execx *x)
{
	if (dup2(x->down, 0) < 0 || dup2(x->up, 1) < 0)
		_exit(126);
	execl(g_self_exe, "codectl-abi-test", EXEC_CHECK_ARG, (char *)NULL);
	fprintf(stderr, "exec %s: %m\n", g_self_exe);
	_exit(127);
}

/* Keeps the registry busy while another thread execs. */
static void *exec_churn(void *p)
{
	struct execx *x = p;
	uint64_t s, e;
	int i;

	for (i = 0;; i = (i + 1) % SPARE) {
		small_range(&x->set, x->set.nsmall + i, &s, &e);
		set_reg_small(&x->set, x->set.nsmall + i, "churn");
		cc_walk_count(g_fd);
		cc_unregister(g_fd, s, e);
	}
	return NULL;
}

static void *exec_thread(void *p)
{
	exec_helper(p);
	return NULL;
}

static void *sleeper(void *p)
{
	(void)p;
	for (;;)
		pause();
	return NULL;
}

static int exec_child(void *p)
{
	struct execx *x = p;
	pthread_t th;
	int i;

	close(x->up_rd);
	close(x->down_wr);
	if (x->mode == EX_INHERITED)
		exec_helper(x);		/* at once: only the inherited ones */
	if (set_create(&x->set, 100, SPARE))
		return 1;
	if (!EXPECT(cc_nr(g_fd) == x->set.n, "child: %ld registrations before exec",
		    cc_nr(g_fd)))
		return 1;
	if (x->mode == EX_MAIN)
		exec_helper(x);
	/* A non-main thread execs while others sleep or use the registry. */
	for (i = 0; i < 2; i++)
		if (pthread_create(&th, NULL, sleeper, NULL))
			return 1;
	if (pthread_create(&th, NULL, exec_churn, x))
		return 1;
	sleep_ms(20);
	if (pthread_create(&th, NULL, exec_thread, x))
		return 1;
	for (;;)
		pause();
}

static void exec_case(int mode, const char *what)
{
	static struct execx x;
	struct lstats lst;
	int up[2] = { -1, -1 }, down[2] = { -1, -1 };
	char line[128] = "", when[128];
	long nr = -1, walk = -1;
	ssize_t n;
	pid_t pid;

	printf("# exec %s\n", what);
	memset(&x, 0, sizeof(x));
	x.mode = mode;
	if (mode == EX_INHERITED && set_create(&x.set, 300, SPARE))
		return;
	if (lstats_begin(&lst) == T_FAIL)
		goto out;
	REQUIRE(!pipe(up) && !pipe(down), "pipe: %m");
	x.up = up[1];
	x.down = down[0];
	x.up_rd = up[0];
	x.down_wr = down[1];
	pid = t_fork_child(exec_child, &x);
	close(up[1]);
	close(down[0]);
	up[1] = down[0] = -1;
	REQUIRE(pid > 0, "fork");
	n = read(up[0], line, sizeof(line) - 1);
	if (n > 0)
		line[n] = 0;
	if (EXPECT(sscanf(line, "nr=%ld walk=%ld", &nr, &walk) == 2,
		   "%s: the new image reported '%s'", what, line))
		EXPECT(nr == 0 && walk == 0,
		       "%s: the new image has %ld registrations, QUERY walk shows %ld",
		       what, nr, walk);
	/* The old image's registrations are freed while the process lives. */
	snprintf(when, sizeof(when), "%s, the new image alive", what);
	lstats_back(&lst, when, own_mm_state);
	close(down[1]);
	down[1] = -1;
	t_wait_child(pid, 0, what);
	snprintf(when, sizeof(when), "%s, after exit", what);
	lstats_back(&lst, when, NULL);
	if (mode == EX_INHERITED)
		EXPECT(cc_nr(g_fd) == x.set.n, "parent: %ld registrations, expected %d",
		       cc_nr(g_fd), x.set.n);
out:
	close_pair(up);
	close_pair(down);
	if (mode == EX_INHERITED) {
		cc_unregister_all(g_fd);
		set_destroy(&x.set);
	}
}

TEST(exec_clears)
{
	int st = stats_available();

	if (st == T_FAIL)
		return T_FAIL;
	exec_case(EX_MAIN, "from the main thread");
	exec_case(EX_INHERITED, "by a child that only has inherited registrations");
	if (st == T_SKIP && !t_nr_failed())
		return T_SKIP;
	return T_PASS;
}

TEST(exec_thread_clears)
{
	int st = stats_available();

	if (st == T_FAIL)
		return T_FAIL;
	exec_case(EX_THREAD, "from a non-main thread of a 4-thread process");
	if (st == T_SKIP && !t_nr_failed())
		return T_SKIP;
	return T_PASS;
}

/* ---- exit ------------------------------------------------------------- */

struct lastx {
	struct life_set set;
	pid_t leader;
	int up, down, up_rd, down_wr;
};

static bool leader_is_zombie(pid_t pid)
{
	char path[64], buf[256], *p;
	ssize_t n;
	int fd;

	snprintf(path, sizeof(path), "/proc/%d/task/%d/stat", pid, pid);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return true;	/* gone */
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n <= 0)
		return true;
	buf[n] = 0;
	p = strrchr(buf, ')');
	return p && p[1] == ' ' && (p[2] == 'Z' || p[2] == 'X');
}

static void *last_thread(void *p)
{
	struct lastx *x = p;
	uint64_t s, e;
	int i, waited, before = t_nr_failed();
	long walk;
	char c;

	for (waited = 0; !leader_is_zombie(x->leader) && waited < 5000; waited += 10)
		sleep_ms(10);
	EXPECT(leader_is_zombie(x->leader), "the main thread did not exit");
	/* The address space lives on with this thread. */
	for (i = 0; i < 10; i++) {
		small_range(&x->set, x->set.nsmall + i, &s, &e);
		EXPECT_RC(set_reg_small(&x->set, x->set.nsmall + i, "last"), 0,
			  "last thread: REGISTER");
	}
	walk = cc_walk_count(g_fd);
	EXPECT(cc_nr(g_fd) == x->set.n + 10 && walk == x->set.n + 10,
	       "last thread: %ld registrations, walk %ld, expected %d",
	       cc_nr(g_fd), walk, x->set.n + 10);
	c = t_nr_failed() == before ? 'y' : 'n';
	if (write(x->up, &c, 1) != 1)
		return NULL;
	wait_eof(x->down);
	fflush(stdout);
	return NULL;	/* the last thread: the process exits with status 0 */
}

static int last_child(void *p)
{
	struct lastx *x = p;
	pthread_t th;

	close(x->up_rd);
	close(x->down_wr);
	x->leader = getpid();
	if (set_create(&x->set, 200, SPARE))
		return 1;
	if (pthread_create(&th, NULL, last_thread, x))
		return 1;
	fflush(stdout);
	pthread_exit(NULL);
}

TEST(exit_last_thread)
{
	static struct lastx x;
	struct lstats lst;
	int up[2] = { -1, -1 }, down[2] = { -1, -1 };
	long long r;
	pid_t pid;

	if (lstats_begin(&lst) == T_FAIL)
		return T_FAIL;
	memset(&x, 0, sizeof(x));
	REQUIRE(!pipe(up) && !pipe(down), "pipe: %m");
	x.up = up[1];
	x.down = down[0];
	x.up_rd = up[0];
	x.down_wr = down[1];
	pid = t_fork_child(last_child, &x);
	close(up[1]);
	close(down[0]);
	up[1] = down[0] = -1;
	REQUIRE(pid > 0, "fork");
	EXPECT(read_byte(up[0]) == 'y', "the last thread's checks failed (see above)");
	r = lstats_now(&lst, "registrations");
	if (r >= 0)
		EXPECT(r >= stats_get(&lst.base, "registrations") + 200,
		       "stats registrations %lld while the child's last thread holds 200+, baseline %lld",
		       r, stats_get(&lst.base, "registrations"));
	close(down[1]);
	down[1] = -1;
	t_wait_child(pid, 0, "child whose main thread exited first");
	lstats_back(&lst, "after the last thread exited", NULL);
out:
	close_pair(up);
	close_pair(down);
	return lstats_result_only(&lst);
}

struct killx {
	struct life_set *set;
	int mode;		/* 0 idle, 1 busy threads, 2 with children */
	int up, up_rd, down, down_wr;
};

static void *kill_busy(void *p)
{
	struct killx *x = p;
	static int next;
	int slot = __atomic_fetch_add(&next, 1, __ATOMIC_RELAXED);
	uint64_t s, e;

	slot = x->set->nsmall + 300 + slot;
	small_range(x->set, slot, &s, &e);
	for (;;) {
		set_reg_small(x->set, slot, "busy");
		cc_walk_count(g_fd);
		cc_unregister(g_fd, s, e);
	}
	return NULL;
}

static int kill_child(void *p)
{
	struct killx *x = p;
	pthread_t th;
	pid_t pid;
	int i;
	char c;

	close(x->up_rd);
	close(x->down_wr);
	/* 300 of its own on top of the inherited ones. */
	for (i = 0; i < 300; i++)
		if (!EXPECT_RC(set_reg_small(x->set, x->set->nsmall + i, "own"), 0,
			       "child: REGISTER %d", i))
			return 1;
	if (x->mode == 1)
		for (i = 0; i < 3; i++)
			if (pthread_create(&th, NULL, kill_busy, x))
				return 1;
	if (x->mode == 2)
		for (i = 0; i < 4; i++) {
			pid = fork();
			if (pid < 0)
				return 1;
			if (!pid) {
				/* Holds inherited registrations, killed with us. */
				for (;;)
					pause();
			}
			if (write(x->up, &pid, sizeof(pid)) != sizeof(pid))
				return 1;
		}
	pid = 0;
	c = 'y';
	if (write(x->up, &pid, sizeof(pid)) != sizeof(pid) ||
	    write(x->up, &c, 1) != 1)
		return 1;
	for (;;)
		pause();
}

TEST(exit_sigkill)
{
	static const char *const mode_name[] = {
		"idle", "3 threads registering", "with 4 children",
	};
	struct life_set set;
	struct killx x;
	struct lstats lst;
	int up[2] = { -1, -1 }, down[2] = { -1, -1 }, m, i;
	pid_t pid, kids[8];
	char c, when[96];

	/* The children inherit these, then add their own. */
	if (set_create(&set, 20, 310))
		return T_FAIL;
	if (lstats_begin(&lst) == T_FAIL)
		goto out;
	REQUIRE(!prctl(PR_SET_CHILD_SUBREAPER, 1), "PR_SET_CHILD_SUBREAPER: %m");
	for (m = 0; m < 3; m++) {
		int nk = 0;

		REQUIRE(!pipe(up) && !pipe(down), "pipe: %m");
		x = (struct killx){ &set, m, up[1], up[0], down[0], down[1] };
		pid = t_fork_child(kill_child, &x);
		close(up[1]);
		close(down[0]);
		up[1] = down[0] = -1;
		REQUIRE(pid > 0, "fork");
		for (;;) {
			pid_t k;

			if (read(up[0], &k, sizeof(k)) != sizeof(k) || !k)
				break;
			if (nk < 8)
				kids[nk++] = k;
		}
		EXPECT(read(up[0], &c, 1) == 1 && c == 'y',
		       "child (%s) did not register (see above)", mode_name[m]);
		if (m == 1)
			sleep_ms(100);	/* let the threads work */
		kill(pid, SIGKILL);
		for (i = 0; i < nk; i++)
			kill(kids[i], SIGKILL);
		snprintf(when, sizeof(when), "child (%s)", mode_name[m]);
		t_wait_child(pid, SIGKILL, when);
		for (i = 0; i < nk; i++)
			t_wait_child(kids[i], SIGKILL, "grandchild");
		close_pair(up);
		close_pair(down);
		snprintf(when, sizeof(when), "after SIGKILL of a child (%s)",
			 mode_name[m]);
		lstats_back(&lst, when, NULL);
	}
	EXPECT(cc_nr(g_fd) == set.n, "parent: %ld registrations, expected %d",
	       cc_nr(g_fd), set.n);
out:
	close_pair(up);
	close_pair(down);
	prctl(PR_SET_CHILD_SUBREAPER, 0);
	cc_unregister_all(g_fd);
	set_destroy(&set);
	return lstats_result_only(&lst);
}

/* ---- unmapping -------------------------------------------------------- */

/* One registration a test expects to be there (live) or dropped. */
struct lreg {
	const char *name;
	uint64_t s, e;
	uint64_t charge;	/* VERSION.bytes it added */
	bool live;
};

static uint64_t l_bytes0;	/* VERSION.bytes with no registrations */

static void lreg_begin(void)
{
	struct codectl_version v;

	if (!cc_version(g_fd, &v))
		l_bytes0 = v.bytes;
}

static bool lreg_add(struct lreg *r, const char *name, bool jit,
		     const struct codectl_elf_info *ei,
		     const struct codectl_jit_info *ji)
{
	struct codectl_version a, b;
	int rc;

	memset(r, 0, sizeof(*r));
	r->name = name;
	r->s = jit ? ji->text_start : ei->text_start;
	r->e = jit ? ji->text_end : ei->text_end;
	if (cc_version(g_fd, &a))
		a.bytes = 0;
	rc = jit ? cc_register_jit(g_fd, ji) : cc_register_elf(g_fd, ei);
	if (!EXPECT_RC(rc, 0, "REGISTER_%s %s", jit ? "JIT" : "ELF", name))
		return false;
	if (!cc_version(g_fd, &b))
		r->charge = b.bytes - a.bytes;
	r->live = true;
	return true;
}

static bool lreg_elf(struct lreg *r, const char *name, uint64_t s, uint64_t e,
		     uint64_t sf, uint64_t sfe)
{
	struct codectl_elf_info ei = {
		.text_start = s, .text_end = e,
		.sframe_start = sf, .sframe_end = sfe,
		.pathname = (uintptr_t)name,
	};

	return lreg_add(r, name, false, &ei, NULL);
}

static bool lreg_jit(struct lreg *r, const char *name, uint64_t s, uint64_t e,
		     const void *tbl)
{
	struct codectl_jit_info ji = {
		.text_start = s, .text_end = e, .unwind_head = (uintptr_t)tbl,
	};

	return lreg_add(r, name, true, NULL, &ji);
}

/*
 * Right now (no waiting: the drop happens before munmap() returns), the
 * live ones must be there as registered, the others gone: VERSION counts,
 * QUERY, and UNREGISTER gives ENOENT (which also cleans up when a
 * registration was wrongly kept).
 */
static void lreg_check(struct lreg *r, int n, const char *when)
{
	struct codectl_version v;
	struct codectl_query_info q;
	uint64_t bytes = l_bytes0;
	int i, live = 0, rc;
	long walk;

	for (i = 0; i < n; i++)
		if (r[i].live) {
			live++;
			bytes += r[i].charge;
		}
	rc = cc_version(g_fd, &v);
	if (EXPECT_RC(rc, 0, "VERSION %s", when))
		EXPECT(v.nr_registrations == (uint64_t)live && v.bytes == bytes,
		       "%s: VERSION says %llu registrations of %llu bytes, expected %d of %llu",
		       when, ULL(v.nr_registrations), ULL(v.bytes), live, ULL(bytes));
	walk = cc_walk_count(g_fd);
	EXPECT(walk == live, "%s: QUERY walk shows %ld registrations, expected %d",
	       when, walk, live);
	for (i = 0; i < n; i++) {
		rc = cc_query_at(g_fd, r[i].s, &q);
		if (r[i].live) {
			EXPECT(!rc && q.text_start == r[i].s && q.text_end == r[i].e,
			       "%s: %s [%#llx,%#llx) is gone (QUERY: %s [%#llx,%#llx))",
			       when, r[i].name, ULL(r[i].s), ULL(r[i].e), ename(rc),
			       ULL(q.text_start), ULL(q.text_end));
			continue;
		}
		EXPECT(rc || q.text_start > r[i].s,
		       "%s: %s [%#llx,%#llx) is still registered (QUERY answers [%#llx,%#llx))",
		       when, r[i].name, ULL(r[i].s), ULL(r[i].e),
		       ULL(q.text_start), ULL(q.text_end));
		EXPECT_RC(cc_unregister(g_fd, r[i].s, r[i].e), ENOENT,
			  "%s: UNREGISTER %s", when, r[i].name);
	}
}

static void lreg_cleanup(struct lreg *r, int n)
{
	int i;

	for (i = 0; i < n; i++)
		if (r[i].live)
			cc_unregister(g_fd, r[i].s, r[i].e);
}

/* A fresh RX mapping of code exactly at @addr (which must be free). */
static bool remap_code_at(uint64_t addr, size_t pages)
{
	void *p = mmap((void *)(uintptr_t)addr, pages * g_page,
		       PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS |
		       MAP_FIXED_NOREPLACE, -1, 0);

	if (p == MAP_FAILED || p != (void *)(uintptr_t)addr) {
		if (p != MAP_FAILED)
			munmap(p, pages * g_page);
		FAIL("mmap at %#llx: %m", ULL(addr));
		return false;
	}
	memset(p, 0xc3, pages * g_page);
	return set_prot(p, pages * g_page, PROT_READ | PROT_EXEC);
}

static bool do_munmap(void *addr, size_t len)
{
	if (munmap(addr, len)) {
		FAIL("munmap(%p, %zu): %m", addr, len);
		return false;
	}
	return true;
}

/*
 * A v2 SFrame section (one 16-byte function at @text) written at @dst,
 * which may straddle pages: the section's size, or 0.
 */
static size_t sframe_v2_at(uint8_t *dst, uint64_t text)
{
	struct sfr_obj t;
	int32_t off;
	size_t len;

	if (!sframe_host_abi() || sfr_obj_create(&t, 2))
		return 0;
	len = t.sframe_end - t.sframe;
	memcpy(dst, (void *)(uintptr_t)t.sframe, len);
	sfr_obj_destroy(&t);
	/* v2 without PCREL: the function start is relative to the section. */
	off = (int32_t)(text - (uintptr_t)dst);
	memcpy(dst + SFRAME_HDR_SIZE, &off, sizeof(off));
	return len;
}

/*
 * Code page, then two pages whose boundary the SFrame section straddles,
 * then one more page: [0] RX, [1] [2] [3] R.
 */
struct straddle {
	uint8_t *base;
	uint64_t text, text_end, sf, sf_end;
};

static bool straddle_create(struct straddle *st)
{
	uint8_t *sf;
	size_t len;

	memset(st, 0, sizeof(*st));
	st->base = map_pages(4, PROT_READ | PROT_WRITE);
	if (!st->base)
		return false;
	memset(st->base, 0xc3, g_page);
	sf = st->base + 2 * g_page - 16;
	len = sframe_v2_at(sf, (uintptr_t)st->base);
	if (!len) {
		unmap_pages(st->base, 4);
		st->base = NULL;
		return false;
	}
	st->text = (uintptr_t)st->base;
	st->text_end = st->text + 0x100;
	st->sf = (uintptr_t)sf;
	st->sf_end = st->sf + len;
	return set_prot(st->base, g_page, PROT_READ | PROT_EXEC) &&
	       set_prot(st->base + g_page, 3 * g_page, PROT_READ);
}

/*
 * A JIT table whose header starts page 0 of a 3-page mapping and whose
 * reserved area ends in page 1; page 2 is beyond it.
 */
static struct codectl_jit_unwind_table *straddle_table(void)
{
	struct codectl_jit_unwind_table *t = map_pages(3, PROT_READ | PROT_WRITE);
	uint32_t nr = (g_page + 256) / 24;

	if (!t)
		return NULL;
	jit_table_init(t, 24, 24, nr, 4);
	if (sizeof(*t) + (uint64_t)nr * 24 <= g_page ||
	    sizeof(*t) + (uint64_t)nr * 24 > 2 * g_page - 8) {
		FAIL("test setup: table layout");
		unmap_pages(t, 3);
		return NULL;
	}
	return t;
}

TEST(munmap_text)
{
	struct lreg r[4];
	struct sfr_obj so = { 0 };
	struct codectl_jit_unwind_table *tbl = NULL;
	uint8_t *code = NULL;
	uint64_t c;
	int n = 0;

	lreg_begin();
	code = map_code(4);
	tbl = map_pages(1, PROT_READ | PROT_WRITE);
	REQUIRE(code && tbl, "mmap");
	jit_table_init(tbl, 24, 24, 8, 2);
	c = (uintptr_t)code;
	REQUIRE(lreg_elf(&r[n++], "/munmap/elf-page0.so", c + 0x100, c + 0x200, 0, 0), "(see above)");
	REQUIRE(lreg_jit(&r[n++], "JIT on page 1", c + g_page + 0x10,
			 c + g_page + 0x100, tbl), "(see above)");
	REQUIRE(lreg_elf(&r[n++], "/munmap/elf-page2.so", c + 2 * g_page + 0x40,
			 c + 2 * g_page + 0x80, 0, 0), "(see above)");
	if (sframe_host_abi()) {
		REQUIRE(!sfr_obj_create(&so, 1), "SFrame object");
		REQUIRE(lreg_elf(&r[n++], "/munmap/sframe-object.so", so.text,
				 so.text_end, so.sframe, so.sframe_end), "(see above)");
	}
	lreg_check(r, n, "after registering");

	do_munmap(code, g_page);
	r[0].live = false;
	lreg_check(r, n, "after munmap of page 0 (an ELF text)");
	do_munmap(code + g_page, g_page);
	r[1].live = false;
	lreg_check(r, n, "after munmap of page 1 (a JIT text)");
	if (so.base) {
		do_munmap(so.base, g_page);
		r[3].live = false;
		lreg_check(r, n, "after munmap of an SFrame object's text");
	}

	/* New code at the same place is not registered, and can be. */
	REQUIRE(remap_code_at(c, 1), "(see above)");
	lreg_check(r, n, "after mapping new code at page 0");
	REQUIRE(lreg_elf(&r[0], "/munmap/elf-page0-again.so", c + 0x100, c + 0x200,
			 0, 0), "registering the new code");
	lreg_check(r, n, "after registering the new code");
out:
	lreg_cleanup(r, n);
	unmap_pages(code, 4);
	unmap_pages(tbl, 1);
	if (so.base)
		unmap_pages(so.base, 2);
	return T_PASS;
}

TEST(munmap_sframe)
{
	struct lreg r[3];
	struct sfr_obj so = { 0 };
	struct straddle a = { 0 }, b = { 0 };
	int n = 0;

	if (!sframe_host_abi())
		SKIP("no SFrame ABI for this machine");
	lreg_begin();
	REQUIRE(!sfr_obj_create(&so, 3), "SFrame object");
	REQUIRE(straddle_create(&a) && straddle_create(&b), "straddling SFrame");
	REQUIRE(lreg_elf(&r[n++], "/munmap/sframe-v3.so", so.text, so.text_end,
			 so.sframe, so.sframe_end), "(see above)");
	REQUIRE(lreg_elf(&r[n++], "/munmap/straddle-a.so", a.text, a.text_end,
			 a.sf, a.sf_end), "(see above)");
	REQUIRE(lreg_elf(&r[n++], "/munmap/straddle-b.so", b.text, b.text_end,
			 b.sf, b.sf_end), "(see above)");
	lreg_check(r, n, "after registering");

	do_munmap(so.base + g_page, g_page);
	r[0].live = false;
	lreg_check(r, n, "after munmap of the SFrame page (text still mapped)");
	/* Only the section's last bytes are on page 2. */
	do_munmap(a.base + 2 * g_page, g_page);
	r[1].live = false;
	lreg_check(r, n, "after munmap of the page with the section's tail");
	/* Only its first 16 bytes are on page 1. */
	do_munmap(b.base + g_page, g_page);
	r[2].live = false;
	lreg_check(r, n, "after munmap of the page with the section's head");
out:
	lreg_cleanup(r, n);
	if (so.base)
		unmap_pages(so.base, 2);
	unmap_pages(a.base, 4);
	unmap_pages(b.base, 4);
	return T_PASS;
}

TEST(munmap_jit_table)
{
	struct codectl_jit_unwind_table *t[3] = { NULL, NULL, NULL };
	struct lreg r[3];
	uint8_t *code = NULL;
	uint64_t c;
	int n = 0, i;

	lreg_begin();
	code = map_code(1);
	REQUIRE(code, "mmap");
	c = (uintptr_t)code;
	for (i = 0; i < 3; i++) {
		t[i] = straddle_table();
		REQUIRE(t[i], "table");
	}
	/* t[2]: read-only, header straddling pages 0 and 1. */
	{
		uint8_t *p = (uint8_t *)t[2] + g_page - 16;

		jit_table_init((void *)p, 24, 24, 16, 4);
		REQUIRE(set_prot(t[2], 3 * g_page, PROT_READ), "(see above)");
		REQUIRE(lreg_jit(&r[n++], "JIT, header straddling", c, c + 0x100, p), "(see above)");
	}
	REQUIRE(lreg_jit(&r[n++], "JIT, table header on page 0", c + 0x100, c + 0x200,
			 t[0]), "(see above)");
	REQUIRE(lreg_jit(&r[n++], "JIT, reserved area into page 1", c + 0x200,
			 c + 0x300, t[1]), "(see above)");
	lreg_check(r, n, "after registering");

	do_munmap(t[0], g_page);
	r[1].live = false;
	lreg_check(r, n, "after munmap of the table header's page");
	do_munmap((uint8_t *)t[1] + g_page, g_page);
	r[2].live = false;
	lreg_check(r, n, "after munmap of the page with the end of the reserved area");
	do_munmap((uint8_t *)t[2] + g_page, g_page);
	r[0].live = false;
	lreg_check(r, n, "after munmap of the page with the header's second half");
out:
	lreg_cleanup(r, n);
	unmap_pages(code, 1);
	for (i = 0; i < 3; i++)
		unmap_pages(t[i], 3);
	return T_PASS;
}

TEST(munmap_partial)
{
	struct codectl_jit_unwind_table *tbl = NULL;
	struct lreg r[6];
	uint8_t *code = NULL;
	uint64_t c, p;
	int n = 0;

	lreg_begin();
	code = map_code(6);
	tbl = map_pages(1, PROT_READ | PROT_WRITE);
	REQUIRE(code && tbl, "mmap");
	jit_table_init(tbl, 24, 24, 8, 2);
	c = (uintptr_t)code;
	p = g_page;
	REQUIRE(lreg_elf(&r[n++], "page 0 only", c + 0x100, c + 0x200, 0, 0), "(see above)");
	REQUIRE(lreg_elf(&r[n++], "pages 0-2", c + 0x800, c + 2 * p + 0x10, 0, 0), "(see above)");
	REQUIRE(lreg_jit(&r[n++], "JIT pages 3-4", c + 3 * p, c + 4 * p + 8, tbl), "(see above)");
	REQUIRE(lreg_elf(&r[n++], "page 5 a", c + 5 * p + 0x100, c + 5 * p + 0x200, 0, 0), "(see above)");
	REQUIRE(lreg_jit(&r[n++], "page 5 b", c + 5 * p + 0x300, c + 5 * p + 0x400, tbl), "(see above)");
	REQUIRE(lreg_elf(&r[n++], "page 4 tail", c + 4 * p + 0x100, c + 4 * p + 0x200, 0, 0), "(see above)");
	lreg_check(r, n, "after registering");

	do_munmap(code + p, p);
	r[1].live = false;
	lreg_check(r, n, "after munmap of the middle page of a 3-page range");
	do_munmap(code + 4 * p, p);
	r[2].live = false;	/* its last 8 bytes were there */
	r[5].live = false;
	lreg_check(r, n, "after munmap of a page holding the last 8 bytes of a range");
	/* One call covering a hole and two registrations. */
	do_munmap(code + 4 * p, 2 * p);
	r[3].live = r[4].live = false;
	lreg_check(r, n, "after munmap of a range with a hole and two registrations");
out:
	lreg_cleanup(r, n);
	unmap_pages(code, 6);
	unmap_pages(tbl, 1);
	return T_PASS;
}

/* A PROT_NONE reservation of @pages pages, for mremap() to land on. */
static void *reserve(size_t pages)
{
	return map_pages(pages, PROT_NONE);
}

static bool do_mremap_fixed(void *old, size_t len, void *dst)
{
	void *p = mremap(old, len, len, MREMAP_MAYMOVE | MREMAP_FIXED, dst);

	if (p != dst) {
		FAIL("mremap(%p, %zu -> %p): %m", old, len, dst);
		return false;
	}
	return true;
}

TEST(mremap_move)
{
	struct codectl_jit_unwind_table *tbl = NULL;
	struct lreg r[5];
	struct sfr_obj so = { 0 };
	uint8_t *code = NULL, *dst = NULL, *dst2 = NULL, *dst3 = NULL;
	uint8_t *g = NULL, *moved = NULL;
	uint64_t c;
	int n = 0;

	lreg_begin();
	code = map_code(2);
	tbl = map_pages(1, PROT_READ | PROT_WRITE);
	dst = reserve(2);
	dst2 = reserve(1);
	dst3 = reserve(1);
	REQUIRE(code && tbl && dst && dst2 && dst3, "mmap");
	jit_table_init(tbl, 24, 24, 8, 2);
	c = (uintptr_t)code;
	REQUIRE(lreg_elf(&r[n++], "ELF page 0", c + 0x100, c + 0x200, 0, 0), "(see above)");
	REQUIRE(lreg_jit(&r[n++], "JIT page 1", c + g_page + 0x10, c + g_page + 0x20,
			 tbl), "(see above)");
	if (sframe_host_abi()) {
		REQUIRE(!sfr_obj_create(&so, 2), "SFrame object");
		REQUIRE(lreg_elf(&r[n++], "ELF with SFrame", so.text, so.text_end,
				 so.sframe, so.sframe_end), "(see above)");
	}
	lreg_check(r, n, "after registering");

	if (do_mremap_fixed(code, 2 * g_page, dst)) {
		code = NULL;
		r[0].live = r[1].live = false;
		lreg_check(r, n, "after mremap moved the text");
		/* The moved code is registered neither here nor there. */
		EXPECT(!registered((uintptr_t)dst + 0x100, (uintptr_t)dst + 0x200),
		       "the moved range is registered at its new address");
	}
	if (so.base && do_mremap_fixed(so.base + g_page, g_page, dst2)) {
		r[2].live = false;
		lreg_check(r, n, "after mremap moved the SFrame page");
	}
	/* The table moves: the JIT registration that uses it goes. */
	REQUIRE(lreg_jit(&r[n++], "JIT with a table that moves", (uintptr_t)dst + 0x800,
			 (uintptr_t)dst + 0x900, tbl), "(see above)");
	if (do_mremap_fixed(tbl, g_page, dst3)) {
		tbl = NULL;
		r[n - 1].live = false;
		lreg_check(r, n, "after mremap moved the JIT table");
	}
	/* Growing where it cannot grow in place: the kernel moves it. */
	g = map_pages(2, PROT_READ | PROT_WRITE);
	REQUIRE(g, "mmap");
	memset(g, 0xc3, g_page);
	REQUIRE(set_prot(g, g_page, PROT_READ | PROT_EXEC), "(see above)");
	REQUIRE(lreg_elf(&r[n++], "ELF in a mapping that grows", (uintptr_t)g + 0x10,
			 (uintptr_t)g + 0x20, 0, 0), "(see above)");
	moved = mremap(g, g_page, 4 * g_page, MREMAP_MAYMOVE);
	REQUIRE(moved != MAP_FAILED, "mremap grow: %m");
	if (moved == g) {
		printf("# mremap grew the mapping in place: not a move\n");
		moved = NULL;
	} else {
		r[n - 1].live = false;
		lreg_check(r, n, "after mremap grew the text and moved it");
		unmap_pages(moved, 4);
	}
out:
	lreg_cleanup(r, n);
	unmap_pages(code, 2);
	unmap_pages(tbl, 1);
	unmap_pages(dst, 2);
	unmap_pages(dst2, 1);
	unmap_pages(dst3, 1);
	if (so.base)
		unmap_pages(so.base, 2);
	if (!moved || moved == g)
		unmap_pages(g, 2);
	else
		unmap_pages(g + g_page, 1);
	return T_PASS;
}

TEST(mremap_shrink)
{
	struct codectl_jit_unwind_table *t = NULL;
	struct lreg r[5];
	uint8_t *code = NULL;
	uint64_t c, p = g_page;
	size_t cpages = 4, tpages = 3;
	int n = 0;

	lreg_begin();
	code = map_code(4);
	t = straddle_table();
	REQUIRE(code && t, "mmap");
	c = (uintptr_t)code;
	REQUIRE(lreg_elf(&r[n++], "page 0", c + 0x100, c + 0x200, 0, 0), "(see above)");
	REQUIRE(lreg_elf(&r[n++], "page 1", c + p + 0x100, c + p + 0x200, 0, 0), "(see above)");
	REQUIRE(lreg_elf(&r[n++], "pages 1-2", c + 2 * p - 0x10, c + 2 * p + 0x10, 0, 0), "(see above)");
	REQUIRE(lreg_jit(&r[n++], "JIT, table shrunk", c + 0x300, c + 0x400, t), "(see above)");
	lreg_check(r, n, "after registering");

	/* 4 -> 3 pages: nothing registered on page 3. */
	REQUIRE(mremap(code, 4 * p, 3 * p, 0) == code, "mremap shrink: %m");
	cpages = 3;
	lreg_check(r, n, "after shrinking away an unregistered page");
	REQUIRE(mremap(code, 3 * p, p, 0) == code, "mremap shrink: %m");
	cpages = 1;
	r[1].live = r[2].live = false;
	lreg_check(r, n, "after shrinking the text mapping to its first page");
	/* The table's reserved area ends on page 1 of its mapping. */
	REQUIRE(mremap(t, 3 * p, p, 0) == (void *)t, "mremap shrink: %m");
	tpages = 1;
	r[3].live = false;
	lreg_check(r, n, "after shrinking the table's mapping into its reserved area");
out:
	lreg_cleanup(r, n);
	unmap_pages(code, cpages);
	unmap_pages(t, tpages);
	return T_PASS;
}

static bool map_fixed(void *addr, size_t len, int prot)
{
	void *p = mmap(addr, len, prot, MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED,
		       -1, 0);

	if (p != addr) {
		FAIL("mmap(MAP_FIXED %p): %m", addr);
		return false;
	}
	return true;
}

TEST(map_fixed_over)
{
	struct codectl_jit_unwind_table *tbl = NULL;
	struct lreg r[4];
	struct sfr_obj so = { 0 };
	uint8_t *code = NULL;
	uint64_t c;
	int n = 0;

	lreg_begin();
	code = map_code(2);
	tbl = map_pages(1, PROT_READ | PROT_WRITE);
	REQUIRE(code && tbl, "mmap");
	jit_table_init(tbl, 24, 24, 8, 2);
	c = (uintptr_t)code;
	REQUIRE(lreg_elf(&r[n++], "ELF page 0", c + 0x100, c + 0x200, 0, 0), "(see above)");
	REQUIRE(lreg_jit(&r[n++], "JIT page 1", c + g_page + 0x10,
			 c + g_page + 0x20, tbl), "(see above)");
	if (sframe_host_abi()) {
		REQUIRE(!sfr_obj_create(&so, 3), "SFrame object");
		REQUIRE(lreg_elf(&r[n++], "ELF with SFrame", so.text, so.text_end,
				 so.sframe, so.sframe_end), "(see above)");
	}
	lreg_check(r, n, "after registering");

	/* Still executable at the same address, but other memory. */
	if (map_fixed(code, g_page, PROT_READ | PROT_EXEC)) {
		r[0].live = false;
		lreg_check(r, n, "after mmap(MAP_FIXED, PROT_EXEC) over the text");
	}
	if (so.base && map_fixed(so.base + g_page, g_page, PROT_READ)) {
		r[2].live = false;
		lreg_check(r, n, "after mmap(MAP_FIXED) over the SFrame page");
	}
	if (map_fixed(tbl, g_page, PROT_READ | PROT_WRITE)) {
		r[1].live = false;
		lreg_check(r, n, "after mmap(MAP_FIXED) over the JIT table");
	}
out:
	lreg_cleanup(r, n);
	unmap_pages(code, 2);
	unmap_pages(tbl, 1);
	if (so.base)
		unmap_pages(so.base, 2);
	return T_PASS;
}

/* Registrations for the "keeps" tests, with everything in memory. */
struct keepset {
	struct sfr_obj so;
	struct straddle st;
	struct codectl_jit_unwind_table *tbl, *tbl2;
	uint8_t *code;		/* 4 pages */
	struct snap want;
	int n;
};

static bool keepset_create(struct keepset *k)
{
	struct codectl_elf_info ei;
	struct codectl_jit_info ji;
	uint64_t c;

	memset(k, 0, sizeof(*k));
	k->code = map_code(4);
	k->tbl = straddle_table();
	k->tbl2 = map_pages(1, PROT_READ | PROT_WRITE);
	if (!k->code || !k->tbl || !k->tbl2)
		return false;
	c = (uintptr_t)k->code;
	/* A chain: the first table links to a second one. */
	jit_table_init(k->tbl2, 24, 24, 8, 8);
	k->tbl->next = (uintptr_t)k->tbl2;
	ji = (struct codectl_jit_info){ c + g_page, c + g_page + 0x100,
					(uintptr_t)k->tbl };
	if (EXPECT_RC(cc_register_jit(g_fd, &ji), 0, "REGISTER_JIT"))
		k->n++;
	ei = (struct codectl_elf_info){
		.text_start = c + g_page + 0x800, .text_end = c + 3 * g_page - 0x100,
		.pathname = (uintptr_t)"/keep/two-pages.so",
		.build_id = (uintptr_t)life_bid, .build_id_len = 8,
	};
	if (EXPECT_RC(cc_register_elf(g_fd, &ei), 0, "REGISTER_ELF"))
		k->n++;
	if (sframe_host_abi()) {
		if (sfr_obj_create(&k->so, 3) || !straddle_create(&k->st))
			return false;
		ei = (struct codectl_elf_info){
			.elf_start = (uintptr_t)k->so.base,
			.elf_end = (uintptr_t)k->so.base + 2 * g_page,
			.text_start = k->so.text, .text_end = k->so.text_end,
			.sframe_start = k->so.sframe, .sframe_end = k->so.sframe_end,
			.pathname = (uintptr_t)"/keep/sframe-v3.so",
			.debug_link_pathname = (uintptr_t)"x.debug",
			.debug_link_crc = 0xfeed,
		};
		if (EXPECT_RC(cc_register_elf(g_fd, &ei), 0, "REGISTER_ELF v3"))
			k->n++;
		ei = (struct codectl_elf_info){
			.text_start = k->st.text, .text_end = k->st.text_end,
			.sframe_start = k->st.sf, .sframe_end = k->st.sf_end,
			.pathname = (uintptr_t)"/keep/straddle.so",
		};
		if (EXPECT_RC(cc_register_elf(g_fd, &ei), 0, "REGISTER_ELF straddling"))
			k->n++;
	}
	return !t_nr_failed() &&
	       EXPECT_RC(snap_take(g_fd, &k->want), 0, "QUERY walk") &&
	       EXPECT(k->want.n == k->n, "walk shows %d of %d", k->want.n, k->n);
}

static void keepset_check(struct keepset *k, const char *when)
{
	struct snap got = { 0 };
	int rc = snap_take(g_fd, &got);

	if (EXPECT_RC(rc, 0, "QUERY walk %s", when))
		snap_cmp(&k->want, &got, when);
	EXPECT(cc_nr(g_fd) == k->n, "%s: %ld registrations, expected %d", when,
	       cc_nr(g_fd), k->n);
	snap_free(&got);
}

static void keepset_destroy(struct keepset *k)
{
	cc_unregister_all(g_fd);
	unmap_pages(k->code, 4);
	unmap_pages(k->tbl, 3);
	unmap_pages(k->tbl2, 1);
	if (k->so.base)
		unmap_pages(k->so.base, 2);
	unmap_pages(k->st.base, 4);
	snap_free(&k->want);
}

static void do_mprotect(struct keepset *k, void *a, size_t len, int prot,
			const char *what)
{
	char when[128];

	if (!set_prot(a, len, prot))
		return;
	snprintf(when, sizeof(when), "after mprotect(%s, %#x)", what, prot);
	keepset_check(k, when);
}

TEST(mprotect_keeps)
{
	const int rx = PROT_READ | PROT_EXEC, rw = PROT_READ | PROT_WRITE;
	struct keepset k;
	uint8_t *c;

	if (!keepset_create(&k))
		goto out;
	c = k.code;
	do_mprotect(&k, c, 4 * g_page, rw, "text");
	do_mprotect(&k, c, 4 * g_page, PROT_NONE, "text");
	do_mprotect(&k, c, 4 * g_page, rx, "text");
	/* Splits the mapping in the middle of the two-page registration. */
	do_mprotect(&k, c + 2 * g_page, g_page, rw | PROT_EXEC, "text page 2");
	do_mprotect(&k, c + 2 * g_page, g_page, rx, "text page 2");
	do_mprotect(&k, k.tbl, 3 * g_page, PROT_READ, "JIT table");
	do_mprotect(&k, k.tbl, 3 * g_page, PROT_NONE, "JIT table");
	do_mprotect(&k, k.tbl, 3 * g_page, rw, "JIT table");
	if (k.so.base) {
		do_mprotect(&k, k.so.base + g_page, g_page, rw, "SFrame page");
		do_mprotect(&k, k.so.base + g_page, g_page, PROT_NONE, "SFrame page");
		do_mprotect(&k, k.so.base + g_page, g_page, PROT_READ, "SFrame page");
		do_mprotect(&k, k.so.base, g_page, PROT_NONE, "SFrame object's text");
		do_mprotect(&k, k.so.base, g_page, rx, "SFrame object's text");
		do_mprotect(&k, k.st.base + 2 * g_page, g_page, PROT_NONE,
			    "tail of a straddling SFrame section");
		do_mprotect(&k, k.st.base + 2 * g_page, g_page, PROT_READ,
			    "tail of a straddling SFrame section");
	}
out:
	keepset_destroy(&k);
	return T_PASS;
}

static void do_madvise(struct keepset *k, void *a, size_t len, int advice,
		       const char *what)
{
	char when[128];

	if (madvise(a, len, advice)) {
		FAIL("madvise(%s, %d): %m", what, advice);
		return;
	}
	snprintf(when, sizeof(when), "after madvise(%s, %s)", what,
		 advice == MADV_DONTNEED ? "MADV_DONTNEED" : "MADV_FREE");
	keepset_check(k, when);
}

TEST(madvise_keeps)
{
	static const int adv[2] = { MADV_DONTNEED, MADV_FREE };
	struct keepset k;
	int i;

	if (!keepset_create(&k))
		goto out;
	for (i = 0; i < 2; i++) {
		/* Populated again in between: reading is enough. */
		volatile uint8_t sink;

		sink = k.code[0] + k.code[g_page] + k.code[2 * g_page];
		(void)sink;
		do_madvise(&k, k.code, 4 * g_page, adv[i], "text");
		do_madvise(&k, k.tbl, 3 * g_page, adv[i], "JIT table");
		do_madvise(&k, k.tbl2, g_page, adv[i], "chained JIT table");
		if (k.so.base) {
			do_madvise(&k, k.so.base + g_page, g_page, adv[i], "SFrame page");
			if (adv[i] == MADV_DONTNEED)
				do_madvise(&k, k.st.base + g_page, 2 * g_page, adv[i],
					   "straddling SFrame section");
		}
	}
out:
	keepset_destroy(&k);
	return T_PASS;
}

TEST(munmap_unrelated_keeps)
{
	struct keepset k;
	void *many[64];
	uint8_t *u;
	int i;

	if (!keepset_create(&k))
		goto out;
	/* Same mappings, outside every registered range. */
	if (do_munmap(k.code + 3 * g_page, g_page))
		keepset_check(&k, "after munmap of the page after the text");
	if (do_munmap(k.code, g_page))
		keepset_check(&k, "after munmap of the page before the text");
	if (do_munmap((uint8_t *)k.tbl + 2 * g_page, g_page))
		keepset_check(&k, "after munmap of the page after the table's reserved area");
	/* Only the first table of a chain counts. */
	if (do_munmap(k.tbl2, g_page)) {
		k.tbl2 = NULL;
		keepset_check(&k, "after munmap of the second table of the chain");
	}
	if (k.st.base && do_munmap(k.st.base + 3 * g_page, g_page))
		keepset_check(&k, "after munmap of the page after an SFrame section");
	/* Unrelated memory. */
	for (i = 0; i < 64; i++) {
		many[i] = mmap(NULL, 2 * g_page, i % 2 ? PROT_READ | PROT_EXEC :
			       PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
		if (many[i] == MAP_FAILED)
			many[i] = NULL;
	}
	for (i = 0; i < 64; i++)
		if (many[i]) {
			if (i % 3 == 0) {
				u = mremap(many[i], 2 * g_page, g_page, 0);
				(void)u;
				munmap(many[i], g_page);
			} else {
				munmap(many[i], 2 * g_page);
			}
		}
	keepset_check(&k, "after mapping and unmapping 64 unrelated regions");
out:
	keepset_destroy(&k);
	return T_PASS;
}

/*
 * REGISTER racing with munmap of the code it names, from another thread:
 * either the registration is refused (the code is gone) or the unmap
 * drops it.  A registration that outlives the munmap() covers memory that
 * is not there, and then whatever is mapped there next.
 */
struct race {
	uint8_t *volatile page;		/* the code page of the moment */
	struct codectl_jit_unwind_table *tbl;
	volatile bool stop;
	unsigned long done;		/* REGISTER calls completed (atomic) */
	unsigned long ok, efault, other;
	int other_rc;
};

static void *race_registrar(void *p)
{
	struct race *x = p;
	unsigned long i;

	for (i = 0; !x->stop; i++) {
		uint64_t c = (uintptr_t)x->page;
		int rc;

		if (i % 2) {
			rc = cc_register_range(true, c + 0x40, c + 0x80,
					       (uintptr_t)x->tbl, NULL);
		} else {
			rc = cc_register_range(false, c + 0x10, c + 0x20, 0,
					       "/race/register-vs-munmap.so");
		}
		if (!rc)
			x->ok++;
		else if (rc == -EFAULT || rc == -EEXIST)
			x->efault++;
		else
			x->other++, x->other_rc = rc;
		__atomic_add_fetch(&x->done, 1, __ATOMIC_SEQ_CST);
	}
	return NULL;
}

TEST(register_munmap_race)
{
	static struct race x;
	struct codectl_query_info q;
	unsigned long rounds = 0, stale = 0, d0;
	struct timespec t0, t;
	pthread_t th;
	bool started = false;
	int spin, rc;

	memset(&x, 0, sizeof(x));
	x.page = map_code(1);
	x.tbl = map_pages(1, PROT_READ | PROT_WRITE);
	REQUIRE(x.page && x.tbl, "mmap");
	jit_table_init(x.tbl, 24, 24, 8, 2);
	REQUIRE(!pthread_create(&th, NULL, race_registrar, &x), "pthread_create");
	started = true;
	clock_gettime(CLOCK_MONOTONIC, &t0);
	for (;;) {
		uint8_t *pg = x.page;
		uint64_t c = (uintptr_t)pg;

		clock_gettime(CLOCK_MONOTONIC, &t);
		if ((t.tv_sec - t0.tv_sec) * 1000 + (t.tv_nsec - t0.tv_nsec) / 1000000 > 2000 ||
		    rounds >= 20000)
			break;
		/* Land the munmap anywhere in a REGISTER call. */
		for (spin = rounds * 7919 % 2000; spin > 0; spin--)
			__asm__ volatile("" ::: "memory");
		if (!do_munmap(pg, g_page))
			break;
		rounds++;
		/* Wait out the call in flight, and one that began after. */
		d0 = __atomic_load_n(&x.done, __ATOMIC_SEQ_CST);
		while (__atomic_load_n(&x.done, __ATOMIC_SEQ_CST) < d0 + 2)
			sched_yield();
		while (!(rc = cc_query_at(g_fd, c, &q)) && q.text_start < c + g_page) {
			if (stale++ < 3)
				FAIL("round %lu: [%#llx,%#llx) (%s) registered after munmap() of its code returned",
				     rounds, ULL(q.text_start), ULL(q.text_end),
				     q.kind == CODECTL_KIND_JIT ? "JIT" : "ELF");
			cc_unregister(g_fd, q.text_start, q.text_end);
		}
		/* New code in the same place, unregistered. */
		if (!remap_code_at(c, 1)) {
			x.page = map_code(1);
			REQUIRE(x.page, "mmap");
		}
		cc_unregister(g_fd, c + 0x10, c + 0x20);
		cc_unregister(g_fd, c + 0x40, c + 0x80);
	}
	printf("# %lu munmaps; REGISTER: %lu succeeded, %lu EFAULT/EEXIST, %lu other; %lu stale\n",
	       rounds, x.ok, x.efault, x.other, stale);
	EXPECT(!stale, "%lu of %lu registrations racing with munmap() outlived it",
	       stale, rounds);
	EXPECT(!x.other, "REGISTER racing with munmap: %lu answers other than success, EFAULT, EEXIST (e.g. %s)",
	       x.other, ename(x.other_rc));
	EXPECT(x.ok > 0, "test setup: no registration succeeded");
out:
	x.stop = true;
	if (started)
		pthread_join(th, NULL);
	cc_unregister_all(g_fd);
	unmap_pages(x.page, 1);
	unmap_pages(x.tbl, 1);
	return T_PASS;
}

/*
 * Every way of dropping: UNREGISTER says ENOENT afterwards, the charges
 * and the global counters go back, the range can be registered anew.
 */
TEST(unregister_after_drop_enoent)
{
	static const char *const kinds[] = {
		"munmap of the text", "munmap of the SFrame page",
		"munmap of the JIT table", "mremap moving the text away",
		"mremap shrinking the text", "MAP_FIXED over the text",
	};
	struct lstats lst;
	struct lreg r;
	int k, st;
	const char *const ign[] = { "mms", "sets", NULL };

	st = lstats_begin(&lst);
	if (st == T_FAIL)
		return T_FAIL;
	lreg_begin();
	for (k = 0; k < 6; k++) {
		struct codectl_jit_unwind_table *tbl = NULL;
		struct sfr_obj so = { 0 };
		uint8_t *code = NULL, *dst = NULL;
		long long drops0 = lstats_now(&lst, "unmap_drops"), drops;
		uint64_t s, e;
		char when[128];
		bool ok;

		memset(&r, 0, sizeof(r));
		if (k == 1) {
			if (!sframe_host_abi() || sfr_obj_create(&so, 2))
				continue;
			code = so.base;
			ok = lreg_elf(&r, "/drop/sframe.so", so.text, so.text_end,
				      so.sframe, so.sframe_end);
		} else if (k == 2) {
			code = map_code(2);
			tbl = map_pages(1, PROT_READ | PROT_WRITE);
			if (!code || !tbl)
				goto next;
			jit_table_init(tbl, 24, 24, 8, 2);
			ok = lreg_jit(&r, "JIT", (uintptr_t)code + 0x100,
				      (uintptr_t)code + 0x200, tbl);
		} else {
			code = map_code(2);
			if (!code)
				goto next;
			ok = lreg_elf(&r, "/drop/text.so", (uintptr_t)code + 0x100,
				      (uintptr_t)code + g_page + 0x100, 0, 0);
		}
		if (!ok)
			goto next;
		s = r.s;
		e = r.e;
		switch (k) {
		case 0:
			ok = do_munmap(code, g_page);
			break;
		case 1:
			ok = do_munmap(code + g_page, g_page);
			break;
		case 2:
			ok = do_munmap(tbl, g_page);
			tbl = NULL;
			break;
		case 3:
			dst = reserve(2);
			ok = dst && do_mremap_fixed(code, 2 * g_page, dst);
			if (ok)
				code = NULL;
			break;
		case 4:
			ok = mremap(code, 2 * g_page, g_page, 0) == code;
			if (!ok)
				FAIL("mremap shrink: %m");
			break;
		case 5:
			ok = map_fixed(code, 2 * g_page, PROT_READ | PROT_EXEC);
			break;
		}
		if (!ok)
			goto next;
		r.live = false;
		drops = lstats_now(&lst, "unmap_drops");
		if (drops >= 0 && drops0 >= 0)
			EXPECT(drops > drops0, "stats unmap_drops %lld after %s, %lld before",
			       drops, kinds[k], drops0);
		snprintf(when, sizeof(when), "after %s", kinds[k]);
		/* lreg_check() expects UNREGISTER to say ENOENT. */
		lreg_check(&r, 1, when);
		EXPECT_RC(cc_unregister(g_fd, s, e), ENOENT, "second UNREGISTER %s", when);
		snprintf(when, sizeof(when), "after %s (debugfs)", kinds[k]);
		lstats_back(&lst, when, ign);
		/* The same range, mapped again, can be registered again. */
		if (k != 1 && k != 2) {
			unmap_pages(code, 2);
			code = NULL;
			if (remap_code_at(s & ~(uint64_t)(g_page - 1), 2)) {
				code = (uint8_t *)(uintptr_t)(s & ~(uint64_t)(g_page - 1));
				if (lreg_elf(&r, "/drop/again.so", s, e, 0, 0)) {
					EXPECT_RC(cc_unregister(g_fd, s, e), 0,
						  "UNREGISTER of the new registration %s",
						  when);
				}
			}
		}
next:
		if (k == 1) {
			if (so.base)
				unmap_pages(so.base, 2);
		} else {
			unmap_pages(code, 2);
		}
		unmap_pages(tbl, 1);
		unmap_pages(dst, 2);
	}
	return T_PASS;
}
