// SPDX-License-Identifier: GPL-2.0
/*
 * Reading an ELF object file: its header, program headers, PT_GNU_SFRAME
 * section, build id note, .gnu_debuglink section and identity, from the
 * file with kernel_read() (not from a task's memory).  Discovery reads the
 * objects it examines this way, imports the files they are given.
 */
#include <linux/elf.h>
#include <linux/fs.h>
#include <linux/minmax.h>
#include <linux/mm.h>
#include <linux/overflow.h>
#include <linux/sched.h>
#include <linux/sched/signal.h>
#include <linux/siphash.h>
#include <linux/slab.h>
#include <linux/string.h>

#include "arch.h"
#include "internal.h"
#include "compat.h"

#ifndef NT_GNU_BUILD_ID
#define NT_GNU_BUILD_ID		3
#endif
#ifndef PT_GNU_SFRAME
#define PT_GNU_SFRAME		0x6474e554
#endif

/* Bounds on what is read from a file. */
#define CODECTL_OBJ_MAX_PHDRS	128
#define CODECTL_OBJ_MAX_SHDRS	1024
#define CODECTL_OBJ_MAX_NOTE	4096
#define CODECTL_OBJ_MAX_STRTAB	(64U << 10)

/* Read exactly @len bytes at @pos of the file: 0 or a reason. */
static int codectl_objfile_read(struct codectl_objfile *o, void *buf,
				size_t len, u64 pos)
{
	loff_t p = pos;
	ssize_t n;

	if (pos > o->size || len > o->size - pos)
		return REFUSED_READ;
	n = kernel_read(o->file, buf, len, &p);
	return n == len ? 0 : REFUSED_READ;
}

static int codectl_objfile_ehdr(struct codectl_objfile *o)
{
	const struct elf64_hdr *eh = &o->eh;
	int r;

	r = codectl_objfile_read(o, &o->eh, sizeof(o->eh), 0);
	if (r)
		return r == REFUSED_READ && o->size < sizeof(o->eh) ?
		       REFUSED_EHDR : r;
	if (memcmp(eh->e_ident, ELFMAG, SELFMAG) ||
	    eh->e_ident[EI_CLASS] != ELFCLASS64 ||
	    eh->e_ident[EI_DATA] != ELFDATA2LSB ||
	    eh->e_ident[EI_VERSION] != EV_CURRENT ||
	    (eh->e_type != ET_DYN && eh->e_type != ET_EXEC) ||
	    eh->e_machine != CODECTL_ARCH_ELF_MACHINE || eh->e_version != EV_CURRENT)
		return REFUSED_EHDR;
	if (eh->e_phentsize != sizeof(struct elf64_phdr) || !eh->e_phnum ||
	    eh->e_phnum > CODECTL_OBJ_MAX_PHDRS)
		return REFUSED_PHDRS;
	o->ph = kmalloc_array(eh->e_phnum, sizeof(*o->ph), GFP_KERNEL_ACCOUNT);
	if (!o->ph)
		return REFUSED_NOMEM;
	r = codectl_objfile_read(o, o->ph, eh->e_phnum * sizeof(*o->ph),
				 eh->e_phoff);
	return r == REFUSED_READ ? REFUSED_PHDRS : r;
}

/* Is the file part of segment @p sane: inside the file, no wrap? */
static bool codectl_objfile_seg_ok(const struct codectl_objfile *o,
				   const struct elf64_phdr *p)
{
	u64 end;

	return p->p_filesz <= p->p_memsz &&
	       !check_add_overflow(p->p_offset, p->p_filesz, &end) &&
	       end <= o->size &&
	       !check_add_overflow(p->p_vaddr, p->p_memsz, &end) &&
	       end < TASK_SIZE_MAX;
}

/*
 * The load bias, text and ELF span from the executable PT_LOAD holding
 * the mapping's file offset.
 */
