// SPDX-License-Identifier: GPL-2.0
/*
 * codectl_register_self() and codectl_(un)register_object() on this very
 * process, with the fake device recording what would be registered.  The
 * Makefile builds this test with SFrame (HAVE_GSFRAME), a build id and a
 * .gnu_debuglink to test_register_self.debug.
 */
#include <dlfcn.h>
#include <elf.h>
#include <errno.h>
#include <libgen.h>
#include <link.h>
#include <limits.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/auxv.h>
#include <unistd.h>
#include <setjmp.h>
#include <cmocka.h>

#include "fakedev.h"

#define U(p)	((uint64_t)(uintptr_t)(p))
#define MAX_REC	64

struct rec {
	unsigned long request;
	struct codectl_elf_info info;		/* REGISTER_ELF */
	struct codectl_unregister_info unreg;	/* UNREGISTER */
	char pathname[CODECTL_PATH_MAX];
	char debug_link[CODECTL_PATH_MAX];
	unsigned char build_id[CODECTL_BUILD_ID_MAX];
};

static struct rec recs[MAX_REC];
static unsigned int nr_recs;

enum mode { OK, ALL_EEXIST, SECOND_ENOSPC, ENOEXEC_IF_SFRAME, ALL_ENOEXEC,
	    ALL_ENOENT };
static enum mode mode;

/* The fake kernel: keep a deep copy of what it is given. */
static int kernel(unsigned long request, struct codectl_args *args)
{
	const void *p = (const void *)(uintptr_t)args->info;
	struct rec *r;

	if (nr_recs >= MAX_REC)
		return -ENOSPC;
	r = &recs[nr_recs++];
	memset(r, 0, sizeof(*r));
	r->request = request;
	if (request == CODECTL_IOC_UNREGISTER) {
		memcpy(&r->unreg, p, sizeof(r->unreg));
		return mode == ALL_ENOENT ? -ENOENT : 0;
	}
	if (request != CODECTL_IOC_REGISTER_ELF ||
	    args->info_size != CODECTL_ELF_INFO_SIZE_VER0 || args->flags)
		return -EINVAL;
	memcpy(&r->info, p, CODECTL_ELF_INFO_SIZE_VER0);
	if (r->info.pathname)
		strncpy(r->pathname, (char *)(uintptr_t)r->info.pathname,
			sizeof(r->pathname) - 1);
	if (r->info.debug_link_pathname)
		strncpy(r->debug_link,
			(char *)(uintptr_t)r->info.debug_link_pathname,
			sizeof(r->debug_link) - 1);
	if (r->info.build_id && r->info.build_id_len <= CODECTL_BUILD_ID_MAX)
		memcpy(r->build_id, (void *)(uintptr_t)r->info.build_id,
		       r->info.build_id_len);
	switch (mode) {
	case ALL_EEXIST:
		return -EEXIST;
	case SECOND_ENOSPC:
		return nr_recs == 2 ? -ENOSPC : 0;
	case ENOEXEC_IF_SFRAME:
		return r->info.sframe_start ? -ENOEXEC : 0;
	case ALL_ENOEXEC:
		return -ENOEXEC;
	default:
		return 0;
	}
}

static int setup(void **state)
{
	fake_setup(state);
	fake_kernel = kernel;
	nr_recs = 0;
	mode = OK;
	return 0;
}

/* --- What the process has, found independently of the library ---------- */

struct objs {
	int with_text;		/* objects with an executable PT_LOAD */
	int with_sframe;	/* ... and a PT_GNU_SFRAME */
	struct dl_phdr_info main;
	struct dl_phdr_info nontext;	/* none such: dlpi_phdr NULL */
};

static int count_cb(struct dl_phdr_info *info, size_t size, void *data)
{
	struct objs *o = data;
	int text = 0, sframe = 0;

	(void)size;
	for (int i = 0; i < info->dlpi_phnum; i++) {
		const ElfW(Phdr) *ph = &info->dlpi_phdr[i];

		if (ph->p_type == PT_LOAD && (ph->p_flags & PF_X) && ph->p_memsz)
			text = 1;
		if (ph->p_type == 0x6474e554)
			sframe = 1;
	}
	o->with_text += text;
	o->with_sframe += text && sframe;
	if (!info->dlpi_name[0])
		o->main = *info;
	return 0;
}

