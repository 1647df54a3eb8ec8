// SPDX-License-Identifier: GPL-2.0
/*
 * codectl_elf_info_from_phdr() on synthetic objects: program header
 * layouts, the executable segment, PT_GNU_SFRAME with a header in memory,
 * build id notes, pathnames, and .gnu_debuglink read from crafted files.
 */
#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <link.h>
#include <limits.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/auxv.h>
#include <sys/mman.h>
#include <unistd.h>
#include <setjmp.h>
#include <cmocka.h>

#include "fakedev.h"

#ifndef PT_GNU_SFRAME
#define PT_GNU_SFRAME	0x6474e554
#endif

#define U(p)	((uint64_t)(uintptr_t)(p))

static uint64_t page;

/* Memory of the synthetic objects: readable, never executed. */
static unsigned char image[0x6000] __attribute__((aligned(4096)));

/* Two pages, the second PROT_NONE: reading past the first one faults. */
static unsigned char *edge;

struct obj {
	ElfW(Phdr) ph[16];
	struct dl_phdr_info info;
};

static ElfW(Phdr) *add(struct obj *o, uint32_t type, uint32_t flags,
		       uint64_t vaddr, uint64_t memsz, uint64_t align)
{
	ElfW(Phdr) *ph = &o->ph[o->info.dlpi_phnum++];

	assert_true(o->info.dlpi_phnum <= 16);
	ph->p_type = type;
	ph->p_flags = flags;
	ph->p_offset = vaddr;
	ph->p_vaddr = vaddr;
	ph->p_paddr = vaddr;
	ph->p_filesz = memsz;
	ph->p_memsz = memsz;
	ph->p_align = align;
	return ph;
}

static void init(struct obj *o, const void *base, const char *name)
{
	memset(o, 0, sizeof(*o));
	o->info.dlpi_addr = (uintptr_t)base;
	o->info.dlpi_name = name;
	o->info.dlpi_phdr = o->ph;
}

/* R [0, 0x1000), RX [0x1000, 0x3345), RW [0x4000, 0x5800) of image. */
static void init_std(struct obj *o, const char *name)
{
	init(o, image, name);
	add(o, PT_LOAD, PF_R, 0, 0x1000, 0x1000);
	add(o, PT_LOAD, PF_R | PF_X, 0x1000, 0x2345, 0x1000);
	add(o, PT_LOAD, PF_R | PF_W, 0x4000, 0x1800, 0x1000);
	add(o, PT_GNU_STACK, PF_R | PF_W, 0, 0, 16);
}

static uint64_t align_up(uint64_t x, uint64_t a)
{
	return (x + a - 1) & ~(a - 1);
}

static int from_phdr(struct obj *o, struct codectl_elf_info *ei,
		     struct codectl_elf_buf *buf)
{
	memset(ei, 0xa5, sizeof(*ei));	/* everything must be written */
	return codectl_elf_info_from_phdr(&o->info, ei, buf);
}

static struct codectl_elf_buf buf;

/* --- PT_LOAD layouts and the executable segment ----------------------- */

static void test_load_layout(void **state)
{
	struct codectl_elf_info ei;
	struct obj o;

	(void)state;
	init_std(&o, "/nonexistent/libstd.so");
	errno = EDOM;
	assert_int_equal(from_phdr(&o, &ei, &buf), 0);
	assert_int_equal(errno, EDOM);
	assert_int_equal(ei.elf_start, U(image));
	assert_int_equal(ei.elf_end, U(image) + align_up(0x5800, page));
	assert_int_equal(ei.text_start, U(image) + 0x1000);
	assert_int_equal(ei.text_end, U(image) + 0x3345);
	assert_int_equal(ei.sframe_start, 0);
	assert_int_equal(ei.sframe_end, 0);
	assert_int_equal(ei.build_id, 0);
	assert_int_equal(ei.build_id_len, 0);
	assert_int_equal(ei.debug_link_pathname, 0);
	assert_int_equal(ei.debug_link_crc, 0);
	assert_int_equal(ei.pathname, U(o.info.dlpi_name));
}

/* Unaligned and unordered segments; empty PT_LOADs do not count. */
static void test_load_bounds(void **state)
{
	struct codectl_elf_info ei;
	struct obj o;

	(void)state;
	init(&o, image + 0x100, "x");
	add(&o, PT_LOAD, PF_R | PF_W, 0x3f00, 0x123, 0x1000);
	add(&o, PT_LOAD, PF_R | PF_X, 0xe00, 0x400, 0x1000);
	add(&o, PT_LOAD, PF_R, 0x20, 0x100, 0x1000);
	add(&o, PT_LOAD, PF_R, 0x100000, 0, 0x1000);	/* empty */
	assert_int_equal(from_phdr(&o, &ei, NULL), 0);
	assert_int_equal(ei.elf_start, U(image));	/* 0x120 rounded down */
	assert_int_equal(ei.elf_end, align_up(U(image) + 0x100 + 0x4023, page));
	assert_int_equal(ei.text_start, U(image) + 0xf00);
	assert_int_equal(ei.text_end, U(image) + 0x1300);
	assert_true(ei.elf_start <= ei.text_start && ei.text_end <= ei.elf_end);
	assert_int_equal(ei.elf_start % page, 0);
	assert_int_equal(ei.elf_end % page, 0);
}

