"""anec.load_program and Program.encode: the real Apple-compiled programs of ../shared/testdata read as
`anec-desc dump` reads them and written back byte for byte, fields changed through the API, and
the errors with the reason codes `anec-desc` prints (ANEC_TEST_TOOLS_DIR, set by ctest)."""
import json
import pathlib
import re

import pytest

import anec
from helpers import needs_tools, run_tool, without_version

TESTDATA = pathlib.Path(__file__).resolve().parents[3] / "shared" / "testdata"
TINYGRAD = TESTDATA / "external" / "tinygrad"
KERNELS = TESTDATA / "external" / "eiln-ane" / "kernels"
pytestmark = pytest.mark.skipif(not TINYGRAD.is_dir(), reason="no ../shared/testdata beside the project")

# The seven hwx programs: six *.hwx and model.hwx.golden (external/SOURCES.md).
HWX = sorted([*TINYGRAD.glob("*.hwx"), TINYGRAD / "model.hwx.golden"]) if TINYGRAD.is_dir() else []
CHAINS = sorted(KERNELS.rglob("*.bin")) if KERNELS.is_dir() else []


def desc_tool(*args):
    return run_tool("anec-desc", *args)


def cli_code(tmp_path, data):
    """The reason code anec-desc prints for a file holding `data`."""
    path = tmp_path / "input.bin"
    path.write_bytes(data)
    rc, _, err = desc_tool("dump", path, "--format", "json")
    assert rc == 2, err
    return re.search(r"ANEC-[A-Z]+-\d+", err).group(0)


def words(data, offset):
    return int.from_bytes(data[offset:offset + 4], "little")


def test_real_files_are_there():
    assert len(HWX) == 7 and len(CHAINS) == 36


@pytest.mark.parametrize("path", HWX + CHAINS, ids=lambda p: p.name)
def test_real_files_round_trip(path):
    data = path.read_bytes()
    p = anec.load_program(path)
    assert p.size == len(data) and p.warnings == []
    assert p.encode() == data
    assert anec.load_program(data).doc == p.doc  # bytes read as the path is
    # Every register's raw value is the little-endian word at its offset, its reserved bits among the
    # word's; a stream's header is the word before its registers, which are consecutive words
    # writing consecutive registers.
    for td in p.descriptors:
        for r in td.registers:
            assert r.raw == words(data, r.offset), (td.index, r)
            assert r.reserved & r.raw == r.reserved, (td.index, r)
        for st in td.streams:
            assert st.header == words(data, st.offset), (td.index, st)
            assert [(r.offset, r.address) for r in st.registers] == [
                (st.offset + 4 + 4 * i, st.address + 4 * i) for i in range(st.words)], (td.index, st)


@needs_tools
@pytest.mark.parametrize("header_bytes", ["0x800", "0x1000"])
def test_anec_containers_round_trip(tmp_path, header_bytes):
    converted = 0
    for path in HWX:
        out = tmp_path / (path.stem + ".anec")
        rc, _, err = desc_tool("convert", path, "-o", out, "--header-bytes", header_bytes)
        assert rc == 0, err
        data = out.read_bytes()
        p = anec.load_program(memoryview(data))
        assert p.container == "anec"
        assert p.header["header_bytes"] == int(header_bytes, 16)
        assert p.header["td_count"] == len(p.descriptors) == len(anec.load_program(path).descriptors)
        assert p.encode() == data
        converted += 1
    assert converted == 7


@needs_tools
@pytest.mark.parametrize("path", HWX + CHAINS[:6], ids=lambda p: p.name)
def test_same_decoding_as_anec_desc_dump(path):
    rc, out, err = desc_tool("dump", path, "--format", "json")
    assert rc == 0, err
    assert without_version(anec.load_program(path).doc) == without_version(json.loads(out))


def test_hwx_container():
    data = (TINYGRAD / "conv.hwx").read_bytes()
    p = anec.load_program(TINYGRAD / "conv.hwx")
    assert p.container == "hwx" and p.generation == 7
    assert p.header["cpusubtype"] == words(data, 8)  # the Mach-O header's cpusubtype
    assert p.header["load_commands"] and isinstance(p.header["relocations"], list)
    assert "tds" not in p.header and "container" not in p.header
    assert p.descriptors and p.descriptors[-1].eon
    assert 0 <= p.kernel_data["offset"] <= len(data)
    assert repr(p).startswith("<anec.Program hwx, generation 7: ")


def test_raw_chain():
    path = KERNELS / "activation" / "relu6.bin"
    p = anec.load_program(path)
    assert p.container == "raw-td-chain" and p.header == {}
    td = p.descriptors[0]
    assert td.index == 0 and td.offset == 0 and td.size > 0
    assert [s.offset for s in td.streams] == sorted(s.offset for s in td.streams)
    assert all(len(s.registers) == s.words for s in td.streams)
    assert [r.offset for r in td.registers[: len(td.header)]] == [r.offset for r in td.header]
    blocks = {r.block for r in td.registers}
    assert "Header" in blocks and "Common" in blocks
    common = [r for r in td.registers if r.block == "Common" and r.address == 0]
    assert len(common) == 1 and common[0].name == "InDim" and "InDim.Win" in common[0]
    assert td["Common.InDim.Win"] == common[0]["InDim.Win"] == td.fields["Common.InDim.Win"]
    assert td.register_of("Common.InDim.Win").offset == common[0].offset
    assert "Common.InDim.Win" in td and "Common.InDim.Nope" not in td
    assert re.match(r"<anec\.(Register|Stream|Descriptor) ", repr(common[0]) + repr(td.streams[0]))


