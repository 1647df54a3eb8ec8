// SPDX-License-Identifier: GPL-2.0
/*
 * A look-alike of an ELF object, as any user can make one, for the
 * on-demand tests' cache poisoning (tests/vm/ondemand.sh):
 *
 *   lookalike nocfi SRC DST      SRC with .eh_frame and .eh_frame_hdr
 *                                zeroed: no CFI at all
 *   lookalike wrongcfi SRC DST   SRC with every FDE's instructions made
 *                                DW_CFA_nop: well-formed CFI whose every
 *                                row is the CIE's (the CFA at rsp + 8),
 *                                wrong past each function's first push
 *
 * DST gets SRC's size, build id, atime and mtime (to the nanosecond):
 * whatever keys a cache on those takes it for SRC.
 */
#define _GNU_SOURCE
#include <elf.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define MAX_CIES 256

static unsigned char *img;
static size_t img_size;

static void die(const char *what)
{
	perror(what);
	exit(1);
}

static uint64_t uleb(size_t *p, size_t end)
{
	uint64_t v = 0;
	unsigned int shift = 0;

	while (*p < end) {
		unsigned char b = img[(*p)++];

		v |= (uint64_t)(b & 0x7f) << shift;
		shift += 7;
		if (!(b & 0x80))
			break;
	}
	return v;
}

/* Bytes of a pointer in encoding @enc (the encodings ld writes). */
static size_t enc_size(unsigned char enc)
{
	switch (enc & 0x0f) {
	case 0x02: case 0x0a: return 2;
	case 0x03: case 0x0b: return 4;
	default: return 8;
	}
}

/* Nop every FDE's instructions in the .eh_frame at [@lo, @hi). */
static unsigned long nop_fdes(size_t lo, size_t hi)
{
	struct { size_t off; int z; unsigned char enc; } cie[MAX_CIES];
	unsigned int ncie = 0, i;
	unsigned long n = 0;
	size_t off = lo;

	while (off + 8 <= hi) {
		uint32_t len, id;
		size_t end, p;

		memcpy(&len, img + off, 4);
		if (!len || len == 0xffffffff || off + 4 + len > hi)
			break;
		end = off + 4 + len;
		memcpy(&id, img + off + 4, 4);
		p = off + 8;
		if (!id) {			/* a CIE */
			const char *aug = (const char *)img + p + 1;
			unsigned int version = img[p];

			if (ncie == MAX_CIES)
				break;
			cie[ncie].off = off;
			cie[ncie].z = aug[0] == 'z';
			cie[ncie].enc = 0;
			p += 1 + strlen(aug) + 1;
			uleb(&p, end);		/* code alignment */
			uleb(&p, end);		/* data alignment (sleb) */
			if (version == 1)
				p++;
			else
				uleb(&p, end);
			if (cie[ncie].z) {
				uleb(&p, end);
				for (i = 1; aug[i]; i++) {
					if (aug[i] == 'R')
						cie[ncie].enc = img[p++];
					else if (aug[i] == 'P')
						p += 1 + enc_size(img[p]);
					else if (aug[i] == 'L')
						p++;
				}
			}
			ncie++;
		} else {			/* an FDE: its CIE is id back */
			size_t c = off + 4 - id;

			for (i = 0; i < ncie && cie[i].off != c; i++)
				;
			if (i < ncie) {
				p += 2 * enc_size(cie[i].enc);
				if (cie[i].z) {
					uint64_t alen = uleb(&p, end);

					p += alen;
				}
				if (p < end) {
					memset(img + p, 0, end - p);
					n++;
				}
			}
		}
		off = end;
	}
	return n;
}

int main(int argc, char **argv)
{
	struct timespec times[2];
	Elf64_Ehdr *eh;
	Elf64_Shdr *sh;
	const char *names;
	struct stat st;
	unsigned long fdes = 0;
	unsigned int i;
	int fd, found = 0;

	if (argc != 4 || (strcmp(argv[1], "nocfi") && strcmp(argv[1], "wrongcfi"))) {
		fprintf(stderr, "usage: lookalike nocfi|wrongcfi SRC DST\n");
		return 2;
	}
	fd = open(argv[2], O_RDONLY);
	if (fd < 0 || fstat(fd, &st))
		die(argv[2]);
	img_size = st.st_size;
	img = malloc(img_size);
	if (!img || read(fd, img, img_size) != (ssize_t)img_size)
		die("read");
	close(fd);
	eh = (Elf64_Ehdr *)img;
	if (memcmp(eh->e_ident, ELFMAG, SELFMAG) || !eh->e_shoff ||
	    eh->e_shoff + eh->e_shnum * sizeof(*sh) > img_size)
		die("not an ELF file with sections");
	sh = (Elf64_Shdr *)(img + eh->e_shoff);
	names = (const char *)img + sh[eh->e_shstrndx].sh_offset;
	for (i = 0; i < eh->e_shnum; i++) {
		const char *name = names + sh[i].sh_name;
		size_t lo = sh[i].sh_offset, hi = lo + sh[i].sh_size;

		if (sh[i].sh_type == SHT_NOBITS || hi > img_size)
			continue;
		if (!strcmp(argv[1], "nocfi") &&
		    (!strcmp(name, ".eh_frame") || !strcmp(name, ".eh_frame_hdr"))) {
			memset(img + lo, 0, hi - lo);
			found++;
		} else if (!strcmp(argv[1], "wrongcfi") && !strcmp(name, ".eh_frame")) {
			fdes = nop_fdes(lo, hi);
			found++;
		}
	}
	if (!found || (!strcmp(argv[1], "wrongcfi") && !fdes)) {
		fprintf(stderr, "lookalike: %s: no CFI found\n", argv[2]);
		return 1;
	}
	fd = open(argv[3], O_WRONLY | O_CREAT | O_TRUNC, 0755);
	if (fd < 0 || write(fd, img, img_size) != (ssize_t)img_size)
		die(argv[3]);
	times[0] = st.st_atim;
	times[1] = st.st_mtim;
	if (futimens(fd, times) || close(fd))
		die(argv[3]);
	if (fdes)
		printf("%lu FDEs made nops\n", fdes);
	return 0;
}