/* A non-PIE executable: dlpi_addr 0 and absolute p_vaddr. */
static void test_absolute_vaddr(void **state)
{
	struct codectl_elf_info ei;
	struct obj o;

	(void)state;
	init(&o, NULL, "y");
	add(&o, PT_LOAD, PF_R | PF_X, U(image), 0x2000, 0x1000);
	add(&o, PT_LOAD, PF_R | PF_W, U(image) + 0x3000, 0x10, 0x1000);
	assert_int_equal(from_phdr(&o, &ei, NULL), 0);
	assert_int_equal(ei.text_start, U(image));
	assert_int_equal(ei.text_end, U(image) + 0x2000);
	assert_int_equal(ei.elf_start, U(image));
	assert_int_equal(ei.elf_end, align_up(U(image) + 0x3010, page));
}

static void test_first_exec_segment(void **state)
{
	struct codectl_elf_info ei;
	struct obj o;

	(void)state;
	init(&o, image, "z");
	add(&o, PT_GNU_STACK, PF_R | PF_W | PF_X, 0, 0, 16);	/* not code */
	add(&o, PT_NOTE, PF_R | PF_X, 0x10, 0x20, 4);		/* not code */
	add(&o, PT_LOAD, PF_R, 0, 0x1000, 0x1000);
	add(&o, PT_LOAD, PF_R | PF_X, 0x1000, 0, 0x1000);	/* empty */
	add(&o, PT_LOAD, PF_X, 0x2000, 0x800, 0x1000);		/* the one */
	add(&o, PT_LOAD, PF_R | PF_X, 0x3000, 0x1000, 0x1000);
	assert_int_equal(from_phdr(&o, &ei, NULL), 0);
	assert_int_equal(ei.text_start, U(image) + 0x2000);
	assert_int_equal(ei.text_end, U(image) + 0x2800);
	assert_int_equal(ei.elf_end, U(image) + 0x4000);
}

static void test_no_exec_segment(void **state)
{
	struct codectl_elf_info ei;
	struct obj o;

	(void)state;
	init(&o, image, "data-only");
	add(&o, PT_LOAD, PF_R, 0, 0x1000, 0x1000);
	add(&o, PT_LOAD, PF_R | PF_W, 0x1000, 0x1000, 0x1000);
	add(&o, PT_GNU_STACK, PF_R | PF_W | PF_X, 0, 0, 16);
	errno = 0;
	assert_int_equal(from_phdr(&o, &ei, &buf), -1);
	assert_int_equal(errno, ENOENT);

	init(&o, image, "no-phdrs");
	errno = 0;
	assert_int_equal(from_phdr(&o, &ei, &buf), -1);
	assert_int_equal(errno, ENOENT);
}

static void test_bad_arguments(void **state)
{
	struct codectl_elf_info ei;
	struct obj o;

	(void)state;
	init_std(&o, "a");
	errno = 0;
	assert_int_equal(codectl_elf_info_from_phdr(NULL, &ei, &buf), -1);
	assert_int_equal(errno, EINVAL);
	errno = 0;
	assert_int_equal(codectl_elf_info_from_phdr(&o.info, NULL, &buf), -1);
	assert_int_equal(errno, EINVAL);
	o.info.dlpi_phdr = NULL;
	errno = 0;
	assert_int_equal(codectl_elf_info_from_phdr(&o.info, &ei, &buf), -1);
	assert_int_equal(errno, EINVAL);
}

/* --- PT_GNU_SFRAME ------------------------------------------------------ */

static void put_sframe(unsigned char *p, uint16_t magic, uint8_t auxhdr_len,
		       uint32_t fre_len, uint32_t fdes_off, uint32_t fres_off)
{
	uint32_t num_fdes = 2, num_fres = 5;

	memset(p, 0, 28);
	memcpy(p, &magic, 2);
	p[2] = 2;		/* version */
	p[3] = 1;		/* flags: sorted */
	p[4] = 3;		/* abi: amd64 */
	p[5] = 0;
	p[6] = (uint8_t)-8;
	p[7] = auxhdr_len;
	memcpy(p + 8, &num_fdes, 4);
	memcpy(p + 12, &num_fres, 4);
	memcpy(p + 16, &fre_len, 4);
	memcpy(p + 20, &fdes_off, 4);
	memcpy(p + 24, &fres_off, 4);
}

/* SFrame segment at image + 0x800, @memsz bytes, in the R segment. */
static void sframe_case(uint64_t memsz, uint64_t *start, uint64_t *end)
{
	struct codectl_elf_info ei;
	struct obj o;

	init_std(&o, "s");
	add(&o, PT_GNU_SFRAME, PF_R, 0x800, memsz, 8);
	assert_int_equal(from_phdr(&o, &ei, NULL), 0);
	*start = ei.sframe_start;
	*end = ei.sframe_end;
}

static void test_sframe_size_from_header(void **state)
{
	uint64_t s, e;

	(void)state;
	put_sframe(image + 0x800, 0xdee2, 0, 30, 0, 40);
	sframe_case(0x100, &s, &e);
	assert_int_equal(s, U(image) + 0x800);
	assert_int_equal(e, s + 28 + 40 + 30);

	put_sframe(image + 0x800, 0xdee2, 12, 30, 0, 40);	/* aux header */
	sframe_case(0x100, &s, &e);
	assert_int_equal(e, s + 28 + 12 + 40 + 30);

	put_sframe(image + 0x800, 0xdee2, 0, 100, 0, 0x100 - 128);
	sframe_case(0x100, &s, &e);				/* exact fit */
	assert_int_equal(e, s + 0x100);

	put_sframe(image + 0x800, 0xdee2, 0, 0, 0, 0);		/* header only */
	sframe_case(28, &s, &e);
	assert_int_equal(e, s + 28);
}

