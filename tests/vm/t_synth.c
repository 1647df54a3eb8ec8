// SPDX-License-Identifier: GPL-2.0
/*
 * codectl VM integration suite: synthesised SFrame sections
 * (CODECTL_ELF_SFRAME_SYNTH, struct codectl_elf_info VER1) and the origin
 * QUERY reports (struct codectl_query_info VER1).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "codectl-test.h"

#define ULL(x) ((unsigned long long)(x))

/* REGISTER_ELF with a VER1 struct: 0 or -errno. */
static int reg_v1(const struct codectl_elf_info *ei)
{
	return cc_call(g_fd, CODECTL_REGISTER_ELF, (uintptr_t)ei,
		       CODECTL_ELF_INFO_SIZE_VER1, 0, 0);
}

/*
 * A copy of @o's v3 section in a heap buffer, with its one function's
 * start rewritten for the buffer's address (v3, PCREL: 64 bits relative
 * to the start field itself).  *@len gets its size.
 */
static uint8_t *synth_copy(const struct sfr_obj *o, size_t *len)
{
	size_t n = o->sframe_end - o->sframe;
	uint8_t *buf = malloc(n);
	int64_t start;

	if (!buf)
		return NULL;
	memcpy(buf, (const void *)(uintptr_t)o->sframe, n);
	start = (int64_t)(o->text - (uintptr_t)(buf + SFRAME_HDR_SIZE));
	memcpy(buf + SFRAME_HDR_SIZE, &start, sizeof(start));
	*len = n;
	return buf;
}

static int query_v1(uint64_t addr, struct codectl_query_info *q)
{
	memset(q, 0, sizeof(*q));
	q->addr = addr;
	return cc_call(g_fd, CODECTL_QUERY, (uintptr_t)q,
		       CODECTL_QUERY_INFO_SIZE_VER1, 0, 0);
}

TEST(synth_register)
{
	struct codectl_query_info q;
	struct codectl_elf_info ei;
	struct sfr_obj o;
	size_t len = 0;
	uint8_t *buf = NULL;
	int rc;

	if (!sframe_host_abi())
		SKIP("no SFrame ABI for this machine");
	if (sfr_obj_create(&o, 3))
		return T_FAIL;
	buf = synth_copy(&o, &len);
	REQUIRE(buf, "malloc");

	/* A heap buffer, outside the ELF span: fine with SYNTH. */
	memset(&ei, 0, sizeof(ei));
	ei.elf_start = o.text;
	ei.elf_end = o.text + g_page;
	ei.text_start = o.text;
	ei.text_end = o.text_end;
	ei.sframe_start = (uintptr_t)buf;
	ei.sframe_end = (uintptr_t)buf + len;
	ei.pathname = (uintptr_t)"/synth/obj";
	ei.flags = CODECTL_ELF_SFRAME_SYNTH;
	rc = reg_v1(&ei);
	REQUIRE_RC(rc, 0, "REGISTER_ELF SYNTH, section in a heap buffer");
	/* The caller may free it: scribble over it first. */
	memset(buf, 0xa5, len);
	free(buf);
	buf = NULL;

	rc = query_v1(o.text, &q);
	if (EXPECT_RC(rc, 0, "QUERY VER1")) {
		EXPECT(q.text_start == o.text && q.text_end == o.text_end,
		       "text [%#llx,%#llx)", ULL(q.text_start), ULL(q.text_end));
		EXPECT(q.origin == (CODECTL_ORIGIN_REGISTERED | CODECTL_ORIGIN_SYNTH),
		       "origin %#x, expected REGISTERED|SYNTH", q.origin);
		EXPECT(q.sframe_start == ei.sframe_start &&
		       q.sframe_end == ei.sframe_end,
		       "sframe range not reported as given");
	}
	/* Unmapping where the buffer was does not drop it; the text does. */
	rc = munmap(o.base + g_page, g_page);
	EXPECT(!rc, "munmap of the object's own SFrame page");
	EXPECT_RC(query_v1(o.text, &q), 0, "QUERY after unmapping other pages");
	EXPECT_RC(cc_unregister(g_fd, o.text, o.text_end), 0, "UNREGISTER");

	/* The same with the object's mapped section, then unmap that page. */
	mmap(o.base + g_page, g_page, PROT_READ | PROT_WRITE,
	     MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED, -1, 0);
	sfr_obj_destroy(&o);
	if (sfr_obj_create(&o, 3))
		return T_FAIL;
	memset(&ei, 0, sizeof(ei));
	ei.text_start = o.text;
	ei.text_end = o.text_end;
	ei.sframe_start = o.sframe;
	ei.sframe_end = o.sframe_end;
	ei.flags = CODECTL_ELF_SFRAME_SYNTH;
	REQUIRE_RC(reg_v1(&ei), 0, "REGISTER_ELF SYNTH, v3 section in place");
	EXPECT(!munmap((void *)(uintptr_t)o.sframe, g_page), "munmap");
	rc = query_v1(o.text, &q);
	EXPECT_RC(rc, 0, "QUERY: a SYNTH registration survives its buffer's munmap");
	EXPECT_RC(cc_unregister(g_fd, o.text, o.text_end), 0, "UNREGISTER");
	mmap((void *)(uintptr_t)o.sframe, g_page, PROT_READ | PROT_WRITE,
	     MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED, -1, 0);
out:
	free(buf);
	sfr_obj_destroy(&o);
	return T_PASS;
}

