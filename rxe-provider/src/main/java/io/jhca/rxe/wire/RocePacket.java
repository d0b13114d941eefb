package io.jhca.rxe.wire;

import static io.jhca.rxe.wire.PacketLayout.ETHERTYPE_IPV4;
import static io.jhca.rxe.wire.PacketLayout.ETHERTYPE_IPV6;
import static io.jhca.rxe.wire.PacketLayout.ETHERTYPE_VLAN;
import static io.jhca.rxe.wire.PacketLayout.ETH_HEADER_LENGTH;
import static io.jhca.rxe.wire.PacketLayout.ETH_TYPE_OFFSET;
import static io.jhca.rxe.wire.PacketLayout.IPV4_CHECKSUM;
import static io.jhca.rxe.wire.PacketLayout.IPV4_DF;
import static io.jhca.rxe.wire.PacketLayout.IPV4_DST;
import static io.jhca.rxe.wire.PacketLayout.IPV4_FLAGS_FRAGMENT;
import static io.jhca.rxe.wire.PacketLayout.IPV4_HEADER_LENGTH;
import static io.jhca.rxe.wire.PacketLayout.IPV4_ID;
import static io.jhca.rxe.wire.PacketLayout.IPV4_PROTOCOL;
import static io.jhca.rxe.wire.PacketLayout.IPV4_SRC;
import static io.jhca.rxe.wire.PacketLayout.IPV4_TOS;
import static io.jhca.rxe.wire.PacketLayout.IPV4_TOTAL_LENGTH;
import static io.jhca.rxe.wire.PacketLayout.IPV4_TTL;
import static io.jhca.rxe.wire.PacketLayout.IPV4_VERSION_IHL;
import static io.jhca.rxe.wire.PacketLayout.IPV6_DST;
import static io.jhca.rxe.wire.PacketLayout.IPV6_HEADER_LENGTH;
import static io.jhca.rxe.wire.PacketLayout.IPV6_HOP_LIMIT;
import static io.jhca.rxe.wire.PacketLayout.IPV6_NEXT_HEADER;
import static io.jhca.rxe.wire.PacketLayout.IPV6_PAYLOAD_LENGTH;
import static io.jhca.rxe.wire.PacketLayout.IPV6_SRC;
import static io.jhca.rxe.wire.PacketLayout.IP_PROTO_UDP;
import static io.jhca.rxe.wire.PacketLayout.ROCE_V2_PORT;
import static io.jhca.rxe.wire.PacketLayout.UDP_CHECKSUM;
import static io.jhca.rxe.wire.PacketLayout.UDP_DST_PORT;
import static io.jhca.rxe.wire.PacketLayout.UDP_HEADER_LENGTH;
import static io.jhca.rxe.wire.PacketLayout.UDP_LENGTH;
import static io.jhca.rxe.wire.PacketLayout.UDP_SRC_PORT;
import static java.nio.ByteOrder.BIG_ENDIAN;

import org.agrona.DirectBuffer;
import org.agrona.MutableDirectBuffer;

/**
 * The IP and UDP header fields around a RoCEv2 packet, with an encoder and a parser for whole frames: IPv4
 * (20 bytes, no options) or IPv6 (40 bytes, no extension headers), UDP, then the RoCE bytes (BTH .. pad) and the
 * ICRC. Used by tests, tools and {@link PcapWriter}; a raw-IP transport can use it too. Reusable, no
 * allocation; not thread-safe.
 *
 * <p>Building: set the fields, write BTH .. pad at {@code ipOffset + }{@link #roceOffset()}, then call
 * {@link #encode} (or {@link #encodeEthernet}), which writes IP and UDP headers and the ICRC around them.
 * Parsing: {@link #parse} / {@link #parseEthernet} fill the same fields plus {@link #roceIndex()},
 * {@link #roceLength()} and {@link #icrc()}; they check structure only, not the ICRC.
 */
public final class RocePacket {

    /** Synthetic locally administered MACs for frames that never meet a real link (pcap files). */
    public static final long DEFAULT_SRC_MAC = 0x02_00_00_00_00_01L;
    public static final long DEFAULT_DST_MAC = 0x02_00_00_00_00_02L;

