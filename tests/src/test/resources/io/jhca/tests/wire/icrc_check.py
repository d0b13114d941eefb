# Recomputes the RoCEv2 ICRC of every packet of a capture with scapy (scapy.contrib.roce) and prints, per
# packet: "<frame> <ip.id> <df> <icrc on the wire> <icrc computed> ok|BAD", or "<frame> skip <why>".
# Frames to or from an --exclude-host address (the capture's liveness probes) are left out without a line.
# Usage: /usr/bin/python3 icrc_check.py [--exclude-host ADDR]... capture.pcap
import argparse
import logging

logging.getLogger("scapy.runtime").setLevel(logging.ERROR)

from scapy.all import rdpcap, IP, UDP  # noqa: E402
from scapy.contrib.roce import BTH  # noqa: E402

parser = argparse.ArgumentParser()
parser.add_argument("--exclude-host", action="append", default=[], metavar="ADDR")
parser.add_argument("pcap")
args = parser.parse_args()
excluded = set(args.exclude_host)

for frame, pkt in enumerate(rdpcap(args.pcap), start=1):
    if IP in pkt and (pkt[IP].src in excluded or pkt[IP].dst in excluded):
        continue
    if IP not in pkt or UDP not in pkt or pkt[UDP].dport != 4791 or BTH not in pkt:
        print(frame, "skip", "not-roce-v2-over-ipv4")
        continue
    on_wire = bytes(pkt[UDP].payload)[-4:]
    computed = pkt[BTH].compute_icrc(None)
    df = 1 if pkt[IP].flags.DF else 0
    print(frame, pkt[IP].id, df, on_wire.hex(), computed.hex(), "ok" if on_wire == computed else "BAD")
