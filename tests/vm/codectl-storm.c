// SPDX-License-Identifier: GPL-2.0
/*
 * codectl-storm: a race storm over the lifecycle of registrations, for a
 * fixed time.  Run inside a guest with the codectl module.
 *
 *   codectl-storm [-t SECONDS] [-s SEED] [-r] [-B]
 *
 *   -t   how long (default 10 s, or $CODECTL_STORM_SECONDS)
 *   -s   seed (default: from the clock; printed)
 *   -r   rmmod mode: every process registers first, then closes
 *        /dev/codectl and carries on without it, so that the module can
 *        be removed under the storm.  Prints "# ready" once no fd is
 *        open; runs until SIGUSR1 says the rmmod returned (60 s past
 *        -t at most); checks that every process behaves and that the
 *        module left nothing of its own behind, not the counters.
 *   -B   beside other tests that use the module: the module's counters
 *        are theirs too, not compared with their baseline.
 *
 * All at once, in one process with its children:
 *   - 2 threads register (ELF with and without SFrame, JIT) and
 *     unregister ranges of shared arenas, and walk the registry;
 *   - 1 thread unmaps, maps again, moves, shrinks, mprotects and rewrites
 *     those arenas (arena.c);
 *   - 1 thread appends to the tables of a JIT region of its own, entry by
 *     entry (used_len published with a store-release), chaining a new
 *     table to a full one, and registers the region anew after 8 tables;
 *   - 1 thread forks children all the time, at most 4 alive: children that
 *     check what they inherited and change it, exit at once, are killed
 *     at once, exec a helper (from the main thread, from another thread,
 *     and by posix_spawn), fork a grandchild and exit before it, run
 *     threads that register until the process exits.
 * The helper (an exec of this program) checks that the new image starts
 * without registrations, registers a few, forks a child that must
 * inherit them, and exits holding them.
 *
 * Checked: every answer is documented for its option; every child's and
 * helper's checks pass; no registration (inherited or own, at the end)
 * covers memory that is not mapped; everything can be unregistered at the
 * end; every debugfs counter is back at its baseline once all processes
 * are gone.  Output is TAP-like and ends with "N passed, N failed".
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <spawn.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "arena.h"

#define ULL(x) ((unsigned long long)(x))
#define EXEC_HELPER "--exec-helper"
#define EXEC_HELPER_NOFD "--exec-helper-nofd"

extern char **environ;

/* ---- output without stdio (children of a multithreaded process) ------- */

static int nr_failed;		/* atomic */

