// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * libcodectl-audit.so: an rtld audit module (LD_AUDIT, see rtld-audit(7))
 * that registers every object the dynamic loader opens, with its own or a
 * synthesised SFrame section (codectl_register_object_all()), and
 * unregisters it when the loader closes it: the program, its libraries,
 * and whatever it dlopen()s and dlclose()s, with no change to the program.
 *
 *   LD_AUDIT=/usr/local/lib/codectl/libcodectl-audit.so program
 *
 * Without /dev/codectl (module not loaded) nothing is registered and the
 * program runs unchanged.  Nothing is printed unless CODECTL_DEBUG is set
 * in the environment (to anything): then one line per object on stderr.
 * It carries its own copy of libcodectl (linked statically; its symbols
 * are not exported), in the audit namespace the loader gives it.
 */
#include <elf.h>
#include <errno.h>
#include <link.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/auxv.h>
#include <sys/uio.h>
#include <unistd.h>

#include "internal.h"

static int no_device;

CODECTL_EXPORT unsigned int la_version(unsigned int version)
{
	/* Only la_objopen and la_objclose: the same in every version. */
	return version < LAV_CURRENT ? version : LAV_CURRENT;
}

static const char *name_of(const char *name)
{
	return name && name[0] ? name : "(main program)";
}

/* Copy @len bytes at @addr, or fail (EFAULT) if they are not mapped. */
static int copy_in(void *dst, uint64_t addr, size_t len)
{
	struct iovec local = { dst, len };
	struct iovec remote = { (void *)(uintptr_t)addr, len };

	return process_vm_readv(getpid(), &local, 1, &remote, 1, 0) ==
	       (ssize_t)len ? 0 : -1;
}

#define MAX_PHDRS	64

/*
 * The dl_phdr_info of @map.  dl_iterate_phdr() cannot give it: called
 * from here it walks the audit namespace only.  The program headers are
 * found through the auxiliary vector (the main program) or the ELF
 * header at the load bias (every other object maps it at its first
 * PT_LOAD, p_vaddr 0), read with process_vm_readv() so that nothing can
 * fault, and must name @map's dynamic section.
 */
static int phdr_info(const struct link_map *map, struct dl_phdr_info *info,
		     ElfW(Phdr) *ph)
{
	uint64_t at;
	unsigned int i, n;
	int dyn = 0;

	if (!map->l_name || !map->l_name[0]) {
		at = getauxval(AT_PHDR);
		n = (unsigned int)getauxval(AT_PHNUM);
	} else {
		ElfW(Ehdr) eh;

		if (copy_in(&eh, map->l_addr, sizeof(eh)) ||
		    memcmp(eh.e_ident, ELFMAG, SELFMAG) ||
		    eh.e_phentsize != sizeof(*ph))
			return -1;
		at = map->l_addr + eh.e_phoff;
		n = eh.e_phnum;
	}
	if (!at || !n || n > MAX_PHDRS || copy_in(ph, at, n * sizeof(*ph)))
		return -1;
	for (i = 0; i < n; i++)
		if (ph[i].p_type == PT_DYNAMIC)
			dyn = map->l_addr + ph[i].p_vaddr ==
			      (uintptr_t)map->l_ld;
	if (!dyn)
		return -1;	/* not @map's program headers */
	memset(info, 0, sizeof(*info));
	info->dlpi_addr = map->l_addr;
	info->dlpi_name = map->l_name;
	info->dlpi_phdr = ph;
	info->dlpi_phnum = (ElfW(Half))n;
	return 0;
}

CODECTL_EXPORT unsigned int la_objopen(struct link_map *map, Lmid_t lmid,
				       uintptr_t *cookie)
{
	ElfW(Phdr) ph[MAX_PHDRS];
	struct dl_phdr_info info;
	struct codectl__segs *obj;
	int saved = errno, ret;

	(void)lmid;
	*cookie = 0;
	if (no_device)
		return 0;
	if (phdr_info(map, &info, ph)) {
		codectl__debug("codectl-audit: %s: program headers not found\n",
			       name_of(map->l_name));
		errno = saved;
		return 0;
	}
	obj = codectl__segments(&info);
	ret = codectl_register_object_all(&info, 0);
	if (ret < 0) {
		if (errno == ENODEV)
			no_device = 1;	/* no module: stop trying */
		codectl__debug("codectl-audit: %s: not registered: %s\n",
			       name_of(map->l_name), strerror(errno));
	} else {
		codectl__debug("codectl-audit: %s: %d segment%s registered\n",
			       name_of(map->l_name), ret, ret == 1 ? "" : "s");
	}
	/* Unregistered at la_objclose() (a failed segment: ENOENT there). */
	if (no_device)
		free(obj);
	else
		*cookie = (uintptr_t)obj;
	errno = saved;
	return 0;	/* no symbol binding audit */
}

CODECTL_EXPORT unsigned int la_objclose(uintptr_t *cookie)
{
	struct codectl__segs *obj = (struct codectl__segs *)*cookie;
	if (!obj)
		return 0;
	codectl__unregister_segments(obj, "codectl-audit");
	free(obj);
	*cookie = 0;
	return 0;
}
