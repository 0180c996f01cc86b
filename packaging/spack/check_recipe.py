#!/usr/bin/env python3
"""Offline check of the Spack recipe (no Spack needed; CI runs it through
tests/python/test_install.py):

    python3 packaging/spack/check_recipe.py      # exit 0 and one line, or the problems

- the repository is a Spack package repository (API v2: spack_repo/<namespace>/repo.yaml)
- package.py executes against stand-ins of Spack's package API (so it parses, imports only
  what Spack provides, and its directives are well formed), and what it declares matches
  the build:
  - its newest version is python/caracal/VERSION,
  - every CMake variable it sets is one the build declares (option() or a CACHE entry), and
    every build option that changes what is installed has a variant,
  - it needs the CMake version the build requires, an MPI, hwloc, C and Fortran,
  - with +cli, the Python packages the CLI imports (pyproject.toml's dependencies) as run
    dependencies; the plotting ones (numpy, matplotlib) with +cli +plots,
  - its run environment puts each Python dependency's site directory on PYTHONPATH, in
    whichever layout that dependency was installed (pip --prefix's lib/pythonX.Y/site-packages,
    Debian's local/lib/pythonX.Y/dist-packages): Spack itself names only the external
    Python's own scheme.
"""
import re
import sys
import tempfile
import types
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[1]
REPO = HERE / "spack_repo" / "caracal"
RECIPE = REPO / "packages" / "caracal" / "package.py"
# CMake options that change what gets installed: each must be a variant
INSTALL_OPTIONS = {"CARACAL_INSTALL_CLI"}
# variables the recipe may set that CMake itself defines
CMAKE_BUILTIN = {"CMAKE_C_COMPILER", "CMAKE_Fortran_COMPILER", "Python3_EXECUTABLE"}
# Python packages of pyproject.toml imported for `caracal report`'s plots only: behind +plots
PLOTS_ONLY = {"numpy", "matplotlib"}


class Recorder:
    def __init__(self):
        self.versions, self.variants, self.depends = [], {}, []
        self.defines = []  # (cmake variable, variant or None)


def load_recipe(path: Path = RECIPE) -> Recorder:
    """Execute package.py with stand-ins for spack.package and the CMake build system."""
    rec = Recorder()

    def version(ver, *args, **kw):
        rec.versions.append((str(ver), kw))

    def variant(name, default=None, description="", values=None, **kw):
        if not description:
            raise ValueError(f"variant {name} has no description")
        rec.variants[name] = default

    def depends_on(spec, when=None, type=None, **kw):
        rec.depends.append((spec, " ".join(when.split()) if when else when, type))

    def directive_noop(*args, **kw):
        return None

    class CMakePackage:
        run_tests = False

        def __init__(self, spec=None):
            self.spec = spec

        def define(self, name, value):
            rec.defines.append((name, None))
            return f"-D{name}={value}"

        def define_from_variant(self, name, variant_name=None):
            rec.defines.append((name, variant_name or name.lower()))
            return f"-D{name}"

    package_api = types.ModuleType("spack.package")
    names = dict(version=version, variant=variant, depends_on=depends_on, conflicts=directive_noop,
                 maintainers=directive_noop, license=directive_noop, requires=directive_noop,
                 provides=directive_noop, patch=directive_noop, resource=directive_noop,
                 join_path=lambda *p: "/".join(map(str, p)), run_after=lambda *a, **k: (lambda f: f),
                 on_package_attributes=lambda **k: (lambda f: f))
    package_api.__dict__.update(names)
    package_api.__all__ = list(names)
    cmake_mod = types.ModuleType("spack_repo.builtin.build_systems.cmake")
    cmake_mod.CMakePackage = CMakePackage
    stand_ins = {"spack": types.ModuleType("spack"), "spack.package": package_api,
                 "spack_repo": types.ModuleType("spack_repo"),
                 "spack_repo.builtin": types.ModuleType("spack_repo.builtin"),
                 "spack_repo.builtin.build_systems": types.ModuleType("spack_repo.builtin.build_systems"),
                 "spack_repo.builtin.build_systems.cmake": cmake_mod}
    saved = {k: sys.modules.get(k) for k in stand_ins}
    sys.modules.update(stand_ins)
    try:
        ns = {"__name__": "spack_repo.caracal.packages.caracal.package"}
        exec(compile(path.read_text(), str(path), "exec"), ns)
    finally:
        for k, v in saved.items():
            if v is None:
                sys.modules.pop(k, None)
            else:
                sys.modules[k] = v
    cls = ns.get("Caracal")
    if cls is None:
        raise ValueError("package.py defines no class Caracal")
    rec.cls = cls

    # cmake_args with a spec stand-in, once per MPI family
    class Dep:
        mpicc, mpifc = "/mpi/bin/mpicc", "/mpi/bin/mpif90"
        prefix = types.SimpleNamespace(bin="/nonexistent/bin", lib="/nonexistent/lib")
        command = types.SimpleNamespace(path="/python/bin/python3")

    class Spec:
        def __init__(self, openmpi):
            self.openmpi = openmpi

        def __getitem__(self, name):
            return Dep()

        def satisfies(self, constraint):
            return constraint == "^openmpi" and self.openmpi

    for openmpi in (True, False):
        args = cls(Spec(openmpi)).cmake_args()
        family = [a for a in args if a.startswith("-DCARACAL_MPI=")]
        if family != [f"-DCARACAL_MPI={'openmpi' if openmpi else 'mpich'}"]:
            raise ValueError(f"cmake_args sets CARACAL_MPI wrongly for openmpi={openmpi}: {family}")
    return rec


