// SPDX-License-Identifier: GPL-2.0
/*
 * codectl VM integration suite: file descriptors, threads, processes,
 * exit and exec.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#include "codectl-test.h"

#define ULL(x) ((unsigned long long)(x))

/* ---- fd independence -------------------------------------------------- */

struct thr_reg {
	uint64_t s, e;
	int rc;
	bool unreg;
};

static void *thr_register(void *p)
{
	struct thr_reg *r = p;
	struct codectl_elf_info ei = { .text_start = r->s, .text_end = r->e };

	r->rc = r->unreg ? cc_unregister(g_fd, r->s, r->e)
			 : cc_register_elf(g_fd, &ei);
	return NULL;
}

TEST(fd_independence)
{
	struct codectl_query_info q;
	struct codectl_elf_info ei;
	struct thr_reg tr;
	pthread_t th;
	uint8_t *code;
	uint64_t c;
	int fd1 = -1, fd2 = -1, fd3 = -1, rc;

	code = map_code(1);
	if (!code)
		return T_FAIL;
	c = (uintptr_t)code;

	/* Registered through fd1, seen through fd2, survives close(fd1). */
	fd1 = cc_open();
	fd2 = cc_open();
	REQUIRE(fd1 >= 0 && fd2 >= 0, "open: %s", ename(fd1 < 0 ? fd1 : fd2));
	ei = (struct codectl_elf_info){
		.text_start = c + 0x100, .text_end = c + 0x200,
		.pathname = (uintptr_t)"/fd/one.so",
	};
	REQUIRE_RC(cc_register_elf(fd1, &ei), 0, "REGISTER_ELF via fd1");
	rc = cc_query_at(fd2, 0, &q);
	if (EXPECT_RC(rc, 0, "QUERY via a second fd"))
		EXPECT(q.text_start == c + 0x100 && q.text_end == c + 0x200,
		       "second fd sees [%#llx,%#llx)", ULL(q.text_start),
		       ULL(q.text_end));
	close(fd1);
	fd1 = -1;
	rc = cc_query_at(fd2, 0, &q);
	if (EXPECT_RC(rc, 0, "QUERY after closing the registering fd"))
		EXPECT(q.text_start == c + 0x100 && q.pathname_len == 11,
		       "registration changed after close: start %#llx pathname_len %u",
		       ULL(q.text_start), q.pathname_len);
	EXPECT(cc_nr(fd2) == 1, "nr_registrations %ld after close, expected 1",
	       cc_nr(fd2));
	/* A dup'ed fd works the same; closing every fd keeps it too. */
	fd3 = dup(fd2);
	REQUIRE(fd3 >= 0, "dup: %m");
	close(fd2);
	fd2 = -1;
	EXPECT_RC(cc_query_at(fd3, 0, &q), 0, "QUERY via a dup'ed fd");
	close(fd3);
	fd3 = -1;
	close(g_fd);
	g_fd = -1;
	fd1 = cc_open();
	REQUIRE(fd1 >= 0, "reopen: %s", ename(fd1));
	g_fd = fd1;	/* the harness checks and closes it */
	fd1 = -1;
	rc = cc_query_at(g_fd, 0, &q);
	if (EXPECT_RC(rc, 0, "QUERY after closing every fd and reopening"))
		EXPECT(q.text_start == c + 0x100, "reopened fd sees %#llx",
		       ULL(q.text_start));
	EXPECT_RC(cc_unregister(g_fd, c + 0x100, c + 0x200), 0,
		  "UNREGISTER via a new fd");

	/* A thread's registration outlives the thread (same mm). */
	tr = (struct thr_reg){ .s = c + 0x300, .e = c + 0x380 };
	REQUIRE(!pthread_create(&th, NULL, thr_register, &tr), "pthread_create");
	pthread_join(th, NULL);
	REQUIRE_RC(tr.rc, 0, "REGISTER_ELF from a thread");
	rc = cc_query_at(g_fd, 0, &q);
	if (EXPECT_RC(rc, 0, "QUERY after the registering thread exited"))
		EXPECT(q.text_start == tr.s && q.text_end == tr.e,
		       "thread's registration: [%#llx,%#llx)", ULL(q.text_start),
		       ULL(q.text_end));
	tr.unreg = true;
	REQUIRE(!pthread_create(&th, NULL, thr_register, &tr), "pthread_create");
	pthread_join(th, NULL);
	EXPECT_RC(tr.rc, 0, "UNREGISTER from another thread");
	EXPECT_RC(cc_query_at(g_fd, 0, &q), ENOENT, "QUERY after UNREGISTER");
out:
	if (fd1 >= 0)
		close(fd1);
	if (fd2 >= 0)
		close(fd2);
	if (fd3 >= 0)
		close(fd3);
	if (g_fd < 0)
		g_fd = cc_open();
	cc_unregister(g_fd, c + 0x100, c + 0x200);
	unmap_pages(code, 1);
	return T_PASS;
}

/* ---- fork ------------------------------------------------------------- */

struct fork_iso {
	uint64_t r1s, r1e, r2s, r2e;
};

