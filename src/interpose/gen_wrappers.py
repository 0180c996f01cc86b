#!/usr/bin/env python3
"""Generate a C wrapper for every MPI_* function of the MPI library we build against.

Input: the preprocessed mpi.h of that library (so every prototype is spelled exactly
as the library declares it, const-ness and large-count variants included) and
src/core/interpose.def. Output: one C file with, for each MPI_X that has a PMPI_X twin,

    RET MPI_X(PARAMS) {
        CARACAL_PROF_ENTER(CARACAL_FN_MPI_X);
        RET rc = IMPL(ARGS);                  // PMPI_X, or caracal_impl_MPI_X (interpose.def)
        CARACAL_PROF_EXIT(CARACAL_FN_MPI_X);
        return rc;
    }

plus a header with the function-id enum and names. The profiler defines the hook macros
in src/prof/hooks.h. Reading the library's own header means Caracal interposes the exact
API of whatever MPI it is built for, with no hand-kept list to fall out of date.
"""
import re
import sys

SKIP_PREFIXES = ("MPI_T_",)  # the tools interface: no communication, not worth interposing
# Fortran 2008 status conversions: declared in MPICH's mpi.h but defined in the Fortran library.
SKIP_PATTERN = re.compile(r"f08")


def read_def(path):
    impl, hand = set(), set()
    text = re.sub(r"/\*.*?\*/", "", open(path).read(), flags=re.S)
    for kind, name in re.findall(r"CARACAL_(IMPL|HANDWRITTEN)\((\w+)\)", text):
        (impl if kind == "IMPL" else hand).add(name)
    return impl, hand


def strip_attributes(s):
    """Remove __attribute__((...)) and __asm__(...) with balanced parentheses."""
    out, i = [], 0
    while i < len(s):
        m = re.compile(r"__attribute__|__asm__|__asm").match(s, i)
        if m:
            j = m.end()
            while j < len(s) and s[j].isspace():
                j += 1
            if j < len(s) and s[j] == "(":
                depth = 0
                while j < len(s):
                    depth += s[j] == "("
                    depth -= s[j] == ")"
                    j += 1
                    if depth == 0:
                        break
            i = j
            continue
        out.append(s[i])
        i += 1
    return "".join(out)


def statements(text):
    """Top-level declarations (split on ';' outside braces and parentheses)."""
    depth, start = 0, 0
    for i, c in enumerate(text):
        if c in "({":
            depth += 1
        elif c in ")}":
            depth -= 1
        elif c == ";" and depth == 0:
            yield text[start:i]
            start = i + 1


def split_params(params):
    parts, depth, cur = [], 0, ""
    for c in params:
        if c == "," and depth == 0:
            parts.append(cur)
            cur = ""
            continue
        depth += c in "(["
        depth -= c in ")]"
        cur += c
    parts.append(cur)
    return [p.strip() for p in parts]


def param_name(p):
    m = re.search(r"\(\s*\*\s*(\w+)\s*\)", p)  # function pointer: RET (*name)(...)
    if m:
        return m.group(1)
    p = re.sub(r"\[[^\]]*\]", "", p).strip()
    m = re.search(r"(\w+)\s*$", p)
    return m.group(1) if m else None


PROTO = re.compile(r"^\s*(?:extern\s+)?([\w\s\*]+?)\s*\b(P?MPIX?_\w+)\s*\((.*)\)\s*$", re.S)


def parse(text):
    funcs = {}
    for st in statements(text):
        st = strip_attributes(st).strip()
        if not st or st.startswith("typedef") or "{" in st:
            continue
        m = PROTO.match(st)
        if not m:
            continue
        ret, name, params = " ".join(m.group(1).split()), m.group(2), m.group(3).strip()
        funcs[name] = (ret, params)
    return funcs


