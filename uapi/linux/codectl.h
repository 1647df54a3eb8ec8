/* SPDX-License-Identifier: GPL-2.0 WITH Linux-syscall-note */
/*
 * codectl: register code and its unwind tables with the kernel.
 *
 * This is the ABI of /dev/codectl, provided by the codectl module.  It
 * mirrors the proposed codectl(2) system call (Mathieu Desnoyers' RFC,
 * July 2025): one ioctl per codectl option, each taking a struct
 * codectl_args that carries the option's @info pointer, its @info_size
 * and @flags, exactly the arguments of
 *
 *	int codectl(unsigned int option, void *info, size_t info_size,
 *		    unsigned int flags);
 *
 * Registrations belong to the caller's address space (mm), not to the
 * file descriptor: closing the fd keeps them, and they go away with the
 * address space (exit, exec) or by CODECTL_UNREGISTER.  A process can only
 * change its own registrations, and see another process's only when it
 * could read that process's /proc/PID/maps (CODECTL_QUERY's @pid), so the
 * device is mode 0666.
 *
 * Extensibility, for every option's @info: the kernel accepts any
 * @info_size from the option's *_SIZE_VER0 up to 4096 bytes.  A shorter
 * struct than the kernel's is zero-extended; a longer one is accepted only
 * if the bytes the kernel does not know are all zero (else -E2BIG), as with
 * copy_struct_from_user().  Options that return data (QUERY, VERSION)
 * write min(@info_size, kernel size) bytes and zero the rest of @info.
 *
 * Errors common to every option (returned as -1 with errno set):
 *   EFAULT   @info (or a pointer inside it) cannot be read or written.
 *   EINVAL   @flags is not 0, codectl_args.__reserved is not 0, or
 *            @info_size is smaller than the option's *_SIZE_VER0.
 *   E2BIG    @info_size > 4096, or the part of @info beyond what this
 *            kernel knows is not zero.
 *   ENOTTY   unknown ioctl (an option this module does not have).
 *   EINTR    a fatal signal arrived while waiting for the address space,
 *            or a signal was pending while a first registration set up the
 *            address space's registry: retry.
 * Per-option errors are listed with each struct below.
 *
 * All addresses are user virtual addresses of the caller; ranges are
 * half-open, [start, end).  Structs have the same layout for 32-bit and
 * 64-bit callers: pointers are carried in __u64.
 */
#ifndef _UAPI_LINUX_CODECTL_H
#define _UAPI_LINUX_CODECTL_H

#include <linux/types.h>
#include <linux/ioctl.h>

/*
 * ABI version reported by CODECTL_VERSION; bumped on additions.
 *   1  the first
 *   2  codectl_version VER1 (options_map), codectl_import_info VER1
 *      (__reserved), every ioctl outside the option space
 *      size-extensible (below)
 *   3  the test facilities left the product for the test module
 *      (tests/vm/testmod, never installed): CODECTL_IOC_UNWIND_REQUEST
 *      and read()/poll() of trace records, CODECTL_IOC_SELFTEST_START and
 *      _STOP, CODECTL_UNWIND_NOFAULT (now EINVAL)
 *   4  the demand queue: CODECTL_IOC_DEMAND, read()/poll() of struct
 *      codectl_demand records
 *   5  synthesised sections and imports of any size: without a flat
 *      table they are decoded in a kernel copy (CODECTL_TABLE_KERNEL);
 *      EFBIG only past max_bytes or import_max_bytes
 *   6  codectl_import_info VER2: an import's register table (@regs,
 *      @regs_size)
 */
#define CODECTL_ABI_VERSION		6

/* Path of the device node. */
#define CODECTL_DEVICE			"/dev/codectl"

/*
 * Options (the codectl(2) @option argument).  UNREGISTER is 0, as asked in
 * review of the RFC; QUERY and VERSION are additions of this module.
 */
enum codectl_option {
	CODECTL_UNREGISTER	= 0,
	CODECTL_REGISTER_ELF	= 1,
	CODECTL_REGISTER_JIT	= 2,
	CODECTL_QUERY		= 3,
	CODECTL_VERSION		= 4,
	CODECTL_CHECK_SFRAME	= 5,
	CODECTL_NR_OPTIONS		/* not an option */
};

/**
 * struct codectl_args - argument of every codectl ioctl
 * @info:	pointer to the option's info struct
 * @info_size:	size of that struct as the caller knows it
 * @flags:	must be 0
 * @__reserved:	must be 0
 */
struct codectl_args {
	__u64 info;
	__u64 info_size;
	__u32 flags;
	__u32 __reserved;
};

#define CODECTL_IOC_MAGIC		0xCD
/*
 * The ioctl number of an option: its _IOC_NR is the option, so options
 * are 0..255 here (libcodectl's codectl() refuses larger ones with EINVAL).
 * An option the module does not have fails with ENOTTY, where the system
 * call would say EINVAL.
 */
#define CODECTL_IOC(option)		_IOW(CODECTL_IOC_MAGIC, (option), \
					     struct codectl_args)
#define CODECTL_IOC_UNREGISTER		CODECTL_IOC(CODECTL_UNREGISTER)
#define CODECTL_IOC_REGISTER_ELF	CODECTL_IOC(CODECTL_REGISTER_ELF)
#define CODECTL_IOC_REGISTER_JIT	CODECTL_IOC(CODECTL_REGISTER_JIT)
#define CODECTL_IOC_QUERY		CODECTL_IOC(CODECTL_QUERY)
#define CODECTL_IOC_VERSION		CODECTL_IOC(CODECTL_VERSION)
#define CODECTL_IOC_CHECK_SFRAME	CODECTL_IOC(CODECTL_CHECK_SFRAME)

/* Bounds on variable-size metadata. */
#define CODECTL_PATH_MAX		4096	/* bytes, with the NUL */
#define CODECTL_BUILD_ID_MAX		64	/* bytes */
#define CODECTL_INFO_SIZE_MAX		4096	/* largest accepted info_size */

