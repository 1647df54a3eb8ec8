/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * libcodectl: register code and its unwind tables with the kernel.
 *
 * codectl() has the shape of the proposed codectl(2) system call and is
 * carried by the ioctls of /dev/codectl (see <linux/codectl.h>, the ABI).
 * The device is opened lazily, once per process, O_CLOEXEC; the descriptor
 * is inherited by fork() and stays valid in the child.
 *
 * Conventions, for every function here: 0 (or a count) on success, -1 with
 * errno set on failure.  errno is the kernel's for a failed call and is left
 * untouched on success.  Nothing prints.  Nothing allocates memory except
 * codectl_sframe_synth(), codectl_register_all() and
 * codectl_register_object_all() (SFrame synthesised from .eh_frame, with
 * libdw), and the JIT table builder (codectl_jit_*(): its tables).  All
 * functions are thread-safe except where said otherwise.
 */
#ifndef LIBCODECTL_CODECTL_H
#define LIBCODECTL_CODECTL_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>
#include <linux/codectl.h>

#ifdef __cplusplus
extern "C" {
#endif

struct dl_phdr_info;	/* <link.h> */

/*
 * codectl - the codectl(2) system call
 * @option:	a CODECTL_* option; options this library does not know are
 *		passed to the kernel too, so that newer kernels can be used
 * @info:	the option's struct (see <linux/codectl.h>)
 * @info_size:	its size, normally sizeof(*info)
 * @flags:	0
 *
 * Returns what the kernel returns (0 for every current option) or -1 with
 * errno.  Besides the kernel's errors (<linux/codectl.h>):
 *   ENODEV   /dev/codectl does not exist (the codectl module is not loaded);
 *            any other error opening the device is returned as is
 *   EINVAL   @option > 255, which cannot be encoded as an ioctl number
 *   ENOTTY   @option is unknown to the kernel (the system call would say
 *            EINVAL)
 */
int codectl(unsigned int option, void *info, size_t info_size,
	    unsigned int flags);

/*
 * codectl_set_fd - use an already open descriptor of the codectl device
 * @fd:	descriptor, e.g. received from a process that can open the device;
 *	the library owns it from now on (codectl_close() closes it)
 *
 * Returns 0, or -1 with EBADF (@fd is not an open descriptor) or EBUSY (the
 * library already has a descriptor; @fd is left alone).
 */
int codectl_set_fd(int fd);

/*
 * codectl_get_fd - the library's descriptor of the device, opened on first
 * use (O_RDWR | O_CLOEXEC)
 *
 * Returns it, or -1 with errno (ENODEV when there is no device node).
 */
int codectl_get_fd(void);

/*
 * codectl_close - close the library's descriptor of the device, if any
 *
 * The next call opens the device again.  Registrations are not affected
 * (they belong to the address space, not to the descriptor).  Must not
 * run concurrently with other codectl calls of the process.  errno is
 * preserved.
 */
void codectl_close(void);

/* One wrapper per option: info_size is the size of the struct known here. */
int codectl_register_elf(const struct codectl_elf_info *info);
int codectl_register_jit(const struct codectl_jit_info *info);
int codectl_unregister(uint64_t text_start, uint64_t text_end);
int codectl_query(struct codectl_query_info *info);

/*
 * codectl_query_pid - read one registration of process @pid
 * @pid:	0 for the caller, else a process id in the caller's pid
 *		namespace; stored in @info->pid
 * @info:	struct codectl_query_info, used in full (VER2: the SFrame
 *		version, FDE and FRE counts, coverage, table kind and
 *		charge are filled in too), with the cursor @info->addr and
 *		buffers as for codectl_query()
 *
 * Walk a process's registrations by starting @info->addr at 0 and
 * passing each answer's text_end, until ENOENT.  Another process needs
 * the permission reading its /proc/PID/maps needs: the library opens
 * /proc/PID/maps (the caller's /proc must be a procfs of its pid
 * namespace) and hands the fd to the module (@info->maps_fd, VER3), which
 * checks it is procfs's file of that pid and asks procfs again; @info
 * comes back with maps_fd -1.  Returns 0, or -1 with errno: ENOENT (no
 * more registrations), ESRCH (no such process, or it has no address
 * space: kernel thread, zombie), EACCES or EPERM (not allowed, or /proc
 * is not procfs's), EAGAIN (it exec'ed meanwhile), EBADF when @pid is
 * not 0 and the module is older than VER3, E2BIG when it is older than
 * VER2, ENODEV, and codectl_query()'s.
 */
int codectl_query_pid(pid_t pid, struct codectl_query_info *info);
int codectl_version(struct codectl_version *version);
int codectl_check_sframe(struct codectl_sframe_check *check);

/*
 * codectl_unwind_self - the caller's own user stack, unwound by the kernel
 * @args:	struct codectl_unwind_args (uapi/linux/codectl.h)
 *
 * Frame 0 is inside this function (libcodectl issues the system call
 * itself, so the unwind does not start in a C library without unwind
 * tables); frame 1 is its caller.  Returns 0 or -1 with errno.
 */
int codectl_unwind_self(struct codectl_unwind_args *args);

/*
 * codectl_unwind_request - deprecated: always -1 with errno ENOTTY
 * @cookie:	unused
 *
 * Deferred trace requests and their records were a test facility of the
 * module (ABI 1 and 2); since ABI 3 only the test module, which is never
 * installed, has them.  Kept for the library's ABI.
 */
int codectl_unwind_request(uint64_t *cookie);

/* codectl_unwind_stats - the module's unwinder counters. */
int codectl_unwind_stats(struct codectl_unwind_stats *stats);

/*
 * codectl_hook_stats - the counters of tracer hook @index (0, 1, ...):
 * the kernel function it attaches to, whether it is attached, calls
 * redirected to codectl's unwinder and left to the kernel, frames by
 * method, walks by stop reason.  Returns 0, or -1 with errno (ENOENT past
 * the last hook).
 */
int codectl_hook_stats(unsigned int index, struct codectl_hook_stats *stats);

/*
 * codectl_frame_name, codectl_stop_name - short names of CODECTL_FRAME_*
 * methods ("sframe", "fp", ...) and CODECTL_STOP_* reasons ("end",
 * "depth", ...), as debugfs codectl/unwind spells them; "unknown" for
 * other values.
 */
const char *codectl_frame_name(unsigned int method);
const char *codectl_stop_name(unsigned int stop);

/*
 * Storage for the strings a struct codectl_elf_info built by
 * codectl_elf_info_from_phdr() points to.  It must outlive the use of that
 * info (the kernel copies the strings at registration).
 */
struct codectl_elf_buf {
	char pathname[CODECTL_PATH_MAX];
	char debug_link[CODECTL_PATH_MAX];
};

/*
 * codectl_elf_info_from_phdr - describe a loaded ELF object for registration
 * @info:	the object, as dl_iterate_phdr() reports it
 * @out:	filled in (every field: unknown ones are 0)
 * @buf:	storage for strings, or NULL (then the main program gets no
 *		pathname and no object gets a debug link)
 *
 * From the program headers (no section is read from memory):
 *  - elf_start/elf_end: the page-aligned bounds of all PT_LOAD segments;
 *  - text_start/text_end: the first executable (PF_X) PT_LOAD segment that
 *    is not empty, [dlpi_addr + p_vaddr, + p_memsz).  Objects with several
 *    executable segments get only the first one registered;
 *  - sframe_start/sframe_end: the PT_GNU_SFRAME segment.  Its end is taken
 *    from the SFrame header (28 + auxhdr_len + fres_off + fre_len bytes)
 *    when the header has the SFrame magic and that size fits the segment,
 *    else it is the whole segment (p_memsz).  A PT_GNU_SFRAME segment that
 *    does not lie inside a readable PT_LOAD segment is ignored (0, 0):
 *    neither this function nor the kernel could read it;
 *  - build_id/build_id_len: the first NT_GNU_BUILD_ID note ("GNU") of the
 *    PT_NOTE segments lying inside readable PT_LOAD segments (4- and
 *    8-byte aligned notes); it points into the object's memory.  Left 0
 *    if absent, empty or longer than CODECTL_BUILD_ID_MAX;
 *  - pathname: dlpi_name, or for the main program (empty dlpi_name) the
 *    target of /proc/self/exe stored in @buf; 0 if unknown, or too long
 *    for the kernel;
 *  - debug_link_pathname/debug_link_crc: the .gnu_debuglink section, read
 *    from the object's file (the main program through /proc/self/exe,
 *    others only when dlpi_name is an absolute path), and only when that
 *    file's program headers are those of the loaded object; the name is
 *    stored in @buf.  0 when there is none or anything looks wrong.
 *
 * Returns 0, or -1 with errno EINVAL (@info, its program headers or @out
 * is NULL) or ENOENT (the object has no executable segment: nothing to
 * register).  errno is preserved on success.
 */
int codectl_elf_info_from_phdr(const struct dl_phdr_info *info,
			       struct codectl_elf_info *out,
			       struct codectl_elf_buf *buf);

/*
 * codectl_register_object - register one loaded ELF object
 *
 * codectl_elf_info_from_phdr() then codectl_register_elf().  If the kernel
 * rejects the object's SFrame header (ENOEXEC: e.g. a format version it
 * does not know), the object is registered again without SFrame, so that
 * it can be unwound with frame pointers; -1/ENOEXEC only if that fails too.
 * Returns 0 or -1 with errno (ENOENT: no executable segment; EEXIST: its
 * text is registered already).  Uses about 8 KiB of stack.
 */
int codectl_register_object(const struct dl_phdr_info *info);

/*
 * codectl_unregister_object - remove the registration of a loaded object
 *
 * Unregisters the text range codectl_register_object() registers.
 * Returns 0 or -1 with errno (ENOENT: no executable segment, or not
 * registered).
 */
int codectl_unregister_object(const struct dl_phdr_info *info);

/*
 * codectl_register_self - register every object loaded in the process
 *
 * Calls codectl_register_object() for each object dl_iterate_phdr()
 * reports: the main program, the vdso, the shared libraries.  Objects
 * without an executable segment are skipped; objects already registered
 * (EEXIST) count as registered.  An object that fails otherwise does not
 * stop the others.  Objects loaded later (dlopen) are not covered: use
 * codectl_register_object() for them.
 *
 * Returns the number of objects registered, or -1 with the errno of the
 * first failure (the objects that succeeded stay registered).  If the
 * device cannot be opened, nothing is tried: -1 with that errno (ENODEV
 * when the module is not loaded).
 */
int codectl_register_self(void);

/*
 * SFrame synthesised from an object's .eh_frame (DWARF CFI), for objects
 * built without .sframe (Debian's libc, libstdc++, ld.so...).
 *
 * Unlike the rest of the library, these functions allocate memory (the
 * section, and libdw's state while reading) and read the file.
 */

/* codectl_sframe_synth() flags */
#define CODECTL_SYNTH_AT_BUFFER	(1u << 0)	/* sec_addr: the buffer itself */
#define CODECTL_SYNTH_REGS	(1u << 1)	/* the register table (below) */

/*
 * What codectl_sframe_synth() found and wrote.  Bytes and rows count the
 * object's link-time code; "left out" rows are CFI rows SFrame cannot
 * express, whose pcs get no SFrame rule (unwinders fall back there).
 */
struct codectl_synth_stats {
	uint64_t text_bytes;	/* executable sections (SHF_EXECINSTR) */
	uint64_t cfi_bytes;	/* bytes the CFI's rows cover */
	uint64_t covered_bytes;	/* bytes with an SFrame rule */
	uint32_t cfi_fdes;	/* FDEs (.eh_frame_hdr entries) */
	uint32_t fdes_full;	/* FDEs with a rule at every pc */
	uint32_t fdes_partial;	/* FDEs with a rule at some pcs */
	uint32_t rows;		/* CFI rows walked */
	uint32_t rows_kept;	/* rows with an SFrame rule */
	uint32_t rows_cfa;	/* left out: CFA not reg + off or *(reg + off) */
	uint32_t rows_ra;	/* left out: return address rule */
	uint32_t rows_fp;	/* left out: rbp rule */
	uint32_t outermost_rows; /* kept, RA undefined: written as outermost */
	uint32_t sframe_fdes;	/* FDEs of the section written */
	uint32_t sframe_fres;	/* its FREs */
	uint32_t flex_fdes;	/* its FLEX FDEs */
};

/*
 * codectl_sframe_synth - build an SFrame v3 section from an object's CFI
 * @fd:		the object's file (x86-64 ELF, read from offset 0; the file
 *		position is not used)
 * @bias:	added to the object's link-time addresses: its load bias
 *		(dl_phdr_info.dlpi_addr) to register it in this process, 0
 *		for link-time addresses
 * @sec_addr:	the address the section will be decoded at (SFrame v3
 *		stores function starts relative to the section); ignored
 *		with CODECTL_SYNTH_AT_BUFFER, which uses the returned
 *		buffer's own address (for codectl_register_elf() with
 *		CODECTL_ELF_SFRAME_SYNTH: do not copy the buffer then)
 * @flags:	0, or CODECTL_SYNTH_AT_BUFFER and/or CODECTL_SYNTH_REGS
 * @sec:	out: the section, malloc()ed: free() it
 * @size:	out: its size in bytes
 * @stats:	out, may be NULL: coverage and counts
 *
 * The CFI is read with elfutils' libdw: FDEs from the .eh_frame_hdr
 * table (PT_GNU_EH_FRAME), each row with dwarf_cfi_addrframe().  A row
 * gets an SFrame rule when SFrame can express its CFA (rsp, rbp or
 * another register + offset, or the memory there), its return address
 * (at CFA + offset, in or at a register; undefined: an outermost frame)
 * and rbp (unchanged, or as the return address): rsp/rbp + offset with
 * RA at CFA - 8 and rbp unchanged or at a CFA offset are DEFAULT FDEs,
 * the rest FLEX FDEs.  Other rows (DWARF expressions such as the PLT's,
 * rules SFrame lacks) end the SFrame function, so their pcs have none.
 * The section is checked with the decoder's full validation
 * (sframe_validate()) before it is returned.  An object's own .sframe
 * is not looked at: the caller chooses.
 *
 * With CODECTL_SYNTH_REGS it returns the object's register table
 * instead: the same rows, each with its frame-pointer column describing
 * the register SFrame has no column for (x86-64: rbx), so that an
 * unwinder can carry that register from frame to frame where a CFA is
 * based on it (glibc's lazy-binding trampoline keeps its CFA in rbx while
 * it calls _dl_fixup, which saves rbx); a pc without a rule there has no
 * known rule for the register.  ENODATA when no CFA of the object is
 * based on that register (no table is needed), and on AArch64.
 *
 * Thread-safe (calls may run concurrently, on the same file too); never
 * prints.  Returns 0, or -1 with errno: EINVAL (bad argument), ENOEXEC
 * (not a 64-bit little-endian x86-64 ELF file), ENOENT (no
 * PT_GNU_EH_FRAME with a search table in ld's encoding, or no CFI),
 * ENODATA (no row SFrame can express), ENOMEM, EOVERFLOW (the section
 * would not fit the format), EPROTO (the section failed validation: a
 * bug of the library), ENOTSUP (libelf cannot be initialised).
 */
int codectl_sframe_synth(int fd, uint64_t bias, uint64_t sec_addr,
			 unsigned int flags, void **sec, size_t *size,
			 struct codectl_synth_stats *stats);

/* codectl_register_all() flags */
#define CODECTL_ALL_NO_SYNTH	(1u << 0)	/* never synthesise SFrame */

/*
 * codectl_register_all - register every loaded object, with unwind rules
 * @flags:	0 or CODECTL_ALL_NO_SYNTH
 *
 * For each object dl_iterate_phdr() reports, every executable PT_LOAD
 * segment is registered (codectl_elf_info_from_phdr()'s pathname, build
 * id and debug link; EEXIST counts as registered):
 *  - with the object's own SFrame (PT_GNU_SFRAME) for its first
 *    executable segment;
 *  - else, unless CODECTL_ALL_NO_SYNTH, with SFrame synthesised from its
 *    .eh_frame (codectl_sframe_synth(), the segment's functions only),
 *    read from the object's file (dlpi_name when absolute, the main
 *    program through /proc/self/exe) when that file's program headers
 *    are the loaded object's, or for the vdso (no file) from its image
 *    in memory.  It is registered with
 *    CODECTL_ELF_SFRAME_SYNTH (struct codectl_elf_info version 1): the
 *    kernel copies the section, which is freed when the call returns.
 *    A kernel without that ABI (E2BIG, EINVAL) or refusing the section
 *    (ENOEXEC) gets the segment without SFrame;
 *  - else without SFrame (frame pointers only): objects with no file
 *    or no .eh_frame_hdr.
 *
 * Synthesis reads each file and takes about 10-25 ms for a C library, with
 * the dynamic loader's lock held (dl_iterate_phdr()): dlopen() in other
 * threads waits.  Allocates memory; not async-signal-safe.  Objects
 * loaded later are not covered.
 *
 * Returns the number of segments registered, or -1 with the errno of the
 * first failure (the others stay registered): ENODEV without the module,
 * EINVAL for unknown @flags.
 */
int codectl_register_all(unsigned int flags);

/*
 * codectl_register_object_all - codectl_register_all() for one object
 * @info:	the object, as dl_iterate_phdr() reports it
 * @flags:	0 or CODECTL_ALL_NO_SYNTH
 *
 * For objects loaded after codectl_register_all() (dlopen).  Returns the
 * number of segments registered (0: no executable segment), or -1 with
 * the errno of the first failure (EINVAL: @info, its program headers or
 * @flags).
 */
int codectl_register_object_all(const struct dl_phdr_info *info,
				unsigned int flags);

/*
 * codectl_import_file - import an object's synthesised SFrame, system-wide
 * @fd:		the object file, opened for reading (the file position is
 *		not used)
 * @flags:	0
 * @stats:	out, may be NULL: what codectl_sframe_synth() found
 *
 * Synthesises an SFrame section from the object's .eh_frame for its
 * link-time addresses (its first executable segment's functions), built
 * for the page past its last PT_LOAD segment, and its register table
 * where it needs one (codectl_import_synth_regs(): ld.so), and hands
 * them to the module (CODECTL_IOC_IMPORT), which keeps them and uses it whenever discovery
 * meets this file (same device, inode, generation, size, mtime and
 * build id; where only the ctime moved, the module checks the content
 * again) in any process: the program needs neither libcodectl nor any change.
 * A second import of the file, or of another file at the same path,
 * replaces the first.  Needs CAP_SYS_ADMIN.
 *
 * Returns 0, or -1 with errno: EEXIST (the object has its own SFrame
 * section: nothing to import), ENOEXEC (not an x86-64 ELF object with
 * an executable segment), the errors of codectl_sframe_synth() (ENOENT:
 * no CFI) and those of CODECTL_IOC_IMPORT (EPERM, ETXTBSY, EFBIG,
 * ENOSPC, ...; ENOTTY from a module without imports; ENODEV without the
 * module).
 */
int codectl_import_file(int fd, unsigned int flags,
			struct codectl_synth_stats *stats);

/*
 * codectl_import_synth - what codectl_import_file() would import, kept
 * @fd:		the object's file
 * @sec:	out: the section (free() it)
 * @size:	out: its size
 * @vaddr:	out: the link-time address it is built for
 * @stats:	out, may be NULL: what synthesis covered
 *
 * codectl_import_file() in two steps, for a caller that keeps the
 * section (codectl daemon's cache): this synthesis, then
 * codectl_import_sframe().  Needs no module.  Returns 0, or -1 with the
 * errno codectl_import_file() would give before its ioctl.
 */
int codectl_import_synth(int fd, void **sec, size_t *size, uint64_t *vaddr,
			 struct codectl_synth_stats *stats);

/*
 * codectl_import_sframe - import a section for the file open at @fd
 * @fd:		the object's file
 * @sec:	the section codectl_import_synth() gave for that file
 * @size:	its size
 * @vaddr:	the address it was built for
 *
 * CODECTL_IOC_IMPORT.  The module checks the section against the file
 * as for codectl_import_file(), whose errors this returns (-1, errno).
 */
int codectl_import_sframe(int fd, const void *sec, size_t size,
			  uint64_t vaddr);

/*
 * codectl_import_synth_regs - codectl_import_synth() with the register
 *	table codectl_import_file() imports beside the section
 * @fd:		the object's file
 * @sec:	out: the section (free() it)
 * @size:	out: its size
 * @vaddr:	out: the link-time address both are built for
 * @regs:	out: the register table (free() it), or NULL when the
 *		object needs none (no CFA of its is based on that register:
 *		of Debian 12's objects only ld.so has one)
 * @regs_size:	out: its size, or 0
 * @stats:	out, may be NULL: what synthesis covered (the section's)
 *
 * One synthesis makes both (codectl_sframe_synth()'s section and its
 * CODECTL_SYNTH_REGS table).  Needs no module.  Returns 0, or -1 with
 * errno as codectl_import_synth().
 */
int codectl_import_synth_regs(int fd, void **sec, size_t *size,
			      uint64_t *vaddr, void **regs, size_t *regs_size,
			      struct codectl_synth_stats *stats);

/*
 * codectl_import_sframe_regs - codectl_import_sframe() with the register
 *	table
 * @fd:		the object's file
 * @sec:	the section codectl_import_synth() gave for that file
 * @size:	its size
 * @vaddr:	the address it was built for
 * @regs:	the table codectl_import_synth_regs() gave, or NULL
 * @regs_size:	its size, 0 with NULL
 *
 * As codectl_import_sframe(); the module checks the table as it checks
 * the section.  A module before ABI 6 has no register tables: the section
 * is imported alone.  Returns 0 or -1 with errno (EINVAL: only one of
 * @regs and @regs_size given).
 */
int codectl_import_sframe_regs(int fd, const void *sec, size_t size,
			       uint64_t vaddr, const void *regs,
			       size_t regs_size);

/*
 * codectl_import_remove - drop the import of the file open at @fd
 *
 * Returns 0, or -1 with errno (ENOENT: it has none; EPERM; EBADF).
 * Processes that registered the object with it keep their tables.
 */
int codectl_import_remove(int fd);

/* codectl_import_clear - drop every import (CAP_SYS_ADMIN): 0 or -1. */
int codectl_import_clear(void);

/*
 * JIT code: a table builder for CODECTL_REGISTER_JIT.
 *
 * A JIT describes each piece of code it emits with an unwind rule (where
 * the CFA, the return address and the caller's frame pointer are) and
 * appends the rules, in address order, to tables the kernel reads while
 * it unwinds, also from NMI without faulting (<linux/codectl.h>: struct
 * codectl_jit_unwind_table and struct codectl_jit_unwind_fre).  The
 * library keeps those tables in memory of their own, mapped with mmap(2)
 * (never in malloc()'s arenas, which could unmap them): each table holds
 * a fixed number of entries; a full one is continued by a new table,
 * filled first and then linked, so the kernel never sees a table that is
 * not complete.  Entries are published one by one with a store-release
 * of used_len.  Entries are written with the library's struct
 * codectl_jit_unwind_fre, fre_size CODECTL_JIT_FRE_SIZE_VER0 and
 * fre_stride its size rounded up to a multiple of 4.
 *
 * Thread safety: one writer per region.  codectl_jit_add() and
 * codectl_jit_destroy() of one struct codectl_jit must not run
 * concurrently with each other (serialise them, e.g. with the JIT's own
 * code-emission lock); different regions are independent, and the
 * kernel's concurrent reads need no locking.
 *
 * Async-signal safety: codectl_jit_add() never calls malloc() or takes a
 * lock; it calls mmap(2) (a system call) when a table is full.  It may be
 * called from a signal handler as long as the handler does not interrupt
 * another codectl_jit_add() or codectl_jit_destroy() of the same region.
 * codectl_jit_create() and codectl_jit_destroy() call malloc()/free()
 * and are not async-signal-safe.
 *
 * After fork() the child has its own copy of the tables (private
 * mappings) and of the registration; the handle is valid in both.
 */

/* struct codectl_jit: a JIT region and its chain of tables (opaque). */
struct codectl_jit;

/* codectl_jit_create() flags */
#define CODECTL_JIT_UNREGISTERED (1u << 0)	/* build tables, do not register */

/*
 * An unwind rule for a range of JIT code: how to find the caller at any pc
 * of it (x86-64: SP is rsp, FP is rbp).
 *   cfa_off:	CFA = SP + cfa_off, or FP + cfa_off with
 *		CODECTL_JIT_FRE_CFA_BASE_FP; at a function's entry after a
 *		call, CFA = SP + 8
 *   ra_off:	the return address is at CFA + ra_off (-8 on x86-64)
 *   fp_off:	with CODECTL_JIT_FRE_FP_SAVED, the caller's FP is at CFA +
 *		fp_off (-16 after push rbp); without it FP is unchanged
 *   flags:	CODECTL_JIT_FRE_CFA_BASE_FP, CODECTL_JIT_FRE_FP_SAVED,
 *		CODECTL_JIT_FRE_OUTERMOST (no caller: unwinding stops)
 */
struct codectl_jit_rule {
	int32_t cfa_off;
	int32_t ra_off;
	int32_t fp_off;
	uint32_t flags;
};

/*
 * codectl_jit_create - reserve tables for a JIT code region, register it
 * @text_start:	start of the region's code
 * @text_end:	its end; 0 < text_end - text_start <= UINT32_MAX (entry
 *		offsets are 32-bit)
 * @fres_per_table: entries in each table (1 .. 1 << 20), 0 for as many
 *		as fit in a page with the table's header
 * @flags:	0 or CODECTL_JIT_UNREGISTERED
 *
 * Maps the first table, empty, and registers the region with it
 * (CODECTL_REGISTER_JIT): the region must be mapped executable by then,
 * with no other registration overlapping it (the kernel checks).  A JIT
 * that keeps W^X maps its code writable, writes it, mprotect()s it to
 * PROT_READ | PROT_EXEC, then creates the region (or creates it over a
 * whole reserved executable area and adds code's rules as it emits it).
 * The registration is dropped by the kernel if the code is unmapped.
 *
 * Returns the handle, or NULL with errno: EINVAL (empty or too large
 * range, @fres_per_table or @flags out of range), ENOMEM, or
 * CODECTL_REGISTER_JIT's errors (ENODEV without the module, EFAULT when
 * the range is not mapped executable, EEXIST).  On failure nothing is
 * left mapped or registered.
 */
struct codectl_jit *codectl_jit_create(uint64_t text_start, uint64_t text_end,
				       unsigned int fres_per_table,
				       unsigned int flags);

/*
 * codectl_jit_add - append the unwind rule of a range of code
 * @jit:	the region
 * @start:	address of the range's first byte
 * @size:	its length in bytes (> 0)
 * @rule:	the rule at every pc of the range
 *
 * Ranges are added in increasing address order and do not overlap: @start
 * must be at or after the end of the previous range (gaps are allowed:
 * code there has no rule, and unwinders fall back to frame pointers).
 * The entry is visible to the kernel when this returns.  When the current
 * table is full a new one is mapped, gets the entry, and is then linked
 * to the chain (store-release of the old table's next).
 *
 * Returns 0, or -1 with errno: EINVAL (NULL argument, @size 0, the range
 * not inside the region, before or overlapping the previous one, @rule's
 * flags unknown), ENOMEM (no memory for a new table; the tables so far
 * are unchanged).
 */
int codectl_jit_add(struct codectl_jit *jit, uint64_t start, uint64_t size,
		    const struct codectl_jit_rule *rule);

/*
 * codectl_jit_destroy - unregister a JIT region and free its tables
 * @jit:	the region, or NULL (nothing is done)
 *
 * Unregisters the region (CODECTL_UNREGISTER), then unmaps its tables:
 * only once the kernel has let go of the registration, since it reads
 * them until then (a walk already under way on another CPU reads user
 * memory as such: an unmapped table ends it, like any bad stack).  Call it before the code is reused for something else,
 * or after the code was unmapped (the kernel dropped the registration
 * then: ENOENT from the unregistration counts as done).
 *
 * Returns 0 (the handle is freed), or -1 with errno of the unregistration
 * (other than ENOENT): then nothing is freed, the region stays registered
 * and the handle valid, so the call can be repeated.  errno is preserved
 * on success.
 */
int codectl_jit_destroy(struct codectl_jit *jit);

/*
 * codectl_jit_head - the first table of a region, as registered
 *
 * For inspection (tests, debuggers) and for registering the tables of a
 * CODECTL_JIT_UNREGISTERED region elsewhere: its chain is read-only to
 * the caller.
 */
const struct codectl_jit_unwind_table *
codectl_jit_head(const struct codectl_jit *jit);

#ifdef __cplusplus
}
#endif

#endif /* LIBCODECTL_CODECTL_H */
