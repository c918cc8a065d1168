"""A small LLaMA-style transformer for the divergence scenarios, written as
HuggingFace's modeling_llama writes one: RMSNorm computed in float32 by hand
(pow, mean, rsqrt), rotary position embeddings whose frequencies are
computed in each forward (1 / base ** (arange / d), then cos and sin),
separate q/k/v projections without biases, causal matmul attention, a SwiGLU
MLP (silu(x W1) * x W3, then W2), an untied head; trained with AdamW (weight
decay) by tiny_gpt.train. Its knobs are tiny_gpt.Knobs's (arch="llama").
"""
import math

import torch
import torch.nn.functional as F


class TinyLlama(torch.nn.Module):
    PER_BLOCK = 9  # rms1, wq, wk, wv, wo, rms2, w1, w3, w2

    def __init__(self, k):
        super().__init__()
        self.k = k
        g = torch.Generator().manual_seed(k.init_seed)

        def p(*shape, scale=0.02):
            return torch.nn.Parameter(torch.randn(*shape, generator=g) * scale)

        d, f = k.d, 3 * k.d
        self.tok = p(k.vocab, d)
        self.blocks = torch.nn.ParameterList()
        for i in range(k.blocks):
            w1_scale = 0.02 * (k.init_scale_block1_fc if i == 1 else 1.0)
            for t in [torch.nn.Parameter(torch.ones(d)),       # rms1
                      p(d, d), p(d, d), p(d, d), p(d, d),       # wq wk wv wo
                      torch.nn.Parameter(torch.ones(d)),       # rms2
                      p(f, d, scale=w1_scale), p(f, d), p(d, f)]:  # w1 w3 w2
                self.blocks.append(t)
        if k.nudge_block1_fc != 1.0:
            with torch.no_grad():
                self.blocks[self.PER_BLOCK + 6][3, 5] *= k.nudge_block1_fc
        self.norm_w = torch.nn.Parameter(torch.ones(d))
        self.head = p(k.vocab, d)

    def rms_norm(self, x, w):
        dtype = x.dtype
        x = x.to(torch.float32)
        var = x.pow(2).mean(-1, keepdim=True)
        x = x * torch.rsqrt(var + self.k.rms_eps)
        return w * x.to(dtype)

    def rotary(self, T, dtype):
        k = self.k
        hd = k.d // k.heads
        ft = torch.float64 if k.rope_dtype == "fp64" else torch.float32
        inv_freq = 1.0 / (k.rope_base ** (torch.arange(0, hd, 2, dtype=ft) / hd))
        freqs = torch.outer(torch.arange(T, dtype=ft), inv_freq)
        emb = torch.cat((freqs, freqs), dim=-1)
        return emb.cos().to(dtype), emb.sin().to(dtype)

    @staticmethod
    def rotate(x, cos, sin):
        half = x.shape[-1] // 2
        turned = torch.cat((-x[..., half:], x[..., :half]), dim=-1)
        return x * cos + turned * sin

    def block(self, i, x, cos, sin):
        k = self.k
        rms1, wq, wk, wv, wo, rms2, w1, w3, w2 = \
            self.blocks[self.PER_BLOCK * i:self.PER_BLOCK * (i + 1)]
        B, T, C = x.shape
        hd = C // k.heads
        h = self.rms_norm(x, rms1)
        q = F.linear(h, wq).view(B, T, k.heads, hd).transpose(1, 2)
        kk = F.linear(h, wk).view(B, T, k.heads, hd).transpose(1, 2)
        v = F.linear(h, wv).view(B, T, k.heads, hd).transpose(1, 2)
        q, kk = self.rotate(q, cos, sin), self.rotate(kk, cos, sin)
        att = torch.matmul(q, kk.transpose(-2, -1)) / math.sqrt(hd)
        mask = torch.ones(T, T, dtype=torch.bool).tril()
        fill = torch.finfo(att.dtype).min if k.mask_value == "min" else float("-inf")
        att = att.masked_fill(~mask, fill)
        att = F.softmax(att, dim=-1, dtype=torch.float32).to(q.dtype)
        y = torch.matmul(att, v).transpose(1, 2).reshape(B, T, C)
        x = x + F.linear(y, wo)
        h = self.rms_norm(x, rms2)
        act = F.gelu(F.linear(h, w1)) if k.act == "gelu" else F.silu(F.linear(h, w1))
        return x + F.linear(act * F.linear(h, w3), w2)

    def forward(self, idx, targets):
        k = self.k
        x = F.embedding(idx, self.tok)
        cos, sin = self.rotary(idx.shape[1], x.dtype)
        for i in range(k.blocks):
            if k.autocast_block1 and i == 1:
                with torch.autocast("cpu", dtype=torch.bfloat16):
                    x = self.block(i, x, cos, sin)
                x = x.float()
            else:
                x = self.block(i, x, cos, sin)
        logits = F.linear(self.rms_norm(x, self.norm_w), self.head)
        return F.cross_entropy(logits.view(-1, k.vocab), targets.view(-1))
