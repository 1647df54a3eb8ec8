// SPDX-License-Identifier: GPL-2.0
/*
 * codectl VM integration suite: the extensibility of the ABI (issue 23,
 * "Attack surface and ABI").
 *
 *   abi_version_options  VERSION VER1: options past 63 through a caller's
 *                        bitmap (options_map), its checks
 *   abi_import_sizes     IMPORT: VER1's __reserved checked, the VER0
 *                        struct's ioctl number still accepted, sizes
 *                        from the ioctl number
 *   abi_ioctl_sizes      UNWIND, UNWIND_STATS, HOOK_STATS of other sizes:
 *                        zero tail accepted, non-zero tail E2BIG, output
 *                        tail zeroed, sizes outside VER0..4096 ENOTTY
 *   abi_no_test_facilities  the test facilities are the test module's
 *
 * Each fails against a module of ABI 1 (before these changes): there the
 * VER1 VERSION struct's non-zero tail is E2BIG and every ioctl number of
 * another size ENOTTY.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <unistd.h>

#include "codectl-test.h"

#define ULL(x) ((unsigned long long)(x))

/* The ioctl @cmd with its size field set to @size. */
static unsigned long ioc_sized(unsigned long cmd, size_t size)
{
	return _IOC(_IOC_DIR(cmd), _IOC_TYPE(cmd), _IOC_NR(cmd), size);
}

TEST(abi_version_options)
{
	struct codectl_version v;
	uint64_t map[4], *ro = NULL;
	int rc, i;

	_Static_assert(CODECTL_ABI_VERSION >= 2, "header's ABI");
	memset(map, 0xa5, sizeof(map));
	memset(&v, 0, sizeof(v));
	v.options_map = (uintptr_t)map;
	v.options_map_words = 4;
	v.nr_options = 0xdead;	/* an output: ignored on input */
	rc = cc_call(g_fd, CODECTL_VERSION, (uintptr_t)&v, sizeof(v), 0, 0);
	REQUIRE_RC(rc, 0, "VERSION VER1 with a 4-word options_map");
	EXPECT(v.abi_version == CODECTL_ABI_VERSION, "abi_version %u, not %u",
	       v.abi_version, CODECTL_ABI_VERSION);
	EXPECT(v.nr_options == CODECTL_NR_OPTIONS, "nr_options %u, not %u",
	       v.nr_options, CODECTL_NR_OPTIONS);
	EXPECT(v.options_map == (uintptr_t)map && v.options_map_words == 4,
	       "the inputs changed: %#llx, %u", ULL(v.options_map),
	       v.options_map_words);
	EXPECT(map[0] == v.options, "options_map[0] %#llx, options %#llx",
	       ULL(map[0]), ULL(v.options));
	EXPECT(map[0] == (1ULL << CODECTL_NR_OPTIONS) - 1,
	       "options_map[0] %#llx", ULL(map[0]));
	for (i = 1; i < 4; i++)
		EXPECT(map[i] == 0, "options_map[%d] %#llx, not zeroed", i,
		       ULL(map[i]));

	/* One word: fits every option of today. */
	memset(map, 0xa5, sizeof(map));
	v.options_map_words = 1;
	rc = cc_call(g_fd, CODECTL_VERSION, (uintptr_t)&v, sizeof(v), 0, 0);
	EXPECT_RC(rc, 0, "VERSION with a 1-word options_map");
	EXPECT(map[0] == v.options && map[1] == 0xa5a5a5a5a5a5a5a5ULL,
	       "1 word: %#llx %#llx", ULL(map[0]), ULL(map[1]));

	/* The VER0 struct and VER1 without a map: unchanged answers. */
	memset(&v, 0, sizeof(v));
	rc = cc_call(g_fd, CODECTL_VERSION, (uintptr_t)&v, sizeof(v), 0, 0);
	EXPECT_RC(rc, 0, "VERSION VER1 without a map");
	EXPECT(v.nr_options == CODECTL_NR_OPTIONS, "nr_options %u without a map",
	       v.nr_options);
	memset(&v, 0xff, sizeof(v));
	rc = cc_call(g_fd, CODECTL_VERSION, (uintptr_t)&v,
		     CODECTL_VERSION_SIZE_VER0, 0, 0);
	EXPECT_RC(rc, 0, "VERSION VER0 over garbage (every VER0 field is output)");
	EXPECT(v.options_map == ~0ULL, "VER0: wrote past its %d bytes",
	       CODECTL_VERSION_SIZE_VER0);

	/* The checks of the inputs. */
	memset(&v, 0, sizeof(v));
	v.options_map = (uintptr_t)map;
	rc = cc_call(g_fd, CODECTL_VERSION, (uintptr_t)&v, sizeof(v), 0, 0);
	EXPECT_RC(rc, EINVAL, "options_map without options_map_words");
	v.options_map = 0;
	v.options_map_words = 1;
	rc = cc_call(g_fd, CODECTL_VERSION, (uintptr_t)&v, sizeof(v), 0, 0);
	EXPECT_RC(rc, EINVAL, "options_map_words without options_map");
	v.options_map = (uintptr_t)map;
	v.options_map_words = CODECTL_OPTIONS_MAP_WORDS_MAX + 1;
	rc = cc_call(g_fd, CODECTL_VERSION, (uintptr_t)&v, sizeof(v), 0, 0);
	EXPECT_RC(rc, EINVAL, "options_map_words %d",
		  CODECTL_OPTIONS_MAP_WORDS_MAX + 1);
	ro = map_pages(1, PROT_READ);
	REQUIRE(ro, "mmap");
	v.options_map = (uintptr_t)ro;
	v.options_map_words = 2;
	rc = cc_call(g_fd, CODECTL_VERSION, (uintptr_t)&v, sizeof(v), 0, 0);
	EXPECT_RC(rc, EFAULT, "options_map read-only");
	v.options_map = unmapped_page();
	rc = cc_call(g_fd, CODECTL_VERSION, (uintptr_t)&v, sizeof(v), 0, 0);
	EXPECT_RC(rc, EFAULT, "options_map unmapped");
out:
	if (ro)
		unmap_pages(ro, 1);
	return T_PASS;
}

