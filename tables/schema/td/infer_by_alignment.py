#!/usr/bin/env python3
"""Writes a register database for a descriptor generation no public source maps, by aligning one
program of that generation word by word against the same program of a generation whose database
exists (README.md: how gen4.toml and gen6.toml were inferred from gen5.toml).

    infer_by_alignment.py REF.toml REF.hwx TARGET.hwx GENERATION TARGET_NAME > genN.toml

Both programs must hold one descriptor in the generation-7 stream encoding (tables/schema/layout/
td.toml, td.stream: count-1 in bits 31:26, register byte address in bits 25:0) after a header of the
reference's header_bytes. A stream the reference has (same address, same word count) keeps the
reference block's name and fields; a stream that continues a numbered series of reference blocks
(NAME0, NAME1, ... at a fixed stride) is named NAME<k> and takes the fields of the series' last block
with the index replaced. Each field's source says where the word lies in both files and whether the
values are equal. Anything else (a reference block missing from the target, a new stream outside a
series, a different word count) stops the script: the alignment does not hold.
"""
import os
import re
import struct
import sys
import tomllib


def text_section(b):
    ncmds = struct.unpack_from('<I', b, 16)[0]
    off = 32
    for _ in range(ncmds):
        cmd, size = struct.unpack_from('<II', b, off)
        if cmd == 0x19:  # LC_SEGMENT_64
            for k in range(struct.unpack_from('<I', b, off + 64)[0]):
                s = off + 72 + 80 * k
                if b[s:s + 16].rstrip(b'\0') == b'__text':
                    return struct.unpack_from('<I', b, s + 48)[0], struct.unpack_from('<Q', b, s + 40)[0]
        off += size
    sys.exit('no __text section')


def walk(path, header_bytes):
    """Header words by byte offset and streams (header offset, header, address, [(offset, value)])."""
    b = open(path, 'rb').read()
    begin, size = text_section(b)
    word = lambda at: struct.unpack_from('<I', b, at)[0]
    header = {k: (begin + k, word(begin + k)) for k in range(0, header_bytes, 4)}
    streams, p = [], begin + header_bytes
    while p < begin + size:
        h = word(p)
        count, address = (h >> 26) + 1, h & 0x3ffffff
        if p + 4 + 4 * count > begin + size:
            sys.exit(f'{path}: stream at {p:#x} runs past __text')
        streams.append((p, h, address, [(p + 4 + 4 * i, word(p + 4 + 4 * i)) for i in range(count)]))
        p += 4 + 4 * count
    return header, streams, begin, size


def series(blocks, address):
    """(name stem, last block of the series, new index) when `address` continues a numbered series."""
    numbered = {}
    for blk in blocks:
        m = re.fullmatch(r'(.*?)(\d+)', blk['name'])
        if m:
            numbered.setdefault(m[1], []).append((int(m[2]), blk))
    for stem, members in numbered.items():
        members.sort(key=lambda m: m[0])
        if len(members) < 2:
            continue
        stride = members[1][1]['address'] - members[0][1]['address']
        last_index, last = members[-1]
        if stride > 0 and address > last['address'] and (address - members[0][1]['address']) % stride == 0:
            return stem, last, (address - members[0][1]['address']) // stride
    return None


def quote(s):
    return '"' + s.replace('\\', '\\\\').replace('"', '\\"') + '"'