static int fork_iso_child(void *p)
{
	struct fork_iso *f = p;
	struct codectl_elf_info ei = {
		.text_start = f->r2s, .text_end = f->r2e,
		.pathname = (uintptr_t)"/child/r2.so",
	};
	struct codectl_query_info q;
	int rc;

	/* The inherited fd acts on the child's own address space. */
	rc = cc_register_elf(g_fd, &ei);
	if (EXPECT_RC(rc, 0, "child: REGISTER_ELF via the inherited fd")) {
		rc = cc_query_at(g_fd, f->r2s, &q);
		if (EXPECT_RC(rc, 0, "child: QUERY its registration"))
			EXPECT(q.text_start == f->r2s && q.text_end == f->r2e,
			       "child: QUERY answered [%#llx,%#llx)",
			       ULL(q.text_start), ULL(q.text_end));
	}
	/* Whatever this does in the child, the parent must not notice. */
	cc_unregister(g_fd, f->r1s, f->r1e);
	return 0;
}

TEST(fork_isolation)
{
	struct codectl_query_info q;
	struct codectl_elf_info ei;
	struct fork_iso f;
	char pbuf[64] = "";
	uint8_t *code;
	pid_t pid;
	int rc;

	code = map_code(1);
	if (!code)
		return T_FAIL;
	f = (struct fork_iso){
		(uintptr_t)code + 0x100, (uintptr_t)code + 0x200,
		(uintptr_t)code + 0x400, (uintptr_t)code + 0x500,
	};
	ei = (struct codectl_elf_info){
		.text_start = f.r1s, .text_end = f.r1e,
		.pathname = (uintptr_t)"/parent/r1.so",
	};
	REQUIRE_RC(cc_register_elf(g_fd, &ei), 0, "REGISTER_ELF");
	pid = t_fork_child(fork_iso_child, &f);
	t_wait_child(pid, 0, "child");
	memset(&q, 0, sizeof(q));
	q.pathname = (uintptr_t)pbuf;
	q.pathname_len = sizeof(pbuf);
	rc = cc_query(g_fd, &q);
	if (EXPECT_RC(rc, 0, "parent: QUERY after the child exited"))
		EXPECT(q.text_start == f.r1s && q.text_end == f.r1e &&
		       !strcmp(pbuf, "/parent/r1.so"),
		       "parent's registration changed: [%#llx,%#llx) '%s'",
		       ULL(q.text_start), ULL(q.text_end), pbuf);
	EXPECT_RC(cc_query_at(g_fd, f.r1e, &q), ENOENT,
		  "parent: QUERY past its registration (the child's must not show)");
	EXPECT(cc_nr(g_fd) == 1, "parent: nr_registrations %ld, expected 1",
	       cc_nr(g_fd));
	EXPECT_RC(cc_unregister(g_fd, f.r1s, f.r1e), 0, "UNREGISTER");
out:
	unmap_pages(code, 1);
	return T_PASS;
}

/* ---- threads ---------------------------------------------------------- */

#define NTHREADS 16
#define PER_THREAD 200
#define SLOT 64		/* bytes of code per range slot */
#define RLEN 48		/* bytes registered per slot */

struct conc {
	uint64_t base;
	int batch;
	uint64_t tbl;
	pthread_barrier_t bar;
	/* same-range race */
	int rounds;
	uint64_t r;
	int rc_reg[NTHREADS], rc_unreg[NTHREADS];
};

struct conc_arg {
	struct conc *c;
	int t;
};

static int reg_range(int t, int i, uint64_t s, uint64_t e, uint64_t tbl)
{
	char path[64];

	snprintf(path, sizeof(path), "/thread/%02d/%03d.so", t, i);
	return cc_register_range(i % 2, s, e, tbl, path);
}

/* A full QUERY walk must see sorted, non-overlapping registrations. */
static bool walk_sane(int t)
{
	struct codectl_query_info q;
	uint64_t addr = 0, prev_end = 0;
	int n = 0, rc;

	while (!(rc = cc_query_at(g_fd, addr, &q))) {
		if (q.text_start >= q.text_end || q.text_start < prev_end ||
		    q.text_end <= addr) {
			FAIL("thread %d: walk step %d after %#llx returned [%#llx,%#llx)",
			     t, n, ULL(addr), ULL(q.text_start), ULL(q.text_end));
			return false;
		}
		prev_end = addr = q.text_end;
		if (++n > NTHREADS * PER_THREAD + 16) {
			FAIL("thread %d: walk does not end", t);
			return false;
		}
	}
	return EXPECT_RC(rc, ENOENT, "thread %d: end of walk", t);
}

