"""ICRC oracle: recompute the RoCEv2 ICRC of every frame in a pcap with scapy.contrib.roce.

Usage: /usr/bin/python3 scapy_icrc_check.py FILE.pcap

For each Ethernet frame, drops the ICRC field and lets scapy rebuild the frame (scapy then computes the ICRC
itself, BTH.compute_icrc); the rebuilt frame must equal the original byte for byte.
Prints "MISMATCH <index> wire=<hex> scapy=<hex>" per differing frame, "NOT_ROCE <index>" for frames scapy does
not decode as RoCEv2, and "CHECKED <count>" at the end.
"""
import sys

from scapy.all import Ether, load_contrib, raw, rdpcap

load_contrib("roce")
from scapy.contrib.roce import BTH  # noqa: E402


def main(path):
    checked = 0
    for index, record in enumerate(rdpcap(path)):
        frame = raw(record)
        packet = Ether(frame)
        if BTH not in packet:
            print("NOT_ROCE %d" % index)
            continue
        del packet[BTH].icrc
        rebuilt = raw(packet)
        if rebuilt != frame:
            print("MISMATCH %d wire=%s scapy=%s" % (index, frame.hex(), rebuilt.hex()))
        checked += 1
    print("CHECKED %d" % checked)


if __name__ == "__main__":
    main(sys.argv[1])
