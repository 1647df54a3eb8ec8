// SPDX-License-Identifier: GPL-2.0
/*
 * sframe-dump: print the rules codectl's SFrame decoder (shared/sframe.c)
 * finds in an ELF file's .sframe section, in the canonical format of
 * tests/sframe/FORMAT.md, so they can be compared with libsframe's and
 * with .eh_frame's.
 *
 *   sframe-dump [--validate] ELF
 *
 * Every pc of every FDE is looked up through the full lookup path,
 * sframe_find() (binary search, then the FRE scan), when the section is
 * sorted.  --validate also runs sframe_validate() and exits 3 if it
 * refuses the section.  Exit 2: no usable .sframe section.
 */
#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "sframe.h"
#include "elfsec.h"

static void expr(char *buf, size_t len, const struct sframe_loc *loc)
{
	char base[16];
	int off = loc->off;

	switch (loc->kind) {
	case SFRAME_LOC_SAME:
		snprintf(buf, len, "same");
		return;
	case SFRAME_LOC_UNDEF:
		snprintf(buf, len, "undef");
		return;
	}
	if (loc->base == SFRAME_BASE_SP)
		snprintf(base, sizeof(base), "sp");
	else if (loc->base == SFRAME_BASE_FP)
		snprintf(base, sizeof(base), "fp");
	else if (loc->base == SFRAME_BASE_CFA)
		snprintf(base, sizeof(base), "cfa");
	else
		snprintf(base, sizeof(base), "r%u", loc->base);
	if (loc->kind == SFRAME_LOC_MEM)
		snprintf(buf, len, "*(%s%+d)", base, off);
	else
		snprintf(buf, len, "%s%+d", base, off);
}

static void rule_text(char *buf, size_t len, int err,
		      const struct sframe_rule *r)
{
	char cfa[40], ra[40], fp[40];

	if (err) {
		snprintf(buf, len, "none");
		return;
	}
	expr(cfa, sizeof(cfa), &r->cfa);
	expr(ra, sizeof(ra), &r->ra);
	expr(fp, sizeof(fp), &r->fp);
	snprintf(buf, len, "cfa=%s ra=%s fp=%s%s%s", cfa, ra, fp,
		 r->flags & SFRAME_RULE_MANGLED_RA ? " mangled" : "",
		 r->flags & SFRAME_RULE_SIGNAL ? " signal" : "");
}

int main(int argc, char **argv)
{
	struct elf_section es;
	struct sframe_sec sec;
	int validate = 0, err, sorted;
	const char *path;
	uint32_t i;

	if (argc == 3 && !strcmp(argv[1], "--validate")) {
		validate = 1;
		path = argv[2];
	} else if (argc == 2) {
		path = argv[1];
	} else {
		fprintf(stderr, "usage: sframe-dump [--validate] ELF\n");
		return 2;
	}
	if (elf_find_sframe(path, &es)) {
		fprintf(stderr, "sframe-dump: %s: no .sframe section\n", path);
		return 2;
	}
	err = sframe_init(&sec, es.addr, es.size, es.data, NULL, NULL);
	if (err) {
		fprintf(stderr, "sframe-dump: %s: %s\n", path,
			sframe_strerror(err));
		return 2;
	}
	printf("# %s sframe v%u abi %u flags 0x%x fdes %u fres %u\n", path,
	       sec.hdr.version, sec.hdr.abi, sec.hdr.flags, sec.hdr.num_fdes,
	       sec.hdr.num_fres);
	sorted = sec.hdr.flags & SFRAME_F_FDE_SORTED;

	for (i = 0; i < sec.hdr.num_fdes; i++) {
		char cur[160] = "", next[160];
		struct sframe_fde fde;
		struct sframe_rule r;
		uint64_t pc, from = 0;

		err = sframe_fde_at(&sec, i, &fde);
		if (err) {
			printf("# fde %u: %s\n", i, sframe_strerror(err));
			continue;
		}
		for (pc = fde.func_start; pc < fde.func_start + fde.func_size;
		     pc++) {
			err = sorted ? sframe_find(&sec, pc, &r) :
				       sframe_fde_rule(&sec, &fde, pc, &r);
			rule_text(next, sizeof(next), err, &r);
			if (pc != fde.func_start && strcmp(cur, next)) {
				printf("0x%" PRIx64 "-0x%" PRIx64 " %s\n", from,
				       pc, cur);
				from = pc;
			} else if (pc == fde.func_start) {
				from = pc;
			}
			memcpy(cur, next, sizeof(cur));
		}
		if (fde.func_size)
			printf("0x%" PRIx64 "-0x%" PRIx64 " %s\n", from,
			       fde.func_start + fde.func_size, cur);
	}

	if (validate) {
		err = sframe_validate(&sec);
		printf("# validate: %s\n", sframe_strerror(err));
		if (err)
			return 3;
	}
	return 0;
}