    private int ipVersion = 4;
    // IPv4
    private int tos;
    private int ttl = 64;
    private int identification;
    private int flagsFragment = IPV4_DF;
    private int srcAddr;
    private int dstAddr;
    // IPv6
    private int trafficClass;
    private int flowLabel;
    private int hopLimit = 64;
    private long srcHi;
    private long srcLo;
    private long dstHi;
    private long dstLo;
    // UDP
    private int udpSrcPort = 0xC000;
    private int udpDstPort = ROCE_V2_PORT;
    private int udpChecksum;
    // Ethernet
    private long srcMac = DEFAULT_SRC_MAC;
    private long dstMac = DEFAULT_DST_MAC;
    // parse results
    private int roceIndex;
    private int roceLength;
    private int icrc;

    /** IPv4 with these addresses (big-endian ints: 10.0.0.1 = 0x0A000001). */
    public RocePacket ipv4(final int srcAddr, final int dstAddr) {
        this.ipVersion = 4;
        this.srcAddr = srcAddr;
        this.dstAddr = dstAddr;
        return this;
    }

    /** IPv6 with these addresses, each as two big-endian longs (bytes 0-7, 8-15). */
    public RocePacket ipv6(final long srcHi, final long srcLo, final long dstHi, final long dstLo) {
        this.ipVersion = 6;
        this.srcHi = srcHi;
        this.srcLo = srcLo;
        this.dstHi = dstHi;
        this.dstLo = dstLo;
        return this;
    }

    public RocePacket tos(final int tos) {
        this.tos = tos & 0xFF;
        return this;
    }

    public RocePacket ttl(final int ttl) {
        this.ttl = ttl & 0xFF;
        return this;
    }

    public RocePacket identification(final int id) {
        this.identification = id & 0xFFFF;
        return this;
    }

    public RocePacket flagsFragment(final int flagsFragment) {
        this.flagsFragment = flagsFragment & 0xFFFF;
        return this;
    }

    public RocePacket trafficClass(final int trafficClass) {
        this.trafficClass = trafficClass & 0xFF;
        return this;
    }

    public RocePacket flowLabel(final int flowLabel) {
        this.flowLabel = flowLabel & 0xFFFFF;
        return this;
    }

    public RocePacket hopLimit(final int hopLimit) {
        this.hopLimit = hopLimit & 0xFF;
        return this;
    }

    public RocePacket udpPorts(final int srcPort, final int dstPort) {
        this.udpSrcPort = srcPort & 0xFFFF;
        this.udpDstPort = dstPort & 0xFFFF;
        return this;
    }

    /** UDP checksum to put on the wire; rxe sends 0 (rocev2.md §1.1); the ICRC masks it anyway. */
    public RocePacket udpChecksum(final int checksum) {
        this.udpChecksum = checksum & 0xFFFF;
        return this;
    }

    public RocePacket macs(final long srcMac, final long dstMac) {
        this.srcMac = srcMac;
        this.dstMac = dstMac;
        return this;
    }

    public int ipVersion() {
        return ipVersion;
    }

    public int tos() {
        return tos;
    }

    public int ttl() {
        return ttl;
    }

    public int identification() {
        return identification;
    }

    public int flagsFragment() {
        return flagsFragment;
    }

    public int srcAddr() {
        return srcAddr;
    }

    public int dstAddr() {
        return dstAddr;
    }

    public int trafficClass() {
        return trafficClass;
    }

    public int flowLabel() {
        return flowLabel;
    }

    public int hopLimit() {
        return hopLimit;
    }

    public long srcHi() {
        return srcHi;
    }

    public long srcLo() {
        return srcLo;
    }

    public long dstHi() {
        return dstHi;
    }

    public long dstLo() {
        return dstLo;
    }

    public int udpSrcPort() {
        return udpSrcPort;
    }

    public int udpDstPort() {
        return udpDstPort;
    }

    public int udpChecksum() {
        return udpChecksum;
    }

    /** After a parse: absolute index of the BTH in the parsed buffer. */
    public int roceIndex() {
        return roceIndex;
    }

    /** After a parse or encode: bytes from the BTH to the end of the pad. */
    public int roceLength() {
        return roceLength;
    }