static void say(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static void say(const char *fmt, ...)
{
	char buf[600];
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vsnprintf(buf, sizeof(buf) - 1, fmt, ap);
	va_end(ap);
	if (n < 0)
		return;
	if (n > (int)sizeof(buf) - 2)
		n = sizeof(buf) - 2;
	buf[n++] = '\n';
	if (write(STDOUT_FILENO, buf, n) < 0)
		return;
}

void t_fail_at(const char *file, int line, const char *fmt, ...)
{
	char msg[500];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	if (__atomic_fetch_add(&nr_failed, 1, __ATOMIC_RELAXED) < 40)
		say("#   FAIL %s:%d: [pid %d] %s", file, line, (int)getpid(), msg);
}

void t_set_skip(const char *fmt, ...)
{
	(void)fmt;
}

int t_nr_failed(void)
{
	return __atomic_load_n(&nr_failed, __ATOMIC_RELAXED);
}

/* ---- state ------------------------------------------------------------ */

static uint64_t seed;
static bool rmmod_mode;
static volatile bool stop;
/* rmmod mode: the suite's SIGUSR1, sent once its rmmod has returned. */
static volatile sig_atomic_t rmmod_returned;

static void on_rmmod_returned(int sig)
{
	(void)sig;
	rmmod_returned = 1;
}

/* The process the suite signals forwards it to the storm's. */
static volatile pid_t storm_pid;

static void forward_rmmod_returned(int sig)
{
	if (storm_pid > 0)
		kill(storm_pid, sig);
}
static struct self_image self;
static bool have_self;

#define NR_CHILD_KINDS 8
static const char *const child_kind[NR_CHILD_KINDS] = {
	"check", "exit", "kill", "exec", "thread-exec", "grandchild",
	"spawn", "threads",
};

struct counts {
	unsigned long reg_ok, reg_refused, unreg_ok, unreg_enoent, walks;
	unsigned long remaps, undocumented, spawned[NR_CHILD_KINDS];
	unsigned long child_bad, jit_regions, jit_appends;
};
static struct counts cnt;	/* atomics */

#define INC(x) __atomic_add_fetch(&(x), 1, __ATOMIC_RELAXED)

/* An answer must be documented for its option. */
static void check_rc(int kind, int rc, const char *what)
{
	if (rc >= 0 || documented(kind, -rc))
		return;
	if (INC(cnt.undocumented) <= 10)
		FAIL("%s: undocumented errno %s", what, ename(rc));
}

/* ---- what a registry may hold ------------------------------------------ */

/* Is every page of [s, e) mapped?  (At most 64 pages are looked at.) */
static bool mapped(uint64_t s, uint64_t e)
{
	uint64_t a = s & ~(uint64_t)(g_page - 1);
	int n = 0;

	for (; a < e && n < 64; a += g_page, n++)
		if (is_unmapped(a, 1))
			return false;
	return true;
}

/*
 * Walk the registry of this process (no other thread may change the
 * mappings meanwhile): sorted, disjoint, nothing over unmapped memory.
 * Returns the number of registrations, or -1.
 */
static long walk_check(const char *who)
{
	struct codectl_query_info q;
	uint64_t addr = 0, prev_end = 0;
	long n = 0;
	int rc, bad = 0;

	while (!(rc = cc_query_at(g_fd, addr, &q))) {
		if (q.text_start >= q.text_end || q.text_start < prev_end ||
		    q.text_end <= addr) {
			FAIL("%s: QUERY walk after %#llx: [%#llx,%#llx)", who,
			     ULL(addr), ULL(q.text_start), ULL(q.text_end));
			return -1;
		}
		if (bad < 3 && (!mapped(q.text_start, q.text_end) ||
				(q.sframe_start && !mapped(q.sframe_start, q.sframe_end)) ||
				(q.unwind_head && !mapped(q.unwind_head, q.unwind_head + 40)))) {
			FAIL("%s: %s registration [%#llx,%#llx) sframe %#llx head %#llx: its memory is not mapped",
			     who, q.kind == CODECTL_KIND_JIT ? "JIT" : "ELF",
			     ULL(q.text_start), ULL(q.text_end), ULL(q.sframe_start),
			     ULL(q.unwind_head));
			bad++;
		}
		prev_end = addr = q.text_end;
		if (++n > 100000)
			return -1;
	}
	if (rc != -ENOENT) {
		FAIL("%s: QUERY walk ended with %s", who, ename(rc));
		return -1;
	}
	return bad ? -1 : n;
}

/* ---- registering threads ---------------------------------------------- */

static int reg_one(struct rng *r)
{
	uint64_t code = arena_page(r, 0), s = code + 256 * below(r, 16);
	int v = 1 + below(r, 3), rc;

	if (one_in(r, 3)) {
		struct codectl_jit_info ji = {
			.text_start = s, .text_end = s + 256,
			.unwind_head = arena_page(r, 2),
		};

		rc = cc_register_jit(g_fd, &ji);
		check_rc(CODECTL_REGISTER_JIT, rc, "REGISTER_JIT");
	} else {
		struct codectl_elf_info ei = {
			.text_start = s, .text_end = s + 256,
			.pathname = (uintptr_t)"/storm/object.so",
		};

		if (s == code && one_in(r, 2)) {
			/* The arena's object, with its SFrame section. */
			ei.sframe_start = code + g_page;
			ei.sframe_end = ei.sframe_start + sf_tmpl_len[v];
		}
		rc = cc_register_elf(g_fd, &ei);
		check_rc(CODECTL_REGISTER_ELF, rc, "REGISTER_ELF");
	}
	if (rc)
		INC(cnt.reg_refused);
	else
		INC(cnt.reg_ok);
	return rc;
}

static void *registrar(void *p)
{
	struct rng r;
	long idx = (long)p;

	rng_seed(&r, seed, 100 + idx);
	while (!stop) {
		switch (below(&r, 10)) {
		case 0 ... 4:
			reg_one(&r);
			break;
		case 5 ... 8: {
			uint64_t s = arena_page(&r, 0) + 256 * below(&r, 16);
			int rc = cc_unregister(g_fd, s, s + 256);

			check_rc(CODECTL_UNREGISTER, rc, "UNREGISTER");
			if (!rc)
				INC(cnt.unreg_ok);
			else
				INC(cnt.unreg_enoent);
			break;
		}
		default: {
			/*
			 * The cursor moves on even while everything changes
			 * (ranges may overlap the previous answer's: it may
			 * have been replaced meanwhile).
			 */
			struct codectl_query_info q;
			uint64_t addr = 0;
			int rc;

			while (!(rc = cc_query_at(g_fd, addr, &q))) {
				if (q.text_start >= q.text_end || q.text_end <= addr) {
					FAIL("concurrent QUERY walk: [%#llx,%#llx) after %#llx",
					     ULL(q.text_start), ULL(q.text_end), ULL(addr));
					break;
				}
				addr = q.text_end;
			}
			check_rc(CODECTL_QUERY, rc, "QUERY");
			INC(cnt.walks);
			break;
		}
		}
	}
	return NULL;
}

static void *mapper(void *p)
{
	struct rng r;

	(void)p;
	rng_seed(&r, seed, 200);
	while (!stop) {
		if (arena_remap(&r))
			INC(cnt.remaps);
		if (one_in(&r, 4))
			sched_yield();
	}
	return NULL;
}

/* ---- a JIT region whose tables grow ------------------------------------ */

#define APP_TABLES	8
#define APP_ENTRIES	64
#define APP_CODE	((size_t)APP_TABLES * APP_ENTRIES * 16)
#define APP_TSZ		(sizeof(struct codectl_jit_unwind_table) + \
			 APP_ENTRIES * sizeof(struct codectl_jit_unwind_fre))

