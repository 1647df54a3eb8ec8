// SPDX-License-Identifier: GPL-2.0
/*
 * codectl_import_file(), _synth(), _sframe(), _synth_regs(),
 * _sframe_regs(), _remove() and _clear() with the fake device,
 * which checks each imported section at the moment of the call (the
 * library frees it afterwards) with the project's decoder, at the
 * address it was built for, confined to the object's first executable
 * segment at link-time addresses: what the kernel checks.  Debian's libc
 * has no SFrame of its own; libcodectl has one.
 */
#include <dlfcn.h>
#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <link.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <cmocka.h>

#include "fakedev.h"
#include "sframe.h"

#define LIBC	"/lib/x86_64-linux-gnu/libc.so.6"
#define LDSO	"/lib64/ld-linux-x86-64.so.2"
#define LIBCODECTL "../../lib/libcodectl.so.1"

struct rec {
	unsigned int calls;
	struct codectl_import_info info;
	int valid;			/* sframe_validate() in the segment */
	uint32_t num_fdes;
	int probe_err;			/* sframe_find() at the probe */
	int regs_valid;			/* the register table's, likewise */
};

static struct rec rec;
static uint64_t text_lo, text_hi, load_end;	/* libc's, link-time */
static uint64_t probe;			/* qsort, link-time */
static int kernel_errno;
static int no_regs;			/* a module before ABI 6 */

/* sframe_validate() of a section at @addr within [text_lo, text_hi). */
static int valid_at(uint64_t sec, uint64_t size, uint64_t addr,
		    struct sframe_sec *s)
{
	if (sframe_init(s, addr, size, (const uint8_t *)(uintptr_t)sec, NULL,
			NULL))
		return 0;
	s->text_start = text_lo;
	s->text_end = text_hi;
	return sframe_validate(s) == SFRAME_OK;
}

static int kernel(unsigned long request, struct codectl_args *args)
{
	const struct codectl_import_info *ii = (const void *)args;
	struct sframe_rule rule;
	struct sframe_sec s;

	if (request != CODECTL_IOC_IMPORT)
		return -ENOTTY;
	rec.calls++;
	rec.info = *ii;
	rec.valid = 0;
	rec.regs_valid = 0;
	rec.probe_err = -1;
	/* copy_struct_from_user() of a struct longer than the module's. */
	if (no_regs && (ii->regs || ii->regs_size))
		return -E2BIG;
	if (!ii->flags && ii->sframe &&
	    valid_at(ii->sframe, ii->sframe_size, ii->sframe_vaddr, &s)) {
		rec.valid = 1;
		rec.num_fdes = s.hdr.num_fdes;
		rec.probe_err = sframe_find(&s, probe, &rule);
	}
	if (!ii->flags && ii->regs)
		rec.regs_valid = valid_at(ii->regs, ii->regs_size,
					  ii->sframe_vaddr, &s);
	return kernel_errno ? -kernel_errno : 0;
}

/* @path's first executable PT_LOAD and last PT_LOAD end, from its file. */
static void layout(const char *path)
{
	Elf64_Ehdr eh;
	Elf64_Phdr ph;
	int fd = open(path, O_RDONLY), i, exec = 0;

	assert_true(fd >= 0);
	load_end = 0;
	assert_int_equal(pread(fd, &eh, sizeof(eh), 0), sizeof(eh));
	for (i = 0; i < eh.e_phnum; i++) {
		assert_int_equal(pread(fd, &ph, sizeof(ph),
				       eh.e_phoff + i * sizeof(ph)), sizeof(ph));
		if (ph.p_type != PT_LOAD)
			continue;
		if (ph.p_vaddr + ph.p_memsz > load_end)
			load_end = ph.p_vaddr + ph.p_memsz;
		if ((ph.p_flags & PF_X) && !exec++) {
			text_lo = ph.p_vaddr;
			text_hi = ph.p_vaddr + ph.p_memsz;
		}
	}
	close(fd);
	assert_true(exec);
}

static int find_libc(struct dl_phdr_info *info, size_t size, void *data)
{
	(void)size;
	if (strstr(info->dlpi_name, "libc.so.6"))
		*(uintptr_t *)data = info->dlpi_addr;
	return 0;
}

static int setup(void **state)
{
	uintptr_t bias = 0;
	int ret = fake_setup(state);

	memset(&rec, 0, sizeof(rec));
	kernel_errno = 0;
	no_regs = 0;
	fake_kernel = kernel;
	layout(LIBC);
	if (!probe) {
		dl_iterate_phdr(find_libc, &bias);
		probe = (uintptr_t)dlsym(RTLD_DEFAULT, "qsort") - bias;
	}
	return ret;
}

