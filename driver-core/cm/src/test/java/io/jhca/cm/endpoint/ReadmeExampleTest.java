package io.jhca.cm.endpoint;

import static java.nio.charset.StandardCharsets.US_ASCII;
import static org.junit.jupiter.api.Assertions.assertEquals;

import java.net.InetSocketAddress;
import java.nio.ByteBuffer;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

import org.junit.jupiter.api.Test;

import io.jhca.verbs.Context;
import io.jhca.verbs.Verbs;
import io.jhca.testkit.ThreadPerTask;

/** The RDMA CM endpoint example of the README, as printed there (server and client), run against each other. */
class ReadmeExampleTest {

    static String server() {
        try (Context ctx = Verbs.open("rxe0");
             RdmaServerEndpoint server = RdmaServerEndpoint.listen(ctx, new InetSocketAddress("127.0.0.1", 7471), 8);
             RdmaEndpoint ep = server.accept()) {                       // QP, CQ and registered buffers, connected
            ByteBuffer where = ByteBuffer.wrap(ep.receive());           // a SEND: the client's buffer and rkey
            ep.data().putStringWithoutLengthAscii(0, "pong");
            ep.write(0, 4, where.getLong(), where.getInt());            // RDMA WRITE into the client's buffer
            ep.send("done".getBytes(US_ASCII));
            return ep.remoteAddress().getAddress().getHostAddress();
        }
    }

    static String client() {
        try (Context ctx = Verbs.open("rxe1");
             RdmaEndpoint ep = RdmaClientEndpoint.connect(ctx, new InetSocketAddress("127.0.0.1", 7471))) {
            ep.send(ByteBuffer.allocate(12).putLong(ep.dataAddress()).putInt(ep.dataRkey()).array());
            ep.receive();                                               // "done": the WRITE landed before it
            return ep.data().getStringWithoutLengthAscii(0, 4);         // "pong"
        }
    }

    @Test
    void serverAndClientOfTheReadme() throws Exception {
        CompletableFuture<String> s = CompletableFuture.supplyAsync(ReadmeExampleTest::server, ThreadPerTask.EXECUTOR);
        String got = null;
        for (int i = 0; i < 50 && got == null; i++) { // until the server listens
            try {
                got = client();
            } catch (io.jhca.cm.CmException e) {
                if (!e.getMessage().contains("REJECTED")) {
                    throw e;
                }
                Thread.sleep(100);
            }
        }
        assertEquals("pong", got);
        assertEquals("127.0.0.2", s.get(30, TimeUnit.SECONDS));
    }
}