static void app_table(struct codectl_jit_unwind_table *tab)
{
	memset(tab, 0, APP_TSZ);
	tab->reserved_len = APP_ENTRIES * sizeof(struct codectl_jit_unwind_fre);
	tab->fre_stride = sizeof(struct codectl_jit_unwind_fre);
	tab->fre_size = sizeof(struct codectl_jit_unwind_fre);
}

/* Fill one region's chain entry by entry; 0, or -1 when stopped. */
static int app_fill(uint8_t *tabs)
{
	struct codectl_jit_unwind_table *tab, *prev = NULL;
	struct codectl_jit_unwind_fre *e;
	int t, i;

	for (t = 0; t < APP_TABLES; t++, prev = tab) {
		tab = (void *)(tabs + t * APP_TSZ);
		e = (void *)(tab + 1);
		if (prev) {
			app_table(tab);
			__atomic_store_n(&prev->next, (uintptr_t)tab,
					 __ATOMIC_RELEASE);
		}
		for (i = 0; i < APP_ENTRIES; i++) {
			if (stop)
				return -1;
			e[i].ip_off = (t * APP_ENTRIES + i) * 16;
			e[i].size = 16;
			e[i].cfa_off = 16;
			e[i].ra_off = -8;
			__atomic_store_n(&tab->used_len, (i + 1) * sizeof(*e),
					 __ATOMIC_RELEASE);
			INC(cnt.jit_appends);
		}
	}
	return 0;
}