/**
 * struct codectl_elf_info - CODECTL_REGISTER_ELF: an ELF object's code
 * @elf_start:	lowest address of the object's PT_LOAD mappings, or 0
 * @elf_end:	end of the object's PT_LOAD mappings, or 0; either both
 *		are 0 (unknown) or @elf_start < @elf_end and the range holds
 *		the text and SFrame ranges
 * @text_start:	start of the code to unwind (typically the executable
 *		PT_LOAD segment); must be < @text_end
 * @text_end:	end of that code.  [text_start, text_end) must be mapped
 *		executable in the caller, and must not overlap any other
 *		registration (ELF or JIT) of the caller
 * @sframe_start: start of the object's .sframe section (PT_GNU_SFRAME), or 0
 * @sframe_end:	end of the section (at least its header's size), or 0;
 *		both 0 registers the object without SFrame (the unwinder
 *		then uses frame pointers there).  Otherwise the range must
 *		be mapped readable and begin with a valid SFrame header
 *		(magic 0xdee2, version 1-3, this machine's ABI, offsets and
 *		counts inside the range)
 * @pathname:	char *, NUL-terminated path of the object, or 0
 * @build_id:	pointer to the GNU build id bytes (NT_GNU_BUILD_ID
 *		descriptor), or 0
 * @debug_link_pathname: char *, NUL-terminated .gnu_debuglink name, or 0
 * @build_id_len: length of @build_id: 0 iff @build_id is 0, at most
 *		CODECTL_BUILD_ID_MAX
 * @debug_link_crc: CRC32 of the .gnu_debuglink section; must be 0 when
 *		@debug_link_pathname is 0
 * @flags:	CODECTL_ELF_* bits (VER1; 0 for a VER0 caller); unknown bits
 *		are EINVAL
 * @__reserved2: must be 0
 *
 * Strings are at most CODECTL_PATH_MAX bytes with the NUL and not empty.
 *
 * CODECTL_ELF_SFRAME_SYNTH: [sframe_start, sframe_end) is a synthesised
 * SFrame section (e.g. built by user space from .eh_frame) in a buffer
 * anywhere in the caller's readable memory, not necessarily inside the
 * elf range nor in a file mapping.  It is decoded as if the section lay
 * at sframe_start (SFrame function addresses are relative to the section,
 * so build it for the buffer's address), validated, and copied into a
 * flat lookup table at registration (at most the module parameter
 * sframe_flat_max bytes), or else kept as a kernel copy decoded at each
 * unwind (CODECTL_TABLE_KERNEL): the caller may free the buffer once the
 * call returns, and unmapping it does not drop the registration.  Either
 * is charged to max_bytes.  QUERY reports the range as given, with
 * CODECTL_ORIGIN_SYNTH.
 *
 * Registrations found by the module itself (discovery: module parameter
 * discover, CODECTL_ORIGIN_DISCOVERED in QUERY) give way to explicit
 * ones: a CODECTL_REGISTER_ELF whose text range overlaps only discovered
 * registrations replaces them (no EEXIST).
 *
 * Errors:
 *   EINVAL   an empty range or start >= end; elf range given that does not
 *            hold the text or (not synthesised) SFrame range, or only one
 *            of its ends is 0; unknown @flags or a non-zero __reserved2;
 *            CODECTL_ELF_SFRAME_SYNTH without an SFrame range;
 *            only one of sframe_start/sframe_end is 0; build_id and
 *            build_id_len disagree; debug_link_crc without a debug link;
 *            an empty string.
 *   EFAULT   the text range is not entirely mapped executable, the SFrame
 *            range not entirely mapped readable, or a string, the build id
 *            or the SFrame header cannot be read.
 *   ENAMETOOLONG a string is longer than CODECTL_PATH_MAX with its NUL.
 *   EMSGSIZE build_id_len > CODECTL_BUILD_ID_MAX.
 *   ENOEXEC  the SFrame section is refused: its header is invalid or not
 *            for this machine, or (module parameter validate_sframe, on by
 *            default) one of its FDEs or FREs is, a function lies
 *            outside [text_start, text_end), or a function has more
 *            than 4096 FREs (CODECTL_SFRAME_E_FDE_FRES: the bound of a
 *            lookup's scan).  CODECTL_CHECK_SFRAME tells why.
 *   EFBIG    CODECTL_ELF_SFRAME_SYNTH: the section is larger than
 *            max_bytes (no address space could hold its copy; before
 *            ABI 5: larger than sframe_flat_max, or no flat table).
 *   EEXIST   the text range overlaps an existing registration made
 *            through this ABI (discovered ones are replaced).
 *   ENOSPC   the caller has max_registrations registrations already.
 *   ENOMEM   the caller's registrations would exceed max_bytes, or the
 *            kernel (or the caller's memory cgroup) is out of memory.
 *            The flat table's size is known before it is built: one that
 *            would not fit what is left of max_bytes is not built (the
 *            section is then decoded in user memory; with
 *            CODECTL_ELF_SFRAME_SYNTH in a kernel copy, and the call
 *            fails with ENOMEM when that copy does not fit either).
 */
struct codectl_elf_info {
	__u64 elf_start;
	__u64 elf_end;
	__u64 text_start;
	__u64 text_end;
	__u64 sframe_start;
	__u64 sframe_end;
	__u64 pathname;
	__u64 build_id;
	__u64 debug_link_pathname;
	__u32 build_id_len;
	__u32 debug_link_crc;
	__u32 flags;
	__u32 __reserved2;
};

#define CODECTL_ELF_INFO_SIZE_VER0	80
#define CODECTL_ELF_INFO_SIZE_VER1	88	/* flags */

/* codectl_elf_info.flags */
#define CODECTL_ELF_SFRAME_SYNTH	0x1u	/* 1u << 0 */
#define CODECTL_ELF_FLAGS_ALL		CODECTL_ELF_SFRAME_SYNTH

/**
 * struct codectl_jit_info - CODECTL_REGISTER_JIT: a JIT code region
 * @text_start:	start of the region's code; must be < @text_end
 * @text_end:	end of the region, mapped executable, no overlap with other
 *		registrations (as for ELF)
 * @unwind_head: pointer to the first struct codectl_jit_unwind_table,
 *		mapped readable with its whole reserved area
 *
 * Registration checks the first table's header; the unwinder reads the
 * tables (and follows @next) when it unwinds, trusting only what
 * used_len covers at that moment.
 *
 * Errors: EINVAL (empty range; a table header not 8-byte aligned, or whose
 * fre_size is smaller than CODECTL_JIT_FRE_SIZE_VER0, fre_stride smaller
 * than fre_size or not a multiple of 4, reserved_len larger than 1 GiB or
 * not a multiple of fre_stride, used_len > reserved_len, a non-zero
 * __reserved), ELOOP (the chain of tables through @next, as far as it can
 * be read, is longer than 64 tables: the unwinder follows no more),
 * EFAULT (text not mapped executable, table not mapped readable), EEXIST,
 * ENOSPC, ENOMEM as for ELF.
 */
struct codectl_jit_info {
	__u64 text_start;
	__u64 text_end;
	__u64 unwind_head;
};

#define CODECTL_JIT_INFO_SIZE_VER0	24

