package io.jhca.lab;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.PrintWriter;
import java.io.StringWriter;

import org.junit.jupiter.api.Test;

import io.jhca.cm.CmException;

/**
 * cm-messages' data phase against a scripted peer: a send that completes in error fails the run, except the last one
 * when the peer has disconnected (it took every message and its ACK of the last was lost to its teardown, as Linux
 * rxe can lose it); the messages are still received and checked.
 */
class CmMessagesExchangeTest {

    /** A peer whose send number {@code failAt} (1-based; 0: none) completes in error, connected or not by then. */
    private static final class Scripted implements CmMessagesCommand.Messenger {
        final int failAt;
        final boolean connectedAfterFailure;
        final int receivedSize;
        int sends;
        int receives;
        boolean connected = true;

        Scripted(int failAt, boolean connectedAfterFailure, int receivedSize) {
            this.failAt = failAt;
            this.connectedAfterFailure = connectedAfterFailure;
            this.receivedSize = receivedSize;
        }

        @Override
        public void send(byte[] message) {
            if (++sends == failAt) {
                connected = connectedAfterFailure;
                throw new CmException("SEND on QP 0x000011 completed with WR_FLUSH_ERR");
            }
        }

        @Override
        public byte[] receive() {
            receives++;
            return new byte[receivedSize];
        }

        @Override
        public boolean connected() {
            return connected;
        }
    }

    private static String run(Scripted peer, int count) {
        StringWriter text = new StringWriter();
        CmMessagesCommand.exchange(new PrintWriter(text), peer, new byte[100], count);
        return text.toString();
    }

    @Test
    void theLastSendFlushedByThePeersDisconnectIsSaidAndTheMessagesStillReceived() {
        Scripted peer = new Scripted(10, false, 100);
        String out = run(peer, 10);
        assertTrue(out.contains("the peer disconnected before acknowledging message 10: SEND on QP 0x000011"
                + " completed with WR_FLUSH_ERR"), out);
        assertTrue(out.endsWith("data transfers complete" + System.lineSeparator()), out);
        assertEquals(10, peer.receives);
    }

    @Test
    void anEarlierSendInErrorFailsTheRunEvenAfterADisconnect() {
        Scripted peer = new Scripted(9, false, 100);
        assertThrows(CmException.class, () -> run(peer, 10));
        assertEquals(0, peer.receives);
    }

    @Test
    void theLastSendInErrorOnAConnectionStillUpFailsTheRun() {
        Scripted peer = new Scripted(10, true, 100);
        assertThrows(CmException.class, () -> run(peer, 10));
    }

    @Test
    void oneMessageAloneIsTheLast() {
        Scripted peer = new Scripted(1, false, 100);
        assertTrue(run(peer, 1).contains("before acknowledging message 1:"));
        assertEquals(1, peer.receives);
    }

    @Test
    void aReceivedMessageOfAnotherSizeFailsTheRun() {
        Scripted peer = new Scripted(0, true, 99);
        IllegalStateException e = assertThrows(IllegalStateException.class, () -> run(peer, 3));
        assertEquals("message 0 has 99 bytes, expected 100", e.getMessage());
    }
}
