#!/usr/bin/env bash
# Fills OUT_DIR with the seed inputs of one fuzz target. Nothing binary is committed: the seeds are
# the committed text corpora in fuzz/corpus/, the real files in ../shared/testdata (see its README),
# and files made by the tools and the test fixtures of BUILD_DIR, an ordinary (or sanitizer) build
# with tests on: BUILD_DIR/tools/anec-hal, anec-desc, anec-fw and BUILD_DIR/tests/fixtures.
#
#   fuzz/seeds.sh BUILD_DIR OUT_DIR TARGET      TARGET: hal_blob hal_toml schema binary td_chain hwx
#                                               anec model command package im4p npy mil coreml (or all: one
#                                               OUT_DIR/TARGET per target)
#
# A tool that fails to make a seed is an error (exit 2), its messages shown; so is a target left
# without seeds.
set -euo pipefail

usage() {
  echo "usage: $0 BUILD_DIR OUT_DIR TARGET|all" >&2
  exit 2
}
[ $# -eq 3 ] || usage
root=$(cd "$(dirname "$0")/.." && pwd)
build=$1
out=$2
target=$3
shared=$root/../shared/testdata
external=$shared/external
targets="hal_blob hal_toml schema binary td_chain hwx anec model measurements command package im4p npy mil coreml"

if [ "$target" = all ]; then
  for t in $targets; do "$0" "$build" "$out/$t" "$t"; done
  exit 0
fi

tool() { # the tool, checked once
  local t=$build/tools/$1
  [ -x "$t" ] || { echo "$0: $t is missing: build $build first" >&2; exit 2; }
  echo "$t"
}
fixtures() {
  local d=$build/tests/fixtures
  [ -e "$d/fw_standin.macho" ] || { echo "$0: no test fixtures in $d: build $build with -DANEC_BUILD_TESTS=ON" >&2; exit 2; }
  echo "$d"
}
quiet() { # a tool's report ("… bytes written to …") only when it fails
  local log
  log=$(mktemp)
  if ! "$@" >"$log" 2>&1; then
    cat "$log" >&2
    rm -f "$log"
    echo "$0: failed: $*" >&2
    exit 2
  fi
  rm -f "$log"
}
shared_files() { # the real files: shared/testdata is outside the repository and must be there
  for f in "$@"; do [ -e "$f" ] || { echo "$0: $f is missing (../shared/testdata, see its README)" >&2; exit 2; }; done
  cp "$@" "$out"/
}

# ONNX models from text: protoc encodes the committed text-format models of fuzz/corpus/onnx and a
# chain of nested Ifs (4 levels, and 40: past protobuf's 100 nested messages) with the onnx.proto of
# the ONNX package ($ANEC_ONNX_PROTO, default /usr/include/onnx/onnx.proto). The real ONNX networks
# are the test fixture's (models.fetch, cached where BUILD_DIR's ANEC_MODEL_CACHE says), those under
# 512 KiB, when fetched: ../shared/testdata holds none.
onnx_encode() { # TEXT OUT
  protoc --encode=onnx.ModelProto -I "$(dirname "$onnx_proto")" "$onnx_proto" <"$1" >"$2" ||
    { echo "$0: protoc cannot encode $1" >&2; exit 2; }
}
nested_ifs() { # DEPTH: the text of a model whose If nodes nest DEPTH levels deep
  local k open="" close="" ty='type { tensor_type { elem_type: 1 shape { dim { dim_value: 1 } } } }'
  for ((k = 0; k < $1; k++)); do
    open+="node { op_type: \"If\" input: \"c\" output: \"t$k\" attribute { name: \"else_branch\" type: GRAPH g { name: \"e$k\" node { op_type: \"Identity\" input: \"x\" output: \"e$k\" } output { name: \"e$k\" $ty } } } attribute { name: \"then_branch\" type: GRAPH g { name: \"t$k\" "
    close="output { name: \"t$((k + 1))\" $ty } } } } $close"
  done
  echo "ir_version: 8 opset_import { version: 13 } graph { name: \"g\" $open node { op_type: \"Identity\" input: \"x\" output: \"t$1\" } $close"
  echo "input { name: \"c\" type { tensor_type { elem_type: 9 shape { } } } }"
  echo "input { name: \"x\" type { tensor_type { elem_type: 1 shape { dim { dim_value: 1 } } } } } output { name: \"t0\" $ty } }"
}
onnx_seeds() {
  onnx_proto=${ANEC_ONNX_PROTO:-/usr/include/onnx/onnx.proto}
  command -v protoc >/dev/null || { echo "$0: protoc is missing (protobuf-compiler)" >&2; exit 2; }
  [ -e "$onnx_proto" ] || { echo "$0: $onnx_proto is missing (libonnx-dev, or set ANEC_ONNX_PROTO)" >&2; exit 2; }
  for f in "$root"/fuzz/corpus/onnx/*.txtpb; do onnx_encode "$f" "$out/onnx-$(basename "$f" .txtpb).onnx"; done
  local text
  text=$(mktemp)
  for depth in 4 40; do
    nested_ifs "$depth" >"$text"
    onnx_encode "$text" "$out/onnx-nested-$depth.onnx"
  done
  rm -f "$text"
  local cache
  cache=$(sed -n 's/^ANEC_MODEL_CACHE:PATH=//p' "$build/CMakeCache.txt" 2>/dev/null || true)
  if [ -n "$cache" ] && [ -d "$cache" ]; then
    find "$cache" -name '*.onnx' -size -512k -exec sh -c 'cp "$1" "$2/onnx-real-$(basename "$1")"' _ {} "$out" \;
  else
    echo "$0: no fetched ONNX networks (run ctest -R models.fetch in $build): ONNX seeds from text only" >&2
  fi
}

mkdir -p "$out"
case "$target" in
hal_blob) # every target's blob, as the encoder writes it
  hal=$(tool anec-hal)
  for t in "$root"/tables/targets/*.toml; do
    n=$(basename "$t" .toml)
    quiet "$hal" --tables "$root/tables" encode "$n" -o "$out/$n.bin"
  done
  ;;
hal_toml) # the committed corpus and every published target definition
  cp "$root"/fuzz/corpus/hal_toml/* "$out"/
  for t in "$root"/tables/targets/*.toml; do cp "$t" "$out/target-$(basename "$t")"; done
  ;;
schema) # the committed corpus and the database itself
  cp "$root"/fuzz/corpus/schema/* "$out"/
  cp "$root"/tables/schema/hal.toml "$out"/hal-current.toml
  ;;
binary) # the compiler-binary stand-ins: Mach-O thin/fat/stripped, ELF, RISC-V, the firmware stand-in
  fx=$(fixtures)
  cp "$fx"/lib*.dylib "$fx"/lib*.so "$fx"/riscv.o "$fx"/fw_standin.macho "$out"/
  ;;
td_chain) # the real raw H13 chains
  shared_files "$external"/eiln-ane/kernels/*/*.bin
  ;;
hwx) # the real hwx containers, and the newer compiler's ones the tools do not handle yet
  shared_files "$external"/tinygrad/*.hwx
  if compgen -G "$shared/newer/alexaltea-ane/*.hwx" >/dev/null; then cp "$shared"/newer/alexaltea-ane/*.hwx "$out"/; fi
  ;;
anec) # the real hwx containers converted, with both header sizes
  desc=$(tool anec-desc)
  for h in "$external"/tinygrad/*.hwx; do
    n=$(basename "$h" .hwx)
    quiet "$desc" --tables "$root/tables" convert "$h" -o "$out/$n.anec"
    quiet "$desc" --tables "$root/tables" convert "$h" -o "$out/$n-800.anec" --header-bytes 0x800
  done
  ;;
model) # committed graphs, the real network plist (and in binary form when python3 is there), ONNX models
  cp "$root"/fuzz/corpus/model/* "$out"/
  shared_files "$external"/tinygrad/net.plist
  if command -v python3 >/dev/null; then
    python3 -c 'import plistlib, sys; plistlib.dump(plistlib.load(open(sys.argv[1], "rb")), open(sys.argv[2], "wb"), fmt=plistlib.FMT_BINARY)' \
      "$external"/tinygrad/net.plist "$out"/net-binary.plist
  fi
  onnx_seeds
  ;;
coreml) # the real Core ML models of the shared test data, and the root models of its packages
  find "$root"/../shared/testdata/coreml -name '*.mlmodel' -size -512k -exec cp {} "$out"/ \;
  ;;
eval) # the committed graphs, and the graphs the evaluator's and the tuner's tests are built on
  cp "$root"/fuzz/corpus/model/* "$root"/fuzz/corpus/eval/* "$out"/
  ;;
measurements) # the measured-latency training file, whole and cut into a few rows per chip
  data=$root/../shared/data/ane-measured
  shared_files "$data"/train.tsv
  head -1 "$data"/train.tsv > "$out"/header.tsv
  for c in "Apple M1" "Apple M4" "M5 Pro"; do
    { head -1 "$data"/train.tsv; grep -m 8 -P "^$c\t" "$data"/train.tsv; } > "$out/rows-${c// /-}.tsv"
  done
  ;;
command) # the described test commands, encoded
  fw=$(tool anec-fw)
  for c in "$root"/tests/firmware/commands/*; do
    n=$(basename "$c"); n=${n%.*}
    quiet "$fw" --tables "$root/tables" encode "$c" -o "$out/$n.bin"
  done
  ;;
package) # packages built from the real hwx programs
  fw=$(tool anec-fw)
  for h in "$external"/tinygrad/*.hwx; do
    quiet "$fw" --tables "$root/tables" package build "$h" -o "$out/$(basename "$h" .hwx).pkg"
  done
  ;;
mil) # the MIL programs of the direct-path projects and a compiler project's tests
  shared_files "$shared"/coreml/mil/*/*.mil
  ;;
npy) # small arrays in several dtypes, byte orders, memory orders and format versions, written by
  # plain python3 (the format is a header line and raw data; no NumPy needed)
  python3 - "$out" <<'PY'
