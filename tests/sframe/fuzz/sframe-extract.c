// SPDX-License-Identifier: GPL-2.0
/*
 * sframe-extract: write an ELF file's .sframe section as a fuzz-sframe
 * input (the 4-byte prefix, all zero, then the section's bytes).
 *
 *   sframe-extract ELF OUT
 *
 * Exit 0 written, 1 no .sframe section (or not ELF64), 2 I/O error.
 */
#include <stdio.h>

#include "elfsec.h"

int main(int argc, char **argv)
{
	static const unsigned char prefix[4];
	struct elf_section es;
	FILE *f;

	if (argc != 3) {
		fprintf(stderr, "usage: sframe-extract ELF OUT\n");
		return 2;
	}
	if (elf_find_sframe(argv[1], &es))
		return 1;
	f = fopen(argv[2], "wb");
	if (!f) {
		perror(argv[2]);
		return 2;
	}
	if (fwrite(prefix, 1, sizeof(prefix), f) != sizeof(prefix) ||
	    fwrite(es.data, 1, es.size, f) != es.size || fclose(f)) {
		perror(argv[2]);
		return 2;
	}
	return 0;
}
