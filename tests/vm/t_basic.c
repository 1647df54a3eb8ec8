// SPDX-License-Identifier: GPL-2.0
/*
 * codectl VM integration suite: VERSION, parameters, REGISTER_ELF happy
 * paths and QUERY.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "codectl-test.h"

#define ULL(x) ((unsigned long long)(x))

TEST(version)
{
	struct codectl_version v;
	unsigned long long p;
	uint8_t big[64];
	int rc;

	/*
	 * Every VER0 field is output: pre-filled garbage must be overwritten.
	 * VER1's options_map and options_map_words are inputs (0: no map).
	 */
	memset(&v, 0, sizeof(v));
	memset(&v, 0xff, CODECTL_VERSION_SIZE_VER0);
	rc = cc_call(g_fd, CODECTL_VERSION, (uintptr_t)&v, sizeof(v), 0, 0);
	REQUIRE_RC(rc, 0, "VERSION");
	EXPECT(v.abi_version == CODECTL_ABI_VERSION,
	       "abi_version %u, expected %u", v.abi_version, CODECTL_ABI_VERSION);
	EXPECT(v.__reserved == 0, "__reserved %#x, expected 0", v.__reserved);
	EXPECT((v.options & 0x1f) == 0x1f,
	       "options %#llx: bits 0-4 (UNREGISTER..VERSION) must all be set",
	       ULL(v.options));
	EXPECT(v.max_registrations > 0, "max_registrations is 0");
	EXPECT(v.max_bytes > 0, "max_bytes is 0");
	EXPECT(v.nr_registrations == 0,
	       "fresh process reports %llu registrations", ULL(v.nr_registrations));
	EXPECT(v.bytes <= v.max_bytes, "bytes %llu > max_bytes %llu",
	       ULL(v.bytes), ULL(v.max_bytes));

	if (!param_read("max_registrations", &p))
		EXPECT(p == v.max_registrations,
		       "max_registrations %llu, parameter says %llu",
		       ULL(v.max_registrations), p);
	if (!param_read("max_bytes", &p))
		EXPECT(p == v.max_bytes, "max_bytes %llu, parameter says %llu",
		       ULL(v.max_bytes), p);

	/* A longer struct with a zero tail: same answer, tail stays zero. */
	memset(big, 0, sizeof(big));
	rc = cc_call(g_fd, CODECTL_VERSION, (uintptr_t)big, sizeof(big), 0, 0);
	if (EXPECT_RC(rc, 0, "VERSION with info_size %zu, zero tail", sizeof(big))) {
		struct codectl_version v2;
		size_t i;

		memcpy(&v2, big, sizeof(v2));
		EXPECT(v2.abi_version == v.abi_version &&
		       v2.options == v.options &&
		       v2.max_registrations == v.max_registrations &&
		       v2.max_bytes == v.max_bytes,
		       "VERSION with a longer struct answers differently");
		for (i = sizeof(v2); i < sizeof(big); i++)
			if (big[i]) {
				FAIL("VERSION wrote %#x at offset %zu beyond its struct",
				     big[i], i);
				break;
			}
	}
out:
	return T_PASS;
}

TEST(version_counts)
{
	struct codectl_version v0, v, prev;
	struct codectl_jit_unwind_table *tbl = NULL;
	uint8_t *code = NULL;
	uint64_t start[4];
	int i, rc, nreg = 0;

	REQUIRE_RC(cc_version(g_fd, &v0), 0, "VERSION");
	code = map_code(1);
	tbl = map_pages(1, PROT_READ | PROT_WRITE);
	REQUIRE(code && tbl, "mmap");
	jit_table_init(tbl, sizeof(struct codectl_jit_unwind_fre),
		       sizeof(struct codectl_jit_unwind_fre), 8, 2);
	prev = v0;
	for (i = 0; i < 4; i++) {
		start[i] = (uintptr_t)code + 256 * i;
		if (i < 3) {
			struct codectl_elf_info ei = {
				.text_start = start[i],
				.text_end = start[i] + 128,
				.pathname = (uintptr_t)"/usr/lib/libcounted.so",
			};
			rc = cc_register_elf(g_fd, &ei);
			REQUIRE_RC(rc, 0, "REGISTER_ELF #%d", i);
		} else {
			struct codectl_jit_info ji = {
				.text_start = start[i],
				.text_end = start[i] + 128,
				.unwind_head = (uintptr_t)tbl,
			};
			rc = cc_register_jit(g_fd, &ji);
			REQUIRE_RC(rc, 0, "REGISTER_JIT");
		}
		nreg++;
		REQUIRE_RC(cc_version(g_fd, &v), 0, "VERSION");
		EXPECT(v.nr_registrations == v0.nr_registrations + i + 1,
		       "after %d registrations nr_registrations is %llu (was %llu)",
		       i + 1, ULL(v.nr_registrations), ULL(v0.nr_registrations));
		EXPECT(v.bytes > prev.bytes,
		       "bytes did not grow with registration %d: %llu -> %llu",
		       i + 1, ULL(prev.bytes), ULL(v.bytes));
		EXPECT(v.bytes <= v.max_bytes, "bytes %llu > max_bytes %llu",
		       ULL(v.bytes), ULL(v.max_bytes));
		prev = v;
	}
	for (i = 3; i >= 0; i--) {
		rc = cc_unregister(g_fd, start[i], start[i] + 128);
		REQUIRE_RC(rc, 0, "UNREGISTER #%d", i);
		nreg--;
		REQUIRE_RC(cc_version(g_fd, &v), 0, "VERSION");
		EXPECT(v.nr_registrations == v0.nr_registrations + i,
		       "after unregistering, nr_registrations %llu, expected %llu",
		       ULL(v.nr_registrations), ULL(v0.nr_registrations + i));
		EXPECT(v.bytes < prev.bytes,
		       "bytes did not shrink on unregister: %llu -> %llu",
		       ULL(prev.bytes), ULL(v.bytes));
		prev = v;
	}
	EXPECT(v.bytes == v0.bytes,
	       "bytes %llu after removing everything, %llu before",
	       ULL(v.bytes), ULL(v0.bytes));
out:
	while (nreg-- > 0)
		cc_unregister(g_fd, start[nreg], start[nreg] + 128);
	unmap_pages(code, 1);
	unmap_pages(tbl, 1);
	return T_PASS;
}