static void import_libc(void **state)
{
	struct codectl_synth_stats st;
	int fd = open(LIBC, O_RDONLY);

	(void)state;
	assert_true(fd >= 0);
	assert_int_equal(codectl_import_file(fd, 0, &st), 0);
	assert_int_equal(rec.calls, 1);
	assert_int_equal(rec.info.fd, fd);
	assert_int_equal(rec.info.flags, 0);
	/* Page aligned, past every segment, where nothing is mapped. */
	assert_int_equal(rec.info.sframe_vaddr % 4096, 0);
	assert_true(rec.info.sframe_vaddr >= load_end);
	assert_true(rec.info.sframe_vaddr < load_end + 4096);
	assert_true(rec.info.sframe_size > 1000);
	/* Valid within libc's first executable segment, link-time. */
	assert_true(rec.valid);
	assert_int_equal(rec.num_fdes, st.sframe_fdes);
	assert_true(st.sframe_fdes > 1000);
	/* qsort has a rule at its link-time address. */
	assert_int_equal(rec.probe_err, SFRAME_OK);
	close(fd);
}

static void import_errors(void **state)
{
	int fd, saved;

	(void)state;
	/* An object with its own SFrame: EEXIST, nothing sent. */
	fd = open(LIBCODECTL, O_RDONLY);
	assert_true(fd >= 0);
	assert_int_equal(codectl_import_file(fd, 0, NULL), -1);
	assert_int_equal(errno, EEXIST);
	close(fd);
	/* Not ELF: ENOEXEC, nothing sent. */
	fd = open("Makefile", O_RDONLY);
	assert_true(fd >= 0);
	assert_int_equal(codectl_import_file(fd, 0, NULL), -1);
	assert_int_equal(errno, ENOEXEC);
	close(fd);
	fd = open("/dev/null", O_RDONLY);
	assert_int_equal(codectl_import_file(fd, 0, NULL), -1);
	assert_int_equal(errno, ENOEXEC);
	/* Bad arguments. */
	assert_int_equal(codectl_import_file(-1, 0, NULL), -1);
	assert_int_equal(errno, EINVAL);
	assert_int_equal(codectl_import_file(fd, 1, NULL), -1);
	assert_int_equal(errno, EINVAL);
	close(fd);
	assert_int_equal(rec.calls, 0);
	/* The kernel's errno comes back, after the buffer is freed. */
	kernel_errno = EPERM;
	fd = open(LIBC, O_RDONLY);
	assert_int_equal(codectl_import_file(fd, 0, NULL), -1);
	saved = errno;
	assert_int_equal(saved, EPERM);
	assert_int_equal(rec.calls, 1);
	close(fd);
}

static void import_no_module(void **state)
{
	int fd = open(LIBC, O_RDONLY);

	(void)state;
	fake_open_errno = ENOENT;
	assert_int_equal(codectl_import_file(fd, 0, NULL), -1);
	assert_int_equal(errno, ENODEV);
	assert_int_equal(codectl_import_clear(), -1);
	assert_int_equal(errno, ENODEV);
	close(fd);
}

/*
 * The two steps: codectl_import_synth() sends nothing and gives what
 * codectl_import_file() sends; codectl_import_sframe() sends it as is.
 */
static void synth_then_sframe(void **state)
{
	struct codectl_import_info whole;
	uint64_t vaddr;
	size_t size;
	void *sec;
	int fd = open(LIBC, O_RDONLY);

	(void)state;
	assert_true(fd >= 0);
	assert_int_equal(codectl_import_file(fd, 0, NULL), 0);
	whole = rec.info;
	assert_int_equal(codectl_import_synth(fd, &sec, &size, &vaddr, NULL), 0);
	assert_int_equal(rec.calls, 1);
	assert_int_equal(vaddr, whole.sframe_vaddr);
	assert_int_equal(size, whole.sframe_size);
	assert_int_equal(codectl_import_sframe(fd, sec, size, vaddr), 0);
	assert_int_equal(rec.calls, 2);
	assert_int_equal(rec.info.sframe, (uintptr_t)sec);
	assert_int_equal(rec.info.sframe_size, size);
	assert_int_equal(rec.info.sframe_vaddr, vaddr);
	assert_int_equal(rec.info.fd, fd);
	assert_int_equal(rec.info.flags, 0);
	assert_true(rec.valid);
	/* Bad arguments: EINVAL, nothing sent. */
	assert_int_equal(codectl_import_sframe(fd, NULL, size, vaddr), -1);
	assert_int_equal(errno, EINVAL);
	assert_int_equal(codectl_import_sframe(fd, sec, 0, vaddr), -1);
	assert_int_equal(errno, EINVAL);
	assert_int_equal(codectl_import_sframe(-1, sec, size, vaddr), -1);
	assert_int_equal(errno, EINVAL);
	assert_int_equal(codectl_import_synth(fd, NULL, &size, &vaddr, NULL), -1);
	assert_int_equal(errno, EINVAL);
	assert_int_equal(codectl_import_synth(-1, &sec, &size, &vaddr, NULL), -1);
	assert_int_equal(errno, EINVAL);
	assert_int_equal(rec.calls, 2);
	free(sec);
	close(fd);
}