    /** After a parse or encode: the ICRC value (as read little-endian from the wire). */
    public int icrc() {
        return icrc;
    }

    /** Offset of the BTH from the start of the IP header for the current IP version. */
    public int roceOffset() {
        return ipHeaderLength() + UDP_HEADER_LENGTH;
    }

    private int ipHeaderLength() {
        return ipVersion == 4 ? IPV4_HEADER_LENGTH : IPV6_HEADER_LENGTH;
    }

    /**
     * Writes IP and UDP headers in front of the {@code roceLength} RoCE bytes already at
     * {@code ipOffset + roceOffset()}, computes the ICRC with {@code icrc} and writes it after them.
     *
     * @return the IP packet length
     */
    public int encode(final MutableDirectBuffer buffer, final int ipOffset, final int roceLength, final Icrc icrc) {
        final int udpLength = UDP_HEADER_LENGTH + roceLength + Icrc.LENGTH;
        final int ipLength = ipHeaderLength() + udpLength;
        if (roceLength < Bth.LENGTH || (ipVersion == 4 ? ipLength : udpLength) > 0xFFFF) {
            throw new IllegalArgumentException("RoCE length out of range: " + roceLength);
        }
        if (ipOffset < 0 || ipOffset > buffer.capacity() - ipLength) {
            throw new IndexOutOfBoundsException("packet of " + ipLength + " bytes at " + ipOffset
                    + " does not fit a buffer of " + buffer.capacity());
        }
        final int roce = ipOffset + roceOffset();
        final int value;
        if (ipVersion == 4) {
            buffer.putByte(ipOffset, (byte) IPV4_VERSION_IHL);
            buffer.putByte(ipOffset + IPV4_TOS, (byte) tos);
            buffer.putShort(ipOffset + IPV4_TOTAL_LENGTH, (short) ipLength, BIG_ENDIAN);
            buffer.putShort(ipOffset + IPV4_ID, (short) identification, BIG_ENDIAN);
            buffer.putShort(ipOffset + IPV4_FLAGS_FRAGMENT, (short) flagsFragment, BIG_ENDIAN);
            buffer.putByte(ipOffset + IPV4_TTL, (byte) ttl);
            buffer.putByte(ipOffset + IPV4_PROTOCOL, (byte) IP_PROTO_UDP);
            buffer.putShort(ipOffset + IPV4_CHECKSUM, (short) 0, BIG_ENDIAN);
            buffer.putInt(ipOffset + IPV4_SRC, srcAddr, BIG_ENDIAN);
            buffer.putInt(ipOffset + IPV4_DST, dstAddr, BIG_ENDIAN);
            buffer.putShort(ipOffset + IPV4_CHECKSUM,
                    (short) PacketLayout.ipv4HeaderChecksum(buffer, ipOffset), BIG_ENDIAN);
            value = icrc.computeIpv4(srcAddr, dstAddr, ipLength, identification, flagsFragment, udpSrcPort,
                    udpDstPort, udpLength, buffer, roce, roceLength);
        } else {
            buffer.putInt(ipOffset, 6 << 28 | trafficClass << 20 | flowLabel, BIG_ENDIAN);
            buffer.putShort(ipOffset + IPV6_PAYLOAD_LENGTH, (short) udpLength, BIG_ENDIAN);
            buffer.putByte(ipOffset + IPV6_NEXT_HEADER, (byte) IP_PROTO_UDP);
            buffer.putByte(ipOffset + IPV6_HOP_LIMIT, (byte) hopLimit);
            buffer.putLong(ipOffset + IPV6_SRC, srcHi, BIG_ENDIAN);
            buffer.putLong(ipOffset + IPV6_SRC + 8, srcLo, BIG_ENDIAN);
            buffer.putLong(ipOffset + IPV6_DST, dstHi, BIG_ENDIAN);
            buffer.putLong(ipOffset + IPV6_DST + 8, dstLo, BIG_ENDIAN);
            value = icrc.computeIpv6(srcHi, srcLo, dstHi, dstLo, udpLength, udpSrcPort, udpDstPort, udpLength,
                    buffer, roce, roceLength);
        }
        final int udp = ipOffset + ipHeaderLength();
        buffer.putShort(udp + UDP_SRC_PORT, (short) udpSrcPort, BIG_ENDIAN);
        buffer.putShort(udp + UDP_DST_PORT, (short) udpDstPort, BIG_ENDIAN);
        buffer.putShort(udp + UDP_LENGTH, (short) udpLength, BIG_ENDIAN);
        buffer.putShort(udp + UDP_CHECKSUM, (short) udpChecksum, BIG_ENDIAN);
        Icrc.put(buffer, roce + roceLength, value);
        this.roceIndex = roce;
        this.roceLength = roceLength;
        this.icrc = value;
        return ipLength;
    }