/*
 * JIT unwind tables (in the caller's memory, read by the kernel).
 *
 * A table covers code in increasing address order; entries do not overlap
 * and are sorted by ip_off.  User space appends entries, then publishes
 * them by increasing used_len with a store-release; the kernel reads
 * used_len with a load-acquire and trusts only the entries below it.
 * A full table is continued by a new one linked through @next (0 ends the
 * chain); chained tables cover increasing addresses too.
 *
 * Entries are fre_stride bytes apart; fre_size says how many bytes of each
 * entry are meaningful, so struct codectl_jit_unwind_fre can grow at its
 * end: the kernel reads min(fre_size, its own size) bytes and treats the
 * rest as zero.
 */

/* codectl_jit_unwind_fre.info bits */
#define CODECTL_JIT_FRE_CFA_BASE_FP	0x01	/* CFA = FP + cfa_off, else SP */
#define CODECTL_JIT_FRE_FP_SAVED	0x02	/* caller's FP at CFA + fp_off */
#define CODECTL_JIT_FRE_OUTERMOST	0x04	/* no caller: stop unwinding */

/**
 * struct codectl_jit_unwind_fre - unwind rule for one code range
 * @size:	bytes of code the rule covers, from @ip_off
 * @ip_off:	offset of the first covered byte from the region's text_start
 * @cfa_off:	CFA = (SP or FP, see info) + cfa_off
 * @ra_off:	return address saved at CFA + ra_off
 * @fp_off:	caller's frame pointer saved at CFA + fp_off (if FP_SAVED)
 * @info:	CODECTL_JIT_FRE_* bits
 * @__pad:	must be 0 (in tables whose fre_size covers it): an entry
 *		with a byte of it set ends the walk (CODECTL_STOP_TABLE)
 */
struct codectl_jit_unwind_fre {
	__u32 size;
	__u32 ip_off;
	__s32 cfa_off;
	__s32 ra_off;
	__s32 fp_off;
	__u8 info;
	__u8 __pad[3];
};

#define CODECTL_JIT_FRE_SIZE_VER0	21	/* up to and including info */

/**
 * struct codectl_jit_unwind_table - one table of a JIT region's chain
 * @reserved_len: bytes reserved for @fre (a multiple of fre_stride)
 * @used_len:	bytes of @fre that hold published entries; a 64-bit
 *		atomic store-release by user space (also on 32-bit), a
 *		load-acquire by the kernel
 * @next:	pointer to the next table, or 0
 * @fre_stride:	distance between entries (>= fre_size, multiple of 4)
 * @fre_size:	meaningful bytes of each entry (>= CODECTL_JIT_FRE_SIZE_VER0)
 * @__reserved:	must be 0
 * @fre:	the entries
 */
struct codectl_jit_unwind_table {
	__u64 reserved_len;
	__u64 used_len;
	__u64 next;
	__u32 fre_stride;
	__u32 fre_size;
	__u64 __reserved;
	/* __u8 fre[reserved_len], entries fre_stride bytes apart */
};

/**
 * struct codectl_unregister_info - CODECTL_UNREGISTER
 * @text_start:	text_start of the registration to remove
 * @text_end:	its text_end; both must equal the registered range
 *
 * Errors: EINVAL (text_start >= text_end), ENOENT (the caller has no
 * registration with exactly this range; nothing changes).
 */
struct codectl_unregister_info {
	__u64 text_start;
	__u64 text_end;
};

#define CODECTL_UNREGISTER_INFO_SIZE_VER0	16

/* codectl_query_info.kind */
#define CODECTL_KIND_ELF		1
#define CODECTL_KIND_JIT		2

/*
 * codectl_query_info.origin: where a registration came from.  Exactly
 * one of REGISTERED (CODECTL_REGISTER_ELF or _JIT) and DISCOVERED (found
 * by the module in a file mapping, module parameter discover), plus
 * SYNTH for an ELF registration whose SFrame section was a synthesised
 * buffer (CODECTL_ELF_SFRAME_SYNTH).  New bits may be added: ignore the
 * ones you do not know.
 */
#define CODECTL_ORIGIN_REGISTERED	0x1u
#define CODECTL_ORIGIN_DISCOVERED	0x2u
#define CODECTL_ORIGIN_SYNTH		0x4u

/**
 * struct codectl_query_info - CODECTL_QUERY: read one registration
 * @addr:	in: cursor; the registration returned is the one with the
 *		lowest text_start whose text_end > @addr.  Start at 0, then
 *		pass the previous answer's text_end.
 * @kind:	out: CODECTL_KIND_ELF or CODECTL_KIND_JIT
 * @build_id_len: in: size of the @build_id buffer; out: length of the
 *		build id (0 if none).  Copied only when it fits, as for
 *		@pathname.
 * @text_start:	out
 * @text_end:	out
 * @elf_start:	out (ELF; 0 for JIT)
 * @elf_end:	out (ELF; 0 for JIT)
 * @sframe_start: out (ELF; 0 if none)
 * @sframe_end:	out (ELF; 0 if none)
 * @unwind_head: out (JIT; 0 for ELF)
 * @pathname:	in: char * buffer of @pathname_len bytes, or 0
 * @pathname_len: in: buffer size; out: bytes the pathname needs with its
 *		NUL (0 if the registration has none).  When the buffer is
 *		too small the call still succeeds and writes nothing there:
 *		compare the returned length with your buffer's size.
 * @debug_link_crc: out
 * @debug_link_pathname: in: buffer, or 0
 * @debug_link_len: in/out, as @pathname_len
 * @build_id:	in: buffer of @build_id_len bytes, or 0
 * @__reserved:	in: must be 0
 * @origin:	out (VER1): CODECTL_ORIGIN_* bits; ignored in
 * @__reserved2: in (VER1): must be 0
 * @pid:	in (VER2): whose registrations: 0 for the caller's address
 *		space, else a process (or thread) id in the caller's pid
 *		namespace, whose address space's registrations are read.
 *		Reading another address space needs what reading
 *		/proc/PID/maps needs (ptrace access mode
 *		PTRACE_MODE_READ_FSCREDS, and the procfs mount's hidepid),
 *		and @maps_fd (VER3): callers with a smaller struct get EBADF
 *		for any @pid but 0 and their own.  Not changed on output.
 * @sframe_version: out (VER2): the SFrame version (1-3) of the section's
 *		header, 0 without SFrame
 * @num_fdes:	out (VER2): FDEs (functions) its header declares
 * @num_fres:	out (VER2): FREs (rows) its header declares
 * @coverage:	out (VER2): bytes of [text_start, text_end) inside the
 *		functions the section's FDEs describe: the union of their
 *		[start, start + size) clipped to the text range, counted at
 *		registration (with validate_sframe=N, unsorted or
 *		overlapping FDEs may make it an upper bound; never more than
 *		text_end - text_start).  0 without SFrame or for JIT
 * @sframe_table: out (VER2): how the unwinder looks rules up,
 *		CODECTL_TABLE_*
 * @charge:	out (VER2): bytes of kernel memory the registration is
 *		charged against max_bytes (the struct, strings and tables;
 *		a shared flat table is charged in full to every user)
 * @maps_fd:	in (VER3): with a @pid other than the caller's, an fd of
 *		/proc/PID/maps (or /proc/PID/task/TID/maps) that the caller
 *		opened for reading, PID (TID) being @pid, in a procfs of the
 *		caller's pid namespace.  The module opens "maps" again in
 *		that file's directory, with the caller's credentials: procfs
 *		makes the check at each QUERY (so LSMs and hidepid have
 *		their say), on the process the directory stands for, and no
 *		path in the caller's mount namespace is involved (a user and
 *		mount namespace cannot redirect it).  Ignored for pid 0.
 * @__reserved3: in (VER3): must be 0
 *
 * Errors: ENOENT (no registration ends above @addr), EFAULT (a buffer
 * cannot be written), EINVAL (__reserved, __reserved2 or __reserved3 not
 * zero, @pid negative), and with a @pid other than 0:
 *   ESRCH    no such process in the caller's pid namespace, or it has no
 *            address space (a kernel thread, a zombie, an exiting
 *            process), or it died since @maps_fd was opened, or procfs
 *            does not show it (hidepid=invisible)
 *   EBADF    @maps_fd is not an open file (or the struct is smaller than
 *            VER3)
 *   EACCES   the caller may not read it (the ptrace check failed, as
 *            opening /proc/PID/maps would), or @maps_fd is not procfs's
 *            maps file of @pid in a procfs of the caller's pid namespace
 *            (another file, another pid, a file mounted over it)
 *   EPERM    the procfs of @maps_fd is mounted with hidepid=noaccess and
 *            the process is not the caller's (what opening
 *            /proc/PID/maps would say then)
 *   EAGAIN   the process exec'ed (got a new address space) while it was
 *            being checked: retry
 * The registrations of a process are only read, never changed: the other
 * options act on the caller's own address space only.
 */