static void test_sframe_bogus_header(void **state)
{
	uint64_t s, e;

	(void)state;
	put_sframe(image + 0x800, 0xe2de, 0, 30, 0, 40);	/* bad magic */
	sframe_case(0x100, &s, &e);
	assert_int_equal(s, U(image) + 0x800);
	assert_int_equal(e, s + 0x100);

	memset(image + 0x800, 0, 28);				/* zeroes */
	sframe_case(0x100, &s, &e);
	assert_int_equal(e, s + 0x100);

	put_sframe(image + 0x800, 0xdee2, 0, 30, 0, 0x100);	/* too big */
	sframe_case(0x100, &s, &e);
	assert_int_equal(e, s + 0x100);

	put_sframe(image + 0x800, 0xdee2, 255, UINT32_MAX, UINT32_MAX,
		   UINT32_MAX);					/* no wrap */
	sframe_case(0x100, &s, &e);
	assert_int_equal(e, s + 0x100);

	put_sframe(image + 0x800, 0xdee2, 0, 0, 0, 0);		/* < header */
	sframe_case(20, &s, &e);
	assert_int_equal(s, U(image) + 0x800);
	assert_int_equal(e, s + 20);
	memset(image + 0x800, 0, 28);
}

/* A header at the very end of readable memory is read within bounds. */
static void test_sframe_at_edge(void **state)
{
	struct codectl_elf_info ei;
	struct obj o;

	(void)state;
	put_sframe(edge + page - 28, 0xdee2, 0, 0, 0, 0);
	init(&o, edge, "edge");
	add(&o, PT_LOAD, PF_R | PF_X, 0, page, page);
	add(&o, PT_GNU_SFRAME, PF_R, page - 28, 28, 8);
	assert_int_equal(from_phdr(&o, &ei, NULL), 0);
	assert_int_equal(ei.sframe_start, U(edge) + page - 28);
	assert_int_equal(ei.sframe_end, U(edge) + page);

	/* Only 20 bytes left: not even a header, never read past them. */
	init(&o, edge, "edge");
	add(&o, PT_LOAD, PF_R | PF_X, 0, page, page);
	add(&o, PT_GNU_SFRAME, PF_R, page - 20, 20, 8);
	assert_int_equal(from_phdr(&o, &ei, NULL), 0);
	assert_int_equal(ei.sframe_end, U(edge) + page);
}

/* SFrame that neither we nor the kernel can read is left out. */
static void test_sframe_unreadable(void **state)
{
	struct codectl_elf_info ei;
	struct obj o;

	(void)state;
	/* In the PROT_NONE page, which no PT_LOAD covers: never read. */
	init(&o, edge, "e");
	add(&o, PT_LOAD, PF_R | PF_X, 0, page, page);
	add(&o, PT_GNU_SFRAME, PF_R, page, 0x100, 8);
	assert_int_equal(from_phdr(&o, &ei, NULL), 0);
	assert_int_equal(ei.sframe_start, 0);
	assert_int_equal(ei.sframe_end, 0);

	/* Straddling the end of the PT_LOAD. */
	init(&o, edge, "e");
	add(&o, PT_LOAD, PF_R | PF_X, 0, page, page);
	add(&o, PT_GNU_SFRAME, PF_R, page - 0x10, 0x100, 8);
	assert_int_equal(from_phdr(&o, &ei, NULL), 0);
	assert_int_equal(ei.sframe_start, 0);

	/* In an execute-only PT_LOAD. */
	init(&o, image, "x");
	add(&o, PT_LOAD, PF_X, 0, 0x1000, 0x1000);
	add(&o, PT_GNU_SFRAME, PF_R, 0x800, 0x100, 8);
	assert_int_equal(from_phdr(&o, &ei, NULL), 0);
	assert_int_equal(ei.sframe_start, 0);

	/* Empty. */
	init_std(&o, "x");
	add(&o, PT_GNU_SFRAME, PF_R, 0x800, 0, 8);
	assert_int_equal(from_phdr(&o, &ei, NULL), 0);
	assert_int_equal(ei.sframe_start, 0);
	assert_int_equal(ei.sframe_end, 0);
}

static void test_sframe_first_segment(void **state)
{
	struct codectl_elf_info ei;
	struct obj o;

	(void)state;
	put_sframe(image + 0x800, 0xdee2, 0, 2, 0, 2);
	put_sframe(image + 0x900, 0xdee2, 0, 4, 0, 4);
	init_std(&o, "two");
	add(&o, PT_GNU_SFRAME, PF_R, 0x800, 0x80, 8);
	add(&o, PT_GNU_SFRAME, PF_R, 0x900, 0x80, 8);
	assert_int_equal(from_phdr(&o, &ei, NULL), 0);
	assert_int_equal(ei.sframe_start, U(image) + 0x800);
	assert_int_equal(ei.sframe_end, U(image) + 0x800 + 32);
	memset(image + 0x800, 0, 0x200);
}

/* --- Build id notes ----------------------------------------------------- */

