// SPDX-License-Identifier: GPL-2.0
/*
 * codectl VM integration suite: every documented errno of every option.
 *
 * Each negative check is built from a call that succeeds (checked first),
 * changed in exactly one way, so a missing check in the kernel shows up as
 * an unexpected success; such a success is undone at once.
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

/* ---- a valid call of every option ------------------------------------- */

static const struct {
	unsigned int opt;
	const char *name;
	size_t ver0;
	size_t known;		/* this ABI's struct size */
} opts[] = {
	{ CODECTL_UNREGISTER, "UNREGISTER", CODECTL_UNREGISTER_INFO_SIZE_VER0,
	  sizeof(struct codectl_unregister_info) },
	{ CODECTL_REGISTER_ELF, "REGISTER_ELF", CODECTL_ELF_INFO_SIZE_VER0,
	  sizeof(struct codectl_elf_info) },
	{ CODECTL_REGISTER_JIT, "REGISTER_JIT", CODECTL_JIT_INFO_SIZE_VER0,
	  sizeof(struct codectl_jit_info) },
	{ CODECTL_QUERY, "QUERY", CODECTL_QUERY_INFO_SIZE_VER0,
	  sizeof(struct codectl_query_info) },
	{ CODECTL_CHECK_SFRAME, "CHECK_SFRAME", CODECTL_SFRAME_CHECK_SIZE_VER0,
	  sizeof(struct codectl_sframe_check) },
	/* VERSION last: info_at_page_end uses it as opts[NR_OPTS - 1]. */
	{ CODECTL_VERSION, "VERSION", CODECTL_VERSION_SIZE_VER0,
	  sizeof(struct codectl_version) },
};
#define NR_OPTS ((int)(sizeof(opts) / sizeof(opts[0])))

/*
 * One code page: [R] is registered (target of QUERY and UNREGISTER),
 * [E] and [J] are free for REGISTER_ELF and REGISTER_JIT.
 */
struct fixture {
	uint8_t *code;
	struct codectl_jit_unwind_table *tbl;
	uint64_t r, e, j;	/* each range is 64 bytes */
	bool r_registered;
};

static int register_r(struct fixture *f)
{
	struct codectl_elf_info ei = {
		.text_start = f->r, .text_end = f->r + 64,
		.pathname = (uintptr_t)"/fixture/r.so",
	};
	int rc = cc_register_elf(g_fd, &ei);

	f->r_registered = !rc;
	return rc;
}

static int fixture_setup(struct fixture *f)
{
	memset(f, 0, sizeof(*f));
	f->code = map_code(1);
	f->tbl = map_pages(1, PROT_READ | PROT_WRITE);
	if (!f->code || !f->tbl)
		return -1;
	jit_table_init(f->tbl, 24, 24, 8, 1);
	f->r = (uintptr_t)f->code + 0x100;
	f->e = (uintptr_t)f->code + 0x200;
	f->j = (uintptr_t)f->code + 0x300;
	return EXPECT_RC(register_r(f), 0, "fixture REGISTER_ELF") ? 0 : -1;
}

static void fixture_teardown(struct fixture *f)
{
	if (f->r_registered)
		EXPECT_RC(cc_unregister(g_fd, f->r, f->r + 64), 0,
			  "fixture UNREGISTER");
	unmap_pages(f->code, 1);
	unmap_pages(f->tbl, 1);
}

/* Write a valid info struct of option index @i at @buf. */
static void fixture_info(struct fixture *f, int i, void *buf)
{
	switch (opts[i].opt) {
	case CODECTL_UNREGISTER: {
		struct codectl_unregister_info u = { f->r, f->r + 64 };
		memcpy(buf, &u, opts[i].ver0);
		break;
	}
	case CODECTL_REGISTER_ELF: {
		struct codectl_elf_info ei = {
			.text_start = f->e, .text_end = f->e + 64,
		};
		memcpy(buf, &ei, opts[i].ver0);
		break;
	}
	case CODECTL_REGISTER_JIT: {
		struct codectl_jit_info ji = {
			.text_start = f->j, .text_end = f->j + 64,
			.unwind_head = (uintptr_t)f->tbl,
		};
		memcpy(buf, &ji, opts[i].ver0);
		break;
	}
	case CODECTL_QUERY: {
		struct codectl_query_info q = { .addr = 0 };
		memcpy(buf, &q, opts[i].ver0);
		break;
	}
	case CODECTL_VERSION: {
		struct codectl_version v = { 0 };
		memcpy(buf, &v, opts[i].ver0);
		break;
	}
	case CODECTL_CHECK_SFRAME: {
		/* Readable bytes that are no SFrame: the check runs, says no. */
		struct codectl_sframe_check c = {
			.sframe_start = f->r, .sframe_end = f->r + 64,
		};
		memcpy(buf, &c, opts[i].ver0);
		break;
	}
	}
}

/* After a call of option index @i returned @rc: undo what a success did. */
static void fixture_undo(struct fixture *f, int i, int rc)
{
	if (rc)
		return;
	switch (opts[i].opt) {
	case CODECTL_UNREGISTER:
		f->r_registered = false;
		EXPECT_RC(register_r(f), 0, "fixture: registering R again");
		break;
	case CODECTL_REGISTER_ELF:
		EXPECT_RC(cc_unregister(g_fd, f->e, f->e + 64), 0,
			  "fixture: removing E");
		break;
	case CODECTL_REGISTER_JIT:
		EXPECT_RC(cc_unregister(g_fd, f->j, f->j + 64), 0,
			  "fixture: removing J");
		break;
	}
}

/* Check the output of a successful QUERY/VERSION in @buf. */
static void fixture_check_output(struct fixture *f, int i, const void *buf,
				 const char *what)
{
	struct codectl_query_info q;
	struct codectl_version v;

	if (opts[i].opt == CODECTL_QUERY) {
		memset(&q, 0, sizeof(q));
		memcpy(&q, buf, opts[i].ver0);	/* the caller may have no more */
		EXPECT(q.text_start == f->r && q.text_end == f->r + 64 &&
		       q.kind == CODECTL_KIND_ELF,
		       "QUERY %s: answer [%#llx,%#llx) kind %u, expected the fixture",
		       what, ULL(q.text_start), ULL(q.text_end), q.kind);
	} else if (opts[i].opt == CODECTL_VERSION) {
		memcpy(&v, buf, opts[i].ver0);
		EXPECT(v.abi_version == CODECTL_ABI_VERSION,
		       "VERSION %s: abi_version %u", what, v.abi_version);
	} else if (opts[i].opt == CODECTL_CHECK_SFRAME) {
		struct codectl_sframe_check c;

		memcpy(&c, buf, opts[i].ver0);
		EXPECT(c.error == CODECTL_SFRAME_E_MAGIC,
		       "CHECK_SFRAME %s: error %u, expected E_MAGIC", what,
		       c.error);
	}
}

static uint64_t infobuf[(CODECTL_INFO_SIZE_MAX + 64) / 8];

static int call(int i, uint64_t size, uint32_t flags, uint32_t reserved)
{
	return cc_call(g_fd, opts[i].opt, (uintptr_t)infobuf, size, flags,
		       reserved);
}

