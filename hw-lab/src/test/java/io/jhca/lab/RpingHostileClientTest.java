package io.jhca.lab;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.PrintWriter;
import java.io.StringWriter;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.nio.ByteOrder;
import java.util.ArrayDeque;
import java.util.Deque;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

import org.agrona.concurrent.UnsafeBuffer;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.RegisterExtension;

import io.jhca.cm.CmDevices;
import io.jhca.cm.CmEventChannel;
import io.jhca.cm.CmEventType;
import io.jhca.cm.CmId;
import io.jhca.cm.ConnParam;
import io.jhca.memory.DmaMemory;
import io.jhca.memory.DmaRegion;
import io.jhca.testkit.ThreadPerTask;
import io.jhca.verbs.Access;
import io.jhca.verbs.CompletionQueue;
import io.jhca.verbs.Context;
import io.jhca.verbs.MemoryRegion;
import io.jhca.verbs.ProtectionDomain;
import io.jhca.verbs.QpInitAttributes;
import io.jhca.verbs.QueuePair;
import io.jhca.verbs.RecvWr;
import io.jhca.verbs.SendFlags;
import io.jhca.verbs.SendWr;
import io.jhca.verbs.Verbs;
import io.jhca.verbs.WcOpcode;
import io.jhca.verbs.WorkCompletion;
import io.jhca.verbs.WrOpcode;

/**
 * hwlab rping's server against a client that breaks rping's protocol (struct rping_rdma_info: be64 buf, be32 rkey,
 * be32 size, 16 bytes a SEND): every bad message ends the server with an error naming it, before it touches the
 * client's memory with a length it cannot hold. The client is written here on jhca's RDMA CM, so it can send what
 * rping.c never would.
 */
@Timeout(120)
class RpingHostileClientTest {
    static final String IP0 = "127.0.75.1";
    static final String IP1 = "127.0.75.2";
    /** The server's -S (rping's default). */
    static final int SIZE = 64;

    @RegisterExtension
    static final DevicesProperty DEVICES = DevicesProperty.rxe(IP0, IP1);

    /** A length with bit 31 set is a uint32 over -S, not a negative one to let through. */
    @Test
    void advertisedLengthWithTheTopBitSetIsRefused() throws Exception {
        String err = serverAgainst(c -> c.sendInfo(c.start.address(), c.start.rkey(), 0x8000_0000));
        assertTrue(err.contains("the client advertises 2147483648 bytes, more than -S " + SIZE), err);
    }

    @Test
    void advertisedLengthOnePastTheServersBufferIsRefused() throws Exception {
        String err = serverAgainst(c -> c.sendInfo(c.start.address(), c.start.rkey(), SIZE + 1));
        assertTrue(err.contains("the client advertises " + (SIZE + 1) + " bytes, more than -S " + SIZE), err);
    }

    @Test
    void shortInfoMessageIsRefused() throws Exception {
        String err = serverAgainst(c -> c.send(8));
        assertTrue(err.contains("received 8 bytes, rping's buffer info has 16"), err);
    }

    /**
     * rping.c writes strlen + 1 bytes back: a ping of exactly -S bytes with no NUL has no such length. Refused before
     * the WRITE, where the client's buffer is written with nothing past the ping.
     */
    @Test
    void pingWithoutItsNulIsRefusedBeforeTheWriteBack() throws Exception {
        String err = serverAgainst(c -> {
            c.startBuf.setMemory(0, SIZE, (byte) 'x');
            c.sendInfo(c.start.address(), c.start.rkey(), SIZE);
            c.awaitRecv(); // the go-ahead: the server has read the ping
            c.sendInfo(c.rdma.address(), c.rdma.rkey(), SIZE);
        });
        assertTrue(err.contains("the client's ping has no NUL in its " + SIZE + " bytes"), err);
    }

    /** A full-length ping with its NUL in the last byte, the largest rping.c sends, is read and written back. */
    @Test
    void pingEndingInItsLastByteIsWrittenBackWhole() throws Exception {
        StringWriter serverErr = new StringWriter();
        int code = serve(serverErr, c -> {
            c.startBuf.setMemory(0, SIZE - 1, (byte) 'y');
            c.startBuf.putByte(SIZE - 1, (byte) 0);
            c.rdmaBuf.setMemory(0, SIZE + 8, (byte) '#');
            c.sendInfo(c.start.address(), c.start.rkey(), SIZE);
            c.awaitRecv();
            c.sendInfo(c.rdma.address(), c.rdma.rkey(), SIZE);
            c.awaitRecv(); // the WRITE landed before this SEND
            for (int i = 0; i < SIZE - 1; i++) {
                assertEquals('y', c.rdmaBuf.getByte(i), "byte " + i);
            }
            assertEquals(0, c.rdmaBuf.getByte(SIZE - 1), "the NUL");
            assertEquals('#', c.rdmaBuf.getByte(SIZE), "one past the ping: untouched");
            c.id.disconnect();
        });
        assertEquals(0, code, serverErr.toString());
    }

    interface Script {
        void run(FakeClient c) throws Exception;
    }

    /** Runs the server against {@code script}; returns the server's stderr, after checking it failed. */
    private String serverAgainst(Script script) throws Exception {
        StringWriter serverErr = new StringWriter();
        int code = serve(serverErr, script);
        assertEquals(1, code, "the server should fail: " + serverErr);
        return serverErr.toString();
    }