/* Write a note at @p; returns its size with padding to @align. */
static size_t put_note(unsigned char *p, size_t align, uint32_t type,
		       const char *name, uint32_t namesz, const void *desc,
		       uint32_t descsz)
{
	ElfW(Nhdr) nh = { namesz, descsz, type };
	size_t desc_off = align_up(sizeof(nh) + namesz, align);
	size_t end = align_up(desc_off + descsz, align);

	memset(p, 0, end);
	memcpy(p, &nh, sizeof(nh));
	if (namesz)
		memcpy(p + sizeof(nh), name, namesz);
	if (descsz)
		memcpy(p + desc_off, desc, descsz);
	return end;
}

static const unsigned char id20[20] = {
	0x88, 0x64, 0xd6, 0xde, 0xa7, 0xd7, 0xb7, 0xeb, 0x16, 0x3a,
	0xb4, 0x82, 0x22, 0x8c, 0xd5, 0x9e, 0xe9, 0x3d, 0xd3, 0x3d,
};
static unsigned char desc_buf[128];

/* Notes at image + 0x200: @n bytes in one PT_NOTE of @align. */
static void notes_case(size_t n, uint64_t align, struct codectl_elf_info *ei)
{
	struct obj o;

	init_std(&o, "n");
	add(&o, PT_NOTE, PF_R, 0x200, n, align);
	assert_int_equal(from_phdr(&o, ei, NULL), 0);
}

static void test_build_id_4(void **state)
{
	struct codectl_elf_info ei;
	unsigned char *p = image + 0x200;
	size_t n;

	(void)state;
	n = put_note(p, 4, NT_GNU_ABI_TAG, "GNU", 4, desc_buf, 16);
	n += put_note(p + n, 4, NT_GNU_BUILD_ID, "GNU", 4, id20, 20);
	notes_case(n, 4, &ei);
	assert_int_equal(ei.build_id, U(p) + 32 + 16);
	assert_int_equal(ei.build_id_len, 20);
	assert_memory_equal((void *)(uintptr_t)ei.build_id, id20, 20);

	/* A 20-byte descriptor before it: the next note is at 36 with 4. */
	n = put_note(p, 4, 0x1234, "GNU", 4, desc_buf, 20);
	assert_int_equal(n, 36);
	n += put_note(p + n, 4, NT_GNU_BUILD_ID, "GNU", 4, id20, 20);
	notes_case(n, 4, &ei);
	assert_int_equal(ei.build_id, U(p) + 36 + 16);
	assert_memory_equal((void *)(uintptr_t)ei.build_id, id20, 20);
}

static void test_build_id_8(void **state)
{
	struct codectl_elf_info ei;
	unsigned char *p = image + 0x200;
	size_t n;

	(void)state;
	/* Same as above with 8-byte alignment: the next note is at 40. */
	n = put_note(p, 8, NT_GNU_PROPERTY_TYPE_0, "GNU", 4, desc_buf, 20);
	assert_int_equal(n, 40);
	n += put_note(p + n, 8, NT_GNU_BUILD_ID, "GNU", 4, id20, 20);
	notes_case(n, 8, &ei);
	assert_int_equal(ei.build_id, U(p) + 40 + 16);
	assert_int_equal(ei.build_id_len, 20);
	assert_memory_equal((void *)(uintptr_t)ei.build_id, id20, 20);

	/* Odd name size: descriptor at 8-byte aligned offset 24. */
	n = put_note(p, 8, NT_GNU_BUILD_ID, "GNU\0xyz", 8, id20, 20);
	notes_case(n, 8, &ei);
	assert_int_equal(ei.build_id, 0);	/* name "GNU\0xyz" is not "GNU" */
	n = put_note(p, 8, 0x99, "abcdefg", 7, desc_buf, 3);
	assert_int_equal(n, 32);
	n += put_note(p + n, 8, NT_GNU_BUILD_ID, "GNU", 4, id20, 8);
	notes_case(n, 8, &ei);
	assert_int_equal(ei.build_id, U(p) + 32 + 16);
	assert_int_equal(ei.build_id_len, 8);
}

/* Real binaries: an 8-aligned PT_NOTE (properties), then a 4-aligned one. */
static void test_build_id_second_segment(void **state)
{
	struct codectl_elf_info ei;
	unsigned char *p = image + 0x200, *q = image + 0x300;
	size_t n, m;
	struct obj o;

	(void)state;
	n = put_note(p, 8, NT_GNU_PROPERTY_TYPE_0, "GNU", 4, desc_buf, 16);
	m = put_note(q, 4, NT_GNU_BUILD_ID, "GNU", 4, id20, 20);
	m += put_note(q + m, 4, NT_GNU_ABI_TAG, "GNU", 4, desc_buf, 16);
	init_std(&o, "n");
	add(&o, PT_NOTE, PF_R, 0x200, n, 8);
	add(&o, PT_NOTE, PF_R, 0x300, m, 4);
	assert_int_equal(from_phdr(&o, &ei, NULL), 0);
	assert_int_equal(ei.build_id, U(q) + 16);
	assert_int_equal(ei.build_id_len, 20);

	/* Two build ids: the first one wins. */
	n = put_note(p, 8, NT_GNU_BUILD_ID, "GNU", 4, desc_buf, 16);
	init_std(&o, "n");
	add(&o, PT_NOTE, PF_R, 0x200, n, 8);
	add(&o, PT_NOTE, PF_R, 0x300, m, 4);
	assert_int_equal(from_phdr(&o, &ei, NULL), 0);
	assert_int_equal(ei.build_id, U(p) + 16);
	assert_int_equal(ei.build_id_len, 16);
}

