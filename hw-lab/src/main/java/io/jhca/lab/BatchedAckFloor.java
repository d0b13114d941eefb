package io.jhca.lab;

import java.io.IOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.nio.ByteBuffer;
import java.util.concurrent.atomic.AtomicReference;

import io.jhca.rxe.link.Link;
import io.jhca.rxe.link.RxBatch;
import io.jhca.rxe.link.UdpLink;

/**
 * The UDP floor with batched ACKs ({@link UdpFloor#BATCHED_ACKS}): the datagrams of an RC ping-pong (each message and
 * a {@value UdpBaseline#ACK_SIZE}-byte ACK back for it), handed to the kernel as jhca's rxe hands them, over the same
 * kind of socket ({@link UdpLink}: unconnected, DF, on loopback taking coalesced datagrams whole). The server answers
 * with the request's ACK and its answer in one call; the client's next request carries the answer's ACK with it the
 * same way: one GSO datagram where the link sends pairs coalesced (loopback; the longer of the two first, as GSO
 * needs), else one sendmmsg, the ACK first. Datagrams are taken as the engine takes them (the first after a receive
 * that found none by recvmsg, the rest by recvmmsg, split where they came coalesced). Both ends busy-poll; measured
 * and reported as {@link UdpBaseline} measures the other floors.
 */
final class BatchedAckFloor {

    /** Set when the measuring end is done: ends an echo loop still waiting (only after a failure). */
    static final Throwable DONE = new Throwable("done", null, false, false) {
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
            Thread echo = FloorThread.start("hwlab-udp-batched-echo", failure,
                    () -> echo(srv, toClient, size, total, rttFactor, warmup, gapNanos, stallNanos, failure));
            long[] tposted;
            try {
                tposted = client(cli, toServer, size, iters, warmup, gapNanos, stallNanos, failure);
            } catch (IOException e) {
                failure.compareAndSet(null, e);
                throw e;
            } finally {
                failure.compareAndSet(null, DONE);   // ends the echo loop if it is still waiting
                FloorThread.join(echo);
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

    /**
     * The echo end, on {@code srv}: {@code total} requests answered, each with its ACK in one call; stops when
     * {@code failure} is set (by the measuring end, or {@link #DONE}).
     */
    static void echo(UdpLink srv, InetSocketAddress toClient, int size, int total, int rttFactor, int warmup,
                     long gapNanos, long stallNanos, AtomicReference<Throwable> failure) throws IOException {
        ByteBuffer b = UdpBaseline.pageAligned(Math.max(size, 1));
        ByteBuffer ack = ByteBuffer.allocateDirect(UdpBaseline.ACK_SIZE);
        RxBatch in = batch(size);
        for (int i = 0; i < total && failure.get() == null; i++) {
            // the request, and from the second on the ACK of the last answer
            await(srv, in, i > 0 ? 2 : 1, stallNanos, failure);
            if (rttFactor == 2) {   // --latency_gap, as the RDMA side waits; the phase masked in
                Spin.forNanos(LatencyLoops.gapBefore(i, warmup, gapNanos), null);
            }
            b.clear().limit(size);
            ack.clear();
            sendPair(srv, ack, b, toClient);   // the request's ACK and the answer, one call
        }
    }

    /**
     * The measuring end, on {@code cli}: {@code warmup} unmeasured and {@code iters} measured round trips to the echo
     * at {@code toServer}; returns the measured ones' post times. Gives up when {@code failure} is set (the echo's).
     */
    static long[] client(UdpLink cli, InetSocketAddress toServer, int size, int iters, int warmup, long gapNanos,
                         long stallNanos, AtomicReference<Throwable> failure) throws IOException {
        long[] tposted = new long[iters];
        ByteBuffer b = UdpBaseline.pageAligned(Math.max(size, 1));
        ByteBuffer ack = ByteBuffer.allocateDirect(UdpBaseline.ACK_SIZE);
        RxBatch in = batch(size);
        for (int i = 0; i < warmup + iters; i++) {
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
            await(cli, in, 2, stallNanos, failure);   // the request's ACK and the answer
        }
        return tposted;
    }

    /** A socket of the kind an rxe device opens, bound to {@code addr} on a free port. */
    static UdpLink open(InetAddress addr) throws IOException {
        try {
            return UdpLink.open(new InetSocketAddress(addr, 0), UdpLink.DEFAULT_SOCKET_BUFFER);
        } catch (IllegalStateException e) {
            throw UdpBaseline.cannotBind(addr, e);
        }
    }

    /** Slots one byte longer than any datagram of the floor, on pages, as the engine's. */
    private static RxBatch batch(int size) {
        int slot = Math.max(size, UdpBaseline.ACK_SIZE) + 1;
        return new RxBatch(4, (slot + 4095) / 4096 * 4096);
    }

    /** The ACK and the message in one call, as jhca's rxe sends a held ACK with the request that releases it. */
    private static void sendPair(UdpLink link, ByteBuffer ack, ByteBuffer message, InetSocketAddress to)
            throws IOException {
        int both = Link.FIRST_SENT | Link.SECOND_SENT;
        int sent;
        if (link.sendsCoalesced(ack.remaining(), message.remaining(), 0)) {
            sent = link.sendCoalesced(ack, message, to, 0);
        } else if (link.sendsCoalesced(message.remaining(), ack.remaining(), 0)) {
            sent = link.sendCoalesced(message, ack, to, 0);
        } else {
            sent = link.sendPair(ack, message, to, 0);
        }
        if (sent != both) {
            throw new IOException("the UDP floor's send of an ACK and a message was refused");
        }
    }

    /**
     * Busy-polls until {@code n} datagrams have come (the batch is emptied first); gives up when the other side
     * failed or stalled.
     */
    private static void await(UdpLink link, RxBatch in, int n, long stallNanos, AtomicReference<Throwable> failure)
            throws IOException {
        in.clear();
        long start = 0;
        long spins = 0;
        for (link.receive(in); in.count() < n; link.receive(in)) {
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
