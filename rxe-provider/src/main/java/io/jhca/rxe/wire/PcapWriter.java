package io.jhca.rxe.wire;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.channels.FileChannel;
import java.nio.channels.WritableByteChannel;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;

import org.agrona.DirectBuffer;
import org.agrona.concurrent.UnsafeBuffer;

/**
 * Writes packets to a classic libpcap file for tshark and Wireshark: magic 0xa1b2c3d4, version 2.4,
 * microsecond timestamps, header fields little-endian (readers tell the byte order from the magic); packet
 * bytes as they are on the wire.
 *
 * <p>Link types: {@link #LINKTYPE_ETHERNET} (records are Ethernet frames; {@link #writeIpPacket} adds a
 * synthetic Ethernet header) or {@link #LINKTYPE_RAW} (records are bare IPv4 or IPv6 packets). A debugging
 * and test tool: it performs blocking I/O, but reuses its buffers, so writing does not allocate.
 */
public final class PcapWriter implements AutoCloseable {

    public static final int LINKTYPE_ETHERNET = 1;
    /** Raw IP: IPv4 or IPv6 by the version nibble (pcap-linktype LINKTYPE_RAW). */
    public static final int LINKTYPE_RAW = 101;
    public static final int MAGIC = 0xA1B2C3D4;
    public static final int SNAPLEN = 65535 + PacketLayout.ETH_HEADER_LENGTH;

    private static final int GLOBAL_HEADER_LENGTH = 24;
    private static final int RECORD_HEADER_LENGTH = 16;

    private final WritableByteChannel channel;
    private final int linkType;
    private final ByteBuffer record = ByteBuffer.allocateDirect(RECORD_HEADER_LENGTH + SNAPLEN)
            .order(ByteOrder.LITTLE_ENDIAN);
    private final UnsafeBuffer recordView = new UnsafeBuffer(record);
    private long srcMac = RocePacket.DEFAULT_SRC_MAC;
    private long dstMac = RocePacket.DEFAULT_DST_MAC;

    /** Starts a pcap stream on {@code channel} by writing the global header; closing closes the channel. */
    public PcapWriter(final WritableByteChannel channel, final int linkType) throws IOException {
        if (linkType != LINKTYPE_ETHERNET && linkType != LINKTYPE_RAW) {
            throw new IllegalArgumentException("unsupported link type " + linkType);
        }
        this.channel = channel;
        this.linkType = linkType;
        final ByteBuffer header = ByteBuffer.allocate(GLOBAL_HEADER_LENGTH).order(ByteOrder.LITTLE_ENDIAN);
        header.putInt(MAGIC).putShort((short) 2).putShort((short) 4) // version 2.4
                .putInt(0).putInt(0) // thiszone, sigfigs
                .putInt(SNAPLEN).putInt(linkType).flip();
        writeFully(header);
    }

    /** Creates (or truncates) {@code path} and starts a pcap file there. */
    public static PcapWriter create(final Path path, final int linkType) throws IOException {
        return new PcapWriter(FileChannel.open(path, StandardOpenOption.CREATE, StandardOpenOption.WRITE,
                StandardOpenOption.TRUNCATE_EXISTING), linkType);
    }

    public int linkType() {
        return linkType;
    }

    /** MACs of the synthetic Ethernet header that {@link #writeIpPacket} adds on LINKTYPE_ETHERNET. */
    public PcapWriter macs(final long srcMac, final long dstMac) {
        this.srcMac = srcMac;
        this.dstMac = dstMac;
        return this;
    }

    /** Writes one record holding {@code length} bytes as they are (a frame for this file's link type). */
    public void write(final DirectBuffer buffer, final int offset, final int length, final long timestampNanos)
            throws IOException {
        writeRecord(buffer, offset, length, timestampNanos, false);
    }

    /** Writes one IPv4/IPv6 packet, behind a synthetic Ethernet header if this is a LINKTYPE_ETHERNET file. */
    public void writeIpPacket(final DirectBuffer buffer, final int offset, final int length,
            final long timestampNanos) throws IOException {
        writeRecord(buffer, offset, length, timestampNanos, linkType == LINKTYPE_ETHERNET);
    }

    private void writeRecord(final DirectBuffer buffer, final int offset, final int length,
            final long timestampNanos, final boolean addEthernet) throws IOException {
        final int frameLength = length + (addEthernet ? PacketLayout.ETH_HEADER_LENGTH : 0);
        if (length < (addEthernet ? 1 : 0) || frameLength > SNAPLEN) {
            throw new IllegalArgumentException("record of " + frameLength + " bytes exceeds snaplen " + SNAPLEN);
        }
        record.clear();
        record.putInt((int) (timestampNanos / 1_000_000_000L))
                .putInt((int) (timestampNanos % 1_000_000_000L / 1000))
                .putInt(frameLength).putInt(frameLength);
        int at = RECORD_HEADER_LENGTH;
        if (addEthernet) {
            final int version = (buffer.getByte(offset) & 0xF0) >>> 4;
            RocePacket.writeEthernetHeader(recordView, at, dstMac, srcMac,
                    version == 6 ? PacketLayout.ETHERTYPE_IPV6 : PacketLayout.ETHERTYPE_IPV4);
            at += PacketLayout.ETH_HEADER_LENGTH;
        }
        buffer.getBytes(offset, recordView, at, length);
        record.limit(at + length).position(0);
        writeFully(record);
    }

    private void writeFully(final ByteBuffer bytes) throws IOException {
        while (bytes.hasRemaining()) {
            channel.write(bytes);
        }
    }

    @Override
    public void close() throws IOException {
        channel.close();
    }
}
