// SPDX-License-Identifier: GPL-2.0
/*
 * check-files: the kernel's verdict (CODECTL_CHECK_SFRAME) on the .sframe
 * sections of real ELF files, mapped read-only from disk, against the
 * user-space build of the same decoder.  Run in the guest on the
 * fixtures that every toolchain built (tests/sframe/fixtures): the kernel
 * reads them through its bounded reader from user memory, the path a
 * registration takes.
 *
 *   check-files FILE...
 *
 * Expected verdict: valid for this machine's ABI (x86-64's or aarch64's,
 * as it is built), E_ABI for foreign ones, and the user-space decoder must
 * agree on validity.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/ioctl.h>
#include <unistd.h>

#include <linux/codectl.h>

#include "elfsec.h"
#include "machine.h"
#include "sframe.h"

/* The SFrame ABI of the machine this runs on: the module's. */
#define NATIVE_ABI (CODECTL_ELF_MACHINE == EM_AARCH64 ? \
		    SFRAME_ABI_AARCH64_LE : SFRAME_ABI_AMD64_LE)

int main(int argc, char **argv)
{
	int fd = open(CODECTL_DEVICE, O_RDWR | O_CLOEXEC), i, pass = 0, fail = 0;

	if (fd < 0) {
		perror(CODECTL_DEVICE);
		return 1;
	}
	for (i = 1; i < argc; i++) {
		struct codectl_sframe_check c = { 0 };
		struct codectl_args a = {
			.info = (uintptr_t)&c, .info_size = sizeof(c),
		};
		struct elf_section es;
		struct sframe_sec sec;
		uint32_t want;
		int user;

		if (elf_find_sframe(argv[i], &es)) {
			printf("not ok - %s: no .sframe\n", argv[i]);
			fail++;
			continue;
		}
		user = sframe_init(&sec, (uintptr_t)es.data, es.size, es.data,
				   NULL, NULL);
		/* The module's bound of FREs per function (codectl(4)). */
		sec.max_fres = 4096;
		if (!user)
			user = sframe_validate(&sec);
		want = !user && sec.hdr.abi != NATIVE_ABI ?
		       CODECTL_SFRAME_E_ABI : (uint32_t)user;
		c.sframe_start = (uintptr_t)es.data;
		c.sframe_end = (uintptr_t)es.data + es.size;
		if (ioctl(fd, CODECTL_IOC_CHECK_SFRAME, &a)) {
			printf("not ok - %s: CHECK_SFRAME: %s\n", argv[i],
			       strerror(errno));
			fail++;
		} else if (c.error != want || (user == 0 && want == 0 &&
			   c.num_fdes != sec.hdr.num_fdes)) {
			printf("not ok - %s: kernel says %u (%u FDEs), expected %u\n",
			       argv[i], c.error, c.num_fdes, want);
			fail++;
		} else {
			printf("ok - %s: v%u, %u FDEs: %s\n", argv[i], c.version,
			       c.num_fdes, want ? "foreign ABI" : "valid");
			pass++;
		}
	}
	printf("check-files: %d passed, %d failed\n", pass, fail);
	return fail ? 1 : 0;
}
