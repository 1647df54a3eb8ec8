// SPDX-License-Identifier: GPL-2.0
/*
 * codectl_register_all() on this very process, with the fake device
 * checking each synthesised section at the moment of the call (the
 * library frees it afterwards) with the project's decoder, confined to
 * the registered text range as the kernel confines it.  two_text.so has
 * two executable segments; Debian's libc has no SFrame of its own, the
 * vdso has no file.
 */
#include <dlfcn.h>
#include <errno.h>
#include <link.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "fakedev.h"
#include "sframe.h"

#define MAX_REC		64
#define MAX_PROBES	4

struct rec {
	uint64_t info_size;
	struct codectl_elf_info info;		/* the VER0 part */
	uint32_t flags;				/* VER1 */
	char pathname[CODECTL_PATH_MAX];
	int valid;				/* sframe_validate() */
	int outside_elf;			/* section not in the elf range */
	uint32_t num_fdes;
	int probe_err[MAX_PROBES];		/* sframe_find() at probes */
	struct sframe_rule probe[MAX_PROBES];
};

static struct rec recs[MAX_REC];
static unsigned int nr_recs;
static uintptr_t probes[MAX_PROBES];
static int e2big_v1;		/* the kernel does not know VER1 */

/* Check a synthesised section as the kernel would, while it exists. */
static void check_section(struct rec *r)
{
	uint64_t start = r->info.sframe_start, end = r->info.sframe_end;
	struct sframe_sec s;
	unsigned int i;

	r->outside_elf = end <= r->info.elf_start || start >= r->info.elf_end;
	if (sframe_init(&s, start, end - start,
			(const uint8_t *)(uintptr_t)start, NULL, NULL))
		return;
	s.text_start = r->info.text_start;
	s.text_end = r->info.text_end;
	r->valid = sframe_validate(&s) == SFRAME_OK;
	r->num_fdes = s.hdr.num_fdes;
	for (i = 0; i < MAX_PROBES; i++)
		if (probes[i] >= r->info.text_start &&
		    probes[i] < r->info.text_end)
			r->probe_err[i] = sframe_find(&s, probes[i],
						      &r->probe[i]);
}

static int kernel(unsigned long request, struct codectl_args *args)
{
	const unsigned char *p = (const void *)(uintptr_t)args->info;
	struct rec *r;
	unsigned int i;

	if (request != CODECTL_IOC_REGISTER_ELF || args->flags)
		return -EINVAL;
	if (args->info_size != CODECTL_ELF_INFO_SIZE_VER0 &&
	    args->info_size != CODECTL_ELF_INFO_SIZE_VER1)
		return -EINVAL;
	if (nr_recs >= MAX_REC)
		return -ENOSPC;
	if (e2big_v1 && args->info_size > CODECTL_ELF_INFO_SIZE_VER0)
		return -E2BIG;
	r = &recs[nr_recs++];
	memset(r, 0, sizeof(*r));
	for (i = 0; i < MAX_PROBES; i++)
		r->probe_err[i] = -1;
	r->info_size = args->info_size;
	memcpy(&r->info, p, CODECTL_ELF_INFO_SIZE_VER0);
	if (args->info_size == CODECTL_ELF_INFO_SIZE_VER1)
		memcpy(&r->flags, p + CODECTL_ELF_INFO_SIZE_VER0,
		       sizeof(r->flags));
	if (r->info.pathname)
		strncpy(r->pathname, (char *)(uintptr_t)r->info.pathname,
			sizeof(r->pathname) - 1);
	if (r->flags & CODECTL_ELF_SFRAME_SYNTH)
		check_section(r);
	return 0;
}

static void *two_text;

static int setup(void **state)
{
	int ret = fake_setup(state);

	nr_recs = 0;
	e2big_v1 = 0;
	fake_kernel = kernel;
	return ret;
}

/* Registrations whose pathname ends with @suffix. */
static unsigned int find(const char *suffix, struct rec **out, unsigned int max)
{
	size_t n = strlen(suffix);
	unsigned int i, k = 0;

	for (i = 0; i < nr_recs; i++) {
		size_t len = strlen(recs[i].pathname);

		if (len >= n && !strcmp(recs[i].pathname + len - n, suffix) &&
		    k < max)
			out[k++] = &recs[i];
	}
	return k;
}

