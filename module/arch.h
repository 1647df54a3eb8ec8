/* SPDX-License-Identifier: GPL-2.0 */
/* The unwinder's architecture: one header per architecture. */
#ifndef CODECTL_ARCH_H
#define CODECTL_ARCH_H

#if defined(CONFIG_X86_64)
#include "arch-x86_64.h"
#elif defined(CONFIG_ARM64) && !defined(CONFIG_CPU_BIG_ENDIAN)
#include "arch-arm64.h"
#else
#error "codectl: the unwinder supports x86-64 and little-endian arm64 only"
#endif

#endif /* CODECTL_ARCH_H */
