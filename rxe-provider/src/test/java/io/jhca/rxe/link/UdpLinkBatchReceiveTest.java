package io.jhca.rxe.link;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertSame;

import java.io.IOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.StandardProtocolFamily;
import java.nio.ByteBuffer;
import java.nio.channels.DatagramChannel;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;

import org.agrona.concurrent.UnsafeBuffer;
import org.junit.jupiter.api.Test;

/**
 * The batch receive of a UDP link (recvmmsg): every waiting datagram in arrival order with its exact bytes, length,
 * sender and port; exactly the room offered and the rest next time; a datagram one byte too long for its slot
 * reported as filling it (truncated); senders past the address cache decoded right; nothing after close.
 */
class UdpLinkBatchReceiveTest {

    /** Payload lengths and bytes: printed, and replayed with -Djhca.batch.seed=N. */
    private static final long SEED = Long.getLong("jhca.batch.seed", new java.security.SecureRandom().nextLong());

    static {
        System.out.println("UdpLinkBatchReceiveTest: seed " + SEED + "; replay with -Djhca.batch.seed=" + SEED);
    }

    /** A link that receives datagrams one each (UdpLinkCoalescedSendTest covers one that takes them whole). */
    private static UdpLink open(final String address) throws IOException {
        return UdpLink.open(new InetSocketAddress(InetAddress.getByName(address), 0), 1 << 20, false);
    }

    private static DatagramChannel sender(final String address) throws IOException {
        final InetAddress a = InetAddress.getByName(address);
        final DatagramChannel ch = DatagramChannel.open(a.getAddress().length == 4 ? StandardProtocolFamily.INET
                : StandardProtocolFamily.INET6);
        ch.bind(new InetSocketAddress(a, 0));
        return ch;
    }

    private static byte[] payload(final Random rnd, final int length) {
        final byte[] b = new byte[length];
        rnd.nextBytes(b);
        return b;
    }

    /** Waits until {@code n} datagrams are taken (loopback delivers within the send call; the loop is a safety net). */
    private static int receiveAll(final Link link, final RxBatch batch, final int n) {
        int got = 0;
        for (int spins = 0; got < n && spins < 1_000_000; spins++) {
            got += link.receive(batch);
        }
        return got;
    }

    private static byte[] bytes(final RxBatch b, final int i) {
        final byte[] out = new byte[b.length(i)];
        new UnsafeBuffer(b.slotAddress(i), b.slotSize()).getBytes(0, out);
        return out;
    }

    @Test
    void takesEveryWaitingDatagramInOrderWithItsBytesAndSender() throws IOException {
        final Random rnd = new Random(SEED);
        try (UdpLink link = open("127.0.7.61"); DatagramChannel tx = sender("127.0.7.62")) {
            final RxBatch batch = new RxBatch(16, 4352);
            final List<byte[]> sent = new ArrayList<>();
            for (int i = 0; i < 10; i++) {
                final byte[] p = payload(rnd, i == 0 ? 1 : i == 9 ? 4352 : 1 + rnd.nextInt(4352)); // the slot's last byte
                sent.add(p);
                tx.send(ByteBuffer.wrap(p), link.localAddress());
            }
            assertEquals(10, receiveAll(link, batch, 10), "seed " + SEED);
            assertEquals(10, batch.count());
            final InetSocketAddress from = (InetSocketAddress) tx.getLocalAddress();
            for (int i = 0; i < 10; i++) {
                assertEquals(sent.get(i).length, batch.length(i), "datagram " + i + ", seed " + SEED);
                assertArrayEquals(sent.get(i), bytes(batch, i), "datagram " + i + ", seed " + SEED);
                assertEquals(from, batch.source(i));
                assertEquals(0, batch.receivedOn(i));
            }
            assertSame(batch.source(0), batch.source(9), "one sender, one cached address: no allocation per datagram");
            batch.clear();
            assertEquals(0, link.receive(batch), "nothing left");
        }
    }

    @Test
    void takesExactlyTheRoomOfferedAndTheRestNextTime() throws IOException {
        try (UdpLink link = open("127.0.7.63"); DatagramChannel tx = sender("127.0.7.64")) {
            final RxBatch batch = new RxBatch(4, 64);
            for (int i = 0; i < 7; i++) {
                tx.send(ByteBuffer.wrap(new byte[] {(byte) i}), link.localAddress());
            }
            assertEquals(4, receiveAll(link, batch, 4));
            assertEquals(0, batch.room());
            assertEquals(0, link.receive(batch), "a full batch takes nothing");
            batch.clear();
            assertEquals(3, receiveAll(link, batch, 3));
            for (int i = 0; i < 3; i++) {
                assertEquals(4 + i, bytes(batch, i)[0]);
            }
            assertEquals(0, link.receive(batch));
        }
    }

