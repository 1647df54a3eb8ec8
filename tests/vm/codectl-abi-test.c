// SPDX-License-Identifier: GPL-2.0
/*
 * codectl-abi-test: integration tests of the /dev/codectl ABI
 * (uapi/linux/codectl.h), run inside a guest with the codectl module.
 *
 *   codectl-abi-test [-l] [-n] [-t SECONDS] [-u UID[:GID]] [TEST...]
 *
 *   -l   list the tests and exit
 *   -n   run the tests in this process instead of one forked child each
 *        (for gdb; a crash then ends the run)
 *   -t   per-test timeout (default 300 s, or $CODECTL_TEST_TIMEOUT)
 *   -u   drop root first: no supplementary groups, this uid and gid
 *        (gid defaults to uid), e.g. -u 65534 for the unprivileged pass
 *   TEST run only the named tests (default: all, in table order)
 *
 * Tests that need root (changing module parameters, reading debugfs)
 * report SKIP without it.
 *
 * Output is TAP-like: "ok N - name", "not ok N - name: reason",
 * "ok N - name # SKIP reason", diagnostics as "# ..." lines, and a last line
 * "N passed, N failed" (", N skipped" when any).  Exit status 1 when a test
 * failed, 2 on usage errors.
 *
 * Each test runs in a forked child with a fresh /dev/codectl fd; the child
 * starts without registrations (the parent makes none) and must leave none:
 * the harness counts leftovers as a failure.  Module parameters changed by
 * a test are restored by the parent afterwards.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <pthread.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "codectl-test.h"

static const struct test_case tests[] = {
#define T(n, w) { #n, test_##n, w }
	T(version, "VERSION reports the ABI, options 0-4, limits"),
	T(version_counts, "VERSION nr_registrations/bytes follow registrations"),
	T(params_access, "module parameters readable; writable by root only"),
	T(elf_register_query, "REGISTER_ELF with all metadata, QUERY returns it"),
	T(elf_no_sframe, "REGISTER_ELF without SFrame and with unknown ELF range"),
	T(elf_sframe_versions, "SFrame v1, v2, v3 headers accepted"),
	T(query_cursor, "QUERY cursor walks registrations in address order"),
	T(query_buffers, "QUERY string/build-id buffer semantics and errors"),
	T(query_many, "500 registrations in random order, walk and remove"),
	T(common_einval, "EINVAL: flags, __reserved, info_size < VER0 (all options)"),
	T(common_e2big, "E2BIG: info_size > 4096, non-zero tail; zero tail accepted"),
	T(common_efault, "EFAULT: bad info/args pointers, unwritable output"),
	T(info_at_page_end, "info of exactly VER0 bytes before a hole is accepted"),
	T(elf_einval, "REGISTER_ELF EINVAL range and metadata checks"),
	T(elf_efault_text, "REGISTER_ELF EFAULT: text not mapped executable"),
	T(elf_efault_sframe, "REGISTER_ELF EFAULT: SFrame not mapped readable"),
	T(elf_efault_pointers, "REGISTER_ELF EFAULT: bad strings and build id"),
	T(elf_strings, "REGISTER_ELF string length limits"),
	T(elf_build_id, "REGISTER_ELF build id lengths: 64 ok, 65 EMSGSIZE"),
	T(elf_enoexec, "REGISTER_ELF ENOEXEC: corrupt SFrame headers"),
	T(sframe_validation, "ENOEXEC for bad FDEs/FREs unless validate_sframe is off"),
	T(check_sframe, "CHECK_SFRAME reports each defect's code, registers nothing"),
	T(eexist, "EEXIST on every kind of overlap, ELF and JIT"),
	T(unregister, "UNREGISTER ENOENT/EINVAL semantics"),
	T(enotty, "ENOTTY: unknown option, wrong size/magic/direction"),
	T(jit_register, "REGISTER_JIT happy paths, QUERY kind JIT"),
	T(jit_einval, "REGISTER_JIT EINVAL table header checks"),
	T(jit_efault, "REGISTER_JIT EFAULT: text and table mappings"),
	T(limit_registrations, "max_registrations: ENOSPC"),
	T(limit_bytes, "max_bytes: ENOMEM"),
	T(bounds_flat_expansion, "PCMASK expansion: sized first, in place or in a kernel copy, fast"),
	T(bounds_sframe_walk, "> 4096 FREs ENOEXEC; 1000 frames into 4096 FREs < 50 ms"),
	T(bounds_jit_chain, "JIT chain > 64 ELOOP; 1000 frames through 64 tables < 50 ms"),
	T(bounds_memcg_charge, "a flat table is charged to the registering process's memory cgroup"),
	T(bounds_jit_torn, "JIT used_len flipped during walks: never read torn"),
	T(fd_independence, "registrations belong to the mm, not the fd"),
	T(fork_isolation, "a child's registrations do not touch the parent's"),
	T(concurrent_distinct, "16 threads x 200 distinct ranges"),
	T(concurrent_same_range, "threads racing on one range: one winner"),
	T(process_exit, "8 children exit holding registrations: counters drop"),
	T(process_exit_many, "child exits holding 1000 registrations"),
	T(exec_releases, "exec drops the old address space's registrations"),
	T(vfork_exec, "a CLONE_VM child registers into the parent's mm, then execs"),
	T(fork_inherits, "fork: the child has exactly the parent's registrations at once"),
	T(fork_independent, "fork: parent and child change their own sets only"),
	T(fork_grandchild, "fork: a grandchild inherits, also once its parent is gone"),
	T(fork_signal_pending, "fork: a signal, stop or ptrace pending in the child costs nothing"),
	T(fork_kill_early, "fork: children killed at once leave nothing behind"),
	T(vfork_shares, "vfork: the child registers into and removes from the parent's set"),
	T(clone_vm_shares, "clone(CLONE_VM): one registry, no copy"),
	T(exec_clears, "exec: the new image has none, the old ones are freed"),
	T(exec_thread_clears, "exec from a non-main thread frees the old registrations"),
	T(exit_last_thread, "exit: freed when a thread other than main exits last"),
	T(exit_sigkill, "exit: SIGKILL frees own and inherited registrations"),
	T(munmap_text, "munmap of text drops the registration; new code is not registered"),
	T(munmap_sframe, "munmap of any page of the SFrame section drops it"),
	T(munmap_jit_table, "munmap of the first JIT table's header or reserved area drops it"),
	T(munmap_partial, "munmap of any part of a text range drops it"),
	T(mremap_move, "mremap moving text, SFrame or table away drops it"),
	T(mremap_shrink, "mremap shrinking into a registered range drops it"),
	T(map_fixed_over, "mmap(MAP_FIXED) over text, SFrame or table drops it"),
	T(mprotect_keeps, "mprotect changes no registration"),
	T(madvise_keeps, "madvise(MADV_DONTNEED, MADV_FREE) changes no registration"),
	T(munmap_unrelated_keeps, "unmapping next to or apart from registrations keeps them"),
	T(register_munmap_race, "REGISTER racing with munmap: refused or dropped, never stale"),
	T(unregister_after_drop_enoent, "after a drop: ENOENT, charges and counters back"),
	T(deferred_request, "UNWIND_REQUEST: cookie, tid, frames 0 and 1 of the record"),
#if defined(__aarch64__)	/* x86-64: tests/vm/unwind's signal tests */
	T(unwind_signal_leaf, "arm64: UNWIND in a handler, through the trampoline to the interrupted leaf and x30"),
	T(unwind_leaf_norules, "arm64: UNWIND from a leaf without rules: x30, then its caller's SFrame; not where x30 is saved"),
