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
