/* SPDX-License-Identifier: GPL-2.0 */
#ifndef CODECTL_VERSION_H
#define CODECTL_VERSION_H

/* Keep equal to PACKAGE_VERSION in dkms.conf (tests check it). */
#define CODECTL_MODULE_VERSION "0.1.0"

#endif /* CODECTL_VERSION_H */
