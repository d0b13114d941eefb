package io.jhca.rxe.link;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.StandardProtocolFamily;
import java.nio.ByteBuffer;
import java.nio.channels.DatagramChannel;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

import org.junit.jupiter.api.Test;

import io.jhca.testkit.ThreadPerTask;

/**
 * The kernel sleep of an idle engine: it ends when a datagram is waiting on the link's socket or on one of its
 * multicast groups' sockets, or when another thread wakes it, and otherwise lasts its time. The sleeps here are
 * a minute long, so a sleep that a datagram or a wake did not end fails the test's own timeout rather than passing
 * late; nothing is timed.
 */
class KernelWaitTest {

    private static final long A_MINUTE = 60_000_000_000L;

    private static UdpLink open(final String address) {
        try {
            return UdpLink.open(new InetSocketAddress(InetAddress.getByName(address), 0), 1 << 20);
        } catch (final IOException e) {
            throw new IllegalStateException(e);
        }
    }

    private static void sendTo(final InetSocketAddress to, final int length) throws IOException {
        try (DatagramChannel ch = DatagramChannel.open(StandardProtocolFamily.INET)) {
            ch.send(ByteBuffer.allocate(length), to);
        }
    }

    @Test
    void aWaitingDatagramEndsTheSleepAndStaysToBeReceived() throws Exception {
        try (UdpLink link = open("127.0.0.71"); KernelWait wait = KernelWait.open()) {
            assertFalse(wait.await(link, 1_000_000), "nothing waiting: the sleep lasts its millisecond");
            sendTo(link.localAddress(), 21);
            assertTrue(wait.await(link, A_MINUTE), "a datagram is waiting");
            final ByteBuffer b = ByteBuffer.allocate(64);
            assertNotNull(link.receive(b), "the sleep did not take the datagram");
            assertEquals(21, b.position());
        }
    }

    @Test
    void aDatagramThatComesDuringTheSleepEndsIt() throws Exception {
        try (UdpLink link = open("127.0.0.72"); KernelWait wait = KernelWait.open()) {
            final CompletableFuture<Boolean> slept = CompletableFuture.supplyAsync(() -> wait.await(link, A_MINUTE),
                    ThreadPerTask.EXECUTOR);
            Thread.sleep(50); // most likely asleep by now; if not, the datagram is waiting when it looks
            sendTo(link.localAddress(), 1);
            assertTrue(slept.get(30, TimeUnit.SECONDS));
        }
    }

    @Test
    void aWakeEndsTheSleepOnceAndAWakeBeforeTheSleepCounts() throws Exception {
        try (UdpLink link = open("127.0.0.73"); KernelWait wait = KernelWait.open()) {
            final CompletableFuture<Boolean> slept = CompletableFuture.supplyAsync(() -> wait.await(link, A_MINUTE),
                    ThreadPerTask.EXECUTOR);
            Thread.sleep(50);
            wait.wake();
            assertTrue(slept.get(30, TimeUnit.SECONDS));
            assertFalse(wait.await(link, 1_000_000), "the wake was drained: the next sleep lasts its time");
            wait.wake();
            wait.wake();
            assertTrue(wait.await(link, A_MINUTE), "woken before it slept");
            assertFalse(wait.await(link, 1_000_000), "two wakes, one drain");
        }
    }

    @Test
    void aJoinedGroupsDatagramEndsTheSleep() throws Exception {
        try (UdpLink link = open("127.0.0.74"); KernelWait wait = KernelWait.open()) {
            final InetAddress group = InetAddress.getByName("239.1.2.74");
            link.joinGroup(group);
            final int[] fds = new int[1];
            assertEquals(2, link.pollFds(fds), "the socket and the group's: more than the array holds");
            final CompletableFuture<Boolean> slept = CompletableFuture.supplyAsync(() -> wait.await(link, A_MINUTE),
                    ThreadPerTask.EXECUTOR);
            Thread.sleep(50);
            try (DatagramChannel ch = DatagramChannel.open(StandardProtocolFamily.INET)) {
                ch.setOption(java.net.StandardSocketOptions.IP_MULTICAST_IF, GroupSockets.interfaceOf(link.localAddress().getAddress()));
                ch.send(ByteBuffer.allocate(8), new InetSocketAddress(group, link.localAddress().getPort()));
            }
            assertTrue(slept.get(30, TimeUnit.SECONDS));
            assertNotNull(link.receiveGroup(ByteBuffer.allocate(64)));
            link.leaveGroup(group);
            assertEquals(1, link.pollFds(fds));
        }
    }

    @Test
    void aFaultyLinkWaitsOnItsInnerSockets() throws Exception {
        try (UdpLink inner = open("127.0.0.76"); KernelWait wait = KernelWait.open()) {
            final FaultyLink link = new FaultyLink(inner, LinkFaults.NONE, LinkFaults.NONE, 1);
            final int[] fds = new int[4];
            assertEquals(inner.pollFds(new int[4]), link.pollFds(fds));
            final CompletableFuture<Boolean> slept = CompletableFuture.supplyAsync(() -> wait.await(link, A_MINUTE),
                    ThreadPerTask.EXECUTOR);
            Thread.sleep(50);
            sendTo(inner.localAddress(), 3);
            assertTrue(slept.get(30, TimeUnit.SECONDS), "the datagram ended the sleep");
            assertNotNull(link.receive(ByteBuffer.allocate(64)));
        }
    }

    @Test
    void aLinkWithoutSocketsParksAndAClosedWaitIgnoresWakes() {
        final KernelWait wait = KernelWait.open();
        final Link noSockets = new Link() {
            @Override
            public boolean send(final ByteBuffer datagram, final InetSocketAddress peer) {
                return false;
            }

            @Override
            public InetSocketAddress receive(final ByteBuffer buffer) {
                return null;
            }

            @Override
            public InetSocketAddress localAddress() {
                return new InetSocketAddress(0);
            }

            @Override
            public void close() {
            }
        };
        wait.wake();
        assertFalse(wait.await(noSockets, 1_000_000), "a link with nothing to poll parks its time, wake or not");
        final UdpLink closed = open("127.0.0.75");
        closed.close();
        assertEquals(-1, closed.pollFds(new int[4]), "a closed link has nothing to wait on");
        wait.close();
        wait.wake(); // after close: no write to a descriptor number that may have been reused
        wait.close();
    }
}
