/* libFuzzer target: the selection rules. The input is read as a rules file
 * (coll/rules_file.c: `family = rules` lines) and, whole, as one family's CARACAL_<FAMILY>
 * value (coll/select.c: [kind/]alg[:k][@bytes][#ranks] ...); then every family is asked
 * for decisions at a few communicator and message sizes. Whatever the rules say, a
 * decision must name `native` or an algorithm of the family that can run there (a comm
 * decision one with a start function, a level decision a level primitive). */
#include "coll/call.h"
#include "coll/rules_file.h"
#include "coll/select.h"
#include "log.h"
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
    (void)argc, (void)argv;
    setenv("CARACAL_RULES", "none", 1); /* no rules file from the home directory */
    caracal_world_rank = 1;              /* job warnings come from rank 0: keep the run quiet */
    return 0;
}

static void check_level(int c, const caracal_choice *ch, const char *kind, int n)
{
    caracal_alg a = caracal_select_level(ch, kind, n);
    if (!memchr(a.alg, 0, sizeof a.alg))
        __builtin_trap();
    if (strcmp(a.alg, "native") && !caracal_alg_find(c, a.alg))
        __builtin_trap();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size > 300 * 1024) /* the rules file reader refuses more than 256 KiB */
        return 0;
    char *text = malloc(size + 1);
    if (!text)
        return 0;
    memcpy(text, data, size);
    text[size] = 0; /* a NUL ends the text (the file reader refuses files holding one) */
    caracal_rules_file_parse("fuzz", text);
    int chosen = size ? data[0] % CARACAL_NCOLL : 0;
    for (int c = 0; c < CARACAL_NCOLL; c++)
        if (!(caracal_family_flags(c) & CARACAL_FAM_NATIVE))
            caracal_set_rules(caracal_coll_names[c], c == chosen ? text : NULL);
    /* a small grid (the rule walk is the cost of an input): the edges and one point inside */
    static const int sizes[] = {1, 2, 5, 1 << 20};
    static const size_t bytes[] = {0, 8, 8192, SIZE_MAX};
    for (int c = 0; c < CARACAL_NCOLL; c++) {
        if (caracal_family_flags(c) & CARACAL_FAM_NATIVE)
            continue;
        for (unsigned i = 0; i < sizeof sizes / sizeof *sizes; i++)
            for (unsigned j = 0; j < sizeof bytes / sizeof *bytes; j++) {
                caracal_choice ch;
                memset(&ch, 0, sizeof ch);
                int ret = caracal_select(c, sizes[i], bytes[j], &ch);
                if (!memchr(ch.top.alg, 0, sizeof ch.top.alg))
                    __builtin_trap();
                if (ret) {
                    const caracal_alg_info *a = caracal_alg_find(c, ch.top.alg);
                    if (!a || !a->start)
                        __builtin_trap();
                } else if (strcmp(ch.top.alg, "native")) {
                    __builtin_trap();
                }
                if (ret) {
                    check_level(c, &ch, "node", sizes[i]);
                    check_level(c, &ch, "top", sizes[i]);
                    check_level(c, &ch, "socket", 2);
                }
            }
    }
    /* leave nothing allocated between inputs: the rules of the chosen family and the file's
     * texts (libFuzzer runs its leak check after any input that allocates more than it frees) */
    caracal_set_rules(caracal_coll_names[chosen], NULL);
    caracal_rules_file_parse("fuzz", "");
    free(text);
    return 0;
}
