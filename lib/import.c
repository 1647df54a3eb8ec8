// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * libcodectl, imports: codectl_import_file() and friends synthesise an
 * object file's SFrame section from its CFI for its link-time addresses
 * and hand it to the module (CODECTL_IOC_IMPORT), which uses it in every
 * process mapping the object.
 */
#include <elf.h>
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <unistd.h>

#include "codectl.h"
#include "internal.h"

#ifndef PT_GNU_SFRAME
#define PT_GNU_SFRAME		0x6474e554
#endif

#define IMPORT_MAX_PHDRS	128
#define IMPORT_PAGE		4096ULL

/* The object's layout: first executable segment, end of the last one. */
struct import_layout {
	uint64_t text_lo, text_hi;
	uint64_t load_end;
	int has_sframe;
};

static int import_layout(int fd, struct import_layout *l)
{
	Elf64_Phdr ph[IMPORT_MAX_PHDRS];
	Elf64_Ehdr eh;
	int exec = 0;
	unsigned int i;

	memset(l, 0, sizeof(*l));
	if (codectl__pread_all(fd, &eh, sizeof(eh), 0))
		return -1;
	if (memcmp(eh.e_ident, ELFMAG, SELFMAG) ||
	    eh.e_ident[EI_CLASS] != ELFCLASS64 ||
	    eh.e_ident[EI_DATA] != ELFDATA2LSB || eh.e_machine != CODECTL_ELF_MACHINE ||
	    eh.e_phentsize != sizeof(Elf64_Phdr) || !eh.e_phnum ||
	    eh.e_phnum > IMPORT_MAX_PHDRS) {
		errno = ENOEXEC;
		return -1;
	}
	if (codectl__pread_all(fd, ph, eh.e_phnum * sizeof(ph[0]), eh.e_phoff))
		return -1;
	for (i = 0; i < eh.e_phnum; i++) {
		if (ph[i].p_type == PT_GNU_SFRAME)
			l->has_sframe = 1;
		if (ph[i].p_type != PT_LOAD)
			continue;
		if (ph[i].p_vaddr + ph[i].p_memsz > l->load_end)
			l->load_end = ph[i].p_vaddr + ph[i].p_memsz;
		if ((ph[i].p_flags & PF_X) && !exec) {
			l->text_lo = ph[i].p_vaddr;
			l->text_hi = ph[i].p_vaddr + ph[i].p_memsz;
			exec = 1;
		}
	}
	if (!exec) {
		errno = ENOEXEC;
		return -1;
	}
	return 0;
}

/*
 * A module older than ABI 2 knows only the VER0 struct's ioctl number:
 * ENOTTY for the new one, then the VER0 number (its __reserved is 0, and
 * so are its register table's fields, or the caller retries without).
 */
static int import_ioctl(struct codectl_import_info *info)
{
	int fd = codectl_get_fd();
	int ret;

	if (fd < 0)
		return -1;
	ret = ioctl(fd, CODECTL_IOC_IMPORT, info);
	if (ret && errno == ENOTTY)
		ret = ioctl(fd, _IOC(_IOC_WRITE, CODECTL_IOC_MAGIC,
				     _IOC_NR(CODECTL_IOC_IMPORT),
				     CODECTL_IMPORT_INFO_SIZE_VER0), info);
	return ret;
}

/* Past every segment, where nothing of the object is mapped. */
static int import_place(int fd, struct import_layout *l, uint64_t *vaddr)
{
	if (import_layout(fd, l))
		return -1;
	if (l->has_sframe) {
		errno = EEXIST;
		return -1;
	}
	*vaddr = (l->load_end + IMPORT_PAGE - 1) & ~(IMPORT_PAGE - 1);
	return 0;
}

CODECTL_EXPORT int codectl_import_synth(int fd, void **sec, size_t *size,
					uint64_t *vaddr,
					struct codectl_synth_stats *stats)
{
	struct import_layout l;

	if (fd < 0 || !sec || !size || !vaddr) {
		errno = EINVAL;
		return -1;
	}
	if (import_place(fd, &l, vaddr))
		return -1;
	return codectl__sframe_synth_range(fd, 0, l.text_lo, l.text_hi, *vaddr,
					   0, sec, size, stats);
}

CODECTL_EXPORT int codectl_import_synth_regs(int fd, void **sec, size_t *size,
					     uint64_t *vaddr, void **regs,
					     size_t *regs_size,
					     struct codectl_synth_stats *stats)
{
	struct import_layout l;

	if (fd < 0 || !sec || !size || !vaddr || !regs || !regs_size) {
		errno = EINVAL;
		return -1;
	}
	if (import_place(fd, &l, vaddr))
		return -1;
	return codectl__sframe_synth_both(fd, l.text_lo, l.text_hi, *vaddr,
					  sec, size, regs, regs_size, stats);
}

CODECTL_EXPORT int codectl_import_sframe_regs(int fd, const void *sec,
					      size_t size, uint64_t vaddr,
					      const void *regs,
					      size_t regs_size)
{
	struct codectl_import_info info;
	int ret;

	if (fd < 0 || !sec || !size || !regs != !regs_size) {
		errno = EINVAL;
		return -1;
	}
	memset(&info, 0, sizeof(info));
	info.sframe = (uint64_t)(uintptr_t)sec;
	info.sframe_size = size;
	info.sframe_vaddr = vaddr;
	info.fd = fd;
	info.regs = (uint64_t)(uintptr_t)regs;
	info.regs_size = regs_size;
	ret = import_ioctl(&info);
	/* A module before ABI 6 knows no register table: the section alone. */
	if (ret && errno == E2BIG && regs) {
		info.regs = 0;
		info.regs_size = 0;
		ret = import_ioctl(&info);
	}
	return ret;
}

CODECTL_EXPORT int codectl_import_sframe(int fd, const void *sec, size_t size,
					 uint64_t vaddr)
{
	return codectl_import_sframe_regs(fd, sec, size, vaddr, NULL, 0);
}

CODECTL_EXPORT int codectl_import_file(int fd, unsigned int flags,
				       struct codectl_synth_stats *stats)
{
	void *sec, *regs;
	size_t size, regs_size;
	uint64_t vaddr;
	int ret, saved;

	if (fd < 0 || flags) {
		errno = EINVAL;
		return -1;
	}
	if (codectl_import_synth_regs(fd, &sec, &size, &vaddr, &regs,
				      &regs_size, stats))
		return -1;
	ret = codectl_import_sframe_regs(fd, sec, size, vaddr, regs,
					 regs_size);
	saved = errno;
	free(sec);
	free(regs);
	errno = saved;
	return ret;
}

CODECTL_EXPORT int codectl_import_remove(int fd)
{
	struct codectl_import_info info;

	memset(&info, 0, sizeof(info));
	info.fd = fd;
	info.flags = CODECTL_IMPORT_REMOVE;
	return import_ioctl(&info);
}

CODECTL_EXPORT int codectl_import_clear(void)
{
	struct codectl_import_info info;

	memset(&info, 0, sizeof(info));
	info.fd = -1;
	info.flags = CODECTL_IMPORT_CLEAR;
	return import_ioctl(&info);
}
