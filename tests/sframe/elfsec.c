// SPDX-License-Identifier: GPL-2.0
/*
 * Find the .sframe section of an ELF64 file of either byte order.
 */
#include <elf.h>
#include <fcntl.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "elfsec.h"

#ifndef SHT_GNU_SFRAME
#define SHT_GNU_SFRAME 0x6ffffff4
#endif

static int big;

static uint16_t g16(const void *p)
{
	uint16_t v;

	memcpy(&v, p, sizeof(v));
	return big ? __builtin_bswap16(v) : v;
}

static uint32_t g32(const void *p)
{
	uint32_t v;

	memcpy(&v, p, sizeof(v));
	return big ? __builtin_bswap32(v) : v;
}

static uint64_t g64(const void *p)
{
	uint64_t v;

	memcpy(&v, p, sizeof(v));
	return big ? __builtin_bswap64(v) : v;
}

/* The address of a field, read with the file's byte order by g16/g32/g64. */
#define F(s, field)	((const void *)&(s)->field)

int elf_find_sframe(const char *path, struct elf_section *out)
{
	return elf_find_section(path, ".sframe", SHT_GNU_SFRAME, out);
}

int elf_find_section(const char *path, const char *wanted, uint32_t type,
		     struct elf_section *out)
{
	const Elf64_Ehdr *eh;
	const uint8_t *base;
	uint64_t shoff, stroff, strsize;
	uint16_t shnum, shentsize, shstrndx, i;
	struct stat st;
	int fd;

	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -1;
	if (fstat(fd, &st) || (size_t)st.st_size < sizeof(Elf64_Ehdr)) {
		close(fd);
		return -1;
	}
	base = mmap(NULL, st.st_size, PROT_READ, MAP_PRIVATE, fd, 0);
	close(fd);
	if (base == MAP_FAILED)
		return -1;
	eh = (const Elf64_Ehdr *)base;
	if (memcmp(eh->e_ident, ELFMAG, SELFMAG) ||
	    eh->e_ident[EI_CLASS] != ELFCLASS64)
		return -1;
	big = eh->e_ident[EI_DATA] == ELFDATA2MSB;

	shoff = g64(F(eh, e_shoff));
	shnum = g16(F(eh, e_shnum));
	shentsize = g16(F(eh, e_shentsize));
	shstrndx = g16(F(eh, e_shstrndx));
	if (shentsize != sizeof(Elf64_Shdr) || shstrndx >= shnum ||
	    shoff > (uint64_t)st.st_size ||
	    (uint64_t)shnum * shentsize > (uint64_t)st.st_size - shoff)
		return -1;

	{
		const Elf64_Shdr *ss = (const Elf64_Shdr *)(base + shoff) + shstrndx;

		stroff = g64(F(ss, sh_offset));
		strsize = g64(F(ss, sh_size));
		if (stroff > (uint64_t)st.st_size ||
		    strsize > (uint64_t)st.st_size - stroff)
			return -1;
	}
	for (i = 0; i < shnum; i++) {
		const Elf64_Shdr *sh = (const Elf64_Shdr *)(base + shoff) + i;
		uint32_t name = g32(F(sh, sh_name));
		uint64_t off = g64(F(sh, sh_offset)), size = g64(F(sh, sh_size));
		int named = name < strsize &&
			    !strncmp((const char *)base + stroff + name,
				     wanted, strsize - name);

		if (!named && (!type || g32(F(sh, sh_type)) != type))
			continue;
		if (g32(F(sh, sh_type)) == SHT_NOBITS ||
		    off > (uint64_t)st.st_size ||
		    size > (uint64_t)st.st_size - off)
			return -1;
		out->data = base + off;
		out->addr = g64(F(sh, sh_addr));
		out->size = size;
		return 0;
	}
	return -1;
}
