/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* libcodectl internals, not installed. */
#ifndef LIBCODECTL_INTERNAL_H
#define LIBCODECTL_INTERNAL_H

#include "codectl.h"
#include "../shared/machine.h"

/* Everything is hidden (-fvisibility=hidden) except what is marked. */
#define CODECTL_EXPORT	__attribute__((visibility("default")))

struct dl_phdr_info;

/*
 * codectl_sframe_synth() for the FDEs starting in [@lo, @hi) (link-time
 * addresses) only, each cut at @hi: one executable segment's functions.
 */
int codectl__sframe_synth_range(int fd, uint64_t bias, uint64_t lo,
				uint64_t hi, uint64_t sec_addr,
				unsigned int flags, void **sec, size_t *size,
				struct codectl_synth_stats *stats);

/*
 * codectl__sframe_synth_range() at link-time addresses (bias 0), with the
 * register table (CODECTL_SYNTH_REGS) of the same FDEs made in the same
 * pass: *@regs NULL and *@regs_size 0 when the object needs none.
 */
int codectl__sframe_synth_both(int fd, uint64_t lo, uint64_t hi,
			       uint64_t sec_addr, void **sec, size_t *size,
			       void **regs, size_t *regs_size,
			       struct codectl_synth_stats *stats);

/*
 * The same from an ELF image in memory (the vdso, which has no file):
 * @image_size bytes at @image, all readable.
 */
int codectl__sframe_synth_mem(const void *image, size_t image_size,
			      uint64_t bias, uint64_t lo, uint64_t hi,
			      unsigned int flags, void **sec, size_t *size);

/*
 * Read exactly @len bytes at @off of @fd: 0, or -1 with errno (ENOEXEC
 * when the file ends first).
 */
int codectl__pread_all(int fd, void *dst, size_t len, uint64_t off);

/*
 * A line on stderr when CODECTL_DEBUG is set in the environment (read
 * once), else nothing: the audit and preload modules' diagnostics.
 */
void codectl__debug(const char *fmt, ...)
	__attribute__((format(printf, 1, 2)));

/* The executable segments of an object, to unregister them later. */
struct codectl__segs {
	unsigned int n;
	uint64_t start[];	/* n pairs: start, end */
};

/* @info's executable PT_LOAD ranges, malloc()ed (free()), or NULL. */
struct codectl__segs *codectl__segments(const struct dl_phdr_info *info);

/*
 * Unregister each of @segs (ENOENT counts as done: the kernel dropped it
 * at the unmap), saying which failed through codectl__debug(), prefixed
 * with @who.  errno is kept.
 */
void codectl__unregister_segments(const struct codectl__segs *segs,
				  const char *who);

/* Is the file open at @fd the object @info describes (same phdrs)? */
int codectl__file_is_object(int fd, const struct dl_phdr_info *info);

/* codectl_register_elf(@ei), again without SFrame if that is refused. */
int codectl__register_info(struct codectl_elf_info *ei);

/* Registration of every loaded object: what was done, the first error. */
struct codectl__reg_ctx {
	unsigned int flags;
	int count;
	int err;
};

/* Count a registration's result (EEXIST counts as registered). */
void codectl__reg_count(struct codectl__reg_ctx *ctx, int ret);

/*
 * Open the device, then run @fn on each object dl_iterate_phdr() reports
 * with @ctx.  Returns ctx->count, or -1 with the first error.
 */
int codectl__reg_each(int (*fn)(struct dl_phdr_info *, size_t, void *),
		      struct codectl__reg_ctx *ctx);


#endif /* LIBCODECTL_INTERNAL_H */