static int codectl_objfile_layout(struct codectl_objfile *o)
{
	const struct elf64_phdr *x = NULL;
	u64 lo = U64_MAX, hi = 0, off, a, b;
	unsigned int i;

	for (i = 0; i < o->eh.e_phnum; i++) {
		const struct elf64_phdr *p = &o->ph[i];

		if (p->p_type != PT_LOAD)
			continue;
		if (!codectl_objfile_seg_ok(o, p))
			return REFUSED_PHDRS;
		lo = min(lo, p->p_vaddr);
		hi = max(hi, p->p_vaddr + p->p_memsz);
		if (!(p->p_flags & PF_X) || x)
			continue;
		off = p->p_offset & PAGE_MASK;
		if (o->vm_off >= off && o->vm_off < p->p_offset + p->p_filesz)
			x = p;
	}
	if (!x)
		return REFUSED_NO_LOAD;
	/* vm_start holds file offset vm_off, which is x's p_vaddr + delta. */
	if (check_sub_overflow(o->vm_start + x->p_offset, o->vm_off, &a) ||
	    check_sub_overflow(a, x->p_vaddr, &o->bias) ||
	    (o->bias & ~PAGE_MASK))
		return REFUSED_LAYOUT;
	if (check_add_overflow(o->bias, x->p_vaddr, &a) ||
	    check_add_overflow(a, x->p_memsz, &b) || a >= b ||
	    b > TASK_SIZE_MAX ||
	    check_add_overflow(o->bias, lo, &lo) ||
	    check_add_overflow(o->bias, hi, &hi) || hi > TASK_SIZE_MAX)
		return REFUSED_LAYOUT;
	o->src.text_start = a;
	o->src.text_end = b;
	o->src.elf_start = lo;
	o->src.elf_end = hi;
	return 0;
}

/* PT_GNU_SFRAME: in the file part of a PT_LOAD, its bytes from the file. */
static int codectl_objfile_sframe(struct codectl_objfile *o)
{
	const struct elf64_phdr *sf = NULL;
	unsigned int i;
	int r;

	for (i = 0; i < o->eh.e_phnum; i++)
		if (o->ph[i].p_type == PT_GNU_SFRAME)
			sf = &o->ph[i];
	if (!sf)
		return 0;
	if (!sf->p_filesz || sf->p_filesz != sf->p_memsz ||
	    !codectl_objfile_seg_ok(o, sf))
		return REFUSED_SFRAME_OUTSIDE;
	for (i = 0; i < o->eh.e_phnum; i++) {
		const struct elf64_phdr *p = &o->ph[i];

		if (p->p_type == PT_LOAD && (p->p_flags & PF_R) &&
		    sf->p_offset >= p->p_offset &&
		    sf->p_offset + sf->p_filesz <= p->p_offset + p->p_filesz &&
		    sf->p_vaddr - p->p_vaddr == sf->p_offset - p->p_offset)
			break;
	}
	if (i == o->eh.e_phnum)
		return REFUSED_SFRAME_OUTSIDE;
	o->src.sframe_start = o->bias + sf->p_vaddr;
	o->src.sframe_end = o->src.sframe_start + sf->p_filesz;
	if (sf->p_filesz > READ_ONCE(codectl_sframe_flat_max))
		return 0;	/* checked and decoded in memory */
	o->sframe = kvmalloc(sf->p_filesz, GFP_KERNEL_ACCOUNT);
	if (!o->sframe)
		return REFUSED_NOMEM;
	r = codectl_objfile_read(o, o->sframe, sf->p_filesz, sf->p_offset);
	if (r)
		return r;
	o->src.ksframe = o->sframe;
	o->key.sframe_off = sf->p_offset;
	return 0;
}

/**
 * codectl_file_inode() - the inode that keys @file's discovery and imports
 * @file:	an open file
 *
 * A mapping of a file of overlayfs (a container's image) maps the file
 * underneath: its vm_file is that one, which the walk and discovery key
 * by.  The same file opened by path or through /proc/PID/map_files (the
 * daemon's import, a registration's file descriptor) is overlayfs' own,
 * with another device and inode; this gives the one underneath for it
 * too, and a file's own inode for any other.
 *
 * Context: task context (overlayfs may look up the file underneath).
 */