# ---- Fortran ----
# Open MPI's Fortran bindings call PMPI_* directly, so C wrappers never see Fortran callers.
# Caracal therefore exports the Fortran symbols too (mpi_send_, mpi_send__, mpi_send, MPI_SEND,
# and Open MPI's mpi_send_f08_): each wrapper accounts for the call and passes every argument
# unchanged to the library's own PMPI Fortran entry (pmpi_send_, found with dlsym). Fortran
# passes everything by reference plus one hidden length per CHARACTER argument, so the
# arguments are all pointer-sized integers and a pass-through needs only their number.
# MPICH's Fortran entries call the C MPI_* functions: the profiler's per-thread depth flag
# keeps those nested calls from being counted twice.
FORTRAN_SKIP = {"MPI_Pcontrol", "MPI_Wtime", "MPI_Wtick"}  # Pcontrol: src/prof/profiler.c
FORTRAN_NARGS = {"MPI_Init": 1, "MPI_Init_thread": 3}      # no argc/argv in Fortran


def fortran_functions(funcs, hand):
    out = []
    for name in sorted(funcs):
        if not name.startswith("MPI_") or name.startswith(SKIP_PREFIXES) or SKIP_PATTERN.search(name):
            continue
        if "P" + name not in funcs or name in FORTRAN_SKIP:
            continue
        if re.search(r"(c2f|f2c|f082c|c2f08)", name, re.I) or (name.endswith("_c") and name[:-2] in funcs):
            continue
        ret, params = funcs[name]
        if ret != "int":
            continue
        plist = [] if params in ("", "void") else split_params(params)
        if any(p == "..." for p in plist):
            continue
        nargs = FORTRAN_NARGS.get(name, len(plist) + 1 + sum("char" in p for p in plist))
        out.append((name, nargs, any(re.search(r"\bvoid\s*\*", p) for p in plist)))
    return out


FORTRAN_LIFETIME = {"MPI_Init", "MPI_Init_thread", "MPI_Finalize", "MPI_Abort"}


def write_fortran(c, fortran):
    c.write("\n/* ---- Fortran entry points (see gen_wrappers.py) ---- */\n")
    c.write('#include "prof/fhooks.h"\n\n')
    for name, n, has_buf in fortran:
        low = name.lower()
        params = ", ".join(f"void *a{i}" for i in range(n))
        args = ", ".join(f"a{i}" for i in range(n))
        types = ", ".join(["void *"] * n)
        # flavor 0: mpif.h / `use mpi`; 1: mpi_f08 (Open MPI's name, MPICH's for calls without
        # a choice buffer); 2: MPICH's mpi_f08 name for calls with a choice buffer (f08ts).
        flavors = [(0, [low + "_", low + "__", low, name.upper()]), (1, [low + "_f08_"])]
        if has_buf:
            flavors.append((2, [low + "_f08ts_"]))
        for flavor, names in flavors:
            impl = f"caracal_f{flavor}_{name}"
            fp = f"fp{flavor}_{name}"
            c.write(f"static caracal_fptr {fp};\n")
            c.write(f"void {impl}({params});\n")
            c.write(f"void {impl}({params})\n{{\n")
            if flavor == 0:
                resolve = f'caracal_fortran_target("p{low}_")'
            elif flavor == 1:
                resolve = (f'(CARACAL_F08_SITE_ONLY ? caracal_fortran_next("{low}_f08_")'
                           f' : caracal_fortran_target("p{low}_f08_"))')
            else:
                resolve = f'caracal_fortran_next("{low}_f08ts_")'
            c.write(f"    if (!{fp})\n        {fp} = {resolve};\n")
            c.write(f"    void (*t_)({types}) = (void (*)({types})){fp};\n")
            site_only = flavor == 2 or (flavor == 1 and name not in FORTRAN_LIFETIME)
            if site_only:
                c.write(f"#if CARACAL_F08_SITE_ONLY && !defined(CARACAL_FHOOK_{name})\n" if flavor == 1 else "#if 1\n")
                c.write(f"    CARACAL_F08_SITE(CARACAL_FN_{name}, t_({args}));\n#else\n")
            c.write(f"#ifdef CARACAL_FHOOK_{name}\n    CARACAL_FHOOK_{name}({'0' if flavor == 0 else 'CARACAL_F08_K'}, t_, {args});\n#else\n")
            c.write(f"    CARACAL_PROF_ENTER(CARACAL_FN_{name});\n    t_({args});\n")
            c.write("    CARACAL_PROF_EXIT(0);\n#endif\n")
            if site_only:
                c.write("#endif\n")
            c.write("}\n")
            for sym in names:
                c.write(f'void {sym}({types}) __attribute__((alias("{impl}")));\n')
            c.write("\n")