static void *appender(void *p)
{
	size_t tlen = APP_TABLES * APP_TSZ;
	uint8_t *code, *tabs;
	int rc;

	(void)p;
	code = mmap(NULL, APP_CODE, PROT_READ | PROT_WRITE,
		    MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	tabs = mmap(NULL, tlen, PROT_READ | PROT_WRITE,
		    MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (code == MAP_FAILED || tabs == MAP_FAILED) {
		FAIL("appender: mmap: %s", strerror(errno));
		return NULL;
	}
	memset(code, 0xc3, APP_CODE);
	mprotect(code, APP_CODE, PROT_READ | PROT_EXEC);
	while (!stop) {
		struct codectl_jit_info ji = {
			.text_start = (uintptr_t)code,
			.text_end = (uintptr_t)code + APP_CODE,
			.unwind_head = (uintptr_t)tabs,
		};

		app_table((void *)tabs);
		rc = cc_register_jit(g_fd, &ji);
		check_rc(CODECTL_REGISTER_JIT, rc, "REGISTER_JIT (appended)");
		if (rc) {
			usleep(1000);
			continue;
		}
		INC(cnt.jit_regions);
		app_fill(tabs);
		rc = cc_unregister(g_fd, ji.text_start, ji.text_end);
		check_rc(CODECTL_UNREGISTER, rc, "UNREGISTER (appended)");
	}
	munmap(code, APP_CODE);
	munmap(tabs, tlen);
	return NULL;
}

/* ---- children ---------------------------------------------------------- */

static __attribute__((noreturn)) void exec_helper(void)
{
	execl(g_self_exe, "codectl-storm",
	      rmmod_mode ? EXEC_HELPER_NOFD : EXEC_HELPER, (char *)NULL);
	say("#   FAIL exec %s: %s", g_self_exe, strerror(errno));
	_exit(127);
}

static void *exec_thread(void *p)
{
	(void)p;
	exec_helper();
}

static void *child_thread(void *p)
{
	struct rng r;

	rng_seed(&r, seed, 300 + (long)p);
	for (;;) {
		if (!rmmod_mode) {
			uint64_t s = arena_page(&r, 0) + 256 * below(&r, 16);

			reg_one(&r);
			check_rc(CODECTL_UNREGISTER, cc_unregister(g_fd, s, s + 256),
				 "UNREGISTER");
		} else {
			sched_yield();
		}
	}
	return NULL;
}

/* A child that looks at what it inherited, changes it and removes it. */
static int check_child(const char *who)
{
	struct codectl_version v;
	long n, nr, removed;
	struct rng r;
	int i;

	if (rmmod_mode)
		return 0;
	n = walk_check(who);	/* single-threaded now: a stable picture */
	nr = cc_nr(g_fd);
	if (n >= 0 && nr != n)
		FAIL("%s: VERSION says %ld registrations, QUERY walk %ld", who, nr, n);
	rng_seed(&r, seed ^ getpid(), 400);
	for (i = 0; i < 8; i++)
		reg_one(&r);
	removed = cc_unregister_all(g_fd);
	if (removed < 0)
		FAIL("%s: unregistering everything: %s", who, ename(removed));
	if (cc_version(g_fd, &v) || v.nr_registrations || v.bytes)
		FAIL("%s: %llu registrations, %llu bytes after removing all", who,
		     ULL(v.nr_registrations), ULL(v.bytes));
	return 0;
}

static __attribute__((noreturn)) void child_main(int kind)
{
	int before = t_nr_failed();
	pthread_t th;
	pid_t pid;

	switch (kind) {
	case 0:
		check_child("child");
		break;
	case 3:
		exec_helper();
	case 4:
		pthread_create(&th, NULL, child_thread, (void *)1L);
		pthread_create(&th, NULL, exec_thread, NULL);
		for (;;)
			pause();
	case 5:
		pid = fork();
		if (!pid) {
			/* Usually looks after its parent exited. */
			usleep(1000);
			check_child("grandchild");
			_exit(t_nr_failed() != before);
		}
		break;
	case 7:
		pthread_create(&th, NULL, child_thread, (void *)2L);
		pthread_create(&th, NULL, child_thread, (void *)3L);
		usleep(2000);
		break;		/* exit_group with the threads running */
	}
	_exit(t_nr_failed() != before);
}

static int nr_alive;

/* Reap what has exited (any descendant: we are their subreaper). */
static void reap(bool block)
{
	int status;
	pid_t w;

	while ((w = waitpid(-1, &status, block ? __WALL : __WALL | WNOHANG)) > 0) {
		nr_alive--;
		if (WIFEXITED(status) && WEXITSTATUS(status)) {
			if (INC(cnt.child_bad) <= 5)
				FAIL("process %d exited with %d (its checks failed, see above)",
				     (int)w, WEXITSTATUS(status));
		} else if (WIFSIGNALED(status) && WTERMSIG(status) != SIGKILL) {
			if (INC(cnt.child_bad) <= 5)
				FAIL("process %d killed by signal %d", (int)w,
				     WTERMSIG(status));
		}
	}
}

static void *forker(void *p)
{
	struct rng r;
	pid_t pid;
	int kind;

	(void)p;
	rng_seed(&r, seed, 500);
	while (!stop) {
		reap(false);
		if (nr_alive >= 4) {
			usleep(500);
			continue;
		}
		kind = below(&r, NR_CHILD_KINDS);
		INC(cnt.spawned[kind]);
		if (kind == 6) {
			char *argv[] = { "codectl-storm",
					 rmmod_mode ? EXEC_HELPER_NOFD : EXEC_HELPER, NULL };

			if (!posix_spawn(&pid, g_self_exe, NULL, NULL, argv, environ))
				nr_alive++;
			continue;
		}
		pid = fork();
		if (pid < 0) {
			usleep(1000);
			continue;
		}
		if (!pid)
			child_main(kind);
		nr_alive++;
		if (kind == 5)
			nr_alive++;	/* its child comes to us */
		if (kind == 2)
			kill(pid, SIGKILL);
	}
	return NULL;
}

/* ---- the exec'ed helper -------------------------------------------------- */

static int helper_main(bool nofd)
{
	struct codectl_jit_unwind_table *tbl;
	struct codectl_elf_info ei;
	struct codectl_jit_info ji;
	uint8_t *code;
	int status, rc, bad = 0;
	long nr;
	pid_t pid;

	code = map_code(1);
	tbl = map_pages(1, PROT_READ | PROT_WRITE);
	if (!code || !tbl)
		return 1;
	jit_table_init(tbl, 24, 24, 8, 2);
	if (!nofd) {
		g_fd = cc_open();
		if (g_fd < 0) {
			FAIL("exec'ed helper: open: %s", ename(g_fd));
			return 1;
		}
		nr = cc_nr(g_fd);
		if (nr != 0) {
			FAIL("exec'ed helper: the new image has %ld registrations", nr);
			bad = 1;
		}
		if (have_self) {
			ei = (struct codectl_elf_info){
				.elf_start = self.elf_start, .elf_end = self.elf_end,
				.text_start = self.text_start, .text_end = self.text_end,
				.sframe_start = self.sframe_start,
				.sframe_end = self.sframe_end,
				.pathname = (uintptr_t)self.path,
			};
			rc = cc_register_elf(g_fd, &ei);
			bad |= !EXPECT_RC(rc, 0, "exec'ed helper: REGISTER_ELF of its image");
		}
		ei = (struct codectl_elf_info){
			.text_start = (uintptr_t)code, .text_end = (uintptr_t)code + 64,
		};
		bad |= !EXPECT_RC(cc_register_elf(g_fd, &ei), 0, "exec'ed helper: REGISTER_ELF");
		ji = (struct codectl_jit_info){ (uintptr_t)code + 64,
						(uintptr_t)code + 128, (uintptr_t)tbl };
		bad |= !EXPECT_RC(cc_register_jit(g_fd, &ji), 0, "exec'ed helper: REGISTER_JIT");
		nr = cc_nr(g_fd);
	}
	pid = fork();
	if (!pid) {
		if (!nofd && cc_nr(g_fd) != nr) {
			FAIL("exec'ed helper's child: %ld registrations, its parent has %ld",
			     cc_nr(g_fd), nr);
			_exit(1);
		}
		_exit(0);
	}
	if (pid < 0 || waitpid(pid, &status, 0) != pid || !WIFEXITED(status) ||
	    WEXITSTATUS(status))
		bad = 1;
	return bad;	/* exits holding its registrations */
}

/* ---- the storm process --------------------------------------------------- */

struct result {
	int pass, fail, n;
};

static struct result *res;

static void tap(bool ok, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void tap(bool ok, const char *fmt, ...)
{
	char msg[400];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	res->n++;
	if (ok)
		res->pass++;
	else
		res->fail++;
	say("%s %d - %s", ok ? "ok" : "not ok", res->n, msg);
}

/* Register some of everything before the storm (rmmod mode: then close). */
static void preload(void)
{
	struct rng r;
	int i, ok = 0;

	rng_seed(&r, seed, 600);
	for (i = 0; i < 64; i++)
		ok += !reg_one(&r);
	if (have_self) {
		struct codectl_elf_info ei = {
			.elf_start = self.elf_start, .elf_end = self.elf_end,
			.text_start = self.text_start, .text_end = self.text_end,
			.sframe_start = self.sframe_start, .sframe_end = self.sframe_end,
			.pathname = (uintptr_t)self.path,
		};

		ok += !cc_register_elf(g_fd, &ei);
	}
	say("# %d registrations before the storm", ok);
}

static int storm_main(int secs)
{
	pthread_t reg[2], map, fork_th, app;
	struct timespec t0, t1;
	struct codectl_version v;
	unsigned long forks = 0;
	long removed, n;
	double el;
	int i, rc;
	char line[400];
	size_t off;

	prctl(PR_SET_CHILD_SUBREAPER, 1);
	g_fd = cc_open();
	if (g_fd < 0) {
		tap(false, "open " CODECTL_DEVICE ": %s", ename(g_fd));
		return 1;
	}
	have_self = !self_image_get(&self);
	if (!templates_create() || !arenas_create(seed)) {
		tap(false, "setting up memory");
		return 1;
	}
	preload();
	if (rmmod_mode) {
		signal(SIGUSR1, on_rmmod_returned);
		close(g_fd);
		g_fd = -1;
		say("# ready: %s closed, registrations held", CODECTL_DEVICE);
	}
	clock_gettime(CLOCK_MONOTONIC, &t0);
	if (!rmmod_mode) {
		for (i = 0; i < 2; i++)
			pthread_create(&reg[i], NULL, registrar, (void *)(long)i);
		pthread_create(&app, NULL, appender, NULL);
	}
	pthread_create(&map, NULL, mapper, NULL);
	pthread_create(&fork_th, NULL, forker, NULL);
	/*
	 * In rmmod mode the storm also lasts until the suite's rmmod has
	 * returned (60 s more at most): the check at the end must see the
	 * module gone, not still there because a slow guest had not got to
	 * its rmmod yet.
	 */
	do {
		usleep(100000);
		clock_gettime(CLOCK_MONOTONIC, &t1);
		el = (t1.tv_sec - t0.tv_sec) + (t1.tv_nsec - t0.tv_nsec) / 1e9;
	} while (el < secs ||
		 (rmmod_mode && !rmmod_returned && el < secs + 60));
	if (rmmod_mode && !rmmod_returned)
		say("# no word from the suite that its rmmod returned");
	stop = true;
	if (!rmmod_mode) {
		for (i = 0; i < 2; i++)
			pthread_join(reg[i], NULL);
		pthread_join(app, NULL);
	}
	pthread_join(map, NULL);
	pthread_join(fork_th, NULL);
	reap(true);	/* every descendant, grandchildren included */

	for (i = 0; i < NR_CHILD_KINDS; i++)
		forks += cnt.spawned[i];
	say("# storm %.1f s: REGISTER %lu ok, %lu refused; UNREGISTER %lu ok, %lu ENOENT; %lu walks; %lu remaps; %lu JIT entries appended in %lu regions",
	    el, cnt.reg_ok, cnt.reg_refused, cnt.unreg_ok, cnt.unreg_enoent,
	    cnt.walks, cnt.remaps, cnt.jit_appends, cnt.jit_regions);
	if (!rmmod_mode)
		tap(cnt.jit_regions > 0, "a JIT region registered and appended to (%lu entries in %lu regions)",
		    cnt.jit_appends, cnt.jit_regions);
	off = snprintf(line, sizeof(line), "# %lu children:", forks);
	for (i = 0; i < NR_CHILD_KINDS; i++)
		off += snprintf(line + off, sizeof(line) - off, " %s %lu",
				child_kind[i], cnt.spawned[i]);
	say("%s", line);
	tap(!cnt.undocumented, "every answer documented for its option (%lu not)",
	    cnt.undocumented);
	tap(!cnt.child_bad, "every child, grandchild and exec'ed helper passed its checks (%lu of %lu did not)",
	    cnt.child_bad, forks);
	if (!rmmod_mode) {
		n = walk_check("the storm process at the end");
		tap(n >= 0, "at the end, %ld registrations, none over unmapped memory", n);
		removed = cc_unregister_all(g_fd);
		rc = cc_version(g_fd, &v);
		tap(removed >= 0 && !rc && !v.nr_registrations && !v.bytes,
		    "all %ld unregistered: nr_registrations %llu, bytes %llu",
		    removed, ULL(v.nr_registrations), ULL(v.bytes));
		tap(!t_nr_failed(), "no other failure recorded in the storm process (%d)",
		    t_nr_failed());
	} else {
		/* The module is gone or back: in either case nothing of ours. */
		g_fd = cc_open();
		if (g_fd < 0) {
			say("# after the storm: %s: %s", CODECTL_DEVICE, ename(g_fd));
		} else {
			n = cc_nr(g_fd);
			tap(n == 0, "after the storm, a reloaded module has %ld registrations of ours", n);
		}
	}
	return 0;
}

static void usage(FILE *f)
{
	fprintf(f, "usage: codectl-storm [-t SECONDS] [-s SEED] [-r] [-B]\n");
}

int main(int argc, char **argv)
{
	struct cstats_all base, now;
	int secs = 10, opt, status;
	bool stats_ok = false, beside = false;
	static char exe[4096];
	const char *env;
	ssize_t len;
	pid_t pid;

	setvbuf(stdout, NULL, _IONBF, 0);
	g_page = sysconf(_SC_PAGESIZE);
	len = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
	if (len > 0) {
		exe[len] = 0;
		g_self_exe = exe;
	}
	have_self = !self_image_get(&self);
	if (argc == 2 && !strcmp(argv[1], EXEC_HELPER))
		return helper_main(false);
	if (argc == 2 && !strcmp(argv[1], EXEC_HELPER_NOFD))
		return helper_main(true);

	seed = (uint64_t)time(NULL) * 1000003ULL ^ (uint64_t)getpid() << 20;
	env = getenv("CODECTL_STORM_SECONDS");
	if (env && atoi(env) > 0)
		secs = atoi(env);
	while ((opt = getopt(argc, argv, "t:s:rBh")) != -1) {
		switch (opt) {
		case 't':
			secs = atoi(optarg);
			break;
		case 's':
			seed = strtoull(optarg, NULL, 0);
			break;
		case 'r':
			rmmod_mode = true;
			break;
		case 'B':
			beside = true;
			break;
		case 'h':
			usage(stdout);
			return 0;
		default:
			usage(stderr);
			return 2;
		}
	}
	if (optind != argc || secs <= 0) {
		usage(stderr);
		return 2;
	}
	say("TAP version 13");
	say("# codectl-storm: seed %#llx, %d s%s (redo with -s %#llx)", ULL(seed), secs,
	    rmmod_mode ? ", rmmod mode" : "", ULL(seed));
	if (!rmmod_mode && !beside && stats_available() == T_PASS &&
	    !stats_settle_all(&base)) {
		stats_ok = true;
		stats_print_all("baseline", &base);
		stats_check_required(&base);
	}
	res = mmap(NULL, sizeof(*res), PROT_READ | PROT_WRITE,
		   MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	if (res == MAP_FAILED)
		return 1;
	if (rmmod_mode)
		signal(SIGUSR1, forward_rmmod_returned);
	pid = fork();
	if (!pid) {
		storm_main(secs);
		_exit(0);
	}
	storm_pid = pid;
	if (pid < 0 || waitpid(pid, &status, 0) != pid) {
		say("not ok 1 - fork/wait: %s\n0 passed, 1 failed", strerror(errno));
		return 1;
	}
	tap(WIFEXITED(status) && !WEXITSTATUS(status),
	    "the storm process exited normally (%s %d)",
	    WIFSIGNALED(status) ? "signal" : "status",
	    WIFSIGNALED(status) ? WTERMSIG(status) : WEXITSTATUS(status));
	if (stats_ok) {
		bool back = stats_wait_eq(&base, NULL, 10000, &now);

		stats_print_all("after the storm", &now);
		if (!back)
			stats_report_diff("after the storm", &base, &now, NULL);
		tap(back, "every debugfs counter back at the baseline after the storm");
	}
	if (nr_failed && !res->fail)
		tap(false, "%d failures recorded (see above)", nr_failed);
	say("%d passed, %d failed", res->pass, res->fail);
	return res->fail ? 1 : 0;
}