struct inode *codectl_file_inode(const struct file *file)
{
	return d_real_inode(file->f_path.dentry);
}

/**
 * codectl_file_id() - a file's identity, as discovery and imports key it
 * @inode:	the file's inode
 * @id:		out: device, inode number and generation, size, mtime
 *
 * Not the ctime, which a hard link, chmod, chown or touch -a moves
 * without changing a byte (see struct codectl_file_id).
 */
void codectl_file_id(const struct inode *inode, struct codectl_file_id *id)
{
	struct timespec64 mt = codectl_inode_mtime(inode);

	memset(id, 0, sizeof(*id));
	id->dev = inode->i_sb->s_dev;
	id->ino = inode->i_ino;
	id->gen = inode->i_generation;
	id->size = i_size_read(inode);
	id->mtime_sec = mt.tv_sec;
	id->mtime_nsec = mt.tv_nsec;
}

#define CODECTL_HASH_CHUNK	(32 * 1024)

/**
 * codectl_file_hash() - a hash of a file's whole content
 * @file:	the file, open for reading
 * @hash:	out: SipHash of its bytes, chunk by chunk, and its size
 *
 * Each 32 KiB chunk is hashed with the previous chunk's hash and its
 * offset as the key, so every byte and its place count.
 *
 * Context: task context; reads the whole file, with a scheduling point
 * per chunk, and gives up on a fatal signal.
 * Return: 0, -EINTR (fatal signal), -EIO (a short read), -ENOMEM.
 */
int codectl_file_hash(struct file *file, u64 *hash)
{
	siphash_key_t key = { { 0x636f6465636c74ULL, 0 } };
	loff_t size = i_size_read(file_inode(file)), pos = 0;
	int ret = 0;
	u8 *buf;

	buf = kvmalloc(CODECTL_HASH_CHUNK, GFP_KERNEL_ACCOUNT);
	if (!buf)
		return -ENOMEM;
	while (pos < size) {
		size_t len = min_t(loff_t, size - pos, CODECTL_HASH_CHUNK);
		loff_t p = pos;

		if (fatal_signal_pending(current)) {
			ret = -EINTR;
			break;
		}
		if (kernel_read(file, buf, len, &p) != len) {
			ret = -EIO;
			break;
		}
		key.key[1] = pos;
		key.key[0] = siphash(buf, len, &key);
		pos += len;
		cond_resched();
	}
	kvfree(buf);
	*hash = siphash_1u64(size, &key);
	return ret;
}

/**
 * codectl_objfile_share_key() - the sharing key's file part (share.c)
 * @o:		an object read by codectl_objfile_read_mapped()
 *
 * Only with a section read from the file: then @o->src.share points at
 * the key.
 */
void codectl_objfile_share_key(struct codectl_objfile *o)
{
	struct codectl_share_key *k = &o->key;

	if (!o->src.ksframe)
		return;
	codectl_file_id(codectl_file_inode(o->file), &k->id);
	k->text_off = o->src.text_start - o->src.sframe_start;
	k->text_len = o->src.text_end - o->src.text_start;
	k->build_id_len = o->src.build_id_len;
	memcpy(k->build_id, o->build_id, o->src.build_id_len);
	o->src.share = k;
}

