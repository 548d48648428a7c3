"""A bounded decoder of UBJSON, the binary JSON of XGBoost's ``.ubj`` files.

XGBoost writes (``src/common/json.cc``): objects ``{`` whose keys are a
length (an integer marker and value) and UTF-8 bytes, closed by ``}``;
arrays ``[``, either open (closed by ``]``), counted (``#`` and a count) or
typed and counted (``$`` and an element type, ``#`` and a count, then the
raw elements); big-endian numbers ``i`` ``U`` ``I`` ``l`` ``L`` ``d`` ``D``;
strings ``S``; ``T`` ``F`` ``Z``. Typed arrays are returned as NumPy arrays
(native byte order), everything else as Python objects.

The bytes may be hostile, so nothing they say is trusted: every count and
length is checked against the bytes that remain before anything is
allocated, nesting is bounded by ``max_depth`` and the decoder keeps its own
stack (a file cannot drive Python's recursion). Every malformation raises
:class:`UBJSONError`.
"""

import struct

import numpy as np

# Marker -> big-endian format of the fixed-size numbers (struct and NumPy).
_NUMBERS = {
    b"i": ">b",
    b"U": ">B",
    b"I": ">h",
    b"l": ">i",
    b"L": ">q",
    b"d": ">f",
    b"D": ">d",
}
_INTEGERS = (b"i", b"U", b"I", b"l", b"L")
_CONSTANTS = {b"T": True, b"F": False, b"Z": None}
_NOTHING = object()  # no value decoded yet (None is a value: "Z")


class UBJSONError(ValueError):
    """The bytes are not the UBJSON that XGBoost writes; says where and why."""


def decode_ubjson(data: bytes, *, max_depth: int):
    """The value encoded in ``data`` (one value, nothing after it).

    Parameters
    ----------
    data : bytes
        The whole file.
    max_depth : int
        Most containers that may be open at once.

    Raises
    ------
    UBJSONError
        If ``data`` is truncated, has trailing bytes, an unknown marker, a
        count or length larger than what remains, or nesting deeper than
        ``max_depth``.
    """
    return _Decoder(data, max_depth).document()


class _Decoder:
    def __init__(self, data: bytes, max_depth: int):
        self.data = memoryview(data)
        self.pos = 0
        self.max_depth = max_depth

    def fail(self, what: str):
        raise UBJSONError(f"{what} at byte {self.pos}")

    def take(self, n: int) -> memoryview:
        if n > len(self.data) - self.pos:
            self.fail(f"{n} bytes needed, {len(self.data) - self.pos} left")
        chunk = self.data[self.pos : self.pos + n]
        self.pos += n
        return chunk

    def marker(self) -> bytes:
        return bytes(self.take(1))

    def number(self, marker: bytes):
        layout = _NUMBERS[marker]
        return struct.unpack(layout, self.take(struct.calcsize(layout)))[0]

    def count(self, what: str, *, item_bytes: int = 1) -> int:
        """A length or count; its items need ``item_bytes`` bytes each."""
        marker = self.marker()
        if marker not in _INTEGERS:
            self.fail(f"{what} is not an integer (marker {marker!r})")
        n = self.number(marker)
        if n < 0 or n * item_bytes > len(self.data) - self.pos:
            self.fail(
                f"{what} {n} does not fit in the {len(self.data) - self.pos} bytes left"
            )
        return n

    def text(self, what: str) -> str:
        raw = self.take(self.count(f"{what} length"))
        try:
            return str(raw, "utf-8")
        except UnicodeDecodeError:
            self.fail(f"{what} is not UTF-8")

    def scalar(self, marker: bytes):
        if marker in _NUMBERS:
            return self.number(marker)
        if marker in _CONSTANTS:
            return _CONSTANTS[marker]
        if marker == b"S":
            return self.text("string")
        if marker == b"C":
            return self.text_char()
        self.fail(f"unknown marker {marker!r}")

    def text_char(self) -> str:
        raw = bytes(self.take(1))
        if raw[0] >= 0x80:
            self.fail("char is not ASCII")
        return raw.decode("ascii")

    def document(self):
        # Each open container: [value, members still to read (None until
        # its end marker), key of the member being read (objects)]. The
        # loop reads one value per turn into the innermost open container.
        stack = []
        result = _NOTHING
        while result is _NOTHING:
            if stack and self.closes(stack[-1]):
                value = stack.pop()[0]
            else:
                if stack and isinstance(stack[-1][0], dict):
                    stack[-1][2] = self.text("key")
                marker = self.marker()
                if marker in (b"[", b"{"):
                    if len(stack) >= self.max_depth:
                        self.fail(f"nesting deeper than {self.max_depth}")
                    container = self.open(marker)
                    if container is not None:
                        stack.append(container)
                        continue
                    value = self.typed_array()
                else:
                    value = self.scalar(marker)
            if not stack:
                result = value
                continue
            frame = stack[-1]
            if isinstance(frame[0], dict):
                frame[0][frame[2]] = value
            else:
                frame[0].append(value)
            if frame[1] is not None:
                frame[1] -= 1
        if self.pos != len(self.data):
            self.fail("trailing bytes after the document")
        return result

    def open(self, marker: bytes):
        """A new container frame, or None before a typed array's elements."""
        following = bytes(self.data[self.pos : self.pos + 1])
        if following == b"$":
            if marker == b"{":
                self.fail("typed objects are not supported")
            return None
        count = None
        if following == b"#":
            self.pos += 1
            count = self.count("container count")
        return [{} if marker == b"{" else [], count, None]

    def closes(self, frame) -> bool:
        """Whether ``frame`` is complete (consuming its end marker if any)."""
        container, remaining, _ = frame
        if remaining is not None:
            return remaining == 0
        end = b"}" if isinstance(container, dict) else b"]"
        if bytes(self.data[self.pos : self.pos + 1]) == end:
            self.pos += 1
            return True
        return False

    def typed_array(self) -> np.ndarray:
        self.pos += 1  # the "$"
        marker = self.marker()
        if marker not in _NUMBERS:
            self.fail(f"typed arrays of {marker!r} are not supported")
        if self.marker() != b"#":
            self.fail("a typed array without a count")
        dtype = np.dtype(_NUMBERS[marker])
        n = self.count("typed array count", item_bytes=dtype.itemsize)
        raw = self.take(n * dtype.itemsize)
        return np.frombuffer(raw, dtype=dtype).astype(dtype.newbyteorder("="))
