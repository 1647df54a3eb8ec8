/* SPDX-License-Identifier: GPL-2.0 */
#ifndef CODECTL_TOOLS_COMMANDS_H
#define CODECTL_TOOLS_COMMANDS_H

/* The commands of their own files; @argc/@argv: the arguments after it. */
int cmd_import(int argc, char **argv);	/* import.c */
int cmd_daemon(int argc, char **argv);	/* daemon.c */
int cmd_status(int argc, char **argv);	/* status.c */

#endif