    private int serve(StringWriter serverErr, Script script) throws Exception {
        String port = Integer.toString(ToolsEndToEnd.freePort());
        StringWriter serverOut = new StringWriter();
        CompletableFuture<Integer> server = CompletableFuture.supplyAsync(() -> HwLab.execute(
                new String[] {"rping", "-s", "-a", IP0, "-p", port, "-S", Integer.toString(SIZE), "-d",
                        "--stall-timeout", "20"},
                new PrintWriter(serverOut, true), new PrintWriter(serverErr, true)), ThreadPerTask.EXECUTOR);
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
        while (!serverOut.toString().contains("listening on " + IP0 + ":" + port) && !server.isDone()
                && System.nanoTime() < deadline) {
            Thread.sleep(10);
        }
        assertTrue(serverOut.toString().contains("listening on"), "server: " + serverOut + serverErr);
        try (FakeClient c = new FakeClient(Integer.parseInt(port))) {
            script.run(c);
            return server.get(60, TimeUnit.SECONDS);
        }
    }

    /** An rping client's resources on rxe1, connected to the server, with raw access to its SENDs. */
    static final class FakeClient implements AutoCloseable {
        final Deque<AutoCloseable> opened = new ArrayDeque<>();
        final Context ctx;
        final CmEventChannel ch;
        final CmId id;
        final QueuePair qp;
        final CompletionQueue cq;
        final MemoryRegion info;
        final MemoryRegion recv;
        final MemoryRegion start;
        final MemoryRegion rdma;
        final UnsafeBuffer infoBuf;
        final UnsafeBuffer startBuf;
        final UnsafeBuffer rdmaBuf;
        final WorkCompletion wc = new WorkCompletion();
        final int[] done = new int[WcOpcode.values().length];

        FakeClient(int port) throws Exception {
            ctx = Verbs.open("rxe1");
            CmDevices.attach(ctx);
            ch = CmEventChannel.create();
            id = ch.createId();
            id.resolveAddr(InetAddress.getByName(IP1), new InetSocketAddress(InetAddress.getByName(IP0), port), 2000);
            ch.expect(CmEventType.ADDR_RESOLVED, 10_000);
            id.resolveRoute(2000);
            ch.expect(CmEventType.ROUTE_RESOLVED, 10_000);
            ProtectionDomain pd = keep(ctx.allocatePd());
            cq = keep(ctx.createCq(16));
            qp = keep(id.createQp(pd, QpInitAttributes.rc(cq, cq).maxSendWr(16).maxRecvWr(4)));
            // the rdma buffer has 8 bytes past what it registers, to see that nothing beyond the ping is written
            DmaRegion mem = keep(DmaMemory.allocate(32 + 2L * SIZE + 8));
            int remote = Access.mask(Access.LOCAL_WRITE, Access.REMOTE_READ, Access.REMOTE_WRITE);
            info = keep(pd.register(mem, 0, 16, Access.mask(Access.LOCAL_WRITE)));
            recv = keep(pd.register(mem, 16, 16, Access.mask(Access.LOCAL_WRITE)));
            start = keep(pd.register(mem, 32, SIZE, remote));
            rdma = keep(pd.register(mem, 32 + SIZE, SIZE, remote));
            infoBuf = mem.buffer(0, 16);
            startBuf = mem.buffer(32, SIZE);
            rdmaBuf = mem.buffer(32 + SIZE, SIZE + 8);
            qp.postRecv(new RecvWr().wrId(1).sge(recv, 0, 16));
            id.connect(ConnParam.defaults());
            ch.expect(CmEventType.ESTABLISHED, 10_000);
        }

        private <T extends AutoCloseable> T keep(T r) {
            opened.push(r);
            return r;
        }

        void sendInfo(long addr, int rkey, int len) {
            infoBuf.putLong(0, addr, ByteOrder.BIG_ENDIAN);
            infoBuf.putInt(8, rkey, ByteOrder.BIG_ENDIAN);
            infoBuf.putInt(12, len, ByteOrder.BIG_ENDIAN);
            send(16);
        }

        /** SENDs the first {@code bytes} of the info buffer and waits for its completion. */
        void send(int bytes) {
            qp.postSend(new SendWr().wrId(2).opcode(WrOpcode.SEND).sendFlags(SendFlags.SIGNALED).sge(info, 0, bytes));
            await(WcOpcode.SEND);
        }

        /** Waits for the server's next SEND and posts the receive again. */
        void awaitRecv() {
            await(WcOpcode.RECV);
            qp.postRecv(new RecvWr().wrId(1).sge(recv, 0, 16));
        }

        /**
         * Waits for a completion of kind {@code op}; one of another kind that comes first is kept for its own wait
         * (the server's answer to a SEND may complete our receive before the ACK completes the SEND).
         */
        private void await(WcOpcode op) {
            long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(20);
            while (done[op.ordinal()] == 0) {
                if (System.nanoTime() > deadline) {
                    throw new AssertionError("client: no " + op + " within 20 s");
                }
                ctx.progress();
                if (cq.poll(wc) > 0) {
                    assertTrue(wc.isSuccess(), "client: " + wc.opcode() + " " + wc.status());
                    done[wc.opcode().ordinal()]++;
                } else {
                    Thread.onSpinWait();
                }
            }
            done[op.ordinal()]--;
        }

        @Override
        public void close() throws Exception {
            try {
                while (!opened.isEmpty()) {
                    opened.pop().close();
                }
                id.close();
                ch.close();
            } finally {
                CmDevices.detach(ctx);
                ctx.close();
            }
        }
    }
}
