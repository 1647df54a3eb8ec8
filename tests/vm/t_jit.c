// SPDX-License-Identifier: GPL-2.0
/*
 * codectl VM integration suite: REGISTER_JIT.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>

#include "codectl-test.h"

#define ULL(x) ((unsigned long long)(x))
#define FRE_SZ ((uint32_t)sizeof(struct codectl_jit_unwind_fre))
#define TBL_SZ sizeof(struct codectl_jit_unwind_table)

/* Only the header: for tables whose reserved area is (partly) unmapped. */
static void jit_hdr(struct codectl_jit_unwind_table *t, uint32_t size,
		    uint32_t stride, uint64_t reserved, uint64_t used)
{
	memset(t, 0, sizeof(*t));
	t->fre_size = size;
	t->fre_stride = stride;
	t->reserved_len = reserved;
	t->used_len = used;
}

static void check_jit_answer(const struct codectl_query_info *q,
			     const struct codectl_jit_info *ji)
{
	EXPECT(q->kind == CODECTL_KIND_JIT, "kind %u, expected JIT", q->kind);
	EXPECT(q->text_start == ji->text_start && q->text_end == ji->text_end,
	       "text [%#llx,%#llx), registered [%#llx,%#llx)",
	       ULL(q->text_start), ULL(q->text_end), ULL(ji->text_start),
	       ULL(ji->text_end));
	EXPECT(q->unwind_head == ji->unwind_head,
	       "unwind_head %#llx, registered %#llx", ULL(q->unwind_head),
	       ULL(ji->unwind_head));
	EXPECT(!q->elf_start && !q->elf_end && !q->sframe_start &&
	       !q->sframe_end,
	       "JIT answer has ELF fields: elf [%#llx,%#llx) sframe [%#llx,%#llx)",
	       ULL(q->elf_start), ULL(q->elf_end), ULL(q->sframe_start),
	       ULL(q->sframe_end));
	EXPECT(!q->build_id_len && !q->pathname_len && !q->debug_link_len &&
	       !q->debug_link_crc,
	       "JIT answer has metadata: build_id_len %u pathname_len %u debug_link_len %u crc %#x",
	       q->build_id_len, q->pathname_len, q->debug_link_len,
	       q->debug_link_crc);
}

/* Register, QUERY it back, unregister. */
static void jit_roundtrip(const struct codectl_jit_info *ji, const char *what)
{
	struct codectl_query_info q;
	int rc = cc_register_jit(g_fd, ji);

	if (!EXPECT_RC(rc, 0, "REGISTER_JIT %s", what))
		return;
	rc = cc_query_at(g_fd, ji->text_start, &q);
	if (EXPECT_RC(rc, 0, "QUERY %s", what))
		check_jit_answer(&q, ji);
	EXPECT_RC(cc_unregister(g_fd, ji->text_start, ji->text_end), 0,
		  "UNREGISTER %s", what);
}