static void *conc_distinct_thread(void *p)
{
	struct conc_arg *a = p;
	struct conc *c = a->c;
	struct codectl_query_info q;
	char pbuf[64], want[64];
	int t = a->t, i, k, rc;

	pthread_barrier_wait(&c->bar);
	for (i = 0; i < PER_THREAD; i += c->batch) {
		int n = PER_THREAD - i < c->batch ? PER_THREAD - i : c->batch;

		for (k = i; k < i + n; k++) {
			uint64_t s = c->base + (uint64_t)(t * PER_THREAD + k) * SLOT;

			rc = reg_range(t, k, s, s + RLEN, c->tbl);
			if (!EXPECT_RC(rc, 0, "thread %d: register range %d", t, k))
				return NULL;
		}
		for (k = i; k < i + n; k++) {
			uint64_t s = c->base + (uint64_t)(t * PER_THREAD + k) * SLOT;

			memset(&q, 0, sizeof(q));
			q.addr = s;
			q.pathname = (uintptr_t)pbuf;
			q.pathname_len = sizeof(pbuf);
			rc = cc_query(g_fd, &q);
			if (!EXPECT_RC(rc, 0, "thread %d: QUERY range %d", t, k))
				return NULL;
			snprintf(want, sizeof(want), "/thread/%02d/%03d.so", t, k);
			if (q.text_start != s || q.text_end != s + RLEN ||
			    q.kind != (k % 2 ? CODECTL_KIND_JIT : CODECTL_KIND_ELF) ||
			    (k % 2 ? q.unwind_head != c->tbl :
				     q.pathname_len != strlen(want) + 1 ||
				     strcmp(pbuf, want))) {
				FAIL("thread %d: range %d came back as [%#llx,%#llx) kind %u '%.40s'",
				     t, k, ULL(q.text_start), ULL(q.text_end), q.kind,
				     k % 2 ? "" : pbuf);
				return NULL;
			}
		}
		if ((i / c->batch) % 4 == 0 && !walk_sane(t))
			return NULL;
		for (k = i; k < i + n; k++) {
			uint64_t s = c->base + (uint64_t)(t * PER_THREAD + k) * SLOT;

			rc = cc_unregister(g_fd, s, s + RLEN);
			if (!EXPECT_RC(rc, 0, "thread %d: UNREGISTER range %d", t, k))
				return NULL;
			rc = cc_query_at(g_fd, s, &q);
			if (!rc && q.text_start == s) {
				FAIL("thread %d: range %d still found after UNREGISTER", t, k);
				return NULL;
			}
		}
	}
	return NULL;
}

static int run_threads(struct conc *c, void *(*fn)(void *))
{
	struct conc_arg args[NTHREADS];
	pthread_t th[NTHREADS];
	int t, started = 0;

	pthread_barrier_init(&c->bar, NULL, NTHREADS);
	for (t = 0; t < NTHREADS; t++) {
		args[t] = (struct conc_arg){ c, t };
		if (pthread_create(&th[t], NULL, fn, &args[t])) {
			FAIL("pthread_create %d", t);
			break;
		}
		started++;
	}
	if (started < NTHREADS) {
		/* Cannot release the barrier safely: give up on this process. */
		fflush(stdout);
		_exit(T_FAIL);
	}
	for (t = 0; t < NTHREADS; t++)
		pthread_join(th[t], NULL);
	pthread_barrier_destroy(&c->bar);
	return 0;
}

TEST(concurrent_distinct)
{
	struct codectl_jit_unwind_table *tbl = NULL;
	struct codectl_version v0, v1;
	struct codectl_query_info q;
	static struct conc c;
	size_t pages = (NTHREADS * PER_THREAD * SLOT + g_page - 1) / g_page;
	uint8_t *code = NULL;
	uint64_t per;
	int rc;

	code = map_code(pages);
	tbl = map_pages(1, PROT_READ | PROT_WRITE);
	if (!code || !tbl)
		goto out;
	jit_table_init(tbl, 24, 24, 8, 2);
	memset(&c, 0, sizeof(c));
	c.base = (uintptr_t)code;
	c.tbl = (uintptr_t)tbl;

	/* Size batches so that the live registrations fit in the limits. */
	REQUIRE_RC(cc_version(g_fd, &v0), 0, "VERSION");
	REQUIRE_RC(reg_range(99, 0, c.base, c.base + RLEN, c.tbl), 0, "probe");
	REQUIRE_RC(cc_version(g_fd, &v1), 0, "VERSION");
	REQUIRE_RC(cc_unregister(g_fd, c.base, c.base + RLEN), 0, "UNREGISTER");
	per = v1.bytes > v0.bytes ? v1.bytes - v0.bytes : 1;
	c.batch = PER_THREAD;
	while (c.batch > 1 &&
	       ((uint64_t)NTHREADS * c.batch > v0.max_registrations ||
		(uint64_t)NTHREADS * c.batch * per * 2 > v0.max_bytes - v0.bytes))
		c.batch /= 2;
	printf("# %d threads x %d ranges, %d registered at a time per thread\n",
	       NTHREADS, PER_THREAD, c.batch);
	run_threads(&c, conc_distinct_thread);
	EXPECT(cc_nr(g_fd) == (long)v0.nr_registrations,
	       "nr_registrations %ld after all threads unregistered, expected %llu",
	       cc_nr(g_fd), ULL(v0.nr_registrations));
	rc = cc_query_at(g_fd, 0, &q);
	EXPECT_RC(rc, ENOENT, "QUERY after all threads unregistered");
	REQUIRE_RC(cc_version(g_fd, &v1), 0, "VERSION");
	EXPECT(v1.bytes == v0.bytes, "bytes %llu after the threads, %llu before",
	       ULL(v1.bytes), ULL(v0.bytes));
out:
	unmap_pages(code, pages);
	unmap_pages(tbl, 1);
	return T_PASS;
}

