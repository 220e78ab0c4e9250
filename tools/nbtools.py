"""Small helpers for writing and cleaning the notebooks (used by the maintainers, not at run time).

    python tools/nbtools.py strip notebooks/*.ipynb    # drop widget state and local paths before committing
"""
from __future__ import annotations

import json
import re
import sys
from pathlib import Path

ABSOLUTE = re.compile(r"(/home/|/root/|/Users/|/work/|/tmp/|[A-Z]:\\\\Users)")


def strip(path: str | Path) -> None:
    """Remove metadata.widgets (GitHub refuses widget metadata without state), execution timing,
    and replace absolute paths in outputs by '<...>'."""
    p = Path(path)
    nb = json.loads(p.read_text())
    nb.get("metadata", {}).pop("widgets", None)
    for cell in nb.get("cells", []):
        cell.get("metadata", {}).pop("execution", None)
        for out in cell.get("outputs", []):
            if "text" in out:
                out["text"] = [ABSOLUTE.sub("<path>/", t) for t in out["text"]] if isinstance(out["text"], list) else ABSOLUTE.sub("<path>/", out["text"])
            data = out.get("data", {})
            for k in ("text/plain", "text/html"):
                if k in data:
                    v = data[k]
                    data[k] = [ABSOLUTE.sub("<path>/", t) for t in v] if isinstance(v, list) else ABSOLUTE.sub("<path>/", v)
    p.write_text(json.dumps(nb, indent=1, ensure_ascii=False) + "\n")


if __name__ == "__main__":
    if len(sys.argv) < 3 or sys.argv[1] != "strip":
        sys.exit(__doc__)
    for f in sys.argv[2:]:
        strip(f)
        print("stripped", f)