TEST(synth_errors)
{
	unsigned long long flat_max, max_bytes;
	struct codectl_version v0, v1;
	struct codectl_elf_info ei, base;
	struct sfr_obj o;
	struct sframe_hdr *h;
	size_t len = 0;
	uint8_t *buf = NULL;
	int rc;

	if (!sframe_host_abi())
		SKIP("no SFrame ABI for this machine");
	if (sfr_obj_create(&o, 3))
		return T_FAIL;
	buf = synth_copy(&o, &len);
	REQUIRE(buf, "malloc");
	memset(&base, 0, sizeof(base));
	base.elf_start = o.text;
	base.elf_end = o.text + g_page;
	base.text_start = o.text;
	base.text_end = o.text_end;
	base.sframe_start = (uintptr_t)buf;
	base.sframe_end = (uintptr_t)buf + len;
	base.flags = CODECTL_ELF_SFRAME_SYNTH;

	ei = base;
	ei.flags = 1u << 1;
	EXPECT_ELF_FAIL(&ei, EINVAL, "unknown flag bit 1");
	ei.flags = 1u << 31;
	EXPECT_ELF_FAIL(&ei, EINVAL, "unknown flag bit 31");
	ei = base;
	ei.__reserved2 = 1;
	EXPECT_ELF_FAIL(&ei, EINVAL, "__reserved2 not 0");
	ei = base;
	ei.sframe_start = ei.sframe_end = 0;
	EXPECT_ELF_FAIL(&ei, EINVAL, "SYNTH without a section");
	ei = base;
	ei.flags = 0;
	EXPECT_ELF_FAIL(&ei, EINVAL, "section outside the elf range without SYNTH");
	ei = base;
	ei.sframe_start = unmapped_page();
	ei.sframe_end = ei.sframe_start + len;
	EXPECT_ELF_FAIL(&ei, EFAULT, "SYNTH buffer not readable");
	ei = base;
	((struct sframe_hdr *)buf)->magic ^= 0xffff;
	EXPECT_ELF_FAIL(&ei, ENOEXEC, "SYNTH buffer with a bad magic");
	((struct sframe_hdr *)buf)->magic ^= 0xffff;
	/* The original section, not rebased: its function is elsewhere. */
	ei.sframe_start = o.sframe;
	ei.sframe_end = o.sframe_end;
	h = sfr_obj_edit(&o);
	memcpy((uint8_t *)h + SFRAME_HDR_SIZE, &(int64_t){ 0x100000 }, 8);
	sfr_obj_seal(&o);
	ei.elf_start = ei.elf_end = 0;
	EXPECT_ELF_FAIL(&ei, ENOEXEC, "SYNTH: function outside the text");

	rc = param_writable("sframe_flat_max");
	if (rc == T_PASS) {
		REQUIRE_RC(param_read("sframe_flat_max", &flat_max), 0, "sframe_flat_max");
		REQUIRE_RC(param_write("sframe_flat_max", len - 1), 0, "sframe_flat_max");
		ei = base;
		/* No flat table: decoded in the registration's kernel copy. */
		rc = reg_v1(&ei);
		EXPECT_RC(rc, 0, "SYNTH larger than sframe_flat_max");
		if (!rc) {
			struct codectl_query_info q;

			memset(buf, 0xa5, len);	/* the copy is the kernel's */
			memset(&q, 0, sizeof(q));
			q.addr = o.text;
			rc = cc_call(g_fd, CODECTL_QUERY, (uintptr_t)&q,
				     CODECTL_QUERY_INFO_SIZE_VER2, 0, 0);
			if (EXPECT_RC(rc, 0, "QUERY VER2"))
				EXPECT(q.sframe_table == CODECTL_TABLE_KERNEL &&
				       q.num_fdes == 1,
				       "sframe_table %u (want %u: kernel), %u FDEs",
				       q.sframe_table, CODECTL_TABLE_KERNEL,
				       q.num_fdes);
			EXPECT_RC(cc_unregister(g_fd, o.text, o.text_end), 0,
				  "UNREGISTER");
			free(buf);
			buf = synth_copy(&o, &len);
			REQUIRE(buf, "malloc");
			base.sframe_start = (uintptr_t)buf;
			base.sframe_end = (uintptr_t)buf + len;
		}
		REQUIRE_RC(param_write("sframe_flat_max", flat_max), 0, "restoring");
	}

	/*
	 * max_bytes: with a first SYNTH registration, no room left for a
	 * second one (neither a table nor a copy): ENOMEM; less than its
	 * copy, which no address space could hold: EFBIG.
	 */
	rc = param_writable("max_bytes");
	if (rc == T_PASS) {
		struct codectl_elf_info ei2;
		struct sfr_obj o2;
		uint8_t *buf2;
		size_t len2 = 0;

		REQUIRE_RC(param_read("max_bytes", &max_bytes), 0, "max_bytes");
		REQUIRE_RC(cc_version(g_fd, &v0), 0, "VERSION");
		ei = base;
		REQUIRE_RC(reg_v1(&ei), 0, "REGISTER_ELF SYNTH");
		REQUIRE_RC(cc_version(g_fd, &v1), 0, "VERSION");
		REQUIRE(!sfr_obj_create(&o2, 3), "a second object");
		buf2 = synth_copy(&o2, &len2);
		REQUIRE(buf2, "malloc");
		ei2 = base;
		ei2.elf_start = o2.text;
		ei2.elf_end = o2.text + g_page;
		ei2.text_start = o2.text;
		ei2.text_end = o2.text_end;
		ei2.sframe_start = (uintptr_t)buf2;
		ei2.sframe_end = (uintptr_t)buf2 + len2;
		REQUIRE_RC(param_write("max_bytes", v1.bytes), 0, "max_bytes");
		EXPECT_ELF_FAIL(&ei2, ENOMEM, "SYNTH with no room left in max_bytes");
		REQUIRE_RC(param_write("max_bytes", len2), 0, "max_bytes");
		EXPECT_ELF_FAIL(&ei2, EFBIG, "SYNTH larger than max_bytes");
		REQUIRE_RC(param_write("max_bytes", max_bytes), 0, "restoring");
		EXPECT_RC(cc_unregister(g_fd, o.text, o.text_end), 0, "UNREGISTER");
		EXPECT(v1.bytes > v0.bytes, "bytes %llu -> %llu", ULL(v0.bytes),
		       ULL(v1.bytes));
		free(buf2);
		sfr_obj_destroy(&o2);
	}
out:
	free(buf);
	sfr_obj_destroy(&o);
	return T_PASS;
}