#endif
	T(deferred_cookies, "UNWIND_REQUEST: one cookie per ioctl, records in order"),
	T(deferred_read, "read/poll: EAGAIN, POLLIN, EINVAL short buffer, per-fd queues"),
	T(deferred_blocking_read, "read sleeps until a record arrives"),
	T(deferred_overflow, "64 records queued at most, lost counts the rest"),
	T(deferred_threads, "16 threads x 1000 requests: each its own records"),
	T(deferred_close, "files closed with records or requests pending leave nothing"),
	T(deferred_selftest, "SELFTEST: hrtimer and NMI consumers agree, 1 s at 100 us"),
	T(deferred_selftest_remote, "SELFTEST REMOTE: NMIs from another CPU interrupt user code"),
	T(deferred_selftest_errors, "SELFTEST: EPERM, EINVAL, EBUSY"),
	T(deferred_selftest_slow_exit, "SELFTEST SLOW: back to user space while requests outpace deliveries"),
	T(deferred_consumer_module, "another module's consumer: cookie, one callback per entry"),
	T(deferred_selftest_exit, "SELFTEST: target thread exits with requests pending"),
	T(deferred_selftest_kill, "SELFTEST: target process SIGKILLed while armed"),
	T(hook_stats, "HOOK_STATS: the tracer hooks, attached; EINVAL, ENOENT, EFAULT; EPERM unprivileged"),
	T(hooks_param, "hooks=0/1 detaches and attaches every hook; hooks=maybe EINVAL"),
	T(synth_register, "REGISTER_ELF SYNTH: a buffer copied at once, freed after"),
	T(synth_errors, "REGISTER_ELF SYNTH: EINVAL, EFAULT, ENOEXEC, EFBIG, ENOMEM; larger than sframe_flat_max"),
	T(query_origin, "QUERY VER1 origin: REGISTERED; VER0 callers unchanged"),
	T(query_summary, "QUERY VER2: SFrame version, FDEs, FREs, coverage, table"),
	T(query_pid_self, "QUERY pid: getpid() and gettid() answer as pid 0; EINVAL < 0"),
	T(query_pid_child, "QUERY pid: a child's registrations, not the parent's"),
	T(query_pid_esrch, "QUERY pid: ESRCH for a zombie, a reaped child, kthreadd"),
	T(query_pid_perm, "QUERY pid: EACCES for root's and undumpable processes as nobody"),
	T(query_pid_maps_fd, "QUERY pid: maps_fd must be procfs's maps of that pid"),
	T(query_pid_redirected, "QUERY pid: a /proc redirected in a user+mount ns is refused"),
	T(discovery_sigkill, "kill -9 ends a discovery waiting for a page; SIGKILL never blocked"),
	T(import_errors, "IMPORT: EPERM, EINVAL, EFBIG, EBADF, ENOEXEC, EFAULT, EEXIST, ENOENT, ETXTBSY"),
	T(demand_queue, "DEMAND: EPERM, EBUSY, ENOTTY; read EINVAL, EAGAIN; a record per file met; PRUNE"),
	T(abi_version_options, "VERSION VER1: options past 63 in options_map; EINVAL, EFAULT"),
	T(abi_import_sizes, "IMPORT: __reserved EINVAL, the VER0 number accepted, sizes"),
	T(abi_ioctl_sizes, "UNWIND, UNWIND_STATS, HOOK_STATS: other sizes, tails, ENOTTY"),
	T(abi_no_test_facilities, "UNWIND_REQUEST, read, SELFTEST, NOFAULT: the test module's only"),
