// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * Describe and register the ELF objects loaded in the process, from their
 * program headers (dl_iterate_phdr()).
 */
#include <elf.h>
#include <endian.h>
#include <errno.h>
#include <fcntl.h>
#include <link.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "internal.h"

#ifndef PT_GNU_SFRAME
#define PT_GNU_SFRAME		0x6474e554
#endif

#define SFRAME_MAGIC		0xdee2
#define SFRAME_HDR_SIZE		28

#define ALIGN_UP(x, a)		(((x) + (a) - 1) & ~((uint64_t)(a) - 1))

#if __ELF_NATIVE_CLASS == 64
#define ELFCLASS_NATIVE		ELFCLASS64
#else
#define ELFCLASS_NATIVE		ELFCLASS32
#endif
#if __BYTE_ORDER == __LITTLE_ENDIAN
#define ELFDATA_NATIVE		ELFDATA2LSB
#else
#define ELFDATA_NATIVE		ELFDATA2MSB
#endif

/* Does [vaddr, vaddr + size) lie inside a readable PT_LOAD segment? */
static int in_readable_load(const struct dl_phdr_info *info, uint64_t vaddr,
			    uint64_t size)
{
	for (unsigned int i = 0; i < info->dlpi_phnum; i++) {
		const ElfW(Phdr) *ph = &info->dlpi_phdr[i];

		if (ph->p_type != PT_LOAD || !(ph->p_flags & PF_R))
			continue;
		if (vaddr >= ph->p_vaddr && size <= ph->p_memsz &&
		    vaddr - ph->p_vaddr <= ph->p_memsz - size)
			return 1;
	}
	return 0;
}

/*
 * Size of the SFrame section at @p, in a segment of @memsz bytes: what its
 * header says if it has the magic and fits, else the segment's size.
 */
static uint64_t sframe_size(const unsigned char *p, uint64_t memsz)
{
	uint32_t fre_len, fres_off;
	uint16_t magic;
	uint64_t total;

	if (memsz < SFRAME_HDR_SIZE)
		return memsz;
	memcpy(&magic, p, sizeof(magic));
	if (magic != SFRAME_MAGIC)
		return memsz;
	memcpy(&fre_len, p + 16, sizeof(fre_len));
	memcpy(&fres_off, p + 24, sizeof(fres_off));
	total = (uint64_t)SFRAME_HDR_SIZE + p[7] /* auxhdr_len */ +
		fres_off + fre_len;
	return total <= memsz ? total : memsz;
}

/*
 * Find the GNU build id among the notes at @p (@size bytes, notes aligned
 * to @align).  Stops at the first truncated note.
 */
static int find_build_id(const unsigned char *p, uint64_t size,
			 uint64_t align, const unsigned char **id,
			 uint32_t *len)
{
	uint64_t off = 0;

	while (off < size && size - off >= sizeof(ElfW(Nhdr))) {
		uint64_t name_off, desc_off;
		ElfW(Nhdr) nh;

		memcpy(&nh, p + off, sizeof(nh));
		name_off = off + sizeof(nh);
		desc_off = ALIGN_UP(name_off + nh.n_namesz, align);
		if (desc_off > size || nh.n_descsz > size - desc_off)
			return 0;
		if (nh.n_type == NT_GNU_BUILD_ID && nh.n_namesz == 4 &&
		    !memcmp(p + name_off, "GNU", 4) && nh.n_descsz > 0 &&
		    nh.n_descsz <= CODECTL_BUILD_ID_MAX) {
			*id = p + desc_off;
			*len = nh.n_descsz;
			return 1;
		}
		off = ALIGN_UP(desc_off + nh.n_descsz, align);
	}
	return 0;
}

int codectl__pread_all(int fd, void *dst, size_t len, uint64_t off)
{
	unsigned char *d = dst;

	while (len) {
		ssize_t n = pread(fd, d, len, (off_t)off);

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0) {
			if (!n)
				errno = ENOEXEC;	/* shorter than it says */
			return -1;
		}
		d += n;
		len -= n;
		off += n;
	}
	return 0;
}

/* Section header @idx of the file (the caller bounds @idx). */
static int read_shdr(int fd, const ElfW(Ehdr) *eh, uint64_t idx,
		     ElfW(Shdr) *sh)
{
	return codectl__pread_all(fd, sh, sizeof(*sh),
				  eh->e_shoff + idx * sizeof(*sh));
}

