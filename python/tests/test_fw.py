"""anec.fw: firmware commands encoded, decoded and validated as `anec-fw` does it, compared with the
tool's own output (ANEC_TEST_TOOLS_DIR, set by ctest), the wire form checked against
docs/firmware-wire.md, and a corrupted command rejected with the reason the tool gives."""
import json
import pathlib
import struct
import tomllib
import zlib

import pytest

import anec
import anec.fw
from helpers import needs_tools, run_tool, without_version

COMMANDS = pathlib.Path(__file__).resolve().parents[2] / "tests" / "firmware" / "commands"
EXAMPLES = sorted(p for p in COMMANDS.iterdir() if p.suffix in (".toml", ".json"))
MAGIC = 0x454E5343  # docs/firmware-wire.md


def fw_tool(*args):
    return run_tool("anec-fw", *args)


def description(path):
    with open(path, "rb") as f:
        return tomllib.load(f) if path.suffix == ".toml" else json.load(f)


def cache_request():
    return description(COMMANDS / "cache_request.toml")


def test_examples_are_there():
    assert len(EXAMPLES) >= 10


@pytest.mark.parametrize("path", EXAMPLES, ids=lambda p: p.name)
def test_encode_lays_out_the_documented_wire_form(path):
    wire = anec.fw.encode(description(path))
    assert isinstance(wire, bytes) and len(wire) % 16 == 0
    command_id, size = struct.unpack_from("<II", wire, 0)
    magic, checksum = struct.unpack_from("<II", wire, 0x18 + size)
    assert magic == MAGIC
    assert checksum == zlib.crc32(wire[: 0x1C + size])  # over the header, the body and the magic
    assert not any(wire[0x20 + size:])  # zero padding
    verdict = anec.fw.validate(wire)
    assert verdict.accepted and verdict and verdict.disposition == "accept" and verdict.code is None
    assert verdict.violations == [] and verdict.decoded and verdict.size == len(wire)
    decoded = anec.fw.decode(wire)  # the document anec-fw decode prints: schema and version first
    assert (decoded.pop("schema"), decoded.pop("schema_version")) == ("anec-fw.command", 1)
    assert verdict.command == decoded
    named = description(path)["command"]
    assert verdict.command["command"] == named or command_id == named
    # decode gives a description encode takes back.
    assert anec.fw.encode(anec.fw.decode(wire)) == wire


@needs_tools
@pytest.mark.parametrize("path", EXAMPLES, ids=lambda p: p.name)
def test_encode_and_validate_are_the_tools(tmp_path, path):
    out = tmp_path / "cmd.bin"
    rc, _, err = fw_tool("encode", path, "-o", out)
    assert rc == 0, err
    wire = anec.fw.encode(description(path))
    assert wire == out.read_bytes()
    rc, text, err = fw_tool("validate", out, "--format", "json")
    assert rc == 0, err
    assert without_version(anec.fw.validate(wire).doc) == without_version(json.loads(text))
    assert anec.fw.validate(out).doc == anec.fw.validate(wire).doc  # a path reads as its bytes
    rc, text, err = fw_tool("decode", out, "--format", "json")
    assert rc == 0, err
    assert without_version(anec.fw.decode(wire)) == without_version(json.loads(text))


@needs_tools
def test_a_corrupted_checksum_is_rejected_as_the_tool_rejects_it(tmp_path):
    wire = bytearray(anec.fw.encode(cache_request()))
    size = struct.unpack_from("<I", wire, 4)[0]
    wire[0x1C + size] ^= 0x01  # the checksum's low byte
    verdict = anec.fw.validate(bytes(wire))
    assert not verdict.accepted and not verdict
    assert verdict.disposition == "reject" and verdict.code == "ANEC-FW-003"
    assert [(v.check, v.code) for v in verdict.violations] == [("checksum", "ANEC-FW-003")]
    checksum = verdict.violations[0]
    assert checksum.offset == 0x1C + size and checksum.status == 0xE00002C2 and checksum.message
    assert repr(verdict) == "<anec.fw.Verdict reject ANEC-FW-003>" and "checksum" in repr(checksum)
    bad = tmp_path / "bad.bin"
    bad.write_bytes(wire)
    rc, text, err = fw_tool("validate", bad, "--format", "json")
    assert rc == 1, err
    assert [v["code"] for v in json.loads(text)["violations"]] == [v.code for v in verdict.violations]
    assert without_version(json.loads(text)) == without_version(verdict.doc)