def main():
    ref_toml, ref_hwx, target_hwx, generation, target = sys.argv[1:6]
    ref = tomllib.load(open(ref_toml, 'rb'))
    rname, tname = os.path.basename(ref_hwx), os.path.basename(target_hwx)
    rgen = ref['generation']
    rheader, rstreams, _, _ = walk(ref_hwx, ref['header_bytes'])
    theader, tstreams, tbegin, tsize = walk(target_hwx, ref['header_bytes'])
    rby = {s[2]: s for s in rstreams}
    words = {}  # register address (or ('Header', offset)) -> (target offset, value, ref offset, value)
    for k, (off, v) in theader.items():
        words[('Header', k)] = (off, v) + rheader[k]
    out_blocks = []
    fields_of = {}
    for f in ref['field']:
        fields_of.setdefault(f['block'], []).append(f)
    out_fields = [dict(f) for f in fields_of.get('Header', [])]
    for p, h, address, ws in tstreams:
        r = rby.get(address)
        if r and len(r[3]) == len(ws):
            blk = next(b for b in ref['block'] if b['address'] == address)
            for i, (off, v) in enumerate(ws):
                words[(blk['name'], address + 4 * i)] = (off, v) + r[3][i]
            out_blocks.append((blk['name'], address, len(ws),
                               f'stream header {h:#010x} at {tname} {p:#x}: {len(ws)} words from {address:#x}, '
                               f'as the generation-{rgen} block {blk["name"]} ({rname} {r[0]:#x})'))
            out_fields += [dict(f) for f in fields_of.get(blk['name'], [])]
            continue
        s = series(ref['block'], address)
        if not s or r:
            sys.exit(f'{target_hwx}: stream {h:#010x} at {p:#x} does not align with {ref_toml}')
        stem, last, k = s
        lm = re.fullmatch(r'(.*?)(\d+)', last['name'])
        name = f'{stem}{k}'
        for i, (off, v) in enumerate(ws):
            words[(name, address + 4 * i)] = (off, v, None, None)
        out_blocks.append((name, address, len(ws),
                           f'stream header {h:#010x} at {tname} {p:#x}: {len(ws)} words from {address:#x}; '
                           f'no generation-{rgen} counterpart: it continues the series {stem}0.. at its '
                           f'stride, so it is named {name} with the fields of {last["name"]}'))
        for f in fields_of.get(last['name'], []):
            g = dict(f)
            g['block'] = name
            g['address'] = f['address'] - last['address'] + address
            g['register'] = f['register'].replace(f'[{lm[2]}]', f'[{k}]')
            if 'pair' in g:
                g['pair'] = g['pair'].replace(f'[{lm[2]}]', f'[{k}]')
            g['series_of'] = f
            out_fields.append(g)
    missing = {b['name'] for b in ref['block']} - {b[0] for b in out_blocks}
    if missing:
        sys.exit(f'{target_hwx}: no stream for {sorted(missing)}')
    print(f'# Generation-{generation} ({target}) task-descriptor register database. See README.md.')
    print(f'# Written by infer_by_alignment.py from {os.path.basename(ref_toml)}: {tname} (AlexAltea/ane '
          'tests/matmul, MIT;')
    print(f'# Apple ANE compiler v7.5.8; __text at file {tbegin:#x}, {tsize:#x} bytes) walked with the '
          f'generation-{rgen}')
    print(f'# header ({ref["header_bytes"]:#x} bytes) and stream encoding and aligned word by word with '
          f'{rname}, the same')
    print('# matmul built by the same compiler. No public source maps these registers: every name is '
          'the')
    print(f'# generation-{rgen} name of the word at the same place (itself inferred, see '
          f'{os.path.basename(ref_toml)}), so')
    print('# confidence is "inferred" (a reference placeholder stays a placeholder); each source gives '
          'both')
    print('# file offsets and values and says whether they are equal.')
    print('schema = "anec-td"')
    print('version = "1.0"')
    print(f'generation = {generation}')
    print('# One sample, one operation: names carried over from an inferred database, several words '
          'unnamed.')
    print('complete = false')
    print(f'header_bytes = {ref["header_bytes"]:#x}')
    print('source = ' + quote(f'stream layout: {tname} walked with the generation-{rgen} encoding; register '
                              f'names: aligned word by word with {rname} and {os.path.basename(ref_toml)} '
                              '(AlexAltea/ane test programs, MIT)'))
    for name, address, count, source in out_blocks:
        print(f'\n[[block]]\nname = {quote(name)}\naddress = {address:#x}\nwords = {count}')
        print(f'source = {quote(source)}\nconfidence = "inferred"')
    for f in out_fields:
        key = ('Header', f['address']) if f['block'] == 'Header' else (f['block'], f['address'])
        off, v, roff, rv = words[key]
        if 'series_of' in f:
            o = f['series_of']
            source = (f'{tname} {off:#x} = {v:#x}; named as {o["block"]}.{o["register"]}.{o["name"]}, the word at '
                      f'the same place of the series\' last block (generation-{rgen} source: {o["source"]})')
        else:
            same = 'equals' if v == rv else 'differs from'
            source = (f'{tname} {off:#x} = {v:#x} {same} generation {rgen} {f["register"]}.{f["name"]} '
                      f'({rname} {roff:#x} = {rv:#x}); generation-{rgen} name and bits carried over '
                      f'(generation-{rgen} source: {f["source"]})')
        confidence = 'placeholder' if f['confidence'] == 'placeholder' else 'inferred'
        print(f'\n[[field]]\nblock = {quote(f["block"])}\nregister = {quote(f["register"])}')
        print(f'name = {quote(f["name"])}\naddress = {f["address"]:#x}\nbits = {quote(f["bits"])}')
        for k in ('role', 'access', 'pair'):
            if k in f:
                print(f'{k} = {quote(f[k])}')
        print(f'source = {quote(source)}\nconfidence = "{confidence}"')


if __name__ == '__main__':
    main()