import struct, sys
def npy(name, descr, fortran, shape, data, version=1):
    shape_text = "(" + ", ".join(map(str, shape)) + ("," if len(shape) == 1 else "") + ")"
    header = "{'descr': '%s', 'fortran_order': %s, 'shape': %s, }" % (descr, fortran, shape_text)
    prefix = 10 if version == 1 else 12
    header += " " * ((64 - (prefix + len(header) + 1) % 64) % 64) + "\n"
    length = struct.pack("<H" if version == 1 else "<I", len(header))
    open(sys.argv[1] + "/" + name, "wb").write(b"\x93NUMPY" + bytes([version, 0]) + length + header.encode() + data)
npy("f4.npy", "<f4", "False", (2, 3), struct.pack("<6f", 0, 1, 2, 3, 4, 5))
npy("f2-scalar.npy", "<f2", "False", (), struct.pack("<e", 65504))
npy("i8-fortran.npy", ">i8", "True", (2, 2), struct.pack(">4q", 0, 2, 1, 3))
npy("b1.npy", "|b1", "False", (3,), bytes([1, 0, 1]))
npy("u2-v2.npy", "<u2", "False", (2,), struct.pack("<2H", 7, 65535), version=2)
PY
  ;;
im4p) # the firmware stand-in, bare and wrapped
  fw=$(tool anec-fw)
  fx=$(fixtures)
  cp "$fx"/fw_standin.macho "$out"/
  quiet "$fw" --tables "$root/tables" im4p wrap "$fx"/fw_standin.macho -o "$out/fw.im4p"
  ;;
*)
  echo "$0: unknown target '$target' (one of: $targets, all)" >&2
  exit 2
  ;;
esac

n=$(find "$out" -maxdepth 1 -type f | wc -l)
[ "$n" -gt 0 ] || { echo "$0: no seeds for $target" >&2; exit 2; }