def cmake_declared() -> set:
    """Variables the build declares: option(NAME ...) and set(NAME ... CACHE ...)."""
    names = set()
    files = [ROOT / "CMakeLists.txt", *ROOT.glob("cmake/*.cmake"), *ROOT.glob("src/**/CMakeLists.txt")]
    for f in files:
        text = f.read_text()
        names |= set(re.findall(r"^\s*option\(\s*(\w+)", text, re.M))
        names |= set(re.findall(r"^\s*set\(\s*(\w+)\s[^)]*\bCACHE\b", text, re.M))
    return names


def problems(recipe: Path = RECIPE) -> list:
    """What is wrong with the recipe (an empty list: nothing)."""
    out = []
    meta = (REPO / "repo.yaml").read_text() if (REPO / "repo.yaml").exists() else ""
    if not re.search(r"^\s*namespace:\s*caracal\s*$", meta, re.M) or not re.search(r"^\s*api:\s*v2\.\d+\s*$", meta, re.M):
        out.append(f"{REPO / 'repo.yaml'}: needs namespace: caracal and api: v2.x")
    try:
        rec = load_recipe(recipe)
    except Exception as e:  # the recipe itself is broken: report it as one problem
        return out + [f"{recipe}: {type(e).__name__}: {e}"]
    want = (ROOT / "python" / "caracal" / "VERSION").read_text().split()[0]
    numbered = [v for v, kw in rec.versions if re.fullmatch(r"\d+(\.\d+)*", v)]
    key = lambda v: tuple(int(x) for x in v.split("."))  # noqa: E731
    if not numbered or max(numbered, key=key) != want:
        out.append(f"newest version in the recipe is {max(numbered, key=key) if numbered else None}, "
                   f"python/caracal/VERSION says {want}")
    declared = cmake_declared()
    for name, var in dict.fromkeys(rec.defines):
        if name not in declared and name not in CMAKE_BUILTIN:
            out.append(f"the recipe sets {name}, which the build does not declare")
        if var is not None and var not in rec.variants:
            out.append(f"define_from_variant({name}, {var}): no such variant")
    from_variants = {n for n, v in rec.defines if v is not None}
    for opt in sorted(INSTALL_OPTIONS - from_variants):
        out.append(f"build option {opt} has no variant in the recipe")
    for opt in sorted(INSTALL_OPTIONS - declared):
        out.append(f"check_recipe.py expects build option {opt}, which the build no longer declares")
    cmake_min = re.search(r"cmake_minimum_required\(VERSION\s+([\d.]+)", (ROOT / "CMakeLists.txt").read_text()).group(1)
    specs = [d[0] for d in rec.depends]
    for need in ("mpi", "c", "fortran", f"cmake@{cmake_min}:"):
        if need not in specs:
            out.append(f"the recipe does not depend on {need}")
    if not any(s.startswith("hwloc") for s in specs):
        out.append("the recipe does not depend on hwloc")
    for name in cli_dependencies():
        when_ = "+cli +plots" if name in PLOTS_ONLY else "+cli"
        if not any(spec.split("@")[0] == f"py-{name}" and when == when_ and "run" in str(kind)
                   for spec, when, kind in rec.depends):
            out.append(f"the CLI imports {name} (pyproject.toml), but the recipe has no "
                       f'depends_on("py-{name}", type="run", when="{when_}")')
    if "plots" not in rec.variants:
        out.append("the recipe has no variant plots (numpy and matplotlib for caracal report)")
    try:
        missing = run_env_misses(recipe)
    except Exception as e:
        missing = [f"{type(e).__name__}: {e}"]
    for m in missing:
        out.append(f"the recipe's run environment leaves a Python dependency off PYTHONPATH: {m}")
    return out


