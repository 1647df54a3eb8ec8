// SPDX-License-Identifier: GPL-2.0
/*
 * The fake device inside libcodectl-audit-fake.so (the audit module
 * linked with fakedev.o): each registration and unregistration is
 * appended as one line to the file $CODECTL_FAKE_LOG, a synthesised
 * section checked with the decoder within its text range while it
 * exists:
 *   register INFO_SIZE FLAGS TEXT_START TEXT_END VALID PATH
 *   unregister TEXT_START TEXT_END
 */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "fakedev.h"
#include "sframe.h"

static int valid(const struct codectl_elf_info *ei)
{
	struct sframe_sec s;

	if (sframe_init(&s, ei->sframe_start, ei->sframe_end - ei->sframe_start,
			(const uint8_t *)(uintptr_t)ei->sframe_start, NULL,
			NULL))
		return 0;
	s.text_start = ei->text_start;
	s.text_end = ei->text_end;
	return sframe_validate(&s) == SFRAME_OK;
}

static int log_kernel(unsigned long request, struct codectl_args *args)
{
	const unsigned char *p = (const void *)(uintptr_t)args->info;
	const char *path = getenv("CODECTL_FAKE_LOG");
	char line[CODECTL_PATH_MAX + 128];
	int fd, n = 0;

	if (request == CODECTL_IOC_REGISTER_ELF) {
		struct codectl_elf_info ei;
		uint32_t flags = 0;

		memcpy(&ei, p, CODECTL_ELF_INFO_SIZE_VER0);
		if (args->info_size >= CODECTL_ELF_INFO_SIZE_VER1)
			memcpy(&flags, p + CODECTL_ELF_INFO_SIZE_VER0,
			       sizeof(flags));
		n = snprintf(line, sizeof(line),
			     "register %llu %u %#llx %#llx %d %s\n",
			     (unsigned long long)args->info_size, flags,
			     (unsigned long long)ei.text_start,
			     (unsigned long long)ei.text_end,
			     (flags & CODECTL_ELF_SFRAME_SYNTH) ? valid(&ei) : -1,
			     ei.pathname ? (char *)(uintptr_t)ei.pathname : "-");
	} else if (request == CODECTL_IOC_UNREGISTER) {
		struct codectl_unregister_info u;

		memcpy(&u, p, sizeof(u));
		n = snprintf(line, sizeof(line), "unregister %#llx %#llx\n",
			     (unsigned long long)u.text_start,
			     (unsigned long long)u.text_end);
	}
	if (n > 0 && path) {
		fd = open(path, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0644);
		if (fd >= 0) {
			(void)!write(fd, line, (size_t)n);
			close(fd);
		}
	}
	return 0;
}

__attribute__((constructor)) static void audit_fake_init(void)
{
	fake_kernel = log_kernel;
}
