/**
 * Packet I/O of rxe devices: a {@link io.jhca.rxe.link.Link} moves whole RoCEv2 UDP payloads (BTH to ICRC).
 * {@link io.jhca.rxe.link.UdpLink} is a non-blocking kernel UDP socket on port 4791 (IP_PMTUDISC_DO on IPv4 so the IP
 * ID is 0, UDP_NO_CHECK6_RX on IPv6 so rxe's zero-checksum datagrams arrive); {@link io.jhca.rxe.link.FaultyLink}
 * wraps any link with seeded, counted packet loss, duplication, reordering, delay and corruption per direction.
 * The engine receives in batches ({@link io.jhca.rxe.link.RxBatch}): a UDP link takes every waiting datagram with
 * one recvmmsg(2) ({@link io.jhca.rxe.link.Recvmmsg}), other links one at a time. On an IPv4 loopback address a UDP
 * link receives from a packet ring instead ({@link io.jhca.rxe.link.PacketRing}, proven at open by
 * {@link io.jhca.rxe.link.RingProbe}) where the process has CAP_NET_RAW: no system call per look, no copy.
 */
package io.jhca.rxe.link;