static struct objs objs(void)
{
	struct objs o;

	memset(&o, 0, sizeof(o));
	dl_iterate_phdr(count_cb, &o);
	return o;
}

/* The executable read from disk, with its section headers. */
static unsigned char *exe_image;
static size_t exe_size;
static char exe_path[PATH_MAX];

static int load_exe(void)
{
	ssize_t n = readlink("/proc/self/exe", exe_path, sizeof(exe_path) - 1);
	FILE *f;

	if (n <= 0)
		return -1;
	exe_path[n] = '\0';
	f = fopen(exe_path, "rb");
	if (!f)
		return -1;
	fseek(f, 0, SEEK_END);
	exe_size = ftell(f);
	rewind(f);
	exe_image = malloc(exe_size);
	if (!exe_image || fread(exe_image, 1, exe_size, f) != exe_size) {
		fclose(f);
		return -1;
	}
	fclose(f);
	return 0;
}

static const ElfW(Shdr) *section(const char *name)
{
	const ElfW(Ehdr) *eh = (const void *)exe_image;
	const ElfW(Shdr) *sh = (const void *)(exe_image + eh->e_shoff);
	const char *strtab = (const char *)exe_image +
			     sh[eh->e_shstrndx].sh_offset;

	for (int i = 1; i < eh->e_shnum; i++)
		if (!strcmp(strtab + sh[i].sh_name, name))
			return &sh[i];
	return NULL;
}

static uint32_t crc32_file(const char *path)
{
	uint32_t crc = 0xffffffff;
	FILE *f = fopen(path, "rb");
	int c;

	assert_non_null(f);
	while ((c = getc(f)) != EOF) {
		crc ^= (uint32_t)c;
		for (int k = 0; k < 8; k++)
			crc = (crc >> 1) ^ (0xedb88320 & -(crc & 1));
	}
	fclose(f);
	return ~crc;
}

static void marker(void)
{
}

static const struct rec *find_rec(uint64_t addr)
{
	for (unsigned int i = 0; i < nr_recs; i++)
		if (addr >= recs[i].info.text_start &&
		    addr < recs[i].info.text_end)
			return &recs[i];
	return NULL;
}

/* --- Tests --------------------------------------------------------------- */

static void test_register_self_all(void **state)
{
	struct objs o = objs();
	int n;

	(void)state;
	errno = EDOM;
	n = codectl_register_self();
	assert_int_equal(errno, EDOM);
	assert_true(o.with_text >= 4);	/* test, vdso, libc, ld.so */
	assert_int_equal(n, o.with_text);
	assert_int_equal(nr_recs, n);
	assert_int_equal(fake_opens, 1);
	for (unsigned int i = 0; i < nr_recs; i++) {
		const struct codectl_elf_info *e = &recs[i].info;

		assert_int_equal(recs[i].request, CODECTL_IOC_REGISTER_ELF);
		assert_true(e->elf_start < e->elf_end);
		assert_true(e->elf_start <= e->text_start);
		assert_true(e->text_start < e->text_end);
		assert_true(e->text_end <= e->elf_end);
		assert_int_not_equal(e->pathname, 0);
		assert_true(recs[i].pathname[0] != '\0');
		assert_true((e->build_id == 0) == (e->build_id_len == 0));
		assert_true(e->build_id_len <= CODECTL_BUILD_ID_MAX);
		assert_true((e->sframe_start == 0) == (e->sframe_end == 0));
		if (e->sframe_start) {
			assert_true(e->sframe_start >= e->elf_start);
			assert_true(e->sframe_start + 28 <= e->sframe_end);
			assert_true(e->sframe_end <= e->elf_end);
		}
		if (!e->debug_link_pathname)
			assert_int_equal(e->debug_link_crc, 0);
		/* Text ranges do not overlap. */
		for (unsigned int j = 0; j < i; j++)
			assert_true(e->text_end <= recs[j].info.text_start ||
				    recs[j].info.text_end <= e->text_start);
	}
}

