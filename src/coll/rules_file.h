/* The rules file (coll/rules_file.c): selection rules of several families in one file,
 * read once per job by world rank 0 and shared with every rank. */
#ifndef CARACAL_COLL_RULES_FILE_H
#define CARACAL_COLL_RULES_FILE_H

/** The path the rules come from (CARACAL_RULES, else the default location), or NULL. */
const char *caracal_rules_file_path(void);
/** Read and share the file (collective over MPI_COMM_WORLD once MPI is initialized). */
void caracal_rules_file_load(void);
/** Parse a rules file's text (what load does after reading it; also the fuzzer's entry),
 *  replacing the rules read before. origin names the file in warnings. */
void caracal_rules_file_parse(const char *origin, const char *text);
/** The file's rules for a family ("" if none). */
const char *caracal_rules_file_text(int family);

#endif