def test_a_field_set_through_the_api_is_encoded():
    path = KERNELS / "activation" / "relu6.bin"
    data = path.read_bytes()
    p = anec.load_program(data)
    td = p.descriptors[0]
    register = td.register_of("Common.InDim.Win")
    before = td["Common.InDim.Win"]
    after = 77 if before != 77 else 78
    td["Common.InDim.Win"] = after
    assert p.descriptors[0]["Common.InDim.Win"] == after  # the document changed
    patched = p.encode()
    assert len(patched) == len(data)
    changed = [i for i in range(len(data)) if patched[i] != data[i]]
    assert changed and all(register.offset <= i < register.offset + 4 for i in changed)
    assert anec.load_program(patched).descriptors[0]["Common.InDim.Win"] == after
    # Through the register's own fields too; setting the value back restores the file.
    register["InDim.Win"] = before
    assert p.encode() == data


def test_edit_errors():
    p = anec.load_program(KERNELS / "activation" / "relu6.bin")
    td = p.descriptors[0]
    register = td.register_of("Common.InDim.Win")
    with pytest.raises(KeyError):
        td["Common.InDim.Nope"]
    with pytest.raises(KeyError):
        td["Common.InDim.Nope"] = 1
    with pytest.raises(KeyError):
        register["Nope"] = 1
    with pytest.raises(TypeError):
        register["InDim.Win"] = "wide"
    with pytest.raises(TypeError):
        register["InDim.Win"] = True
    register["InDim.Win"] = 1 << 15  # a 15-bit field: the encoder refuses
    with pytest.raises(anec.Error) as e:
        p.encode()
    assert e.value.code == "ANEC-ENC-003"
    register["InDim.Win"] = 1
    register.fields["InDim.Nope"] = 1  # the document edited by hand: a field the word does not have
    with pytest.raises(anec.Error) as e:
        p.encode()
    assert e.value.code == "ANEC-ENC-002"
    del register.fields["InDim.Nope"]
    p.doc["complete"] = False
    with pytest.raises(anec.Error) as e:
        p.encode()
    assert e.value.code == "ANEC-ENC-001"


def test_a_dump_from_the_tool_encodes(tmp_path):
    """A Program made from any dump document (here one the module wrote out as JSON) encodes."""
    data = (TINYGRAD / "relu.hwx").read_bytes()
    doc = json.loads(json.dumps(anec.load_program(data).doc))
    assert anec.Program(doc).encode() == data


@needs_tools
def test_read_errors_have_the_tools_reason_codes(tmp_path):
    data = (TINYGRAD / "conv.hwx").read_bytes()
    chain = (KERNELS / "activation" / "relu6.bin").read_bytes()
    cases = {
        "truncated hwx": (data[:100], "ANEC-HWX-002"),  # the load commands run past the end
        "hwx magic, no header": (data[:12], "ANEC-HWX-001"),
        "truncated chain": (chain[:20], "ANEC-TD-003"),  # no descriptor marked EON
        "empty": (b"", "ANEC-TD-003"),
    }
    for name, (bad, code) in cases.items():
        with pytest.raises(anec.Error) as e:
            anec.load_program(bad)
        assert e.value.code == code == cli_code(tmp_path, bad), name
        assert e.value.message and str(e.value).startswith(code + ": "), name


@needs_tools
def test_without_the_hwx_magic_a_file_is_a_raw_chain(tmp_path):
    """The container is told by its bytes: an hwx whose magic is broken is read as a raw chain, as
    anec-desc reads it, with the findings of that reading."""
    bad = b"\x00\x00\x00\x00" + (TINYGRAD / "conv.hwx").read_bytes()[4:]
    p = anec.load_program(bad)
    assert p.container == "raw-td-chain" and p.findings
    assert all(f["code"].startswith("ANEC-TD-") for f in p.findings)
    path = tmp_path / "bad.bin"
    path.write_bytes(bad)
    rc, out, err = desc_tool("dump", path, "--format", "json")
    assert rc == 0, err
    assert without_version(p.doc) == without_version(json.loads(out))
    assert p.encode() == bad


def test_other_errors(tmp_path):
    with pytest.raises(anec.Error) as e:
        anec.load_program(tmp_path / "missing.hwx")
    assert e.value.code == "ANEC-IO-001"
    chain = KERNELS / "activation" / "relu6.bin"
    with pytest.raises(anec.Error) as e:  # a raw chain needs a database of its generation
        anec.load_program(chain, generation=99)
    assert e.value.code == "ANEC-DESC-001"
    with pytest.raises(anec.Error) as e:  # ... that walks descriptors
        anec.load_program(chain, generation=10)
    assert e.value.code == "ANEC-DESC-002"
    with pytest.raises(ValueError):
        anec.load_program(chain, generation=-1)
    with pytest.raises(TypeError):
        anec.load_program(42)


@needs_tools
@pytest.mark.parametrize("generation", [10, 99])
def test_an_hwx_without_a_walkable_database_warns_as_the_tool_does(generation):
    """An hwx whose generation has no database that walks descriptors: the container is read and the
    chain walked raw with the nearest layout that walks it (the H13 one, generation 7), with the
    warning anec-desc prints (without its prefix)."""
    path = TINYGRAD / "conv.hwx"
    p = anec.load_program(path, generation=generation)
    rc, out, err = desc_tool("dump", path, "--generation", generation, "--format", "json")
    assert rc == 0, err
    printed = [line.removeprefix("anec-desc: warning: ") for line in err.splitlines()]
    assert p.warnings and p.warnings == printed
    assert p.warnings[0].startswith("ANEC-DESC-002" if generation == 10 else "ANEC-DESC-001")
    assert "ANEC-DESC-004" in p.warnings[0]
    assert len(p.descriptors) == 1 and p.doc["raw_layout"] == 7 and p.doc["generation"] == generation
    assert without_version(p.doc) == without_version(json.loads(out))
