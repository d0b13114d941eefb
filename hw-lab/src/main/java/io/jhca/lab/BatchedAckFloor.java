package io.jhca.lab;

import java.io.IOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.nio.ByteBuffer;
import java.util.concurrent.atomic.AtomicReference;

import io.jhca.rxe.link.Link;
import io.jhca.rxe.link.UdpLink;

/**
 * The UDP floor with batched ACKs ({@link UdpFloor#BATCHED_ACKS}): the datagrams of an RC ping-pong (each message and
 * a {@value UdpBaseline#ACK_SIZE}-byte ACK back for it), handed to the kernel as jhca's rxe hands them, over the same
 * kind of socket ({@link UdpLink}: unconnected, DF). The server answers with the request's ACK and its answer in one
 * sendmmsg; the client's next request carries the answer's ACK in front of it the same way. Both ends busy-poll;
 * measured and reported as {@link UdpBaseline} measures the other floors.
 */
final class BatchedAckFloor {

    /** Set by the client when it is done: ends an echo loop still waiting (only after a failure). */
    private static final Throwable DONE = new Throwable("done", null, false, false) {
    };

    private BatchedAckFloor() {
    }

    static LatencyStats run(InetAddress serverAddr, InetAddress clientAddr, int size, int iters, int warmup,
                            int rttFactor, long stallNanos, long gapNanos) throws IOException {
        int total = warmup + iters;
        UdpLink srv = open(serverAddr);
        try (UdpLink cli = open(clientAddr)) {
            InetSocketAddress toClient = cli.localAddress();
            InetSocketAddress toServer = srv.localAddress();
            AtomicReference<Throwable> failure = new AtomicReference<>();
            Thread echo = new Thread(() -> {
                try {
                    ByteBuffer b = UdpBaseline.pageAligned(Math.max(size, 1));
                    ByteBuffer ack = ByteBuffer.allocateDirect(UdpBaseline.ACK_SIZE);
                    for (int i = 0; i < total && failure.get() == null; i++) {
                        if (i > 0) {
                            ack.clear();
                            await(srv, ack, stallNanos, failure);   // the ACK of its last answer, first
                        }
                        b.clear();
                        await(srv, b, stallNanos, failure);
                        b.flip();
                        if (rttFactor == 2) {   // --latency_gap, as the RDMA side waits; the phase masked in
                            Spin.forNanos(LatencyLoops.gapBefore(i, warmup, gapNanos), null);
                        }
                        ack.clear();
                        sendPair(srv, ack, b, toClient);   // the request's ACK and the answer, one call
                    }
                } catch (Throwable t) {
                    failure.compareAndSet(null, t);
                }
            }, "hwlab-udp-batched-echo");
            echo.setDaemon(true);
            echo.start();
            long[] tposted = new long[iters];
            ByteBuffer b = UdpBaseline.pageAligned(Math.max(size, 1));
            ByteBuffer ack = ByteBuffer.allocateDirect(UdpBaseline.ACK_SIZE);
            try {
                for (int i = 0; i < total; i++) {
                    b.clear().limit(size);
                    Spin.forNanos(LatencyLoops.gapBefore(i, warmup, gapNanos), null);
                    tposted[PostStamps.slot(i, warmup)] = System.nanoTime();
                    if (i == 0) {
                        if (!cli.send(b, toServer)) {
                            throw new IOException("the UDP floor's first datagram was refused");
                        }
                    } else {
                        ack.clear();
                        sendPair(cli, ack, b, toServer);   // the last answer's ACK, then the request
                    }
                    ack.clear();
                    await(cli, ack, stallNanos, failure);   // the request's ACK comes first
                    b.clear();
                    await(cli, b, stallNanos, failure);
                }
            } catch (IOException e) {
                failure.compareAndSet(null, e);
                throw e;
            } finally {
                failure.compareAndSet(null, DONE);   // ends the echo loop if it is still waiting
                try {
                    echo.join(5000);
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                }
            }
            Throwable f = failure.get();
            if (f != DONE) {
                throw new IOException("UDP echo failed: " + f.getMessage(), f);
            }
            return UdpBaseline.stats(size, tposted, rttFactor);
        } finally {
            srv.close();
        }
    }

    private static UdpLink open(InetAddress addr) throws IOException {
        try {
            return UdpLink.open(new InetSocketAddress(addr, 0), UdpLink.DEFAULT_SOCKET_BUFFER);
        } catch (IllegalStateException e) {
            throw UdpBaseline.cannotBind(addr, e);
        }
    }

    private static void sendPair(UdpLink link, ByteBuffer first, ByteBuffer second, InetSocketAddress to)
            throws IOException {
        if (link.sendPair(first, second, to, 0) != (Link.FIRST_SENT | Link.SECOND_SENT)) {
            throw new IOException("the UDP floor's sendmmsg was refused");
        }
    }

    /** Busy-polls until a datagram fills {@code b} from its position; gives up when the other side failed or stalled. */
    private static void await(UdpLink link, ByteBuffer b, long stallNanos, AtomicReference<Throwable> failure)
            throws IOException {
        long start = 0;
        long spins = 0;
        while (link.receive(b) == null) {
            Spin.idle(++spins);
            if ((spins & 1023) == 0) {
                if (failure.get() != null) {
                    throw new IOException("the other side of the UDP floor stopped");
                }
                start = UdpBaseline.stallCheck(start, stallNanos);
            }
        }
    }
}