#undef T
};
#define NR_TESTS (sizeof(tests) / sizeof(tests[0]))

/* ---- failure recording ------------------------------------------------ */

static pthread_mutex_t t_lock = PTHREAD_MUTEX_INITIALIZER;
static int t_failures;
static char t_reason[512];
static char t_skip[256];

void t_fail_at(const char *file, int line, const char *fmt, ...)
{
	char msg[400];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	pthread_mutex_lock(&t_lock);
	if (!t_failures++)
		snprintf(t_reason, sizeof(t_reason), "%s:%d: %s", file, line, msg);
	printf("#   FAIL %s:%d: %s\n", file, line, msg);
	fflush(stdout);
	pthread_mutex_unlock(&t_lock);
}

void t_set_skip(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(t_skip, sizeof(t_skip), fmt, ap);
	va_end(ap);
}

int t_nr_failed(void)
{
	int n;

	pthread_mutex_lock(&t_lock);
	n = t_failures;
	pthread_mutex_unlock(&t_lock);
	return n;
}

/* ---- running one test ------------------------------------------------- */

/* In the test process: returns T_PASS/T_FAIL/T_SKIP; reason in t_reason/t_skip. */
static int run_one(const struct test_case *tc)
{
	long before, after, walked, removed;
	int rc;

	t_failures = 0;
	t_reason[0] = t_skip[0] = 0;
	g_tfd = cc_topen();
	g_fd = cc_open();
	if (g_fd < 0) {
		FAIL("open " CODECTL_DEVICE ": %s", ename(g_fd));
		return T_FAIL;
	}
	/* Discovered registrations are the module's, not the test's. */
	before = cc_explicit_count(g_fd);
	if (before < 0) {
		FAIL("VERSION before the test: %s", ename(before));
		return T_FAIL;
	}
	rc = tc->fn();
	if (rc == T_PASS && t_nr_failed())
		rc = T_FAIL;	/* a check failed but the test said pass */
	if (rc == T_SKIP && t_nr_failed())
		rc = T_FAIL;
	if (rc == T_SKIP && !t_skip[0])
		snprintf(t_skip, sizeof(t_skip), "no reason given");

	/* Every test must remove what it registered. */
	after = cc_explicit_count(g_fd);
	walked = cc_walk_count(g_fd);
	if (after != before) {
		FAIL("left registrations behind: %ld -> %ld explicit ones, "
		     "QUERY walk sees %ld", before, after, walked);
		rc = T_FAIL;
		removed = cc_unregister_all(g_fd);
		if (removed < 0)
			FAIL("cleanup: unregistering leftovers: %s", ename(removed));
	}
	close(g_fd);
	g_fd = -1;
	if (g_tfd >= 0)
		close(g_tfd);
	g_tfd = -ENOENT;
	return rc;
}