TEST(params_access)
{
	static const char *const names[] = { "max_registrations", "max_bytes" };
	struct codectl_version v;
	unsigned long long val, now;
	struct stat st;
	char path[256];
	int i, rc;

	REQUIRE_RC(cc_version(g_fd, &v), 0, "VERSION");
	for (i = 0; i < 2; i++) {
		snprintf(path, sizeof(path), PARAM_DIR "%s", names[i]);
		if (stat(path, &st)) {
			FAIL("%s: %m", path);
			continue;
		}
		EXPECT((st.st_mode & 0222) == 0200,
		       "%s mode %o: only root may write it", path,
		       st.st_mode & 07777);
		EXPECT(st.st_mode & 0004, "%s mode %o: not world readable", path,
		       st.st_mode & 07777);
		rc = param_read(names[i], &val);
		if (!EXPECT_RC(rc, 0, "reading %s", path))
			continue;
		EXPECT(val == (i ? v.max_bytes : v.max_registrations),
		       "%s is %llu, VERSION says %llu", names[i], val,
		       ULL(i ? v.max_bytes : v.max_registrations));
		if (geteuid() != 0) {
			rc = param_write(names[i], val);
			EXPECT(rc == -EACCES || rc == -EPERM,
			       "unprivileged write of %s: expected EACCES/EPERM, got %s",
			       path, ename(rc));
			continue;
		}
		/* Root: the change is live and visible through VERSION. */
		rc = param_write(names[i], val + 1);
		if (!EXPECT_RC(rc, 0, "writing %s", path))
			continue;
		if (!EXPECT_RC(cc_version(g_fd, &v), 0, "VERSION"))
			continue;
		now = i ? v.max_bytes : v.max_registrations;
		EXPECT(now == val + 1, "wrote %llu to %s, VERSION reports %llu",
		       val + 1, names[i], now);
		EXPECT_RC(param_write(names[i], val), 0, "restoring %s", path);
		cc_version(g_fd, &v);
	}
out:
	return T_PASS;
}

