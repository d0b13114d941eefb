# Recomputes the RoCEv2 ICRC of every packet of a capture with scapy (scapy.contrib.roce) and prints, per
# packet: "<frame> <ip.id> <df> <icrc on the wire> <icrc computed> ok|BAD", or "<frame> skip <why>".
# Usage: /usr/bin/python3 icrc_check.py capture.pcap
import sys
import logging

logging.getLogger("scapy.runtime").setLevel(logging.ERROR)

from scapy.all import rdpcap, IP, UDP  # noqa: E402
from scapy.contrib.roce import BTH  # noqa: E402

for frame, pkt in enumerate(rdpcap(sys.argv[1]), start=1):
    if IP not in pkt or UDP not in pkt or pkt[UDP].dport != 4791 or BTH not in pkt:
        print(frame, "skip", "not-roce-v2-over-ipv4")
        continue
    on_wire = bytes(pkt[UDP].payload)[-4:]
    computed = pkt[BTH].compute_icrc(None)
    df = 1 if pkt[IP].flags.DF else 0
    print(frame, pkt[IP].id, df, on_wire.hex(), computed.hex(), "ok" if on_wire == computed else "BAD")