/*
 * Round modes: 0 all ELF, 1 all JIT, 2 ELF and JIT mixed, all on the same
 * range; 3: each thread its own range, all pairwise overlapping.
 */
static void *conc_same_thread(void *p)
{
	struct conc_arg *a = p;
	struct conc *c = a->c;
	int t = a->t, r, i, wins, others;

	for (r = 0; r < c->rounds; r++) {
		int mode = r % 4;
		uint64_t s = c->r + (mode == 3 ? 8 * t : 0);
		uint64_t e = s + (mode == 3 ? 0x80 : 0x100);
		int kind = mode == 0 ? 0 : mode == 1 ? 1 : t % 2;

		pthread_barrier_wait(&c->bar);
		c->rc_reg[t] = reg_range(t, kind, s, e, c->tbl);
		pthread_barrier_wait(&c->bar);
		if (t == 0) {
			int example = 0;

			for (i = wins = others = 0; i < NTHREADS; i++) {
				if (!c->rc_reg[i])
					wins++;
				else if (c->rc_reg[i] != -EEXIST)
					others++, example = c->rc_reg[i];
			}
			if (wins != 1 || others)
				FAIL("round %d (mode %d): %d registrations succeeded, %d failed with other than EEXIST (e.g. %s)",
				     r, mode, wins, others, ename(example));
			if (cc_walk_count(g_fd) != wins)
				FAIL("round %d: QUERY walk sees %ld registrations, %d succeeded",
				     r, cc_walk_count(g_fd), wins);
		}
		pthread_barrier_wait(&c->bar);
		/* Everyone tries to remove its own (mode 3) or the shared range. */
		c->rc_unreg[t] = cc_unregister(g_fd, s, e);
		pthread_barrier_wait(&c->bar);
		if (t == 0) {
			for (i = wins = others = 0; i < NTHREADS; i++) {
				if (!c->rc_unreg[i])
					wins++;
				else if (c->rc_unreg[i] != -ENOENT)
					others++;
			}
			if (wins != 1 || others)
				FAIL("round %d (mode %d): %d UNREGISTERs succeeded, %d failed with other than ENOENT",
				     r, mode, wins, others);
			if (cc_walk_count(g_fd) != 0) {
				FAIL("round %d: registrations left after UNREGISTER", r);
				cc_unregister_all(g_fd);
			}
		}
	}
	return NULL;
}

TEST(concurrent_same_range)
{
	struct codectl_jit_unwind_table *tbl = NULL;
	static struct conc c;
	uint8_t *code = NULL;

	code = map_code(1);
	tbl = map_pages(1, PROT_READ | PROT_WRITE);
	if (!code || !tbl)
		goto out;
	jit_table_init(tbl, 24, 24, 8, 2);
	memset(&c, 0, sizeof(c));
	c.tbl = (uintptr_t)tbl;
	c.r = (uintptr_t)code + 0x100;
	c.rounds = 200;
	run_threads(&c, conc_same_thread);
out:
	unmap_pages(code, 1);
	unmap_pages(tbl, 1);
	return T_PASS;
}

/* ---- process exit ----------------------------------------------------- */

#define NCHILD 8
#define KREG 16

struct pchild {
	int idx;
	uint8_t *code;
	uint64_t tbl;
	int up, down;	/* write 1 status byte to up; EOF on down means exit */
	int up_rd, down_wr;	/* the parent's ends, closed in the child */
};

static int pchild_register(struct pchild *pc, int from, int to)
{
	int i, rc;

	for (i = from; i < to; i++) {
		uint64_t s = (uintptr_t)pc->code + (uint64_t)i * SLOT;

		rc = reg_range(pc->idx, i, s, s + RLEN, pc->tbl);
		if (!EXPECT_RC(rc, 0, "child %d: registering range %d", pc->idx, i))
			return -1;
	}
	return 0;
}

static void *pchild_thread(void *p)
{
	struct pchild *pc = p;
	char c;

	/* Registers more from a second thread, then exits the whole group. */
	if (pchild_register(pc, KREG, KREG + 4))
		_exit(1);
	c = t_nr_failed() ? 'n' : 'y';
	if (write(pc->up, &c, 1) != 1)
		_exit(1);
	while (read(pc->down, &c, 1) > 0)
		;
	_exit(0);
}

