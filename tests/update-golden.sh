#!/usr/bin/env bash
# Regenerates the golden outputs on purpose, from the built anec-hal. Review the diff before committing.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
bin=${1:-$root/build/tools/anec-hal}
g=$root/tests/golden
hal() { "$bin" --tables "$root/tables" "$@"; }
hal list > "$g/anec-hal-list.txt"
for f in text json toml; do hal show h13 --format $f > "$g/anec-hal-show-h13.$f"; done
hal diff h13 h17s > "$g/anec-hal-diff-h13-h17s.txt"
# xref without the fixture's addresses (they depend on the compiler that built it)
hal xref "$root/build/tests/fixtures/libhal_O2.dylib" | sed -E 's/  \[0x[0-9a-f]+, /  [/' > "$g/anec-hal-xref.txt"
desc=${bin%/anec-hal}/anec-desc
k=$root/../shared/testdata/external/eiln-ane/kernels
"$desc" --tables "$root/tables" dump "$k/activation/relu6.bin" > "$g/anec-desc-relu6.txt"
"$desc" --tables "$root/tables" dump "$k/unary/cube.bin" --format json > "$g/anec-desc-cube.json"
"$desc" --tables "$root/tables" dump "$k/activation/softmax.bin" --td 4 > "$g/anec-desc-softmax-td4.txt"
"$desc" --tables "$root/tables" dump "$k/../../tinygrad/conv.hwx" > "$g/anec-desc-conv-hwx.txt"
# every real program, text and JSON
mkdir -p "$g/desc"
rm -f "$g/desc"/*
ext=$root/../shared/testdata/external
for f in "$ext"/eiln-ane/kernels/*/*.bin "$ext"/tinygrad/*.hwx "$ext"/tinygrad/model.hwx.golden; do
  n=$(echo "${f#$ext/}" | tr / _)
  "$desc" --tables "$root/tables" dump "$f" > "$g/desc/$n.txt"
  "$desc" --tables "$root/tables" dump "$f" --format json > "$g/desc/$n.json"
done
# the programs of newer compilers and other generations (newer/: H11, H13, H15 by compiler v7.5.8)
newer=$root/../shared/testdata/newer
for f in "$newer"/*/*.hwx; do
  n=newer_$(echo "${f#$newer/}" | tr / _)
  "$desc" --tables "$root/tables" dump "$f" > "$g/desc/$n.txt"
  "$desc" --tables "$root/tables" dump "$f" --format json > "$g/desc/$n.json"