TEST(jit_register)
{
	struct codectl_jit_unwind_table *t1, *t2;
	struct codectl_query_info q;
	struct codectl_jit_info ji[2];
	uint8_t *rwx = NULL, *rx = NULL, *tp = NULL, *ro = NULL;
	bool reg[2] = { false, false };
	int i, rc;

	tp = map_pages(2, PROT_READ | PROT_WRITE);
	rx = map_pages(2, PROT_READ | PROT_WRITE);
	ro = map_pages(1, PROT_READ | PROT_WRITE);
	if (!tp || !rx || !ro)
		goto out;
	rwx = mmap(NULL, 2 * g_page, PROT_READ | PROT_WRITE | PROT_EXEC,
		   MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	REQUIRE(rwx != MAP_FAILED, "mmap RWX: %m");
	memset(rwx, 0xc3, 2 * g_page);
	/* RW, write code, then RX: how a W^X JIT does it. */
	memset(rx, 0xc3, 2 * g_page);
	REQUIRE(set_prot(rx, 2 * g_page, PROT_READ | PROT_EXEC), "mprotect");

	t1 = (void *)tp;
	t2 = (void *)(tp + g_page);
	jit_table_init(t1, FRE_SZ, FRE_SZ, 16, 2);
	jit_table_init(t2, CODECTL_JIT_FRE_SIZE_VER0, 24, 32, 32);

	ji[0] = (struct codectl_jit_info){
		.text_start = (uintptr_t)rwx, .text_end = (uintptr_t)rwx + 2 * g_page,
		.unwind_head = (uintptr_t)t1,
	};
	ji[1] = (struct codectl_jit_info){
		.text_start = (uintptr_t)rx + 32, .text_end = (uintptr_t)rx + g_page + 32,
		.unwind_head = (uintptr_t)t2,
	};
	for (i = 0; i < 2; i++) {
		rc = cc_register_jit(g_fd, &ji[i]);
		REQUIRE_RC(rc, 0, "REGISTER_JIT of an %s region",
			   i ? "RW->RX" : "RWX");
		reg[i] = true;
	}
	EXPECT(cc_nr(g_fd) == 2, "nr_registrations %ld, expected 2", cc_nr(g_fd));
	for (i = 0; i < 2; i++) {
		uint64_t probe[2] = { ji[i].text_start, ji[i].text_end - 1 };
		int k;

		for (k = 0; k < 2; k++) {
			rc = cc_query_at(g_fd, probe[k], &q);
			if (EXPECT_RC(rc, 0, "QUERY %#llx", ULL(probe[k])))
				check_jit_answer(&q, &ji[i]);
		}
	}
	/* Publishing more entries later is the user's business. */
	jit_table_init(t1, FRE_SZ, FRE_SZ, 16, 16);
	for (i = 0; i < 2; i++) {
		rc = cc_unregister(g_fd, ji[i].text_start, ji[i].text_end);
		EXPECT_RC(rc, 0, "UNREGISTER");
		reg[i] = false;
	}

	/* Table variants that are all valid. */
	ji[0].unwind_head = (uintptr_t)t1;
	jit_table_init(t1, FRE_SZ, FRE_SZ, 0, 0);
	jit_roundtrip(&ji[0], "with an empty table (reserved_len 0)");
	jit_table_init(t1, FRE_SZ, FRE_SZ, 8, 8);
	jit_roundtrip(&ji[0], "with a full table (used_len == reserved_len)");
	jit_table_init(t1, 32, 32, 8, 3);
	jit_roundtrip(&ji[0], "with fre_size 32 (longer entries than the kernel's)");
	jit_table_init(t1, FRE_SZ, 28, 8, 3);
	jit_roundtrip(&ji[0], "with fre_stride 28 > fre_size 24");
	jit_table_init(t1, CODECTL_JIT_FRE_SIZE_VER0, 24, 8, 3);
	t1->next = (uintptr_t)t2;
	jit_table_init(t2, FRE_SZ, FRE_SZ, 8, 1);
	jit_roundtrip(&ji[0], "with a chain of two tables");
	/* A read-only table is what the kernel needs: it never writes. */
	jit_table_init((void *)ro, FRE_SZ, FRE_SZ, 8, 4);
	if (set_prot(ro, g_page, PROT_READ)) {
		ji[0].unwind_head = (uintptr_t)ro;
		jit_roundtrip(&ji[0], "with the table in read-only memory");
	}
	/* A one-byte region. */
	ji[1].text_end = ji[1].text_start + 1;
	ji[1].unwind_head = (uintptr_t)t2;
	jit_roundtrip(&ji[1], "of a single byte");
out:
	for (i = 0; i < 2; i++)
		if (reg[i])
			cc_unregister(g_fd, ji[i].text_start, ji[i].text_end);
	if (rwx && rwx != MAP_FAILED)
		munmap(rwx, 2 * g_page);
	unmap_pages(rx, 2);
	unmap_pages(tp, 2);
	unmap_pages(ro, 1);
	return T_PASS;
}

TEST(jit_einval)
{
	struct codectl_jit_unwind_table *t;
	struct codectl_jit_info ji, base;
	uint8_t *code = NULL, *tp = NULL;
	int rc;

	code = map_code(1);
	tp = map_pages(1, PROT_READ | PROT_WRITE);
	if (!code || !tp)
		goto out;
	t = (void *)tp;
	base = (struct codectl_jit_info){
		.text_start = (uintptr_t)code, .text_end = (uintptr_t)code + 256,
		.unwind_head = (uintptr_t)t,
	};
	jit_table_init(t, FRE_SZ, FRE_SZ, 4, 2);
	rc = cc_register_jit(g_fd, &base);
	REQUIRE_RC(rc, 0, "the valid base registration");
	EXPECT_RC(cc_unregister(g_fd, base.text_start, base.text_end), 0,
		  "UNREGISTER");

#define CASE(hdr_change, what) \
	do { \
		jit_table_init(t, FRE_SZ, FRE_SZ, 4, 2); \
		hdr_change; \
		EXPECT_JIT_FAIL(&base, EINVAL, what); \
	} while (0)
	CASE(t->fre_size = 0, "fre_size 0");
	CASE(t->fre_size = CODECTL_JIT_FRE_SIZE_VER0 - 1, "fre_size 20 (< VER0 21)");
	CASE((t->fre_size = 21, t->fre_stride = 20, t->reserved_len = 80,
	      t->used_len = 40), "fre_stride 20 < fre_size 21");
	CASE((t->fre_stride = 0, t->reserved_len = 0, t->used_len = 0),
	     "fre_stride 0");
	CASE((t->fre_size = 21, t->fre_stride = 21, t->reserved_len = 84,
	      t->used_len = 42), "fre_stride 21, not a multiple of 4");
	CASE((t->fre_stride = 26, t->reserved_len = 104, t->used_len = 52),
	     "fre_stride 26, not a multiple of 4");
	CASE((t->fre_size = 21, t->fre_stride = 22, t->reserved_len = 88,
	      t->used_len = 44), "fre_stride 22, not a multiple of 4");
	CASE(t->reserved_len = 4 * FRE_SZ + 4, "reserved_len not a multiple of fre_stride");
	CASE((t->reserved_len = 1, t->used_len = 0), "reserved_len 1");
	CASE(t->used_len = t->reserved_len + FRE_SZ, "used_len > reserved_len");
	CASE(t->used_len = UINT64_MAX, "used_len 0xffffffffffffffff");
	CASE(t->__reserved = 1, "table __reserved 1");
	CASE(t->__reserved = 1ULL << 63, "table __reserved bit 63");
#undef CASE
	jit_table_init(t, FRE_SZ, FRE_SZ, 4, 2);
	ji = base;
	ji.text_end = ji.text_start;
	EXPECT_JIT_FAIL(&ji, EINVAL, "text_start == text_end");
	ji = base;
	ji.text_start = base.text_end;
	ji.text_end = base.text_start;
	EXPECT_JIT_FAIL(&ji, EINVAL, "text_start > text_end");
	ji = base;
	ji.text_start = ji.text_end = 0;
	EXPECT_JIT_FAIL(&ji, EINVAL, "text 0/0");
out:
	unmap_pages(code, 1);
	unmap_pages(tp, 1);
	return T_PASS;
}

TEST(jit_efault)
{
	struct codectl_jit_unwind_table *t;
	struct codectl_jit_info ji, base;
	uint8_t *code = NULL, *tp = NULL, *h = NULL, *p = NULL, *m3 = NULL;
	const int prots[] = { PROT_READ, PROT_READ | PROT_WRITE, PROT_NONE };
	uint64_t u;
	int i, rc;

	code = map_code(1);
	tp = map_pages(1, PROT_READ | PROT_WRITE);
	if (!code || !tp)
		goto out;
	t = (void *)tp;
	jit_table_init(t, FRE_SZ, FRE_SZ, 8, 2);
	base = (struct codectl_jit_info){
		.text_start = (uintptr_t)code, .text_end = (uintptr_t)code + 256,
		.unwind_head = (uintptr_t)t,
	};
	/* Text not mapped executable. */
	for (i = 0; i < 3; i++) {
		p = map_pages(1, prots[i]);
		if (!p)
			goto out;
		ji = base;
		ji.text_start = (uintptr_t)p;
		ji.text_end = (uintptr_t)p + 256;
		EXPECT_JIT_FAIL(&ji, EFAULT, prots[i] == PROT_READ ? "text PROT_READ" :
				prots[i] == PROT_NONE ? "text PROT_NONE" :
				"text PROT_READ|PROT_WRITE");
		unmap_pages(p, 1);
		p = NULL;
	}
	u = unmapped_page();
	ji = base;
	ji.text_start = u;
	ji.text_end = u + 256;
	EXPECT_JIT_FAIL(&ji, EFAULT, "text in a munmapped page");
	{
		uint8_t *c2 = map_with_hole(1, PROT_READ | PROT_WRITE);

		if (c2 && set_prot(c2, g_page, PROT_READ | PROT_EXEC) &&
		    EXPECT(is_unmapped((uintptr_t)c2 + g_page, g_page),
			   "test setup: hole mapped again")) {
			ji = base;
			ji.text_start = (uintptr_t)c2 + g_page - 16;
			ji.text_end = (uintptr_t)c2 + g_page + 16;
			EXPECT_JIT_FAIL(&ji, EFAULT, "text running into a hole");
		}
		unmap_pages(c2, 1);
	}

	/* Table pointer unreadable. */
	{
		const uint64_t bad[] = { 0, LOW_BAD_ADDR, KERNEL_ADDR, unmapped_page() };
		const char *const badn[] = {
			"unwind_head NULL", "unwind_head below mmap_min_addr",
			"unwind_head at a kernel address", "unwind_head munmapped",
		};

		for (i = 0; i < 4; i++) {
			ji = base;
			ji.unwind_head = bad[i];
			EXPECT_JIT_FAIL(&ji, EFAULT, badn[i]);
		}
	}
	p = map_pages(1, PROT_READ | PROT_WRITE);
	if (!p)
		goto out;
	jit_table_init((void *)p, FRE_SZ, FRE_SZ, 8, 2);
	if (set_prot(p, g_page, PROT_NONE)) {
		ji = base;
		ji.unwind_head = (uintptr_t)p;
		EXPECT_JIT_FAIL(&ji, EFAULT, "table in a PROT_NONE page");
	}

	/* Tables at the end of a page followed by a hole (no mmap after). */
	h = map_with_hole(1, PROT_READ | PROT_WRITE);
	if (!h)
		goto out;
	REQUIRE_HOLE(h + g_page);
	ji = base;
	t = (void *)(h + g_page - 16);
	memset(t, 0, 16);	/* the first 16 header bytes: all that is mapped */
	ji.unwind_head = (uintptr_t)t;
	EXPECT_JIT_FAIL(&ji, EFAULT, "table header running into unmapped memory");

	t = (void *)(h + g_page - TBL_SZ);
	jit_hdr(t, FRE_SZ, FRE_SZ, 0, 0);
	ji.unwind_head = (uintptr_t)t;
	rc = cc_register_jit(g_fd, &ji);
	if (EXPECT_RC(rc, 0, "REGISTER_JIT: empty table ending right before a hole"))
		EXPECT_RC(cc_unregister(g_fd, ji.text_start, ji.text_end), 0,
			  "UNREGISTER");
	jit_hdr(t, FRE_SZ, FRE_SZ, 10 * FRE_SZ, 2 * FRE_SZ);
	EXPECT_JIT_FAIL(&ji, EFAULT, "table whose reserved area runs into unmapped memory");
	jit_hdr(t, FRE_SZ, FRE_SZ, 10 * FRE_SZ, 0);
	EXPECT_JIT_FAIL(&ji, EFAULT, "unused reserved area running into unmapped memory");

	t = (void *)(h + g_page - TBL_SZ - 10 * FRE_SZ);
	jit_table_init(t, FRE_SZ, FRE_SZ, 10, 2);
	ji.unwind_head = (uintptr_t)t;
	rc = cc_register_jit(g_fd, &ji);
	if (EXPECT_RC(rc, 0, "REGISTER_JIT: reserved area ending right before a hole"))
		EXPECT_RC(cc_unregister(g_fd, ji.text_start, ji.text_end), 0,
			  "UNREGISTER");

	/* Reserved area spanning an unmapped page between two mapped ones. */
	m3 = map_pages(3, PROT_READ | PROT_WRITE);
	if (m3 && !munmap(m3 + g_page, g_page) &&
	    EXPECT(is_unmapped((uintptr_t)m3 + g_page, g_page),
		   "test setup: hole mapped again")) {
		t = (void *)m3;
		jit_hdr(t, FRE_SZ, FRE_SZ,
			(3 * g_page - TBL_SZ) / FRE_SZ * FRE_SZ, FRE_SZ);
		ji.unwind_head = (uintptr_t)t;
		EXPECT_JIT_FAIL(&ji, EFAULT, "reserved area spanning an unmapped page");
		munmap(m3, g_page);
		munmap(m3 + 2 * g_page, g_page);
		m3 = NULL;
	}
out:
	unmap_pages(code, 1);
	unmap_pages(tp, 1);
	unmap_pages(h, 1);
	unmap_pages(p, 1);
	unmap_pages(m3, 3);
	return T_PASS;
}
