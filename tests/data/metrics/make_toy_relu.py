#!/usr/bin/python3
# Writes the raw float32 data of msprobe's toy dumps' rows
# Functional.relu.0.forward.{input,output}.0 for tests/compare/metrics_test.cc, which
# cannot read .pt files itself. In out_tensor/*.csv the NPU side is dumpB
# (its max 1.462890625 is the "NPU max" cell) and the bench side is dumpA.
# Usage: /usr/bin/python3 make_toy_relu.py <tests/fixtures/msprobe/toy>
import sys, torch
toy = sys.argv[1]
for io, short in (("input", "in0"), ("output", "out0")):
    name = f"Functional.relu.0.forward.{io}.0.pt"
    for side, proc in (("npu", "dumpB/out/step0/proc16991"),
                       ("bench", "dumpA/out/step0/proc16954")):
        t = torch.load(f"{toy}/{proc}/dump_tensor_data/{name}")
        assert t.dtype == torch.float32 and list(t.shape) == [10, 4], (t.dtype, t.shape)
        with open(f"toy_relu_fwd_{short}.{side}.f32", "wb") as f:
            f.write(t.detach().numpy().tobytes())
