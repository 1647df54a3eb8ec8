/* SPDX-License-Identifier: GPL-2.0 */
#ifndef CODECTL_TOOLS_IMPORT_H
#define CODECTL_TOOLS_IMPORT_H

/* codectl import ...: @argc/@argv are the arguments after "import". */
int cmd_import(int argc, char **argv);

#endif