TEST(common_einval)
{
	static const uint32_t bad[] = { 1, 2, 0x80000000, 0xffffffff };
	struct fixture f;
	int i, k, rc;

	if (fixture_setup(&f))
		goto out;
	for (i = 0; i < NR_OPTS; i++) {
		const size_t v0 = opts[i].ver0;
		const uint64_t small[] = { 0, 1, v0 - 1 };

		memset(infobuf, 0, sizeof(infobuf));
		fixture_info(&f, i, infobuf);
		rc = call(i, v0, 0, 0);
		if (!EXPECT_RC(rc, 0, "%s: the valid call", opts[i].name))
			continue;
		fixture_check_output(&f, i, infobuf, "valid call");
		fixture_undo(&f, i, rc);
		for (k = 0; k < 4; k++) {
			fixture_info(&f, i, infobuf);
			rc = call(i, v0, bad[k], 0);
			EXPECT_RC(rc, EINVAL, "%s with flags %#x", opts[i].name, bad[k]);
			fixture_undo(&f, i, rc);
			fixture_info(&f, i, infobuf);
			rc = call(i, v0, 0, bad[k]);
			EXPECT_RC(rc, EINVAL, "%s with codectl_args.__reserved %#x",
				  opts[i].name, bad[k]);
			fixture_undo(&f, i, rc);
		}
		for (k = 0; k < 3; k++) {
			fixture_info(&f, i, infobuf);
			rc = call(i, small[k], 0, 0);
			EXPECT_RC(rc, EINVAL, "%s with info_size %llu (VER0 %zu)",
				  opts[i].name, ULL(small[k]), v0);
			fixture_undo(&f, i, rc);
		}
	}
out:
	fixture_teardown(&f);
	return T_PASS;
}

TEST(common_e2big)
{
	static const uint64_t huge[] = {
		CODECTL_INFO_SIZE_MAX + 1, 8192, 1ULL << 32, UINT64_MAX,
	};
	uint8_t *b = (uint8_t *)infobuf;
	struct fixture f;
	int i, k, rc;

	if (fixture_setup(&f))
		goto out;
	for (i = 0; i < NR_OPTS; i++) {
		const size_t v0 = opts[i].ver0, kn = opts[i].known;
		const uint64_t zero_ok[] = { v0 + 1, v0 + 8, CODECTL_INFO_SIZE_MAX };
		/* Bytes past what this version of the ABI knows. */
		const struct { uint64_t size, at; } tail[] = {
			{ kn + 1, kn }, { kn + 8, kn + 7 },
			{ CODECTL_INFO_SIZE_MAX, CODECTL_INFO_SIZE_MAX - 1 },
			{ CODECTL_INFO_SIZE_MAX, kn },
		};

		for (k = 0; k < 4; k++) {
			memset(infobuf, 0, sizeof(infobuf));
			fixture_info(&f, i, infobuf);
			rc = call(i, huge[k], 0, 0);
			EXPECT_RC(rc, E2BIG, "%s with info_size %#llx", opts[i].name,
				  ULL(huge[k]));
			fixture_undo(&f, i, rc);
		}
		for (k = 0; k < 4; k++) {
			memset(infobuf, 0, sizeof(infobuf));
			fixture_info(&f, i, infobuf);
			b[tail[k].at] = 0x80;
			rc = call(i, tail[k].size, 0, 0);
			EXPECT_RC(rc, E2BIG, "%s with info_size %llu, byte %llu non-zero",
				  opts[i].name, ULL(tail[k].size), ULL(tail[k].at));
			fixture_undo(&f, i, rc);
		}
		for (k = 0; k < 3; k++) {
			memset(infobuf, 0, sizeof(infobuf));
			fixture_info(&f, i, infobuf);
			rc = call(i, zero_ok[k], 0, 0);
			if (EXPECT_RC(rc, 0, "%s with info_size %llu, zero tail",
				      opts[i].name, ULL(zero_ok[k]))) {
				size_t z;

				fixture_check_output(&f, i, infobuf, "longer struct");
				for (z = kn; z < zero_ok[k]; z++)
					if (b[z]) {
						FAIL("%s wrote %#x at offset %zu, beyond its struct",
						     opts[i].name, b[z], z);
						break;
					}
			}
			fixture_undo(&f, i, rc);
		}
	}
out:
	fixture_teardown(&f);
	return T_PASS;
}

TEST(common_efault)
{
	struct codectl_args args;
	struct fixture f;
	uint8_t *ro = NULL, *h = NULL;
	int i, k, rc;

	if (fixture_setup(&f))
		goto out;
	ro = map_pages(1, PROT_READ | PROT_WRITE);
	h = map_with_hole(1, PROT_READ | PROT_WRITE);	/* no mmap after this */
	REQUIRE(h && ro, "mmap");
	REQUIRE_HOLE(h + g_page);
	for (i = 0; i < NR_OPTS; i++) {
		const size_t v0 = opts[i].ver0;
		const uint64_t bad[] = {
			0, LOW_BAD_ADDR, KERNEL_ADDR, unmapped_page(),
			(uintptr_t)h + g_page - v0 / 2,	/* runs into the hole */
		};
		const char *const badn[] = {
			"NULL", "low unmapped", "kernel", "munmapped",
			"straddling a hole",
		};

		/* The readable first half of the straddling struct is valid. */
		memset(infobuf, 0, sizeof(infobuf));
		fixture_info(&f, i, infobuf);
		memcpy(h + g_page - v0 / 2, infobuf, v0 / 2);
		for (k = 0; k < 5; k++) {
			rc = cc_call(g_fd, opts[i].opt, bad[k], v0, 0, 0);
			EXPECT_RC(rc, EFAULT, "%s with a %s info pointer",
				  opts[i].name, badn[k]);
			fixture_undo(&f, i, rc);
		}
		/* Options that write @info back fail on read-only memory. */
		if (opts[i].opt == CODECTL_QUERY || opts[i].opt == CODECTL_VERSION ||
		    opts[i].opt == CODECTL_CHECK_SFRAME) {
			set_prot(ro, g_page, PROT_READ | PROT_WRITE);
			memset(ro, 0, g_page);
			fixture_info(&f, i, ro);
			set_prot(ro, g_page, PROT_READ);
			rc = cc_call(g_fd, opts[i].opt, (uintptr_t)ro, v0, 0, 0);
			EXPECT_RC(rc, EFAULT, "%s with info in read-only memory",
				  opts[i].name);
		}
	}
	/* The codectl_args pointer itself. */
	{
		const uint64_t bad[] = {
			0, LOW_BAD_ADDR, KERNEL_ADDR, unmapped_page(),
			(uintptr_t)h + g_page - sizeof(args) / 2,
		};

		for (k = 0; k < 5; k++) {
			rc = cc_ioctl(g_fd, CODECTL_IOC_VERSION,
				      (void *)(uintptr_t)bad[k]);
			EXPECT_RC(rc, EFAULT, "VERSION with codectl_args at %#llx",
				  ULL(bad[k]));
		}
	}
out:
	unmap_pages(h, 1);
	unmap_pages(ro, 1);
	fixture_teardown(&f);
	return T_PASS;
}