/* The GNU build id from the PT_NOTE segments, if any (best effort). */
static void codectl_objfile_build_id(struct codectl_objfile *o)
{
	unsigned int i;
	u8 *buf;

	buf = kmalloc(CODECTL_OBJ_MAX_NOTE, GFP_KERNEL_ACCOUNT);
	if (!buf)
		return;
	for (i = 0; i < o->eh.e_phnum && !o->src.build_id_len; i++) {
		const struct elf64_phdr *p = &o->ph[i];
		size_t len = min_t(u64, p->p_filesz, CODECTL_OBJ_MAX_NOTE);
		size_t at = 0;

		if (p->p_type != PT_NOTE ||
		    codectl_objfile_read(o, buf, len, p->p_offset))
			continue;
		while (at + sizeof(struct elf64_note) <= len) {
			struct elf64_note nh;
			size_t name, desc;

			memcpy(&nh, buf + at, sizeof(nh));
			name = at + sizeof(nh);
			desc = name + ALIGN((size_t)nh.n_namesz, 4);
			if (nh.n_namesz > len || nh.n_descsz > len ||
			    desc > len || desc + nh.n_descsz > len)
				break;
			if (nh.n_type == NT_GNU_BUILD_ID && nh.n_namesz == 4 &&
			    !memcmp(buf + name, "GNU", 4) && nh.n_descsz &&
			    nh.n_descsz <= CODECTL_BUILD_ID_MAX) {
				memcpy(o->build_id, buf + desc, nh.n_descsz);
				o->src.build_id_len = nh.n_descsz;
				o->src.kbuild_id = o->build_id;
				break;
			}
			at = desc + ALIGN((size_t)nh.n_descsz, 4);
		}
	}
	kfree(buf);
}

/* The .gnu_debuglink section through the section headers (best effort). */
static void codectl_objfile_debug_link(struct codectl_objfile *o)
{
	const struct elf64_hdr *eh = &o->eh;
	struct elf64_shdr *sh = NULL, str;
	char *names = NULL, *dl = NULL;
	unsigned int i;
	size_t len;
	u32 crc;

	if (!eh->e_shoff || eh->e_shentsize != sizeof(struct elf64_shdr) ||
	    !eh->e_shnum || eh->e_shnum > CODECTL_OBJ_MAX_SHDRS ||
	    eh->e_shstrndx >= eh->e_shnum)
		return;
	sh = kmalloc_array(eh->e_shnum, sizeof(*sh), GFP_KERNEL_ACCOUNT);
	if (!sh || codectl_objfile_read(o, sh, eh->e_shnum * sizeof(*sh),
					eh->e_shoff))
		goto out;
	str = sh[eh->e_shstrndx];
	if (!str.sh_size || str.sh_size > CODECTL_OBJ_MAX_STRTAB)
		goto out;
	names = kmalloc(str.sh_size + 1, GFP_KERNEL_ACCOUNT);
	if (!names ||
	    codectl_objfile_read(o, names, str.sh_size, str.sh_offset))
		goto out;
	names[str.sh_size] = '\0';
	for (i = 0; i < eh->e_shnum; i++) {
		if (sh[i].sh_name >= str.sh_size ||
		    strcmp(names + sh[i].sh_name, ".gnu_debuglink"))
			continue;
		/* A NUL-terminated name, padding to 4, then the CRC. */
		len = sh[i].sh_size;
		if (len < 8 || len > CODECTL_PATH_MAX + 8)
			break;
		dl = kmalloc(len, GFP_KERNEL_ACCOUNT);
		if (!dl || codectl_objfile_read(o, dl, len, sh[i].sh_offset))
			break;
		if (!dl[0] || strnlen(dl, len - 4) > len - 5)
			break;
		memcpy(&crc, dl + len - 4, sizeof(crc));
		if (strlen(dl) + 1 > CODECTL_PATH_MAX)
			break;
		o->debug_link = dl;
		o->src.kdebug_link = dl;
		o->src.debug_link_crc = crc;
		dl = NULL;
		break;
	}
out:
	kfree(dl);
	kfree(names);
	kfree(sh);
}

/**
 * codectl_objfile_read_mapped() - read the object of a mapping
 * @o:		@file, @vm_start and @vm_off set, the rest zeroed
 *
 * Reads the ELF header, program headers and layout, the PT_GNU_SFRAME
 * section (from the file when it gets a flat table), the build id and
 * the debug link.  The file must not be open for writing, and its size
 * must not change meanwhile.
 *
 * Context: task context (reads the file).
 * Return: 0 or an enum codectl_discovery_refusal; release @o in any case.
 */