static int pchild_main(void *p)
{
	struct pchild *pc = p;
	long n;
	char c;
	int kind = pc->idx % 4;

	close(pc->up_rd);
	close(pc->down_wr);
	n = cc_nr(g_fd);
	EXPECT(n == 0, "child %d: fresh child reports %ld registrations", pc->idx, n);
	if (pchild_register(pc, 0, KREG))
		goto bad;
	n = cc_walk_count(g_fd);
	if (!EXPECT(n == KREG, "child %d: QUERY walk sees %ld, expected %d",
		    pc->idx, n, KREG))
		goto bad;
	if (pc->idx % 2) {
		/* Closing the fd does not drop anything. */
		close(g_fd);
		g_fd = cc_open();
		n = cc_nr(g_fd);
		if (!EXPECT(n == KREG, "child %d: %ld registrations after closing the fd",
			    pc->idx, n))
			goto bad;
	}
	if (kind == 3) {
		pthread_t th;

		if (pthread_create(&th, NULL, pchild_thread, pc))
			goto bad;
		pthread_join(th, NULL);	/* never returns: the thread exits */
		_exit(1);
	}
	c = t_nr_failed() ? 'n' : 'y';
	if (write(pc->up, &c, 1) != 1)
		_exit(1);
	while (read(pc->down, &c, 1) > 0)
		;
	if (kind == 1)
		exit(0);	/* atexit handlers, stdio */
	if (kind == 2)
		pause();	/* killed by the parent */
	_exit(0);
bad:
	c = 'n';
	if (write(pc->up, &c, 1) != 1)
		_exit(1);
	_exit(1);
}

static void print_stats(const char *when, const struct cstats *s)
{
	printf("# stats %s: mms %lld registrations %lld bytes %lld\n", when,
	       s->mms, s->registrations, s->bytes);
}

TEST(process_exit)
{
	struct codectl_jit_unwind_table *tbl = NULL;
	struct cstats base = { 0 }, now;
	struct pchild pc[NCHILD];
	pid_t pid[NCHILD];
	uint8_t *code = NULL;
	int up[2] = { -1, -1 }, down[2] = { -1, -1 }, i, ok = 0, st;
	char c;

	st = stats_available();
	if (st == T_FAIL)
		return T_FAIL;
	if (st == T_PASS) {
		REQUIRE(!stats_settle(&base), "reading " STATS_PATH);
		print_stats("before", &base);
	}
	code = map_code(1);
	tbl = map_pages(1, PROT_READ | PROT_WRITE);
	REQUIRE(code && tbl, "mmap");
	jit_table_init(tbl, 24, 24, 8, 2);
	REQUIRE(!pipe(up) && !pipe(down), "pipe: %m");
	for (i = 0; i < NCHILD; i++) {
		/* All children register the same ranges: each in its own mm. */
		pc[i] = (struct pchild){ i, code, (uintptr_t)tbl, up[1], down[0],
					 up[0], down[1] };
		pid[i] = t_fork_child(pchild_main, &pc[i]);
	}
	close(up[1]);
	close(down[0]);
	up[1] = down[0] = -1;
	for (i = 0; i < NCHILD; i++) {
		if (read(up[0], &c, 1) != 1) {
			FAIL("a child died before reporting");
			break;
		}
		ok += c == 'y';
	}
	EXPECT(ok == NCHILD, "%d of %d children registered as expected", ok, NCHILD);
	if (st == T_PASS) {
		long long want = KREG * NCHILD + 4 * (NCHILD / 4);

		REQUIRE(!stats_read(&now), "reading stats");
		print_stats("with children alive", &now);
		EXPECT(now.registrations >= base.registrations + want,
		       "stats registrations %lld with %lld held by children, baseline %lld",
		       now.registrations, want, base.registrations);
		EXPECT(now.mms >= base.mms + NCHILD,
		       "stats mms %lld with %d children holding registrations, baseline %lld",
		       now.mms, NCHILD, base.mms);
		EXPECT(now.bytes > base.bytes, "stats bytes %lld, baseline %lld",
		       now.bytes, base.bytes);
	}
	/* Let them go: normal exit, exit(), SIGKILL, exit from a thread. */
	close(down[1]);
	down[1] = -1;
	for (i = 0; i < NCHILD; i++) {
		char what[32];

		if (i % 4 == 2 && pid[i] > 0)
			kill(pid[i], SIGKILL);
		snprintf(what, sizeof(what), "child %d", i);
		t_wait_child(pid[i], i % 4 == 2 ? SIGKILL : 0, what);
	}
	if (st == T_PASS) {
		bool back = stats_wait_le(&base, 10000, &now);

		print_stats("after the children exited", &now);
		EXPECT(back, "stats did not return to the baseline within 10 s: mms %lld/%lld registrations %lld/%lld bytes %lld/%lld (now/before)",
		       now.mms, base.mms, now.registrations, base.registrations,
		       now.bytes, base.bytes);
	}
out:
	for (i = 0; i < 2; i++) {
		if (up[i] >= 0)
			close(up[i]);
		if (down[i] >= 0)
			close(down[i]);
	}
	unmap_pages(code, 1);
	unmap_pages(tbl, 1);
	if (st == T_SKIP && !t_nr_failed())
		return T_SKIP;	/* the children's checks passed; counters unchecked */
	return T_PASS;
}

struct many_arg {
	uint8_t *code;
	int n, up, down, up_rd, down_wr;
};