def main(preprocessed, interpose_def, out_c, out_h):
    impl, hand = read_def(interpose_def)
    funcs = parse(open(preprocessed).read())
    wrapped, skipped = [], []
    for name in sorted(funcs):
        if not name.startswith("MPI_") or name.startswith(SKIP_PREFIXES) or SKIP_PATTERN.search(name):
            continue
        if "P" + name not in funcs:
            continue  # no profiling twin: cannot interpose
        if name in hand:
            continue  # a module defines it
        ret, params = funcs[name]
        plist = [] if params in ("", "void") else split_params(params)
        if any(p == "..." for p in plist):
            if name not in hand:
                skipped.append(name + " (varargs)")
            continue
        names = [param_name(p) for p in plist]
        if any(n is None for n in names):
            skipped.append(name + " (unparsed parameters)")
            continue
        wrapped.append((name, ret, params if plist else "void", names))
    missing_impl = impl - {w[0] for w in wrapped}
    if missing_impl:
        sys.exit(f"gen_wrappers: interpose.def names functions this MPI does not declare: {sorted(missing_impl)}")

    with open(out_h, "w") as h:
        h.write("/* Generated by src/interpose/gen_wrappers.py from this MPI library's mpi.h. Do not edit. */\n")
        h.write("#ifndef CARACAL_GEN_FUNCS_H\n#define CARACAL_GEN_FUNCS_H\n#include <mpi.h>\n\n")
        h.write("enum caracal_fn {\n")
        for name, *_ in wrapped:
            h.write(f"    CARACAL_FN_{name},\n")
        for name in sorted(hand):
            h.write(f"    CARACAL_FN_{name},\n")
        h.write("    CARACAL_FN_COUNT\n};\n\n")
        h.write("/** MPI function names indexed by enum caracal_fn. */\n")
        h.write("extern const char *const caracal_fn_names[CARACAL_FN_COUNT];\n\n")
        for name, ret, params, _ in wrapped:
            if name in impl:
                h.write(f"{ret} caracal_impl_{name}({params});\n")
        h.write("\n#endif\n")

    with open(out_c, "w") as c:
        c.write("/* Generated by src/interpose/gen_wrappers.py from this MPI library's mpi.h. Do not edit.\n")
        c.write(f" * {len(wrapped)} MPI functions interposed; not interposed: {', '.join(skipped) or 'none'} */\n")
        c.write("/* Deprecated MPI functions are interposed on purpose: applications still call them. */\n")
        c.write('#pragma GCC diagnostic ignored "-Wdeprecated-declarations"\n')
        c.write('#include "gen_funcs.h"\n#include "prof/hooks.h"\n\n')
        c.write("const char *const caracal_fn_names[CARACAL_FN_COUNT] = {\n")
        for name, *_ in wrapped:
            c.write(f'    "{name}",\n')
        for name in sorted(hand):
            c.write(f'    "{name}",\n')
        c.write("};\n\n")
        for name, ret, params, names in wrapped:
            target = f"caracal_impl_{name}" if name in impl else f"P{name}"
            args = ", ".join(names)
            hook = f"CARACAL_HOOK_{name}"
            c.write(f"{ret} {name}({params})\n{{\n")
            c.write(f"#ifdef {hook}\n    {hook}({target}, {args or 'CARACAL_NOARGS'});\n#else\n")
            c.write(f"    CARACAL_PROF_ENTER(CARACAL_FN_{name});\n")
            c.write(f"    {ret} rc = {target}({args});\n")
            c.write(f"    CARACAL_PROF_EXIT(CARACAL_FN_{name});\n    return rc;\n#endif\n}}\n\n")
        known = {w[0] for w in wrapped} | hand
        fortran = [f for f in fortran_functions(funcs, hand) if f[0] in known]
        write_fortran(c, fortran)
    print(f"gen_wrappers: {len(wrapped)} MPI functions interposed, {len(skipped)} skipped, "
          f"{len(fortran)} Fortran entry points", file=sys.stderr)


if __name__ == "__main__":
    if len(sys.argv) != 5:
        sys.exit("usage: gen_wrappers.py PREPROCESSED_MPI_H INTERPOSE_DEF OUT.c OUT.h")
    main(*sys.argv[1:])