/*
 * Is the regular file at @fd, an ELF file of this machine's class and
 * byte order, the object @info describes (the same program headers)?
 * Fills in its ELF header and size.
 */
static int file_is_object(int fd, const struct dl_phdr_info *info,
			  ElfW(Ehdr) *eh, uint64_t *fsize)
{
	ElfW(Phdr) ph[16];
	struct stat st;
	uint64_t i;

	if (fstat(fd, &st) || !S_ISREG(st.st_mode))
		return 0;
	*fsize = st.st_size;
	if (codectl__pread_all(fd, eh, sizeof(*eh), 0) ||
	    memcmp(eh->e_ident, ELFMAG, SELFMAG) ||
	    eh->e_ident[EI_CLASS] != ELFCLASS_NATIVE ||
	    eh->e_ident[EI_DATA] != ELFDATA_NATIVE ||
	    eh->e_phentsize != sizeof(ElfW(Phdr)) ||
	    eh->e_phnum != info->dlpi_phnum || eh->e_phnum == PN_XNUM)
		return 0;
	for (i = 0; i < eh->e_phnum; i += 16) {
		uint64_t n = eh->e_phnum - i < 16 ? eh->e_phnum - i : 16;

		if (codectl__pread_all(fd, ph, n * sizeof(ph[0]),
				       eh->e_phoff + i * sizeof(ph[0])) ||
		    memcmp(ph, &info->dlpi_phdr[i], n * sizeof(ph[0])))
			return 0;
	}
	return 1;
}

int codectl__file_is_object(int fd, const struct dl_phdr_info *info)
{
	uint64_t fsize;
	ElfW(Ehdr) eh;

	return file_is_object(fd, info, &eh, &fsize);
}

/*
 * Read the .gnu_debuglink section of @path into @buf, if that file is the
 * object @info describes (same program headers).  Anything unexpected: no
 * debug link.
 */
static void read_debug_link(int fd, const struct dl_phdr_info *info,
			    struct codectl_elf_info *out,
			    struct codectl_elf_buf *buf)
{
	static const char name[] = ".gnu_debuglink";
	ElfW(Shdr) sh, strtab;
	uint64_t shnum, shstrndx, fsize, crc_off, size, i;
	char secname[sizeof(name)];
	ElfW(Ehdr) eh;
	uint32_t crc;
	char *nul;

	/* The file must be the loaded object: same program headers. */
	if (!file_is_object(fd, info, &eh, &fsize) ||
	    eh.e_shentsize != sizeof(ElfW(Shdr)) || eh.e_shoff == 0 ||
	    eh.e_shoff >= fsize)
		return;

	shnum = eh.e_shnum;
	shstrndx = eh.e_shstrndx;
	if (shnum == 0 || shstrndx == SHN_XINDEX) {	/* extended numbering */
		if (read_shdr(fd, &eh, 0, &sh))
			return;
		if (shnum == 0)
			shnum = sh.sh_size;
		if (shstrndx == SHN_XINDEX)
			shstrndx = sh.sh_link;
	}
	if (shnum == 0 || shstrndx >= shnum ||
	    shnum > (fsize - eh.e_shoff) / sizeof(ElfW(Shdr)) ||
	    read_shdr(fd, &eh, shstrndx, &strtab) ||
	    strtab.sh_type != SHT_STRTAB || strtab.sh_offset > fsize ||
	    strtab.sh_size > fsize - strtab.sh_offset)
		return;

	for (i = 1; i < shnum; i++) {
		if (read_shdr(fd, &eh, i, &sh))
			return;
		if (sh.sh_type != SHT_PROGBITS ||
		    sh.sh_name >= strtab.sh_size ||
		    strtab.sh_size - sh.sh_name < sizeof(name))
			continue;
		if (codectl__pread_all(fd, secname, sizeof(secname),
				       strtab.sh_offset + sh.sh_name))
			return;
		if (!memcmp(secname, name, sizeof(name)))
			break;
	}
	if (i == shnum)
		return;

