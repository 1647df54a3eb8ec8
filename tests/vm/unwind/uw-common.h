/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Shared by the unwinding tests (unwind-test.c) and the benchmark
 * (bench-unwind.c): the ioctl issued from our own code (so that frame 0
 * lies in a function with a known rule, not in libc's ioctl(), which has
 * no SFrame on Debian 12), registration of the loaded objects, and
 * function address ranges from the dynamic symbol table (the programs are
 * linked with -rdynamic, so every global function is there with its size).
 */
#ifndef UW_COMMON_H
#define UW_COMMON_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <linux/codectl.h>
#include "../testmod/codectl_test.h"

#define NOIPA		__attribute__((noipa))
/* Keep @v live across this point: no tail call, no recursion-to-loop. */
#define KEEP(v)		__asm__ volatile("" : "+r"(v) : : "memory")

extern int uw_fd;		/* /dev/codectl */
/*
 * The UNWIND ioctl's device, fd and number: /dev/codectl's, or with
 * CODECTL_UNWIND_NOFAULT in $UW_EXTRA_FLAGS the test module's
 * (/dev/codectl_test, CODECTL_TEST_IOC_UNWIND).
 */
extern int uw_ufd;
extern unsigned long uw_cmd;
extern const char *uw_dev;

/* Open uw_fd: 0 or -errno. */
int uw_open(void);

/*
 * CODECTL_IOC_UNWIND on uw_fd by a syscall instruction in this function:
 * 0 or -errno.  Frame 0 of the trace is the pc right after that syscall,
 * inside uw_unwind().
 */
NOIPA long uw_unwind(struct codectl_unwind_args *a);

/* The same from an explicit fd (threads with their own descriptor). */
NOIPA long uw_unwind_fd(int fd, struct codectl_unwind_args *a);

/* Fill @a for @max frames into @ips/@methods with @flags. */
void uw_args(struct codectl_unwind_args *a, uint64_t *ips, uint8_t *methods,
	     uint32_t max, uint32_t flags);

/*
 * The function containing @fn per the dynamic symbol table: [*lo, *hi)
 * and its name.  false if there is no sized symbol there.
 */
bool uw_func_range(const void *fn, uint64_t *lo, uint64_t *hi,
		   const char **name);

/* "name+0xoff" (or "?" / "object+0xoff") for @pc, in @buf. */
const char *uw_sym(uint64_t pc, char *buf, size_t len);

/* "REGS", "SFRAME", ... and "END", "DEPTH", ... */
const char *uw_method_name(unsigned int m);
const char *uw_stop_name(unsigned int s);

/*
 * Register every loaded object with libcodectl (compiled into the
 * program): returns how many, or -errno.
 */
int uw_register_all(void);

/* The registration covering @addr: 0 or -errno (ENOENT: none). */
int uw_query(uint64_t addr, struct codectl_query_info *q);

#endif /* UW_COMMON_H */