static int many_child(void *p)
{
	struct many_arg *m = p;
	char path[64], c = 'n';
	int i, rc;

	close(m->up_rd);
	close(m->down_wr);
	for (i = 0; i < m->n; i++) {
		struct codectl_elf_info ei = {
			.text_start = (uintptr_t)m->code + 16 * i,
			.text_end = (uintptr_t)m->code + 16 * i + 12,
			.pathname = (uintptr_t)path,
		};

		snprintf(path, sizeof(path), "/many/lib%04d.so", i);
		rc = cc_register_elf(g_fd, &ei);
		if (!EXPECT_RC(rc, 0, "child: registration %d of %d", i + 1, m->n))
			break;
	}
	if (i == m->n && EXPECT(cc_nr(g_fd) == m->n, "child: nr_registrations %ld, expected %d",
				cc_nr(g_fd), m->n))
		c = 'y';
	if (write(m->up, &c, 1) != 1)
		return 1;
	while (read(m->down, &c, 1) > 0)
		;
	pause();	/* SIGKILLed by the parent */
	return 0;
}

TEST(process_exit_many)
{
	struct codectl_version v0, v1;
	struct cstats base = { 0 }, pre = { 0 }, now;
	struct many_arg m = { 0 };
	unsigned long long need;
	uint8_t *code = NULL;
	int up[2] = { -1, -1 }, down[2] = { -1, -1 }, st, i;
	size_t pages = 0;
	pid_t pid;
	char c = 0;

	st = stats_available();
	if (st == T_FAIL)
		return T_FAIL;
	m.n = 1000;
	pages = (m.n * 16 + g_page - 1) / g_page;
	code = map_code(pages);
	REQUIRE(code, "mmap");
	m.code = code;

	/* Make room for 1000 (root), else use what the limits allow. */
	if (st == T_PASS)
		REQUIRE(!stats_settle(&pre), "reading " STATS_PATH);
	REQUIRE_RC(cc_version(g_fd, &v0), 0, "VERSION");
	{
		struct codectl_elf_info ei = {
			.text_start = (uintptr_t)code, .text_end = (uintptr_t)code + 12,
			.pathname = (uintptr_t)"/many/lib0000.so",
		};
		REQUIRE_RC(cc_register_elf(g_fd, &ei), 0, "probe registration");
		REQUIRE_RC(cc_version(g_fd, &v1), 0, "VERSION");
		REQUIRE_RC(cc_unregister(g_fd, ei.text_start, ei.text_end), 0, "UNREGISTER");
	}
	need = (v1.bytes - v0.bytes) * m.n * 2 + 65536;
	if (v0.max_registrations < (uint64_t)m.n &&
	    param_write("max_registrations", m.n))
		m.n = v0.max_registrations;
	if (v0.max_bytes < need && param_write("max_bytes", need)) {
		uint64_t fit = v0.max_bytes / ((v1.bytes - v0.bytes) * 2 + 1);

		if (fit < (uint64_t)m.n)
			m.n = fit;
	}
	if (m.n < 1000)
		printf("# limits allow %d registrations in the child\n", m.n);
	/*
	 * Baseline after the probe: it may have given our own mm state.  The
	 * probe's registration is counted until it is freed, a grace period
	 * after UNREGISTER, which on a loaded machine can outlast the 200 ms
	 * of stats_settle(): wait for its count and bytes to go first.
	 */
	if (st == T_PASS) {
		pre.mms = LLONG_MAX;
		EXPECT(stats_wait_le(&pre, 10000, &now),
		       "the probe's registration still counted after 10 s: registrations %lld/%lld bytes %lld/%lld (now/before)",
		       now.registrations, pre.registrations, now.bytes, pre.bytes);
		REQUIRE(!stats_settle(&base), "reading " STATS_PATH);
		print_stats("before", &base);
	}

	REQUIRE(!pipe(up) && !pipe(down), "pipe: %m");
	m.up = up[1];
	m.down = down[0];
	m.up_rd = up[0];
	m.down_wr = down[1];
	pid = t_fork_child(many_child, &m);
	close(up[1]);
	close(down[0]);
	up[1] = down[0] = -1;
	REQUIRE(pid > 0, "fork");
	i = read(up[0], &c, 1);
	EXPECT(i == 1 && c == 'y', "child did not register %d ranges", m.n);
	if (st == T_PASS && !stats_read(&now)) {
		print_stats("with the child alive", &now);
		EXPECT(now.registrations >= base.registrations + m.n,
		       "stats registrations %lld with %d held by the child, baseline %lld",
		       now.registrations, m.n, base.registrations);
	}
	kill(pid, SIGKILL);
	close(down[1]);
	down[1] = -1;
	t_wait_child(pid, SIGKILL, "child");
	if (st == T_PASS) {
		bool back = stats_wait_le(&base, 10000, &now);

		print_stats("after the child was killed", &now);
		EXPECT(back, "stats did not return to the baseline within 10 s: mms %lld/%lld registrations %lld/%lld bytes %lld/%lld (now/before)",
		       now.mms, base.mms, now.registrations, base.registrations,
		       now.bytes, base.bytes);
	}
out:
	for (i = 0; i < 2; i++) {
		if (up[i] >= 0)
			close(up[i]);
		if (down[i] >= 0)
			close(down[i]);
	}
	unmap_pages(code, pages);
	if (st == T_SKIP && !t_nr_failed())
		return T_SKIP;
	return T_PASS;
}