struct saved_param {
	const char *name;
	char val[64];
	bool valid;
};
static struct saved_param saved_params[] = {
	{ .name = "max_registrations" }, { .name = "max_bytes" },
	{ .name = "validate_sframe" },
};
#define NR_SAVED (sizeof(saved_params) / sizeof(saved_params[0]))

static void params_save(void)
{
	size_t i;

	for (i = 0; i < NR_SAVED; i++)
		saved_params[i].valid =
			!param_read_str(saved_params[i].name, saved_params[i].val,
					sizeof(saved_params[i].val));
}

static void params_restore(void)
{
	char cur[64];
	size_t i;
	int rc;

	for (i = 0; i < NR_SAVED; i++) {
		struct saved_param *p = &saved_params[i];

		if (!p->valid || param_read_str(p->name, cur, sizeof(cur)) ||
		    !strcmp(cur, p->val))
			continue;
		rc = param_write_str(p->name, p->val);
		printf("# restored %s from %s to %s: %s\n", p->name, cur,
		       p->val, ename(rc));
	}
}

static volatile sig_atomic_t alarm_fired;

static void on_alarm(int sig)
{
	(void)sig;
	alarm_fired = 1;
}

struct result_msg {
	int rc;
	char text[512];
};

static int run_forked(const struct test_case *tc, unsigned int timeout,
		      char *reason, size_t rlen)
{
	struct result_msg msg = { .rc = -1 };
	int pfd[2], status, rc;
	pid_t pid, w;
	ssize_t n;

	if (pipe2(pfd, O_CLOEXEC)) {
		snprintf(reason, rlen, "pipe: %m");
		return T_FAIL;
	}
	fflush(stdout);
	fflush(stderr);
	pid = fork();
	if (pid < 0) {
		snprintf(reason, rlen, "fork: %m");
		close(pfd[0]);
		close(pfd[1]);
		return T_FAIL;
	}
	if (!pid) {
		setpgid(0, 0);
		close(pfd[0]);
		msg.rc = run_one(tc);
		snprintf(msg.text, sizeof(msg.text), "%s",
			 msg.rc == T_SKIP ? t_skip : t_reason);
		fflush(stdout);
		if (write(pfd[1], &msg, sizeof(msg)) != sizeof(msg))
			_exit(T_FAIL);
		_exit(msg.rc);
	}
	close(pfd[1]);
	setpgid(pid, pid);
	alarm_fired = 0;
	alarm(timeout);
	do {
		w = waitpid(pid, &status, 0);
	} while (w < 0 && errno == EINTR && !alarm_fired);
	alarm(0);
	if (w < 0) {
		kill(-pid, SIGKILL);
		kill(pid, SIGKILL);
		waitpid(pid, &status, 0);
		close(pfd[0]);
		snprintf(reason, rlen, "timed out after %u s", timeout);
		return T_FAIL;
	}
	/* Reap stray grandchildren the test may have left. */
	kill(-pid, SIGKILL);
	n = read(pfd[0], &msg, sizeof(msg));
	close(pfd[0]);
	if (WIFSIGNALED(status)) {
		snprintf(reason, rlen, "killed by signal %d (%s)",
			 WTERMSIG(status), strsignal(WTERMSIG(status)));
		return T_FAIL;
	}
	if (n != sizeof(msg)) {
		snprintf(reason, rlen, "test process exited with %d without a result",
			 WEXITSTATUS(status));
		return T_FAIL;
	}
	msg.text[sizeof(msg.text) - 1] = 0;
	snprintf(reason, rlen, "%s", msg.text);
	rc = msg.rc;
	if (WEXITSTATUS(status) != rc)
		rc = T_FAIL;
	return rc;
}

static const struct test_case *find_test(const char *name)
{
	size_t i;

	for (i = 0; i < NR_TESTS; i++)
		if (!strcmp(tests[i].name, name))
			return &tests[i];
	return NULL;
}

static void usage(FILE *f)
{
	fprintf(f, "usage: codectl-abi-test [-l] [-n] [-t SECONDS] [-u UID[:GID]] [TEST...]\n");
}

