"""Task-descriptor programs: views over the document ``anec-desc dump --format json`` prints.

A :class:`Program` holds that document (:attr:`Program.doc`) and every object it hands out
(:class:`Descriptor`, :class:`Stream`, :class:`Register`) reads and writes that document in place, so
a field set through any of them is what :meth:`Program.encode` packs (as ``anec-desc encode`` does).
"""

# The keys every dump document has (descriptors/src/dump.cpp, and its schema's name and version):
# what is left is the container's own.
_COMMON_KEYS = frozenset({"schema", "schema_version", "container", "file_bytes", "complete", "generation",
                          "database_complete", "kernel_data", "findings", "tds", "regions"})


def _member(key, doc, on="_doc"):
    """A read-only attribute: member ``key`` of the object's document (held in attribute ``on``)."""
    return property(lambda self: getattr(self, on)[key], doc=doc)


class Register:
    """One register word of a descriptor: where it is, its raw value and its decoded fields.

    ``fields`` maps each field name the register database gives (``'InDim.Win'``) to its value;
    ``reg['InDim.Win'] = 77`` changes one (the word is packed from its fields when the program is
    encoded). A field's bytes are its word's: ``offset`` is the word's byte offset in the file.
    """

    __slots__ = ("_doc",)

    def __init__(self, doc):
        self._doc = doc

    offset = _member("offset", "The byte offset of the 32-bit word in the file.")
    address = _member("address", "The register's address in its block's register space.")
    block = _member("block", "The register block (``'Common'``, ``'L2'``, ..., ``'Header'`` for a "
                             "descriptor header word).")
    raw = _member("raw", "The word as read from the file (not updated when a field is set).")

    @property
    def reserved(self):
        """The set bits no field covers (0 when none)."""
        return self._doc.get("reserved", 0)

    fields = _member("fields", "The decoded fields, ``{name: value}``: the document's own dict (changes "
                               "take effect).")

    @property
    def name(self):
        """The register's name, the part before the dot its fields share (``None`` when unnamed)."""
        names = {f.split(".", 1)[0] for f in self._doc["fields"] if "." in f}
        return names.pop() if len(names) == 1 else None

    def __getitem__(self, field):
        return self._doc["fields"][field]

    def __setitem__(self, field, value):
        if field not in self._doc["fields"]:
            raise KeyError(f"register {self.block} {self.address:#x} has no field {field!r}")
        if isinstance(value, bool) or not isinstance(value, int):
            raise TypeError(f"{field} takes an int, not {type(value).__name__}")
        self._doc["fields"][field] = value

    def __contains__(self, field):
        return field in self._doc["fields"]

    def __repr__(self):
        return (f"<anec.Register {self.block} {self.address:#x} at {self.offset:#x} = {self.raw:#010x}, "
                f"{len(self._doc['fields'])} field(s)>")


class Stream:
    """A register stream of a descriptor: its header word and the consecutive registers it writes."""

    __slots__ = ("_doc",)

    def __init__(self, doc):
        self._doc = doc

    offset = _member("offset", "The byte offset of the stream header in the file.")
    header = _member("header", "The stream header word.")
    address = _member("address", "The address of the first register the stream writes.")
    words = _member("words", "How many register words follow the header.")

    @property
    def registers(self):
        """The registers, in file order."""
        return [Register(r) for r in self._doc["registers"]]

    def __repr__(self):
        return f"<anec.Stream at {self.offset:#x}: {self.words} word(s) from {self.address:#x}>"


