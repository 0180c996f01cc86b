"""Number formatting shared by the report's tables and plots."""


def seconds(t) -> str:
    if t is None:
        return "-"
    if t == 0:
        return "0"
    if t >= 100:
        return f"{t:.0f} s"
    if t >= 1:
        return f"{t:.2f} s"
    if t >= 1e-3:
        return f"{t * 1e3:.3g} ms"
    return f"{t * 1e6:.3g} us"


def size(b) -> str:
    """Bytes with binary units: 512 B, 8 KiB, 1.5 MiB."""
    if b is None:
        return "-"
    for unit, scale in (("GiB", 1 << 30), ("MiB", 1 << 20), ("KiB", 1 << 10)):
        if b >= scale:
            v = b / scale
            return f"{v:.0f} {unit}" if v >= 100 or v == int(v) else f"{v:.3g} {unit}"
    return f"{b:.0f} B" if b == int(b) else f"{b:.1f} B"


def count(n) -> str:
    return f"{n:,}"


def percent(part, whole) -> str:
    if not whole:
        return "-"
    p = 100.0 * part / whole
    return f"{p:.1f}" if p >= 0.05 or p == 0 else "<0.1"


def short_size(b) -> str:
    """Power-of-two sizes as bin labels: 0, 1, 2, 4, ..., 512, 1K, 2K, ..., 1M, ..., 1G."""
    for unit, shift in (("E", 60), ("P", 50), ("T", 40), ("G", 30), ("M", 20), ("K", 10)):
        if b >= 1 << shift and b % (1 << shift) == 0:
            return f"{b >> shift}{unit}"
    return str(b)


def bin_low(k: int) -> int:
    """Smallest size in log2 histogram bin k (bin 0 holds 0-byte calls, bin k >= 1 [2^(k-1), 2^k))."""
    return 0 if k == 0 else 1 << (k - 1)


def bin_label(k: int) -> str:
    return short_size(bin_low(k))


def bin_range(k: int) -> str:
    """Sizes in bin k as text: '0', '1', '2-4', '1K-2K' (from inclusive, to exclusive)."""
    if k <= 1:
        return bin_label(k)
    return f"{bin_label(k)}-{short_size(1 << k)}"


def shorten(text: str, width: int) -> str:
    """Keep the end of long paths, where the file name is."""
    if text is None or len(text) <= width:
        return text
    return "..." + text[-(width - 3):]


def _params_start(name: str) -> int:
    """Index of the '(' that opens the parameter list closing at the last top-level ')',
    or -1: 'ns::f<T>(A, B) const' -> index of '(' after 'f<T>'."""
    end = name.rfind(")")
    depth = 0
    for i in range(end, -1, -1):
        ch = name[i]
        if ch in ")>]":
            depth += 1
        elif ch in "(<[":
            depth -= 1
            if depth == 0 and ch == "(":
                return i
    return -1


def function_name(name, width: int = 40) -> str:
    """A (demangled C++) function name within about ``width`` characters by shortening its
    argument list, never its name: 'ExchangeHalo(SparseMatrix_STRUCT const&, Vector_STRUCT&)'
    -> 'ExchangeHalo(SparseMatrix_STRUCT const&, ...)' or 'ExchangeHalo(...)'. Template
    arguments of the name become <...> only if the name alone is still too long."""
    if name is None:
        return "?"
    if len(name) <= width:
        return name
    open_ = _params_start(name)
    if open_ <= 0:
        return name
    close = name.rfind(")")
    head, params, tail = name[:open_], name[open_ + 1:close], name[close + 1:]
    if len(head) + len(tail) + 5 > width:
        head = _drop_templates(head)
    args = _split_top(params)
    kept = []
    for a in args:
        trial = ", ".join(kept + [a.strip()])
        if len(head) + len(trial) + len(", ...") + 2 + len(tail) > width:
            break
        kept.append(a.strip())
    if len(kept) == len(args):
        return f"{head}({', '.join(kept)}){tail}"
    return f"{head}({', '.join(kept + ['...'])}){tail}"


def _split_top(params: str) -> list:
    """Split an argument list at its top-level commas."""
    out, depth, cur = [], 0, ""
    for ch in params:
        if ch in "(<[":
            depth += 1
        elif ch in ")>]":
            depth -= 1
        if ch == "," and depth == 0:
            out.append(cur)
            cur = ""
        else:
            cur += ch
    return out + [cur] if cur.strip() else out


def _drop_templates(head: str) -> str:
    """'ns::f<A<B>, C>::g<D>' -> 'ns::f<...>::g<...>' (operator< and friends untouched)."""
    if "operator" in head:
        return head
    out, depth = "", 0
    for ch in head:
        if ch == "<":
            if depth == 0:
                out += "<...>"
            depth += 1
        elif ch == ">" and depth:
            depth -= 1
        elif depth == 0:
            out += ch
    return out


def cov(values) -> float:
    """Coefficient of variation: sample standard deviation / mean (as mpiP computes it);
    0 for fewer than two values or a zero mean."""
    xs = list(values)
    if len(xs) < 2:
        return 0.0
    mean = sum(xs) / len(xs)
    if mean <= 0:
        return 0.0
    var = sum((x - mean) ** 2 for x in xs) / (len(xs) - 1)
    return var ** 0.5 / mean
