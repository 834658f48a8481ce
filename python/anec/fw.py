"""Host-to-firmware commands, as ``anec-fw encode``, ``decode`` and ``validate`` handle them.

A command is described as ``anec-fw encode`` reads a CMD.json (docs/firmware-wire.md)::

    {"command": "PROCEDURE_CALL_CACHE_REQUEST", "priority": 3, "program_id": 4, "process_id": 1,
     "procedure_id": 0, "body": {"nbrOfOutputBufferSets": 1,
                                 "chainedBuffers": [{"type": 1, "outputBufferSetId": 0,
                                                     "address": 0xfffff000}]}}

Example::

    import anec.fw
    wire = anec.fw.encode({"command": "PING"})
    verdict = anec.fw.validate(wire)
    verdict.accepted, verdict.disposition      # True, 'accept'
    bad = bytearray(wire); bad[0x1c] ^= 1       # the checksum (PING has no body)
    anec.fw.validate(bytes(bad)).code           # 'ANEC-FW-003'
"""

from . import _ext

__all__ = ["encode", "decode", "validate", "Verdict", "Violation"]

# From the most severe: the disposition of a message whose checks fired several.
_SEVERITY = ("fault-and-reset", "reject", "drop")


def encode(command):
    """The wire form of ``command`` (a dict as above) as ``bytes``: header, body, envelope (magic,
    CRC-32) and zero padding to the 16-byte granule.

    ``command`` is a command name or id; ``priority``, ``program_id``, ``process_id`` and
    ``procedure_id`` default as in ``anec-fw encode``; ``body`` holds the layout's scalars and arrays
    of records, or ``raw_body`` (hex) for a command without a body layout. Raises
    :class:`anec.Error` ``ANEC-FWC-001`` for a description the command table does not fit,
    ``ANEC-FWC-002`` for a body its layout cannot hold.
    """
    return _ext.fw_encode(command)


def decode(data):
    """The description of the command in ``data`` (bytes or a path), as ``anec-fw decode --format
    json`` prints it (``encode`` takes it back). Raises :class:`anec.Error` ``ANEC-FW-020`` when
    its header and body cannot be read."""
    return _ext.fw_decode(data)


class Violation:
    """A check that fired: its name, reason code, the firmware's disposition, the IOKit status a
    reject returns (0 when none), the byte offset in the message and the message."""

    __slots__ = ("check", "code", "disposition", "status", "offset", "message")

    def __init__(self, doc):
        self.check = doc["check"]
        self.code = doc["code"]
        self.disposition = doc["disposition"]  # reject, drop, fault-and-reset, warn
        self.status = doc.get("status", 0)
        self.offset = doc["offset"]
        self.message = doc["message"]

    def __repr__(self):
        return f"<anec.fw.Violation {self.code} {self.check}: {self.disposition} at +{self.offset:#x}>"


class Verdict:
    """What the firmware does with a message, as ``anec-fw validate --format json`` reports it.

    ``doc`` is that document; ``accepted`` is true when no check rejects, drops or faults (a warning
    does not); ``disposition`` is ``'accept'`` then, else the most severe disposition of the checks
    that fired (``'fault-and-reset'``, then ``'reject'``, then ``'drop'``) and ``code`` the reason
    code of the first check with it (a warning's when only warnings fired, ``None`` when nothing
    did). ``command`` is the decoded command (its fields, as far as they could be read).
    """

    def __init__(self, doc):
        self.doc = doc
        self.violations = [Violation(v) for v in doc["violations"]]
        deciding = None
        for disposition in _SEVERITY:
            deciding = next((v for v in self.violations if v.disposition == disposition), None)
            if deciding:
                break
        self.disposition = "accept" if self.accepted else deciding.disposition
        deciding = deciding or (self.violations[0] if self.violations else None)
        self.code = deciding.code if deciding else None

    @property
    def accepted(self):
        """Whether the firmware takes the message (no check rejects, drops or faults)."""
        return self.doc["accepted"]

    @property
    def decoded(self):
        """Whether the header and body could be read."""
        return self.doc["decoded"]

    @property
    def size(self):
        """The message's size as its header implies (header, body, envelope, padding)."""
        return self.doc["bytes"]

    @property
    def command(self):
        """The command's fields (``command``, ``id``, ``priority``, ..., ``body``)."""
        return self.doc["command"]

    def __bool__(self):
        return self.accepted

    def __repr__(self):
        return f"<anec.fw.Verdict {self.disposition}{' ' + self.code if self.code else ''}>"


def validate(data, channel="ring"):
    """Every check of the firmware on the command in ``data`` (bytes or a path) on ``channel``
    (``'ring'`` or ``'exeloop'``), as a :class:`Verdict`. A message that fails a check is a verdict,
    not an exception; :class:`anec.Error` is raised only when ``data`` cannot be read."""
    return Verdict(_ext.fw_validate(data, channel))
