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

and, for the hot entry points prof/hooks.h marks (CARACAL_TAILCALL_MPI_X: the collectives),

    RET MPI_X(PARAMS) {
        if (!caracal_prof_on) return IMPL(ARGS);          // a load, a branch, a tail call
        return caracal_profiled_MPI_X(ARGS, return address); // the hook, out of line
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
    """(impl, hand, optional): CARACAL_IMPL names, CARACAL_HANDWRITTEN names,
    CARACAL_IMPL_IF_DECLARED names (implemented only where this library declares them)."""
    impl, hand, optional = set(), set(), set()
    text = re.sub(r"/\*.*?\*/", "", open(path).read(), flags=re.S)
    for kind, name in re.findall(r"CARACAL_(IMPL_IF_DECLARED|IMPL|HANDWRITTEN)\((\w+)\)", text):
        {"IMPL": impl, "HANDWRITTEN": hand, "IMPL_IF_DECLARED": optional}[kind].add(name)
    return impl, hand, optional


def resolve_optional(optional, funcs, impl):
    """CARACAL_IMPL_IF_DECLARED(MPI_X): implemented where this MPI declares MPI_X, or only its
    pre-standard extension name MPIX_X (Open MPI 4.1's persistent collectives in mpi-ext.h),
    whose wrapper then runs caracal_impl_MPI_X. Returns {wrapped name: (MPI_X, native PMPI
    name)} for gen_funcs.h, which tells the C code what exists and what the native call is."""
    found = {}
    for name in sorted(optional):
        ext = "MPIX_" + name[len("MPI_"):]
        if name in funcs and "P" + name in funcs:
            impl.add(name)
            found[name] = (name, "P" + name)
        elif ext in funcs and "P" + ext in funcs:
            found[ext] = (name, "P" + ext)
    return found


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

# ---- Fortran entries of the functions Caracal implements (interpose.def CARACAL_IMPL) ----
# A pass-through would hand these to the library's Fortran entry, which (Open MPI; MPICH's
# mpi_f08 without a choice buffer) calls PMPI_* and bypasses Caracal. So their entries
# convert the Fortran arguments to C (src/core/fortran.[ch]) and call the C wrapper MPI_X,
# which profiles and runs caracal_impl_MPI_X. One rule per kind of C parameter, picked by
# type and name; a parameter no rule knows stops the build, so a new CARACAL_IMPL function
# gets its rule rather than a wrong conversion.
#   kind: (pre-call statements, C argument, statements after a successful call (or
#          MPI_ERR_IN_STATUS: the outputs are set),
#          statements after any call); {f} is the Fortran argument, {v} the local, {n} the
#          element count of the function, {filled} how many output entries are valid.
FORTRAN_CONVERT = {
    "buffer": ("", "caracal_fortran_buf({f})", "", ""),
    "comm": ("", "PMPI_Comm_f2c(CARACAL_FINT({f}))", "", ""),
    "datatype": ("", "PMPI_Type_f2c(CARACAL_FINT({f}))", "", ""),
    "op": ("", "PMPI_Op_f2c(CARACAL_FINT({f}))", "", ""),
    "info": ("", "PMPI_Info_f2c(CARACAL_FINT({f}))", "", ""),
    "request": ("", "PMPI_Request_f2c(CARACAL_FINT({f}))", "", ""),
    "comm_out": ("MPI_Comm {v} = MPI_COMM_NULL;", "&{v}", "CARACAL_FINT({f}) = PMPI_Comm_c2f({v});", ""),
    "request_inout": ("MPI_Request {v} = PMPI_Request_f2c(CARACAL_FINT({f}));", "&{v}",
                      "CARACAL_FINT({f}) = PMPI_Request_c2f({v});", ""),
    "requests": ("MPI_Request {v}_s[CARACAL_FSMALL], *{v} = caracal_freqs_in({f}, {n}, {v}_s);", "{v}", "",
                 "caracal_freqs_out({f}, {v}, {n}, {v}_s);"),
    "status": ("MPI_Status {v}_s, *{v} = caracal_fstatus_in(K, {f}, &{v}_s);", "{v}",
               "caracal_fstatus_out(K, {f}, {v});", ""),
    "statuses": ("MPI_Status {v}_s[CARACAL_FSMALL], *{v} = caracal_fstatuses_in(K, {f}, {n}, {v}_s);", "{v}", "",
                 "caracal_fstatuses_out(K, {f}, {v}, rc_ == MPI_SUCCESS || rc_ == MPI_ERR_IN_STATUS ? {filled} : 0, {v}_s);"),
    "flag_out": ("int {v} = 0;", "&{v}", "caracal_fortran_set_logical({f}, {v});", ""),
    "index_out": ("int {v} = MPI_UNDEFINED;", "&{v}", "CARACAL_FINT({f}) = caracal_fortran_index({v});", ""),
    "outcount": ("int {v} = MPI_UNDEFINED;", "&{v}", "CARACAL_FINT({f}) = {v};", ""),
    "indices_out": ("", "(int *){f}", "caracal_fortran_indices((int *){f}, {filled});", ""),
    "logicals": ("int {v}_s[CARACAL_FSMALL], *{v} = caracal_flogicals_in({f}, {n}, {v}_s);", "{v}", "",
                 "caracal_fints_done({v}, {v}_s);"),
    "weights": ("", "caracal_fortran_weights({f})", "", ""),
    "ints": ("", "(const int *){f}", "", ""),
    "logical": ("", "caracal_fortran_logical({f})", "", ""),
    "int": ("", "CARACAL_FINT({f})", "", ""),
}


def fortran_kind(decl, name):
    """The FORTRAN_CONVERT rule of one C parameter, or None."""
    t = re.sub(r"\bconst\b", "", decl)
    t = re.sub(r"\b" + name + r"\b", "", t)
    t = re.sub(r"\s+", "", t).replace("[]", "*")
    by_type = {"void*": "buffer", "MPI_Comm": "comm", "MPI_Datatype": "datatype", "MPI_Op": "op",
               "MPI_Info": "info", "MPI_Request": "request", "MPI_Comm*": "comm_out"}
    if t in by_type:
        return by_type[t]
    if t == "MPI_Request*":
        return "requests" if name.startswith("array_of") else "request_inout"
    if t == "MPI_Status*":
        return "statuses" if name.startswith("array_of") else "status"
    if t == "int*":
        if "const" in decl:
            return "logicals" if name == "periods" else "weights" if name.endswith("weights") else "ints"
        return {"flag": "flag_out", "index": "index_out", "indx": "index_out", "outcount": "outcount",
                "array_of_indices": "indices_out"}.get(name)
    if t == "int":
        return "logical" if name == "reorder" else "int"
    return None


def fortran_convert_body(name, plist, K, c):
    """Body of a converting Fortran entry: arguments a0.. then IERROR (NULL when an mpi_f08
    caller omits it)."""
    names = [param_name(p) for p in plist]
    kinds = [fortran_kind(p, n) for p, n in zip(plist, names)]
    if None in kinds:
        bad = [p for p, k in zip(plist, kinds) if k is None]
        sys.exit(f"gen_wrappers: no Fortran conversion rule for {name} parameter(s) {bad}")
    ints = [i for i, k in enumerate(kinds) if k == "int"]
    n = f"CARACAL_FINT(a{ints[0]})" if ints else "0"
    filled = f"v{kinds.index('outcount')}" if "outcount" in kinds else n
    if "flag_out" in kinds:  # Testall: the statuses are set only when flag is true
        filled = f"(v{kinds.index('flag_out')} ? {filled} : 0)"
    c.write(f"    enum {{ K = {K} }};\n    (void)K;\n")
    pre, args, ok, always = [], [], [], []
    for i, k in enumerate(kinds):
        fmt = dict(f=f"a{i}", v=f"v{i}", n=n, filled=filled)
        r = [x.format(**fmt) for x in FORTRAN_CONVERT[k]]
        pre.append(r[0]), args.append(r[1]), ok.append(r[2]), always.append(r[3])
    for s in filter(None, pre):
        c.write(f"    {s}\n")
    c.write("    CARACAL_FSITE_LEND();\n")
    c.write(f"    int rc_ = {name}({', '.join(args)});\n")
    c.write("    CARACAL_FSITE_END();\n")
    if any(ok):
        c.write("    if (rc_ == MPI_SUCCESS || rc_ == MPI_ERR_IN_STATUS) {\n")
        for s in filter(None, ok):
            c.write(f"        {s}\n")
        c.write("    }\n")
    for s in filter(None, always):
        c.write(f"    {s}\n")
    c.write(f"    if (a{len(plist)})\n        CARACAL_FINT(a{len(plist)}) = rc_;\n")


def write_fortran(c, fortran, funcs, impl_names):
    c.write("\n/* ---- Fortran entry points (see gen_wrappers.py) ---- */\n")
    c.write('#include "prof/fhooks.h"\n#include "fortran.h"\n\n')
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
            c.write(f"void {impl}({params});\n")
            convert = {0: "CARACAL_FCONVERT_MPIF", 1: "1"}.get(flavor) if name in impl_names else None
            if convert:  # flavor 0 converts where the library's mpif.h entries bypass MPI_*
                c.write(f"#if {convert}\n" if flavor == 0 else "")
                c.write(f"void {impl}({params})\n{{\n")
                fortran_convert_body(name, split_params(funcs[name][1]), 0 if flavor == 0 else "CARACAL_FK_F08", c)
                c.write("}\n")
                if flavor == 1:
                    for sym in names:
                        c.write(f'void {sym}({types}) __attribute__((alias("{impl}")));\n')
                    c.write("\n")
                    continue
                c.write("#else\n")
            c.write(f"static caracal_fptr {fp};\n")
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
            if convert:
                c.write("#endif\n")
            for sym in names:
                c.write(f'void {sym}({types}) __attribute__((alias("{impl}")));\n')
            c.write("\n")


def mpi_abi(text):
    """Whether this mpi.h is the MPI-5 standard ABI (mpi_abi.h: MPICH 5's mpicc_abi, Intel MPI's
    mpicc -mpi-abi). Its handles are pointers to incomplete structs with fixed predefined values,
    as in Open MPI, so Caracal's C code is the same; but it has no MPI_Fint and no f2c/c2f
    (MPI_Comm_toint/fromint instead), and standardises no Fortran entry names: a Fortran program
    reaches the library through that library's own Fortran layer, which Caracal cannot name.
    So an ABI build has no Fortran entry points (CARACAL_HAVE_FORTRAN 0).
    The marker is its handle type: `typedef struct MPI_ABI_Comm *MPI_Comm` (a library's own
    mpi.h may declare the ABI's new functions, MPI_Abi_get_version, too: Intel MPI 2021.19)."""
    return re.search(r"typedef\s+struct\s+MPI_ABI_Comm\s*\*\s*MPI_Comm\s*;", text) is not None


def smpi(text):
    """Whether this mpi.h is SimGrid SMPI's (a simulated MPI: `caracal simulate`). Its Fortran
    bindings live in libsimgrid and simulated programs are C, so no Fortran entry points."""
    return re.search(r"\bsmpi_main\s*\(", text) is not None


def main(preprocessed, interpose_def, out_c, out_h):
    impl, hand, optional = read_def(interpose_def)
    text = open(preprocessed).read()
    funcs = parse(text)
    abi = mpi_abi(text)
    fortran_ok = not abi and not smpi(text)
    optional_found = resolve_optional(optional, funcs, impl)
    ext_alias = {w: mpi for w, (mpi, _) in optional_found.items() if w != mpi}
    wrapped, skipped = [], []
    for name in sorted(funcs):
        if name in ext_alias:
            pass  # an MPIX_ name standing in for an MPI-4 function Caracal implements
        elif not name.startswith("MPI_") or name.startswith(SKIP_PREFIXES) or SKIP_PATTERN.search(name):
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
        h.write("#ifndef CARACAL_GEN_FUNCS_H\n#define CARACAL_GEN_FUNCS_H\n#include <mpi.h>\n")
        if ext_alias:
            h.write("#include <mpi-ext.h>\n")
        h.write("\n/* The MPI-5 standard ABI (mpi_abi.h) or a library's own; Fortran entry points (none in\n"
                " * an ABI build or under SMPI: gen_wrappers.py mpi_abi, smpi) */\n")
        h.write(f"#define CARACAL_MPI_ABI {int(abi)}\n#define CARACAL_HAVE_FORTRAN {int(fortran_ok)}\n")
        h.write("\n/* CARACAL_IMPL_IF_DECLARED functions this MPI has (interpose.def): CARACAL_HAVE_<MPI name>,\n"
                " * and CARACAL_NATIVE_<MPI name>, the library's own entry (PMPI_ or PMPIX_) */\n")
        for w, (mpi, native) in sorted(optional_found.items()):
            h.write(f"#define CARACAL_HAVE_{mpi} 1\n#define CARACAL_NATIVE_{mpi} {native}\n")
        h.write("\n")
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
            elif name in ext_alias:
                h.write(f"{ret} caracal_impl_{ext_alias[name]}({params});\n")
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
            target = (f"caracal_impl_{name}" if name in impl else
                      f"caracal_impl_{ext_alias[name]}" if name in ext_alias else f"P{name}")
            args = ", ".join(names)
            hook = f"CARACAL_HOOK_{name}"
            if re.search(r"(c2f|f2c)$", name):  # MPICH 5 also defines these as macros (MPICH ABI casts)
                c.write(f"#undef {name}\n")
            # a hot entry point (prof/hooks.h CARACAL_TAILCALL_<name>): its hook runs out of line,
            # so that with the profiler off the wrapper is a load, a branch and a tail call (the
            # hook inline made it save registers and reload stack arguments first: 12-20
            # instructions of every call, bench/entry_cost.py)
            split = f"defined({hook}) && defined(CARACAL_TAILCALL_{name})"
            if params.strip() not in ("", "void"):
                c.write(f"#if {split}\n#pragma push_macro(\"CARACAL_RA\")\n#undef CARACAL_RA\n"
                        f"#define CARACAL_RA caracal_ra_\n__attribute__((noinline, cold)) static {ret} "
                        f"caracal_profiled_{name}({params}, void *caracal_ra_)\n{{\n    {hook}({target}, {args});\n}}\n"
                        f"#pragma pop_macro(\"CARACAL_RA\")\n#endif\n")
            c.write(f"{ret} {name}({params})\n{{\n")
            if params.strip() not in ("", "void"):
                c.write(f"#if {split}\n    if (__builtin_expect(!caracal_prof_on, 1))\n        return {target}({args});\n"
                        f"    return caracal_profiled_{name}({args}, __builtin_return_address(0));\n#elif defined({hook})\n"
                        f"    {hook}({target}, {args});\n#else\n")
            else:
                c.write(f"#ifdef {hook}\n    {hook}({target}, {args or 'CARACAL_NOARGS'});\n#else\n")
            c.write(f"    CARACAL_PROF_ENTER(CARACAL_FN_{name});\n")
            c.write(f"    {ret} rc = {target}({args});\n")
            c.write(f"    CARACAL_PROF_EXIT(CARACAL_FN_{name});\n    return rc;\n#endif\n}}\n\n")
        known = {w[0] for w in wrapped} | hand
        fortran = [f for f in fortran_functions(funcs, hand) if f[0] in known] if fortran_ok else []
        if fortran_ok:
            write_fortran(c, fortran, funcs, impl)
    print(f"gen_wrappers: {len(wrapped)} MPI functions interposed, {len(skipped)} skipped, "
          f"{len(fortran)} Fortran entry points{' (MPI-5 standard ABI)' if abi else ''}", file=sys.stderr)


if __name__ == "__main__":
    if len(sys.argv) != 5:
        sys.exit("usage: gen_wrappers.py PREPROCESSED_MPI_H INTERPOSE_DEF OUT.c OUT.h")
    main(*sys.argv[1:])