/*
 * ld.so's register table (its lazy-binding trampoline keeps its CFA in
 * rbx) goes with its section, built for the same address and valid in
 * its text; libc needs none.  A module before ABI 6 refuses the longer
 * struct with E2BIG: the section alone is imported then.
 */
static void import_regs(void **state)
{
	uint64_t vaddr;
	size_t size, rsize;
	void *sec, *regs;
	int fd = open(LDSO, O_RDONLY), libc = open(LIBC, O_RDONLY);

	(void)state;
	assert_true(fd >= 0 && libc >= 0);
	assert_int_equal(codectl_import_file(libc, 0, NULL), 0);
	assert_int_equal(rec.info.regs, 0);
	assert_int_equal(rec.info.regs_size, 0);
	assert_int_equal(codectl_import_synth_regs(libc, &sec, &size, &vaddr,
						   &regs, &rsize, NULL), 0);
	assert_true(sec && size == rec.info.sframe_size);
	assert_true(!regs && !rsize);
	free(sec);

	layout(LDSO);
	assert_int_equal(codectl_import_file(fd, 0, NULL), 0);
	assert_int_equal(rec.calls, 2);
	assert_true(rec.valid);
	assert_true(rec.info.regs && rec.info.regs_size > 1000);
	assert_true(rec.regs_valid);
	assert_int_equal(codectl_import_synth_regs(fd, &sec, &size, &vaddr,
						   &regs, &rsize, NULL), 0);
	assert_int_equal(vaddr, rec.info.sframe_vaddr);
	assert_int_equal(size, rec.info.sframe_size);
	assert_int_equal(rsize, rec.info.regs_size);

	/* The two steps with the table; without it. */
	assert_int_equal(codectl_import_sframe_regs(fd, sec, size, vaddr, regs,
						    rsize), 0);
	assert_int_equal(rec.info.regs, (uintptr_t)regs);
	assert_true(rec.regs_valid);
	assert_int_equal(codectl_import_sframe(fd, sec, size, vaddr), 0);
	assert_int_equal(rec.info.regs, 0);
	assert_int_equal(rec.calls, 4);
	errno = 0;
	assert_int_equal(codectl_import_sframe_regs(fd, sec, size, vaddr, regs,
						    0), -1);
	assert_int_equal(errno, EINVAL);
	assert_int_equal(codectl_import_sframe_regs(fd, sec, size, vaddr, NULL,
						    rsize), -1);
	assert_int_equal(errno, EINVAL);
	assert_int_equal(codectl_import_synth_regs(fd, &sec, &size, &vaddr,
						   NULL, &rsize, NULL), -1);
	assert_int_equal(errno, EINVAL);
	assert_int_equal(rec.calls, 4);

	/* A module before ABI 6: E2BIG, then the section alone. */
	no_regs = 1;
	assert_int_equal(codectl_import_file(fd, 0, NULL), 0);
	assert_int_equal(rec.calls, 6);
	assert_int_equal(rec.info.regs, 0);
	assert_true(rec.valid);
	free(sec);
	free(regs);
	close(fd);
	close(libc);
}

static void remove_clear(void **state)
{
	int fd = open(LIBC, O_RDONLY);

	(void)state;
	assert_int_equal(codectl_import_remove(fd), 0);
	assert_int_equal(rec.info.fd, fd);
	assert_int_equal(rec.info.flags, CODECTL_IMPORT_REMOVE);
	assert_int_equal(codectl_import_clear(), 0);
	assert_int_equal(rec.info.flags, CODECTL_IMPORT_CLEAR);
	assert_int_equal(rec.info.fd, -1);
	assert_int_equal(rec.calls, 2);
	kernel_errno = ENOENT;
	assert_int_equal(codectl_import_remove(fd), -1);
	assert_int_equal(errno, ENOENT);
	close(fd);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup(import_libc, setup),
		cmocka_unit_test_setup(import_errors, setup),
		cmocka_unit_test_setup(import_no_module, setup),
		cmocka_unit_test_setup(synth_then_sframe, setup),
		cmocka_unit_test_setup(import_regs, setup),
		cmocka_unit_test_setup(remove_clear, setup),
	};

	return cmocka_run_group_tests_name("import", tests, NULL, NULL);
}
