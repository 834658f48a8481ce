"""NumPy reference for `anec eval` (tests/compiler/eval_numpy_test.cpp).

usage: eval_reference.py DIR CASE   (CASE: conv, mlp or attention)

Writes into DIR: graph.json (an anec-graph, docs/graph-format.md), the float32 inputs and weights as
.npy files (weights are read through the constants' "file" keys, biases and small parameters are
inline "data"), inputs.txt (one NAME=FILE.npy a line, for --input) and expected/NAME.npy, each graph
output computed here in float64 from the same float32 values. Nothing is left for the evaluator to
seed. Layouts here are NumPy's [N, C, H, W] (the graph's 4-entry shapes, depth 1).
"""
import json
import math
import os
import sys

import numpy as np
from numpy.lib.stride_tricks import sliding_window_view

rng = np.random.default_rng(20240516)


class Graph:
    def __init__(self, folder):
        self.folder, self.inputs, self.constants, self.ops = folder, [], [], []

    def input(self, name, shape):
        x = rng.standard_normal(shape).astype(np.float32)
        np.save(os.path.join(self.folder, name + '.npy'), x)
        self.inputs.append({'name': name, 'shape': list(shape), 'dtype': 'fp32'})
        return x.astype(np.float64)

    def constant(self, name, value, inline=False, shape=None):
        """A float32 constant, from a .npy file or inline; returns its float64 value."""
        value = np.asarray(value, dtype=np.float32)
        c = {'name': name, 'shape': list(shape or value.shape), 'dtype': 'fp32'}
        if inline:
            c['data'] = [float(v) for v in value.ravel()]  # float32 values print exactly as float64
        else:
            np.save(os.path.join(self.folder, name + '.npy'), value)
            c['file'] = name + '.npy'
        self.constants.append(c)
        return value.astype(np.float64)

    def op(self, op, inputs, output, **attrs):
        self.ops.append({'name': output + '_op', 'op': op, 'inputs': inputs, 'outputs': [output],
                         'attrs': attrs})

    def write(self, outputs):
        os.makedirs(os.path.join(self.folder, 'expected'), exist_ok=True)
        for name, value in outputs.items():
            np.save(os.path.join(self.folder, 'expected', name + '.npy'), value)
        graph = {'format': 'anec-graph', 'version': 1, 'inputs': self.inputs, 'constants': self.constants,
                 'ops': self.ops, 'outputs': list(outputs)}
        with open(os.path.join(self.folder, 'graph.json'), 'w') as f:
            json.dump(graph, f, indent=1)
        with open(os.path.join(self.folder, 'inputs.txt'), 'w') as f:
            f.writelines(i['name'] + '=' + i['name'] + '.npy\n' for i in self.inputs)


def weights(*shape):
    return rng.standard_normal(shape) / np.sqrt(np.prod(shape[1:]))


# ---- float64 operations on [N, C, H, W] arrays ----

def conv(x, w, b, stride=(1, 1), pad=(0, 0, 0, 0), groups=1, dilation=(1, 1)):
    o, cg, kh, kw = w.shape
    xp = np.pad(x, ((0, 0), (0, 0), pad[:2], pad[2:]))
    oh = (xp.shape[2] - dilation[0] * (kh - 1) - 1) // stride[0] + 1
    ow = (xp.shape[3] - dilation[1] * (kw - 1) - 1) // stride[1] + 1
    out = np.zeros((x.shape[0], o, oh, ow))
    og = o // groups
    for g in range(groups):
        xs, ws, part = xp[:, g * cg:(g + 1) * cg], w[g * og:(g + 1) * og], slice(g * og, (g + 1) * og)
        for r in range(kh):
            for q in range(kw):
                rows = slice(r * dilation[0], r * dilation[0] + stride[0] * (oh - 1) + 1, stride[0])
                cols = slice(q * dilation[1], q * dilation[1] + stride[1] * (ow - 1) + 1, stride[1])
                out[:, part] += np.einsum('nchw,oc->nohw', xs[:, :, rows, cols], ws[:, :, r, q])
    return out + b.reshape(1, -1, 1, 1)


