package io.jhca.rxe.wire;

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
import static io.jhca.rxe.wire.PacketLayout.UDP_CHECKSUM;
import static io.jhca.rxe.wire.PacketLayout.UDP_DST_PORT;
import static io.jhca.rxe.wire.PacketLayout.UDP_HEADER_LENGTH;
import static io.jhca.rxe.wire.PacketLayout.UDP_LENGTH;
import static io.jhca.rxe.wire.PacketLayout.UDP_SRC_PORT;
import static java.nio.ByteOrder.BIG_ENDIAN;
import static java.nio.ByteOrder.LITTLE_ENDIAN;

import java.nio.ByteBuffer;
import java.util.zip.CRC32;

import org.agrona.DirectBuffer;
import org.agrona.MutableDirectBuffer;
import org.agrona.concurrent.UnsafeBuffer;

/**
 * The RoCEv2 invariant CRC (rocev2.md §2.1, rxe_icrc.c): zlib CRC-32 ({@link CRC32}) over
 * <pre>
 *   8 x 0xFF (the masked LRH; rxe seeds its register with 0xDEBB20E3, the state after them)
 *   IPv4 header with TOS, TTL, header checksum = all ones   | IPv6 header with traffic class, flow label,
 *                                                           |   hop limit = all ones
 *   UDP header with checksum = 0xFFFF
 *   BTH with byte 4 (FECN, BECN, resv6a) = 0xFF
 *   the rest of the headers, payload and pad
 * </pre>
 * and stored little-endian after the pad ({@link #put}); returned values are {@code (int) CRC32.getValue()}.
 *
 * <p>"RoCE bytes" below are the bytes from the BTH to the end of the pad: the UDP payload minus the ICRC.
 * IPv4 headers are taken as 20 bytes without options (version/IHL 0x45, protocol 17), IPv6 headers as 40 bytes
 * with next header 17, as rxe builds them.
 *
 * <p>Not thread-safe: one instance per thread. No allocation per packet: a preallocated scratch array holds the
 * masked headers (68 bytes at most) and, for a packet of at most {@value #SHORT_TAIL} bytes after its BTH, a copy of
 * them; the rest of a longer packet is fed to CRC32 straight from a heap buffer's array, from a cached
 * duplicate of a direct ByteBuffer (one per ByteBuffer, for the last four ByteBuffers seen: a transport cycling
 * through more than four allocates a duplicate per miss), or, for a buffer over a raw address, through a
 * preallocated 2 KiB chunk.
 */
public final class Icrc {

    /** ICRC size on the wire. */
    public static final int LENGTH = 4;
    /** Returned by {@link #verifyIpv4} when no IPv4 Identification is consistent with the received ICRC. */
    public static final int NO_MATCH = -1;

    /** 8 bytes of 0xFF standing for the masked LRH (rxe_icrc.c). */
    private static final int LRH_ONES = 8;
    private static final int CHUNK = 2048;
    private static final int VIEWS = 4;
    /** Bytes after the Identification field to the end of the IPv4 header. */
    private static final int IPV4_AFTER_ID = IPV4_HEADER_LENGTH - IPV4_ID - 2;

    /**
     * The most bytes after the BTH that {@link #finish} copies behind the masked headers, so that one CRC32 call takes
     * the whole packet: for a short packet a call costs about what its bytes do (48 masked bytes and 24 more: 25.7 ns
     * in two calls, 19.0 in one with the copy, on the Intel development host).
     */
    static final int SHORT_TAIL = 256;

    private final CRC32 crc = new CRC32();
    private final byte[] scratch = new byte[LRH_ONES + IPV6_HEADER_LENGTH + UDP_HEADER_LENGTH + Bth.LENGTH + SHORT_TAIL];
    private final UnsafeBuffer scratchBuffer = new UnsafeBuffer(scratch);
    private final byte[] chunk = new byte[CHUNK];
    /** Set by prefixFromPacket: bytes of masked prefix in the scratch, index of the BTH in the packet buffer. */
    private int prefixLength;
    private int roceIndex;
    /** Duplicates of the last few direct ByteBuffers seen, so feeding them to CRC32 needs no new object. */
    private final ByteBuffer[] viewSources = new ByteBuffer[VIEWS];
    private final ByteBuffer[] views = new ByteBuffer[VIEWS];
    private int nextView;