TEST(abi_import_sizes)
{
	struct {
		struct codectl_import_info i;
		uint8_t tail[16];
	} b;
	unsigned long ver0 = ioc_sized(CODECTL_IOC_IMPORT,
				       CODECTL_IMPORT_INFO_SIZE_VER0);
	bool root = geteuid() == 0;
	int rc;

	unsigned long ver1 = ioc_sized(CODECTL_IOC_IMPORT,
				       CODECTL_IMPORT_INFO_SIZE_VER1);

	_Static_assert(sizeof(b.i) == CODECTL_IMPORT_INFO_SIZE_VER2,
		       "struct codectl_import_info's size");
	_Static_assert(_IOC_SIZE(CODECTL_IOC_IMPORT) ==
		       CODECTL_IMPORT_INFO_SIZE_VER2, "CODECTL_IOC_IMPORT's size");
	/* REMOVE of fd -1: EBADF once the struct is accepted. */
	memset(&b, 0, sizeof(b));
	b.i.fd = -1;
	b.i.flags = CODECTL_IMPORT_REMOVE;
	rc = cc_ioctl(g_fd, CODECTL_IOC_IMPORT, &b);
	EXPECT_RC(rc, root ? EBADF : EPERM, "IMPORT VER2, __reserved 0");
	rc = cc_ioctl(g_fd, ver0, &b);
	EXPECT_RC(rc, root ? EBADF : EPERM, "IMPORT by the VER0 number");
	b.i.__reserved = 1;
	rc = cc_ioctl(g_fd, CODECTL_IOC_IMPORT, &b);
	EXPECT_RC(rc, root ? EINVAL : EPERM, "IMPORT VER1, __reserved 1");
	b.i.__reserved = 1ULL << 63;
	rc = cc_ioctl(g_fd, CODECTL_IOC_IMPORT, &b);
	EXPECT_RC(rc, root ? EINVAL : EPERM, "IMPORT VER1, __reserved bit 63");
	/* The VER0 number does not read __reserved. */
	rc = cc_ioctl(g_fd, ver0, &b);
	EXPECT_RC(rc, root ? EBADF : EPERM,
		  "IMPORT by the VER0 number, bytes past it set");
	b.i.__reserved = 0;
	/* VER1's number does not read the register table's fields (VER2). */
	b.i.regs_size = 1;
	rc = cc_ioctl(g_fd, CODECTL_IOC_IMPORT, &b);
	EXPECT_RC(rc, root ? EINVAL : EPERM, "IMPORT VER2, regs_size alone");
	rc = cc_ioctl(g_fd, ver1, &b);
	EXPECT_RC(rc, root ? EBADF : EPERM,
		  "IMPORT by the VER1 number, bytes past it set");
	b.i.regs_size = 0;
	/* A later, longer struct: zero tail read as ours, else E2BIG. */
	rc = cc_ioctl(g_fd, ioc_sized(CODECTL_IOC_IMPORT, sizeof(b)), &b);
	EXPECT_RC(rc, root ? EBADF : EPERM, "IMPORT of %zu bytes, zero tail",
		  sizeof(b));
	b.tail[15] = 1;
	rc = cc_ioctl(g_fd, ioc_sized(CODECTL_IOC_IMPORT, sizeof(b)), &b);
	EXPECT_RC(rc, root ? E2BIG : EPERM, "IMPORT of %zu bytes, tail set",
		  sizeof(b));
	/* Unknown flags, through both numbers. */
	memset(&b, 0, sizeof(b));
	b.i.fd = -1;
	b.i.flags = 0x8;
	EXPECT_RC(cc_ioctl(g_fd, CODECTL_IOC_IMPORT, &b), root ? EINVAL : EPERM,
		  "IMPORT VER1, flags 0x8");
	EXPECT_RC(cc_ioctl(g_fd, ver0, &b), root ? EINVAL : EPERM,
		  "IMPORT VER0, flags 0x8");
	/* Sizes no version has. */
	b.i.flags = CODECTL_IMPORT_REMOVE;
	EXPECT_RC(cc_ioctl(g_fd, ioc_sized(CODECTL_IOC_IMPORT,
					   CODECTL_IMPORT_INFO_SIZE_VER0 - 1),
			   &b), ENOTTY, "IMPORT of VER0 - 1 bytes");
	EXPECT_RC(cc_ioctl(g_fd, ioc_sized(CODECTL_IOC_IMPORT,
					   CODECTL_INFO_SIZE_MAX + 1),
			   &b), ENOTTY, "IMPORT of %d bytes",
		  CODECTL_INFO_SIZE_MAX + 1);
	EXPECT_RC(cc_ioctl(g_fd, _IOR(CODECTL_IOC_MAGIC, 0x46,
				      struct codectl_import_info), &b),
		  ENOTTY, "IMPORT as _IOR");
	return T_PASS;
}