def pool(x, reduce, kernel, stride, pad):
    """Padding is NaN, which the nan-reductions skip: excluded from the max and from the average's count."""
    xp = np.pad(x, ((0, 0), (0, 0), pad[:2], pad[2:]), constant_values=np.nan)
    return reduce(sliding_window_view(xp, kernel, axis=(2, 3))[:, :, ::stride[0], ::stride[1]], axis=(4, 5))


def per_channel(v):
    return v.reshape(1, -1, 1, 1)


def softmax(x, axis):
    e = np.exp(x - x.max(axis=axis, keepdims=True))
    return e / e.sum(axis=axis, keepdims=True)


def linear(x, w, b):  # contracts over C
    return np.einsum('nchw,oc->nohw', x, w) + per_channel(b)


def gelu(x):
    return 0.5 * x * (1 + np.vectorize(math.erf)(x / np.sqrt(2)))


def sigmoid(x):
    return 1 / (1 + np.exp(-x))


# ---- the cases ----

def conv_case(g):
    x = g.input('x', (2, 3, 10, 10))
    w1 = g.constant('w1', weights(8, 3, 3, 3))
    b1 = g.constant('b1', rng.standard_normal(8) * 0.1, inline=True, shape=[1, 8, 1, 1])
    y = conv(x, w1, b1, stride=(2, 2), pad=(1, 1, 1, 1))  # [2, 8, 5, 5]
    g.op('conv', ['x', 'w1', 'b1'], 'c1', out_channels=8, kernel=[3, 3], stride=[2, 2], pad=[1, 1, 1, 1])
    bn = {k: g.constant('bn_' + k, v, inline=True, shape=[1, 8, 1, 1]) for k, v in [
        ('mean', rng.standard_normal(8) * 0.2), ('var', rng.uniform(0.5, 2, 8)),
        ('scale', rng.uniform(0.5, 1.5, 8)), ('bias', rng.standard_normal(8) * 0.1)]}
    y = (y - per_channel(bn['mean'])) / np.sqrt(per_channel(bn['var']) + 1e-5) * per_channel(bn['scale'])
    y = np.maximum(y + per_channel(bn['bias']), 0)
    g.op('batch_norm', ['c1', 'bn_mean', 'bn_var', 'bn_scale', 'bn_bias'], 'bn')
    g.op('relu', ['bn'], 'r1')
    # depthwise 3x3, dilation 2, a residual add
    w2 = g.constant('w2', weights(8, 1, 3, 3))
    b2 = g.constant('b2', rng.standard_normal(8) * 0.1, inline=True, shape=[1, 8, 1, 1])
    y = np.maximum(y + conv(y, w2, b2, pad=(2, 2, 2, 2), groups=8, dilation=(2, 2)), 0)
    g.op('conv', ['r1', 'w2', 'b2'], 'dw', out_channels=8, kernel=[3, 3], pad=[2, 2, 2, 2], groups=8,
         dilation=[2, 2])
    g.op('add', ['r1', 'dw'], 'res')
    g.op('relu', ['res'], 'r2')
    # grouped pointwise conv (two groups), then the pools with uneven padding
    w3 = g.constant('w3', weights(6, 4, 1, 1))
    b3 = g.constant('b3', rng.standard_normal(6) * 0.1, inline=True, shape=[1, 6, 1, 1])
    y = conv(y, w3, b3, groups=2)  # [2, 6, 5, 5]
    g.op('conv', ['r2', 'w3', 'b3'], 'pw', out_channels=6, kernel=[1, 1], groups=2)
    pooled = pool(y, np.nanmax, (3, 3), (2, 2), (1, 1, 1, 1))  # [2, 6, 3, 3]
    g.op('max_pool', ['pw'], 'pooled', kernel=[3, 3], stride=[2, 2], pad=[1, 1, 1, 1])
    out = pool(pooled, np.nanmean, (2, 2), (1, 1), (1, 0, 0, 1))  # [2, 6, 3, 3]
    g.op('avg_pool', ['pooled'], 'out', kernel=[2, 2], stride=[1, 1], pad=[1, 0, 0, 1])
    return {'pooled': pooled, 'out': out}