TEST(info_at_page_end)
{
	struct codectl_args *a;
	struct fixture f;
	uint8_t *h = NULL, *info;
	int i, rc;

	if (fixture_setup(&f))
		goto out;
	h = map_with_hole(1, PROT_READ | PROT_WRITE);
	REQUIRE(h, "mmap");
	REQUIRE_HOLE(h + g_page);
	for (i = 0; i < NR_OPTS; i++) {
		const size_t v0 = opts[i].ver0;

		/* VER0 bytes that end exactly where the hole starts. */
		set_prot(h, g_page, PROT_READ | PROT_WRITE);
		memset(h, 0, g_page);
		info = h + g_page - v0;
		fixture_info(&f, i, info);
		rc = cc_call(g_fd, opts[i].opt, (uintptr_t)info, v0, 0, 0);
		EXPECT_RC(rc, 0, "%s with info_size VER0 right before unmapped memory",
			  opts[i].name);
		if (!rc)
			fixture_check_output(&f, i, info, "at page end");
		fixture_undo(&f, i, rc);

		/* Input-only options must not write to @info. */
		if (opts[i].opt == CODECTL_QUERY || opts[i].opt == CODECTL_VERSION ||
		    opts[i].opt == CODECTL_CHECK_SFRAME)
			continue;
		fixture_info(&f, i, info);
		set_prot(h, g_page, PROT_READ);
		rc = cc_call(g_fd, opts[i].opt, (uintptr_t)info, v0, 0, 0);
		EXPECT_RC(rc, 0, "%s with info in read-only memory", opts[i].name);
		fixture_undo(&f, i, rc);
	}
	/* codectl_args itself right before the hole, read-only. */
	set_prot(h, g_page, PROT_READ | PROT_WRITE);
	a = (struct codectl_args *)(h + g_page - sizeof(*a));
	memset(infobuf, 0, sizeof(infobuf));
	*a = (struct codectl_args){
		.info = (uintptr_t)infobuf,
		.info_size = CODECTL_VERSION_SIZE_VER0,
	};
	set_prot(h, g_page, PROT_READ);
	rc = cc_ioctl(g_fd, CODECTL_IOC_VERSION, a);
	if (EXPECT_RC(rc, 0, "VERSION with read-only codectl_args before a hole"))
		fixture_check_output(&f, NR_OPTS - 1, infobuf, "args before a hole");
out:
	unmap_pages(h, 1);
	fixture_teardown(&f);
	return T_PASS;
}

/* ---- REGISTER_ELF ----------------------------------------------------- */

/* A valid registration of a synthetic object with SFrame and ELF range. */
static struct codectl_elf_info sfr_elf(const struct sfr_obj *o)
{
	return (struct codectl_elf_info){
		.elf_start = (uintptr_t)o->base,
		.elf_end = (uintptr_t)o->base + 2 * g_page,
		.text_start = o->text,
		.text_end = o->text_end,
		.sframe_start = o->sframe,
		.sframe_end = o->sframe_end,
	};
}

TEST(elf_einval)
{
	static const uint8_t bid[20] = { 1, 2, 3 };
	struct codectl_elf_info ok, ei;
	struct sfr_obj o;
	uint64_t B, T, S, Se, P;

	if (sfr_obj_create(&o, 1))
		return T_FAIL;
	ok = sfr_elf(&o);
	B = ok.elf_start;
	T = ok.text_start;
	S = ok.sframe_start;
	Se = ok.sframe_end;
	P = g_page;
	if (!EXPECT_RC(cc_register_elf(g_fd, &ok), 0, "the valid base registration"))
		goto out;
	EXPECT_RC(cc_unregister(g_fd, ok.text_start, ok.text_end), 0, "UNREGISTER");

#define CASE(field_changes, what) \
	do { ei = ok; field_changes; EXPECT_ELF_FAIL(&ei, EINVAL, what); } while (0)
	CASE(ei.text_end = ei.text_start, "text_start == text_end");
	CASE((ei.text_start = T + 16, ei.text_end = T), "text_start > text_end");
	CASE((ei.text_start = 0, ei.text_end = 0), "text range 0/0");
	CASE((ei.elf_start = 0, ei.elf_end = 0, ei.sframe_start = 0,
	      ei.sframe_end = 0, ei.text_end = 0), "text_end 0");
	CASE(ei.elf_end = 0, "elf_end 0, elf_start given");
	CASE(ei.elf_start = 0, "elf_start 0, elf_end given");
	CASE(ei.elf_end = ei.elf_start, "elf_start == elf_end");
	CASE((ei.elf_start = B + 2 * P, ei.elf_end = B), "elf_start > elf_end");
	CASE(ei.elf_start = B + P, "ELF range holds the SFrame but not the text");
	CASE(ei.elf_end = B + P, "ELF range holds the text but not the SFrame");
	CASE(ei.elf_start = T + 8, "ELF range holds half of the text");
	CASE(ei.elf_end = Se - 1, "ELF range ends inside the SFrame section");
	CASE((ei.elf_start = B + 3 * P, ei.elf_end = B + 4 * P),
	     "ELF range elsewhere");
	CASE(ei.sframe_end = 0, "sframe_end 0, sframe_start given");
	CASE(ei.sframe_start = 0, "sframe_start 0, sframe_end given");
	CASE(ei.sframe_end = S, "sframe_start == sframe_end");
	CASE((ei.sframe_start = Se, ei.sframe_end = S), "sframe_start > sframe_end");
	CASE((ei.build_id = (uintptr_t)bid, ei.build_id_len = 0),
	     "build_id given, build_id_len 0");
	CASE((ei.build_id = 0, ei.build_id_len = 20), "build_id 0, build_id_len 20");
	CASE(ei.debug_link_crc = 1, "debug_link_crc without a debug link");
	CASE(ei.debug_link_crc = 0x80000000, "debug_link_crc 0x80000000 without a debug link");
	CASE(ei.pathname = (uintptr_t)"", "empty pathname");
	CASE((ei.debug_link_pathname = (uintptr_t)"", ei.debug_link_crc = 7),
	     "empty debug link");
#undef CASE
out:
	sfr_obj_destroy(&o);
	return T_PASS;
}

TEST(elf_efault_text)
{
	struct codectl_elf_info ei = { 0 };
	uint8_t *p = NULL, *m = NULL, *x = NULL;
	uint64_t u;
	const int prots[] = { PROT_READ, PROT_NONE, PROT_READ | PROT_WRITE };
	int i, rc;

	/* Mapped, but not executable. */
	for (i = 0; i < 3; i++) {
		p = map_pages(1, prots[i]);
		if (!p)
			goto out;
		ei.text_start = (uintptr_t)p;
		ei.text_end = (uintptr_t)p + 64;
		EXPECT_ELF_FAIL(&ei, EFAULT, prots[i] == PROT_NONE ?
				"text in a PROT_NONE mapping" : prots[i] == PROT_READ ?
				"text in a PROT_READ mapping" : "text in a PROT_READ|PROT_WRITE mapping");
		unmap_pages(p, 1);
		p = NULL;
	}
	/* Not mapped at all. */
	u = unmapped_page();
	ei.text_start = u;
	ei.text_end = u + 64;
	EXPECT_ELF_FAIL(&ei, EFAULT, "text in a munmapped page");
	ei.text_start = LOW_BAD_ADDR;
	ei.text_end = LOW_BAD_ADDR + 0x1000;
	EXPECT_ELF_FAIL(&ei, EFAULT, "text below mmap_min_addr");
	ei.text_start = KERNEL_ADDR;
	ei.text_end = KERNEL_ADDR + 0x1000;
	EXPECT_ELF_FAIL(&ei, EFAULT, "text at a kernel address");
	ei.text_start = UINT64_MAX - 0xfff;
	ei.text_end = UINT64_MAX;
	EXPECT_ELF_FAIL(&ei, EFAULT, "text at the top of the address space");

	/* Three executable pages, the middle one unmapped. */
	m = map_code(3);
	if (!m)
		goto out;
	if (munmap(m + g_page, g_page)) {
		FAIL("munmap: %m");
		goto out;
	}
	REQUIRE_HOLE(m + g_page);
	ei.text_start = (uintptr_t)m;
	ei.text_end = (uintptr_t)m + 3 * g_page;
	EXPECT_ELF_FAIL(&ei, EFAULT, "text spanning a hole between two RX mappings");
	ei.text_start = (uintptr_t)m + g_page - 16;
	ei.text_end = (uintptr_t)m + g_page + 16;
	EXPECT_ELF_FAIL(&ei, EFAULT, "text running from RX into a hole");
	ei.text_start = (uintptr_t)m + 2 * g_page - 16;
	ei.text_end = (uintptr_t)m + 2 * g_page + 16;
	EXPECT_ELF_FAIL(&ei, EFAULT, "text starting in a hole, ending in RX");
	/* Ending exactly at the hole is fine: the end is exclusive. */
	ei.text_start = (uintptr_t)m;
	ei.text_end = (uintptr_t)m + g_page;
	rc = cc_register_elf(g_fd, &ei);
	if (EXPECT_RC(rc, 0, "REGISTER_ELF of a whole RX page followed by a hole"))
		EXPECT_RC(cc_unregister(g_fd, ei.text_start, ei.text_end), 0,
			  "UNREGISTER");
	ei.text_start = (uintptr_t)m + 2 * g_page;
	ei.text_end = (uintptr_t)m + 3 * g_page;
	rc = cc_register_elf(g_fd, &ei);
	if (EXPECT_RC(rc, 0, "REGISTER_ELF of a whole RX page after a hole"))
		EXPECT_RC(cc_unregister(g_fd, ei.text_start, ei.text_end), 0,
			  "UNREGISTER");

	/* An RX page followed by an R page (two VMAs, no hole). */
	x = map_code(2);
	if (!x || !set_prot(x + g_page, g_page, PROT_READ))
		goto out;
	ei.text_start = (uintptr_t)x + g_page - 16;
	ei.text_end = (uintptr_t)x + g_page + 16;
	EXPECT_ELF_FAIL(&ei, EFAULT, "text running from RX into a PROT_READ page");
	/* RX then RX with different flags (two VMAs): fine. */
	if (set_prot(x + g_page, g_page, PROT_READ | PROT_WRITE | PROT_EXEC)) {
		rc = cc_register_elf(g_fd, &ei);
		if (EXPECT_RC(rc, 0, "REGISTER_ELF across an RX and an RWX mapping"))
			EXPECT_RC(cc_unregister(g_fd, ei.text_start, ei.text_end),
				  0, "UNREGISTER");
	}
	/* Munmapped after being checked once: no stale answer. */
	unmap_pages(x, 2);
	EXPECT_ELF_FAIL(&ei, EFAULT, "text in a range just munmapped");
	x = NULL;
out:
	unmap_pages(p, 1);
	unmap_pages(m, 3);
	unmap_pages(x, 2);
	return T_PASS;
}

