package io.jhca.rxe.link;

import java.io.IOException;
import java.net.InetSocketAddress;
import java.net.StandardProtocolFamily;
import java.nio.ByteBuffer;
import java.nio.channels.DatagramChannel;
import java.util.concurrent.ThreadLocalRandom;

import org.agrona.concurrent.UnsafeBuffer;

import io.jhca.verbs.VerbsException;

/**
 * Opens a loopback link's {@link PacketRing} and proves it before the link relies on it: a coalesced pair sent to
 * the ring's address must come out of it as two entries with their exact bytes. That is the one
 * thing a kernel may not do (describe a UDP GSO frame to a packet socket, Linux 6.2 on); a kernel that cannot drops
 * the frame, and the link then keeps its socket receive. While the ring is in use the UDP socket, still bound so that
 * no ICMP port unreachable goes out, drops everything it is given.
 *
 * <p>A reason that holds for every link of the process (no CAP_NET_RAW, a kernel without the support) is remembered,
 * so later links do not try again.
 */
final class RingProbe {

    /** How long the probe's pair may take to appear in the ring (loopback delivers it within the send, normally). */
    static final long PROBE_NANOS = 50_000_000L;

    /** The ring to receive from (null: the socket's) and the receive path's description. */
    record Outcome(PacketRing ring, String path) {
    }

    /** Why no link of this process can have a ring, once found; null while none was found. */
    private static volatile String never;

    private RingProbe() {
    }

    /**
     * A proven ring for the UDP socket {@code udpFd} bound to {@code bound}, or the socket with the reason. The probe's
     * pair goes between a socket of its own on the same address and another port, so that a capture of the device's
     * port never shows it; then the ring's filter moves to the device's port.
     */
    static Outcome open(final InetSocketAddress bound, final int udpFd, final int socketBuffer) {
        final String no = never;
        if (no != null) {
            return new Outcome(null, "socket (no packet ring: " + no + ")");
        }
        if (!(bound.getAddress() instanceof java.net.Inet4Address) || !bound.getAddress().isLoopbackAddress()) {
            return new Outcome(null, "socket (no packet ring: " + bound.getAddress() + " is not an IPv4 loopback"
                    + " address)");
        }
        try (DatagramChannel probe = DatagramChannel.open(StandardProtocolFamily.INET)) {
            probe.bind(new InetSocketAddress(bound.getAddress(), 0));
            final InetSocketAddress at = (InetSocketAddress) probe.getLocalAddress();
            final PacketRing ring;
            try {
                ring = PacketRing.open(at, PacketRing.framesFor(socketBuffer));
            } catch (final IllegalStateException e) {
                final String why = e.getMessage();
                if (e instanceof PacketRing.Refused r && r.call.equals(PacketRing.SOCKET_CALL)) {
                    never = why + (r.errno == VerbsException.EPERM ? ": CAP_NET_RAW is needed" : "");
                }
                return new Outcome(null, "socket (no packet ring: " + (never != null ? never : why) + ")");
            }
            try {
                final String failed = probe(ring, NativeSocket.fd(probe), at);
                if (failed != null) {
                    ring.close();
                    never = failed;
                    return new Outcome(null, "socket (no packet ring: " + failed + ")");
                }
                // the ring first, then the socket's drop: what comes in between is in both, and only the ring is read
                ring.filter(bound.getPort());
                PacketRing.dropEverything(udpFd);
                return new Outcome(ring, "packet ring");
            } catch (final RuntimeException e) {
                PacketRing.detachFilter(udpFd);
                ring.close();
                return new Outcome(null, "socket (no packet ring: " + e.getMessage() + ")");
            }
        } catch (final IOException | RuntimeException e) {
            return new Outcome(null, "socket (no packet ring: the probe's socket: " + e + ")");
        }
    }

    /** Null if a coalesced pair to itself came out of the ring whole and split; else what went wrong. */
    private static String probe(final PacketRing ring, final int fd, final InetSocketAddress to) {
        final ThreadLocalRandom rnd = ThreadLocalRandom.current();
        final byte[] first = new byte[40];
        final byte[] second = new byte[24];
        rnd.nextBytes(first);
        rnd.nextBytes(second);
        final ByteBuffer a = ByteBuffer.allocateDirect(first.length).put(first).flip();
        final ByteBuffer b = ByteBuffer.allocateDirect(second.length).put(second).flip();
        final Sendmmsg send = new Sendmmsg(fd, false);
        final boolean sent = send.sendCoalesced(a, b, to);
        java.lang.ref.Reference.reachabilityFence(a);   // native memory the kernel read in the call
        java.lang.ref.Reference.reachabilityFence(b);
        java.lang.ref.Reference.reachabilityFence(send);
        if (!sent) {
            return "the probe's coalesced send was refused";
        }
        final RxBatch batch = new RxBatch(4, RxBatch.PAGE);
        final long deadline = System.nanoTime() + PROBE_NANOS;
        while (System.nanoTime() < deadline) {
            batch.clear();
            if (ring.receive(batch, 0) == 0) {
                Thread.onSpinWait();
                continue;
            }
            // whole and split here (segments 0 and 1), or split by the kernel before lo (a loopback without UDP
            // segmentation offload: two datagrams that came alone)
            if (batch.count() == 2 && batch.segment(0) == 0 && batch.segment(1) <= 1
                    && to.equals(batch.source(0)) && same(batch, 0, first) && same(batch, 1, second)) {
                ring.releaseHeld();
                return null;
            }
        }
        return "a coalesced datagram did not reach the packet socket whole (the kernel cannot describe UDP GSO frames"
                + " to it before Linux 6.2)";
    }

    private static boolean same(final RxBatch batch, final int i, final byte[] expected) {
        if (batch.length(i) != expected.length) {
            return false;
        }
        final byte[] got = new byte[expected.length];
        new UnsafeBuffer(batch.address(i), expected.length).getBytes(0, got);
        return java.util.Arrays.equals(got, expected);
    }
}
