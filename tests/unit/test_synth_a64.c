// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * The synthesiser built for AArch64 (SFW_AARCH64), what libcodectl is on
 * arm64: there is no register table there (no CFA kept in a register
 * the walk could carry), so asking for both tables gives the section
 * alone, the register table's pointers cleared, and asking for the
 * register table alone ENODATA.  Read from this x86-64 host's own
 * objects: what is checked is the request, not the rules.
 */
#include <errno.h>
#include <fcntl.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <unistd.h>
#include <cmocka.h>

#include <codectl.h>
#include "internal.h"

static void test_both_gives_section_alone(void **state)
{
	void *sec = NULL, *regs = (void *)1;
	size_t size = 0, regs_size = 1;
	int fd = open("/proc/self/exe", O_RDONLY);

	(void)state;
	assert_true(fd >= 0);
	assert_int_equal(codectl__sframe_synth_both(fd, 0, UINT64_MAX, 0,
						    &sec, &size, &regs,
						    &regs_size, NULL), 0);
	assert_non_null(sec);
	assert_true(size > 0);
	assert_null(regs);
	assert_int_equal(regs_size, 0);
	free(sec);
	close(fd);
}

static void test_regs_alone_enodata(void **state)
{
	void *sec = NULL;
	size_t size = 0;
	int fd = open("/proc/self/exe", O_RDONLY);

	(void)state;
	assert_true(fd >= 0);
	errno = 0;
	assert_int_equal(codectl_sframe_synth(fd, 0, 0, CODECTL_SYNTH_REGS,
					      &sec, &size, NULL), -1);
	assert_int_equal(errno, ENODATA);
	close(fd);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_both_gives_section_alone),
		cmocka_unit_test(test_regs_alone_enodata),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
