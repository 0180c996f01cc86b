"""The advice as text (MPI Advisor's form: sites, sizes, current setting, suggested value,
measured gain, cost, command line), as report tables and as an HTML page."""
from typing import List

from ..report_tables import Table

LABEL = {"measured": "MEASURED", "unmeasured": "UNMEASURED", "unverified": "UNVERIFIED",
         "predicted": "PREDICTED (model)", "observed": "FROM THE PROFILE"}
PATTERN = {"b2b": "back to back", "rotate": "back to back, a new root each call",
           "barrier": "one at a time, a barrier before each"}
AREA_TITLE = {"p2p": "Point-to-point protocol", "collective": "Collective algorithm", "mapping": "Mapping",
              "general": "General"}


def _site(s) -> str:
    loc = f"{s['file']}:{s['line']}" if s.get("file") and s.get("line") else (s.get("function") or "?")
    return f"{s['call']} at {loc} ({s['count']} calls, {s['bytes']} bytes, {s['time']:.3g} s)"


def _gain(g) -> str:
    if not g:
        return "-"
    if not g.get("measured"):
        pct = g.get("gain_percent")
        return (f"{pct}% predicted; " if pct is not None else "") + g.get("method", "not measured")
    u = g.get("unit", "")
    if g.get("baseline_spread"):
        spread = (f" ({g['baseline']} [{g['baseline_spread'][0]}-{g['baseline_spread'][1]}] -> {g['suggested']} "
                  f"[{g['suggested_spread'][0]}-{g['suggested_spread'][1]}] {u}, median [quartiles])")
    else:
        spread = f" ({g['baseline']} -> {g['suggested']} {u}, sum of medians over the sizes)"
    return f"{g['gain_percent']}%{spread}; {g['method']}" + (f"; load {g['load']}" if "load" in g else "")


def text(doc: dict) -> str:
    lib = doc["library"]
    out = [f"caracal advise: {doc['program']} ({doc['nranks']} ranks), {lib['kind']} {lib['version']}".rstrip(),
           f"profile {doc['profile']}; " + ("advice measured on this machine" if doc["measured"] else
                                             "nothing measured (--no-measure or library not installed here)")]
    out += [f"note: {n}" for n in doc["notes"]]
    if not doc["advice"]:
        out.append("no advice: nothing in this profile passes a rule's threshold")
    for area in ("p2p", "collective", "mapping", "general"):
        es = [e for e in doc["advice"] if e["area"] == area]
        if not es:
            continue
        out += ["", AREA_TITLE[area], "-" * len(AREA_TITLE[area])]
        for e in es:
            out.append(f"[{e['id']}] {LABEL.get(e['status'], e['status'])} / {e['verdict']}: {e['title']}")
            for s in e.get("sites", [])[:5]:
                out.append(f"    site: {_site(s)}")
            if e.get("sizes") is not None and area != "general":
                out.append(f"    sizes: {', '.join(map(str, e['sizes']))} bytes"
                           + (f"; replayed as {e['pattern']} (calls {PATTERN[e['pattern']]})" if e.get("pattern") else ""))
            if e.get("knob"):
                out.append(f"    setting: {e['knob']}: current {e.get('current')}, suggested {e.get('suggested')}")
            if area != "general":
                out.append(f"    gain: {_gain(e.get('gain'))}")
            for p in e.get("measured_sizes", []):
                out.append(f"    {p['bytes']} bytes: default {p['native_us']} us, best {p['winner']} "
                           f"{p['winner_us']} us ({p['gain_percent']}%)")
            for p in (e.get("probe") or {}).get("points", []):
                out.append(f"    probe: {p['size']} bytes take {p['latency_us']} us one way (defaults, {e['probe']['path']})")
            if e.get("cost"):
                out.append(f"    cost: {e['cost']}")
            for w in e.get("warnings", []):
                out.append(f"    warning: {w}")
            for k, c in e.get("commands", {}).items():
                out.append(f"    {k}: {c}")
            if e.get("suggestion"):
                out.append(f"    what to do: {e['suggestion']}")
    return "\n".join(out) + "\n"


def tables(doc: dict) -> List[Table]:
    """One table of every advice entry (for the profile report's text and HTML)."""
    rows = []
    for e in doc["advice"]:
        rows.append([e["id"], AREA_TITLE[e["area"]], LABEL.get(e["status"], e["status"]), e["title"],
                     " ".join(f"{k}={v}" for k, v in (e.get("env") or {}).items()) or "-"])
    note = "; ".join(doc["notes"]) or None
    extra = ("nothing measured here: `caracal advise PROFILE --measure` replays and measures each suggestion"
             if not doc["measured"] else None)
    return [Table(key="advice", title="Advice (caracal advise)", columns=["id", "area", "status", "advice", "setting"],
                  rows=rows, right=[False] * 5, note="; ".join(x for x in (note, extra) if x) or None)]


def html(doc: dict) -> str:
    """One self-contained page (templates/advice.html.j2, escaped): per entry the same lines
    as the text."""
    from ..report_html import page
    lines = text(doc).splitlines()
    details, cur = {}, None
    for ln in lines:
        if ln.startswith("[A") and "]" in ln:
            cur = ln[1:ln.index("]")]
            details[cur] = []
        elif cur and ln.startswith("    "):
            details[cur].append(ln.strip())
    return page("advice.html.j2", title=f"caracal advise: {doc['program']}", doc=doc,
                areas=list(AREA_TITLE.items()), labels=LABEL,
                details={k: "\n".join(v) for k, v in details.items()})