/* ---- exec ------------------------------------------------------------- */

struct vfork_arg {
	uint64_t s, e;
	int out, null;
	volatile int rc;
};

/*
 * Runs on the parent's address space (CLONE_VM | CLONE_VFORK), with its
 * own copy of the fd table: register, then exec.
 */
static int vfork_child(void *p)
{
	struct vfork_arg *v = p;
	struct codectl_elf_info ei = {
		.text_start = v->s, .text_end = v->e,
		.pathname = (uintptr_t)"/vfork/child.so",
	};

	v->rc = cc_register_elf(g_fd, &ei);
	if (dup2(v->null, 0) < 0 || dup2(v->out, 1) < 0)
		_exit(126);
	execl(g_self_exe, "codectl-abi-test", EXEC_CHECK_ARG, (char *)NULL);
	_exit(127);
}

/*
 * After exec: report what the new address space sees on stdout (a pipe),
 * then wait for EOF on stdin.
 */
int exec_check_main(void)
{
	long nr, walk;
	char c;
	int fd = cc_open();

	if (fd < 0) {
		printf("open %s\n", ename(fd));
		return 1;
	}
	nr = cc_nr(fd);
	walk = cc_walk_count(fd);
	close(fd);
	printf("nr=%ld walk=%ld\n", nr, walk);
	fflush(stdout);
	while (read(0, &c, 1) > 0)
		;
	return 0;
}

int hold_main(int n)
{
	struct codectl_jit_unwind_table *tbl;
	uint8_t *code;
	long nr;
	int i, rc;
	char c;

	g_fd = cc_open();
	code = map_code((n * SLOT + g_page - 1) / g_page + 1);
	tbl = map_pages(1, PROT_READ | PROT_WRITE);
	if (g_fd < 0 || !code || !tbl) {
		printf("held error: %s\n", ename(g_fd < 0 ? g_fd : -ENOMEM));
		return 1;
	}
	jit_table_init(tbl, 24, 24, 8, 2);
	for (i = 0; i < n; i++) {
		uint64_t s = (uintptr_t)code + (uint64_t)i * SLOT;

		rc = reg_range(0, i, s, s + RLEN, (uintptr_t)tbl);
		if (rc) {
			printf("held error: registration %d: %s\n", i, ename(rc));
			return 1;
		}
	}
	nr = cc_nr(g_fd);
	close(g_fd);
	printf("held %ld\n", nr);
	fflush(stdout);
	while (read(0, &c, 1) > 0)
		;
	g_fd = cc_open();
	if (g_fd < 0)
		printf("after: open %s\n", ename(g_fd));
	else
		printf("after: nr=%ld\n", cc_nr(g_fd));
	return 0;
}

struct exec_arg {
	uint8_t *code;
	uint64_t tbl;
	int up, down, up_rd, down_wr;
};

static int exec_child(void *p)
{
	struct exec_arg *x = p;
	struct self_image si;
	struct codectl_elf_info ei;
	int rc;

	if (self_image_get(&si))
		return 1;
	ei = (struct codectl_elf_info){
		.elf_start = si.elf_start, .elf_end = si.elf_end,
		.text_start = si.text_start, .text_end = si.text_end,
		.sframe_start = si.sframe_start, .sframe_end = si.sframe_end,
		.pathname = (uintptr_t)si.path,
		.build_id = (uintptr_t)si.build_id, .build_id_len = si.build_id_len,
	};
	rc = cc_register_elf(g_fd, &ei);
	if (!EXPECT_RC(rc, 0, "child: REGISTER_ELF of its own image"))
		return 1;
	close(x->up_rd);
	close(x->down_wr);
	if (pchild_register(&(struct pchild){ 0, x->code, x->tbl, -1, -1, -1, -1 },
			    0, 4))
		return 1;
	if (!EXPECT(cc_nr(g_fd) == 5, "child: nr_registrations %ld before exec",
		    cc_nr(g_fd)))
		return 1;
	if (dup2(x->down, 0) < 0 || dup2(x->up, 1) < 0)
		return 1;
	execl(g_self_exe, "codectl-abi-test", EXEC_CHECK_ARG, (char *)NULL);
	fprintf(stderr, "exec %s: %m\n", g_self_exe);
	return 1;
}