/* Check every field of a QUERY answer against what was registered. */
static void check_elf_answer(const struct codectl_query_info *q,
			     const struct codectl_elf_info *ei,
			     const char *path_buf, const char *dl_buf,
			     const uint8_t *bid_buf)
{
	const char *path = (const char *)(uintptr_t)ei->pathname;
	const char *dl = (const char *)(uintptr_t)ei->debug_link_pathname;

	EXPECT(q->kind == CODECTL_KIND_ELF, "kind %u, expected ELF", q->kind);
	EXPECT(q->text_start == ei->text_start && q->text_end == ei->text_end,
	       "text [%#llx,%#llx), registered [%#llx,%#llx)",
	       ULL(q->text_start), ULL(q->text_end), ULL(ei->text_start),
	       ULL(ei->text_end));
	EXPECT(q->elf_start == ei->elf_start && q->elf_end == ei->elf_end,
	       "elf [%#llx,%#llx), registered [%#llx,%#llx)",
	       ULL(q->elf_start), ULL(q->elf_end), ULL(ei->elf_start),
	       ULL(ei->elf_end));
	EXPECT(q->sframe_start == ei->sframe_start &&
	       q->sframe_end == ei->sframe_end,
	       "sframe [%#llx,%#llx), registered [%#llx,%#llx)",
	       ULL(q->sframe_start), ULL(q->sframe_end),
	       ULL(ei->sframe_start), ULL(ei->sframe_end));
	EXPECT(q->unwind_head == 0, "ELF registration has unwind_head %#llx",
	       ULL(q->unwind_head));
	EXPECT(q->debug_link_crc == ei->debug_link_crc,
	       "debug_link_crc %#x, registered %#x", q->debug_link_crc,
	       ei->debug_link_crc);
	EXPECT(q->build_id_len == ei->build_id_len,
	       "build_id_len %u, registered %u", q->build_id_len,
	       ei->build_id_len);
	EXPECT(q->__reserved == 0, "QUERY __reserved came back %#x",
	       q->__reserved);
	if (path) {
		EXPECT(q->pathname_len == strlen(path) + 1,
		       "pathname_len %u, expected %zu", q->pathname_len,
		       strlen(path) + 1);
		if (path_buf)
			EXPECT(!memcmp(path_buf, path, strlen(path) + 1),
			       "pathname '%.60s' came back as '%.60s'", path,
			       path_buf);
	} else {
		EXPECT(q->pathname_len == 0, "no pathname but pathname_len %u",
		       q->pathname_len);
	}
	if (dl) {
		EXPECT(q->debug_link_len == strlen(dl) + 1,
		       "debug_link_len %u, expected %zu", q->debug_link_len,
		       strlen(dl) + 1);
		if (dl_buf)
			EXPECT(!memcmp(dl_buf, dl, strlen(dl) + 1),
			       "debug link '%s' came back as '%.60s'", dl, dl_buf);
	} else {
		EXPECT(q->debug_link_len == 0, "no debug link but debug_link_len %u",
		       q->debug_link_len);
	}
	if (ei->build_id_len && bid_buf)
		EXPECT(!memcmp(bid_buf, (const void *)(uintptr_t)ei->build_id,
			       ei->build_id_len),
		       "build id bytes differ from the registered ones");
}

static int query_full(uint64_t addr, struct codectl_query_info *q,
		      char *path, char *dl, uint8_t *bid)
{
	memset(q, 0, sizeof(*q));
	memset(path, 0, CODECTL_PATH_MAX);
	memset(dl, 0, CODECTL_PATH_MAX);
	memset(bid, 0, CODECTL_BUILD_ID_MAX);
	q->addr = addr;
	q->pathname = (uintptr_t)path;
	q->pathname_len = CODECTL_PATH_MAX;
	q->debug_link_pathname = (uintptr_t)dl;
	q->debug_link_len = CODECTL_PATH_MAX;
	q->build_id = (uintptr_t)bid;
	q->build_id_len = CODECTL_BUILD_ID_MAX;
	return cc_query(g_fd, q);
}

static char qpath[CODECTL_PATH_MAX], qdl[CODECTL_PATH_MAX];
static uint8_t qbid[CODECTL_BUILD_ID_MAX];

TEST(elf_register_query)
{
	struct codectl_query_info q;
	struct codectl_elf_info ei;
	struct self_image si;
	static const char dlink[] = "codectl-abi-test.debug";
	uint64_t probes[3];
	int i, rc;
	bool reg = false;

	if (self_image_get(&si))
		return T_FAIL;
	printf("# self: elf [%#llx,%#llx) text [%#llx,%#llx) sframe [%#llx,%#llx) seg end %#llx build id %u bytes, %s\n",
	       ULL(si.elf_start), ULL(si.elf_end), ULL(si.text_start),
	       ULL(si.text_end), ULL(si.sframe_start), ULL(si.sframe_end),
	       ULL(si.sframe_seg_end), si.build_id_len, si.path);
	ei = (struct codectl_elf_info){
		.elf_start = si.elf_start,
		.elf_end = si.elf_end,
		.text_start = si.text_start,
		.text_end = si.text_end,
		.sframe_start = si.sframe_start,
		.sframe_end = si.sframe_end,
		.pathname = (uintptr_t)si.path,
		.build_id = (uintptr_t)si.build_id,
		.debug_link_pathname = (uintptr_t)dlink,
		.build_id_len = si.build_id_len,
		.debug_link_crc = 0x1badb002,
	};
	rc = cc_register_elf(g_fd, &ei);
	REQUIRE_RC(rc, 0, "REGISTER_ELF of this executable with all metadata");
	reg = true;
	EXPECT(cc_nr(g_fd) == 1, "nr_registrations %ld after one registration",
	       cc_nr(g_fd));

	/* Any address below text_end finds it. */
	probes[0] = 0;
	probes[1] = si.text_start;
	probes[2] = si.text_end - 1;
	for (i = 0; i < 3; i++) {
		rc = query_full(probes[i], &q, qpath, qdl, qbid);
		if (!EXPECT_RC(rc, 0, "QUERY addr %#llx", ULL(probes[i])))
			continue;
		check_elf_answer(&q, &ei, qpath, qdl, qbid);
	}
	rc = cc_query_at(g_fd, si.text_end, &q);
	EXPECT_RC(rc, ENOENT, "QUERY at text_end (past the only registration)");
	rc = cc_query_at(g_fd, UINT64_MAX, &q);
	EXPECT_RC(rc, ENOENT, "QUERY at UINT64_MAX");

	rc = cc_unregister(g_fd, si.text_start, si.text_end);
	REQUIRE_RC(rc, 0, "UNREGISTER");
	reg = false;
	EXPECT_RC(cc_query_at(g_fd, 0, &q), ENOENT, "QUERY after UNREGISTER");

	/* The whole PT_GNU_SFRAME segment (zero tail after the section). */
	ei.sframe_end = si.sframe_seg_end;
	rc = cc_register_elf(g_fd, &ei);
	if (EXPECT_RC(rc, 0, "REGISTER_ELF with sframe_end = PT_GNU_SFRAME end (%llu bytes past the section)",
		      ULL(si.sframe_seg_end - si.sframe_end))) {
		reg = true;
		rc = query_full(0, &q, qpath, qdl, qbid);
		if (EXPECT_RC(rc, 0, "QUERY"))
			check_elf_answer(&q, &ei, qpath, qdl, qbid);
	}
out:
	if (reg)
		EXPECT_RC(cc_unregister(g_fd, ei.text_start, ei.text_end), 0,
			  "UNREGISTER");
	return T_PASS;
}

