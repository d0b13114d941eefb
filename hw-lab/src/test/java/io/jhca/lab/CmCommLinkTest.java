package io.jhca.lab;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.RegisterExtension;

import io.jhca.cm.CmDevices;
import io.jhca.testkit.ThreadPerTask;
import io.jhca.verbs.Context;
import io.jhca.verbs.Verbs;

/**
 * perf -R's exchange QP: a message of the step's size arrives whole, and one of any other size (a peer out of step)
 * fails the step naming both sizes instead of being read with the rest of the buffer's stale bytes.
 */
@Timeout(60)
class CmCommLinkTest {
    static final String IP0 = "127.0.76.1";
    static final String IP1 = "127.0.76.2";

    @RegisterExtension
    static final DevicesProperty DEVICES = DevicesProperty.rxe(IP0, IP1);

    private Context c0;
    private Context c1;
    private CmCommLink server;
    private CmCommLink client;

    @BeforeEach
    void connect() throws Exception {
        c0 = Verbs.open("rxe0");
        c1 = Verbs.open("rxe1");
        CmDevices.attach(c0);
        CmDevices.attach(c1);
        InetSocketAddress at = new InetSocketAddress(InetAddress.getByName(IP0), ToolsEndToEnd.freePort());
        CmCommLink listening = CmCommLink.listen(c0, at, 20_000);
        CompletableFuture<CmCommLink> accepted = CompletableFuture.supplyAsync(() -> {
            try {
                return listening.accept(20_000);
            } catch (IOException e) {
                throw new IllegalStateException(e);
            }
        }, ThreadPerTask.EXECUTOR);
        client = CmCommLink.connect(c1, InetAddress.getByName(IP1), at, 20_000);
        server = accepted.get(30, TimeUnit.SECONDS);
    }

    @AfterEach
    void close() {
        for (CmCommLink l : new CmCommLink[] {client, server}) {
            if (l != null) {
                l.close(); // best effort, as the tools close it
            }
        }
        CmDevices.detach(c0);
        CmDevices.detach(c1);
        c0.close();
        c1.close();
    }

    @Test
    void messagesOfTheStepsSizeArriveWholeBothWays() throws Exception {
        byte[] full = new byte[CmCommLink.RECV_SIZE];
        for (int i = 0; i < full.length; i++) {
            full[i] = (byte) (i * 7 + 1);
        }
        client.write(full);
        assertArrayEquals(full, server.read(full.length));
        byte[] done = PerftestComm.DONE;
        server.write(done);
        assertArrayEquals(done, client.read(done.length));
        client.write(new byte[] {42});
        assertArrayEquals(new byte[] {42}, server.read(1));
    }

    @Test
    void aShorterMessageFailsTheStep() throws Exception {
        client.write(new byte[] {'d', 'o', 'n', 'e', 0}); // a leftover "done" where a 16-byte version is due
        IOException e = assertThrows(IOException.class, () -> server.read(PerftestComm.VERSION_SIZE));
        assertTrue(e.getMessage().contains("received a message of 5 bytes where this step's has 16"), e.getMessage());
    }

    @Test
    void aLongerMessageFailsTheStep() throws Exception {
        client.write(new byte[5]);
        IOException e = assertThrows(IOException.class, () -> server.read(4));
        assertTrue(e.getMessage().contains("received a message of 5 bytes where this step's has 4"), e.getMessage());
    }
}
