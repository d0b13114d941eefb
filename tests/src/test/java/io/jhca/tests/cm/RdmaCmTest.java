package io.jhca.tests.cm;

import static java.nio.charset.StandardCharsets.US_ASCII;
import static org.junit.jupiter.api.Assertions.assertEquals;

import java.net.Inet4Address;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.nio.ByteBuffer;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

import io.jhca.cm.CmDevices;
import io.jhca.cm.endpoint.RdmaClientEndpoint;
import io.jhca.cm.endpoint.RdmaEndpoint;
import io.jhca.cm.endpoint.RdmaServerEndpoint;
import io.jhca.tests.harness.DevicePair;
import io.jhca.tests.harness.Harness;
import io.jhca.verbs.Context;
import io.jhca.testkit.ThreadPerTask;

/**
 * RDMA CM on every device pair: QP1 on each side, a connection made by REQ/REP/RTU from B to a listener on A,
 * a SEND each way and an RDMA WRITE over it, and the disconnect, through the endpoint API.
 */
class RdmaCmTest {
    private static int nextPort = 7600;

    /** The device's IPv4 address: its first IPv4-mapped GID (the pairs of the model name no addresses). */
    static InetAddress ipv4Of(Context ctx) {
        for (int i = 0; i < ctx.queryPort(1).gidTblLen(); i++) {
            InetAddress a = ctx.queryGid(1, i).toInetAddress();
            if (a instanceof Inet4Address) {
                return a;
            }
        }
        throw new AssertionError(ctx.name() + " has no IPv4 GID");
    }

    @ParameterizedTest
    @MethodSource("io.jhca.tests.harness.DevicePairs#all")
    void connectExchangeDisconnect(DevicePair pair) throws Exception {
        // a disconnect moves both QPs to ERR (as rdma_cm does): their posted receives flush with error CQEs
        try (Harness h = Harness.open(pair).expectErrors()) {
            CmDevices.attach(h.a());
            h.track(() -> CmDevices.detach(h.a()));
            CmDevices.attach(h.b());
            h.track(() -> CmDevices.detach(h.b()));
            int port = nextPort++;
            InetSocketAddress at = new InetSocketAddress(ipv4Of(h.a()), port);
            RdmaServerEndpoint server = h.track(RdmaServerEndpoint.listen(h.a(), at, 4));
            CompletableFuture<String> served = CompletableFuture.supplyAsync(() -> {
                try (RdmaEndpoint ep = server.accept()) {
                    ByteBuffer where = ByteBuffer.wrap(ep.receive());
                    ep.data().putStringWithoutLengthAscii(0, "written by RDMA");
                    ep.write(0, 15, where.getLong(), where.getInt());
                    ep.send("done".getBytes(US_ASCII));
                    return ep.remoteAddress().getAddress().getHostAddress();
                }
            }, ThreadPerTask.EXECUTOR);
            try (RdmaEndpoint ep = RdmaClientEndpoint.connect(h.b(), at)) {
                assertEquals(ipv4Of(h.b()), ep.localAddress().getAddress());
                ep.send(ByteBuffer.allocate(12).putLong(ep.dataAddress()).putInt(ep.dataRkey()).array());
                assertEquals("done", new String(ep.receive(), US_ASCII));
                assertEquals("written by RDMA", ep.data().getStringWithoutLengthAscii(0, 15));
            }
            assertEquals(ipv4Of(h.b()).getHostAddress(), served.get(30, TimeUnit.SECONDS));
        }
    }

    /**
     * Two clients of one device connect to one listener at once: both REQs arrive before the first REP is sent. The
     * server's QP1 once took completions while sending the REP and dropped the second REQ, which then came only
     * with the client's retry after its response timeout; no MAD may need a retry on a clean wire.
     */
    @ParameterizedTest
    @MethodSource("io.jhca.tests.harness.DevicePairs#all")
    void twoConnectsAtOnceNeedNoRetry(DevicePair pair) throws Exception {
        try (Harness h = Harness.open(pair).expectErrors()) {
            CmDevices.attach(h.a());
            h.track(() -> CmDevices.detach(h.a()));
            CmDevices.attach(h.b());
            h.track(() -> CmDevices.detach(h.b()));
            InetSocketAddress at = new InetSocketAddress(ipv4Of(h.a()), nextPort++);
            RdmaServerEndpoint server = h.track(RdmaServerEndpoint.listen(h.a(), at, 4));
            CompletableFuture<java.util.Set<String>> served = CompletableFuture.supplyAsync(() -> {
                try (RdmaEndpoint e1 = server.accept(); RdmaEndpoint e2 = server.accept()) {
                    return java.util.Set.of(new String(e1.receive(), US_ASCII), new String(e2.receive(), US_ASCII));
                }
            }, ThreadPerTask.EXECUTOR);
            CompletableFuture<RdmaEndpoint> second = CompletableFuture.supplyAsync(() -> RdmaClientEndpoint.connect(h.b(), at),
                    ThreadPerTask.EXECUTOR);
            try (RdmaEndpoint ep = RdmaClientEndpoint.connect(h.b(), at); RdmaEndpoint ep2 = second.get(30, TimeUnit.SECONDS)) {
                ep.send("one".getBytes(US_ASCII));
                ep2.send("two".getBytes(US_ASCII));
                assertEquals(java.util.Set.of("one", "two"), served.get(30, TimeUnit.SECONDS));
            }
            assertEquals(0, CmDevices.retries(h.a()) + CmDevices.retries(h.b()), "MADs sent again");
        }
    }
}