TEST(elf_efault_sframe)
{
	struct codectl_elf_info ei;
	struct sfr_obj o;
	uint64_t u;
	int rc;

	if (sfr_obj_create(&o, 1))
		return T_FAIL;
	ei = sfr_elf(&o);
	ei.elf_start = ei.elf_end = 0;	/* so only the mapping matters */

	REQUIRE_HOLE(o.hole);
	/* Sanity: up to the very first unmapped byte is fine. */
	ei.sframe_end = o.hole;
	rc = cc_register_elf(g_fd, &ei);
	if (EXPECT_RC(rc, 0, "REGISTER_ELF with sframe range ending at a hole"))
		EXPECT_RC(cc_unregister(g_fd, ei.text_start, ei.text_end), 0,
			  "UNREGISTER");

	ei.sframe_end = o.hole + 16;
	EXPECT_ELF_FAIL(&ei, EFAULT, "sframe range running into a hole");
	ei.sframe_end = o.hole + g_page;
	EXPECT_ELF_FAIL(&ei, EFAULT, "sframe range covering an unmapped page");

	ei.sframe_end = o.sframe_end;
	if (set_prot(o.base + g_page, g_page, PROT_NONE)) {
		EXPECT_ELF_FAIL(&ei, EFAULT, "sframe in a PROT_NONE page");
		sfr_obj_seal(&o);
	}
	u = unmapped_page();
	ei.sframe_start = u;
	ei.sframe_end = u + (o.sframe_end - o.sframe);
	EXPECT_ELF_FAIL(&ei, EFAULT, "sframe in a munmapped page");
	ei.sframe_start = LOW_BAD_ADDR;
	ei.sframe_end = LOW_BAD_ADDR + 64;
	EXPECT_ELF_FAIL(&ei, EFAULT, "sframe below mmap_min_addr");
	ei.sframe_start = KERNEL_ADDR;
	ei.sframe_end = KERNEL_ADDR + 64;
	EXPECT_ELF_FAIL(&ei, EFAULT, "sframe at a kernel address");
out:
	sfr_obj_destroy(&o);
	return T_PASS;
}

TEST(elf_efault_pointers)
{
	struct codectl_query_info q;
	struct codectl_elf_info ei, base;
	uint8_t *code, *h = NULL;
	char *s;
	uint64_t bad[3];
	int i, rc;

	code = map_code(1);
	h = map_with_hole(1, PROT_READ | PROT_WRITE);
	if (!code || !h)
		goto out;
	base = (struct codectl_elf_info){
		.text_start = (uintptr_t)code, .text_end = (uintptr_t)code + 64,
	};
	REQUIRE_HOLE(h + g_page);
	bad[0] = LOW_BAD_ADDR;
	bad[1] = KERNEL_ADDR;
	bad[2] = unmapped_page();
	for (i = 0; i < 3; i++) {
		ei = base;
		ei.pathname = bad[i];
		EXPECT_ELF_FAIL(&ei, EFAULT, "pathname pointer unreadable");
		ei = base;
		ei.debug_link_pathname = bad[i];
		EXPECT_ELF_FAIL(&ei, EFAULT, "debug link pointer unreadable");
		ei = base;
		ei.build_id = bad[i];
		ei.build_id_len = 20;
		EXPECT_ELF_FAIL(&ei, EFAULT, "build id pointer unreadable");
	}
	/* A string without NUL before a hole. */
	memset(h, 'a', g_page);
	s = (char *)h + g_page - 100;
	ei = base;
	ei.pathname = (uintptr_t)s;
	EXPECT_ELF_FAIL(&ei, EFAULT, "pathname running into unmapped memory");
	ei = base;
	ei.debug_link_pathname = (uintptr_t)s;
	EXPECT_ELF_FAIL(&ei, EFAULT, "debug link running into unmapped memory");
	/* A build id whose last bytes are in the hole. */
	ei = base;
	ei.build_id = (uintptr_t)h + g_page - 10;
	ei.build_id_len = 20;
	EXPECT_ELF_FAIL(&ei, EFAULT, "build id running into unmapped memory");

	/* Boundaries: NUL / last build id byte right before the hole. */
	h[g_page - 1] = 0;
	ei = base;
	ei.pathname = (uintptr_t)s;
	ei.debug_link_pathname = (uintptr_t)s;
	ei.build_id = (uintptr_t)h + g_page - 20;
	ei.build_id_len = 20;
	rc = cc_register_elf(g_fd, &ei);
	if (EXPECT_RC(rc, 0, "REGISTER_ELF with strings and build id ending right before a hole")) {
		memset(&q, 0, sizeof(q));
		rc = cc_query(g_fd, &q);
		if (EXPECT_RC(rc, 0, "QUERY"))
			EXPECT(q.pathname_len == 100 && q.debug_link_len == 100 &&
			       q.build_id_len == 20,
			       "lengths %u/%u/%u, expected 100/100/20",
			       q.pathname_len, q.debug_link_len, q.build_id_len);
		EXPECT_RC(cc_unregister(g_fd, ei.text_start, ei.text_end), 0,
			  "UNREGISTER");
	}
out:
	unmap_pages(code, 1);
	unmap_pages(h, 1);
	return T_PASS;
}

static char longstr[3 * CODECTL_PATH_MAX];
static char qbuf[2 * CODECTL_PATH_MAX];