TEST(abi_ioctl_sizes)
{
	struct {
		struct codectl_unwind_args a;
		uint8_t tail[16];
	} u;
	struct {
		struct codectl_hook_stats s;
		uint8_t tail[24];
	} h;
	struct {
		struct codectl_unwind_stats s;
		uint8_t tail[40];
	} st;
	uint64_t ips[16];
	bool perfmon = geteuid() == 0;
	size_t i;
	int rc;

	/* UNWIND, VER0 number and a longer struct with a zero tail. */
	memset(&u, 0, sizeof(u));
	u.a.ips = (uintptr_t)ips;
	u.a.max_frames = 16;
	rc = cc_ioctl(g_fd, CODECTL_IOC_UNWIND, &u);
	EXPECT_RC(rc, 0, "UNWIND");
	EXPECT(u.a.nr >= 1, "UNWIND gave %u frames", u.a.nr);
	memset(u.tail, 0, sizeof(u.tail));
	u.a.nr = 0;
	rc = cc_ioctl(g_fd, ioc_sized(CODECTL_IOC_UNWIND, sizeof(u)), &u);
	EXPECT_RC(rc, 0, "UNWIND of %zu bytes, zero tail", sizeof(u));
	EXPECT(u.a.nr >= 1, "UNWIND of %zu bytes gave %u frames", sizeof(u),
	       u.a.nr);
	for (i = 0; i < sizeof(u.tail); i++)
		if (u.tail[i]) {
			FAIL("UNWIND wrote %#x in the tail at %zu", u.tail[i], i);
			break;
		}
	u.tail[3] = 1;
	rc = cc_ioctl(g_fd, ioc_sized(CODECTL_IOC_UNWIND, sizeof(u)), &u);
	EXPECT_RC(rc, E2BIG, "UNWIND of %zu bytes, tail set", sizeof(u));
	u.tail[3] = 0;
	rc = cc_ioctl(g_fd, ioc_sized(CODECTL_IOC_UNWIND,
				      CODECTL_UNWIND_ARGS_SIZE_VER0 - 8), &u);
	EXPECT_RC(rc, ENOTTY, "UNWIND of VER0 - 8 bytes");
	rc = cc_ioctl(g_fd, ioc_sized(CODECTL_IOC_UNWIND,
				      CODECTL_INFO_SIZE_MAX + 8), &u);
	EXPECT_RC(rc, ENOTTY, "UNWIND of %d bytes", CODECTL_INFO_SIZE_MAX + 8);
	u.a.__reserved = 1;
	rc = cc_ioctl(g_fd, ioc_sized(CODECTL_IOC_UNWIND, sizeof(u)), &u);
	EXPECT_RC(rc, EINVAL, "UNWIND of %zu bytes, __reserved 1", sizeof(u));

	/* UNWIND_STATS: output only; a longer struct gets its tail zeroed. */
	memset(&st, 0xff, sizeof(st));
	rc = cc_ioctl(g_fd, ioc_sized(CODECTL_IOC_UNWIND_STATS, sizeof(st)),
		      &st);
	EXPECT_RC(rc, perfmon ? 0 : EPERM, "UNWIND_STATS of %zu bytes",
		  sizeof(st));
	if (!rc) {
		EXPECT(st.s.unwinds >= 2 && st.s.unwinds != ~0ULL,
		       "UNWIND_STATS: %llu unwinds", ULL(st.s.unwinds));
		for (i = 0; i < sizeof(st.tail); i++)
			if (st.tail[i]) {
				FAIL("UNWIND_STATS left %#x in the tail at %zu",
				     st.tail[i], i);
				break;
			}
	}
	EXPECT_RC(cc_ioctl(g_fd, ioc_sized(CODECTL_IOC_UNWIND_STATS, 8), &st),
		  ENOTTY, "UNWIND_STATS of 8 bytes");

	/* HOOK_STATS: in and out. */
	memset(&h, 0, sizeof(h));
	rc = cc_ioctl(g_fd, ioc_sized(CODECTL_IOC_HOOK_STATS, sizeof(h)), &h);
	EXPECT_RC(rc, perfmon ? 0 : EPERM, "HOOK_STATS of %zu bytes, zero tail",
		  sizeof(h));
	if (!rc)
		EXPECT(h.s.name[0], "HOOK_STATS of %zu bytes: no name",
		       sizeof(h));
	h.tail[0] = 1;
	rc = cc_ioctl(g_fd, ioc_sized(CODECTL_IOC_HOOK_STATS, sizeof(h)), &h);
	EXPECT_RC(rc, perfmon ? E2BIG : EPERM,
		  "HOOK_STATS of %zu bytes, tail set", sizeof(h));
	EXPECT_RC(cc_ioctl(g_fd, ioc_sized(CODECTL_IOC_HOOK_STATS,
					   CODECTL_HOOK_STATS_SIZE_VER0 - 8),
			   &h), ENOTTY, "HOOK_STATS of VER0 - 8 bytes");
	return T_PASS;
}