    /**
     * As {@link #encode} with a 14-byte Ethernet header (the MACs of {@link #macs}) at {@code frameOffset}; the
     * RoCE bytes go at {@code frameOffset + 14 + roceOffset()}.
     *
     * @return the frame length
     */
    public int encodeEthernet(final MutableDirectBuffer buffer, final int frameOffset, final int roceLength,
            final Icrc icrc) {
        writeEthernetHeader(buffer, frameOffset, dstMac, srcMac, ipVersion == 4 ? ETHERTYPE_IPV4 : ETHERTYPE_IPV6);
        return ETH_HEADER_LENGTH + encode(buffer, frameOffset + ETH_HEADER_LENGTH, roceLength, icrc);
    }

    /** Writes dst MAC, src MAC (48-bit values in the low bits of the longs) and EtherType, big-endian. */
    public static void writeEthernetHeader(final MutableDirectBuffer buffer, final int offset, final long dstMac,
            final long srcMac, final int etherType) {
        buffer.putShort(offset, (short) (dstMac >>> 32), BIG_ENDIAN);
        buffer.putInt(offset + 2, (int) dstMac, BIG_ENDIAN);
        buffer.putShort(offset + 6, (short) (srcMac >>> 32), BIG_ENDIAN);
        buffer.putInt(offset + 8, (int) srcMac, BIG_ENDIAN);
        buffer.putShort(offset + ETH_TYPE_OFFSET, (short) etherType, BIG_ENDIAN);
    }

    /**
     * Parses an Ethernet frame (at most one 802.1Q tag) carrying a RoCEv2 packet. Returns false, never throws,
     * if it is not one; reads only inside [offset, offset + length).
     */
    public boolean parseEthernet(final DirectBuffer buffer, final int offset, final int length) {
        checkRange(buffer, offset, length);
        if (length < ETH_HEADER_LENGTH) {
            return false;
        }
        srcMac = mac(buffer, offset + 6);
        dstMac = mac(buffer, offset);
        int type = buffer.getShort(offset + ETH_TYPE_OFFSET, BIG_ENDIAN) & 0xFFFF;
        int ip = offset + ETH_HEADER_LENGTH;
        if (type == ETHERTYPE_VLAN) {
            if (length < ETH_HEADER_LENGTH + PacketLayout.VLAN_TAG_LENGTH) {
                return false;
            }
            type = buffer.getShort(offset + ETH_TYPE_OFFSET + PacketLayout.VLAN_TAG_LENGTH, BIG_ENDIAN) & 0xFFFF;
            ip += PacketLayout.VLAN_TAG_LENGTH;
        }
        if (type != ETHERTYPE_IPV4 && type != ETHERTYPE_IPV6) {
            return false;
        }
        return parse(buffer, ip, offset + length - ip);
    }

    private static long mac(final DirectBuffer buffer, final int at) {
        return (buffer.getShort(at, BIG_ENDIAN) & 0xFFFFL) << 32 | (buffer.getInt(at + 2, BIG_ENDIAN) & 0xFFFF_FFFFL);
    }