struct codectl_query_info {
	__u64 addr;
	__u32 kind;
	__u32 build_id_len;
	__u64 text_start;
	__u64 text_end;
	__u64 elf_start;
	__u64 elf_end;
	__u64 sframe_start;
	__u64 sframe_end;
	__u64 unwind_head;
	__u64 pathname;
	__u32 pathname_len;
	__u32 debug_link_crc;
	__u64 debug_link_pathname;
	__u32 debug_link_len;
	__u32 __reserved;
	__u64 build_id;
	__u32 origin;
	__u32 __reserved2;
	__s32 pid;
	__u32 sframe_version;
	__u32 num_fdes;
	__u32 num_fres;
	__u64 coverage;
	__u32 sframe_table;
	__u32 charge;
	__s32 maps_fd;
	__u32 __reserved3;
};

#define CODECTL_QUERY_INFO_SIZE_VER0	112
#define CODECTL_QUERY_INFO_SIZE_VER1	120	/* origin */
#define CODECTL_QUERY_INFO_SIZE_VER2	152	/* pid, SFrame summary */
#define CODECTL_QUERY_INFO_SIZE_VER3	160	/* maps_fd */

/*
 * codectl_query_info.sframe_table: how the unwinder finds the rule at a pc.
 *   NONE        no SFrame section (JIT tables or frame pointers)
 *   FLAT        a flat lookup table in the kernel, built at registration
 *   FLAT_SHARED the same, its arrays shared with the other address spaces
 *               that map the same file (discovered registrations, module
 *               parameter share)
 *   USER_INDEX  decoded in user memory at each unwind, with an FDE index
 *               in the kernel (section larger than sframe_flat_max, or no
 *               memory for a flat table)
 *   USER        decoded in user memory, no index
 *   KERNEL      (ABI 5) a synthesised section without a flat table
 *               (larger than sframe_flat_max, too many rules or entries,
 *               a table over what is left of max_bytes): decoded at each
 *               unwind in the registration's kernel copy, with an FDE
 *               index when it fits
 */
#define CODECTL_TABLE_NONE		0
#define CODECTL_TABLE_FLAT		1
#define CODECTL_TABLE_FLAT_SHARED	2
#define CODECTL_TABLE_USER_INDEX	3
#define CODECTL_TABLE_USER		4
#define CODECTL_TABLE_KERNEL		5

/**
 * struct codectl_version - CODECTL_VERSION: what this module offers
 * @abi_version:	out: CODECTL_ABI_VERSION of the module
 * @__reserved:		out: 0 (an output of VER0: not checked on input)
 * @options:		out: bit n set when option n (< 64) is supported
 * @max_registrations:	out: per address space limit (module parameter)
 * @max_bytes:		out: per address space memory limit (module parameter)
 * @nr_registrations:	out: the caller's current registrations
 * @bytes:		out: kernel memory they use, counted against max_bytes
 * @options_map:	in (VER1): pointer to an array of @options_map_words
 *			__u64 words, or 0: bit (n % 64) of word (n / 64) is
 *			set when option n is supported, for every option
 *			number (past 63 too, where @options cannot say).
 *			The kernel writes the words it knows and zeroes the
 *			rest of the array; an array too short for
 *			@nr_options gets the words that fit
 * @options_map_words:	in (VER1): words at @options_map, at most
 *			CODECTL_OPTIONS_MAP_WORDS_MAX; 0 with @options_map 0
 * @nr_options:		out (VER1): one more than the highest option number
 *			the module knows: (@nr_options + 63) / 64 words hold
 *			every option
 *
 * Every VER0 field is output only (a caller's garbage there is
 * overwritten, as it always was).  The VER1 inputs are checked.
 *
 * Errors: the common ones, and EINVAL (VER1: @options_map_words larger
 * than CODECTL_OPTIONS_MAP_WORDS_MAX, or @options_map and
 * @options_map_words not both 0 or both non-zero), EFAULT (@options_map
 * cannot be written).
 */
struct codectl_version {
	__u32 abi_version;
	__u32 __reserved;
	__u64 options;
	__u64 max_registrations;
	__u64 max_bytes;
	__u64 nr_registrations;
	__u64 bytes;
	__u64 options_map;
	__u32 options_map_words;
	__u32 nr_options;
};