static void test_build_id_other_notes(void **state)
{
	struct codectl_elf_info ei;
	unsigned char *p = image + 0x200;
	size_t n;

	(void)state;
	/* Type 3 from other owners, and GNU notes of other types, first. */
	n = put_note(p, 4, NT_GNU_BUILD_ID, "Go", 3, desc_buf, 12);
	n += put_note(p + n, 4, NT_GNU_BUILD_ID, "GNX", 4, desc_buf, 12);
	n += put_note(p + n, 4, NT_GNU_BUILD_ID, "GNU", 3, desc_buf, 12);
	n += put_note(p + n, 4, NT_GNU_GOLD_VERSION, "GNU", 4, desc_buf, 12);
	n += put_note(p + n, 4, NT_GNU_BUILD_ID, "GNU", 4, id20, 20);
	notes_case(n, 4, &ei);
	assert_int_equal(ei.build_id, U(p) + n - 20);
	assert_int_equal(ei.build_id_len, 20);

	/* Empty notes are fine. */
	n = put_note(p, 4, 0, "", 0, NULL, 0);
	assert_int_equal(n, 12);
	n += put_note(p + n, 4, NT_GNU_BUILD_ID, "GNU", 4, id20, 20);
	notes_case(n, 4, &ei);
	assert_int_equal(ei.build_id, U(p) + 12 + 16);
}

static void test_build_id_length(void **state)
{
	struct codectl_elf_info ei;
	unsigned char *p = image + 0x200;
	size_t n;

	(void)state;
	n = put_note(p, 4, NT_GNU_BUILD_ID, "GNU", 4, desc_buf, 0);
	notes_case(n, 4, &ei);
	assert_int_equal(ei.build_id, 0);
	assert_int_equal(ei.build_id_len, 0);

	n = put_note(p, 4, NT_GNU_BUILD_ID, "GNU", 4, desc_buf,
		     CODECTL_BUILD_ID_MAX + 1);
	notes_case(n, 4, &ei);
	assert_int_equal(ei.build_id, 0);
	assert_int_equal(ei.build_id_len, 0);

	/* A bad one does not hide a good one after it. */
	n += put_note(p + n, 4, NT_GNU_BUILD_ID, "GNU", 4, desc_buf,
		      CODECTL_BUILD_ID_MAX);
	notes_case(n, 4, &ei);
	assert_int_equal(ei.build_id_len, CODECTL_BUILD_ID_MAX);

	n = put_note(p, 4, NT_GNU_BUILD_ID, "GNU", 4, desc_buf, 1);
	notes_case(n, 4, &ei);
	assert_int_equal(ei.build_id_len, 1);
	assert_int_equal(ei.build_id, U(p) + 16);
}

static void test_build_id_truncated(void **state)
{
	struct codectl_elf_info ei;
	unsigned char *p = image + 0x200;
	size_t n;

	(void)state;
	n = put_note(p, 4, NT_GNU_BUILD_ID, "GNU", 4, id20, 20);
	notes_case(n - 1, 4, &ei);		/* descriptor cut */
	assert_int_equal(ei.build_id, 0);
	notes_case(14, 4, &ei);			/* name cut */
	assert_int_equal(ei.build_id, 0);
	notes_case(8, 4, &ei);			/* header cut */
	assert_int_equal(ei.build_id, 0);

	/* Sizes that would wrap or run far away. */
	n = put_note(p, 4, NT_GNU_BUILD_ID, "GNU", 4, id20, 20);
	((ElfW(Nhdr) *)p)->n_namesz = UINT32_MAX;
	notes_case(n, 4, &ei);
	assert_int_equal(ei.build_id, 0);
	((ElfW(Nhdr) *)p)->n_namesz = 4;
	((ElfW(Nhdr) *)p)->n_descsz = UINT32_MAX - 3;
	notes_case(n, 4, &ei);
	assert_int_equal(ei.build_id, 0);

	/* The last note's padding may be missing: still fine. */
	n = put_note(p, 4, NT_GNU_BUILD_ID, "GNU", 4, id20, 18);
	notes_case(n - 2, 4, &ei);
	assert_int_equal(ei.build_id_len, 18);
}

/* Notes that end at the end of readable memory; notes that are not mapped. */
static void test_build_id_at_edge(void **state)
{
	struct codectl_elf_info ei;
	unsigned char note[64];
	size_t n;
	struct obj o;

	(void)state;
	n = put_note(note, 4, NT_GNU_BUILD_ID, "GNU", 4, id20, 20);
	memcpy(edge + page - n, note, n);
	init(&o, edge, "edge");
	add(&o, PT_LOAD, PF_R | PF_X, 0, page, page);
	add(&o, PT_NOTE, PF_R, page - n, n, 4);
	assert_int_equal(from_phdr(&o, &ei, NULL), 0);
	assert_int_equal(ei.build_id, U(edge) + page - 20);

	/* A note that claims more than its segment: not followed. */
	memcpy(edge + page - n, note, n);
	((ElfW(Nhdr) *)(edge + page - n))->n_descsz = 40;
	assert_int_equal(from_phdr(&o, &ei, NULL), 0);
	assert_int_equal(ei.build_id, 0);

	/* PT_NOTE in the PROT_NONE page (outside every PT_LOAD): not read. */
	init(&o, edge, "edge");
	add(&o, PT_LOAD, PF_R | PF_X, 0, page, page);
	add(&o, PT_NOTE, PF_R, page, 0x40, 4);
	assert_int_equal(from_phdr(&o, &ei, NULL), 0);
	assert_int_equal(ei.build_id, 0);
}

