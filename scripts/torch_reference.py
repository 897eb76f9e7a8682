# Reference timings with PyTorch on the GPU (scripts/gpu-check.sh; not a
# dependency of eppsim): bf16 GEMMs of the layer shapes eppsim-bench times, and
# causal attention through PyTorch's SDPA (FlashAttention kernels).
# usage: python3 scripts/torch_reference.py OUT.json
import json
import sys

import torch
torch.backends.cuda.matmul.allow_bf16_reduced_precision_reduction = True
dev = "cuda"
def timed(fn, repeats=20):
    for _ in range(3): fn()
    torch.cuda.synchronize()
    start = torch.cuda.Event(enable_timing=True); end = torch.cuda.Event(enable_timing=True)
    start.record()
    for _ in range(repeats): fn()
    end.record(); torch.cuda.synchronize()
    return start.elapsed_time(end) / 1e3 / repeats
rows = []
models = {"gpu1": (2048, 32, 4, 5632), "llama2-7b": (4096, 32, 32, 11008)}
for name, (h, heads, kv, ffn) in models.items():
    d = h // heads
    for s in (1024, 4096, 8192, 16384):
        for gemm, (m, n, k) in {"qkv": (s, h + 2 * kv * d, h), "attention_output": (s, h, h),
                                "ffn_up": (s, 2 * ffn, h), "ffn_down": (s, h, ffn)}.items():
            a = torch.randn(m, k, device=dev, dtype=torch.bfloat16); b = torch.randn(k, n, device=dev, dtype=torch.bfloat16)
            t = timed(lambda: a @ b)
            rows.append({"model": name, "kernel": "gemm", "name": gemm, "m": m, "n": n, "k": k, "time_s": t, "tflops": 2 * m * n * k / t / 1e12})
        q = torch.randn(1, heads, s, d, device=dev, dtype=torch.bfloat16, requires_grad=True)
        kk = torch.randn(1, heads, s, d, device=dev, dtype=torch.bfloat16, requires_grad=True)
        v = torch.randn(1, heads, s, d, device=dev, dtype=torch.bfloat16, requires_grad=True)
        f = lambda: torch.nn.functional.scaled_dot_product_attention(q, kk, v, is_causal=True)
        t = timed(f)
        o = f(); g = torch.randn_like(o)
        tb = timed(lambda: torch.autograd.grad(f(), (q, kk, v), g)) - t
        flops = 2 * s * s * d * heads  # causal: half of 4*s*s*d per head
        rows.append({"model": name, "kernel": "sdpa_causal", "tokens": s, "heads": heads, "head_dim": d, "forward_s": t, "backward_s": tb, "forward_tflops": flops / t / 1e12})
        del q, kk, v, o, g
with open(sys.argv[1], "w") as f:
    json.dump({"device": torch.cuda.get_device_name(), "torch": torch.__version__, "rows": rows}, f, indent=1)