TEST(elf_strings)
{
	struct codectl_query_info q;
	struct codectl_elf_info ei, base;
	uint8_t *code;
	int which, rc;

	code = map_code(1);
	if (!code)
		return T_FAIL;
	base = (struct codectl_elf_info){
		.text_start = (uintptr_t)code, .text_end = (uintptr_t)code + 64,
	};
	for (which = 0; which < 2; which++) {
		const char *name = which ? "debug link" : "pathname";
		const size_t lens[] = { CODECTL_PATH_MAX, CODECTL_PATH_MAX + 1,
					2 * CODECTL_PATH_MAX };
		int k;

		for (k = 0; k < 3; k++) {
			memset(longstr, 'p', sizeof(longstr));
			longstr[lens[k] - 1] = 0;	/* lens[k] bytes with the NUL */
			ei = base;
			if (which)
				ei.debug_link_pathname = (uintptr_t)longstr;
			else
				ei.pathname = (uintptr_t)longstr;
			if (k) {
				char what[80];

				snprintf(what, sizeof(what), "%s of %zu bytes with its NUL",
					 name, lens[k]);
				EXPECT_ELF_FAIL(&ei, ENAMETOOLONG, what);
				continue;
			}
			rc = cc_register_elf(g_fd, &ei);
			if (!EXPECT_RC(rc, 0, "REGISTER_ELF with a %s of exactly CODECTL_PATH_MAX bytes",
				       name))
				continue;
			memset(&q, 0, sizeof(q));
			memset(qbuf, 0, sizeof(qbuf));
			if (which) {
				q.debug_link_pathname = (uintptr_t)qbuf;
				q.debug_link_len = sizeof(qbuf);
			} else {
				q.pathname = (uintptr_t)qbuf;
				q.pathname_len = sizeof(qbuf);
			}
			rc = cc_query(g_fd, &q);
			if (EXPECT_RC(rc, 0, "QUERY")) {
				EXPECT((which ? q.debug_link_len : q.pathname_len) ==
				       CODECTL_PATH_MAX, "%s length %u, expected %d",
				       name, which ? q.debug_link_len : q.pathname_len,
				       CODECTL_PATH_MAX);
				EXPECT(!memcmp(qbuf, longstr, CODECTL_PATH_MAX),
				       "%s of 4096 bytes came back different", name);
			}
			EXPECT_RC(cc_unregister(g_fd, ei.text_start, ei.text_end), 0,
				  "UNREGISTER");
		}
	}
	unmap_pages(code, 1);
	return T_PASS;
}

TEST(elf_build_id)
{
	static uint8_t bid[256];
	const uint32_t good[] = { 1, 20, CODECTL_BUILD_ID_MAX };
	const uint32_t big[] = { CODECTL_BUILD_ID_MAX + 1, 255, 0x10000, UINT32_MAX };
	struct codectl_query_info q;
	struct codectl_elf_info ei, base;
	uint8_t out[CODECTL_BUILD_ID_MAX + 16];
	uint8_t *code;
	int i, rc;

	code = map_code(1);
	if (!code)
		return T_FAIL;
	for (i = 0; i < (int)sizeof(bid); i++)
		bid[i] = 0x31 * i + 7;
	base = (struct codectl_elf_info){
		.text_start = (uintptr_t)code, .text_end = (uintptr_t)code + 64,
		.build_id = (uintptr_t)bid,
	};
	for (i = 0; i < 3; i++) {
		ei = base;
		ei.build_id_len = good[i];
		rc = cc_register_elf(g_fd, &ei);
		if (!EXPECT_RC(rc, 0, "REGISTER_ELF with build_id_len %u", good[i]))
			continue;
		memset(&q, 0, sizeof(q));
		memset(out, 0xee, sizeof(out));
		q.build_id = (uintptr_t)out;
		q.build_id_len = CODECTL_BUILD_ID_MAX;
		rc = cc_query(g_fd, &q);
		if (EXPECT_RC(rc, 0, "QUERY")) {
			EXPECT(q.build_id_len == good[i], "build_id_len %u, expected %u",
			       q.build_id_len, good[i]);
			EXPECT(!memcmp(out, bid, good[i]),
			       "build id of %u bytes came back different", good[i]);
			EXPECT(out[CODECTL_BUILD_ID_MAX] == 0xee,
			       "QUERY wrote past the %d-byte build id buffer",
			       CODECTL_BUILD_ID_MAX);
		}
		/* A buffer one byte short: length reported, nothing copied. */
		memset(&q, 0, sizeof(q));
		memset(out, 0xee, sizeof(out));
		q.build_id = (uintptr_t)out;
		q.build_id_len = good[i] - 1;
		rc = cc_query(g_fd, &q);
		if (EXPECT_RC(rc, 0, "QUERY with a %u-byte build id buffer", good[i] - 1)) {
			EXPECT(q.build_id_len == good[i], "build_id_len %u, expected %u",
			       q.build_id_len, good[i]);
			EXPECT(out[0] == 0xee && out[good[i] - 1] == 0xee,
			       "build id copied into a buffer that is too small");
		}
		EXPECT_RC(cc_unregister(g_fd, ei.text_start, ei.text_end), 0,
			  "UNREGISTER");
	}
	for (i = 0; i < 4; i++) {
		char what[64];

		ei = base;
		ei.build_id_len = big[i];
		snprintf(what, sizeof(what), "build_id_len %u", big[i]);
		EXPECT_ELF_FAIL(&ei, EMSGSIZE, what);
	}
	unmap_pages(code, 1);
	return T_PASS;
}

TEST(elf_enoexec)
{
	struct codectl_elf_info ok, ei;
	struct sframe_hdr orig, *h;
	struct sfr_obj o;
	uint8_t host = sframe_host_abi();
	int i, rc;

	if (!host)
		SKIP("SFrame defines no ABI for this machine");
	if (sfr_obj_create(&o, 1))
		return T_FAIL;
	ok = sfr_elf(&o);
	memcpy(&orig, (void *)(uintptr_t)o.sframe, sizeof(orig));
	rc = cc_register_elf(g_fd, &ok);
	if (!EXPECT_RC(rc, 0, "the valid base registration"))
		goto out;
	EXPECT_RC(cc_unregister(g_fd, ok.text_start, ok.text_end), 0, "UNREGISTER");

	/* Header corruptions, each made in the read-only SFrame page. */
#define CORRUPT(change, what) \
	do { \
		h = sfr_obj_edit(&o); \
		change; \
		sfr_obj_seal(&o); \
		EXPECT_ELF_FAIL(&ok, ENOEXEC, what); \
		h = sfr_obj_edit(&o); \
		memcpy(h, &orig, sizeof(orig)); \
		sfr_obj_seal(&o); \
	} while (0)
	CORRUPT(h->magic = 0xdee3, "SFrame magic 0xdee3");
	CORRUPT(h->magic = 0xe2de, "SFrame magic byte-swapped");
	CORRUPT(h->magic = 0, "SFrame magic 0");
	CORRUPT(h->version = 0, "SFrame version 0");
	CORRUPT(h->version = 4, "SFrame version 4");
	CORRUPT(h->version = 0xff, "SFrame version 255");
	for (i = 0; i < 256; i += (i < 6 ? 1 : 249)) {
		char what[64];

		if (i == host)
			continue;
		snprintf(what, sizeof(what), "SFrame ABI %d (this machine: %d)", i,
			 host);
		CORRUPT(h->abi = i, what);
	}
	CORRUPT(h->auxhdr_len = 0xff, "auxhdr_len past the end of the range");
	CORRUPT(h->num_fdes = 2, "num_fdes 2: FDE array past the end");
	CORRUPT(h->num_fdes = UINT32_MAX, "num_fdes 0xffffffff");
	CORRUPT(h->fdes_off = 1000, "fdes_off past the end");
	CORRUPT(h->fdes_off = UINT32_MAX - 8, "fdes_off near 4 GiB (overflow)");
	CORRUPT(h->fres_off = 1000, "fres_off past the end");
	CORRUPT(h->fres_off = UINT32_MAX, "fres_off 0xffffffff");
	CORRUPT(h->fre_len = 1000, "fre_len past the end");
	CORRUPT(h->fre_len = UINT32_MAX, "fre_len 0xffffffff (overflow)");
#undef CORRUPT
	/* Valid header, range too short for it or for its contents. */
	ei = ok;
	ei.sframe_end = ei.sframe_start + SFRAME_HDR_SIZE - 1;
	EXPECT_ELF_FAIL(&ei, ENOEXEC, "sframe range 1 byte shorter than the header");
	ei.sframe_end = ei.sframe_start + 1;
	EXPECT_ELF_FAIL(&ei, ENOEXEC, "sframe range of 1 byte");
	ei.sframe_end = ok.sframe_end - 1;
	EXPECT_ELF_FAIL(&ei, ENOEXEC, "sframe range ends before the FREs do");
	ei.sframe_end = ei.sframe_start + SFRAME_HDR_SIZE;
	EXPECT_ELF_FAIL(&ei, ENOEXEC, "sframe range holding only the header");
out:
	sfr_obj_destroy(&o);
	return T_PASS;
}