TEST(elf_no_sframe)
{
	struct codectl_query_info q;
	struct codectl_elf_info ei;
	uint8_t *code;
	int rc;

	code = map_code(2);
	if (!code)
		return T_FAIL;
	/* Only a text range: everything else unknown. */
	ei = (struct codectl_elf_info){
		.text_start = (uintptr_t)code + 16,
		.text_end = (uintptr_t)code + g_page + 100,
	};
	rc = cc_register_elf(g_fd, &ei);
	if (EXPECT_RC(rc, 0, "REGISTER_ELF with text only")) {
		memset(qpath, 0x5a, 16);
		memset(&q, 0, sizeof(q));
		q.pathname = (uintptr_t)qpath;
		q.pathname_len = sizeof(qpath);
		q.debug_link_pathname = (uintptr_t)qdl;
		q.debug_link_len = sizeof(qdl);
		q.build_id = (uintptr_t)qbid;
		q.build_id_len = sizeof(qbid);
		rc = cc_query(g_fd, &q);
		if (EXPECT_RC(rc, 0, "QUERY")) {
			check_elf_answer(&q, &ei, NULL, NULL, NULL);
			EXPECT(qpath[0] == 0x5a,
			       "QUERY wrote into the pathname buffer of a registration without a pathname");
		}
		EXPECT_RC(cc_unregister(g_fd, ei.text_start, ei.text_end), 0,
			  "UNREGISTER");
	}
	/* An ELF range without SFrame. */
	ei.elf_start = (uintptr_t)code;
	ei.elf_end = (uintptr_t)code + 2 * g_page;
	ei.pathname = (uintptr_t)"/opt/no-sframe.so";
	ei.debug_link_pathname = (uintptr_t)"no-sframe.so.debug";
	ei.debug_link_crc = 0;	/* a debug link whose CRC happens to be 0 */
	rc = cc_register_elf(g_fd, &ei);
	if (EXPECT_RC(rc, 0, "REGISTER_ELF with an ELF range, no SFrame, debug link CRC 0")) {
		rc = query_full(0, &q, qpath, qdl, qbid);
		if (EXPECT_RC(rc, 0, "QUERY"))
			check_elf_answer(&q, &ei, qpath, qdl, qbid);
		EXPECT_RC(cc_unregister(g_fd, ei.text_start, ei.text_end), 0,
			  "UNREGISTER");
	}
	unmap_pages(code, 2);
	return T_PASS;
}

TEST(elf_sframe_versions)
{
	struct codectl_query_info q;
	struct codectl_elf_info ei;
	struct sfr_obj o;
	int ver, rc;

	for (ver = 1; ver <= 3; ver++) {
		if (sfr_obj_create(&o, ver))
			return T_FAIL;
		ei = (struct codectl_elf_info){
			.text_start = o.text,
			.text_end = o.text_end,
			.sframe_start = o.sframe,
			.sframe_end = o.sframe_end,
		};
		rc = cc_register_elf(g_fd, &ei);
		if (EXPECT_RC(rc, 0, "REGISTER_ELF with a valid SFrame v%d section (%llu bytes), ELF range unknown",
			      ver, ULL(o.sframe_end - o.sframe))) {
			rc = cc_query_at(g_fd, 0, &q);
			if (EXPECT_RC(rc, 0, "QUERY"))
				check_elf_answer(&q, &ei, NULL, NULL, NULL);
			EXPECT_RC(cc_unregister(g_fd, ei.text_start, ei.text_end),
				  0, "UNREGISTER");
		}
		/* With the ELF range holding both, and a zero tail after it. */
		ei.elf_start = (uintptr_t)o.base;
		ei.elf_end = (uintptr_t)o.base + 2 * g_page;
		ei.sframe_end = o.sframe + g_page;
		rc = cc_register_elf(g_fd, &ei);
		if (EXPECT_RC(rc, 0, "REGISTER_ELF SFrame v%d, ELF range, sframe range = whole page",
			      ver))
			EXPECT_RC(cc_unregister(g_fd, ei.text_start, ei.text_end),
				  0, "UNREGISTER");
		sfr_obj_destroy(&o);
	}
	return T_PASS;
}

