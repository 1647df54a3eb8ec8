// SPDX-License-Identifier: GPL-2.0-only OR LGPL-2.1-or-later
/*
 * SFrame decoding, freestanding (see sframe.h).
 */
#include "sframe.h"

/* Bytes of one FDE (v3: of one FDE index entry), by version. */
static uint32_t sframe_fde_size(uint8_t version)
{
	switch (version) {
	case SFRAME_VERSION_1:
		return 17;
	case SFRAME_VERSION_2:
		return 20;
	default:
		return 16;
	}
}

static uint16_t get16(const uint8_t *p, int be)
{
	return be ? (uint16_t)(p[0] << 8 | p[1]) : (uint16_t)(p[1] << 8 | p[0]);
}

static uint32_t get32(const uint8_t *p, int be)
{
	if (be)
		return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 |
		       (uint32_t)p[2] << 8 | p[3];
	return (uint32_t)p[3] << 24 | (uint32_t)p[2] << 16 |
	       (uint32_t)p[1] << 8 | p[0];
}

int sframe_parse_header(const uint8_t *buf, uint64_t section_size,
			struct sframe_header *hdr)
{
	uint64_t hdr_end, fdes_end, fres_end;
	uint8_t allowed;
	int be;

	if (section_size < SFRAME_HEADER_SIZE)
		return SFRAME_E_TRUNCATED;

	/* The magic tells the byte order of every other field. */
	if (get16(buf, 0) == SFRAME_MAGIC)
		be = 0;
	else if (get16(buf, 1) == SFRAME_MAGIC)
		be = 1;
	else
		return SFRAME_E_MAGIC;

	hdr->version = buf[2];
	hdr->flags = buf[3];
	hdr->abi = buf[4];
	hdr->big_endian = (uint8_t)be;
	hdr->cfa_fixed_fp_offset = (int8_t)buf[5];
	hdr->cfa_fixed_ra_offset = (int8_t)buf[6];
	hdr->auxhdr_len = buf[7];
	hdr->num_fdes = get32(buf + 8, be);
	hdr->num_fres = get32(buf + 12, be);
	hdr->fre_len = get32(buf + 16, be);
	hdr->fdes_off = get32(buf + 20, be);
	hdr->fres_off = get32(buf + 24, be);

	if (hdr->version < SFRAME_VERSION_1 || hdr->version > SFRAME_VERSION_3)
		return SFRAME_E_VERSION;
	hdr->fde_size = sframe_fde_size(hdr->version);

	switch (hdr->abi) {
	case SFRAME_ABI_AARCH64_BE:
	case SFRAME_ABI_S390X_BE:
		if (!be)
			return SFRAME_E_ABI;
		break;
	case SFRAME_ABI_AARCH64_LE:
	case SFRAME_ABI_AMD64_LE:
		if (be)
			return SFRAME_E_ABI;
		break;
	default:
		return SFRAME_E_ABI;
	}

	/*
	 * v1 and v2 define SORTED, FRAME_POINTER and (v2 erratum, binutils
	 * 2.45) FUNC_START_PCREL; v3 requires SORTED and PCREL and nothing else.
	 */
	allowed = SFRAME_F_FDE_SORTED | SFRAME_F_FRAME_POINTER;
	if (hdr->version >= SFRAME_VERSION_2)
		allowed |= SFRAME_F_FDE_FUNC_START_PCREL;
	if (hdr->flags & ~allowed)
		return SFRAME_E_FLAGS;
	if (hdr->version == SFRAME_VERSION_3 &&
	    hdr->flags != (SFRAME_F_FDE_SORTED | SFRAME_F_FDE_FUNC_START_PCREL))
		return SFRAME_E_FLAGS;

	hdr_end = SFRAME_HEADER_SIZE + (uint64_t)hdr->auxhdr_len;
	if (hdr_end > section_size)
		return SFRAME_E_AUXHDR;

	if (!hdr->num_fdes || !hdr->num_fres)
		return SFRAME_E_NO_FDES;

	/* 64-bit sums of 32-bit values: no overflow possible. */
	fdes_end = hdr_end + hdr->fdes_off +
		   (uint64_t)hdr->num_fdes * hdr->fde_size;
	if (fdes_end > section_size)
		return SFRAME_E_FDES_BOUNDS;
	fres_end = hdr_end + hdr->fres_off + (uint64_t)hdr->fre_len;
	if (fres_end > section_size)
		return SFRAME_E_FRES_BOUNDS;
	if (hdr_end + hdr->fres_off < fdes_end)
		return SFRAME_E_OVERLAP;

	hdr->size = fres_end;
	return SFRAME_OK;
}

const char *sframe_strerror(int err)
{
	static const char *const msg[SFRAME_E_NR_CODES] = {
		[SFRAME_OK]		= "valid",
		[SFRAME_E_TRUNCATED]	= "section shorter than its header",
		[SFRAME_E_MAGIC]	= "bad magic",
		[SFRAME_E_VERSION]	= "unsupported version",
		[SFRAME_E_ABI]		= "unknown ABI or wrong byte order",
		[SFRAME_E_FLAGS]	= "invalid flags",
		[SFRAME_E_AUXHDR]	= "auxiliary header past the end",
		[SFRAME_E_NO_FDES]	= "no FDEs or no FREs",
		[SFRAME_E_FDES_BOUNDS]	= "FDE array out of bounds",
		[SFRAME_E_FRES_BOUNDS]	= "FRE sub-section out of bounds",
		[SFRAME_E_OVERLAP]	= "FREs overlap the FDE array",
	};

	if (err < 0 || err >= SFRAME_E_NR_CODES)
		return "unknown error";
	return msg[err];
}