def _recipe_class(recipe: Path):
    return load_recipe(recipe).cls


def run_env_misses(recipe: Path = RECIPE) -> list:
    """Run the recipe's setup_run_environment for +cli with two Python dependencies installed in
    the two layouts Spack meets (pip --prefix, Debian's scheme) in a temporary directory; the
    site directories it did not put on PYTHONPATH."""
    rec_cls = _recipe_class(recipe)
    with tempfile.TemporaryDirectory() as tmp:
        sites = {"py-jsonschema": Path(tmp, "pip", "lib", "python3.11", "site-packages"),
                 "py-rich": Path(tmp, "deb", "local", "lib", "python3.11", "dist-packages")}
        for d in sites.values():
            d.mkdir(parents=True)
        deps = [types.SimpleNamespace(name=n, prefix=str(d.parents[2] if n == "py-jsonschema" else d.parents[3]))
                for n, d in sites.items()]
        deps.append(types.SimpleNamespace(name="hwloc", prefix=str(Path(tmp, "hwloc"))))

        class Spec:
            def satisfies(self, constraint):
                return constraint == "+cli"

            def dependencies(self, name=None, deptype=None):
                return deps

        class Env:
            def __init__(self):
                self.paths = {}

            def set(self, name, value):
                pass

            def prepend_path(self, name, value):
                self.paths.setdefault(name, []).insert(0, str(value))

        pkg = rec_cls(Spec())
        pkg.prefix = types.SimpleNamespace(lib=str(Path(tmp, "caracal", "lib")))
        env = Env()
        pkg.setup_run_environment(env)
        return [str(d) for d in sites.values() if str(d) not in env.paths.get("PYTHONPATH", [])]


def cli_dependencies() -> list:
    """pyproject.toml's dependencies, by name (PLOTS_ONLY among them: behind +plots)."""
    text = (ROOT / "pyproject.toml").read_text()
    deps = re.search(r"^dependencies\s*=\s*\[([^\]]*)\]", text, re.M).group(1)
    names = [re.match(r"[A-Za-z0-9_.-]+", d).group(0).lower() for d in re.findall(r'"([^"]+)"', deps)]
    return names


def main() -> int:
    found = problems()
    for p in found:
        print(f"check_recipe: {p}", file=sys.stderr)
    if not found:
        rec = load_recipe()
        print(f"check_recipe: ok (versions {', '.join(v for v, _ in rec.versions)}; "
              f"variants {', '.join(sorted(rec.variants))})")
    return 1 if found else 0


if __name__ == "__main__":
    sys.exit(main())