/*
 * Offsets in the synthetic v1 section (sfr_obj_create), from its start:
 * the FDE follows the 28-byte header, the FRE follows the 17-byte FDE.
 */
#define V1_FDE			SFRAME_HDR_SIZE
#define V1_FDE_START		(V1_FDE + 0)	/* s32 */
#define V1_FDE_FRE_OFF		(V1_FDE + 8)	/* u32 */
#define V1_FDE_NUM_FRES		(V1_FDE + 12)	/* u32 */
#define V1_FDE_INFO		(V1_FDE + 16)	/* u8 */
#define V1_FRE			(V1_FDE + 17)
#define V1_FRE_START		(V1_FRE + 0)	/* u8 */
#define V1_FRE_INFO		(V1_FRE + 1)	/* u8 */

struct body_bug {
	size_t off, size;	/* bytes of the section to change */
	int64_t val;
	bool text_moved;	/* register text elsewhere instead */
	uint32_t code;		/* CODECTL_CHECK_SFRAME's verdict */
	const char *what;
};

static const struct body_bug body_bugs[] = {
	{ V1_FDE_FRE_OFF, 4, 100, false, CODECTL_SFRAME_E_FDE_FRE_OFF,
	  "FDE fre_off past the FRE sub-section" },
	{ V1_FDE_NUM_FRES, 4, 5, false, CODECTL_SFRAME_E_FRE_BOUNDS,
	  "FDE num_fres 5, one FRE present" },
	{ V1_FDE_INFO, 1, 3, false, CODECTL_SFRAME_E_FDE_INFO,
	  "FDE with FRE type 3" },
	{ V1_FRE_INFO, 1, 0x63, false, CODECTL_SFRAME_E_FRE_SIZE,
	  "FRE with value size 3" },
	{ V1_FRE_START, 1, 200, false, CODECTL_SFRAME_E_FRE_START,
	  "FRE starting past its 16-byte function" },
	{ V1_FDE_START, 4, -0x2000, false, CODECTL_SFRAME_E_FUNC_RANGE,
	  "function 8 KiB before the text range" },
	{ 0, 0, 0, true, CODECTL_SFRAME_E_FUNC_RANGE,
	  "text range not holding the function" },
};

/*
 * Register @o with body bug @b (or with @check, ask CODECTL_CHECK_SFRAME
 * about it instead); restores the section afterwards.
 */
static int try_body_bug(struct sfr_obj *o, const struct body_bug *b,
			struct codectl_sframe_check *check)
{
	struct codectl_elf_info ei = sfr_elf(o);
	uint8_t *sf = (uint8_t *)sfr_obj_edit(o), saved[8];
	int64_t v = b->val;
	int rc;

	if (b->off == V1_FDE_START) {
		int32_t s;

		memcpy(&s, sf + b->off, 4);
		v += s;
	}
	memcpy(saved, sf + b->off, b->size);
	memcpy(sf + b->off, &v, b->size);	/* little-endian host */
	sfr_obj_seal(o);
	if (b->text_moved) {
		ei.text_start = o->text + 0x100;
		ei.text_end = o->text + 0x200;
	}
	if (check) {
		*check = (struct codectl_sframe_check){
			.sframe_start = ei.sframe_start,
			.sframe_end = ei.sframe_end,
			.text_start = ei.text_start,
			.text_end = ei.text_end,
		};
		rc = cc_call(g_fd, CODECTL_CHECK_SFRAME, (uintptr_t)check,
			     sizeof(*check), 0, 0);
	} else {
		rc = cc_register_elf(g_fd, &ei);
		if (!rc)
			cc_unregister(g_fd, ei.text_start, ei.text_end);
	}
	sf = (uint8_t *)sfr_obj_edit(o);
	memcpy(sf + b->off, saved, b->size);
	sfr_obj_seal(o);
	return rc;
}

TEST(sframe_validation)
{
	struct codectl_elf_info ok;
	struct sframe_hdr *h;
	struct sfr_obj o;
	char orig[16] = "";
	bool changed = false;
	int i, rc;

#if __BYTE_ORDER__ != __ORDER_LITTLE_ENDIAN__
	SKIP("the corruptions are written for little-endian sections");
#endif
	if (!sframe_host_abi())
		SKIP("SFrame defines no ABI for this machine");
	rc = param_read_str("validate_sframe", orig, sizeof(orig));
	if (rc) {
		FAIL("reading " PARAM_DIR "validate_sframe: %s", ename(rc));
		return T_FAIL;
	}
	if (orig[0] != 'Y' && orig[0] != 'y' && orig[0] != '1') {
		if (geteuid() != 0)
			SKIP("validate_sframe is '%s' and uid %d cannot turn it on",
			     orig, (int)geteuid());
		rc = param_write_str("validate_sframe", "Y");
		if (!EXPECT_RC(rc, 0, "turning validate_sframe on"))
			return T_FAIL;
		changed = true;
	}
	if (sfr_obj_create(&o, 1))
		goto restore;
	ok = sfr_elf(&o);
	rc = cc_register_elf(g_fd, &ok);
	if (!EXPECT_RC(rc, 0, "the valid base registration"))
		goto out;
	EXPECT_RC(cc_unregister(g_fd, ok.text_start, ok.text_end), 0, "UNREGISTER");

	for (i = 0; i < (int)(sizeof(body_bugs) / sizeof(body_bugs[0])); i++)
		EXPECT_RC(try_body_bug(&o, &body_bugs[i], NULL), ENOEXEC,
			  "REGISTER_ELF, validate_sframe on: %s", body_bugs[i].what);

	/* Validation off: only the header is checked. */
	if (geteuid() != 0) {
		printf("# not root: validate_sframe=N not tried\n");
		goto out;
	}
	rc = param_write_str("validate_sframe", "N");
	if (!EXPECT_RC(rc, 0, "turning validate_sframe off"))
		goto out;
	changed = true;
	for (i = 0; i < (int)(sizeof(body_bugs) / sizeof(body_bugs[0])); i++)
		EXPECT_RC(try_body_bug(&o, &body_bugs[i], NULL), 0,
			  "REGISTER_ELF, validate_sframe off: %s", body_bugs[i].what);
	h = sfr_obj_edit(&o);
	h->magic = 0xdee3;
	sfr_obj_seal(&o);
	EXPECT_ELF_FAIL(&ok, ENOEXEC, "bad SFrame magic with validate_sframe off");
out:
	sfr_obj_destroy(&o);
restore:
	if (changed)
		EXPECT_RC(param_write_str("validate_sframe", orig), 0,
			  "restoring validate_sframe");
	return T_PASS;
}

