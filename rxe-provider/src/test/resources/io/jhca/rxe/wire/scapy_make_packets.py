"""Reverse ICRC oracle: let scapy build random RoCEv2 frames (ICRC computed by scapy.contrib.roce).

Usage: /usr/bin/python3 scapy_make_packets.py OUT.pcap COUNT SEED

IPv4 only (scapy 2.5's RoCE layer has no IPv6 ICRC). Every frame has a valid RC/UC/UD opcode, extension
header bytes of the right total length (IBTA vol. 1 ch. 9 sizes), a payload padded to 4 bytes, random IPv4
TOS/TTL/ID (every 10th ID is 0), DF set except on every 7th frame, random UDP source port and checksum and
random values in the BTH bits the ICRC masks or nobody checks.
"""
import random
import sys

from scapy.all import IP, UDP, Ether, Raw, load_contrib, wrpcap

load_contrib("roce")
from scapy.contrib.roce import BTH  # noqa: E402

RETH, AETH, ATOMIC_ETH, ATOMIC_ACK_ETH, IMMDT, DETH, IETH = 16, 4, 28, 8, 4, 8, 4
# opcode -> (extension header bytes after the BTH, carries payload)
OPCODES = {}
for base in (0x00, 0x20):
    OPCODES.update({
        base + 0x00: (0, True), base + 0x01: (0, True), base + 0x02: (0, True),
        base + 0x03: (IMMDT, True), base + 0x04: (0, True), base + 0x05: (IMMDT, True),
        base + 0x06: (RETH, True), base + 0x07: (0, True), base + 0x08: (0, True),
        base + 0x09: (IMMDT, True), base + 0x0A: (RETH, True), base + 0x0B: (RETH + IMMDT, True),
    })
OPCODES.update({
    0x0C: (RETH, False), 0x0D: (AETH, True), 0x0E: (0, True), 0x0F: (AETH, True), 0x10: (AETH, True),
    0x11: (AETH, False), 0x12: (AETH + ATOMIC_ACK_ETH, False), 0x13: (ATOMIC_ETH, False),
    0x14: (ATOMIC_ETH, False), 0x16: (IETH, True), 0x17: (IETH, True),
    0x64: (DETH, True), 0x65: (DETH + IMMDT, True),
})


def main(path, count, seed):
    rnd = random.Random(seed)
    ops = sorted(OPCODES)
    frames = []
    for i in range(count):
        op = ops[i % len(ops)]
        ext, has_payload = OPCODES[op]
        payload = bytes(rnd.getrandbits(8) for _ in range(rnd.choice((0, 1, 2, 3, 5, 64, 255, 1024)))) \
            if has_payload else b""
        pad = -len(payload) & 3
        ip = IP(src="%d.%d.%d.%d" % tuple(rnd.randrange(1, 255) for _ in range(4)),
                dst="%d.%d.%d.%d" % tuple(rnd.randrange(1, 255) for _ in range(4)),
                tos=rnd.getrandbits(8), ttl=rnd.getrandbits(8),
                id=0 if i % 10 == 0 else rnd.getrandbits(16),
                flags=0 if i % 7 == 0 else "DF")
        udp = UDP(sport=rnd.getrandbits(16), dport=4791, chksum=rnd.getrandbits(16))
        bth = BTH(opcode=op, solicited=rnd.getrandbits(1), migreq=rnd.getrandbits(1), padcount=pad,
                  version=0, pkey=rnd.choice((0xFFFF, 0x7FFF)), fecn=rnd.getrandbits(1),
                  becn=rnd.getrandbits(1), resv6=rnd.getrandbits(6), dqpn=rnd.getrandbits(24),
                  ackreq=rnd.getrandbits(1), resv7=rnd.getrandbits(7), psn=rnd.getrandbits(24))
        rest = bytes(rnd.getrandbits(8) for _ in range(ext)) + payload + b"\0" * pad
        frames.append(Ether(src="02:00:00:00:00:01", dst="02:00:00:00:00:02") / ip / udp / bth / Raw(rest))
    wrpcap(path, frames)
    print("WROTE %d" % len(frames))


if __name__ == "__main__":
    main(sys.argv[1], int(sys.argv[2]), int(sys.argv[3]))
