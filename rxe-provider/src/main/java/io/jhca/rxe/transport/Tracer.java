package io.jhca.rxe.transport;

import java.io.IOException;

import org.agrona.DirectBuffer;
import org.agrona.concurrent.UnsafeBuffer;

import io.jhca.rxe.wire.Icrc;
import io.jhca.rxe.wire.PcapWriter;
import io.jhca.rxe.wire.RocePacket;

/**
 * Writes the packets a device sends and receives to a pcap file (debugging; tshark decodes them as "RRoCE").
 * The IP and UDP headers are rebuilt as the kernel writes them for our socket (IPv4 ID 0, DF, TTL 64). Tracing
 * is best effort: an I/O error turns it off, never the device.
 */
public final class Tracer implements AutoCloseable {

    private final PcapWriter writer;
    private final UnsafeBuffer scratch = new UnsafeBuffer(java.nio.ByteBuffer.allocateDirect(PacketOut.CAPACITY + 128));
    private final RocePacket packet = new RocePacket();
    private final Icrc icrc = new Icrc();
    private boolean failed;

    public Tracer(final PcapWriter writer) {
        this.writer = writer;
    }

    /** Records the UDP payload {@code buffer[offset, offset + length)} sent from {@code src} to {@code dst}. */
    void trace(final Peer src, final Peer dst, final int srcPort, final int dstPort, final DirectBuffer buffer,
            final int offset, final int length, final int ipv4Id) {
        if (failed || length < Icrc.LENGTH + 12 || length > PacketOut.CAPACITY) {
            return;
        }
        if (src.isIpv4()) {
            packet.ipv4(src.ipv4Address(), dst.ipv4Address()).identification(ipv4Id);
        } else {
            packet.ipv6(src.hi(), src.lo(), dst.hi(), dst.lo());
        }
        packet.udpPorts(srcPort, dstPort);
        final int roce = packet.roceOffset();
        scratch.putBytes(roce, buffer, offset, length);
        final int roceLength = length - Icrc.LENGTH;
        final int wireIcrc = Icrc.get(scratch, roce + roceLength);
        final int ipLength = packet.encode(scratch, 0, roceLength, icrc);
        Icrc.put(scratch, roce + roceLength, wireIcrc); // keep what was really sent or received, right or wrong
        try {
            writer.writeIpPacket(scratch, 0, ipLength, System.currentTimeMillis() * 1_000_000L);
        } catch (final IOException e) {
            failed = true;
        }
    }

    @Override
    public void close() throws IOException {
        writer.close();
    }
}