    public Icrc() {
        for (int i = 0; i < LRH_ONES; i++) {
            scratch[i] = (byte) 0xFF;
        }
    }

    // ---------------------------------------------------------------------------------------------- sender side

    /**
     * ICRC of a packet over IPv4 whose headers will carry exactly these values (masked fields need none).
     *
     * @param srcAddr        IPv4 source, big-endian as an int (10.0.0.1 = 0x0A000001)
     * @param totalLength    IPv4 total length
     * @param flagsFragment  the 16-bit flags / fragment offset word (DF = {@link PacketLayout#IPV4_DF})
     * @param udpLength      UDP length field
     * @param roceLength     bytes from the BTH to the end of the pad (ICRC excluded)
     */
    public int computeIpv4(final int srcAddr, final int dstAddr, final int totalLength, final int identification,
            final int flagsFragment, final int udpSrcPort, final int udpDstPort, final int udpLength,
            final DirectBuffer buffer, final int offset, final int roceLength) {
        checkRoce(buffer, offset, roceLength);
        final int n = ipv4Prefix(srcAddr, dstAddr, totalLength, identification, flagsFragment);
        return finish(n, udpSrcPort, udpDstPort, udpLength, buffer, offset, roceLength);
    }

    /** As the full form, lengths derived from {@code roceLength}: UDP length = 8 + roce + 4, total = 20 + that. */
    public int computeIpv4(final int srcAddr, final int dstAddr, final int identification, final int flagsFragment,
            final int udpSrcPort, final int udpDstPort, final DirectBuffer buffer, final int offset,
            final int roceLength) {
        final int udpLength = UDP_HEADER_LENGTH + roceLength + LENGTH;
        return computeIpv4(srcAddr, dstAddr, IPV4_HEADER_LENGTH + udpLength, identification, flagsFragment,
                udpSrcPort, udpDstPort, udpLength, buffer, offset, roceLength);
    }

    /**
     * ICRC of a packet over IPv6 whose headers will carry exactly these values. Addresses are given as two
     * big-endian longs each (bytes 0-7, bytes 8-15 of the address).
     */
    public int computeIpv6(final long srcHi, final long srcLo, final long dstHi, final long dstLo,
            final int payloadLength, final int udpSrcPort, final int udpDstPort, final int udpLength,
            final DirectBuffer buffer, final int offset, final int roceLength) {
        checkRoce(buffer, offset, roceLength);
        final int n = ipv6Prefix(srcHi, srcLo, dstHi, dstLo, payloadLength);
        return finish(n, udpSrcPort, udpDstPort, udpLength, buffer, offset, roceLength);
    }

    /** As the full form, lengths derived: UDP length = IPv6 payload length = 8 + roce + 4. */
    public int computeIpv6(final long srcHi, final long srcLo, final long dstHi, final long dstLo,
            final int udpSrcPort, final int udpDstPort, final DirectBuffer buffer, final int offset,
            final int roceLength) {
        final int udpLength = UDP_HEADER_LENGTH + roceLength + LENGTH;
        return computeIpv6(srcHi, srcLo, dstHi, dstLo, udpLength, udpSrcPort, udpDstPort, udpLength, buffer,
                offset, roceLength);
    }

    /**
     * ICRC of a complete IPv4 or IPv6 packet at {@code ipOffset}, taking every covered field from its headers
     * (raw sockets, pcap files). Lengths come from the IP header; {@code ipLength} is what the buffer holds.
     *
     * @throws IllegalArgumentException if it is not an option-less IPv4 / plain IPv6 UDP packet that fits
     */
    public int computeIpPacket(final DirectBuffer buffer, final int ipOffset, final int ipLength) {
        final int roceLength = prefixFromPacket(buffer, ipOffset, ipLength);
        if (roceLength < 0) {
            throw new IllegalArgumentException("not a complete IPv4/IPv6 UDP packet carrying a BTH at " + ipOffset);
        }
        return crcAfterPrefix(buffer, roceLength);
    }

