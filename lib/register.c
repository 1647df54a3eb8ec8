// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * libcodectl, registering a whole process: codectl_register_all(), every
 * loaded object, every executable segment, with the object's own SFrame
 * or, without one, SFrame synthesised from its .eh_frame and handed to
 * the kernel with CODECTL_ELF_SFRAME_SYNTH.
 */
#include <errno.h>
#include <fcntl.h>
#include <link.h>
#include <stdlib.h>
#include <string.h>
#include <sys/auxv.h>
#include <unistd.h>

#include "internal.h"

/* Register @ei with the synthesised section @sec (the kernel copies it). */
static int register_synth(const struct codectl_elf_info *ei, const void *sec,
			  size_t size)
{
	struct codectl_elf_info v = *ei;

	v.sframe_start = (uintptr_t)sec;
	v.sframe_end = (uintptr_t)sec + size;
	v.flags = CODECTL_ELF_SFRAME_SYNTH;
	return codectl(CODECTL_REGISTER_ELF, &v, CODECTL_ELF_INFO_SIZE_VER1, 0);
}

/*
 * Register one executable segment.  A kernel that does not know
 * synthesised sections (E2BIG: the tail is beyond its struct; EINVAL),
 * or that refuses the section (ENOEXEC) or finds it too large (EFBIG:
 * larger than max_bytes; before ABI 5, too large for a flat table), gets
 * the segment without SFrame, as
 * codectl_register_object() does with an SFrame header it refuses.
 */
static int register_segment(struct codectl_elf_info *ei, const void *sec,
			    size_t size)
{
	int saved = errno;

	if (sec) {
		if (!register_synth(ei, sec, size))
			return 0;
		if (errno != E2BIG && errno != EINVAL && errno != ENOEXEC &&
		    errno != EFBIG)
			return -1;
		errno = saved;
	}
	return codectl__register_info(ei);
}

/* The object's file, if it is the loaded object, else -1. */
static int open_object(const struct dl_phdr_info *info)
{
	const char *path = info->dlpi_name;
	int fd;

	if (!path || !path[0])
		path = "/proc/self/exe";	/* the main program */
	else if (path[0] != '/')
		return -1;			/* the vdso, or unknown */
	fd = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
	if (fd < 0)
		return -1;
	if (!codectl__file_is_object(fd, info)) {
		close(fd);
		return -1;
	}
	return fd;
}

/*
 * The vdso's ELF image, if @info is the vdso (it has no file): mapped at
 * AT_SYSINFO_EHDR, with @info's program headers, laid out as its file
 * (every PT_LOAD at its offset).  Returns its size, whole pages, or 0.
 */
static size_t vdso_image(const struct dl_phdr_info *info, const void **image)
{
	uint64_t ehdr = getauxval(AT_SYSINFO_EHDR), end = 0;
	long page = sysconf(_SC_PAGESIZE);
	const ElfW(Ehdr) *eh;
	unsigned int i;

	if (!ehdr || ehdr != info->dlpi_addr || page <= 0)
		return 0;
	eh = (const ElfW(Ehdr) *)(uintptr_t)ehdr;
	if (memcmp(eh->e_ident, ELFMAG, SELFMAG) ||
	    eh->e_phentsize != sizeof(ElfW(Phdr)) ||
	    eh->e_phnum != info->dlpi_phnum ||
	    memcmp(info->dlpi_phdr, (const char *)eh + eh->e_phoff,
		   eh->e_phnum * sizeof(ElfW(Phdr))))
		return 0;
	for (i = 0; i < info->dlpi_phnum; i++) {
		const ElfW(Phdr) *ph = &info->dlpi_phdr[i];

		if (ph->p_type != PT_LOAD)
			continue;
		if (ph->p_offset != ph->p_vaddr)
			return 0;
		if (ph->p_vaddr + ph->p_memsz > end)
			end = ph->p_vaddr + ph->p_memsz;
	}
	*image = eh;
	return (end + page - 1) & ~(uint64_t)(page - 1);
}

/* Register every executable segment of @info, counting in @ctx. */
static void register_segments(const struct dl_phdr_info *info,
			      struct codectl__reg_ctx *ctx)
{
	struct codectl_elf_info ei;
	struct codectl_elf_buf buf;
	const void *image = NULL;
	size_t image_size = 0;
	int fd = -1, saved = errno;
	unsigned int i;

	if (codectl_elf_info_from_phdr(info, &ei, &buf))
		return;		/* no executable segment: nothing to do */
	if (!ei.sframe_start && !(ctx->flags & CODECTL_ALL_NO_SYNTH)) {
		fd = open_object(info);
		if (fd < 0)
			image_size = vdso_image(info, &image);
	}
	for (i = 0; i < info->dlpi_phnum; i++) {
		const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
		struct codectl_elf_info seg = ei;
		size_t secsize = 0;
		void *sec = NULL;

		if (ph->p_type != PT_LOAD || !(ph->p_flags & PF_X) ||
		    !ph->p_memsz)
			continue;
		seg.text_start = info->dlpi_addr + ph->p_vaddr;
		seg.text_end = seg.text_start + ph->p_memsz;
		/* The object's own SFrame goes with its first segment. */
		if (seg.text_start != ei.text_start) {
			seg.sframe_start = 0;
			seg.sframe_end = 0;
		}
		if ((fd >= 0 &&
		     codectl__sframe_synth_range(fd, info->dlpi_addr,
						 ph->p_vaddr,
						 ph->p_vaddr + ph->p_memsz, 0,
						 CODECTL_SYNTH_AT_BUFFER, &sec,
						 &secsize, NULL)) ||
		    (image_size &&
		     codectl__sframe_synth_mem(image, image_size,
					       info->dlpi_addr, ph->p_vaddr,
					       ph->p_vaddr + ph->p_memsz,
					       CODECTL_SYNTH_AT_BUFFER, &sec,
					       &secsize)))
			sec = NULL;	/* no CFI: registered without SFrame */
		codectl__reg_count(ctx, register_segment(&seg, sec, secsize));
		free(sec);
	}
	if (fd >= 0)
		close(fd);
	errno = saved;
}

static int register_all_one(struct dl_phdr_info *info, size_t size,
			    void *data)
{
	(void)size;
	register_segments(info, data);
	return 0;
}

CODECTL_EXPORT int codectl_register_object_all(const struct dl_phdr_info *info,
					       unsigned int flags)
{
	struct codectl__reg_ctx ctx = { flags, 0, 0 };
	int saved = errno;

	if (!info || !info->dlpi_phdr || (flags & ~CODECTL_ALL_NO_SYNTH)) {
		errno = EINVAL;
		return -1;
	}
	if (codectl_get_fd() < 0)
		return -1;	/* no module: do not synthesise for nothing */
	register_segments(info, &ctx);
	if (ctx.err) {
		errno = ctx.err;
		return -1;
	}
	errno = saved;
	return ctx.count;
}

CODECTL_EXPORT int codectl_register_all(unsigned int flags)
{
	struct codectl__reg_ctx ctx = { flags, 0, 0 };

	if (flags & ~CODECTL_ALL_NO_SYNTH) {
		errno = EINVAL;
		return -1;
	}
	return codectl__reg_each(register_all_one, &ctx);
}
