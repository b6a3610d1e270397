"""The slow link's receive side (tests/slow_link.py's :func:`coalesced`):
TCP segments that arrive together are joined as a receiver's GRO joins
them, so what a stall held reaches the socket in one piece; anything else
goes through as it came. Packets are built here, never by the code under
test, and checked with the Internet checksum's own rule (a packet with its
checksum in place sums to zero)."""

from __future__ import annotations

import struct
from typing import List

from .slow_link import coalesced, internet_checksum

CLIENT, SERVER = bytes([10, 204, 8, 2]), bytes([10, 204, 8, 1])
ACK, PSH, SYN = 0x10, 0x08, 0x02


def segment(sequence: int, data: bytes, ack: int = 7, flags: int = ACK | PSH, port: int = 40000) -> bytes:
    """An IPv4 TCP segment from the client to the server, checksums in place."""
    tcp = bytearray(struct.pack("!HHIIBBHHH", port, 22, sequence, ack, 5 << 4, flags, 500, 0, 0))
    pseudo = CLIENT + SERVER + struct.pack("!BBH", 0, 6, len(tcp) + len(data))
    tcp[16:18] = struct.pack("!H", internet_checksum(pseudo + bytes(tcp) + data))
    ip = bytearray(struct.pack("!BBHHHBBH4s4s", 0x45, 0, 40 + len(data), 1, 0x4000, 64, 6, 0, CLIENT, SERVER))
    ip[10:12] = struct.pack("!H", internet_checksum(bytes(ip)))
    return bytes(ip + tcp) + data


def data_of(packet: bytes) -> bytes:
    return packet[40:]


def is_valid(packet: bytes) -> bool:
    """Both checksums hold and the IP length is the packet's."""
    tcp = packet[20:]
    pseudo = packet[12:20] + struct.pack("!BBH", 0, 6, len(tcp))
    length = struct.unpack("!H", packet[2:4])[0]
    return internet_checksum(packet[:20]) == 0 and internet_checksum(pseudo + tcp) == 0 and length == len(packet)


def keys(start: int, count: int, size: int = 28) -> List[bytes]:
    """``count`` segments of ``size`` bytes each, one after another from ``start``."""
    return [segment(start + i * size, bytes([65 + i]) * size, ack=100 + i) for i in range(count)]


def test_keys_in_segments_of_their_own_arrive_as_one_segment_with_every_byte_in_order() -> None:
    held = keys(1000, 15)
    (joined,) = coalesced(held)
    assert data_of(joined) == b"".join(data_of(packet) for packet in held)
    assert struct.unpack("!II", joined[24:32]) == (1000, 114)  # the first's sequence, the last's acknowledgment
    assert is_valid(joined)


def test_a_resent_segment_adds_only_what_is_new_and_a_repeat_nothing() -> None:
    first, second, third = keys(1000, 3)
    resent = segment(1000, data_of(first) + data_of(second))  # a retransmission that collapsed two
    (joined,) = coalesced([first, second, resent, third, resent])
    assert data_of(joined) == data_of(first) + data_of(second) + data_of(third)
    assert is_valid(joined)


def test_a_gap_another_flow_and_what_is_not_data_are_left_as_they_came() -> None:
    first, _, third = keys(1000, 3)  # the second is lost: the third cannot join the first
    other = segment(1028, b"x" * 28, port=40001)  # where the first ends, but another connection's
    opening = segment(999, b"", flags=SYN)
    bare_ack = segment(1028, b"")
    packets = [opening, first, third, other, bare_ack]
    out = coalesced(packets)
    assert [data_of(packet) for packet in out] == [data_of(packet) for packet in packets]
    assert out[0] == opening and out[-1] == bare_ack and all(is_valid(packet) for packet in out)


def test_no_joined_segment_outgrows_the_links_mtu() -> None:
    held = keys(1000, 12, size=200)  # 2,400 bytes of data
    out = coalesced(held)
    assert [len(packet) for packet in out] == [1440, 1040]  # seven, then five: each under 1,500 bytes
    assert b"".join(data_of(packet) for packet in out) == b"".join(data_of(packet) for packet in held)
    assert all(is_valid(packet) for packet in out)
