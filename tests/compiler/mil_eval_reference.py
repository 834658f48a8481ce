"""NumPy reference for `anec eval` on real MIL programs with their weights (eval_numpy_test.cpp).

usage: mil_eval_reference.py DIR CASE TESTDATA   (CASE: add_model, silero_fp16 or silero_int8)

Copies the case's compiled Core ML bundle (TESTDATA/coreml/mlmodelc/...) into DIR/model.mlmodelc,
its model.mil cut after the op that defines the case's output (the Silero encoder ahead of its LSTM,
which the evaluator has no kernel for) and returning that output; writes float32 inputs as .npy files,
inputs.txt (NAME=FILE.npy a line) and expected/NAME.npy: the program run here in float64 by a reader
of its own (the MIL text read with regular expressions, weight.bin read by its milblob layout: a
64-byte record per blob at the offset the text names, u32 sentinel 0xDEADBEEF, u32 data type, u64
size, u64 data offset), the ops as the MIL op specs define them. Casts between float types are
exact here (anec eval computes in fp32 unless asked for fp16). Outputs are written as anec eval
writes them: 4-D [N, C, H, W] (rank 1 [C], rank 2 [N, C], rank 3 [N, C, W]).
"""
import os
import re
import shutil
import struct
import sys

import numpy as np

rng = np.random.default_rng(20250611)

CASES = {
    'add_model': ('mlmodelc/coremltools/add_model.mlmodelc', 'var_3'),
    'silero_fp16': ('mlmodelc/mobius-silero/silero-vad-unified-256ms-v6.0.0.mlmodelc', 'clip_3_cast_fp16'),
    'silero_int8': ('mlmodelc/mobius-silero/unified_256ms_int8.mlmodelc', 'clip_3_cast_fp16'),
}

BLOB_TYPES = {1: '<f2', 2: '<f4', 3: 'u1', 4: 'i1', 6: '<i2', 7: '<u2', 14: '<i4', 15: '<u4'}


def split_top(text, sep=','):
    """Splits at `sep` outside brackets and quotes."""
    out, depth, cur, quote = [], 0, '', False
    for ch in text:
        if ch == '"':
            quote = not quote
        elif not quote and ch in '([{<':
            depth += 1
        elif not quote and ch in ')]}>':
            depth -= 1
        if ch == sep and depth == 0 and not quote:
            out.append(cur.strip())
            cur = ''
        else:
            cur += ch
    if cur.strip():
        out.append(cur.strip())
    return out


def parse_type(t):
    m = re.match(r'tensor<(\w+), \[([^\]]*)\]>', t)
    dims = [int(d) for d in m.group(2).split(',') if d.strip()] if m.group(2).strip() else []
    return m.group(1), dims


