"""HeadSize counts a request head's bytes up to and including its blank line, however the reads split it."""

from __future__ import annotations

from itertools import pairwise

import pytest

from prm.reward_server.http_limits import HeadSize

HEAD = b"POST /score HTTP/1.1\r\nHost: x\r\nContent-Length: 2\r\n\r\n"


def _split(data: bytes, cuts: list[int]) -> list[bytes]:
    bounds = [0, *cuts, len(data)]
    return [data[a:b] for a, b in pairwise(bounds)]


@pytest.mark.parametrize("cuts", [[], [len(HEAD) - 1], [len(HEAD) - 2], [len(HEAD) - 3], [5, 20, len(HEAD) - 1]],
                         ids=["one-read", "last-lf-apart", "blank-line-split", "crlf-crlf-split", "many-reads"])
def test_every_byte_up_to_the_blank_line_counts_and_the_body_does_not(cuts):
    head, ends = HeadSize(), []
    for chunk in _split(HEAD + b"{}", cuts):
        ends.append(head.add(chunk))
        if ends[-1]:
            break
    assert ends[-1] and not any(ends[:-1])
    assert head.size == len(HEAD)


@pytest.mark.parametrize("data,size,ended", [
    (b"\r\n\r\nGET / HTTP/1.1\r\n\r\n", 22, True),  # CR LF before a request line are no blank line, but count
    (b"\r\n\r\n", 4, False),
    (b"GET / HTTP/1.1\nHost: x\n\n", 24, True),  # bare LF ends lines for h11
    (b"GET / HTTP/1.1\r\nHost: " + b"a" * 100_000, 100_022, False),
])
def test_one_read(data, size, ended):
    head = HeadSize()
    assert head.add(data) is ended
    assert head.size == size


def test_bytes_after_the_head_are_not_counted_until_reset_starts_the_next_head():
    head = HeadSize()
    assert head.add(HEAD) and head.add(b"x" * 100_000) and head.size == len(HEAD)
    head.reset()
    assert not head.add(b"GET / HT") and head.size == 8
