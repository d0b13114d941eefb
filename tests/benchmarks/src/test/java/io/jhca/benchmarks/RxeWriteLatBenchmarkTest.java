package io.jhca.benchmarks;

import io.jhca.rxe.link.Link;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

import java.net.InetSocketAddress;
import java.nio.ByteBuffer;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** The write-lat benchmark's harness: its ping-pong really moves the bytes, over both kinds of link. */
class RxeWriteLatBenchmarkTest {

    @ParameterizedTest
    @ValueSource(strings = {"memory", "udp"})
    void everyPingPongDeliversBothWritesAndBothCompletions(String link) {
        RxeWriteLatBenchmark b = new RxeWriteLatBenchmark();
        b.size = 2;
        b.link = link;
        b.setUp();
        try {
            // past 255 iterations, so the one-byte count in the last byte wraps (as in ib_write_lat)
            for (long i = 1; i <= 600; i++) {
                assertEquals(i, b.pingPong(), "iteration");
            }
        } finally {
            b.tearDown();
        }
    }

    @Test
    void theMemoryLinksPassDatagramsInOrderAndRefuseWhenFull() {
        MemoryLinkPair pair = new MemoryLinkPair("127.0.0.63", "127.0.0.64");
        InetSocketAddress a = new InetSocketAddress("127.0.0.63", 4791);
        InetSocketAddress bAddress = new InetSocketAddress("127.0.0.64", 4791);
        Link first = pair.first().open(a);
        Link second = pair.second().open(bAddress);
        ByteBuffer out = ByteBuffer.allocateDirect(64);
        int sent = 0;
        while (true) {
            out.clear();
            out.putInt(sent).flip();
            if (!first.send(out, bAddress)) {
                break;
            }
            assertFalse(out.hasRemaining(), "a sent datagram is consumed");
            sent++;
        }
        assertEquals(64, sent, "a full ring refuses the next datagram");
        ByteBuffer in = ByteBuffer.allocateDirect(64);
        for (int i = 0; i < sent; i++) {
            in.clear();
            assertSame(first.localAddress(), second.receive(in), "the sender's address");
            assertEquals(4, in.position(), "the datagram's length");
            assertEquals(i, in.getInt(0), "datagram " + i + " in order");
        }
        in.clear();
        assertNull(second.receive(in), "nothing more");
        assertNull(first.receive(in), "nothing came the other way");
        out.clear();
        out.put(new byte[64]).flip();
        assertTrue(second.send(out, a), "room again after the receives");
    }
}
