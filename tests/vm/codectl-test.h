/* SPDX-License-Identifier: GPL-2.0 */
/*
 * codectl VM integration suite: shared harness and helper declarations.
 *
 * Every test talks to /dev/codectl with raw open()/ioctl() so the suite
 * tests the kernel ABI of uapi/linux/codectl.h and nothing else.
 */
#ifndef CODECTL_TEST_H
#define CODECTL_TEST_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>
#include <linux/codectl.h>
#include "testmod/codectl_test.h"

/* Test results; also the exit status of the forked test child. */
enum { T_PASS = 0, T_FAIL = 1, T_SKIP = 77 };

struct test_case {
	const char *name;
	int (*fn)(void);
	const char *what;
};

/* ---- failure recording (thread safe) ---------------------------------- */
void t_fail_at(const char *file, int line, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
void t_set_skip(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
int t_nr_failed(void);
pid_t t_fork_child(int (*fn)(void *), void *arg);
bool t_wait_child(pid_t pid, int sig, const char *what);
bool t_expect_rc_at(const char *file, int line, int got, int want,
		    const char *fmt, ...) __attribute__((format(printf, 5, 6)));

#define FAIL(...)	t_fail_at(__FILE__, __LINE__, __VA_ARGS__)
/* Record a failure and go on (independent checks). */
#define EXPECT(cond, ...) ((cond) ? true : (FAIL(__VA_ARGS__), false))
/* Record a failure and jump to the test's cleanup label "out". */
#define REQUIRE(cond, ...) do { if (!(cond)) { FAIL(__VA_ARGS__); goto out; } } while (0)
/*
 * got: 0 or -errno as returned by the cc_* helpers; want: 0 for success or
 * a positive errno.  The message names the call being checked.
 */
#define EXPECT_RC(got, want, ...) \
	t_expect_rc_at(__FILE__, __LINE__, (got), (want), __VA_ARGS__)
#define REQUIRE_RC(got, want, ...) \
	do { if (!EXPECT_RC(got, want, __VA_ARGS__)) goto out; } while (0)
#define SKIP(...) do { t_set_skip(__VA_ARGS__); return T_SKIP; } while (0)

const char *ename(int err);	/* "EEXIST" for EEXIST or -EEXIST, "success" for 0 */

/* ---- raw device access ------------------------------------------------ */
extern int g_fd;		/* /dev/codectl, opened by the harness per test */
/*
 * /dev/codectl_test of the test module (codectl_test.ko: UNWIND_REQUEST,
 * read/poll, SELFTEST, UNWIND with NOFAULT), opened by the harness per
 * test when it is loaded, else -errno.
 */
extern int g_tfd;
int cc_topen(void);		/* fd of /dev/codectl_test or -errno */
extern const char *g_self_exe;	/* path of this executable (for exec tests) */

int cc_open(void);		/* fd or -errno */
/* ioctl(fd, cmd, arg): 0 or -errno */
int cc_ioctl(int fd, unsigned long cmd, void *arg);
/* One option with every codectl_args field given explicitly. */
int cc_call(int fd, unsigned int opt, uint64_t info, uint64_t info_size,
	    uint32_t flags, uint32_t reserved);
int cc_version(int fd, struct codectl_version *v);
int cc_register_elf(int fd, const struct codectl_elf_info *ei);
int cc_register_jit(int fd, const struct codectl_jit_info *ji);
int cc_unregister(int fd, uint64_t start, uint64_t end);
int cc_query(int fd, struct codectl_query_info *q);
/*
 * Register [start, end) through g_fd: as JIT code with table @tbl when
 * @jit, else as an ELF object with pathname @path (NULL for none).
 */
int cc_register_range(bool jit, uint64_t start, uint64_t end, uint64_t tbl,
		      const char *path);
/* Registration at @addr (cursor semantics), no buffers: 0 or -errno. */
int cc_query_at(int fd, uint64_t addr, struct codectl_query_info *q);
long cc_nr(int fd);		/* VERSION.nr_registrations, or -errno */
long cc_walk_count(int fd);	/* registrations seen by a QUERY walk, or -errno */
long cc_unregister_all(int fd);	/* removes everything a QUERY walk sees */
/* Registrations a QUERY walk sees that discovery did not make, or -errno. */
long cc_explicit_count(int fd);
/*
 * Two CODECTL_IOC_UNWINDs: with discovery on (module parameter discover),
 * the module registers this process's objects after the first, so that
 * tests comparing counters take their baseline after it.
 */
void discovery_settle(int fd);

/*
 * Register and expect failure with @want; on unexpected success the
 * registration is removed again so later checks are not disturbed.
 */
bool expect_elf_fail_at(const char *file, int line, int fd,
			const struct codectl_elf_info *ei, int want,
			const char *what);
bool expect_jit_fail_at(const char *file, int line, int fd,
			const struct codectl_jit_info *ji, int want,
			const char *what);
#define EXPECT_ELF_FAIL(ei, want, what) \
	expect_elf_fail_at(__FILE__, __LINE__, g_fd, (ei), (want), (what))
#define EXPECT_JIT_FAIL(ji, want, what) \
	expect_jit_fail_at(__FILE__, __LINE__, g_fd, (ji), (want), (what))

/* ---- memory ----------------------------------------------------------- */
extern size_t g_page;
/* Anonymous private mapping of @pages pages, or NULL (failure recorded). */
void *map_pages(size_t pages, int prot);
/*
 * @pages accessible pages followed by one unmapped page (the hole starts
 * at base + pages * g_page).  Unmap with unmap_pages(base, pages).
 */
void *map_with_hole(size_t pages, int prot);
void unmap_pages(void *base, size_t pages);
bool set_prot(void *addr, size_t len, int prot);
/*
 * True when nothing is mapped anywhere in [addr, addr + len).  Holes made
 * by map_with_hole() can be refilled by later mmap() calls: tests check
 * their holes with this before relying on them.
 */
bool is_unmapped(uint64_t addr, size_t len);
#define REQUIRE_HOLE(addr) \
	REQUIRE(is_unmapped((uintptr_t)(addr), g_page), \
		"test setup: the hole at %#llx is mapped again", \
		(unsigned long long)(uintptr_t)(addr))
/* Address of a page that was just unmapped (nothing is mapped there). */
uint64_t unmapped_page(void);
/* An RX mapping whose bytes are "ret" instructions, or NULL. */
void *map_code(size_t pages);
/*
 * Debian's directory of the machine's own libraries, and its libc there:
 * an ELF object without SFrame in every guest.
 */
#if defined(__aarch64__)
#define MULTIARCH	"aarch64-linux-gnu"
#else
#define MULTIARCH	"x86_64-linux-gnu"
#endif
#define LIBC		"/lib/" MULTIARCH "/libc.so.6"

/* Addresses no user mapping can ever have. */
#define LOW_BAD_ADDR	0x1000ULL		/* below mmap_min_addr */
#define KERNEL_ADDR	0xffff888000000000ULL

/* ---- this process's own ELF image ------------------------------------- */
struct self_image {
	uint64_t elf_start, elf_end;		/* PT_LOAD span */
	uint64_t text_start, text_end;		/* executable PT_LOAD */
	uint64_t sframe_start, sframe_end;	/* .sframe, size from header */
	uint64_t sframe_seg_end;		/* PT_GNU_SFRAME p_memsz end */
	uint8_t build_id[CODECTL_BUILD_ID_MAX];
	uint32_t build_id_len;
	char path[CODECTL_PATH_MAX];
};
#ifndef PT_GNU_SFRAME
#define PT_GNU_SFRAME	0x6474e554
#endif
/* 0, or failure recorded and -1. */
int self_image_get(struct self_image *si);

/* ---- synthetic SFrame ------------------------------------------------- */
struct sframe_hdr {
	uint16_t magic;
	uint8_t version;
	uint8_t flags;
	uint8_t abi;
	int8_t cfa_fixed_fp_offset;
	int8_t cfa_fixed_ra_offset;
	uint8_t auxhdr_len;
	uint32_t num_fdes;
	uint32_t num_fres;
	uint32_t fre_len;
	uint32_t fdes_off;
	uint32_t fres_off;
} __attribute__((packed));
#define SFRAME_MAGIC		0xdee2
#define SFRAME_HDR_SIZE		28
/* This machine's SFrame ABI id, 0 if SFrame has none for it. */
uint8_t sframe_host_abi(void);

/*
 * Code and a matching SFrame section, as an object would have them:
 * page 0 is code (R-X), page 1 holds the .sframe (R--), page 2 is unmapped.
 * The section describes one 16-byte function at @text.
 */
struct sfr_obj {
	uint8_t *base;
	uint64_t text, text_end;	/* the function */
	uint64_t sframe, sframe_end;	/* exact section */
	uint64_t hole;			/* first unmapped byte */
};
/* version 1, 2 or 3; returns 0 or -1 (failure recorded). */
int sfr_obj_create(struct sfr_obj *o, int version);
void sfr_obj_destroy(struct sfr_obj *o);
/* Make the SFrame page writable, return its header; sfr_obj_seal() after. */
struct sframe_hdr *sfr_obj_edit(struct sfr_obj *o);
void sfr_obj_seal(struct sfr_obj *o);

/* ---- JIT tables ------------------------------------------------------- */
/*
 * Writes a table header at @t with @nr entries of @stride bytes each
 * (fre_size @size), @used of them published, covering consecutive 16-byte
 * pieces of code.
 */
void jit_table_init(struct codectl_jit_unwind_table *t, uint32_t size,
		    uint32_t stride, uint32_t nr, uint32_t used);

/* Copy file @from to @to (created or truncated, @mode): 0 or -1. */
int copy_file(const char *from, const char *to, mode_t mode);

/* ---- module parameters and debugfs stats ------------------------------ */
#define PARAM_DIR	"/sys/module/codectl/parameters/"
#define STATS_PATH	"/sys/kernel/debug/codectl/stats"
int param_read(const char *name, unsigned long long *val);	/* 0/-errno */
int param_write(const char *name, unsigned long long val);	/* 0/-errno */
/* The same for any parameter as text (without the newline). */
int param_read_str(const char *name, char *buf, size_t len);
int param_write_str(const char *name, const char *val);
/*
 * A test that changes a parameter first calls param_writable(); it returns
 * T_PASS when the parameter can be written, T_SKIP (reason set) when this
 * user may not write it, T_FAIL (recorded) when it is missing.
 */
int param_writable(const char *name);

struct cstats {
	long long mms, registrations, bytes;
};
/* T_PASS with *s filled, T_SKIP (reason set) or T_FAIL (recorded). */
int stats_available(void);
int stats_read(struct cstats *s);		/* 0 / -errno */
/* Read until two reads 200 ms apart agree (at most ~5 s). */
int stats_settle(struct cstats *s);
/*
 * Poll (up to @ms) until every counter is <= @base; true on success, with
 * the last reading in *last.
 */
bool stats_wait_le(const struct cstats *base, int ms, struct cstats *last);
void sleep_ms(int ms);
/* Wall-clock bounds' factor on the debug kernels (CODECTL_TIME_SCALE). */
unsigned int time_scale(void);

/*
 * Every counter of the stats file, whatever its names: the lifecycle
 * tests compare all of them with a baseline.  STATS_REQUIRED are the
 * counters that must be there.  STATS_EVENTS count events, not live
 * objects, and only ever grow: comparisons with a baseline skip them.
 * (fork_failures and unmap_nomem count events too, but none may happen
 * in a test: they are compared like the others.)
 */
#define STATS_MAX	24
#define STATS_REQUIRED	{ "mms", "registrations", "bytes", "sets", "works" }
#define STATS_EVENTS	{ "unmap_drops" }
struct cstats_all {
	int n;
	char name[STATS_MAX][64];
	long long val[STATS_MAX];
};
int stats_read_all(struct cstats_all *s);		/* 0 / -errno */
/* The value of counter @name, or -1 when the file has no such line. */
long long stats_get(const struct cstats_all *s, const char *name);
/* FAIL for each required counter missing from @s; true when none is. */
bool stats_check_required(const struct cstats_all *s);
/* Read until two reads 200 ms apart agree (at most ~5 s). */
int stats_settle_all(struct cstats_all *s);
/*
 * Poll (up to @ms) until every counter of @base equals its baseline,
 * except those named in @ignore (NULL-terminated list, or NULL); true on
 * success, the last reading in *last.
 */
bool stats_wait_eq(const struct cstats_all *base, const char *const *ignore,
		   int ms, struct cstats_all *last);
/* FAIL with every counter that differs from @base (after stats_wait_eq). */
void stats_report_diff(const char *when, const struct cstats_all *base,
		       const struct cstats_all *now, const char *const *ignore);
/* "# stats WHEN: name value ..." */
void stats_print_all(const char *when, const struct cstats_all *s);

/* Helper entry point used by the exec test (argv[1] == EXEC_CHECK_ARG). */
#define EXEC_CHECK_ARG	"--exec-check"
int exec_check_main(void);
/*
 * "--hold N" (for guest-suite.sh): register N ranges, close the fd, print
 * "held NR"; at EOF on stdin reopen the device and print "after: nr=NR"
 * (or "after: open ERRNO"); exit 0.
 */
#define HOLD_ARG	"--hold"
int hold_main(int n);
/* t_confine.c: sample sched_switch with call chains on every CPU */
#define SCHED_SAMPLE_ARG	"--sched-sample"
int sched_sample_main(int ms);
/* "--deferred-hammer SECS" (guest-suite.sh): see t_deferred.c. */
#define DHAMMER_ARG	"--deferred-hammer"
int deferred_hammer_main(int secs);

/* ---- the tests -------------------------------------------------------- */
#define TEST(n) int test_##n(void)
TEST(version); TEST(version_counts); TEST(params_access);
TEST(elf_register_query); TEST(elf_no_sframe); TEST(elf_sframe_versions);
TEST(query_cursor); TEST(query_buffers); TEST(query_many);
TEST(common_einval); TEST(common_e2big); TEST(common_efault);
TEST(info_at_page_end);
TEST(elf_einval); TEST(elf_efault_text); TEST(elf_efault_sframe);
TEST(elf_efault_pointers); TEST(elf_strings); TEST(elf_build_id);
TEST(elf_enoexec); TEST(sframe_validation); TEST(check_sframe); TEST(eexist); TEST(unregister); TEST(enotty);
TEST(jit_register); TEST(jit_einval); TEST(jit_efault);
TEST(limit_registrations); TEST(limit_bytes);
TEST(bounds_flat_expansion); TEST(bounds_sframe_walk); TEST(bounds_jit_chain);
TEST(bounds_jit_torn); TEST(bounds_memcg_charge);
TEST(fd_independence); TEST(fork_isolation);
TEST(concurrent_distinct); TEST(concurrent_same_range);
TEST(process_exit); TEST(process_exit_many); TEST(exec_releases);
TEST(vfork_exec);
/* t_life.c: fork, exec, exit and unmapping (issue 5) */
TEST(fork_inherits); TEST(fork_independent); TEST(fork_grandchild);
TEST(fork_signal_pending); TEST(fork_kill_early); TEST(vfork_shares); TEST(clone_vm_shares);
TEST(exec_clears); TEST(exec_thread_clears);
TEST(exit_last_thread); TEST(exit_sigkill);
TEST(munmap_text); TEST(munmap_sframe); TEST(munmap_jit_table);
TEST(munmap_partial); TEST(mremap_move); TEST(mremap_shrink);
TEST(map_fixed_over); TEST(mprotect_keeps); TEST(madvise_keeps);
TEST(munmap_unrelated_keeps); TEST(register_munmap_race);
TEST(unregister_after_drop_enoent);
/* t_deferred.c: deferred unwinding, read()/poll(), the self-test */
TEST(deferred_request); TEST(unwind_signal_leaf); TEST(unwind_leaf_norules); TEST(deferred_cookies); TEST(deferred_read);
TEST(deferred_blocking_read); TEST(deferred_overflow); TEST(deferred_threads);
TEST(deferred_close); TEST(deferred_selftest); TEST(deferred_selftest_remote);
TEST(deferred_selftest_errors); TEST(deferred_selftest_slow_exit);
TEST(deferred_consumer_module);
TEST(deferred_selftest_exit); TEST(deferred_selftest_kill);
TEST(hook_stats); TEST(hooks_param);
/* t_synth.c: synthesised SFrame sections, QUERY's origin */
TEST(synth_register); TEST(synth_errors); TEST(query_origin);
/* t_query.c: QUERY VER2, another process's registrations */
TEST(query_summary); TEST(query_pid_self); TEST(query_pid_child);
TEST(query_pid_esrch); TEST(query_pid_perm);
TEST(query_pid_maps_fd); TEST(query_pid_redirected);
TEST(discovery_sigkill);
/* t_import.c: CODECTL_IOC_IMPORT's errors */
TEST(import_errors);
/* t_demand.c: the demand queue, IMPORT_PRUNE */
TEST(demand_queue);
/* t_abi.c: the extensibility of the ABI */
TEST(abi_version_options); TEST(abi_import_sizes); TEST(abi_ioctl_sizes);
TEST(abi_no_test_facilities);

#endif /* CODECTL_TEST_H */