#define CODECTL_VERSION_SIZE_VER0	48
#define CODECTL_VERSION_SIZE_VER1	64	/* options_map */
#define CODECTL_OPTIONS_MAP_WORDS_MAX	512	/* 32768 options */

/*
 * Why an SFrame section was refused (codectl_sframe_check.error).  The
 * kernel's SFrame decoder returns these; they never change meaning.
 */
#define CODECTL_SFRAME_OK		0
/* header */
#define CODECTL_SFRAME_E_TRUNCATED	1	/* shorter than its header */
#define CODECTL_SFRAME_E_MAGIC		2	/* bad magic */
#define CODECTL_SFRAME_E_VERSION	3	/* version not 1, 2 or 3 */
#define CODECTL_SFRAME_E_ABI		4	/* ABI unknown or not this one's */
#define CODECTL_SFRAME_E_FLAGS		5	/* flags invalid for the version */
#define CODECTL_SFRAME_E_AUXHDR		6	/* auxiliary header past the end */
#define CODECTL_SFRAME_E_NO_FDES	7	/* no FDEs or no FREs */
#define CODECTL_SFRAME_E_FDES_BOUNDS	8	/* FDE array past the end */
#define CODECTL_SFRAME_E_FRES_BOUNDS	9	/* FRE sub-section past the end */
#define CODECTL_SFRAME_E_OVERLAP	10	/* FREs start inside the FDEs */
#define CODECTL_SFRAME_E_FIXED_RA	11	/* AMD64 without fixed RA offset */
/* FDEs */
#define CODECTL_SFRAME_E_UNSORTED	12	/* FDEs not sorted by address */
#define CODECTL_SFRAME_E_FDE_OVERLAP	13	/* functions overlap */
#define CODECTL_SFRAME_E_FUNC_RANGE	14	/* function outside the text */
#define CODECTL_SFRAME_E_FUNC_WRAP	15	/* function end overflows */
#define CODECTL_SFRAME_E_FDE_FRE_OFF	16	/* FDE's FREs out of bounds */
#define CODECTL_SFRAME_E_FDE_INFO	17	/* bad FRE/pc/FDE type, rep size */
#define CODECTL_SFRAME_E_FDE_NO_FRES	18	/* reserved: no longer reported */
/* FREs */
#define CODECTL_SFRAME_E_FRE_BOUNDS	19	/* FRE past the sub-section */
#define CODECTL_SFRAME_E_FRE_ORDER	20	/* FRE starts not increasing */
#define CODECTL_SFRAME_E_FRE_START	21	/* FRE starts past the function */
#define CODECTL_SFRAME_E_FRE_SIZE	22	/* data word size undefined */
#define CODECTL_SFRAME_E_FRE_COUNT	23	/* data word count invalid */
#define CODECTL_SFRAME_E_FRE_FLEX	24	/* FLEX data words inconsistent */
#define CODECTL_SFRAME_E_FRE_TOTAL	25	/* FREs differ from the header */
#define CODECTL_SFRAME_E_FRE_RANGE	26	/* offset or register too large */
/* 27-29: lookup results, never a verdict */
#define CODECTL_SFRAME_E_FDE_FRES	30	/* a function with > 4096 FREs */

/**
 * struct codectl_sframe_check - CODECTL_CHECK_SFRAME: why would an SFrame
 *	section be refused?
 * @sframe_start: in: the section in the caller's memory
 * @sframe_end:	in: its end
 * @text_start:	in: functions must lie in [text_start, text_end), or 0
 * @text_end:	in: see @text_start; both 0 for no such check
 * @error:	out: CODECTL_SFRAME_OK or the CODECTL_SFRAME_E_* code of the
 *		first defect found
 * @version:	out: the section's SFrame version (0 if the header is bad)
 * @num_fdes:	out: FDEs the header declares (0 if the header is bad)
 * @num_fres:	out: FREs the header declares (0 if the header is bad)
 *
 * Runs every check CODECTL_REGISTER_ELF runs on an SFrame section, with
 * the full walk of every FDE and FRE whatever validate_sframe says, and
 * registers nothing.  The call succeeds when the check ran, whatever its
 * verdict: read @error.
 *
 * Errors: EINVAL (sframe_start >= sframe_end, or only one of text_start
 * and text_end is 0, or text_start >= text_end), EFAULT (the range cannot
 * be read).
 */
struct codectl_sframe_check {
	__u64 sframe_start;
	__u64 sframe_end;
	__u64 text_start;
	__u64 text_end;
	__u32 error;
	__u32 version;
	__u32 num_fdes;
	__u32 num_fres;
};

#define CODECTL_SFRAME_CHECK_SIZE_VER0	48

/*
 * User stack traces.
 *
 * The module unwinds a task's user stack in the task's own context, before
 * it returns to user space: with the SFrame section of the registration
 * covering each pc, else the JIT tables of a JIT registration, else frame
 * pointers.  Kernel consumers (other modules, codectl's own tracers) ask for
 * traces through the deferred-unwind API of <codectl/unwind_deferred.h>.
 * The ioctls below let a program see what they would get for its own
 * stack; they are not codectl(2) options, so their numbers lie outside the
 * option space (_IOC_NR 0x40 and up, other sizes).
 *
 * Extensibility of the ioctls outside the option space (UNWIND,
 * UNWIND_STATS, HOOK_STATS, IMPORT): the size field of the ioctl number
 * (_IOC_SIZE) is the size of the struct as the caller knows it.  The
 * module accepts an ioctl with that _IOC_NR and direction for any size
 * from the struct's *_SIZE_VER0 up to CODECTL_INFO_SIZE_MAX, and reads
 * (_IOW, _IOWR) with copy_struct_from_user() semantics: a shorter struct
 * is zero-extended, a longer one is accepted only if the bytes the module
 * does not know are zero (else E2BIG).  It writes back (_IOR, _IOWR)
 * min(caller's size, its own) bytes and zeroes the rest of the caller's
 * struct.  A size outside that range is an unknown ioctl: ENOTTY.  The
 * CODECTL_IOC_* macros below use this header's sizes; a program built
 * with an older header keeps its older sizes and keeps working.
 */

/*
 * Per-frame method (the byte array next to the pcs): how the frame's pc
 * was found.
 *   REGS      frame 0: the user registers
 *   SFRAME    the SFrame rule of the callee
 *   JIT       the JIT table entry of the callee
 *   FP        the frame pointer chain
 *   FP_ENTRY  frame 1 when frame 0 has no frame of its own yet (at a
 *             function's entry, or in a leaf system call wrapper; arm64:
 *             a leaf without rules, its return address in x30)
 *   SIGNAL    the registers the kernel saved in a signal frame
 */
