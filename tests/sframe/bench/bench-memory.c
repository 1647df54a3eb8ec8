// SPDX-License-Identifier: GPL-2.0
/*
 * bench-memory: what unwinding information costs in bytes, per object.
 *
 *   bench-memory ELF...
 *
 * For each file: its SFrame section (its own .sframe, else one
 * synthesised from .eh_frame by libcodectl's codectl_sframe_synth(), as
 * codectl import does); the flat table the module builds from it (the
 * project's decoder, sizes as the module charges them:
 * sframe_flat_mem()); and .eh_frame + .eh_frame_hdr, with the ratios of
 * both to the latter.  A benchmark: it prints figures and fails only when
 * a file cannot be read or gives no table.
 */
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include <codectl.h>

#include "elfsec.h"
#include "flat-build.h"
#include "sframe.h"

/* The flat table of the section at @data, as the module builds it. */
static int flat_mem(const void *data, uint64_t addr, uint64_t size,
		    uint64_t *mem)
{
	struct sframe_flat flat;
	struct sframe_sec sec;
	uint32_t words;
	int err;

	err = sframe_init(&sec, addr, size, data, NULL, NULL);
	if (err)
		return err;
	err = flat_build(&sec, &flat, &words);
	if (!err)
		*mem = sframe_flat_mem(&flat, words);
	flat_free(&flat);
	return err;
}

static int one(const char *path)
{
	struct elf_section sf, eh, hdr;
	uint64_t flat = 0, ehb, addr = 0;
	const char *kind = "own";
	size_t size;
	void *syn = NULL;
	int err, fd;

	if (elf_find_section(path, ".eh_frame", 0, &eh))
		eh.size = 0;
	if (elf_find_section(path, ".eh_frame_hdr", 0, &hdr))
		hdr.size = 0;
	ehb = eh.size + hdr.size;
	if (!elf_find_sframe(path, &sf)) {
		size = sf.size;
		addr = sf.addr;
		err = flat_mem(sf.data, addr, size, &flat);
	} else {
		kind = "synthesised";
		fd = open(path, O_RDONLY | O_CLOEXEC);
		if (fd < 0 ||
		    codectl_sframe_synth(fd, 0, 0, 0, &syn, &size, NULL)) {
			perror(path);
			return 1;
		}
		close(fd);
		err = flat_mem(syn, 0, size, &flat);
	}
	if (err) {
		fprintf(stderr, "%s: flat table: %s\n", path,
			sframe_strerror(err));
		free(syn);
		return 1;
	}
	printf("%s: SFrame (%s) %zu B, flat table %" PRIu64
	       " B, .eh_frame + .eh_frame_hdr %" PRIu64 " B; "
	       "SFrame/eh %.2f, flat/eh %.2f, flat/SFrame %.2f\n",
	       path, kind, size, flat, ehb,
	       ehb ? (double)size / ehb : 0, ehb ? (double)flat / ehb : 0,
	       size ? (double)flat / size : 0);
	free(syn);
	return 0;
}

int main(int argc, char **argv)
{
	int i, ret = 0;

	if (argc < 2) {
		fprintf(stderr, "usage: bench-memory ELF...\n");
		return 2;
	}
	for (i = 1; i < argc; i++)
		ret |= one(argv[i]);
	return ret;
}
