// SPDX-License-Identifier: GPL-2.0
/*
 * The daemon fuzzer's mutator (tests/vm/daemon-fuzz.sh): hostile copies
 * of real ELF objects, for the daemon's synthesis child, its cache and
 * the module's reading of the file.
 *
 *   elfmut SEED COUNT OUTDIR SEED-OBJECT...
 *
 * Writes OUTDIR/m-SEED-I.so for I in [0, COUNT), each a copy of one of
 * the objects with one mutation, both chosen in turn (every kind in
 * every 8 files):
 *   flip      up to 64 random bytes anywhere past the ELF header
 *   truncate  cut at a random length
 *   ehframe   .eh_frame partly overwritten with random bytes
 *   length    .eh_frame's CIE/FDE length fields made huge (0xffffffff:
 *             the 64-bit form, 0xfffffff0, past the section)
 *   counts    a huge count or size: e_phnum, e_shnum, e_shstrndx, a
 *             segment's or a section's size or offset
 *   overlap   .eh_frame placed over .text or the headers, or a PT_LOAD
 *             over another
 *   hdr       .eh_frame_hdr's FDE count and table made huge or random
 *   leb       a CIE's augmentation and LEB128 fields made endless
 *             (0x80 continuation bytes)
 * and prints "I KIND FILE" per file.  Deterministic for a SEED.
 */
#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static uint64_t rng;

static uint64_t next(void)
{
	rng ^= rng >> 12;
	rng ^= rng << 25;
	rng ^= rng >> 27;
	return rng * 2685821657736338717ULL;
}

static uint64_t below(uint64_t n)
{
	return n ? next() % n : 0;
}

struct obj {
	unsigned char *p;
	size_t size;
};

/* A section header by name, or NULL (the seed objects are well formed,
 * but every offset is checked anyway). */
static Elf64_Shdr *section(struct obj *o, const char *name)
{
	Elf64_Ehdr *eh = (Elf64_Ehdr *)o->p;
	Elf64_Shdr *sh, *str;
	unsigned int i;

	if (o->size < sizeof(*eh) || eh->e_shentsize != sizeof(Elf64_Shdr) ||
	    eh->e_shoff > o->size ||
	    eh->e_shnum > (o->size - eh->e_shoff) / sizeof(Elf64_Shdr) ||
	    eh->e_shstrndx >= eh->e_shnum)
		return NULL;
	sh = (Elf64_Shdr *)(o->p + eh->e_shoff);
	str = &sh[eh->e_shstrndx];
	for (i = 0; i < eh->e_shnum; i++) {
		uint64_t off = str->sh_offset + sh[i].sh_name;

		if (str->sh_offset < o->size && off < o->size &&
		    strlen(name) < o->size - off &&
		    !strcmp((char *)o->p + off, name) &&
		    sh[i].sh_offset <= o->size &&
		    sh[i].sh_size <= o->size - sh[i].sh_offset)
			return &sh[i];
	}
	return NULL;
}

static void put32(unsigned char *p, uint32_t v)
{
	memcpy(p, &v, 4);
}

static void flip(struct obj *o)
{
	unsigned int n = 1 + below(64);

	if (o->size <= sizeof(Elf64_Ehdr))
		return;
	while (n--)
		o->p[sizeof(Elf64_Ehdr) + below(o->size - sizeof(Elf64_Ehdr))] =
			next();
}

static void ehframe(struct obj *o)
{
	Elf64_Shdr *s = section(o, ".eh_frame");
	uint64_t start, len, i;

	if (!s || !s->sh_size)
		return flip(o);
	start = below(s->sh_size);
	len = 1 + below(s->sh_size - start);
	if (len > 4096)
		len = 1 + below(4096);
	for (i = 0; i < len; i++)
		o->p[s->sh_offset + start + i] = next();
}

