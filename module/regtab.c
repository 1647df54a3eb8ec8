// SPDX-License-Identifier: GPL-2.0
/*
 * Module, register tables.  SFrame describes the CFA, the return address
 * and the frame pointer; a CFA based on another register is known in the
 * innermost frame alone.  glibc's lazy-binding trampoline
 * (_dl_runtime_resolve_xsavec) keeps its CFA in rbx while _dl_fixup runs,
 * which saves rbx: every sample under _dl_fixup would be cut there.  An
 * import may carry the object's register table (CODECTL_IOC_IMPORT VER2;
 * libcodectl: codectl_sframe_synth() with CODECTL_SYNTH_REGS): the same
 * SFrame rows with the frame-pointer column describing that register
 * (CODECTL_ARCH_DWARF_XREG), checked as sections are and kept as a flat
 * table, built once.  Each registration of the import's object takes a
 * reference and a header of its own at its text; the unwinder carries the
 * register from frame to frame with it (unwind.c).  No NMI or interrupt
 * context here; the last put may come from an RCU callback.
 */
#include <linux/refcount.h>
#include <linux/slab.h>
#include <linux/string.h>

#include "arch.h"
#include "internal.h"
#include "sframe.h"

/**
 * struct codectl_regtab - a register table's flat table
 * @ref:	the import's and each registration's
 * @flat:	the arrays, offsets from the link-time text start (its
 *		@base is not used)
 * @mem:	bytes the arrays hold
 */
struct codectl_regtab {
	refcount_t ref;
	struct sframe_flat flat;
	u64 mem;
};

/**
 * codectl_regtab_build() - check a register table and flatten it
 * @mem:	a kernel copy of the table (an SFrame section)
 * @addr:	the link-time address it was built for
 * @size:	its size
 * @text_start:	the object's link-time text, where its functions must lie
 * @text_end:	end of it
 * @out:	the table, one reference
 *
 * Return: 0, -ENOEXEC (refused, or no such register on this machine),
 * -EFBIG (no flat table: over the expansion bound or
 * CODECTL_FLAT_MAX_RULES), -ENOMEM.
 */
int codectl_regtab_build(const u8 *mem, u64 addr, u64 size, u64 text_start,
			 u64 text_end, struct codectl_regtab **out)
{
	struct codectl_regtab *t;
	int ret;

	if (CODECTL_ARCH_DWARF_XREG < 0)
		return -ENOEXEC;
	t = kzalloc(sizeof(*t), GFP_KERNEL_ACCOUNT);
	if (!t)
		return -ENOMEM;
	ret = codectl_flat_of_copy(mem, addr, size, text_start, text_end,
				   &t->flat, &t->mem);
	if (ret) {
		kfree(t);
		return ret == -E2BIG ? -EFBIG : ret;
	}
	refcount_set(&t->ref, 1);
	*out = t;
	return 0;
}

/**
 * codectl_regtab_bytes() - what a register table holds
 * @t:		the table
 *
 * Return: the bytes of its arrays.
 */
u64 codectl_regtab_bytes(const struct codectl_regtab *t)
{
	return t->mem;
}

/**
 * codectl_regtab_attach() - give a registration a register table
 * @reg:	a registration being built, with its text at its run-time
 *		addresses
 * @t:		the table imported with its section
 *
 * @reg gets a header of its own, its offsets from @reg's text start, and
 * a reference to @t; its charge counts @t's arrays (as a shared flat
 * table's count in every address space).
 *
 * Return: 0 or -ENOMEM.
 */
int codectl_regtab_attach(struct codectl_reg *reg, struct codectl_regtab *t)
{
	struct sframe_flat *h = kmemdup(&t->flat, sizeof(t->flat),
					GFP_KERNEL_ACCOUNT);

	if (!h)
		return -ENOMEM;
	h->base = reg->text_start;
	refcount_inc(&t->ref);
	reg->xreg_flat = h;
	reg->regtab = t;
	reg->sframe_mem += t->mem;
	return 0;
}

/**
 * codectl_regtab_put() - drop a reference to a register table
 * @t:		the table, or NULL
 */
void codectl_regtab_put(struct codectl_regtab *t)
{
	if (t && refcount_dec_and_test(&t->ref)) {
		codectl_flat_free_arrays(&t->flat);
		kfree(t);
	}
}