    /**
     * Parses an IPv4 (no options) or IPv6 (no extension headers) UDP packet at {@code ipOffset} whose UDP payload
     * can hold a BTH and an ICRC; {@code length} bytes are available (trailing bytes such as Ethernet padding are
     * ignored). Any UDP destination port is accepted (check {@link #udpDstPort()}). Returns false, never throws,
     * if the packet does not fit that shape.
     */
    public boolean parse(final DirectBuffer buffer, final int ipOffset, final int length) {
        checkRange(buffer, ipOffset, length);
        if (length < 1) {
            return false;
        }
        final int version = (buffer.getByte(ipOffset) & 0xF0) >>> 4;
        final int udpLength;
        final int udp;
        if (version == 4) {
            if (length < IPV4_HEADER_LENGTH || (buffer.getByte(ipOffset) & 0xFF) != IPV4_VERSION_IHL
                    || (buffer.getByte(ipOffset + IPV4_PROTOCOL) & 0xFF) != IP_PROTO_UDP) {
                return false;
            }
            final int totalLength = buffer.getShort(ipOffset + IPV4_TOTAL_LENGTH, BIG_ENDIAN) & 0xFFFF;
            if (totalLength > length || totalLength < IPV4_HEADER_LENGTH + UDP_HEADER_LENGTH) {
                return false;
            }
            ipVersion = 4;
            tos = buffer.getByte(ipOffset + IPV4_TOS) & 0xFF;
            identification = buffer.getShort(ipOffset + IPV4_ID, BIG_ENDIAN) & 0xFFFF;
            flagsFragment = buffer.getShort(ipOffset + IPV4_FLAGS_FRAGMENT, BIG_ENDIAN) & 0xFFFF;
            ttl = buffer.getByte(ipOffset + IPV4_TTL) & 0xFF;
            srcAddr = buffer.getInt(ipOffset + IPV4_SRC, BIG_ENDIAN);
            dstAddr = buffer.getInt(ipOffset + IPV4_DST, BIG_ENDIAN);
            udp = ipOffset + IPV4_HEADER_LENGTH;
            udpLength = totalLength - IPV4_HEADER_LENGTH;
        } else if (version == 6) {
            if (length < IPV6_HEADER_LENGTH + UDP_HEADER_LENGTH
                    || (buffer.getByte(ipOffset + IPV6_NEXT_HEADER) & 0xFF) != IP_PROTO_UDP) {
                return false;
            }
            final int payloadLength = buffer.getShort(ipOffset + IPV6_PAYLOAD_LENGTH, BIG_ENDIAN) & 0xFFFF;
            if (IPV6_HEADER_LENGTH + payloadLength > length) {
                return false;
            }
            ipVersion = 6;
            final int word = buffer.getInt(ipOffset, BIG_ENDIAN);
            trafficClass = word >>> 20 & 0xFF;
            flowLabel = word & 0xFFFFF;
            hopLimit = buffer.getByte(ipOffset + IPV6_HOP_LIMIT) & 0xFF;
            srcHi = buffer.getLong(ipOffset + IPV6_SRC, BIG_ENDIAN);
            srcLo = buffer.getLong(ipOffset + IPV6_SRC + 8, BIG_ENDIAN);
            dstHi = buffer.getLong(ipOffset + IPV6_DST, BIG_ENDIAN);
            dstLo = buffer.getLong(ipOffset + IPV6_DST + 8, BIG_ENDIAN);
            udp = ipOffset + IPV6_HEADER_LENGTH;
            udpLength = payloadLength;
        } else {
            return false;
        }
        if (udpLength < UDP_HEADER_LENGTH + Bth.LENGTH + Icrc.LENGTH
                || (buffer.getShort(udp + UDP_LENGTH, BIG_ENDIAN) & 0xFFFF) != udpLength) {
            return false;
        }
        udpSrcPort = buffer.getShort(udp + UDP_SRC_PORT, BIG_ENDIAN) & 0xFFFF;
        udpDstPort = buffer.getShort(udp + UDP_DST_PORT, BIG_ENDIAN) & 0xFFFF;
        udpChecksum = buffer.getShort(udp + UDP_CHECKSUM, BIG_ENDIAN) & 0xFFFF;
        roceIndex = udp + UDP_HEADER_LENGTH;
        roceLength = udpLength - UDP_HEADER_LENGTH - Icrc.LENGTH;
        icrc = Icrc.get(buffer, roceIndex + roceLength);
        return true;
    }

    private static void checkRange(final DirectBuffer buffer, final int offset, final int length) {
        if (offset < 0 || length < 0 || offset > buffer.capacity() - length) {
            throw new IndexOutOfBoundsException("range " + offset + "+" + length + " outside buffer of "
                    + buffer.capacity());
        }
    }
}