/* Walk the records of .eh_frame; make one record's length huge. */
static void length(struct obj *o)
{
	static const uint32_t huge[] = { 0xffffffff, 0xfffffff0, 0x7fffffff,
					 0x10000000 };
	Elf64_Shdr *s = section(o, ".eh_frame");
	uint64_t off = 0, pick, n = 0;
	uint32_t len;

	if (!s || s->sh_size < 8)
		return flip(o);
	pick = below(64);
	while (off + 4 <= s->sh_size) {
		memcpy(&len, o->p + s->sh_offset + off, 4);
		if (n++ == pick || !len || len == 0xffffffff ||
		    off + 4 + len > s->sh_size)
			break;
		off += 4 + len;
	}
	if (off + 4 > s->sh_size)
		off = 0;
	put32(o->p + s->sh_offset + off, huge[below(4)]);
}

static void counts(struct obj *o)
{
	Elf64_Ehdr *eh = (Elf64_Ehdr *)o->p;
	Elf64_Phdr *ph;
	Elf64_Shdr *sh;
	uint64_t big = below(2) ? ~0ULL - below(4096) : 1ULL << (32 + below(31));

	switch (below(5)) {
	case 0:
		eh->e_phnum = 0xffff - below(16);
		break;
	case 1:
		eh->e_shnum = 0xffff - below(16);
		break;
	case 2:
		eh->e_shstrndx = 0xffff - below(16);
		break;
	case 3:
		if (eh->e_phoff >= o->size || !eh->e_phnum ||
		    eh->e_phnum > (o->size - eh->e_phoff) / sizeof(*ph))
			return flip(o);
		ph = (Elf64_Phdr *)(o->p + eh->e_phoff) + below(eh->e_phnum);
		*(below(3) == 0 ? &ph->p_filesz : below(2) ? &ph->p_memsz :
		  &ph->p_offset) = big;
		break;
	default:
		sh = section(o, below(2) ? ".eh_frame" : ".eh_frame_hdr");
		if (!sh)
			return flip(o);
		*(below(2) ? &sh->sh_size : &sh->sh_offset) = big;
		break;
	}
}

static void overlap(struct obj *o)
{
	Elf64_Ehdr *eh = (Elf64_Ehdr *)o->p;
	Elf64_Shdr *eh_frame = section(o, ".eh_frame");
	Elf64_Shdr *text = section(o, ".text");
	Elf64_Phdr *ph;
	unsigned int i, j;

	switch (below(3)) {
	case 0:
		if (!eh_frame || !text)
			return flip(o);
		eh_frame->sh_offset = text->sh_offset;
		eh_frame->sh_addr = text->sh_addr;
		break;
	case 1:
		if (!eh_frame)
			return flip(o);
		eh_frame->sh_offset = below(2) ? 0 : eh->e_phoff;
		break;
	default:
		if (eh->e_phoff >= o->size || eh->e_phnum < 2 ||
		    eh->e_phnum > (o->size - eh->e_phoff) / sizeof(*ph))
			return flip(o);
		ph = (Elf64_Phdr *)(o->p + eh->e_phoff);
		for (i = 0; i < eh->e_phnum && ph[i].p_type != PT_LOAD; i++)
			;
		for (j = i + 1; j < eh->e_phnum && ph[j].p_type != PT_LOAD; j++)
			;
		if (j >= eh->e_phnum)
			return flip(o);
		ph[j].p_vaddr = ph[i].p_vaddr + below(ph[i].p_memsz + 1);
		ph[j].p_offset = ph[i].p_offset;
		break;
	}
}

static void hdr(struct obj *o)
{
	Elf64_Shdr *s = section(o, ".eh_frame_hdr");
	uint64_t i;

	if (!s || s->sh_size < 12)
		return flip(o);
	/* version, eh_frame_ptr_enc, fde_count_enc, table_enc, then the
	 * pointer and the count (udata4 in what ld writes). */
	if (below(2)) {
		put32(o->p + s->sh_offset + 8, 0xffffffff - below(1024));
	} else {
		for (i = 12; i < s->sh_size && i < 12 + 8 * 64; i++)
			o->p[s->sh_offset + i] = next();
	}
	if (!below(4))
		o->p[s->sh_offset + 1 + below(3)] = next();
}