done
# the same program for the other four targets (more-generations/: M10, T0, H12, H14)
more=$root/../shared/testdata/more-generations
for f in "$more"/*/*.hwx; do
  n=more_$(echo "${f#$more/}" | tr / _)
  "$desc" --tables "$root/tables" dump "$f" > "$g/desc/$n.txt"
  "$desc" --tables "$root/tables" dump "$f" --format json > "$g/desc/$n.json"
done
# every real hwx converted to an anec container (0x1000-byte header), then dumped
tmp=$(mktemp -d)
for f in "$ext"/tinygrad/*.hwx; do
  n=$(basename "$f" .hwx)
  "$desc" --tables "$root/tables" convert "$f" -o "$tmp/$n.anec" 2>/dev/null
  "$desc" --tables "$root/tables" dump "$tmp/$n.anec" > "$g/desc/converted_$n.anec.txt"
done
rm -rf "$tmp"
# the HTML page of each kind of program, dumped from the file's folder so that the page names the file
# as the test does; a chain past the tree's node budget as its page's header line and digest (the page
# is 11 MB): 160 copies of relu6's descriptor built as tests/desc/td_test.cpp's relu6_chain builds them
mkdir -p "$g/desc-html"
rm -f "$g/desc-html"/*
desc_abs=$(cd "$(dirname "$desc")" && pwd)/anec-desc
html() { (cd "$(dirname "$1")" && "$desc_abs" --tables "$root/tables" dump "$(basename "$1")" --format html "${@:2}"); }
tmp=$(mktemp -d)
html "$k/activation/relu6.bin" > "$g/desc-html/relu6.bin.html"
html "$k/activation/softmax.bin" --td 4 > "$g/desc-html/softmax.bin-td4.html"
html "$k/activation/relu6.bin" --generation 5 > "$g/desc-html/relu6.bin-generation5.html"
html "$ext/tinygrad/conv.hwx" > "$g/desc-html/conv.hwx.html"
"$desc" --tables "$root/tables" convert "$ext/tinygrad/conv.hwx" -o "$tmp/conv.anec" 2>/dev/null
html "$tmp/conv.anec" > "$g/desc-html/conv.anec.html"
python3 - "$k/activation/relu6.bin" "$tmp/chain160.bin" <<'EOF_CHAIN'
import sys
one, n, stride = open(sys.argv[1], "rb").read()[:0x274], 160, 0x300
chain = bytearray(n * stride + 0x80)
for i in range(n):
    chain[i * stride:i * stride + 0x274] = one
    if i + 1 < n:
        chain[i * stride + 3] &= ~0x02
open(sys.argv[2], "wb").write(chain)
EOF_CHAIN
html "$tmp/chain160.bin" > "$tmp/chain160.html"
{ grep -o '<p>[^<]*</p>' "$tmp/chain160.html" | sed -n 1p
  echo "sha256 $(sha256sum < "$tmp/chain160.html" | cut -d' ' -f1), $(wc -c < "$tmp/chain160.html") bytes"
} > "$g/desc-html/chain160.bin.digest"
rm -rf "$tmp"
# the real network plist on all 28 targets
anec=${bin%/anec-hal}/anec
"$anec" --tables "$root/tables" check "$ext/tinygrad/net.plist" --target all > "$g/anec-check-net-plist-all.txt"
"$anec" --tables "$root/tables" estimate "$ext/tinygrad/net.plist" --target all --format csv > "$g/anec-estimate-net-plist-all.csv"
# every MIL program and Core ML model of the shared test data: check, estimate and place on h16
# (COREML stands for the test data's folder; a model anec cannot read keeps its error as its report)
coreml=$(cd "$root/../shared/testdata/coreml" && pwd -P)
mkdir -p "$g/coreml"
rm -f "$g/coreml"/*
for f in "$coreml"/mil/*/*.mil "$coreml"/mlmodel/*/*.mlmodel "$coreml"/mlpackage/*/*.mlpackage \
  "$coreml"/mlmodelc/*/*.mlmodelc; do
  n=$(echo "${f#"$coreml"/}" | tr / _)
  for cmd in check estimate place; do
    { "$anec" --tables "$root/tables" $cmd "$f" --target h16 2>&1 || true; } | sed "s|$coreml|COREML|g" \
      > "$g/coreml/$n.$cmd.txt"
  done
done
# golden command encodings, as hex
fwtool=${bin%/anec-hal}/anec-fw
mkdir -p "$g/fw"
for f in "$root"/tests/firmware/commands/*; do
  n=$(basename "${f%.*}")
  "$fwtool" --tables "$root/tables" encode "$f" -o "$g/fw/$n.bin" 2>/dev/null
  od -An -v -tx1 "$g/fw/$n.bin" | tr -d ' \n' > "$g/fw/$n.hex" && echo >> "$g/fw/$n.hex"
  rm "$g/fw/$n.bin"
done
"$fwtool" --tables "$root/tables" simulate "$root/tests/firmware/scripts/recovery.toml" > "$g/fw/sim-recovery.txt"
# a real ONNX network (fetched by ctest's models.fetch into ~/.cache/anec/models)
models=${ANEC_MODEL_CACHE:-$HOME/.cache/anec/models}/package/models
if [ -d "$models" ]; then
  "$anec" --tables "$root/tables" estimate "$models/embedding_model.onnx" --target all --dim unk__314=1 --format csv > "$g/anec-estimate-embedding-onnx-all.csv"
  "$anec" --tables "$root/tables" check "$models/melspectrogram.onnx" --target all --dim batch_size=1 --dim samples=1280 > "$g/anec-check-melspectrogram-onnx-all.txt" || true
  # the report names the model as given: MODELS stands for the cache's folder, which depends on $HOME
  "$anec" --tables "$root/tables" place "$models/melspectrogram.onnx" --target h13 --dim batch_size=1 --dim samples=1280 |
    sed "s|$models|MODELS|g" > "$g/anec-place-melspectrogram-h13.txt"
  cls=$models/../../ocr-models/package/assets/ch_ppocr_mobile_v2.0_cls_infer.onnx
  "$anec" --tables "$root/tables" place "$cls" --target all --format csv --dim p2o.DynamicDimension.0=1 \
    --dim p2o.DynamicDimension.1=48 --dim p2o.DynamicDimension.2=192 > "$g/anec-place-ocr-cls-all.csv"
else
  echo "no fetched models in $models: run ctest -R models.fetch first" >&2
fi
echo "golden files rewritten in $g; review with git diff"