    /**
     * Writes the masked CRC input that precedes the extension headers (8 x 0xFF, masked IP, UDP, BTH) of the
     * packet at {@code ipOffset} into {@code out}, for debugging; returns its length, or -1 as
     * {@link #verifyIpPacket} would reject the packet.
     */
    public int maskedPrefix(final DirectBuffer buffer, final int ipOffset, final int ipLength,
            final MutableDirectBuffer out, final int outOffset) {
        if (prefixFromPacket(buffer, ipOffset, ipLength) < 0) {
            return -1;
        }
        out.putBytes(outOffset, scratch, 0, prefixLength);
        return prefixLength;
    }

    // -------------------------------------------------------------------------------------------- receiver side

    /**
     * True if the complete IP packet at {@code ipOffset} is well formed and its ICRC is right (full 32-bit check,
     * every covered field taken from the packet). Never throws for any packet content; only a range outside the
     * buffer (the caller's bug) throws IndexOutOfBoundsException.
     */
    public boolean verifyIpPacket(final DirectBuffer buffer, final int ipOffset, final int ipLength) {
        final int roceLength = prefixFromPacket(buffer, ipOffset, ipLength);
        if (roceLength < 0) {
            return false;
        }
        return crcAfterPrefix(buffer, roceLength) == get(buffer, roceIndex + roceLength);
    }

    /**
     * Verifies a RoCEv2 UDP payload received over IPv4 without its IP header (a UDP socket). The receiver
     * supplies what it knows: addresses and ports; the IPv4 header is taken as rxe sends it: no options,
     * total length = 28 + UDP payload, flags/fragment = DF only. The Identification field is handled per
     * {@code mode} (see {@link Ipv4IdMode} for exactly what each mode verifies).
     *
     * @return the IPv4 Identification the ICRC is consistent with (always 0 in STRICT_ID_ZERO), or
     *         {@link #NO_MATCH} (also for a payload too short to hold BTH + ICRC). Never throws on bad input
     *         inside the given range.
     */
    public int verifyIpv4(final Ipv4IdMode mode, final int srcAddr, final int dstAddr, final int udpSrcPort,
            final int udpDstPort, final DirectBuffer buffer, final int offset, final int udpPayloadLength) {
        return verifyIpv4(mode, srcAddr, dstAddr, IPV4_DF, udpSrcPort, udpDstPort, buffer, offset,
                udpPayloadLength);
    }

    /** As above with an explicit flags/fragment word. */
    public int verifyIpv4(final Ipv4IdMode mode, final int srcAddr, final int dstAddr, final int flagsFragment,
            final int udpSrcPort, final int udpDstPort, final DirectBuffer buffer, final int offset,
            final int udpPayloadLength) {
        return verifyIpv4(mode, 0, srcAddr, dstAddr, flagsFragment, udpSrcPort, udpDstPort, buffer, offset,
                udpPayloadLength);
    }

    /**
     * As above, the Identification the sender is expected to have used being {@code expectedId} instead of 0: the
     * k-th datagram of a coalesced send carries ID k once the kernel segments it (see
     * {@code Link#sendsCoalesced}). A match with it is the full 32-bit check; in STRICT_ID_ZERO it is the only
     * one accepted, and other modes solve for the ID as before.
     */
    public int verifyIpv4(final Ipv4IdMode mode, final int expectedId, final int srcAddr, final int dstAddr,
            final int flagsFragment, final int udpSrcPort, final int udpDstPort, final DirectBuffer buffer,
            final int offset, final int udpPayloadLength) {
        checkRange(buffer, offset, udpPayloadLength);
        final int roceLength = udpPayloadLength - LENGTH;
        final int udpLength = UDP_HEADER_LENGTH + udpPayloadLength;
        final int totalLength = IPV4_HEADER_LENGTH + udpLength;
        if (roceLength < Bth.LENGTH || totalLength > 0xFFFF) {
            return NO_MATCH;
        }
        final int expected = expectedId & 0xFFFF;
        final int n = ipv4Prefix(srcAddr, dstAddr, totalLength, expected, flagsFragment);
        final int icrcExpected = finish(n, udpSrcPort, udpDstPort, udpLength, buffer, offset, roceLength);
        final int syndrome = get(buffer, offset + roceLength) ^ icrcExpected;
        if (syndrome == 0) {
            return expected;
        }
        if (mode == Ipv4IdMode.STRICT_ID_ZERO) {
            return NO_MATCH;
        }
        // syndrome = Z_n(F(id XOR expected)) (the CRC is affine in the ID): undo the n bytes that follow the ID
        // field, then invert F.
        final int bytesAfterId = IPV4_AFTER_ID + UDP_HEADER_LENGTH + roceLength;
        final int delta = Crc32Gf2.solveTwoBytes(Crc32Gf2.unshiftZeroBytes(syndrome, bytesAfterId));
        return delta >= 0 ? delta ^ expected : NO_MATCH;
    }