    /**
     * The first call after one that found nothing takes one datagram (recvmsg), with its bytes, length and sender as
     * the batch gives them; the next call batches what is still waiting.
     */
    @Test
    void afterNothingOneDatagramThenTheRestInOneCall() throws IOException {
        final Random rnd = new Random(SEED + 1);
        try (UdpLink link = open("127.0.7.70"); DatagramChannel tx = sender("127.0.7.71")) {
            final RxBatch batch = new RxBatch(8, 2048);
            assertEquals(0, link.receive(batch), "nothing waiting");
            final List<byte[]> sent = new ArrayList<>();
            for (int i = 0; i < 5; i++) {
                sent.add(payload(rnd, 1 + rnd.nextInt(2047)));
                tx.send(ByteBuffer.wrap(sent.get(i)), link.localAddress());
            }
            assertEquals(1, link.receive(batch), "one, by recvmsg");
            assertEquals(4, link.receive(batch), "the other four at once");
            for (int i = 0; i < 5; i++) {
                assertEquals(sent.get(i).length, batch.length(i), "datagram " + i + ", seed " + SEED);
                assertArrayEquals(sent.get(i), bytes(batch, i), "datagram " + i + ", seed " + SEED);
                assertEquals(tx.getLocalAddress(), batch.source(i));
            }
            assertEquals(0, link.receive(batch));
            tx.send(ByteBuffer.wrap(new byte[2047]), link.localAddress());
            tx.send(ByteBuffer.wrap(new byte[2049]), link.localAddress());   // one byte longer than its slot
            batch.clear();
            assertEquals(1, link.receive(batch));
            assertEquals(2047, batch.length(0));
            assertEquals(1, link.receive(batch));
            assertEquals(2048, batch.length(1), "truncated: reported as the whole slot, which the engine drops");
        }
    }

    @Test
    void aDatagramOneByteLongerThanItsSlotFillsIt() throws IOException {
        try (UdpLink link = open("127.0.7.65"); DatagramChannel tx = sender("127.0.7.66")) {
            final RxBatch batch = new RxBatch(3, 256);
            tx.send(ByteBuffer.wrap(new byte[257]), link.localAddress());
            tx.send(ByteBuffer.wrap(new byte[257]), link.localAddress());
            tx.send(ByteBuffer.wrap(new byte[255]), link.localAddress());
            assertEquals(3, receiveAll(link, batch, 3));
            assertEquals(256, batch.length(0), "truncated: reported as the whole slot, which the engine drops");
            assertEquals(256, batch.length(1), "a second one too");
            assertEquals(255, batch.length(2));
        }
    }

    @Test
    void sendersBeyondTheAddressCacheAreEachDecoded() throws IOException {
        try (UdpLink link = open("127.0.7.67")) {
            final List<DatagramChannel> senders = new ArrayList<>();
            try {
                for (int i = 0; i < 12; i++) { // more than the cache holds, each sent to twice
                    senders.add(sender("127.0.8." + (10 + i)));
                }
                final RxBatch batch = new RxBatch(24, 64);
                for (int round = 0; round < 2; round++) {
                    for (int i = 0; i < senders.size(); i++) {
                        senders.get(i).send(ByteBuffer.wrap(new byte[] {(byte) i}), link.localAddress());
                    }
                }
                assertEquals(24, receiveAll(link, batch, 24));
                for (int k = 0; k < 24; k++) {
                    final int i = k % 12;
                    assertEquals(senders.get(i).getLocalAddress(), batch.source(k), "datagram " + k);
                    assertEquals(i, bytes(batch, k)[0]);
                }
            } finally {
                for (final DatagramChannel c : senders) {
                    c.close();
                }
            }
        }
    }

    @Test
    void ipv6SendersWithTheirPorts() throws IOException {
        final UdpLink link;
        try {
            link = open("::1");
        } catch (final IllegalStateException noIpv6) {
            org.junit.jupiter.api.Assumptions.abort("no IPv6 loopback here: " + noIpv6.getMessage());
            return;
        }
        try (link; DatagramChannel tx = sender("::1")) {
            final RxBatch batch = new RxBatch(2, 64);
            tx.send(ByteBuffer.wrap(new byte[] {42}), link.localAddress());
            assertEquals(1, receiveAll(link, batch, 1));
            assertEquals(tx.getLocalAddress(), batch.source(0));
            assertNotNull(batch.source(0).getAddress());
            assertEquals(42, bytes(batch, 0)[0]);
        }
    }

    @Test
    void aClosedLinkReceivesNothing() throws IOException {
        final UdpLink link = open("127.0.7.68");
        try (DatagramChannel tx = sender("127.0.7.69")) {
            tx.send(ByteBuffer.wrap(new byte[] {1}), link.localAddress());
            link.close();
            final RxBatch batch = new RxBatch(2, 64);
            assertEquals(0, link.receive(batch), "no system call on a closed (perhaps reused) descriptor");
        }
    }

    @Test
    void theDefaultBatchTakesOneDatagramAtATime() {
        final FaultyLinkTest.Loop loop = new FaultyLinkTest.Loop();
        final ByteBuffer d = ByteBuffer.allocate(3);
        for (int i = 0; i < 3; i++) {
            d.clear();
            d.put(new byte[] {(byte) i, 7, 7}).flip();
            loop.send(d, loop.self);
        }
        final RxBatch batch = new RxBatch(2, 16);
        assertEquals(2, loop.receive(batch));
        assertEquals(3, batch.length(1));
        assertEquals(1, bytes(batch, 1)[0]);
        batch.clear();
        assertEquals(1, loop.receive(batch));
        assertEquals(2, bytes(batch, 0)[0]);
        assertSame(loop.self, batch.source(0));
    }
}