/*
 * The test facilities are not the product (ABI 3): on /dev/codectl the
 * numbers of UNWIND_REQUEST and SELFTEST_START/STOP are unknown, read()
 * has nothing, CODECTL_UNWIND_NOFAULT is an unknown flag; the test
 * module's /dev/codectl_test has them.  Against a module of ABI 2 or
 * older (main) UNWIND_REQUEST and NOFAULT succeed.
 */
TEST(abi_no_test_facilities)
{
	const unsigned long req = _IOR(CODECTL_IOC_MAGIC, 0x41, __u64);
	const unsigned long start = _IOW(CODECTL_IOC_MAGIC, 0x43,
					 struct codectl_selftest_args);
	const unsigned long stop = _IOWR(CODECTL_IOC_MAGIC, 0x44,
					 struct codectl_selftest_args);
	struct codectl_selftest_args sa;
	struct codectl_unwind_args a;
	uint64_t cookie = 0, ips[16], buf[64];
	ssize_t n;

	EXPECT_RC(cc_ioctl(g_fd, req, &cookie), ENOTTY,
		  "UNWIND_REQUEST's old number on " CODECTL_DEVICE);
	memset(&sa, 0, sizeof(sa));
	sa.period_us = 1000;
	EXPECT_RC(cc_ioctl(g_fd, start, &sa), ENOTTY,
		  "SELFTEST_START's old number on " CODECTL_DEVICE);
	EXPECT_RC(cc_ioctl(g_fd, stop, &sa), ENOTTY,
		  "SELFTEST_STOP's old number on " CODECTL_DEVICE);
	n = read(g_fd, buf, sizeof(buf));
	EXPECT(n < 0 && errno == EINVAL, "read() of " CODECTL_DEVICE
	       ": %zd (%s), expected EINVAL", n, n < 0 ? ename(errno) : "-");
	memset(&a, 0, sizeof(a));
	a.ips = (uintptr_t)ips;
	a.max_frames = 16;
	a.flags = CODECTL_UNWIND_NOFAULT;
	EXPECT_RC(cc_ioctl(g_fd, CODECTL_IOC_UNWIND, &a), EINVAL,
		  "UNWIND with NOFAULT on " CODECTL_DEVICE);
	/* The test module has them (the suite loads it). */
	REQUIRE(g_tfd >= 0, "open " CODECTL_TEST_DEVICE ": %s", ename(g_tfd));
	EXPECT_RC(cc_ioctl(g_tfd, CODECTL_TEST_IOC_UNWIND, &a), 0,
		  "UNWIND with NOFAULT on " CODECTL_TEST_DEVICE);
	/* A walk ran (its frames are the unwind tests' business). */
	printf("# NOFAULT walk through glibc's ioctl(): %u frames, stop %u\n",
	       a.nr, a.stop);
	EXPECT(a.stop > 0 && a.stop < CODECTL_STOP_NR, "NOFAULT walk: stop %u",
	       a.stop);
	EXPECT_RC(cc_ioctl(g_tfd, CODECTL_TEST_IOC_UNWIND_REQUEST, &cookie), 0,
		  "UNWIND_REQUEST on " CODECTL_TEST_DEVICE);
	EXPECT(cookie != 0, "cookie 0");
out:
	return T_PASS;
}