int codectl_objfile_read_mapped(struct codectl_objfile *o)
{
	struct inode *inode = codectl_file_inode(o->file);
	int r;

	if (inode_is_open_for_write(inode))
		return REFUSED_WRITABLE;
	o->size = i_size_read(inode);
	r = codectl_objfile_ehdr(o);
	if (!r)
		r = codectl_objfile_layout(o);
	if (!r)
		r = codectl_objfile_sframe(o);
	if (r)
		return r;
	codectl_objfile_build_id(o);
	codectl_objfile_debug_link(o);
	if (i_size_read(inode) != o->size || inode_is_open_for_write(inode))
		return REFUSED_CHANGED;
	return 0;
}

/**
 * codectl_objfile_release() - free what reading an object allocated
 * @o:		the object; its file reference stays the caller's
 */
void codectl_objfile_release(struct codectl_objfile *o)
{
	kfree(o->ph);
	kfree(o->debug_link);
	kvfree(o->sframe);
}

/**
 * codectl_objfile_describe() - read what an import needs of an object file
 * @file:	the file, opened by the importer
 * @elf:	out: its first executable segment (link-time addresses),
 *		identity, build id, highest PT_LOAD end, and whether it has
 *		a PT_GNU_SFRAME segment
 *
 * The file is read as discovery reads the objects it examines, with the
 * same checks, for a load at its link-time addresses.
 *
 * Context: task context (reads the file).
 * Return: 0, -ENOEXEC (not a regular file, not a 64-bit x86-64 ELF
 * object with an executable PT_LOAD, malformed, or a read failed),
 * -ETXTBSY (open for writing, or changed while read), -ENOMEM.
 */
int codectl_objfile_describe(struct file *file, struct codectl_file_elf *elf)
{
	struct inode *inode = codectl_file_inode(file);
	struct codectl_objfile *o;
	bool exec = false;
	unsigned int i;
	int r;

	memset(elf, 0, sizeof(*elf));
	if (!S_ISREG(inode->i_mode))
		return -ENOEXEC;
	if (inode_is_open_for_write(inode))
		return -ETXTBSY;
	o = kzalloc(sizeof(*o), GFP_KERNEL_ACCOUNT);
	if (!o)
		return -ENOMEM;
	o->file = file;
	o->size = i_size_read(inode);
	r = codectl_objfile_ehdr(o);
	/*
	 * Where the first executable segment would be mapped, unbiased;
	 * codectl_objfile_layout() checks the segments and gives the span.
	 */
	for (i = 0; !r && i < o->eh.e_phnum; i++) {
		const struct elf64_phdr *p = &o->ph[i];

		if (p->p_type == PT_GNU_SFRAME)
			elf->has_sframe = true;
		if (p->p_type == PT_LOAD && (p->p_flags & PF_X) && !exec) {
			o->vm_off = p->p_offset & PAGE_MASK;
			o->vm_start = p->p_vaddr & PAGE_MASK;
			exec = true;
		}
	}
	if (!r && !exec)
		r = REFUSED_NO_LOAD;
	if (!r)
		r = codectl_objfile_layout(o);
	if (!r && o->bias)
		r = REFUSED_LAYOUT;
	if (!r) {
		codectl_objfile_build_id(o);
		if (i_size_read(inode) != o->size ||
		    inode_is_open_for_write(inode))
			r = REFUSED_CHANGED;
	}
	if (!r) {
		codectl_file_id(inode, &elf->obj.id);
		elf->load_end = o->src.elf_end;
		elf->obj.text_vaddr = o->src.text_start;
		elf->obj.text_end = o->src.text_end;
		elf->obj.build_id_len = o->src.build_id_len;
		memcpy(elf->obj.build_id, o->build_id, o->src.build_id_len);
	}
	kfree(o->ph);
	kfree(o);
	switch (r) {
	case 0:
		return 0;
	case REFUSED_NOMEM:
		return -ENOMEM;
	case REFUSED_CHANGED:
		return -ETXTBSY;
	default:
		return -ENOEXEC;
	}
}

