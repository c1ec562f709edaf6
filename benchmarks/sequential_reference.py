"""Values of the capital process of ``confseq`` (Waudby-Smith, Ramdas, Howard; PyPI ``confseq==0.0.11``, MIT) for
``tests/stats/test_sequential.py``: ``knowgap.stats.sequential`` must give the same without-replacement betting
martingale, bit for bit up to float rounding.

confseq builds a C++ extension (pybind11, CMake) and pulls in matplotlib, pandas and multiprocess, none of which
knowgap needs, so it is not a dependency: its pure-Python ``betting.py`` and ``betting_strategies.py`` are read
from its source release, with the imports they do not use for this stubbed::

    pip download confseq==0.0.11 --no-deps -d /tmp/cs && tar xzf /tmp/cs/confseq-0.0.11.tar.gz -C /tmp/cs
    python benchmarks/sequential_reference.py /tmp/cs/confseq-0.0.11/src > tests/stats/confseq_reference.json
"""

from __future__ import annotations

import json
import random
import sys
import types
from pathlib import Path


def load_confseq(src: Path) -> types.ModuleType:
    for name in ("matplotlib", "matplotlib.pyplot", "multiprocess", "scipy", "scipy.optimize"):
        stub = types.ModuleType(name)
        for attr in ("minimize", "newton", "root", "pyplot"):
            setattr(stub, attr, None)
        sys.modules.setdefault(name, stub)
    package = types.ModuleType("confseq")
    package.__path__ = [str(src / "confseq")]
    sys.modules["confseq"] = package
    for name in ("misc", "betting_strategies", "predmix", "betting"):
        spec_path = src / "confseq" / f"{name}.py"
        module = types.ModuleType(f"confseq.{name}")
        module.__file__ = str(spec_path)
        sys.modules[f"confseq.{name}"] = module
        exec(compile(spec_path.read_text(encoding="utf-8"), str(spec_path), "exec"), module.__dict__)
    return sys.modules["confseq.betting"]


def main() -> None:
    import numpy as np

    if not hasattr(np, "float_"):  # confseq 0.0.11 predates NumPy 2
        np.float_ = np.float64  # type: ignore[attr-defined]
    betting = load_confseq(Path(sys.argv[1]))
    cases = []
    rng = random.Random(38)
    for population, draws, kind in ((40, 40, "binary"), (200, 120, "binary"), (60, 50, "scores")):
        values = [float(rng.random() < 0.7) if kind == "binary" else round(rng.betavariate(2, 3), 4)
                  for _ in range(population)]
        rng.shuffle(values)
        x = np.array(values[:draws])
        for m in (0.1, 0.35, 0.5, 0.62, 0.7, 0.9):
            mart = betting.betting_mart(x, m, alpha=0.05, N=population, theta=0.5, trunc_scale=0.5, m_trunc=True)
            cases.append({"population": population, "x": x.tolist(), "m": m, "alpha": 0.05,
                          "capital": [float(v) for v in mart]})
    json.dump({"source": "confseq 0.0.11 betting.betting_mart(x, m, alpha=0.05, N, theta=0.5, trunc_scale=0.5, "
                         "m_trunc=True)", "cases": cases}, sys.stdout, indent=1)


if __name__ == "__main__":
    main()
