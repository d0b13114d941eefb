package io.jhca.rxe.replay;

import java.io.IOException;
import java.io.InputStream;
import java.net.Inet4Address;
import java.net.InetAddress;
import java.net.UnknownHostException;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;

/**
 * Reads a classic libpcap file (not pcapng) of Ethernet (linktype 1) or raw IP (linktype 101) frames and keeps the
 * IPv4 UDP and TCP packets: enough to replay what tcpdump captured on the interop VM's tap. Format: the pcap-savefile
 * man page (24-byte global header, 16-byte record headers, magic 0xa1b2c3d4 or 0xa1b23c4d in the writer's order).
 */
final class ClassicPcap {

    static final int LINKTYPE_ETHERNET = 1;
    static final int LINKTYPE_RAW = 101;
    private static final int ETHERTYPE_IPV4 = 0x0800;
    private static final int PROTO_TCP = 6;
    private static final int PROTO_UDP = 17;

    /** One IPv4 packet carrying UDP or TCP; {@code payload} is the UDP or TCP payload. */
    static final class IpPacket {
        final int frame;
        final Inet4Address src;
        final Inet4Address dst;
        final int ipId;
        final int protocol;
        final int srcPort;
        final int dstPort;
        /** TCP sequence number of the payload's first byte (0 for UDP). */
        final long tcpSeq;
        final byte[] payload;

        IpPacket(final int frame, final Inet4Address src, final Inet4Address dst, final int ipId, final int protocol,
                final int srcPort, final int dstPort, final long tcpSeq, final byte[] payload) {
            this.frame = frame;
            this.src = src;
            this.dst = dst;
            this.ipId = ipId;
            this.protocol = protocol;
            this.srcPort = srcPort;
            this.dstPort = dstPort;
            this.tcpSeq = tcpSeq;
            this.payload = payload;
        }

        boolean isUdp() {
            return protocol == PROTO_UDP;
        }

        boolean isTcp() {
            return protocol == PROTO_TCP;
        }

        @Override
        public String toString() {
            return "frame " + frame + " " + src.getHostAddress() + ":" + srcPort + " > " + dst.getHostAddress() + ":"
                    + dstPort + (isUdp() ? " udp" : " tcp") + " len " + payload.length;
        }
    }

    private ClassicPcap() {
    }

    static List<IpPacket> read(final InputStream in, final String name) throws IOException {
        final ByteBuffer b = ByteBuffer.wrap(in.readAllBytes());
        if (b.remaining() < 24) {
            throw new IllegalArgumentException(name + ": " + b.remaining() + " bytes, shorter than a pcap header");
        }
        final int magic = b.order(ByteOrder.LITTLE_ENDIAN).getInt(0);
        if (magic == 0xa1b2c3d4 || magic == 0xa1b23c4d) {
            b.order(ByteOrder.LITTLE_ENDIAN);
        } else if (Integer.reverseBytes(magic) == 0xa1b2c3d4 || Integer.reverseBytes(magic) == 0xa1b23c4d) {
            b.order(ByteOrder.BIG_ENDIAN);
        } else {
            throw new IllegalArgumentException(name + ": magic 0x" + Integer.toHexString(magic)
                    + " is not classic pcap (pcapng? convert with editcap -F pcap)");
        }
        final int linktype = b.getInt(20);
        if (linktype != LINKTYPE_ETHERNET && linktype != LINKTYPE_RAW) {
            throw new IllegalArgumentException(name + ": linktype " + linktype + " is neither Ethernet (1) nor raw IP (101)");
        }
        final List<IpPacket> out = new ArrayList<>();
        int at = 24;
        int frame = 0;
        while (at < b.limit()) {
            frame++;
            if (at + 16 > b.limit()) {
                throw new IllegalArgumentException(name + ": frame " + frame + " has a truncated record header");
            }
            final int capLen = b.getInt(at + 8);
            final int origLen = b.getInt(at + 12);
            at += 16;
            if (capLen < 0 || at + capLen > b.limit()) {
                throw new IllegalArgumentException(name + ": frame " + frame + " claims " + capLen + " bytes past the end");
            }
            if (capLen != origLen) {
                throw new IllegalArgumentException(name + ": frame " + frame + " was cut by the snap length (" + capLen
                        + " of " + origLen + " bytes)");
            }
            final byte[] data = Arrays.copyOfRange(b.array(), at, at + capLen);
            at += capLen;
            final IpPacket p = decode(frame, data, linktype == LINKTYPE_ETHERNET ? 14 : 0, name);
            if (p != null) {
                out.add(p);
            }
        }
        return out;
    }

    private static IpPacket decode(final int frame, final byte[] d, final int ipAt, final String name) {
        final ByteBuffer b = ByteBuffer.wrap(d); // network order
        if (ipAt == 14 && (d.length < 14 || (b.getShort(12) & 0xFFFF) != ETHERTYPE_IPV4)) {
            return null; // ARP and the like
        }
        if (d.length < ipAt + 20 || (d[ipAt] & 0xF0) != 0x40) {
            return null;
        }
        final int ihl = (d[ipAt] & 0x0F) * 4;
        final int totalLength = b.getShort(ipAt + 2) & 0xFFFF;
        if (ipAt + totalLength > d.length || totalLength < ihl) {
            throw new IllegalArgumentException(name + ": frame " + frame + " IPv4 total length " + totalLength
                    + " does not fit its " + (d.length - ipAt) + " bytes");
        }
        final int ipId = b.getShort(ipAt + 4) & 0xFFFF;
        final int protocol = d[ipAt + 9] & 0xFF;
        final Inet4Address src = v4(Arrays.copyOfRange(d, ipAt + 12, ipAt + 16));
        final Inet4Address dst = v4(Arrays.copyOfRange(d, ipAt + 16, ipAt + 20));
        final int l4 = ipAt + ihl;
        final int end = ipAt + totalLength;
        if (protocol == PROTO_UDP) {
            final int udpLength = b.getShort(l4 + 4) & 0xFFFF;
            if (l4 + udpLength != end) {
                throw new IllegalArgumentException(name + ": frame " + frame + " UDP length " + udpLength
                        + " disagrees with the IP length");
            }
            return new IpPacket(frame, src, dst, ipId, protocol, b.getShort(l4) & 0xFFFF, b.getShort(l4 + 2) & 0xFFFF,
                    0, Arrays.copyOfRange(d, l4 + 8, end));
        }
        if (protocol == PROTO_TCP) {
            final int dataOffset = ((d[l4 + 12] & 0xF0) >> 4) * 4;
            return new IpPacket(frame, src, dst, ipId, protocol, b.getShort(l4) & 0xFFFF, b.getShort(l4 + 2) & 0xFFFF,
                    b.getInt(l4 + 4) & 0xFFFF_FFFFL, Arrays.copyOfRange(d, l4 + dataOffset, end));
        }
        return null;
    }

    private static Inet4Address v4(final byte[] a) {
        try {
            return (Inet4Address) InetAddress.getByAddress(a);
        } catch (final UnknownHostException e) {
            throw new IllegalStateException(e); // four bytes are always an address
        }
    }
}