#define CODECTL_FRAME_REGS	1
#define CODECTL_FRAME_SFRAME	2
#define CODECTL_FRAME_JIT	3
#define CODECTL_FRAME_FP	4
#define CODECTL_FRAME_FP_ENTRY	5
#define CODECTL_FRAME_SIGNAL	6

/*
 * Why an unwind stopped (CODECTL_STOP_*).  OUTERMOST and END say the stack
 * is complete; every other reason says how it was cut short.  A frame the
 * walk cannot vouch for is never given: it ends the walk instead.
 *   OUTERMOST  the program's own unwind information marks the end: an
 *              SFrame v3 outermost FRE, a row with an undefined return
 *              address (the CFI of _start and clone, also in sections
 *              synthesised from .eh_frame), a JIT table's OUTERMOST entry
 *   END        a zero frame pointer that a callee saved (the top of a
 *              thread built with frame pointers: _start clears rbp), or
 *              a zero return address
 *   DEPTH      the frame limit was reached
 *   FAULT      stack memory, or the code before a return address, could
 *              not be read (in the tracers' non-faulting walks: a page
 *              that is not resident)
 *   SP         rule rejected: the caller's stack pointer a table's rule
 *              gives is not above the callee's (loop, garbage)
 *   ALIGN      rule rejected: a table's rule reads a misaligned address
 *   TABLE      rule rejected: the SFrame section or JIT table is invalid
 *              at this pc, or the task runs 32-bit code (only its pc is
 *              given)
 *   NO_USER    no user context: kernel thread, exiting task, no mm
 *   NOMEM      no memory for the trace buffer
 *   NOT_CODE   the caller found is not in code (no registered, discovered
 *              or imported range, not the executable's text, not an
 *              executable mapping discovery knows), or a return address
 *              that does not follow a call instruction
 *   NO_RULE    no table covers the pc and frame pointers give no frame:
 *              the frame pointer is misaligned, below the stack pointer,
 *              zero in the innermost frame (code without frame pointers
 *              uses rbp for anything), or frame pointers were left out
 *              (CODECTL_UNWIND_NO_FP)
 *   BUDGET     the walk did as much work in unwind tables in user memory
 *              as one walk may (codectl(4), BOUNDS): a table built to be
 *              slow, or changed since it was registered; or a lookup gave
 *              up at its bound of work
 */
#define CODECTL_STOP_OUTERMOST	1
#define CODECTL_STOP_END	2
#define CODECTL_STOP_DEPTH	3
#define CODECTL_STOP_FAULT	4
#define CODECTL_STOP_SP		5
#define CODECTL_STOP_ALIGN	6
#define CODECTL_STOP_TABLE	7
#define CODECTL_STOP_NO_USER	8
#define CODECTL_STOP_NOMEM	9
#define CODECTL_STOP_NOT_CODE	10
#define CODECTL_STOP_NO_RULE	11
#define CODECTL_STOP_BUDGET	12
#define CODECTL_STOP_NR		13	/* not a reason */

/*
 * Trace flags of the deferred-unwind API (<codectl/unwind_deferred.h>).
 *   MOVED  the task ran user code between the request and the unwind: a
 *          request from an NMI or interrupt that hit user code is served
 *          at the next kernel exit (the interrupt that runs the
 *          task_work), so the stack is that moment's, a few instructions
 *          later than the request's; frame 0 differs, and a call or
 *          return in between can change frame 1 too
 */
#define CODECTL_TRACE_MOVED	0x1

/* Largest trace the module produces. */
#define CODECTL_UNWIND_MAX_FRAMES	4096

/*
 * codectl_unwind_args.flags: methods to leave out (0: use all).  0x8 was
 * CODECTL_UNWIND_NOFAULT in ABI 1 (the tracer hooks' walk, in the
 * caller's context): a test facility, now in the test module only; the
 * product refuses it (EINVAL), as any unknown flag.
 */
#define CODECTL_UNWIND_NO_SFRAME	0x1
#define CODECTL_UNWIND_NO_JIT		0x2
#define CODECTL_UNWIND_NO_FP		0x4
#define CODECTL_UNWIND_FLAGS_ALL	0x7

/**
 * struct codectl_unwind_args - CODECTL_IOC_UNWIND: unwind my stack now
 * @ips:	in: __u64 array of @max_frames entries for the pcs
 * @methods:	in: __u8 array of @max_frames entries for CODECTL_FRAME_*,
 *		or 0
 * @max_frames:	in: 1 .. CODECTL_UNWIND_MAX_FRAMES
 * @flags:	in: CODECTL_UNWIND_NO_* bits
 * @iterations:	in: unwind this many times (benchmarks; 0 means 1); the
 *		arrays get the last unwind
 * @nr:		out: frames found, frame 0 being the pc of the ioctl call
 * @stop:	out: CODECTL_STOP_* reason the unwind stopped
 * @__reserved:	in: must be 0
 * @ns:		out: time spent in the unwinds, in nanoseconds
 *
 * The caller's stack as its thread entered the ioctl, unwound synchronously
 * with the same code the deferred unwinder runs.  Frames past the first
 * are return addresses (the pc after the call).
 *
 * Errors: EINVAL (max_frames out of range, unknown flags, reserved not 0),
 * EFAULT (an array cannot be written), EINTR (a fatal signal during
 * @iterations).
 */
struct codectl_unwind_args {
	__u64 ips;
	__u64 methods;
	__u32 max_frames;
	__u32 flags;
	__u32 iterations;
	__u32 nr;
	__u32 stop;
	__u32 __reserved;
	__u64 ns;
};

#define CODECTL_UNWIND_ARGS_SIZE_VER0	48

/**
 * struct codectl_unwind_stats - CODECTL_IOC_UNWIND_STATS: module-wide
 *	unwinder counters since load
 * @unwinds:	unwinds run (synchronous and deferred)
 * @frames:	frames produced, by CODECTL_FRAME_* (index 0 unused)
 * @stops:	unwinds ended, by CODECTL_STOP_* (index 0 unused)
 * @requests:	deferred requests accepted
 * @callbacks:	deferred callbacks run
 *
 * Also in debugfs, codectl/unwind.  Everyone's unwinds: the ioctl needs
 * CAP_PERFMON or CAP_SYS_ADMIN (else EPERM), as CODECTL_IOC_HOOK_STATS.
 */
struct codectl_unwind_stats {
	__u64 unwinds;
	__u64 frames[8];
	__u64 stops[16];
	__u64 requests;
	__u64 callbacks;
};

#define CODECTL_UNWIND_STATS_SIZE_VER0	216