/* -u UID[:GID]: become an unprivileged user for good. */
static int drop_privileges(const char *spec)
{
	char *end;
	unsigned long uid = strtoul(spec, &end, 10), gid = uid;

	if (end == spec || (*end && *end != ':'))
		return -1;
	if (*end == ':') {
		gid = strtoul(end + 1, &end, 10);
		if (*end)
			return -1;
	}
	if (setgroups(0, NULL) || setresgid(gid, gid, gid) ||
	    setresuid(uid, uid, uid)) {
		fprintf(stderr, "codectl-abi-test: -u %s: %m\n", spec);
		return -1;
	}
	if (uid && (!setuid(0) || !geteuid())) {
		fprintf(stderr, "codectl-abi-test: -u %s: still root\n", spec);
		return -1;
	}
	return 0;
}

int main(int argc, char **argv)
{
	const struct test_case *sel[NR_TESTS * 4];
	unsigned int timeout = 300, nsel = 0, i;
	int pass = 0, fail = 0, skip = 0, opt;
	bool no_fork = false;
	struct sigaction sa;
	char reason[600];
	const char *env;
	static char exe[4096];
	ssize_t len;

	setvbuf(stdout, NULL, _IOLBF, 0);
	g_page = sysconf(_SC_PAGESIZE);
	len = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
	if (len > 0) {
		exe[len] = 0;
		g_self_exe = exe;
	}
	if (argc == 2 && !strcmp(argv[1], EXEC_CHECK_ARG))
		return exec_check_main();
	if (argc == 3 && !strcmp(argv[1], SCHED_SAMPLE_ARG))
		return sched_sample_main(atoi(argv[2]));
	if (argc == 3 && !strcmp(argv[1], HOLD_ARG))
		return hold_main(atoi(argv[2]));
	if (argc == 3 && !strcmp(argv[1], DHAMMER_ARG))
		return deferred_hammer_main(atoi(argv[2]));

	env = getenv("CODECTL_TEST_TIMEOUT");
	if (env && atoi(env) > 0)
		timeout = atoi(env);
	while ((opt = getopt(argc, argv, "lnt:u:h")) != -1) {
		switch (opt) {
		case 'l':
			for (i = 0; i < NR_TESTS; i++)
				printf("%-24s %s\n", tests[i].name, tests[i].what);
			return 0;
		case 'n':
			no_fork = true;
			break;
		case 't':
			timeout = atoi(optarg);
			if (!timeout) {
				usage(stderr);
				return 2;
			}
			break;
		case 'u':
			if (drop_privileges(optarg)) {
				usage(stderr);
				return 2;
			}
			break;
		case 'h':
			usage(stdout);
			return 0;
		default:
			usage(stderr);
			return 2;
		}
	}
	for (; optind < argc; optind++) {
		const struct test_case *tc = find_test(argv[optind]);

		if (!tc) {
			fprintf(stderr, "codectl-abi-test: no test named '%s' (-l lists them)\n",
				argv[optind]);
			return 2;
		}
		if (nsel < sizeof(sel) / sizeof(sel[0]))
			sel[nsel++] = tc;
	}
	if (!nsel)
		for (i = 0; i < NR_TESTS; i++)
			sel[nsel++] = &tests[i];

	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_alarm;	/* no SA_RESTART: interrupts waitpid */
	sigaction(SIGALRM, &sa, NULL);
	signal(SIGPIPE, SIG_IGN);
	params_save();

	printf("TAP version 13\n# uid %d gid %d\n1..%u\n", (int)getuid(),
	       (int)getgid(), nsel);
	for (i = 0; i < nsel; i++) {
		const struct test_case *tc = sel[i];
		int rc;

		printf("# %s: %s\n", tc->name, tc->what);
		if (no_fork) {
			rc = run_one(tc);
			snprintf(reason, sizeof(reason), "%s",
				 rc == T_SKIP ? t_skip : t_reason);
		} else {
			rc = run_forked(tc, timeout, reason, sizeof(reason));
		}
		params_restore();
		switch (rc) {
		case T_PASS:
			pass++;
			printf("ok %u - %s\n", i + 1, tc->name);
			break;
		case T_SKIP:
			skip++;
			printf("ok %u - %s # SKIP %s\n", i + 1, tc->name, reason);
			break;
		default:
			fail++;
			printf("not ok %u - %s: %s\n", i + 1, tc->name,
			       reason[0] ? reason : "failed");
			break;
		}
	}
	if (skip)
		printf("%d passed, %d failed, %d skipped\n", pass, fail, skip);
	else
		printf("%d passed, %d failed\n", pass, fail);
	return fail ? 1 : 0;
}
