// SPDX-License-Identifier: GPL-2.0
/*
 * The daemon's cache entries (tools/daemon-cache.c): an entry read back
 * whole, with or without a register table after its section; one whose
 * section or table changed by a single bit anywhere, cut short, or whose
 * header names another object's digest or size, or sizes its file does
 * not have, is damaged (removed); an entry of an earlier format or
 * synthesiser is removed and reads as absent.
 */
#include <fcntl.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <cmocka.h>

#include "daemon.h"

struct daemon d;
int quiet = 1;

void say(const char *fmt, ...)
{
	(void)fmt;
}

static char dir[64];
static unsigned char sec[5003];		/* not a multiple of 8 */
static const unsigned char md[DIGEST_LEN] = { 1, 2, 3 };

/* An entry of sec's bytes: its last @regs of them a register table. */
static void write_entry_regs(char *path, size_t len, uint32_t regs)
{
	struct entry_hdr hdr;

	memset(&hdr, 0, sizeof(hdr));
	memcpy(hdr.magic, ENTRY_MAGIC, sizeof(hdr.magic));
	hdr.kind = ENTRY_SECTION;
	hdr.file_size = 123456;
	hdr.vaddr = 0x10000;
	hdr.size = sizeof(sec) - regs;
	hdr.regs_size = regs;
	memcpy(hdr.file_sha256, md, DIGEST_LEN);
	section_sum(sec, sizeof(sec), hdr.sum);
	entry_path(md, path, len);
	assert_int_equal(entry_write(path, &hdr, sec), 0);
}

static void write_entry(char *path, size_t len)
{
	write_entry_regs(path, len, 0);
}

/* Set the header's field at @off (of @size bytes) to @val. */
static void poke(const char *path, off_t off, const void *val, size_t size)
{
	int fd = open(path, O_RDWR);

	assert_true(fd >= 0);
	assert_int_equal(pwrite(fd, val, size, off), (ssize_t)size);
	close(fd);
}

static void flip(const char *path, off_t off, unsigned char bit)
{
	unsigned char c;
	int fd = open(path, O_RDWR);

	assert_true(fd >= 0);
	assert_int_equal(pread(fd, &c, 1, off), 1);
	c ^= bit;
	assert_int_equal(pwrite(fd, &c, 1, off), 1);
	close(fd);
}

static void test_round_trip(void **state)
{
	struct entry_hdr hdr;
	char path[256];
	void *got;

	(void)state;
	write_entry(path, sizeof(path));
	assert_int_equal(entry_read(path, md, 123456, &hdr, &got), 0);
	assert_int_equal(hdr.size, sizeof(sec));
	assert_memory_equal(got, sec, sizeof(sec));
	free(got);
	/* Another object's digest, or size, in its header: damaged. */
	assert_int_equal(entry_read(path, (unsigned char[DIGEST_LEN]){ 9 },
				    123456, &hdr, &got), -2);
	write_entry(path, sizeof(path));
	assert_int_equal(entry_read(path, md, 123457, &hdr, &got), -2);
	/* With a register table: the section's bytes, then the table's. */
	write_entry_regs(path, sizeof(path), 2002);
	assert_int_equal(entry_read(path, md, 123456, &hdr, &got), 0);
	assert_int_equal(hdr.size, sizeof(sec) - 2002);
	assert_int_equal(hdr.regs_size, 2002);
	assert_memory_equal(got, sec, sizeof(sec));
	free(got);
}

static void test_damage(void **state)
{
	size_t offs[] = { 0, 1, 7, 8, 2500, sizeof(sec) - 3, sizeof(sec) - 1 };
	struct entry_hdr hdr;
	char path[256];
	unsigned int i, b;
	void *got;

	(void)state;
	for (i = 0; i < sizeof(offs) / sizeof(offs[0]); i++)
		for (b = 0; b < 8; b++) {
			write_entry(path, sizeof(path));
			flip(path, sizeof(hdr) + offs[i], 1u << b);
			assert_int_equal(entry_read(path, md, 123456, &hdr,
						    &got), -2);
			assert_int_not_equal(access(path, F_OK), 0);
		}
	/* A bit of the register table. */
	write_entry_regs(path, sizeof(path), 2002);
	flip(path, sizeof(hdr) + sizeof(sec) - 1000, 4);
	assert_int_equal(entry_read(path, md, 123456, &hdr, &got), -2);
	/* Cut short. */
	write_entry(path, sizeof(path));
	assert_int_equal(truncate(path, sizeof(hdr) + sizeof(sec) - 1), 0);
	assert_int_equal(entry_read(path, md, 123456, &hdr, &got), -2);
	/* Sizes the file does not have; a table without a section. */
	write_entry_regs(path, sizeof(path), 2002);
	poke(path, offsetof(struct entry_hdr, regs_size),
	     &(uint32_t){ 2003 }, 4);
	assert_int_equal(entry_read(path, md, 123456, &hdr, &got), -2);
	write_entry_regs(path, sizeof(path), 2002);
	poke(path, offsetof(struct entry_hdr, kind),
	     &(uint32_t){ ENTRY_NO_CFI }, 4);
	assert_int_equal(entry_read(path, md, 123456, &hdr, &got), -2);
}

/* An entry of an earlier format or synthesiser: absent, and removed. */
static void test_earlier_format(void **state)
{
	static const char *const old[] = {
		ENTRY_MAGIC_OLD, ENTRY_MAGIC_OLD3, ENTRY_MAGIC_OLD4
	};
	struct entry_hdr hdr;
	char path[256];
	unsigned int i;
	void *got;
	int fd;

	(void)state;
	for (i = 0; i < sizeof(old) / sizeof(old[0]); i++) {
		write_entry(path, sizeof(path));
		fd = open(path, O_RDWR);
		assert_true(fd >= 0);
		assert_int_equal(pwrite(fd, old[i], 16, 0), 16);
		close(fd);
		assert_int_equal(entry_read(path, md, 123456, &hdr, &got), -1);
		assert_int_not_equal(access(path, F_OK), 0);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_round_trip),
		cmocka_unit_test(test_damage),
		cmocka_unit_test(test_earlier_format),
	};
	char cmd[128];
	unsigned int i;
	int ret;

	for (i = 0; i < sizeof(sec); i++)
		sec[i] = (unsigned char)(i * 131 + 7);
	snprintf(dir, sizeof(dir), "/tmp/codectl-cache-XXXXXX");
	if (!mkdtemp(dir))
		return 1;
	d.cache = dir;
	ret = cmocka_run_group_tests(tests, NULL, NULL);
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
	if (system(cmd))
		ret = 1;
	return ret;
}