/**
 * struct codectl_hook_stats - CODECTL_IOC_HOOK_STATS: one tracer hook
 *	(needs CAP_PERFMON or CAP_SYS_ADMIN, else EPERM: it counts every
 *	process's samples)
 * @index:	in: which hook, from 0; past the last one: ENOENT
 * @flags:	out: CODECTL_HOOK_* bits
 * @error:	out: the (negative) errno of the last attach that failed,
 *		or 0
 * @__reserved:	in: must be 0 (else EINVAL)
 * @name:	out: the kernel function it attaches to, NUL-terminated
 * @calls:	out: calls of that function seen since load
 * @redirected:	out: calls whose work codectl's unwinder did
 * @declined:	out: calls left to the kernel's own code (a task without
 *		registrations, a 32-bit task, a guest's sample, ...)
 * @missed:	out: calls the kprobe could not see (another probe was
 *		running on that CPU): the kernel's own code ran
 * @walks:	out: stacks walked (= redirected calls)
 * @fallbacks:	out: SFrame and JIT steps that fell back to frame
 *		pointers: the section's page was not resident, or the
 *		rule's caller was not code
 * @frames:	out: frames produced, by CODECTL_FRAME_* (index 0 unused)
 * @stops:	out: walks ended, by CODECTL_STOP_* (index 0 unused)
 *
 * The hooks are kprobes on the kernel functions that walk user stacks
 * for perf (and BPF's user stacks), ftrace's userstacktrace option and,
 * where the kernel has it, the deferred unwinder.  Also in debugfs,
 * codectl/hooks.
 */
struct codectl_hook_stats {
	__u32 index;
	__u32 flags;
	__s32 error;
	__u32 __reserved;
	char name[32];
	__u64 calls;
	__u64 redirected;
	__u64 declined;
	__u64 missed;
	__u64 walks;
	__u64 fallbacks;
	__u64 frames[8];
	__u64 stops[16];
};

#define CODECTL_HOOK_STATS_SIZE_VER0	288

#define CODECTL_HOOK_ATTACHED		0x1	/* the kprobe is registered */
#define CODECTL_HOOK_FTRACE		0x2	/* ... on the ftrace site */

/*
 * System-wide imports of synthesised SFrame sections.
 *
 * Most distribution libraries have no .sframe section but do have
 * .eh_frame.  User space (codectl import, libcodectl's
 * codectl_import_file()) synthesises an SFrame section from an object's
 * CFI once and hands it to the module with CODECTL_IOC_IMPORT; from then
 * on discovery (module parameter discover) uses it for that object in
 * every address space that maps it, wherever it is loaded, as if the
 * object had carried it.  A process whose discovery registered the object
 * without SFrame before the import gets it too: the next unwind that
 * meets the object has discovery look at it again, and the registration
 * is replaced by one with the imported section.
 *
 * An import is keyed by the file's identity (device, inode number and
 * generation, ctime: a file rewritten in place is another file) and its
 * GNU build id, and covers the object's first executable PT_LOAD
 * segment.  Importing a file again replaces its import; importing a file
 * whose pathname (as the kernel resolves the descriptor) another import
 * has replaces that one too (a library upgraded by renaming a new file
 * over it).  Imports live until removed (CODECTL_IMPORT_REMOVE,
 * CODECTL_IMPORT_CLEAR) or the module is unloaded; their total size is
 * bounded by the module parameter import_max_bytes.  debugfs
 * codectl/imports lists them.
 */

/* codectl_import_info.flags */
#define CODECTL_IMPORT_REMOVE		0x1u	/* drop @fd's import */
#define CODECTL_IMPORT_CLEAR		0x2u	/* drop every import */
#define CODECTL_IMPORT_PRUNE		0x4u	/* drop those of files gone */
#define CODECTL_IMPORT_FLAGS_ALL	0x7u

/**
 * struct codectl_import_info - CODECTL_IOC_IMPORT: import a synthesised
 *	SFrame section for an object file, system-wide
 * @sframe:	pointer to the section (e.g. from codectl_sframe_synth()
 *		with bias 0), built for the link-time address @sframe_vaddr
 * @sframe_size: its size; at most the module parameters import_max_bytes
 *		and max_bytes (before ABI 5: sframe_flat_max)
 * @sframe_vaddr: the link-time address the section was built for
 *		(SFrame stores function starts relative to the section): not
 *		0, page aligned, and past the object's PT_LOAD segments (the
 *		section is never mapped; in a process it is taken to lie at
 *		the object's load bias plus @sframe_vaddr, which QUERY
 *		reports, with CODECTL_ORIGIN_DISCOVERED | CODECTL_ORIGIN_SYNTH)
 * @fd:		the object's file, opened for reading (a regular file,
 *		64-bit x86-64 ELF, not open for writing anywhere)
 * @flags:	0, CODECTL_IMPORT_REMOVE (@fd only), CODECTL_IMPORT_CLEAR
 *		or CODECTL_IMPORT_PRUNE (ABI 4: nothing else is read; drops
 *		the imports whose path, resolved in the caller's mount
 *		namespace, no longer leads to the file imported, and returns
 *		how many)
 * @__reserved:	(VER1) must be 0 (EINVAL); callers built with an older
 *		header have a struct of CODECTL_IMPORT_INFO_SIZE_VER0 bytes
 *		and an ioctl number of that size, which the module still
 *		accepts (see "Extensibility" above)
 * @regs:	(VER2, ABI 6) 0, or a pointer to the object's register table
 *		(libcodectl: codectl_sframe_synth() with CODECTL_SYNTH_REGS),
 *		built for the same link-time address @sframe_vaddr: SFrame
 *		rows whose frame-pointer column describes the register
 *		SFrame has no column for (x86-64: rbx), so that the unwinder
 *		can carry it from frame to frame where a CFA is based on it
 *		(glibc's lazy-binding trampoline, its CFA in rbx while it
 *		calls _dl_fixup).  Checked as the section is, kept as a flat
 *		table with the import, charged with it.  A module before ABI
 *		6 refuses a non-zero @regs with E2BIG (see "Extensibility")
 * @regs_size:	(VER2) its size: 0 when @regs is 0
 *
 * The section is checked as CODECTL_REGISTER_ELF checks one (every FDE
 * and FRE, whatever validate_sframe says), its functions inside the
 * object's first executable segment at link-time addresses, and copied.
 * Needs CAP_SYS_ADMIN.
 *
 * The import applies to the file while its identity stays: device, inode
 * number and generation, size and mtime, build id and executable segment.
 * The ctime is not part of it (a hard link, chmod, chown or touch -a
 * moves it, as does perf's build-id cache): where only the ctime moved,
 * the module hashes the file's content again at the next discovery and
 * keeps the import if it is unchanged, else drops it.  A file written or
 * replaced gets no import until it is imported again.
 *
 * Errors:
 *   EPERM    the caller lacks CAP_SYS_ADMIN.
 *   EINVAL   unknown @flags or more than one, a non-zero @__reserved;
 *            @sframe_vaddr 0, not page
 *            aligned, or the section would wrap or end above the user
 *            address space; @sframe_size 0; only one of @regs and
 *            @regs_size 0, or either with CODECTL_IMPORT_REMOVE,
 *            _CLEAR or _PRUNE.
 *   EBADF    @fd is not an open file descriptor.
 *   EFAULT   the section (or the register table) cannot be read.
 *   ENOEXEC  @fd is not a regular file holding a 64-bit x86-64 ELF
 *            object with an executable PT_LOAD (or its headers cannot
 *            be read), @sframe_vaddr lies inside its segments, or the
 *            section or the register table is refused (or the machine
 *            has no register table: arm64).
 *   EEXIST   the object has its own SFrame section (PT_GNU_SFRAME):
 *            discovery uses that one.
 *   ETXTBSY  the file is open for writing, or changed while read.
 *   EINTR    a fatal signal arrived while the file was read.
 *   EFBIG    @sframe_size (or @regs_size) is larger than
 *            import_max_bytes or than
 *            max_bytes: it could never be held, or registered in any
 *            address space (before ABI 5: larger than sframe_flat_max,
 *            or no flat table).
 *   ENOSPC   the imports would exceed import_max_bytes, even after
 *            evicting those of files no process maps.
 *   EDQUOT   the file is not a system object (owned by root, writable
 *            by root alone) and the imports of its owner would exceed
 *            import_user_max_bytes, or those of all owners but the
 *            system half of import_max_bytes.
 *   ENOENT   CODECTL_IMPORT_REMOVE: @fd's file has no import.
 *   ENOMEM   out of memory.
 */