class Program:
    def __init__(self, bundle):
        self.bundle = bundle
        self.env = {}

    def literal(self, text):
        """A value as written: a typed literal, a BLOBFILE, a list, a name."""
        text = text.strip()
        m = re.match(r'(tensor<[^()]*?>)\((.*)\)$', text, re.S)
        if m:
            dtype, dims = parse_type(m.group(1))
            body = m.group(2).strip()
            if body.startswith('BLOBFILE'):
                return self.blob(body, dtype, dims)
            if dtype == 'string':
                return body.strip('"')
            body = body.replace('true', '1').replace('false', '0')
            number = r'[-+]?(?:0x[0-9a-fA-F.]+p[-+]?\d+|inf|nan|[\d.]+(?:e[-+]?\d+)?)'
            vals = [float.fromhex(v) if 'x' in v else float(v) for v in re.findall(number, body)]
            return np.array(vals, dtype=np.float64).reshape(dims)
        if text.startswith('('):
            return [self.literal(x) for x in split_top(text[1:-1])]
        return self.env[text]

    def blob(self, body, dtype, dims):
        path = re.search(r'path = tensor<string, \[\]>\("([^"]*)"\)', body).group(1)
        offset = int(re.search(r'offset = tensor<uint64, \[\]>\((\d+)\)', body).group(1))
        path = os.path.join(self.bundle, path.replace('@model_path/', ''))
        with open(path, 'rb') as f:
            f.seek(offset)
            sentinel, code, size, data = struct.unpack('<IIQQ', f.read(24))
            assert sentinel == 0xDEADBEEF, path
            f.seek(data)
            raw = f.read(size)
        n = int(np.prod(dims)) if dims else 1
        return np.frombuffer(raw, dtype=BLOB_TYPES[code], count=n).astype(np.float64).reshape(dims)

    def run(self, text, inputs, output):
        body = text[text.index('{', text.index('func ')):]
        for line in body.splitlines():
            m = re.match(r'\s*(tensor<[^=]*?>) (\w+) = (\w+)\((.*?)\)\[(.*)\];$', line)
            if not m:
                continue
            _, name, op, args, attrs = m.groups()
            a = {k.strip(): v for k, v in (x.split('=', 1) for x in split_top(args))}
            at = {k.strip(): v for k, v in (x.split('=', 1) for x in split_top(attrs))}
            a = {k: self.literal(v) for k, v in a.items()}
            at = {k: self.literal(v) for k, v in at.items() if k != 'name'}
            self.env[name] = self.op(op, {**at, **a}, inputs)
            if name == output:
                return self.env[name]
        raise KeyError(output)

    def op(self, op, a, inputs):
        x = a.get('x')
        if op == 'const':
            return a['val']
        if op == 'constexpr_affine_dequantize':
            q, axis = a['quantized_data'], int(a['axis'])
            shape = [1] * q.ndim
            shape[axis] = -1
            zp = np.reshape(a['zero_point'], shape if np.size(a['zero_point']) > 1 else [1] * q.ndim)
            sc = np.reshape(a['scale'], shape if np.size(a['scale']) > 1 else [1] * q.ndim)
            return (q - zp) * sc
        if op == 'cast':
            return x
        if op == 'slice_by_index':
            sl = []
            for i in range(x.ndim):
                b, e = int(a['begin'][i]), int(a['end'][i])
                if 'begin_mask' in a and a['begin_mask'][i]:
                    b = 0
                if 'end_mask' in a and a['end_mask'][i]:
                    e = x.shape[i]
                sl.append(slice(b, e))
            return x[tuple(sl)]
        if op == 'concat':
            return np.concatenate(a['values'], axis=int(a['axis']))
        if op == 'pad':
            p = [int(v) for v in a['pad']]
            width = [(0, 0)] * (x.ndim - len(p) // 2) + [(p[2 * i], p[2 * i + 1]) for i in range(len(p) // 2)]
            if a['mode'] == 'constant':
                return np.pad(x, width, constant_values=float(a['constant_val']))
            return np.pad(x, width, mode={'reflect': 'reflect', 'replicate': 'edge'}[a['mode']])
        if op == 'expand_dims':
            for ax in sorted(int(v) for v in a['axes']):
                x = np.expand_dims(x, ax)
            return x
        if op == 'squeeze':
            return np.squeeze(x, axis=tuple(int(v) for v in a['axes']))
        if op == 'transpose':
            return np.transpose(x, [int(v) for v in a['perm']])
        if op == 'conv':
            return conv1d(x, a)
        if op in ('add', 'sub', 'mul', 'pow', 'real_div', 'maximum', 'minimum'):
            f = {'add': np.add, 'sub': np.subtract, 'mul': np.multiply, 'pow': np.power,
                 'real_div': np.divide, 'maximum': np.maximum, 'minimum': np.minimum}[op]
            return f(a['x'], a['y'])
        if op == 'sqrt':
            return np.sqrt(x)
        if op == 'relu':
            return np.maximum(x, 0)
        if op == 'sigmoid':
            return 1 / (1 + np.exp(-x))
        if op == 'clip':
            return np.minimum(np.maximum(x, float(a['alpha'])), float(a['beta']))
        raise NotImplementedError(op)


def conv1d(x, a):
    """MIL conv on [N, C, L] with weight [O, C/groups, k]: cross-correlation."""
    w = a['weight']
    groups = int(a.get('groups', 1))
    stride, dil = int(a['strides'][0]), int(a['dilations'][0])
    k = w.shape[2]
    if a['pad_type'] == 'custom':
        pad = (int(a['pad'][0]), int(a['pad'][1]))
    elif a['pad_type'] == 'valid':
        pad = (0, 0)
    else:
        out = -(-x.shape[2] // stride)
        total = max(0, (out - 1) * stride + (k - 1) * dil + 1 - x.shape[2])
        pad = (total // 2, total - total // 2)
    x = np.pad(x, [(0, 0), (0, 0), pad])
    n, c, length = x.shape
    o = w.shape[0]
    out_len = (length - (k - 1) * dil - 1) // stride + 1
    y = np.zeros((n, o, out_len))
    cg, og = c // groups, o // groups
    for g in range(groups):
        for t in range(out_len):
            window = x[:, g * cg:(g + 1) * cg, t * stride: t * stride + (k - 1) * dil + 1: dil]
            y[:, g * og:(g + 1) * og, t] = np.einsum('nck,ock->no', window, w[g * og:(g + 1) * og])
    if 'bias' in a:
        y += a['bias'].reshape(1, -1, 1)
    return y


def four_d(v):
    shape = {1: lambda s: (1, s[0], 1, 1), 2: lambda s: (s[0], s[1], 1, 1),
             3: lambda s: (s[0], s[1], 1, s[2]), 4: lambda s: s}[v.ndim](v.shape)
    return v.reshape(shape)


def main():
    folder, case, testdata = sys.argv[1], sys.argv[2], sys.argv[3]
    source, output = CASES[case]
    bundle = os.path.join(folder, 'model.mlmodelc')
    os.makedirs(os.path.join(folder, 'expected'), exist_ok=True)
    src = os.path.join(testdata, 'coreml', source)
    os.makedirs(bundle, exist_ok=True)
    for item in os.listdir(src):
        (shutil.copytree if os.path.isdir(os.path.join(src, item)) else shutil.copy)(
            os.path.join(src, item), os.path.join(bundle, item))
    with open(os.path.join(src, 'model.mil')) as f:
        text = f.read()
    # the program cut after the op that defines `output`, which it then returns
    lines, kept = text.splitlines(), []
    for line in lines:
        if re.match(r'\s*\} -> \(', line):
            break
        kept.append(line)
        if re.match(r'\s*tensor<[^=]*?> %s = ' % output, line):
            break
    kept += ['        } -> (%s);' % output, '}']
    cut = '\n'.join(kept) + '\n'
    with open(os.path.join(bundle, 'model.mil'), 'w') as f:
        f.write(cut)
    sig = re.search(r'func main<\w+>\((.*?)\)\s*[\[{]', text).group(1)
    inputs = {}
    with open(os.path.join(folder, 'inputs.txt'), 'w') as f:
        for var in split_top(sig):
            t, name = var.rsplit(' ', 1)
            _, dims = parse_type(t)
            v = rng.standard_normal(dims).astype(np.float32)
            np.save(os.path.join(folder, name + '.npy'), v)
            inputs[name] = v.astype(np.float64)
            f.write('%s=%s.npy\n' % (name, name))
    p = Program(bundle)
    p.env.update(inputs)
    y = p.run(cut, inputs, output)
    np.save(os.path.join(folder, 'expected', output + '.npy'), four_d(y).astype(np.float32))


if __name__ == '__main__':
    main()
