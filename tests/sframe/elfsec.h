/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Find the .sframe section of an ELF64 file of either byte order.
 */
#ifndef CODECTL_TESTS_ELFSEC_H
#define CODECTL_TESTS_ELFSEC_H

#include <stdint.h>

/**
 * struct elf_section - a section mapped from a file
 * @data:	its bytes (the file stays mapped for the process's life)
 * @addr:	its link-time address (sh_addr)
 * @size:	its size (sh_size)
 */
struct elf_section {
	const uint8_t *data;
	uint64_t addr;
	uint64_t size;
};

/*
 * Map @path and find its section named .sframe or of type SHT_GNU_SFRAME.
 * Return: 0, or -1 (not ELF64, no such section, I/O error).
 */
int elf_find_sframe(const char *path, struct elf_section *out);

/*
 * Map @path and find its section named @name, or of type @type (0: by
 * name only).  Return: 0, or -1 (not ELF64, no such section, I/O error).
 */
int elf_find_section(const char *path, const char *name, uint32_t type,
		     struct elf_section *out);

#endif