static void test_synthesised(void **state)
{
	struct rec *r[4];
	unsigned int i, nsynth = 0;
	void *vdso;
	int n;

	(void)state;
	probes[0] = (uintptr_t)dlsym(RTLD_DEFAULT, "qsort");
	probes[1] = (uintptr_t)dlsym(two_text, "near_fn");
	probes[2] = (uintptr_t)dlsym(two_text, "far_fn");
	vdso = dlopen("linux-vdso.so.1", RTLD_NOW | RTLD_NOLOAD);
	assert_non_null(vdso);
	probes[3] = (uintptr_t)dlsym(vdso, "__vdso_clock_gettime");
	assert_true(probes[0] && probes[1] && probes[2] && probes[3]);

	n = codectl_register_all(0);
	assert_int_equal(n, nr_recs);
	assert_true(n >= 6);	/* the test, vdso, libc, ld.so, two_text.so x 2 */
	for (i = 0; i < nr_recs; i++) {
		if (!(recs[i].flags & CODECTL_ELF_SFRAME_SYNTH)) {
			/* SFrame of its own, or none */
			continue;
		}
		nsynth++;
		assert_int_equal(recs[i].info_size, CODECTL_ELF_INFO_SIZE_VER1);
		assert_true(recs[i].valid);
		assert_true(recs[i].outside_elf);
		assert_true(recs[i].num_fdes > 0);
	}
	assert_true(nsynth >= 5);

	/* libc: synthesised, qsort has a rule at its run-time address */
	assert_int_equal(find("/libc.so.6", r, 4), 1);
	assert_true(r[0]->flags & CODECTL_ELF_SFRAME_SYNTH);
	assert_int_equal(r[0]->probe_err[0], SFRAME_OK);
	assert_true(r[0]->probe[0].func_start <= probes[0]);
	assert_int_equal(r[0]->probe[0].cfa.base, SFRAME_BASE_SP);
	assert_int_equal(r[0]->probe[0].cfa.off, 8);	/* at its entry */

	/* two_text.so: one registration per executable segment */
	assert_int_equal(find("/two_text.so", r, 4), 2);
	for (i = 0; i < 2; i++) {
		uintptr_t mine = r[i]->probe_err[1] != -1 ? probes[1] : probes[2];
		int k = mine == probes[1] ? 1 : 2;

		assert_true(r[i]->flags & CODECTL_ELF_SFRAME_SYNTH);
		assert_true(r[i]->valid);	/* functions inside its text */
		assert_int_equal(r[i]->probe_err[k], SFRAME_OK);
		assert_int_equal(r[i]->probe[k].func_start, mine);
		assert_int_equal(r[i]->probe_err[3 - k], -1);	/* not its text */
	}
	assert_true(r[0]->info.text_start != r[1]->info.text_start);
	assert_int_equal(r[0]->info.elf_start, r[1]->info.elf_start);

	/* the vdso, synthesised from its image in memory */
	assert_int_equal(find("linux-vdso.so.1", r, 4), 1);
	assert_true(r[0]->flags & CODECTL_ELF_SFRAME_SYNTH);
	assert_true(r[0]->valid);
	assert_int_equal(r[0]->probe_err[3], SFRAME_OK);
	assert_true(r[0]->probe[3].func_start <= probes[3]);
	dlclose(vdso);
}

/* A kernel without VER1: the same segments, without SFrame. */
static void test_old_kernel(void **state)
{
	unsigned int i;
	int n;

	(void)state;
	e2big_v1 = 1;
	n = codectl_register_all(0);
	assert_int_equal(n, nr_recs);
	for (i = 0; i < nr_recs; i++)
		assert_int_equal(recs[i].info_size, CODECTL_ELF_INFO_SIZE_VER0);
	e2big_v1 = 0;
	nr_recs = 0;
	assert_int_equal(codectl_register_all(0), n);
}

static void test_no_synth(void **state)
{
	struct rec *r[4];
	unsigned int i;

	(void)state;
	assert_true(codectl_register_all(CODECTL_ALL_NO_SYNTH) > 0);
	for (i = 0; i < nr_recs; i++)
		assert_int_equal(recs[i].info_size, CODECTL_ELF_INFO_SIZE_VER0);
	assert_int_equal(find("/libc.so.6", r, 4), 1);
	assert_int_equal(r[0]->info.sframe_start, 0);
}

static int find_two_text(struct dl_phdr_info *info, size_t size, void *data)
{
	(void)size;
	if (strstr(info->dlpi_name, "/two_text.so")) {
		*(int *)data = codectl_register_object_all(info, 0);
		return 1;
	}
	return 0;
}

/* One object: both segments, synthesised. */
static void test_object_all(void **state)
{
	int n = -2;

	(void)state;
	dl_iterate_phdr(find_two_text, &n);
	assert_int_equal(n, 2);
	assert_int_equal(nr_recs, 2);
	assert_true(recs[0].flags & CODECTL_ELF_SFRAME_SYNTH);
	assert_true(recs[1].flags & CODECTL_ELF_SFRAME_SYNTH);
	assert_true(recs[0].valid && recs[1].valid);
	errno = 0;
	assert_int_equal(codectl_register_object_all(NULL, 0), -1);
	assert_int_equal(errno, EINVAL);
}

static void test_errors(void **state)
{
	(void)state;
	errno = 0;
	assert_int_equal(codectl_register_all(2), -1);
	assert_int_equal(errno, EINVAL);
	fake_open_errno = ENOENT;
	errno = 0;
	assert_int_equal(codectl_register_all(0), -1);
	assert_int_equal(errno, ENODEV);
	assert_int_equal(nr_recs, 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup(test_synthesised, setup),
		cmocka_unit_test_setup(test_old_kernel, setup),
		cmocka_unit_test_setup(test_no_synth, setup),
		cmocka_unit_test_setup(test_object_all, setup),
		cmocka_unit_test_setup(test_errors, setup),
	};

	char *path = realpath("two_text.so", NULL);

	/* An absolute name: the library reads only such objects' files. */
	two_text = path ? dlopen(path, RTLD_NOW | RTLD_LOCAL) : NULL;
	free(path);
	if (!two_text)
		return 1;
	return cmocka_run_group_tests(tests, NULL, NULL);
}