/* Ask CODECTL_CHECK_SFRAME about [start, end) with an optional text range. */
static int check_range(uint64_t start, uint64_t end, uint64_t ts, uint64_t te,
		       struct codectl_sframe_check *c)
{
	*c = (struct codectl_sframe_check){
		.sframe_start = start, .sframe_end = end,
		.text_start = ts, .text_end = te,
		.error = 0xdead, .version = 0xdead,
	};
	return cc_call(g_fd, CODECTL_CHECK_SFRAME, (uintptr_t)c, sizeof(*c),
		       0, 0);
}

TEST(check_sframe)
{
	struct codectl_sframe_check c;
	struct self_image si;
	struct sframe_hdr *h;
	struct sfr_obj o;
	uint64_t hole;
	int i, rc;

	if (!sframe_host_abi())
		SKIP("SFrame defines no ABI for this machine");
	/* This program's own section, as gas and ld made it. */
	if (self_image_get(&si))
		return T_FAIL;
	rc = check_range(si.sframe_start, si.sframe_end, si.text_start,
			 si.text_end, &c);
	if (EXPECT_RC(rc, 0, "CHECK_SFRAME of this program's .sframe"))
		EXPECT(c.error == CODECTL_SFRAME_OK && c.version >= 1 &&
		       c.version <= 3 && c.num_fdes > 0 && c.num_fres >= c.num_fdes,
		       "own section: error %u version %u fdes %u fres %u",
		       c.error, c.version, c.num_fdes, c.num_fres);
	/* Without a text range, and registering nothing. */
	rc = check_range(si.sframe_start, si.sframe_end, 0, 0, &c);
	EXPECT(rc == 0 && c.error == CODECTL_SFRAME_OK,
	       "own section without text range: rc %s error %u", ename(rc),
	       c.error);
	EXPECT(cc_nr(g_fd) == 0, "CHECK_SFRAME registered something");

#if __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
	/* Each defect gives its own code, whatever validate_sframe says. */
	if (sfr_obj_create(&o, 1))
		return T_FAIL;
	for (i = 0; i < (int)(sizeof(body_bugs) / sizeof(body_bugs[0])); i++) {
		rc = try_body_bug(&o, &body_bugs[i], &c);
		EXPECT(rc == 0 && c.error == body_bugs[i].code,
		       "%s: rc %s, error %u, expected %u", body_bugs[i].what,
		       ename(rc), c.error, body_bugs[i].code);
	}
	h = sfr_obj_edit(&o);
	h->version = 4;
	sfr_obj_seal(&o);
	rc = check_range(o.sframe, o.sframe_end, 0, 0, &c);
	EXPECT(rc == 0 && c.error == CODECTL_SFRAME_E_VERSION && c.version == 0,
	       "version 4: rc %s error %u version %u", ename(rc), c.error,
	       c.version);
	h = sfr_obj_edit(&o);
	h->version = 1;
	h->magic = 0xdee3;
	sfr_obj_seal(&o);
	rc = check_range(o.sframe, o.sframe_end, 0, 0, &c);
	EXPECT(rc == 0 && c.error == CODECTL_SFRAME_E_MAGIC,
	       "bad magic: rc %s error %u", ename(rc), c.error);
	rc = check_range(o.sframe, o.sframe + 10, 0, 0, &c);
	EXPECT(rc == 0 && c.error == CODECTL_SFRAME_E_TRUNCATED,
	       "10-byte range: rc %s error %u", ename(rc), c.error);
	sfr_obj_destroy(&o);
#endif

	/* The arguments. */
	EXPECT_RC(check_range(si.sframe_end, si.sframe_start, 0, 0, &c), EINVAL,
		  "inverted range");
	EXPECT_RC(check_range(si.sframe_start, si.sframe_end, si.text_start, 0,
			      &c), EINVAL, "text_end 0 alone");
	EXPECT_RC(check_range(si.sframe_start, si.sframe_end, si.text_end,
			      si.text_start, &c), EINVAL, "inverted text range");
	hole = unmapped_page();
	EXPECT_RC(check_range(hole, hole + 4096, 0, 0, &c), EFAULT,
		  "unmapped range");
	return t_nr_failed() ? T_FAIL : T_PASS;
}

/* ---- EEXIST, UNREGISTER, ENOTTY --------------------------------------- */

TEST(eexist)
{
	struct codectl_jit_unwind_table *tbl = NULL;
	struct codectl_query_info q;
	struct codectl_elf_info ei;
	struct codectl_jit_info ji;
	uint8_t *code = NULL;
	uint64_t c, R, J;
	bool r_reg = false, j_reg = false;
	char path[64];
	int t, k, rc;

	code = map_code(2);
	tbl = map_pages(1, PROT_READ | PROT_WRITE);
	if (!code || !tbl)
		goto out;
	jit_table_init(tbl, 24, 24, 4, 1);
	c = (uintptr_t)code;
	R = c + 0x100;		/* ELF [R, R + 0x100) */
	J = c + 0x400;		/* JIT [J, J + 0x100) */
	ei = (struct codectl_elf_info){
		.text_start = R, .text_end = R + 0x100,
		.pathname = (uintptr_t)"/eexist/r.so",
	};
	REQUIRE_RC(cc_register_elf(g_fd, &ei), 0, "REGISTER_ELF R");
	r_reg = true;
	ji = (struct codectl_jit_info){
		.text_start = J, .text_end = J + 0x100,
		.unwind_head = (uintptr_t)tbl,
	};
	REQUIRE_RC(cc_register_jit(g_fd, &ji), 0, "REGISTER_JIT J");
	j_reg = true;

	for (t = 0; t < 2; t++) {
		const uint64_t b = t ? J : R;
		const char *tn = t ? "JIT" : "ELF";
		const struct { uint64_t s, e; const char *what; } ov[] = {
			{ b, b + 0x100, "the same range" },
			{ b - 0x80, b + 1, "overlap on the left by 1 byte" },
			{ b + 0xff, b + 0x180, "overlap on the right by 1 byte" },
			{ b - 0x10, b + 0x110, "a containing range" },
			{ b + 0x40, b + 0x50, "a contained range" },
			{ b, b + 1, "its first byte" },
			{ b + 0xff, b + 0x100, "its last byte" },
			{ b, b + 0x80, "same start, shorter" },
			{ b + 0x80, b + 0x100, "same end, shorter" },
			{ c, c + 2 * g_page, "a range holding both registrations" },
		};

		for (k = 0; k < (int)(sizeof(ov) / sizeof(ov[0])); k++) {
			struct codectl_elf_info e2 = {
				.text_start = ov[k].s, .text_end = ov[k].e,
			};
			struct codectl_jit_info j2 = {
				.text_start = ov[k].s, .text_end = ov[k].e,
				.unwind_head = (uintptr_t)tbl,
			};

			snprintf(path, sizeof(path), "over %s: %s", tn, ov[k].what);
			EXPECT_ELF_FAIL(&e2, EEXIST, path);
			EXPECT_JIT_FAIL(&j2, EEXIST, path);
		}
		/* Touching ranges do not overlap (half-open). */
		{
			const uint64_t adj[2][2] = { { b - 0x40, b }, { b + 0x100, b + 0x140 } };

			for (k = 0; k < 2; k++) {
				struct codectl_elf_info e2 = {
					.text_start = adj[k][0], .text_end = adj[k][1],
				};

				rc = cc_register_elf(g_fd, &e2);
				if (EXPECT_RC(rc, 0, "REGISTER_ELF touching %s %s", tn,
					      k ? "on the right" : "on the left"))
					EXPECT_RC(cc_unregister(g_fd, adj[k][0], adj[k][1]),
						  0, "UNREGISTER");
			}
		}
	}
	/* Nothing changed: R and J as registered, nothing else. */
	{
		char pbuf[64] = "";

		memset(&q, 0, sizeof(q));
		q.pathname = (uintptr_t)pbuf;
		q.pathname_len = sizeof(pbuf);
		rc = cc_query(g_fd, &q);
		if (EXPECT_RC(rc, 0, "QUERY R"))
			EXPECT(q.text_start == R && q.text_end == R + 0x100 &&
			       q.kind == CODECTL_KIND_ELF &&
			       !strcmp(pbuf, "/eexist/r.so"),
			       "R changed: [%#llx,%#llx) kind %u path '%s'",
			       ULL(q.text_start), ULL(q.text_end), q.kind, pbuf);
		rc = cc_query_at(g_fd, R + 0x100, &q);
		if (EXPECT_RC(rc, 0, "QUERY J"))
			EXPECT(q.text_start == J && q.text_end == J + 0x100 &&
			       q.kind == CODECTL_KIND_JIT &&
			       q.unwind_head == (uintptr_t)tbl,
			       "J changed: [%#llx,%#llx) kind %u head %#llx",
			       ULL(q.text_start), ULL(q.text_end), q.kind,
			       ULL(q.unwind_head));
		EXPECT(cc_nr(g_fd) == 2, "nr_registrations %ld, expected 2",
		       cc_nr(g_fd));
	}
out:
	if (r_reg)
		EXPECT_RC(cc_unregister(g_fd, R, R + 0x100), 0, "UNREGISTER R");
	if (j_reg)
		EXPECT_RC(cc_unregister(g_fd, J, J + 0x100), 0, "UNREGISTER J");
	unmap_pages(code, 2);
	unmap_pages(tbl, 1);
	return T_PASS;
}