/* --- Pathnames ---------------------------------------------------------- */

static void test_pathname(void **state)
{
	struct codectl_elf_info ei;
	static char longname[CODECTL_PATH_MAX + 1];
	struct obj o;

	(void)state;
	init_std(&o, "linux-vdso.so.1");
	assert_int_equal(from_phdr(&o, &ei, &buf), 0);
	assert_int_equal(ei.pathname, U(o.info.dlpi_name));
	assert_string_equal((char *)(uintptr_t)ei.pathname, "linux-vdso.so.1");

	/* The longest name the kernel takes, and one byte more. */
	memset(longname, 'a', CODECTL_PATH_MAX - 1);
	longname[0] = '/';
	init_std(&o, longname);
	assert_int_equal(from_phdr(&o, &ei, &buf), 0);
	assert_int_equal(ei.pathname, U(longname));
	longname[CODECTL_PATH_MAX - 1] = 'a';
	assert_int_equal(from_phdr(&o, &ei, &buf), 0);
	assert_int_equal(ei.pathname, 0);
}

static void test_main_program_name(void **state)
{
	char exe[PATH_MAX + 1];
	struct codectl_elf_info ei;
	ssize_t n;
	struct obj o;

	(void)state;
	n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
	assert_true(n > 0);
	exe[n] = '\0';

	init_std(&o, "");
	memset(&buf, 0, sizeof(buf));
	errno = EDOM;
	assert_int_equal(from_phdr(&o, &ei, &buf), 0);
	assert_int_equal(errno, EDOM);
	assert_int_equal(ei.pathname, U(buf.pathname));
	assert_string_equal(buf.pathname, exe);
	/* /proc/self/exe is not this synthetic object: no debug link. */
	assert_int_equal(ei.debug_link_pathname, 0);

	init_std(&o, NULL);
	assert_int_equal(from_phdr(&o, &ei, &buf), 0);
	assert_string_equal((char *)(uintptr_t)ei.pathname, exe);

	/* Without a buffer: no pathname, still success. */
	init_std(&o, "");
	assert_int_equal(from_phdr(&o, &ei, NULL), 0);
	assert_int_equal(ei.pathname, 0);
	assert_int_equal(ei.text_start, U(image) + 0x1000);
}

/* --- .gnu_debuglink from the file -------------------------------------- */

static char tmpdir[] = "/tmp/codectl-unit-XXXXXX";

enum {
	F_NO_LINK	= 1 << 0,
	F_NOBITS	= 1 << 1,
	F_NO_NUL	= 1 << 2,
	F_SHORT_CRC	= 1 << 3,
	F_PAST_EOF	= 1 << 4,
	F_EXT_SHNUM	= 1 << 5,
	F_EXT_STRNDX	= 1 << 6,
	F_PHDR_DIFF	= 1 << 7,
	F_NOT_ELF	= 1 << 8,
	F_BAD_CLASS	= 1 << 9,
	F_BAD_STRTAB	= 1 << 10,
	F_NAME_OOB	= 1 << 11,
	F_EMPTY_NAME	= 1 << 12,
	F_NO_SHDRS	= 1 << 13,
	F_MANY_SHNUM	= 1 << 14,
};

/*
 * Write an ELF file whose program headers are @o's, with sections: null,
 * .shstrtab, .text, .gnu_debuglink (@link, @crc).  Returns its path.
 */