    /**
     * Verifies a RoCEv2 UDP payload received over IPv6 without its IP header. Every covered field is known to a
     * receiver bound to its address: payload length = UDP length = 8 + UDP payload; full 32-bit check.
     */
    public boolean verifyIpv6(final long srcHi, final long srcLo, final long dstHi, final long dstLo,
            final int udpSrcPort, final int udpDstPort, final DirectBuffer buffer, final int offset,
            final int udpPayloadLength) {
        checkRange(buffer, offset, udpPayloadLength);
        final int roceLength = udpPayloadLength - LENGTH;
        final int udpLength = UDP_HEADER_LENGTH + udpPayloadLength;
        if (roceLength < Bth.LENGTH || udpLength > 0xFFFF) {
            return false;
        }
        final int n = ipv6Prefix(srcHi, srcLo, dstHi, dstLo, udpLength);
        return finish(n, udpSrcPort, udpDstPort, udpLength, buffer, offset, roceLength)
                == get(buffer, offset + roceLength);
    }

    // ------------------------------------------------------------------------------------------ wire byte order

    /** Writes {@code icrc} at {@code index} little-endian (CRC least significant byte first, rxe on x86). */
    public static void put(final MutableDirectBuffer buffer, final int index, final int icrc) {
        buffer.putInt(index, icrc, LITTLE_ENDIAN);
    }

    /** Reads the ICRC at {@code index} (little-endian on the wire). */
    public static int get(final DirectBuffer buffer, final int index) {
        return buffer.getInt(index, LITTLE_ENDIAN);
    }

    // ---------------------------------------------------------------------------------------------- internals

    private static void checkRange(final DirectBuffer buffer, final int offset, final int length) {
        if (offset < 0 || length < 0 || offset > buffer.capacity() - length) {
            throw new IndexOutOfBoundsException("range " + offset + "+" + length + " outside buffer of "
                    + buffer.capacity());
        }
    }

    private static void checkRoce(final DirectBuffer buffer, final int offset, final int roceLength) {
        if (roceLength < Bth.LENGTH) {
            throw new IllegalArgumentException("RoCE bytes must hold at least a BTH: " + roceLength);
        }
        checkRange(buffer, offset, roceLength);
    }

    /** Masked IPv4 header into the scratch after the 0xFF prefix; returns the prefix length so far. */
    private int ipv4Prefix(final int src, final int dst, final int totalLength, final int id, final int flagsFrag) {
        final int ip = LRH_ONES;
        scratch[ip] = (byte) IPV4_VERSION_IHL;
        scratch[ip + IPV4_TOS] = (byte) 0xFF;
        scratchBuffer.putShort(ip + IPV4_TOTAL_LENGTH, (short) totalLength, BIG_ENDIAN);
        scratchBuffer.putShort(ip + IPV4_ID, (short) id, BIG_ENDIAN);
        scratchBuffer.putShort(ip + IPV4_FLAGS_FRAGMENT, (short) flagsFrag, BIG_ENDIAN);
        scratch[ip + IPV4_TTL] = (byte) 0xFF;
        scratch[ip + IPV4_PROTOCOL] = (byte) IP_PROTO_UDP;
        scratchBuffer.putShort(ip + IPV4_CHECKSUM, (short) 0xFFFF, BIG_ENDIAN);
        scratchBuffer.putInt(ip + IPV4_SRC, src, BIG_ENDIAN);
        scratchBuffer.putInt(ip + IPV4_DST, dst, BIG_ENDIAN);
        return ip + IPV4_HEADER_LENGTH;
    }

