"""What the tests that run msprobe itself need: torch 2.x and the installed
msprobe (mindstudio-probe; scripts/setup.sh installs it into the torch 2.x
venv only). With torch 1.x they are skipped; with torch 2.x a missing
msprobe is a failure."""
import importlib.util


def unmet():
    """None when torch 2.x and msprobe are importable; otherwise the exit
    code the test ends with (0: skipped, 1: failed), having said why."""
    import torch
    if int(torch.__version__.split(".")[0]) < 2:
        print("skipped: needs torch 2.x and mindstudio-probe")
        return 0
    if importlib.util.find_spec("msprobe") is None:
        print("FAIL: mindstudio-probe is not installed in this torch 2.x "
              "environment (bash scripts/setup.sh installs it)")
        return 1
    return None