	/* The name, NUL, padding to 4 bytes, the CRC32 in file byte order. */
	if (sh.sh_offset > fsize || sh.sh_size > fsize - sh.sh_offset ||
	    sh.sh_size < 8)
		return;
	size = sh.sh_size < CODECTL_PATH_MAX ? sh.sh_size : CODECTL_PATH_MAX;
	if (codectl__pread_all(fd, buf->debug_link, size, sh.sh_offset))
		return;
	nul = memchr(buf->debug_link, '\0', size);
	if (!nul || nul == buf->debug_link)
		return;
	crc_off = ALIGN_UP((uint64_t)(nul - buf->debug_link) + 1, 4);
	if (crc_off > sh.sh_size - 4 ||
	    codectl__pread_all(fd, &crc, sizeof(crc), sh.sh_offset + crc_off))
		return;
	out->debug_link_pathname = (uint64_t)(uintptr_t)buf->debug_link;
	out->debug_link_crc = crc;
}

static void debug_link(const struct dl_phdr_info *info, const char *path,
		       struct codectl_elf_info *out,
		       struct codectl_elf_buf *buf)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);

	if (fd < 0)
		return;
	read_debug_link(fd, info, out, buf);
	close(fd);
}

/* codectl_elf_info_from_phdr(), errno not preserved. */
static int elf_info(const struct dl_phdr_info *info,
		    struct codectl_elf_info *out, struct codectl_elf_buf *buf)
{
	uint64_t page = (uint64_t)sysconf(_SC_PAGESIZE);
	uint64_t lo = UINT64_MAX, hi = 0, base;
	const ElfW(Phdr) *text = NULL;
	const char *name;

	if (!info || !info->dlpi_phdr || !out) {
		errno = EINVAL;
		return -1;
	}
	if (page == 0 || (page & (page - 1)))
		page = 4096;

	memset(out, 0, sizeof(*out));
	base = info->dlpi_addr;
	for (unsigned int i = 0; i < info->dlpi_phnum; i++) {
		const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
		uint64_t start = base + ph->p_vaddr;

		switch (ph->p_type) {
		case PT_LOAD:
			if (!ph->p_memsz)
				break;
			if (start < lo)
				lo = start;
			if (start + ph->p_memsz > hi)
				hi = start + ph->p_memsz;
			if ((ph->p_flags & PF_X) && !text)
				text = ph;
			break;
		case PT_GNU_SFRAME:
			if (out->sframe_start || !ph->p_memsz ||
			    !in_readable_load(info, ph->p_vaddr, ph->p_memsz))
				break;
			out->sframe_start = start;
			out->sframe_end = start +
				sframe_size((const unsigned char *)(uintptr_t)start,
					    ph->p_memsz);
			break;
		case PT_NOTE: {
			const unsigned char *id;
			uint32_t len;

			if (out->build_id || !ph->p_memsz ||
			    !in_readable_load(info, ph->p_vaddr, ph->p_memsz))
				break;
			if (find_build_id((const unsigned char *)(uintptr_t)start,
					  ph->p_memsz, ph->p_align == 8 ? 8 : 4,
					  &id, &len)) {
				out->build_id = (uint64_t)(uintptr_t)id;
				out->build_id_len = len;
			}
			break;
		}
		}
	}
	if (!text) {
		errno = ENOENT;
		return -1;
	}
	out->elf_start = lo & ~(page - 1);
	out->elf_end = ALIGN_UP(hi, page);
	out->text_start = base + text->p_vaddr;
	out->text_end = out->text_start + text->p_memsz;

	name = info->dlpi_name;
	if (name && name[0]) {
		if (strnlen(name, CODECTL_PATH_MAX) < CODECTL_PATH_MAX)
			out->pathname = (uint64_t)(uintptr_t)name;
		if (buf && name[0] == '/')
			debug_link(info, name, out, buf);
	} else if (buf) {
		/* The main program. */
		ssize_t n = readlink("/proc/self/exe", buf->pathname,
				     sizeof(buf->pathname));

		if (n > 0 && (size_t)n < sizeof(buf->pathname)) {
			buf->pathname[n] = '\0';
			out->pathname = (uint64_t)(uintptr_t)buf->pathname;
		}
		debug_link(info, "/proc/self/exe", out, buf);
	}
	return 0;
}

CODECTL_EXPORT int codectl_elf_info_from_phdr(const struct dl_phdr_info *info,
					      struct codectl_elf_info *out,
					      struct codectl_elf_buf *buf)
{
	int saved = errno;

	if (elf_info(info, out, buf))
		return -1;
	errno = saved;
	return 0;
}