TEST(query_origin)
{
	struct codectl_jit_unwind_table *tbl = NULL;
	struct codectl_query_info q;
	struct codectl_elf_info ei;
	struct codectl_jit_info ji;
	uint8_t *code = NULL;
	int rc;

	code = map_code(1);
	tbl = map_pages(1, PROT_READ | PROT_WRITE);
	REQUIRE(code && tbl, "mmap");
	jit_table_init(tbl, sizeof(struct codectl_jit_unwind_fre),
		       sizeof(struct codectl_jit_unwind_fre), 8, 2);
	memset(&ei, 0, sizeof(ei));
	ei.text_start = (uintptr_t)code;
	ei.text_end = (uintptr_t)code + 128;
	REQUIRE_RC(reg_v1(&ei), 0, "REGISTER_ELF VER1, flags 0");
	memset(&ji, 0, sizeof(ji));
	ji.text_start = (uintptr_t)code + 256;
	ji.text_end = (uintptr_t)code + 512;
	ji.unwind_head = (uintptr_t)tbl;
	REQUIRE_RC(cc_register_jit(g_fd, &ji), 0, "REGISTER_JIT");

	rc = query_v1((uintptr_t)code, &q);
	if (EXPECT_RC(rc, 0, "QUERY ELF"))
		EXPECT(q.origin == CODECTL_ORIGIN_REGISTERED,
		       "ELF origin %#x, expected REGISTERED", q.origin);
	rc = query_v1((uintptr_t)code + 256, &q);
	if (EXPECT_RC(rc, 0, "QUERY JIT"))
		EXPECT(q.origin == CODECTL_ORIGIN_REGISTERED,
		       "JIT origin %#x, expected REGISTERED", q.origin);
	/* origin is output only: garbage in is ignored, reused structs work. */
	memset(&q, 0, sizeof(q));
	q.addr = (uintptr_t)code;
	q.origin = 0xffffffff;
	rc = cc_call(g_fd, CODECTL_QUERY, (uintptr_t)&q,
		     CODECTL_QUERY_INFO_SIZE_VER1, 0, 0);
	EXPECT_RC(rc, 0, "QUERY with origin set on input");
	EXPECT(q.origin == CODECTL_ORIGIN_REGISTERED, "origin %#x", q.origin);
	memset(&q, 0, sizeof(q));
	q.addr = (uintptr_t)code;
	q.__reserved2 = 1;
	rc = cc_call(g_fd, CODECTL_QUERY, (uintptr_t)&q,
		     CODECTL_QUERY_INFO_SIZE_VER1, 0, 0);
	EXPECT_RC(rc, EINVAL, "QUERY with __reserved2 set");
	/* A VER0 caller gets its 112 bytes, nothing beyond. */
	memset(&q, 0x5a, sizeof(q));
	q.addr = (uintptr_t)code;
	q.__reserved = 0;
	q.pathname = q.debug_link_pathname = q.build_id = 0;
	q.pathname_len = q.debug_link_len = q.build_id_len = 0;
	rc = cc_call(g_fd, CODECTL_QUERY, (uintptr_t)&q,
		     CODECTL_QUERY_INFO_SIZE_VER0, 0, 0);
	EXPECT_RC(rc, 0, "QUERY VER0");
	EXPECT(q.origin == 0x5a5a5a5a, "VER0 QUERY wrote past its 112 bytes");
out:
	if (code) {
		cc_unregister(g_fd, (uintptr_t)code, (uintptr_t)code + 128);
		cc_unregister(g_fd, (uintptr_t)code + 256, (uintptr_t)code + 512);
	}
	unmap_pages(code, 1);
	unmap_pages(tbl, 1);
	return T_PASS;
}