struct range {
	uint64_t start, end;
	uint32_t kind;
};

static int range_cmp(const void *a, const void *b)
{
	const struct range *x = a, *y = b;

	return x->start < y->start ? -1 : x->start > y->start;
}

TEST(query_cursor)
{
	struct codectl_jit_unwind_table *tbl = NULL;
	struct codectl_query_info q;
	struct self_image si;
	struct range r[7], s[7];
	uint8_t *m[3] = { NULL, NULL, NULL };
	int order[7] = { 6, 2, 0, 4, 1, 5, 3 };
	uint64_t addr;
	int i, n, rc, nr = 0;
	bool done[7] = { false };

	if (self_image_get(&si))
		return T_FAIL;
	REQUIRE(si.text_end - si.text_start >= 0x1100,
		"own text segment too small (%llu bytes)",
		ULL(si.text_end - si.text_start));
	for (i = 0; i < 3; i++) {
		m[i] = map_code(2);
		REQUIRE(m[i], "mmap");
	}
	tbl = map_pages(1, PROT_READ | PROT_WRITE);
	REQUIRE(tbl, "mmap");
	jit_table_init(tbl, 24, 24, 16, 4);
	/* Sub-ranges of our own text (A and B touch), and mmap'ed regions. */
	r[0] = (struct range){ si.text_start + 0x100, si.text_start + 0x180, CODECTL_KIND_ELF };
	r[1] = (struct range){ si.text_start + 0x180, si.text_start + 0x200, CODECTL_KIND_ELF };
	r[2] = (struct range){ si.text_start + 0x1000, si.text_start + 0x1010, CODECTL_KIND_ELF };
	r[3] = (struct range){ (uintptr_t)m[0], (uintptr_t)m[0] + 2 * g_page, CODECTL_KIND_JIT };
	r[4] = (struct range){ (uintptr_t)m[1] + 0x10, (uintptr_t)m[1] + 0x20, CODECTL_KIND_ELF };
	r[5] = (struct range){ (uintptr_t)m[2] + 0x800, (uintptr_t)m[2] + 0x1000, CODECTL_KIND_JIT };
	r[6] = (struct range){ (uintptr_t)m[2] + 0x1000, (uintptr_t)m[2] + 0x1001, CODECTL_KIND_ELF };
	for (i = 0; i < 7; i++) {
		const struct range *x = &r[order[i]];

		if (x->kind == CODECTL_KIND_ELF) {
			struct codectl_elf_info ei = {
				.text_start = x->start, .text_end = x->end,
			};
			rc = cc_register_elf(g_fd, &ei);
		} else {
			struct codectl_jit_info ji = {
				.text_start = x->start, .text_end = x->end,
				.unwind_head = (uintptr_t)tbl,
			};
			rc = cc_register_jit(g_fd, &ji);
		}
		REQUIRE_RC(rc, 0, "registering [%#llx,%#llx)", ULL(x->start),
			   ULL(x->end));
		done[order[i]] = true;
		nr++;
	}
	memcpy(s, r, sizeof(s));
	qsort(s, 7, sizeof(s[0]), range_cmp);

	/* Walk: start at 0, continue from each answer's text_end. */
	addr = 0;
	for (n = 0; n < 8; n++) {
		rc = cc_query_at(g_fd, addr, &q);
		if (n == 7) {
			EXPECT_RC(rc, ENOENT, "QUERY past the last registration (addr %#llx)",
				  ULL(addr));
			break;
		}
		REQUIRE_RC(rc, 0, "QUERY walk step %d (addr %#llx)", n, ULL(addr));
		EXPECT(q.text_start == s[n].start && q.text_end == s[n].end &&
		       q.kind == s[n].kind,
		       "walk step %d: got [%#llx,%#llx) kind %u, expected [%#llx,%#llx) kind %u",
		       n, ULL(q.text_start), ULL(q.text_end), q.kind,
		       ULL(s[n].start), ULL(s[n].end), s[n].kind);
		if (q.kind == CODECTL_KIND_JIT)
			EXPECT(q.unwind_head == (uintptr_t)tbl,
			       "JIT unwind_head %#llx, expected %p",
			       ULL(q.unwind_head), (void *)tbl);
		REQUIRE(q.text_end > addr, "cursor did not advance");
		addr = q.text_end;
	}
	/* Point lookups: first byte, last byte, one before the start. */
	for (i = 0; i < 7; i++) {
		uint64_t probe[3] = { s[i].start, s[i].end - 1, s[i].start - 1 };
		int want[3] = { i, i, i };
		int k;

		if (i > 0 && s[i - 1].end > s[i].start - 1)
			want[2] = i - 1;	/* start - 1 is inside the previous */
		for (k = 0; k < 3; k++) {
			rc = cc_query_at(g_fd, probe[k], &q);
			if (!EXPECT_RC(rc, 0, "QUERY addr %#llx", ULL(probe[k])))
				continue;
			EXPECT(q.text_start == s[want[k]].start &&
			       q.text_end == s[want[k]].end,
			       "QUERY addr %#llx: got [%#llx,%#llx), expected [%#llx,%#llx)",
			       ULL(probe[k]), ULL(q.text_start), ULL(q.text_end),
			       ULL(s[want[k]].start), ULL(s[want[k]].end));
		}
	}
	EXPECT_RC(cc_query_at(g_fd, s[6].end, &q), ENOENT,
		  "QUERY at the last text_end");
	EXPECT_RC(cc_query_at(g_fd, UINT64_MAX, &q), ENOENT, "QUERY at UINT64_MAX");
	EXPECT(cc_nr(g_fd) == 7, "nr_registrations %ld, expected 7", cc_nr(g_fd));
out:
	for (i = 0; i < 7; i++)
		if (done[i])
			EXPECT_RC(cc_unregister(g_fd, r[i].start, r[i].end), 0,
				  "UNREGISTER [%#llx,%#llx)", ULL(r[i].start),
				  ULL(r[i].end));
	EXPECT_RC(cc_query_at(g_fd, 0, &q), ENOENT, "QUERY after removing all");
	for (i = 0; i < 3; i++)
		unmap_pages(m[i], 2);
	unmap_pages(tbl, 1);
	return T_PASS;
}