static void test_self_main_program(void **state)
{
	const ElfW(Shdr) *sh;
	const struct rec *r;
	uint64_t base = objs().main.dlpi_addr;
	char dbg[PATH_MAX + 32], dir[PATH_MAX];

	(void)state;
	assert_true(codectl_register_self() > 0);
	r = find_rec(U(marker));
	assert_non_null(r);
	assert_true(find_rec(U(test_self_main_program)) == r);
	assert_string_equal(r->pathname, exe_path);

	/* Build id: the note of the .note.gnu.build-id section. */
	sh = section(".note.gnu.build-id");
	assert_non_null(sh);
	assert_int_equal(r->info.build_id_len, sh->sh_size - 16);
	assert_int_equal(r->info.build_id, base + sh->sh_addr + 16);
	assert_memory_equal(r->build_id, exe_image + sh->sh_offset + 16,
			    r->info.build_id_len);

	/* SFrame: the section, not the (longer) segment. */
	sh = section(".sframe");
#ifdef HAVE_GSFRAME
	assert_non_null(sh);
#endif
	if (sh) {
		assert_int_equal(r->info.sframe_start, base + sh->sh_addr);
		assert_int_equal(r->info.sframe_end,
				 base + sh->sh_addr + sh->sh_size);
	} else {
		assert_int_equal(r->info.sframe_start, 0);
	}

	/* Debug link: the name objcopy put there, and the debug file's CRC. */
	assert_string_equal(r->debug_link, "test_register_self.debug");
	strcpy(dir, exe_path);
	snprintf(dbg, sizeof(dbg), "%s/%s", dirname(dir), r->debug_link);
	assert_int_equal(r->info.debug_link_crc, crc32_file(dbg));
}

static void test_self_libc_ldso_vdso(void **state)
{
	uint64_t vdso = getauxval(AT_SYSINFO_EHDR);
	uint64_t ldso = getauxval(AT_BASE);
	void *getpid_addr = dlsym(RTLD_DEFAULT, "getpid");
	const struct rec *r;
	const char *path;
	int seen_vdso = 0, seen_ldso = 0;

	(void)state;
	assert_true(codectl_register_self() > 0);
	assert_non_null(getpid_addr);
	r = find_rec(U(getpid_addr));
	assert_non_null(r);
	path = r ? r->pathname : "";
	assert_non_null(strstr(path, "libc.so"));
	assert_true(path[0] == '/');

	for (unsigned int i = 0; i < nr_recs; i++) {
		if (vdso && recs[i].info.elf_start == vdso)
			seen_vdso++;
		if (ldso && recs[i].info.elf_start == ldso) {
			seen_ldso++;
			assert_non_null(strstr(recs[i].pathname, "ld"));
		}
	}
	if (vdso)
		assert_int_equal(seen_vdso, 1);
	assert_int_not_equal(ldso, 0);
	assert_int_equal(seen_ldso, 1);
}

static void test_self_eexist_counts(void **state)
{
	int n;

	(void)state;
	mode = ALL_EEXIST;
	errno = EDOM;
	n = codectl_register_self();
	assert_int_equal(n, objs().with_text);
	assert_int_equal(errno, EDOM);
}

static void test_self_hard_error(void **state)
{
	(void)state;
	mode = SECOND_ENOSPC;
	errno = 0;
	assert_int_equal(codectl_register_self(), -1);
	assert_int_equal(errno, ENOSPC);
	/* The other objects were still registered. */
	assert_int_equal(nr_recs, objs().with_text);
}

static void test_self_no_device(void **state)
{
	(void)state;
	fake_open_errno = ENOENT;
	errno = 0;
	assert_int_equal(codectl_register_self(), -1);
	assert_int_equal(errno, ENODEV);
	assert_int_equal(fake_open_attempts, 1);
	assert_int_equal(fake_ioctls, 0);

	fake_open_errno = EACCES;
	assert_int_equal(codectl_register_self(), -1);
	assert_int_equal(errno, EACCES);
}

