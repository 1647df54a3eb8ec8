/* SPDX-License-Identifier: GPL-2.0-only OR LGPL-2.1-or-later */
/*
 * SFrame decoding, freestanding: no libc, no kernel API.  The same source
 * is compiled into the codectl module and into user space (library, tools,
 * tests), so it only uses fixed-width integer types, which the includer
 * provides: <linux/types.h> in the kernel, <stdint.h> in user space.
 *
 * Fields are read byte by byte in the section's byte order, so the code
 * runs on any host and needs no alignment.
 *
 * Layout facts: ../shared/notes/sframe-format.md and binutils'
 * libsframe/doc/sframe-spec.texi.
 */
#ifndef CODECTL_SFRAME_H
#define CODECTL_SFRAME_H

#ifdef __KERNEL__
#include <linux/types.h>
#else
#include <stdint.h>
#endif

#define SFRAME_MAGIC		0xdee2
#define SFRAME_HEADER_SIZE	28

#define SFRAME_VERSION_1	1
#define SFRAME_VERSION_2	2
#define SFRAME_VERSION_3	3

#define SFRAME_F_FDE_SORTED		0x1
#define SFRAME_F_FRAME_POINTER		0x2
#define SFRAME_F_FDE_FUNC_START_PCREL	0x4

#define SFRAME_ABI_AARCH64_BE	1
#define SFRAME_ABI_AARCH64_LE	2
#define SFRAME_ABI_AMD64_LE	3
#define SFRAME_ABI_S390X_BE	4

/* Why a section was refused.  0 is success; each defect has its code. */
enum sframe_err {
	SFRAME_OK = 0,
	SFRAME_E_TRUNCATED,	/* section shorter than its header */
	SFRAME_E_MAGIC,		/* bad magic in either byte order */
	SFRAME_E_VERSION,	/* version not 1, 2 or 3 */
	SFRAME_E_ABI,		/* unknown ABI, or byte order not the ABI's */
	SFRAME_E_FLAGS,		/* unknown flags, or flags the version forbids */
	SFRAME_E_AUXHDR,	/* auxiliary header runs past the section */
	SFRAME_E_NO_FDES,	/* num_fdes or num_fres is 0 */
	SFRAME_E_FDES_BOUNDS,	/* FDE array outside the section */
	SFRAME_E_FRES_BOUNDS,	/* FRE sub-section outside the section */
	SFRAME_E_OVERLAP,	/* FRE sub-section starts inside the FDEs */
	SFRAME_E_NR_CODES
};

/**
 * struct sframe_header - the decoded fixed header
 * @version:		1, 2 or 3
 * @flags:		SFRAME_F_* bits
 * @abi:		SFRAME_ABI_*
 * @big_endian:		1 if the section's fields are big-endian
 * @cfa_fixed_fp_offset: FP saved at CFA + this when fixed by the ABI, else 0
 * @cfa_fixed_ra_offset: RA saved at CFA + this when fixed (-8 on AMD64)
 * @auxhdr_len:		bytes of auxiliary header after the fixed header
 * @num_fdes:		function descriptor entries
 * @num_fres:		frame row entries
 * @fre_len:		bytes of the FRE sub-section
 * @fdes_off:		FDE array, from the end of the headers
 * @fres_off:		FRE sub-section, from the end of the headers
 * @fde_size:		bytes of one FDE (index entry in v3)
 * @size:		bytes the section needs: headers + the later of the
 *			FDE array's and FRE sub-section's ends
 */
struct sframe_header {
	uint8_t version;
	uint8_t flags;
	uint8_t abi;
	uint8_t big_endian;
	int8_t cfa_fixed_fp_offset;
	int8_t cfa_fixed_ra_offset;
	uint8_t auxhdr_len;
	uint32_t num_fdes;
	uint32_t num_fres;
	uint32_t fre_len;
	uint32_t fdes_off;
	uint32_t fres_off;
	uint32_t fde_size;
	uint64_t size;
};

/**
 * sframe_parse_header() - decode and check an SFrame section's header
 * @buf:	the first min(@section_size, SFRAME_HEADER_SIZE) bytes
 * @section_size: bytes the section may occupy (registered range or segment)
 * @hdr:	out: the decoded header, valid when SFRAME_OK is returned
 *
 * Checks everything the header alone can tell: magic, version, ABI and
 * byte order, flags, and that the auxiliary header, the FDE array and the
 * FRE sub-section lie inside @section_size without overflow.
 *
 * Return: SFRAME_OK or the enum sframe_err code of the first defect.
 */
int sframe_parse_header(const uint8_t *buf, uint64_t section_size,
			struct sframe_header *hdr);

/**
 * sframe_strerror() - a short description of an enum sframe_err code
 * @err:	the code
 *
 * Return: a static string, never NULL.
 */
const char *sframe_strerror(int err);

#endif /* CODECTL_SFRAME_H */