/* Register @ei; without SFrame if the kernel rejects the SFrame header. */
int codectl__register_info(struct codectl_elf_info *ei)
{
	int saved = errno;

	if (codectl_register_elf(ei) == 0)
		return 0;
	if (errno != ENOEXEC || !ei->sframe_start)
		return -1;
	/* SFrame the kernel cannot use: frame pointers are better than nothing. */
	ei->sframe_start = 0;
	ei->sframe_end = 0;
	if (codectl_register_elf(ei) == 0) {
		errno = saved;
		return 0;
	}
	errno = ENOEXEC;
	return -1;
}

CODECTL_EXPORT int codectl_register_object(const struct dl_phdr_info *info)
{
	struct codectl_elf_info ei;
	struct codectl_elf_buf buf;
	int saved = errno;

	if (elf_info(info, &ei, &buf))
		return -1;
	errno = saved;
	return codectl__register_info(&ei);
}

CODECTL_EXPORT int codectl_unregister_object(const struct dl_phdr_info *info)
{
	struct codectl_elf_info ei;
	int saved = errno;

	if (elf_info(info, &ei, NULL))
		return -1;
	errno = saved;
	return codectl_unregister(ei.text_start, ei.text_end);
}

void codectl__reg_count(struct codectl__reg_ctx *ctx, int ret)
{
	if (ret == 0 || errno == EEXIST)
		ctx->count++;
	else if (!ctx->err)
		ctx->err = errno;
}

int codectl__reg_each(int (*fn)(struct dl_phdr_info *, size_t, void *),
		      struct codectl__reg_ctx *ctx)
{
	int saved = errno;

	if (codectl_get_fd() < 0)
		return -1;
	dl_iterate_phdr(fn, ctx);
	if (ctx->err) {
		errno = ctx->err;
		return -1;
	}
	errno = saved;
	return ctx->count;
}

static int register_one(struct dl_phdr_info *info, size_t size, void *data)
{
	struct codectl_elf_info ei;
	struct codectl_elf_buf buf;

	(void)size;
	if (elf_info(info, &ei, &buf))
		return 0;	/* no executable segment: nothing to do */
	codectl__reg_count(data, codectl__register_info(&ei));
	return 0;
}

CODECTL_EXPORT int codectl_register_self(void)
{
	struct codectl__reg_ctx ctx = { 0, 0, 0 };

	return codectl__reg_each(register_one, &ctx);
}

struct codectl__segs *codectl__segments(const struct dl_phdr_info *info)
{
	struct codectl__segs *segs;
	unsigned int i, n = 0;

	for (i = 0; i < info->dlpi_phnum; i++)
		n += info->dlpi_phdr[i].p_type == PT_LOAD &&
		     (info->dlpi_phdr[i].p_flags & PF_X) &&
		     info->dlpi_phdr[i].p_memsz;
	segs = malloc(sizeof(*segs) + 2 * n * sizeof(uint64_t));
	if (!segs)
		return NULL;
	segs->n = 0;
	for (i = 0; i < info->dlpi_phnum; i++) {
		const ElfW(Phdr) *ph = &info->dlpi_phdr[i];

		if (ph->p_type != PT_LOAD || !(ph->p_flags & PF_X) ||
		    !ph->p_memsz)
			continue;
		segs->start[2 * segs->n] = info->dlpi_addr + ph->p_vaddr;
		segs->start[2 * segs->n + 1] = segs->start[2 * segs->n] +
					       ph->p_memsz;
		segs->n++;
	}
	return segs;
}

void codectl__unregister_segments(const struct codectl__segs *segs,
				  const char *who)
{
	int saved = errno;
	unsigned int i;

	for (i = 0; i < segs->n; i++)
		if (codectl_unregister(segs->start[2 * i],
				       segs->start[2 * i + 1]) &&
		    errno != ENOENT)
			codectl__debug("%s: unregister %#llx-%#llx: %s\n", who,
				       (unsigned long long)segs->start[2 * i],
				       (unsigned long long)segs->start[2 * i + 1],
				       strerror(errno));
	errno = saved;
}

void codectl__debug(const char *fmt, ...)
{
	static int debug = -1;
	char line[512];
	va_list ap;
	int n;

	if (debug < 0)
		debug = getenv("CODECTL_DEBUG") != NULL;
	if (!debug)
		return;
	va_start(ap, fmt);
	n = vsnprintf(line, sizeof(line), fmt, ap);
	va_end(ap);
	if (n > 0)
		(void)!write(STDERR_FILENO, line,
			     (size_t)n < sizeof(line) ? (size_t)n :
			     sizeof(line) - 1);
}