TEST(unregister)
{
	struct codectl_jit_unwind_table *tbl = NULL;
	struct codectl_query_info q;
	struct codectl_elf_info ei;
	struct codectl_jit_info ji;
	uint8_t *code = NULL;
	uint64_t a, b;
	bool reg = false;
	int k, rc;

	code = map_code(1);
	tbl = map_pages(1, PROT_READ | PROT_WRITE);
	if (!code || !tbl)
		goto out;
	jit_table_init(tbl, 24, 24, 4, 1);
	a = (uintptr_t)code + 0x100;
	b = a + 0x100;
	EXPECT_RC(cc_unregister(g_fd, a, b), ENOENT, "UNREGISTER with nothing registered");
	ei = (struct codectl_elf_info){ .text_start = a, .text_end = b };
	REQUIRE_RC(cc_register_elf(g_fd, &ei), 0, "REGISTER_ELF");
	reg = true;
	{
		const struct { uint64_t s, e; const char *what; } miss[] = {
			{ a, b + 1, "end one past" },
			{ a, b - 1, "end one short" },
			{ a - 1, b, "start one early" },
			{ a + 1, b, "start one late" },
			{ a + 0x10, a + 0x20, "a sub-range" },
			{ 0, UINT64_MAX, "a range containing it" },
			{ b, b + 0x100, "the range after it" },
		};

		for (k = 0; k < (int)(sizeof(miss) / sizeof(miss[0])); k++)
			EXPECT_RC(cc_unregister(g_fd, miss[k].s, miss[k].e), ENOENT,
				  "UNREGISTER %s", miss[k].what);
	}
	EXPECT_RC(cc_unregister(g_fd, a, a), EINVAL, "UNREGISTER start == end");
	EXPECT_RC(cc_unregister(g_fd, b, a), EINVAL, "UNREGISTER start > end");
	EXPECT_RC(cc_unregister(g_fd, 0, 0), EINVAL, "UNREGISTER 0/0");
	/* Nothing changed. */
	rc = cc_query_at(g_fd, 0, &q);
	if (EXPECT_RC(rc, 0, "QUERY after failed UNREGISTERs"))
		EXPECT(q.text_start == a && q.text_end == b,
		       "registration changed to [%#llx,%#llx)", ULL(q.text_start),
		       ULL(q.text_end));
	REQUIRE_RC(cc_unregister(g_fd, a, b), 0, "UNREGISTER");
	reg = false;
	EXPECT_RC(cc_unregister(g_fd, a, b), ENOENT, "UNREGISTER a second time");
	EXPECT_RC(cc_query_at(g_fd, 0, &q), ENOENT, "QUERY after UNREGISTER");
	/* JIT registrations go the same way; the range can be reused. */
	ji = (struct codectl_jit_info){
		.text_start = a, .text_end = b, .unwind_head = (uintptr_t)tbl,
	};
	REQUIRE_RC(cc_register_jit(g_fd, &ji), 0, "REGISTER_JIT on the freed range");
	EXPECT_RC(cc_unregister(g_fd, a, b), 0, "UNREGISTER of the JIT registration");
	EXPECT_RC(cc_unregister(g_fd, a, b), ENOENT, "UNREGISTER JIT a second time");
out:
	if (reg)
		cc_unregister(g_fd, a, b);
	unmap_pages(code, 1);
	unmap_pages(tbl, 1);
	return T_PASS;
}

TEST(enotty)
{
	struct codectl_version v;
	struct codectl_args a;
	unsigned int nr;
	int k, rc;
	const struct { unsigned long cmd; const char *what; } bad[] = {
		{ CODECTL_IOC(99), "CODECTL_IOC(99)" },
		{ CODECTL_IOC(CODECTL_NR_OPTIONS), "CODECTL_IOC(CODECTL_NR_OPTIONS)" },
		{ CODECTL_IOC(255), "CODECTL_IOC(255)" },
		{ _IOW(CODECTL_IOC_MAGIC, CODECTL_VERSION, struct codectl_version),
		  "VERSION nr with the size of codectl_version" },
		{ _IOW(CODECTL_IOC_MAGIC, CODECTL_VERSION, __u64), "VERSION nr, size 8" },
		{ _IOW(CODECTL_IOC_MAGIC, CODECTL_REGISTER_ELF, struct codectl_elf_info),
		  "REGISTER_ELF nr with the size of codectl_elf_info" },
		{ _IOW(CODECTL_IOC_MAGIC + 1, CODECTL_VERSION, struct codectl_args),
		  "VERSION nr with magic 0xCE" },
		{ _IOW('f', CODECTL_VERSION, struct codectl_args), "VERSION nr with magic 'f'" },
		{ _IOR(CODECTL_IOC_MAGIC, CODECTL_VERSION, struct codectl_args),
		  "VERSION as _IOR" },
		{ _IOWR(CODECTL_IOC_MAGIC, CODECTL_VERSION, struct codectl_args),
		  "VERSION as _IOWR" },
		{ _IO(CODECTL_IOC_MAGIC, CODECTL_VERSION), "VERSION as _IO" },
	};

	/* Sanity: the right command works with these arguments. */
	memset(&v, 0, sizeof(v));
	a = (struct codectl_args){ .info = (uintptr_t)&v, .info_size = sizeof(v) };
	REQUIRE_RC(cc_ioctl(g_fd, CODECTL_IOC_VERSION, &a), 0, "VERSION");
	for (k = 0; k < (int)(sizeof(bad) / sizeof(bad[0])); k++) {
		rc = cc_ioctl(g_fd, bad[k].cmd, &a);
		EXPECT_RC(rc, ENOTTY, "ioctl %s (%#lx)", bad[k].what, bad[k].cmd);
	}
	/* Every option number VERSION does not announce is unknown. */
	for (nr = CODECTL_NR_OPTIONS; nr < 64; nr++) {
		if (v.options & (1ULL << nr))
			continue;
		rc = cc_ioctl(g_fd, CODECTL_IOC(nr), &a);
		EXPECT_RC(rc, ENOTTY, "CODECTL_IOC(%u), not in options %#llx", nr,
			  ULL(v.options));
	}
out:
	return T_PASS;
}
