package io.jhca.rxe.wire;

import static java.nio.ByteOrder.BIG_ENDIAN;

import org.agrona.DirectBuffer;

/**
 * Sizes and field offsets of the headers around a RoCEv2 packet (rocev2.md §1.1): Ethernet / IPv4 (20, no
 * options) or IPv6 (40, no extension headers) / UDP (8, dst port 4791) / BTH ... pad / ICRC (4).
 * All fields big-endian (network order).
 */
public final class PacketLayout {

    public static final int ETH_HEADER_LENGTH = 14;
    public static final int ETH_TYPE_OFFSET = 12;
    public static final int ETHERTYPE_IPV4 = 0x0800;
    public static final int ETHERTYPE_IPV6 = 0x86DD;
    public static final int ETHERTYPE_VLAN = 0x8100;
    public static final int VLAN_TAG_LENGTH = 4;

    public static final int IPV4_HEADER_LENGTH = 20;
    public static final int IPV4_VERSION_IHL = 0x45;
    public static final int IPV4_TOS = 1;
    public static final int IPV4_TOTAL_LENGTH = 2;
    public static final int IPV4_ID = 4;
    public static final int IPV4_FLAGS_FRAGMENT = 6;
    public static final int IPV4_TTL = 8;
    public static final int IPV4_PROTOCOL = 9;
    public static final int IPV4_CHECKSUM = 10;
    public static final int IPV4_SRC = 12;
    public static final int IPV4_DST = 16;
    /** Don't Fragment in the flags/fragment-offset word; rxe always sets it. */
    public static final int IPV4_DF = 0x4000;

    public static final int IPV6_HEADER_LENGTH = 40;
    public static final int IPV6_PAYLOAD_LENGTH = 4;
    public static final int IPV6_NEXT_HEADER = 6;
    public static final int IPV6_HOP_LIMIT = 7;
    public static final int IPV6_SRC = 8;
    public static final int IPV6_DST = 24;

    public static final int IP_PROTO_UDP = 17;

    public static final int UDP_HEADER_LENGTH = 8;
    public static final int UDP_SRC_PORT = 0;
    public static final int UDP_DST_PORT = 2;
    public static final int UDP_LENGTH = 4;
    public static final int UDP_CHECKSUM = 6;
    /** IANA RoCEv2 port (rxe ROCE_V2_UDP_DPORT). */
    public static final int ROCE_V2_PORT = 4791;

    /** BTH offset from the start of an IPv4 packet. */
    public static final int IPV4_ROCE_OFFSET = IPV4_HEADER_LENGTH + UDP_HEADER_LENGTH;
    /** BTH offset from the start of an IPv6 packet. */
    public static final int IPV6_ROCE_OFFSET = IPV6_HEADER_LENGTH + UDP_HEADER_LENGTH;
    /** Largest BTH + extension headers rxe handles (rxe RXE_MAX_HDR_LENGTH). */
    public static final int MAX_HEADER_LENGTH = 80;

    private PacketLayout() {
    }

    /**
     * RFC 1071 one's complement sum over the 20-byte IPv4 header at {@code offset}, checksum field included as it
     * is: returns the value to store in a header whose checksum field is 0, and 0 for a header with a correct one.
     */
    public static int ipv4HeaderChecksum(final DirectBuffer buffer, final int offset) {
        int sum = 0;
        for (int i = 0; i < IPV4_HEADER_LENGTH; i += 2) {
            sum += buffer.getShort(offset + i, BIG_ENDIAN) & 0xFFFF;
        }
        while ((sum >>> 16) != 0) {
            sum = (sum & 0xFFFF) + (sum >>> 16);
        }
        return ~sum & 0xFFFF;
    }
}