/* The first CIE: an endless LEB128 or a bogus augmentation. */
static void leb(struct obj *o)
{
	Elf64_Shdr *s = section(o, ".eh_frame");
	unsigned char *p;
	uint32_t len;
	uint64_t i, n;

	if (!s || s->sh_size < 16)
		return flip(o);
	p = o->p + s->sh_offset;
	memcpy(&len, p, 4);
	if (len < 8 || len > s->sh_size - 4)
		return flip(o);
	/* length, CIE id (0), version, augmentation string, ... */
	if (below(2)) {
		for (i = 9; i < 4 + len && p[i]; i++)
			p[i] = below(2) ? 'z' : "zRPLSB"[below(6)];
	} else {
		n = 9 + below(len - 5);
		for (i = n; i < 4 + len; i++)
			p[i] = 0x80 | next();
	}
}

static const struct {
	const char *name;
	void (*fn)(struct obj *);
} kinds[] = {
	{ "flip", flip }, { "truncate", NULL }, { "ehframe", ehframe },
	{ "length", length }, { "counts", counts }, { "overlap", overlap },
	{ "hdr", hdr }, { "leb", leb },
};

static int load(const char *path, struct obj *o)
{
	struct stat st;
	int fd = open(path, O_RDONLY);

	if (fd < 0 || fstat(fd, &st) || st.st_size < (off_t)sizeof(Elf64_Ehdr)) {
		fprintf(stderr, "elfmut: %s: %s\n", path,
			fd < 0 ? strerror(errno) : "too small");
		return -1;
	}
	o->size = st.st_size;
	o->p = malloc(o->size);
	if (!o->p || pread(fd, o->p, o->size, 0) != (ssize_t)o->size) {
		fprintf(stderr, "elfmut: %s: cannot read it\n", path);
		return -1;
	}
	close(fd);
	return 0;
}

int main(int argc, char **argv)
{
	unsigned long seed, count, i;
	struct obj *seeds, o;
	char path[4096];
	int nseeds, k, fd;
	char *end;

	if (argc < 5) {
		fputs("usage: elfmut SEED COUNT OUTDIR SEED-OBJECT...\n", stderr);
		return 2;
	}
	seed = strtoul(argv[1], &end, 0);
	if (*end)
		return 2;
	count = strtoul(argv[2], &end, 0);
	if (*end || count > 1000000)
		return 2;
	nseeds = argc - 4;
	seeds = calloc(nseeds, sizeof(*seeds));
	if (!seeds)
		return 1;
	for (k = 0; k < nseeds; k++)
		if (load(argv[4 + k], &seeds[k]))
			return 1;
	rng = seed * 0x9e3779b97f4a7c15ULL + 1;
	for (i = 0; i < count; i++) {
		unsigned long nk = sizeof(kinds) / sizeof(kinds[0]);
		unsigned int kind = i % nk;
		const struct obj *s = &seeds[(i + i / nk) % nseeds];

		o.size = s->size;
		o.p = malloc(o.size);
		if (!o.p)
			return 1;
		memcpy(o.p, s->p, o.size);
		if (kinds[kind].fn)
			kinds[kind].fn(&o);
		else
			o.size = below(o.size);
		snprintf(path, sizeof(path), "%s/m-%lu-%lu.so", argv[3], seed, i);
		fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0755);
		if (fd < 0 || write(fd, o.p, o.size) != (ssize_t)o.size ||
		    close(fd)) {
			fprintf(stderr, "elfmut: %s: %s\n", path, strerror(errno));
			return 1;
		}
		printf("%lu %s %s\n", i, kinds[kind].name, path);
		free(o.p);
	}
	return 0;
}