TEST(query_buffers)
{
	static const char path[] = "/usr/lib/x86_64-linux-gnu/libquery-buffers.so.1";
	static const char dl[] = "libquery-buffers.so.1.debug";
	const size_t plen = sizeof(path), dlen = sizeof(dl);
	struct codectl_query_info q;
	struct codectl_elf_info ei;
	uint8_t bid[20], *code, *ro = NULL;
	char pbuf[256], dbuf[256];
	int i, rc;
	bool reg = false;

	code = map_code(1);
	if (!code)
		return T_FAIL;
	for (i = 0; i < 20; i++)
		bid[i] = 0xa0 + i;
	ei = (struct codectl_elf_info){
		.text_start = (uintptr_t)code + 64,
		.text_end = (uintptr_t)code + 128,
		.pathname = (uintptr_t)path,
		.build_id = (uintptr_t)bid,
		.debug_link_pathname = (uintptr_t)dl,
		.build_id_len = sizeof(bid),
		.debug_link_crc = 0xcafef00d,
	};
	REQUIRE_RC(cc_register_elf(g_fd, &ei), 0, "REGISTER_ELF");
	reg = true;

	/* No buffers at all: lengths are still reported. */
	memset(&q, 0, sizeof(q));
	rc = cc_query(g_fd, &q);
	if (EXPECT_RC(rc, 0, "QUERY without buffers"))
		check_elf_answer(&q, &ei, NULL, NULL, NULL);

	/* One byte too small: success, needed size returned, nothing written. */
	memset(&q, 0, sizeof(q));
	memset(pbuf, 0x5a, sizeof(pbuf));
	memset(dbuf, 0x5a, sizeof(dbuf));
	memset(qbid, 0x5a, sizeof(qbid));
	q.pathname = (uintptr_t)pbuf;
	q.pathname_len = plen - 1;
	q.debug_link_pathname = (uintptr_t)dbuf;
	q.debug_link_len = dlen - 1;
	q.build_id = (uintptr_t)qbid;
	q.build_id_len = sizeof(bid) - 1;
	rc = cc_query(g_fd, &q);
	if (EXPECT_RC(rc, 0, "QUERY with buffers one byte too small")) {
		EXPECT(q.pathname_len == plen, "pathname_len %u, expected %zu",
		       q.pathname_len, plen);
		EXPECT(q.debug_link_len == dlen, "debug_link_len %u, expected %zu",
		       q.debug_link_len, dlen);
		EXPECT(q.build_id_len == sizeof(bid), "build_id_len %u, expected %zu",
		       q.build_id_len, sizeof(bid));
		for (i = 0; i < (int)sizeof(pbuf); i++)
			if (pbuf[i] != 0x5a || dbuf[i] != 0x5a) {
				FAIL("too-small string buffer was written (offset %d)", i);
				break;
			}
		for (i = 0; i < (int)sizeof(qbid); i++)
			if (qbid[i] != 0x5a) {
				FAIL("too-small build id buffer was written (offset %d)", i);
				break;
			}
	}
	/* Non-NULL buffers of length 0: likewise. */
	memset(&q, 0, sizeof(q));
	q.pathname = (uintptr_t)pbuf;
	q.debug_link_pathname = (uintptr_t)dbuf;
	q.build_id = (uintptr_t)qbid;
	rc = cc_query(g_fd, &q);
	if (EXPECT_RC(rc, 0, "QUERY with zero-length buffers")) {
		EXPECT(q.pathname_len == plen && q.debug_link_len == dlen &&
		       q.build_id_len == sizeof(bid),
		       "lengths %u/%u/%u, expected %zu/%zu/%zu", q.pathname_len,
		       q.debug_link_len, q.build_id_len, plen, dlen, sizeof(bid));
		EXPECT(pbuf[0] == 0x5a && dbuf[0] == 0x5a && qbid[0] == 0x5a,
		       "zero-length buffer was written");
	}
	/* Exactly the needed size. */
	memset(&q, 0, sizeof(q));
	q.pathname = (uintptr_t)pbuf;
	q.pathname_len = plen;
	q.debug_link_pathname = (uintptr_t)dbuf;
	q.debug_link_len = dlen;
	q.build_id = (uintptr_t)qbid;
	q.build_id_len = sizeof(bid);
	memset(qbid, 0x5a, sizeof(qbid));
	rc = cc_query(g_fd, &q);
	if (EXPECT_RC(rc, 0, "QUERY with exactly sized buffers")) {
		check_elf_answer(&q, &ei, pbuf, dbuf, qbid);
		EXPECT(pbuf[plen] == 0x5a && dbuf[dlen] == 0x5a &&
		       qbid[sizeof(bid)] == 0x5a,
		       "QUERY wrote past the end of a buffer");
	}

	/* __reserved must be 0. */
	memset(&q, 0, sizeof(q));
	q.__reserved = 1;
	EXPECT_RC(cc_query(g_fd, &q), EINVAL, "QUERY with __reserved = 1");
	q.__reserved = 0x80000000;
	EXPECT_RC(cc_query(g_fd, &q), EINVAL, "QUERY with __reserved = 0x80000000");

	/* Unwritable buffers. */
	ro = map_pages(1, PROT_READ);
	REQUIRE(ro, "mmap");
	{
		const uint64_t bad[3] = { LOW_BAD_ADDR, (uintptr_t)ro, KERNEL_ADDR };
		const char *const badn[3] = { "unmapped", "read-only", "kernel" };

		for (i = 0; i < 3; i++) {
			memset(&q, 0, sizeof(q));
			q.pathname = bad[i];
			q.pathname_len = CODECTL_PATH_MAX;
			EXPECT_RC(cc_query(g_fd, &q), EFAULT,
				  "QUERY with a %s pathname buffer", badn[i]);
			memset(&q, 0, sizeof(q));
			q.debug_link_pathname = bad[i];
			q.debug_link_len = CODECTL_PATH_MAX;
			EXPECT_RC(cc_query(g_fd, &q), EFAULT,
				  "QUERY with a %s debug link buffer", badn[i]);
			memset(&q, 0, sizeof(q));
			q.build_id = bad[i];
			q.build_id_len = CODECTL_BUILD_ID_MAX;
			EXPECT_RC(cc_query(g_fd, &q), EFAULT,
				  "QUERY with a %s build id buffer", badn[i]);
		}
	}
	/* A pathname buffer that runs into a hole. */
	{
		uint8_t *h = map_with_hole(1, PROT_READ | PROT_WRITE);

		if (h && EXPECT(is_unmapped((uintptr_t)h + g_page, g_page),
				"test setup: hole mapped again")) {
			memset(&q, 0, sizeof(q));
			q.pathname = (uintptr_t)h + g_page - 10;
			q.pathname_len = plen;
			EXPECT_RC(cc_query(g_fd, &q), EFAULT,
				  "QUERY with a pathname buffer running into unmapped memory");
			unmap_pages(h, 1);
		}
	}
out:
	if (reg)
		EXPECT_RC(cc_unregister(g_fd, ei.text_start, ei.text_end), 0,
			  "UNREGISTER");
	unmap_pages(ro, 1);
	unmap_pages(code, 1);
	return T_PASS;
}

