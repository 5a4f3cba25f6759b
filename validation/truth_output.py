"""Writing a ground-truth file of validation/ (step_truth.py, compile_truth.py,
qlora_legacy_truth.py): the cases with what ran them and how they were
measured, in the layout the C++ tests read (tests/core/truth_file.h)."""
import json
import os
import platform

import torch


def cpu_model():
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or "unknown CPU"


def machine():
    return (f"{platform.machine()} {cpu_model()}, Python {platform.python_version()}, "
            f"{torch.get_num_threads()} intra-op thread")


def write_truth(out, generator, method, results, machine_text=None, **versions):
    """Writes {generator, torch, versions..., machine, method, cases} to `out`."""
    doc = {"generator": generator, "torch": torch.__version__, **versions,
           "machine": machine_text or machine(), "method": method, "cases": results}
    os.makedirs(os.path.dirname(os.path.abspath(out)), exist_ok=True)
    with open(out, "w") as f:
        json.dump(doc, f, indent=1)
        f.write("\n")
    return doc