    /** Masked IPv6 header: version 6, traffic class + flow label ones, hop limit ones (rxe_icrc.c). */
    private int ipv6Prefix(final long srcHi, final long srcLo, final long dstHi, final long dstLo,
            final int payloadLength) {
        final int ip = LRH_ONES;
        scratchBuffer.putInt(ip, 0x6FFFFFFF, BIG_ENDIAN);
        scratchBuffer.putShort(ip + IPV6_PAYLOAD_LENGTH, (short) payloadLength, BIG_ENDIAN);
        scratch[ip + IPV6_NEXT_HEADER] = (byte) IP_PROTO_UDP;
        scratch[ip + IPV6_HOP_LIMIT] = (byte) 0xFF;
        scratchBuffer.putLong(ip + IPV6_SRC, srcHi, BIG_ENDIAN);
        scratchBuffer.putLong(ip + IPV6_SRC + 8, srcLo, BIG_ENDIAN);
        scratchBuffer.putLong(ip + IPV6_DST, dstHi, BIG_ENDIAN);
        scratchBuffer.putLong(ip + IPV6_DST + 8, dstLo, BIG_ENDIAN);
        return ip + IPV6_HEADER_LENGTH;
    }

    /** Appends the masked UDP header and BTH to the scratch at {@code udp}, then runs the CRC. */
    private int finish(final int udp, final int sport, final int dport, final int udpLength,
            final DirectBuffer buffer, final int offset, final int roceLength) {
        scratchBuffer.putShort(udp + UDP_SRC_PORT, (short) sport, BIG_ENDIAN);
        scratchBuffer.putShort(udp + UDP_DST_PORT, (short) dport, BIG_ENDIAN);
        scratchBuffer.putShort(udp + UDP_LENGTH, (short) udpLength, BIG_ENDIAN);
        scratchBuffer.putShort(udp + UDP_CHECKSUM, (short) 0xFFFF, BIG_ENDIAN); // CSUM_MANGLED_0
        final int bth = udp + UDP_HEADER_LENGTH;
        buffer.getBytes(offset, scratch, bth, Bth.LENGTH);
        scratch[bth + Bth.FECN_BECN_OFFSET] = (byte) 0xFF;
        final int tail = roceLength - Bth.LENGTH;
        crc.reset();
        if (tail <= SHORT_TAIL) {
            buffer.getBytes(offset + Bth.LENGTH, scratch, bth + Bth.LENGTH, tail);
            crc.update(scratch, 0, bth + Bth.LENGTH + tail);
        } else {
            crc.update(scratch, 0, bth + Bth.LENGTH);
            update(buffer, offset + Bth.LENGTH, tail);
        }
        return (int) crc.getValue();
    }

    /** CRC over the scratch prefix left by {@link #prefixFromPacket} and the bytes after the BTH. */
    private int crcAfterPrefix(final DirectBuffer buffer, final int roceLength) {
        crc.reset();
        crc.update(scratch, 0, prefixLength);
        update(buffer, roceIndex + Bth.LENGTH, roceLength - Bth.LENGTH);
        return (int) crc.getValue();
    }