def mlp_case(g):
    x = g.input('x', (2, 16, 3, 1))  # 2 x 3 rows of 16 features, along C
    layers = [(16, 32, 'gelu', gelu), (32, 24, 'sigmoid', sigmoid), (24, 10, None, None)]
    y, prev = x, 'x'
    for i, (fan_in, fan_out, act, f) in enumerate(layers):
        w = g.constant(f'w{i}', weights(fan_out, fan_in), shape=[1, fan_out, 1, fan_in])
        b = g.constant(f'b{i}', rng.standard_normal(fan_out) * 0.1, inline=True, shape=[1, fan_out, 1, 1])
        y = linear(y, w, b)
        g.op('linear', [prev, f'w{i}', f'b{i}'], f'fc{i}', out_features=fan_out)
        prev = f'fc{i}'
        if act:
            y = f(y)
            g.op(act, [prev], f'{act}{i}')
            prev = f'{act}{i}'
    probs = softmax(y * 4, axis=1)  # sharpened, so the probabilities spread over decades
    g.constant('four', [4.0], inline=True, shape=[1, 1, 1, 1])
    g.op('mul', [prev, 'four'], 'logits')
    g.op('softmax', ['logits'], 'probs', axis='C')
    return {'probs': probs}


def attention_case(g):
    # q [N=2, C=6 positions, H=2 heads, W=8 features]; k and v have 5 positions, v 7 features
    q, k, v = g.input('q', (2, 6, 2, 8)), g.input('k', (2, 5, 2, 8)), g.input('v', (2, 5, 2, 7))
    heads = lambda t: t.transpose(0, 2, 1, 3)  # [N, heads, positions, features]
    scores = heads(q) @ heads(k).transpose(0, 1, 3, 2) / np.sqrt(8)
    attn = heads(softmax(scores, axis=-1) @ heads(v))  # back to [N, positions, heads, features]
    g.op('transpose', ['k'], 'kt', perm=[0, 1, 4, 3, 2])  # [2, 1, 8, 2, 5]
    g.op('matmul', ['q', 'kt'], 'qk')  # [2, 1, 6, 2, 5]
    g.constant('scale', [1 / np.sqrt(8)], inline=True, shape=[1, 1, 1, 1])
    g.op('mul', ['qk', 'scale'], 'scores')
    g.op('softmax', ['scores'], 'p', axis='W')
    g.op('matmul', ['p', 'v'], 'attn')
    # the fused op takes the heads along C and the positions along H: [N, 1, heads, positions, features]
    for t in 'qkv':
        g.op('transpose', [t], t + 'h', perm=[0, 1, 3, 2, 4])
    g.op('sdpa', ['qh', 'kh', 'vh'], 'fused_heads')
    g.op('transpose', ['fused_heads'], 'fused', perm=[0, 1, 3, 2, 4])
    gamma = g.constant('gamma', rng.uniform(0.5, 1.5, 7), inline=True, shape=[1, 1, 1, 7])
    beta = g.constant('beta', rng.standard_normal(7) * 0.1, inline=True, shape=[1, 1, 1, 7])
    mean, var = attn.mean(axis=3, keepdims=True), attn.var(axis=3, keepdims=True)
    normed = (attn - mean) / np.sqrt(var + 1e-5) * gamma + beta
    g.op('layer_norm', ['attn', 'gamma', 'beta'], 'normed', axes='W')
    # and the default: over the channels (the query positions of the scores), no scale or bias
    scores = heads(scores)  # [N, query positions, heads, key positions]
    mean, var = scores.mean(axis=1, keepdims=True), scores.var(axis=1, keepdims=True)
    g.op('layer_norm', ['scores'], 'scores_normed')
    scores_normed = (scores - mean) / np.sqrt(var + 1e-5)
    return {'attn': attn, 'fused': attn, 'normed': normed, 'scores_normed': scores_normed}


if __name__ == '__main__':
    folder, case = sys.argv[1], sys.argv[2]
    os.makedirs(folder, exist_ok=True)
    g = Graph(folder)
    g.write({'conv': conv_case, 'mlp': mlp_case, 'attention': attention_case}[case](g))