def test_a_flipped_body_bit_is_rejected():
    wire = bytearray(anec.fw.encode(cache_request()))
    wire[0x18] ^= 0x80  # the body's first byte: the checksum no longer matches
    verdict = anec.fw.validate(bytes(wire))
    assert verdict.disposition == "reject" and "ANEC-FW-003" in [v.code for v in verdict.violations]


def test_channels():
    wire = anec.fw.encode(cache_request())
    assert anec.fw.validate(wire, channel="ring").accepted
    # Only the fast-path wire ids run on the execution loop: anything else faults the firmware.
    verdict = anec.fw.validate(anec.fw.encode({"command": "PING"}), channel="exeloop")
    assert verdict.disposition == "fault-and-reset" and verdict.code == "ANEC-FW-013"
    with pytest.raises(ValueError):
        anec.fw.validate(wire, channel="mailbox")


def test_rejects_and_warnings():
    command = cache_request()
    command["priority"] = 9  # fwPriority < 8: the encoder writes it, the firmware rejects it
    verdict = anec.fw.validate(anec.fw.encode(command))
    assert verdict.disposition == "reject" and verdict.code == "ANEC-FW-007"
    assert [(v.check, v.offset) for v in verdict.violations] == [("priority", 8)]
    command = cache_request()
    command["body"]["nbrOfOutputBufferSets"] = 2  # one output buffer set
    assert anec.fw.validate(anec.fw.encode(command)).code == "ANEC-FW-010"
    # A minor interface-version mismatch warns and continues: accepted, the warning's code kept.
    version = {"command": "PROGRAM_INTERFACE_VERSION_CHECK", "program_id": 4,
               "body": {"major": 1, "minor": 5}}
    verdict = anec.fw.validate(anec.fw.encode(version))
    assert verdict.accepted and verdict.disposition == "accept" and verdict.code == "ANEC-FW-014"
    assert [v.disposition for v in verdict.violations] == ["warn"]


def test_validate_garbage_is_a_verdict():
    verdict = anec.fw.validate(b"\x01\x02\x03")
    assert not verdict.accepted and not verdict.decoded
    assert verdict.code and verdict.code.startswith("ANEC-FW-")


def test_errors(tmp_path):
    with pytest.raises(anec.Error) as e:
        anec.fw.encode({"command": "NO_SUCH_COMMAND"})
    assert e.value.code == "ANEC-FWC-001"
    command = cache_request()
    command["body"]["chainedBuffers"][0]["type"] = 1 << 40  # a u32 field
    with pytest.raises(anec.Error) as e:
        anec.fw.encode(command)
    assert e.value.code in ("ANEC-FWC-001", "ANEC-FWC-002")
    with pytest.raises(anec.Error) as e:
        anec.fw.decode(b"\x01\x02\x03")
    assert e.value.code == "ANEC-FW-020"
    with pytest.raises(anec.Error) as e:
        anec.fw.validate(tmp_path / "missing.bin")
    assert e.value.code == "ANEC-IO-001"
    with pytest.raises(TypeError):
        anec.fw.validate(42)
    with pytest.raises(TypeError):
        anec.fw.encode({"command": b"PING"})  # not JSON


def test_docstrings():
    for name in anec.fw.__all__:
        assert getattr(anec.fw, name).__doc__, name
    assert anec.fw.__doc__ and "validate" in anec.fw.__doc__
