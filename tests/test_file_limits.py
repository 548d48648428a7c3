"""Model files are read within a size limit, even if they lie about their size."""

import os
import threading

import pytest

from skshapley._runtime.files import read_limited

MESSAGE = "{name}: {size} bytes, more than {limit}"


def test_a_file_within_the_limit_is_read(tmp_path):
    path = tmp_path / "model.txt"
    path.write_bytes(b"x" * 10)
    assert read_limited(path, 10, MESSAGE) == b"x" * 10


def test_a_larger_file_is_refused_before_reading(tmp_path):
    path = tmp_path / "model.txt"
    path.write_bytes(b"x" * 11)
    with pytest.raises(ValueError, match=r"^model\.txt: 11 bytes, more than 10$"):
        read_limited(path, 10, MESSAGE)


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="needs named pipes")
def test_a_file_of_unknown_size_is_read_no_further_than_the_limit(tmp_path):
    # A pipe reports size 0: only the bounded read can refuse it.
    path = tmp_path / "model.txt"
    os.mkfifo(path)

    def write():
        with open(path, "wb") as pipe:
            pipe.write(b"x" * 100)

    writer = threading.Thread(target=write)
    writer.start()
    try:
        with pytest.raises(ValueError, match=r"^model\.txt: 11 bytes, more than 10$"):
            read_limited(path, 10, MESSAGE)
    finally:
        writer.join()