TEST(exec_releases)
{
	struct codectl_jit_unwind_table *tbl = NULL;
	struct cstats base = { 0 }, now;
	struct exec_arg x;
	uint8_t *code = NULL;
	int up[2] = { -1, -1 }, down[2] = { -1, -1 }, st, i;
	char line[128] = "";
	long nr = -1, walk = -1;
	ssize_t n;
	pid_t pid;

	st = stats_available();
	if (st == T_FAIL)
		return T_FAIL;
	if (st == T_PASS) {
		REQUIRE(!stats_settle(&base), "reading " STATS_PATH);
		print_stats("before", &base);
	}
	code = map_code(1);
	tbl = map_pages(1, PROT_READ | PROT_WRITE);
	REQUIRE(code && tbl, "mmap");
	jit_table_init(tbl, 24, 24, 8, 2);
	REQUIRE(!pipe(up) && !pipe(down), "pipe: %m");
	x = (struct exec_arg){ code, (uintptr_t)tbl, up[1], down[0], up[0], down[1] };
	pid = t_fork_child(exec_child, &x);
	close(up[1]);
	close(down[0]);
	up[1] = down[0] = -1;
	REQUIRE(pid > 0, "fork");
	n = read(up[0], line, sizeof(line) - 1);
	if (n > 0)
		line[n] = 0;
	REQUIRE(sscanf(line, "nr=%ld walk=%ld", &nr, &walk) == 2,
		"exec'ed child reported '%s'", line);
	EXPECT(nr == 0 && walk == 0,
	       "after exec: nr_registrations %ld, QUERY walk %ld; expected 0 and 0",
	       nr, walk);
	if (st == T_PASS) {
		/* The old mm is gone although the process lives on. */
		struct cstats b2 = base;
		bool back;

		b2.mms = b2.bytes = LLONG_MAX;	/* the new image may have state */
		back = stats_wait_le(&b2, 10000, &now);
		print_stats("after exec, child alive", &now);
		EXPECT(back, "stats registrations %lld after exec, baseline %lld",
		       now.registrations, base.registrations);
	}
	close(down[1]);
	down[1] = -1;
	t_wait_child(pid, 0, "exec'ed child");
	if (st == T_PASS) {
		bool back = stats_wait_le(&base, 10000, &now);

		print_stats("after exit", &now);
		EXPECT(back, "stats did not return to the baseline within 10 s: mms %lld/%lld registrations %lld/%lld bytes %lld/%lld (now/before)",
		       now.mms, base.mms, now.registrations, base.registrations,
		       now.bytes, base.bytes);
	}
out:
	for (i = 0; i < 2; i++) {
		if (up[i] >= 0)
			close(up[i]);
		if (down[i] >= 0)
			close(down[i]);
	}
	unmap_pages(code, 1);
	unmap_pages(tbl, 1);
	if (st == T_SKIP && !t_nr_failed())
		return T_SKIP;
	return T_PASS;
}

TEST(vfork_exec)
{
	struct codectl_query_info q;
	struct vfork_arg v = { .null = -1 };
	char pbuf[64] = "", line[128] = "";
	uint8_t *code = NULL, *stack = NULL;
	int pfd[2] = { -1, -1 }, i;
	long nr = -1, walk = -1;
	bool reg = false;
	ssize_t n;
	pid_t pid;

	code = map_code(1);
	stack = map_pages(16, PROT_READ | PROT_WRITE);
	REQUIRE(code && stack, "mmap");
	REQUIRE(!pipe(pfd), "pipe: %m");
	v = (struct vfork_arg){
		.s = (uintptr_t)code + 0x100, .e = (uintptr_t)code + 0x200,
		.out = pfd[1], .null = open("/dev/null", O_RDONLY | O_CLOEXEC),
		.rc = 1,
	};
	REQUIRE(v.null >= 0, "open /dev/null: %m");
	fflush(stdout);
	pid = clone(vfork_child, stack + 16 * g_page,
		    CLONE_VM | CLONE_VFORK | SIGCHLD, &v);
	REQUIRE(pid > 0, "clone: %m");
	close(pfd[1]);
	pfd[1] = -1;
	/* The child has exec'ed (or died): its registration is in our mm. */
	REQUIRE_RC(v.rc, 0, "REGISTER_ELF from the CLONE_VM child");
	reg = true;
	n = read(pfd[0], line, sizeof(line) - 1);
	if (n > 0)
		line[n] = 0;
	t_wait_child(pid, 0, "exec'ed child");
	if (EXPECT(sscanf(line, "nr=%ld walk=%ld", &nr, &walk) == 2,
		   "exec'ed child reported '%s'", line))
		EXPECT(nr == 0 && walk == 0,
		       "the new image sees nr_registrations %ld, QUERY walk %ld",
		       nr, walk);
	/* The child's exec left the mm it shared with us alone. */
	memset(&q, 0, sizeof(q));
	q.pathname = (uintptr_t)pbuf;
	q.pathname_len = sizeof(pbuf);
	i = cc_query(g_fd, &q);
	if (EXPECT_RC(i, 0, "QUERY in the parent after the child's exec"))
		EXPECT(q.text_start == v.s && q.text_end == v.e &&
		       !strcmp(pbuf, "/vfork/child.so"),
		       "parent sees [%#llx,%#llx) '%s'", ULL(q.text_start),
		       ULL(q.text_end), pbuf);
	EXPECT(cc_nr(g_fd) == 1, "parent: nr_registrations %ld, expected 1",
	       cc_nr(g_fd));
out:
	if (reg)
		EXPECT_RC(cc_unregister(g_fd, v.s, v.e), 0, "UNREGISTER");
	for (i = 0; i < 2; i++)
		if (pfd[i] >= 0)
			close(pfd[i]);
	if (v.null >= 0)
		close(v.null);
	unmap_pages(code, 1);
	unmap_pages(stack, 16);
	return T_PASS;
}
