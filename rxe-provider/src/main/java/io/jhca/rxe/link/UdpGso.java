package io.jhca.rxe.link;

import java.nio.channels.DatagramChannel;

/**
 * UDP segmentation offload for a plain DatagramChannel, as a loopback rxe device uses it ({@link Link#sendBurst}): a
 * floor that measures what the kernel does for jhca's bursts sends and receives the same way. Linux only; each call
 * says whether the kernel took the option (UDP_SEGMENT came in 4.18, UDP_GRO in 5.0).
 */
public final class UdpGso {
    private UdpGso() {
    }

    /**
     * Every write of {@code channel} longer than {@code segmentSize} leaves as one GSO datagram of segments of that
     * size (UDP_SEGMENT as a socket option: the kernel splits it, or a UDP_GRO receiver on this host takes it whole).
     */
    public static boolean segmentSends(final DatagramChannel channel, final int segmentSize) {
        return set(channel, NativeSocket.UDP_SEGMENT, segmentSize, "UDP_SEGMENT");
    }

    /** {@code channel} takes a GSO datagram from this host whole (UDP_GRO), as a loopback rxe device's socket does. */
    public static boolean receiveWhole(final DatagramChannel channel) {
        return set(channel, NativeSocket.UDP_GRO, 1, "UDP_GRO");
    }

    /**
     * Datagrams of {@code length} bytes a burst of jhca's holds: as many as {@link UdpLink#MAX_BURST} bytes take, at
     * most {@link Link#MAX_BURST_SEGMENTS}, at least one.
     */
    public static int segmentsPerBurst(final int length) {
        return Math.max(1, Math.min(Link.MAX_BURST_SEGMENTS, UdpLink.MAX_BURST / Math.max(1, length)));
    }

    private static boolean set(final DatagramChannel channel, final int option, final int value, final String what) {
        try {
            NativeSocket.setInt(NativeSocket.fd(channel), NativeSocket.SOL_UDP, option, value, what);
            return true;
        } catch (final RuntimeException e) {
            return false;
        }
    }
}
