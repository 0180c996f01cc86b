"""--probe: a caracal probe ping-pong document of this machine as evidence for the protocol
advice: its median latency at the measured sizes nearest below and above each advised size,
so the text shows what one message of that size costs here with the library's defaults."""
from ..errors import UsageError
from ..jsondoc import read_json, schema_of


def load(path) -> dict:
    doc = read_json(path)
    if schema_of(path, doc) != "caracal.probe/1":
        raise UsageError(f"{path}: schema is \"{doc['schema']}\", expected \"caracal.probe/1\"")
    if doc.get("mode") != "pingpong" or not isinstance(doc.get("points"), list) or not doc["points"]:
        raise UsageError(f"{path}: not a ping-pong probe with measured points (caracal probe --mode pingpong)")
    for i, p in enumerate(doc["points"]):
        if not isinstance(p, dict) or not isinstance(p.get("size"), int) or \
                not isinstance(p.get("latency_us_median"), (int, float)):
            raise UsageError(f"{path}: points[{i}] lacks size or latency_us_median")
    return doc


def attach(adv: dict, probe: dict, path: str) -> None:
    pts = sorted(probe["points"], key=lambda p: p["size"])
    for e in adv["advice"]:
        if e["area"] != "p2p":
            continue
        ev = []
        for s in e["sizes"]:
            below = [p for p in pts if p["size"] <= s]
            above = [p for p in pts if p["size"] >= s]
            near = (below[-1:] + above[:1]) or pts[-1:]
            ev += [{"size": p["size"], "latency_us": p["latency_us_median"]} for p in near]
        e["probe"] = {"path": str(path), "library": probe.get("mpi_library", ""), "points": ev}