static const char *write_elf(const char *name, const struct obj *o,
			     const char *link, uint32_t crc, unsigned int f)
{
	static const char strtab[] = "\0.shstrtab\0.text\0.gnu_debuglink";
	static char path[256];
	unsigned char file[8192];
	ElfW(Shdr) sh[4];
	size_t off, phsz, linksz, namelen, nsec = 4;
	ElfW(Ehdr) eh;
	ElfW(Phdr) ph[16];
	FILE *fp;

	memset(file, 0, sizeof(file));
	memset(sh, 0, sizeof(sh));
	memset(&eh, 0, sizeof(eh));
	memcpy(eh.e_ident, ELFMAG, SELFMAG);
	eh.e_ident[EI_CLASS] = sizeof(void *) == 8 ? ELFCLASS64 : ELFCLASS32;
	if (f & F_BAD_CLASS)
		eh.e_ident[EI_CLASS] = sizeof(void *) == 8 ? ELFCLASS32 :
							     ELFCLASS64;
	eh.e_ident[EI_DATA] = __BYTE_ORDER == __LITTLE_ENDIAN ? ELFDATA2LSB :
								ELFDATA2MSB;
	eh.e_ident[EI_VERSION] = EV_CURRENT;
	eh.e_type = ET_DYN;
	eh.e_version = EV_CURRENT;
	eh.e_ehsize = sizeof(eh);
	eh.e_phoff = sizeof(eh);
	eh.e_phentsize = sizeof(ElfW(Phdr));
	eh.e_phnum = o->info.dlpi_phnum;
	eh.e_shentsize = sizeof(ElfW(Shdr));
	eh.e_shnum = nsec;
	eh.e_shstrndx = 1;

	phsz = o->info.dlpi_phnum * sizeof(ElfW(Phdr));
	memcpy(ph, o->ph, phsz);
	if (f & F_PHDR_DIFF)
		ph[0].p_filesz++;
	off = sizeof(eh);
	memcpy(file + off, ph, phsz);
	off += phsz;

	sh[1].sh_name = 1;
	sh[1].sh_type = SHT_STRTAB;
	sh[1].sh_offset = off;
	sh[1].sh_size = sizeof(strtab);
	if (f & F_BAD_STRTAB)
		sh[1].sh_type = SHT_PROGBITS;
	memcpy(file + off, strtab, sizeof(strtab));
	off += sizeof(strtab);

	sh[2].sh_name = 11;
	sh[2].sh_type = SHT_PROGBITS;
	sh[2].sh_offset = off;
	sh[2].sh_size = 16;
	memset(file + off, 0xc3, 16);
	off += 16;

	off = align_up(off, 4);
	sh[3].sh_name = 17;
	if (f & F_NAME_OOB)
		sh[3].sh_name = sizeof(strtab) - 8;
	sh[3].sh_type = (f & F_NOBITS) ? SHT_NOBITS : SHT_PROGBITS;
	sh[3].sh_addralign = 4;
	sh[3].sh_offset = off;
	namelen = strlen(link);
	if (f & F_EMPTY_NAME)
		namelen = 0;
	memcpy(file + off, link, namelen);
	linksz = align_up(namelen + 1, 4);
	if (f & F_NO_NUL) {
		memset(file + off + namelen, 'x', linksz - namelen);
		crc = 0x11111111;
	}
	memcpy(file + off + linksz, &crc, 4);
	linksz += 4;
	if (f & F_SHORT_CRC)
		linksz -= 1;
	sh[3].sh_size = linksz;
	if (f & F_PAST_EOF)
		sh[3].sh_size = 1000;
	off += align_up(linksz, 8);
	if (f & F_NO_LINK)
		nsec = 3, eh.e_shnum = 3;

	eh.e_shoff = off;
	if (f & F_EXT_SHNUM) {
		eh.e_shnum = 0;
		sh[0].sh_size = nsec;
	}
	if (f & F_EXT_STRNDX) {
		eh.e_shstrndx = SHN_XINDEX;
		sh[0].sh_link = 1;
	}
	if (f & F_NO_SHDRS)
		eh.e_shoff = 0;
	if (f & F_MANY_SHNUM)
		eh.e_shnum = 0xfff0;
	memcpy(file + off, sh, nsec * sizeof(sh[0]));
	off += nsec * sizeof(sh[0]);
	memcpy(file, &eh, sizeof(eh));
	if (f & F_NOT_ELF)
		memcpy(file, "#!/bin/sh\n", 10);
	if (f & F_PAST_EOF)
		off = sh[3].sh_offset + linksz;	/* cut after the section */

	snprintf(path, sizeof(path), "%s/%s", tmpdir, name);
	fp = fopen(path, "wb");
	assert_non_null(fp);
	assert_int_equal(fwrite(file, 1, off, fp), off);
	assert_int_equal(fclose(fp), 0);
	return path;
}

/* Write a file for @o with flags @f, return the debug link found. */
static const char *debuglink_case(unsigned int f, const char *link,
				  uint32_t crc, uint32_t *crc_out)
{
	struct codectl_elf_info ei;
	struct obj o;

	init_std(&o, NULL);
	init_std(&o, write_elf("lib.so", &o, link, crc, f));
	memset(&buf, 0x55, sizeof(buf));
	assert_int_equal(from_phdr(&o, &ei, &buf), 0);
	assert_int_equal(ei.pathname, U(o.info.dlpi_name));
	*crc_out = ei.debug_link_crc;
	if (!ei.debug_link_pathname) {
		assert_int_equal(ei.debug_link_crc, 0);
		return NULL;
	}
	assert_int_equal(ei.debug_link_pathname, U(buf.debug_link));
	return buf.debug_link;
}

static void test_debuglink(void **state)
{
	const char *l;
	uint32_t crc;

	(void)state;
	l = debuglink_case(0, "libfoo.so.debug", 0x12345678, &crc);
	assert_non_null(l);
	assert_string_equal(l, "libfoo.so.debug");
	assert_int_equal(crc, 0x12345678);

	/* Every padding length: name + NUL of 4k, 4k+1, 4k+2, 4k+3 bytes. */
	for (int len = 1; len <= 8; len++) {
		char name[16] = "abcdefgh";

		name[len] = '\0';
		l = debuglink_case(0, name, 0xcafe0000 + len, &crc);
		assert_non_null(l);
		assert_string_equal(l, name);
		assert_int_equal(crc, 0xcafe0000 + len);
	}
	/* A CRC of 0 is a CRC. */
	l = debuglink_case(0, "x.debug", 0, &crc);
	assert_non_null(l);
	assert_int_equal(crc, 0);
}

static void test_debuglink_extended_numbering(void **state)
{
	const char *l;
	uint32_t crc;

	(void)state;
	l = debuglink_case(F_EXT_SHNUM, "a.debug", 7, &crc);
	assert_non_null(l);
	assert_string_equal(l, "a.debug");
	l = debuglink_case(F_EXT_STRNDX, "b.debug", 8, &crc);
	assert_non_null(l);
	assert_int_equal(crc, 8);
	l = debuglink_case(F_EXT_SHNUM | F_EXT_STRNDX, "c.debug", 9, &crc);
	assert_non_null(l);
	assert_int_equal(crc, 9);
}

