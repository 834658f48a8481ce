"""NumPy reference for `anec eval` on a real Core ML NeuralNetwork model with its weights
(eval_numpy_test.cpp).

usage: coreml_eval_reference.py DIR MODEL FORMAT_DIR

Decodes MODEL (an .mlmodel) with the build machine's `protoc --decode` against the Core ML schema in
FORMAT_DIR (an oracle independent of anec's reader), runs its layers here in float64 as
NeuralNetwork.proto defines them (convolution with valid or same padding, ReLU, max and average
pooling, flatten in channel-first or channel-last order, inner product), and writes a float32 input
as a .npy file, inputs.txt (NAME=FILE.npy) and expected/OUTPUT.npy, as `anec eval -o` writes it.
"""
import os
import re
import subprocess
import sys

import numpy as np


def parse_text_proto(text):
    """The protobuf text format as nested dicts of lists: {field: [value or dict, ...]}."""
    tokens = re.findall(r'"(?:\\.|[^"\\])*"|[{}]|[A-Za-z_][A-Za-z0-9_]*:?|[-+0-9.eE]+(?:inf)?|nan', text)
    pos = 0

    def block():
        nonlocal pos
        out = {}
        while pos < len(tokens) and tokens[pos] != '}':
            key = tokens[pos].rstrip(':')
            pos += 1
            if tokens[pos] == '{':
                pos += 1
                value = block()
                pos += 1
            else:
                value = tokens[pos]
                pos += 1
            out.setdefault(key, []).append(value)
        return out

    return block()


def floats(weights):
    return np.array([float(v) for v in weights.get('floatValue', [])], dtype=np.float64)


def one(d, key, default=None):
    return d[key][0] if key in d else default


def conv(x, p):
    out_c, k_c = int(one(p, 'outputChannels')), int(one(p, 'kernelChannels'))
    kh, kw = (int(v) for v in p['kernelSize'])
    sh, sw = (int(v) for v in p.get('stride', ['1', '1']))
    w = floats(one(p, 'weights')).reshape(out_c, k_c, kh, kw)
    if 'same' in p:  # the output is ceil(in / stride); the extra padding goes at the end
        ph, pw = [max((-(-n // s) - 1) * s + k - n, 0) for n, s, k in ((x.shape[1], sh, kh), (x.shape[2], sw, kw))]
        x = np.pad(x, ((0, 0), (ph // 2, ph - ph // 2), (pw // 2, pw - pw // 2)))
    c, h, wd = x.shape
    oh, ow = (h - kh) // sh + 1, (wd - kw) // sw + 1
    y = np.zeros((out_c, oh, ow))
    for i in range(kh):
        for j in range(kw):
            patch = x[:, i:i + sh * oh:sh, j:j + sw * ow:sw]
            y += np.einsum('oc,chw->ohw', w[:, :, i, j], patch)
    if one(p, 'hasBias') == 'true':
        y += floats(one(p, 'bias'))[:, None, None]
    return y


def pool(x, p):
    kh, kw = (int(v) for v in p['kernelSize'])
    sh, sw = (int(v) for v in p['stride'])
    if 'valid' not in p:
        raise SystemExit('only valid pooling is modelled here')
    c, h, w = x.shape
    oh, ow = (h - kh) // sh + 1, (w - kw) // sw + 1
    windows = np.stack([x[:, i:i + sh * oh:sh, j:j + sw * ow:sw] for i in range(kh) for j in range(kw)])
    return windows.max(0) if one(p, 'type', 'MAX') == 'MAX' else windows.mean(0)


def layer(x, l):
    if 'convolution' in l:
        return conv(x, one(l, 'convolution'))
    if 'activation' in l:
        if 'ReLU' not in one(l, 'activation'):
            raise SystemExit('only ReLU is modelled here')
        return np.maximum(x, 0)
    if 'pooling' in l:
        return pool(x, one(l, 'pooling'))
    if 'flatten' in l:
        order = one(one(l, 'flatten'), 'mode', 'CHANNEL_FIRST')
        return (x.transpose(1, 2, 0) if order == 'CHANNEL_LAST' else x).reshape(-1, 1, 1)
    if 'innerProduct' in l:
        p = one(l, 'innerProduct')
        w = floats(one(p, 'weights')).reshape(int(one(p, 'outputChannels')), int(one(p, 'inputChannels')))
        y = w @ x.reshape(-1)
        if one(p, 'hasBias') == 'true':
            y += floats(one(p, 'bias'))
        return y.reshape(-1, 1, 1)
    raise SystemExit('layer kind not modelled here: ' + ', '.join(k for k in l if k not in ('name', 'input', 'output')))


def main():
    out_dir, model, format_dir = sys.argv[1:4]
    with open(model, 'rb') as f:
        text = subprocess.run(['protoc', '--decode=CoreML.Specification.Model', '-I', format_dir, 'Model.proto'],
                              stdin=f, capture_output=True, check=True, text=True).stdout
    spec = parse_text_proto(text)
    description = one(spec, 'description')
    image = one(one(one(description, 'input'), 'type'), 'imageType')
    name = one(one(description, 'input'), 'name').strip('"')
    height, width = int(one(image, 'height')), int(one(image, 'width'))
    channels = 1 if one(image, 'colorSpace') == 'GRAYSCALE' else 3
    x = np.random.default_rng(20251127).uniform(0, 255, (channels, height, width)).astype(np.float32)
    os.makedirs(os.path.join(out_dir, 'expected'), exist_ok=True)
    np.save(os.path.join(out_dir, name + '.npy'), x.reshape(1, channels, height, width))
    with open(os.path.join(out_dir, 'inputs.txt'), 'w') as f:
        f.write(f'{name}={name}.npy\n')
    values = {name: x.astype(np.float64)}
    for l in one(spec, 'neuralNetwork')['layers']:
        values[one(l, 'output').strip('"')] = layer(values[one(l, 'input').strip('"')], l)
    output = one(one(description, 'output'), 'name').strip('"')
    y = values[output]
    np.save(os.path.join(out_dir, 'expected', output + '.npy'), y.reshape(1, *y.shape).astype(np.float32))


main()