/* SFrame the kernel rejects: registered again without it. */
static void test_self_enoexec_fallback(void **state)
{
	struct objs o = objs();
	const struct rec *first = NULL, *second = NULL;
	struct codectl_elf_info a, b;

	(void)state;
	mode = ENOEXEC_IF_SFRAME;
	assert_int_equal(codectl_register_self(), o.with_text);
	assert_int_equal(nr_recs, o.with_text + o.with_sframe);
#ifdef HAVE_GSFRAME
	assert_true(o.with_sframe >= 1);
#endif
	for (unsigned int i = 0; i + 1 < nr_recs; i++) {
		if (recs[i].info.sframe_start) {
			first = &recs[i];
			second = &recs[i + 1];
			break;
		}
	}
	if (!o.with_sframe)
		return;
	assert_non_null(first);
	assert_int_equal(second->info.sframe_start, 0);
	assert_int_equal(second->info.sframe_end, 0);
	a = first->info;
	b = second->info;
	a.sframe_start = a.sframe_end = 0;
	assert_memory_equal(&a, &b, sizeof(a));

	/* Both refused: ENOEXEC; objects without SFrame are not retried. */
	nr_recs = 0;
	mode = ALL_ENOEXEC;
	errno = 0;
	assert_int_equal(codectl_register_self(), -1);
	assert_int_equal(errno, ENOEXEC);
	assert_int_equal(nr_recs, o.with_text + o.with_sframe);
}

static void test_register_unregister_object(void **state)
{
	struct dl_phdr_info main = objs().main;
	uint64_t start, end;

	(void)state;
	errno = EDOM;
	assert_int_equal(codectl_register_object(&main), 0);
	assert_int_equal(errno, EDOM);
	assert_int_equal(nr_recs, 1);
	start = recs[0].info.text_start;
	end = recs[0].info.text_end;
	assert_true(U(marker) >= start && U(marker) < end);

	assert_int_equal(codectl_unregister_object(&main), 0);
	assert_int_equal(nr_recs, 2);
	assert_int_equal(recs[1].request, CODECTL_IOC_UNREGISTER);
	assert_int_equal(recs[1].unreg.text_start, start);
	assert_int_equal(recs[1].unreg.text_end, end);

	mode = ALL_ENOENT;
	errno = 0;
	assert_int_equal(codectl_unregister_object(&main), -1);
	assert_int_equal(errno, ENOENT);

	mode = ALL_EEXIST;
	errno = 0;
	assert_int_equal(codectl_register_object(&main), -1);
	assert_int_equal(errno, EEXIST);
}

static void test_object_without_text(void **state)
{
	ElfW(Phdr) ph = { .p_type = PT_LOAD, .p_flags = PF_R,
			  .p_memsz = 0x1000 };
	struct dl_phdr_info info = { .dlpi_addr = 0x10000, .dlpi_name = "d",
				     .dlpi_phdr = &ph, .dlpi_phnum = 1 };

	(void)state;
	errno = 0;
	assert_int_equal(codectl_register_object(&info), -1);
	assert_int_equal(errno, ENOENT);
	errno = 0;
	assert_int_equal(codectl_unregister_object(&info), -1);
	assert_int_equal(errno, ENOENT);
	errno = 0;
	assert_int_equal(codectl_register_object(NULL), -1);
	assert_int_equal(errno, EINVAL);
	assert_int_equal(fake_ioctls, 0);
}

static int group_setup(void **state)
{
	(void)state;
	return load_exe();
}

static int group_teardown(void **state)
{
	(void)state;
	free(exe_image);
	fake_reset();
	return 0;
}

#define T(f)	cmocka_unit_test_setup(f, setup)

int main(void)
{
	const struct CMUnitTest tests[] = {
		T(test_register_self_all),
		T(test_self_main_program),
		T(test_self_libc_ldso_vdso),
		T(test_self_eexist_counts),
		T(test_self_hard_error),
		T(test_self_no_device),
		T(test_self_enoexec_fallback),
		T(test_register_unregister_object),
		T(test_object_without_text),
	};

	return cmocka_run_group_tests(tests, group_setup, group_teardown);
}
