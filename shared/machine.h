/* SPDX-License-Identifier: GPL-2.0-only OR LGPL-2.1-or-later */
/*
 * The machine user space is built for, which is the machine whose objects
 * libcodectl and the codectl tool read, synthesise SFrame for and import:
 * x86-64 or arm64 (AArch64, little-endian).  User space only (<elf.h>).
 */
#ifndef CODECTL_MACHINE_H
#define CODECTL_MACHINE_H

#include <elf.h>

#if defined(__aarch64__) && !defined(__AARCH64EB__)
#define CODECTL_ELF_MACHINE	EM_AARCH64
#define CODECTL_MACHINE_NAME	"arm64"
#define CODECTL_LD_SO		"/lib/ld-linux-aarch64.so.1"
/* ld.so.cache: an entry's architecture flags (glibc's FLAG_AARCH64_LIB64) */
#define CODECTL_LD_CACHE_ARCH	0x0a00
#elif defined(__x86_64__)
#define CODECTL_ELF_MACHINE	EM_X86_64
#define CODECTL_MACHINE_NAME	"x86-64"
#define CODECTL_LD_SO		"/lib64/ld-linux-x86-64.so.2"
#define CODECTL_LD_CACHE_ARCH	0x0300	/* FLAG_X8664_LIB64 */
#else
#error "codectl: user space for x86-64 or little-endian arm64 only"
#endif

#endif /* CODECTL_MACHINE_H */