struct codectl_import_info {
	__u64 sframe;
	__u64 sframe_size;
	__u64 sframe_vaddr;
	__s32 fd;
	__u32 flags;
	__u64 __reserved;
	__u64 regs;
	__u64 regs_size;
};

#define CODECTL_IMPORT_INFO_SIZE_VER0	32
#define CODECTL_IMPORT_INFO_SIZE_VER1	40	/* __reserved */
#define CODECTL_IMPORT_INFO_SIZE_VER2	56	/* regs, regs_size */

#define CODECTL_IOC_UNWIND		_IOWR(CODECTL_IOC_MAGIC, 0x40, \
					      struct codectl_unwind_args)
#define CODECTL_IOC_UNWIND_STATS	_IOR(CODECTL_IOC_MAGIC, 0x42, \
					     struct codectl_unwind_stats)
/*
 * 0x41 (UNWIND_REQUEST), 0x43 and 0x44 (SELFTEST_START, _STOP) were
 * test facilities of ABI 1, now in the test module (tests/vm/testmod):
 * not reused.
 */
#define CODECTL_IOC_HOOK_STATS		_IOWR(CODECTL_IOC_MAGIC, 0x45, \
					      struct codectl_hook_stats)
#define CODECTL_IOC_IMPORT		_IOW(CODECTL_IOC_MAGIC, 0x46, \
					     struct codectl_import_info)

/*
 * On-demand synthesis: the demand queue.
 *
 * When discovery meets an executable file mapping with neither an SFrame
 * section nor an import, the module queues the file for a privileged
 * helper (codectl daemon), which synthesises SFrame from its .eh_frame
 * and imports it (CODECTL_IOC_IMPORT); the unwinds that follow use it.
 * The helper attaches an open /dev/codectl as the queue's one reader with
 * CODECTL_IOC_DEMAND, then read()s struct codectl_demand records from it
 * (whole records only; O_NONBLOCK gives EAGAIN when the queue is empty)
 * and poll()s it (POLLIN).  Closing the file detaches it.  The queue is
 * bounded (256 records); the kernel never waits for the reader:
 *  - with a reader attached, a file that does not fit is dropped and not
 *    remembered as hopeless, so the next unwind that meets it queues it
 *    again; the reader gets a record with CODECTL_DEMAND_OVERFLOW (no
 *    file) telling it to look at the running processes itself;
 *  - without one, the oldest record makes room; attaching clears what
 *    discovery remembered of files it could not cover (they are queued
 *    again when met) and, if records were lost, starts with an
 *    CODECTL_DEMAND_OVERFLOW record.
 *
 * Errors of CODECTL_IOC_DEMAND: EPERM (no CAP_SYS_ADMIN), EBUSY (another
 * file is attached), EOPNOTSUPP (the caller is not in the initial pid
 * namespace: records carry its pids).  read() of a file not attached:
 * EINVAL.
 */

/* codectl_demand.flags */
#define CODECTL_DEMAND_OVERFLOW		0x1u	/* records were lost */
#define CODECTL_DEMAND_PATH_CUT		0x2u	/* @path too long: empty */

#define CODECTL_DEMAND_PATH_MAX		256

/**
 * struct codectl_demand - a file an unwind met that nothing covers
 * @ino:	its inode number
 * @dev:	its device, as stat(2)'s st_dev
 * @size:	its size
 * @mtime_sec:	its mtime
 * @mtime_nsec:	nanoseconds of it
 * @gen:	its inode generation
 * @pid:	a process (thread group id, initial pid namespace) that maps
 *		it at @vm_start..@vm_end: /proc/@pid/map_files/ opens the
 *		very file, in any mount namespace
 * @flags:	CODECTL_DEMAND_*
 * @vm_start:	start of the executable mapping
 * @vm_end:	end of it
 * @vm_pgoff:	its file offset, in bytes
 * @__reserved:	0
 * @path:	the file's path as the process sees it (d_path), NUL
 *		terminated, or empty
 *
 * The identity (@dev, @ino, @gen, @size, @mtime_*) is the one imports
 * are keyed by: a helper checks the file it opens against it.
 */
struct codectl_demand {
	__u64 ino;
	__u64 dev;
	__s64 size;
	__s64 mtime_sec;
	__u32 mtime_nsec;
	__u32 gen;
	__u32 pid;
	__u32 flags;
	__u64 vm_start;
	__u64 vm_end;
	__u64 vm_pgoff;
	__u64 __reserved;
	char path[CODECTL_DEMAND_PATH_MAX];
};

#define CODECTL_IOC_DEMAND		_IO(CODECTL_IOC_MAGIC, 0x47)

#endif /* _UAPI_LINUX_CODECTL_H */