    /**
     * Copies and masks the IP, UDP and BTH headers of the packet at {@code ipOffset} into the scratch. Returns the
     * RoCE length (BTH to end of pad) or -1 if the packet is not a well-formed option-less IPv4 or plain IPv6 UDP
     * packet whose declared lengths fit {@code ipLength} and leave room for BTH + ICRC. Reads only inside
     * [ipOffset, ipOffset + ipLength).
     */
    private int prefixFromPacket(final DirectBuffer buffer, final int ipOffset, final int ipLength) {
        checkRange(buffer, ipOffset, ipLength);
        if (ipLength < 1) {
            return -1;
        }
        final int version = (buffer.getByte(ipOffset) & 0xF0) >>> 4;
        final int ipHeader;
        final int udpLength;
        if (version == 4) {
            if (ipLength < IPV4_HEADER_LENGTH
                    || (buffer.getByte(ipOffset) & 0xFF) != IPV4_VERSION_IHL
                    || (buffer.getByte(ipOffset + IPV4_PROTOCOL) & 0xFF) != IP_PROTO_UDP) {
                return -1;
            }
            final int totalLength = buffer.getShort(ipOffset + IPV4_TOTAL_LENGTH, BIG_ENDIAN) & 0xFFFF;
            if (totalLength > ipLength) {
                return -1;
            }
            ipHeader = IPV4_HEADER_LENGTH;
            udpLength = totalLength - IPV4_HEADER_LENGTH;
        } else if (version == 6) {
            if (ipLength < IPV6_HEADER_LENGTH
                    || (buffer.getByte(ipOffset + IPV6_NEXT_HEADER) & 0xFF) != IP_PROTO_UDP) {
                return -1;
            }
            final int payloadLength = buffer.getShort(ipOffset + IPV6_PAYLOAD_LENGTH, BIG_ENDIAN) & 0xFFFF;
            if (IPV6_HEADER_LENGTH + payloadLength > ipLength) {
                return -1;
            }
            ipHeader = IPV6_HEADER_LENGTH;
            udpLength = payloadLength;
        } else {
            return -1;
        }
        final int roceLength = udpLength - UDP_HEADER_LENGTH - LENGTH;
        if (roceLength < Bth.LENGTH
                || (buffer.getShort(ipOffset + ipHeader + UDP_LENGTH, BIG_ENDIAN) & 0xFFFF) != udpLength) {
            return -1;
        }
        final int ip = LRH_ONES;
        buffer.getBytes(ipOffset, scratch, ip, ipHeader + UDP_HEADER_LENGTH + Bth.LENGTH);
        if (version == 4) {
            scratch[ip + IPV4_TOS] = (byte) 0xFF;
            scratch[ip + IPV4_TTL] = (byte) 0xFF;
            scratch[ip + IPV4_CHECKSUM] = (byte) 0xFF;
            scratch[ip + IPV4_CHECKSUM + 1] = (byte) 0xFF;
        } else {
            scratch[ip] = (byte) 0x6F;
            scratch[ip + 1] = (byte) 0xFF;
            scratch[ip + 2] = (byte) 0xFF;
            scratch[ip + 3] = (byte) 0xFF;
            scratch[ip + IPV6_HOP_LIMIT] = (byte) 0xFF;
        }
        final int udp = ip + ipHeader;
        scratch[udp + UDP_CHECKSUM] = (byte) 0xFF;
        scratch[udp + UDP_CHECKSUM + 1] = (byte) 0xFF;
        scratch[udp + UDP_HEADER_LENGTH + Bth.FECN_BECN_OFFSET] = (byte) 0xFF;
        prefixLength = udp + UDP_HEADER_LENGTH + Bth.LENGTH;
        roceIndex = ipOffset + ipHeader + UDP_HEADER_LENGTH;
        return roceLength;
    }

    /** A private duplicate of {@code source} (shared content, own position and limit); made once per source. */
    private ByteBuffer view(final ByteBuffer source) {
        for (int i = 0; i < VIEWS; i++) {
            if (viewSources[i] == source) {
                return views[i];
            }
        }
        final int i = nextView;
        nextView = (i + 1) % VIEWS;
        viewSources[i] = source;
        views[i] = source.duplicate();
        return views[i];
    }

    /** Feeds {@code length} bytes at {@code index} to the CRC without allocating (see class comment). */
    private void update(final DirectBuffer buffer, final int index, final int length) {
        if (length <= 0) {
            return;
        }
        final byte[] array = buffer.byteArray();
        if (array != null) {
            crc.update(array, buffer.wrapAdjustment() + index, length);
            return;
        }
        final ByteBuffer source = buffer.byteBuffer();
        if (source != null) {
            final ByteBuffer view = view(source);
            final int start = buffer.wrapAdjustment() + index;
            view.clear();
            view.limit(start + length).position(start);
            crc.update(view);
            return;
        }
        int at = index;
        int left = length;
        while (left > 0) {
            final int n = Math.min(left, CHUNK);
            buffer.getBytes(at, chunk, 0, n);
            crc.update(chunk, 0, n);
            at += n;
            left -= n;
        }
    }
}