static void test_debuglink_rejected(void **state)
{
	static const unsigned int bad[] = {
		F_NO_LINK, F_NOBITS, F_NO_NUL, F_SHORT_CRC, F_PAST_EOF,
		F_PHDR_DIFF, F_NOT_ELF, F_BAD_CLASS, F_BAD_STRTAB, F_NAME_OOB,
		F_EMPTY_NAME, F_NO_SHDRS, F_MANY_SHNUM,
	};
	uint32_t crc;

	(void)state;
	for (unsigned int i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		if (debuglink_case(bad[i], "libfoo.debug", 0x1234, &crc))
			fail_msg("flags %#x: debug link accepted", bad[i]);
	}
}

static void test_debuglink_not_read(void **state)
{
	struct codectl_elf_info ei;
	char cwd[PATH_MAX];
	struct obj o;

	(void)state;
	init_std(&o, NULL);
	write_elf("lib.so", &o, "rel.debug", 1, 0);

	/* Without a buffer. */
	init_std(&o, NULL);
	o.info.dlpi_name = write_elf("lib.so", &o, "rel.debug", 1, 0);
	assert_int_equal(from_phdr(&o, &ei, NULL), 0);
	assert_int_equal(ei.debug_link_pathname, 0);

	/* A relative name (the cwd may have changed since dlopen). */
	assert_non_null(getcwd(cwd, sizeof(cwd)));
	assert_int_equal(chdir(tmpdir), 0);
	o.info.dlpi_name = "lib.so";
	assert_int_equal(from_phdr(&o, &ei, &buf), 0);
	assert_int_equal(chdir(cwd), 0);
	assert_int_equal(ei.pathname, U(o.info.dlpi_name));
	assert_int_equal(ei.debug_link_pathname, 0);

	/* Not a regular file; no file at all. */
	o.info.dlpi_name = tmpdir;
	errno = EDOM;
	assert_int_equal(from_phdr(&o, &ei, &buf), 0);
	assert_int_equal(ei.debug_link_pathname, 0);
	o.info.dlpi_name = "/nonexistent/lib.so";
	assert_int_equal(from_phdr(&o, &ei, &buf), 0);
	assert_int_equal(ei.debug_link_pathname, 0);
	assert_int_equal(errno, EDOM);
	/* Reading the file did not touch the device. */
	assert_int_equal(fake_open_attempts, 0);
}

/* --- The objects of this process --------------------------------------- */

static void test_self_marker(void)
{
}

struct real_ctx {
	int objects, main_seen, vdso_seen;
};

static int real_cb(struct dl_phdr_info *info, size_t size, void *data)
{
	struct real_ctx *c = data;
	struct codectl_elf_info ei;
	uint64_t vdso = getauxval(AT_SYSINFO_EHDR);
	uint64_t fn = U(test_self_marker);

	(void)size;
	if (codectl_elf_info_from_phdr(info, &ei, &buf))
		return 0;
	c->objects++;
	if (ei.text_start >= ei.text_end || ei.elf_start > ei.text_start ||
	    ei.text_end > ei.elf_end || !ei.pathname)
		return 1;
	if (ei.sframe_start && (ei.sframe_start < ei.elf_start ||
				ei.sframe_end > ei.elf_end))
		return 1;
	if (fn >= ei.text_start && fn < ei.text_end)
		c->main_seen++;
	if (vdso && ei.elf_start == vdso)
		c->vdso_seen++;
	return 0;
}

static void test_real_objects(void **state)
{
	struct real_ctx c = { 0, 0, 0 };

	(void)state;
	assert_int_equal(dl_iterate_phdr(real_cb, &c), 0);
	assert_true(c.objects >= 3);
	assert_int_equal(c.main_seen, 1);
	if (getauxval(AT_SYSINFO_EHDR))
		assert_int_equal(c.vdso_seen, 1);
	assert_int_equal(fake_ioctls, 0);
}

static int group_setup(void **state)
{
	(void)state;
	page = (uint64_t)sysconf(_SC_PAGESIZE);
	if (page > sizeof(image) / 4 || !mkdtemp(tmpdir))
		return -1;
	edge = mmap(NULL, 2 * page, PROT_READ | PROT_WRITE,
		    MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (edge == MAP_FAILED || mprotect(edge + page, page, PROT_NONE))
		return -1;
	return fake_setup(state);
}

static int group_teardown(void **state)
{
	char path[300];

	(void)state;
	snprintf(path, sizeof(path), "%s/lib.so", tmpdir);
	unlink(path);
	rmdir(tmpdir);
	munmap(edge, 2 * page);
	return 0;
}

#define T(f)	cmocka_unit_test(f)

int main(void)
{
	const struct CMUnitTest tests[] = {
		T(test_load_layout),
		T(test_load_bounds),
		T(test_absolute_vaddr),
		T(test_first_exec_segment),
		T(test_no_exec_segment),
		T(test_bad_arguments),
		T(test_sframe_size_from_header),
		T(test_sframe_bogus_header),
		T(test_sframe_at_edge),
		T(test_sframe_unreadable),
		T(test_sframe_first_segment),
		T(test_build_id_4),
		T(test_build_id_8),
		T(test_build_id_second_segment),
		T(test_build_id_other_notes),
		T(test_build_id_length),
		T(test_build_id_truncated),
		T(test_build_id_at_edge),
		T(test_pathname),
		T(test_main_program_name),
		T(test_debuglink),
		T(test_debuglink_extended_numbering),
		T(test_debuglink_rejected),
		T(test_debuglink_not_read),
		T(test_real_objects),
	};

	return cmocka_run_group_tests(tests, group_setup, group_teardown);
}