class Descriptor:
    """One task descriptor: its header words and register streams.

    ``td['Common.InDim.Win']`` reads a field by its dotted path (block, register, field) and
    ``td['Common.InDim.Win'] = 77`` writes it; ``fields`` lists every path with its value.
    """

    __slots__ = ("_doc",)

    def __init__(self, doc):
        self._doc = doc

    index = _member("index", "The descriptor's place in the chain, from 0.")
    offset = _member("offset", "The byte offset of the descriptor in the file.")
    size = _member("bytes", "The descriptor's size in bytes.")
    eon = _member("eon", "Whether the descriptor ends the chain (its EON bit).")

    @property
    def header(self):
        """The descriptor header's words."""
        return [Register(r) for r in self._doc["header"]]

    @property
    def streams(self):
        """The register streams, in file order."""
        return [Stream(s) for s in self._doc["streams"]]

    @property
    def registers(self):
        """Every word with its fields: the header's, then each stream's."""
        return self.header + [r for s in self.streams for r in s.registers]

    def _where(self, path):
        found = [r for r in self._doc["header"] + [w for s in self._doc["streams"] for w in s["registers"]]
                 if path.startswith(r["block"] + ".") and path[len(r["block"]) + 1:] in r["fields"]]
        if not found:
            raise KeyError(f"descriptor {self.index} has no field {path!r}")
        if len(found) > 1:
            raise KeyError(f"descriptor {self.index} has {len(found)} words with a field {path!r}")
        return Register(found[0]), path[len(found[0]["block"]) + 1:]

    @property
    def fields(self):
        """Every decoded field, ``{'Block.Register.Field': value}`` (a copy: set fields by path)."""
        return {f"{r.block}.{name}": value for r in self.registers for name, value in r.fields.items()}

    def register_of(self, path):
        """The register holding the field ``path`` (``'Common.InDim.Win'``)."""
        return self._where(path)[0]

    def __getitem__(self, path):
        register, field = self._where(path)
        return register[field]

    def __setitem__(self, path, value):
        register, field = self._where(path)
        register[field] = value

    def __contains__(self, path):
        try:
            self._where(path)
        except KeyError:
            return False
        return True

    def __repr__(self):
        return (f"<anec.Descriptor {self.index} at {self.offset:#x}: {self.size} bytes, "
                f"{len(self._doc['streams'])} stream(s){', EON' if self.eon else ''}>")


class Program:
    """A task-descriptor program as :func:`anec.load_program` reads it.

    ``doc`` is the document ``anec-desc dump --format json`` prints for the file; the attributes
    read it and the descriptors write into it. ``encode()`` rebuilds the file from it.
    """

    def __init__(self, doc, warnings=()):
        self.doc = doc
        self.warnings = list(warnings)

    container = _member("container", "``'hwx'``, ``'anec'`` or ``'raw-td-chain'``.", on="doc")
    generation = _member("generation", "The descriptor generation whose register database decoded the "
                                       "program (7: H13).", on="doc")
    size = _member("file_bytes", "The file's size in bytes.", on="doc")
    database_complete = _member("database_complete", "Whether the register database names every register "
                                                     "of its generation.", on="doc")

    @property
    def header(self):
        """The container's own header fields: an anec container's header (``header_bytes``,
        ``td_count``, ``slots``, ...), an hwx container's (``cpusubtype``, ``load_commands``,
        ``tensors``, ``relocations``, ``symbols``, ...); empty for a raw chain."""
        if self.container == "anec":
            return self.doc["anec"]
        return {k: v for k, v in self.doc.items() if k not in _COMMON_KEYS}

    kernel_data = _member("kernel_data", "Where the kernel data is: ``{'offset': ..., 'bytes': ...}``.",
                          on="doc")
    findings = _member("findings", "What the reader found wrong, each with its reason code (``code``), "
                                   "offset and message.", on="doc")

    @property
    def descriptors(self):
        """The task descriptors, in chain order."""
        return [Descriptor(t) for t in self.doc["tds"]]

    def encode(self):
        """The file the document describes, as ``bytes``: every word packed from its fields.

        Raises :class:`anec.Error`: ``ANEC-ENC-002`` a field the database does not have at that
        word, ``ANEC-ENC-003`` a value that does not fit its field, ``ANEC-ENC-004`` a word outside
        the file, ``ANEC-ENC-001`` an incomplete document.
        """
        from . import _ext
        return _ext.encode_program(self.doc)

    def __repr__(self):
        return (f"<anec.Program {self.container}, generation {self.generation}: {self.size} bytes, "
                f"{len(self.doc['tds'])} descriptor(s)>")