static uint64_t lcg(uint64_t *s)
{
	*s = *s * 6364136223846793005ULL + 1442695040888963407ULL;
	return *s >> 33;
}

static void shuffle(int *a, int n, uint64_t *seed)
{
	int i, j, t;

	for (i = n - 1; i > 0; i--) {
		j = lcg(seed) % (i + 1);
		t = a[i];
		a[i] = a[j];
		a[j] = t;
	}
}

TEST(query_many)
{
	enum { STRIDE = 32, LEN = 24 };
	struct codectl_version v0, v1;
	struct codectl_query_info q;
	uint64_t seed = 0x5eed, base = 0, addr;
	int *perm = NULL, n = 500, i, k, rc, nreg = 0;
	bool *live = NULL;
	uint8_t *code = NULL;
	size_t pages = 0;
	char name[64];

	REQUIRE_RC(cc_version(g_fd, &v0), 0, "VERSION");
	if (v0.max_registrations < (uint64_t)n)
		n = v0.max_registrations;
	pages = (n * STRIDE + g_page - 1) / g_page;
	code = map_code(pages);
	perm = calloc(n, sizeof(*perm));
	live = calloc(n, sizeof(*live));
	REQUIRE(code && perm && live, "allocation");
	base = (uintptr_t)code;
	for (i = 0; i < n; i++)
		perm[i] = i;
	shuffle(perm, n, &seed);
	for (i = 0; i < n; i++) {
		int r = perm[i];
		struct codectl_elf_info ei = {
			.text_start = base + (uint64_t)r * STRIDE,
			.text_end = base + (uint64_t)r * STRIDE + LEN,
			.pathname = (uintptr_t)name,
		};

		snprintf(name, sizeof(name), "/many/%d", r);
		rc = cc_register_elf(g_fd, &ei);
		if (rc == -ENOMEM && i > 0) {
			REQUIRE_RC(cc_version(g_fd, &v1), 0, "VERSION");
			printf("# max_bytes %llu reached after %d registrations\n",
			       ULL(v1.max_bytes), i);
			break;
		}
		REQUIRE_RC(rc, 0, "REGISTER_ELF #%d [%#llx,%#llx)", i,
			   ULL(ei.text_start), ULL(ei.text_end));
		live[r] = true;
		nreg++;
	}
	if (nreg < 500)
		printf("# limits allow %d registrations, using that many\n", nreg);
	EXPECT(cc_nr(g_fd) == nreg, "nr_registrations %ld, expected %d",
	       cc_nr(g_fd), nreg);
	/* Walk: every live range once, in address order. */
	addr = 0;
	k = 0;
	while (!(rc = cc_query_at(g_fd, addr, &q))) {
		while (k < n && !live[k])
			k++;
		if (k >= n) {
			FAIL("walk returned an extra [%#llx,%#llx)",
			     ULL(q.text_start), ULL(q.text_end));
			break;
		}
		if (q.text_start != base + (uint64_t)k * STRIDE ||
		    q.text_end != base + (uint64_t)k * STRIDE + LEN) {
			FAIL("walk: got [%#llx,%#llx), expected range %d", ULL(q.text_start),
			     ULL(q.text_end), k);
			break;
		}
		addr = q.text_end;
		k++;
	}
	EXPECT(rc == 0 || rc == -ENOENT, "walk ended with %s", ename(rc));
	/* Random point lookups. */
	for (i = 0; i < 1000; i++) {
		uint64_t off = lcg(&seed) % ((uint64_t)n * STRIDE);
		int idx = off / STRIDE;

		/* The answer is the lowest live range ending above base + off. */
		if (off % STRIDE >= LEN || !live[idx]) {
			idx++;
			while (idx < n && !live[idx])
				idx++;
		}
		rc = cc_query_at(g_fd, base + off, &q);
		if (idx >= n) {
			if (!EXPECT_RC(rc, ENOENT, "QUERY %#llx", ULL(base + off)))
				break;
			continue;
		}
		if (!EXPECT_RC(rc, 0, "QUERY %#llx", ULL(base + off)))
			break;
		if (!EXPECT(q.text_start == base + (uint64_t)idx * STRIDE,
			    "QUERY %#llx: got [%#llx,%#llx), expected range %d",
			    ULL(base + off), ULL(q.text_start), ULL(q.text_end), idx))
			break;
	}
	/* Remove in another random order. */
	shuffle(perm, n, &seed);
	for (i = 0; i < n; i++) {
		int r = perm[i];

		if (!live[r])
			continue;
		rc = cc_unregister(g_fd, base + (uint64_t)r * STRIDE,
				   base + (uint64_t)r * STRIDE + LEN);
		REQUIRE_RC(rc, 0, "UNREGISTER range %d", r);
		live[r] = false;
		nreg--;
		if (i % 50 == 0)
			EXPECT(cc_nr(g_fd) == nreg,
			       "nr_registrations %ld, expected %d", cc_nr(g_fd), nreg);
	}
	EXPECT_RC(cc_query_at(g_fd, 0, &q), ENOENT, "QUERY after removing all");
	REQUIRE_RC(cc_version(g_fd, &v1), 0, "VERSION");
	EXPECT(v1.bytes == v0.bytes, "bytes %llu after removing all, %llu before",
	       ULL(v1.bytes), ULL(v0.bytes));
out:
	if (live)
		for (i = 0; i < n; i++)
			if (live[i])
				cc_unregister(g_fd, base + (uint64_t)i * STRIDE,
					      base + (uint64_t)i * STRIDE + LEN);
	free(perm);
	free(live);
	unmap_pages(code, pages);
	return T_PASS;
}
