package io.jhca.rxe.replay;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.fail;

import java.net.InetSocketAddress;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Map;

import org.junit.jupiter.api.Assumptions;

import io.jhca.memory.DmaMemory;
import io.jhca.memory.DmaOptions;
import io.jhca.memory.DmaRegion;
import io.jhca.rxe.ProgressMode;
import io.jhca.rxe.RxeContext;
import io.jhca.rxe.RxeDeviceConfig;
import io.jhca.rxe.RxeKeys;
import io.jhca.rxe.RxeProvider;
import io.jhca.rxe.transport.RxeCounters.Counter;
import io.jhca.rxe.wire.Ipv4IdMode;
import io.jhca.verbs.Access;
import io.jhca.verbs.AhAttributes;
import io.jhca.verbs.CompletionQueue;
import io.jhca.verbs.Gid;
import io.jhca.verbs.MemoryRegion;
import io.jhca.verbs.Mtu;
import io.jhca.verbs.ProtectionDomain;
import io.jhca.verbs.QpAttributes;
import io.jhca.verbs.QpInitAttributes;
import io.jhca.verbs.QpType;
import io.jhca.verbs.QueuePair;
import io.jhca.verbs.RecvWr;
import io.jhca.verbs.SendFlags;
import io.jhca.verbs.SendWr;
import io.jhca.verbs.WcStatus;
import io.jhca.verbs.WorkCompletion;
import io.jhca.verbs.WrOpcode;

/**
 * Replays a {@link Capture} into a jhca rxe device in the responder's place: the device has the responder's
 * address (through a {@link ScriptedLink}, so no socket and no privilege is needed), a QP with the announced QPN
 * and PSNs, and for perftest runs its buffer at the announced VA under the announced rkey. The requester's packets
 * go in in capture order, each only once the device has sent what the responder had sent before it in the capture;
 * the responder's own requests (rc_pingpong's SENDs, write_lat's WRITEs) are posted where the capture shows them
 * start. Afterwards {@link #check()} compares what the device sent with what the capture says the responder sent,
 * byte for byte (responses and requests each in order), and the memory with what the requests wrote.
 */
final class Replay implements AutoCloseable {

    private static final int ALL_ACCESS = Access.mask(Access.LOCAL_WRITE, Access.REMOTE_WRITE, Access.REMOTE_READ,
            Access.REMOTE_ATOMIC);
    /** rc_pingpong's and perftest's default on a 1500-byte netdev (both fixtures show 1024-byte packets). */
    private static final Mtu MTU = Mtu.MTU_1024;
    private static final int SLOT = 8192;
    private static final int SLOTS = 8;
    private static final long PAGE = 4096;
    private static final long DRIVE_MILLIS = 10_000;

    final Capture cap;
    private final ScriptedLink[] linkHolder = new ScriptedLink[1];
    final RxeContext ctx;
    private final ProtectionDomain pd;
    private final CompletionQueue cq;
    final QueuePair qp;
    /** The responder's buffer: at the announced VA for perftest, anywhere for rc_pingpong. */
    private DmaRegion target;
    private MemoryRegion targetMr;
    private final DmaRegion local;
    private final MemoryRegion localMr;
    /** Receive buffers, one slot per posted receive WQE. */
    private final DmaRegion recvMem;
    private final MemoryRegion recvMr;
    /** What the responder's buffer must hold: the captured reads and atomics' original values, then every write. */
    private byte[] model;
    private final List<byte[]> expected = new ArrayList<>();
    private final List<ClassicPcap.IpPacket> expectedFrames = new ArrayList<>();
    final List<byte[]> receivedMessages = new ArrayList<>();
    private final List<byte[]> sentMessages = new ArrayList<>();
    private final List<WorkCompletion> completions = new ArrayList<>();
    private int requesterPackets;
    private int requesterPacketsWithId;

    Replay(final Capture cap, final Ipv4IdMode icrc) {
        this.cap = cap;
        final RxeDeviceConfig config = RxeDeviceConfig.builder("rxe0").address(cap.responder)
                .progressMode(ProgressMode.CALLER).icrcMode(icrc).link(bind -> {
                    linkHolder[0] = new ScriptedLink(bind);
                    return linkHolder[0];
                }).build();
        ctx = RxeProvider.open(config);
        pd = ctx.allocatePd();
        cq = ctx.createCq(256);
        try {
            prepareTarget();
        } catch (final FixedAddressMemory.AddressTaken e) {
            cq.close();
            pd.close();
            ctx.close();
            // ASLR put something of this JVM where the captured process had its buffer: nothing to replay into
            System.out.println(cap.name + ": skipped, " + e.getMessage());
            Assumptions.assumeTrue(false, e.getMessage());
        }
        local = DmaMemory.allocate(DmaOptions.of((long) SLOT * SLOTS).lock(false));
        localMr = pd.register(local, 0, local.length(), Access.mask(Access.LOCAL_WRITE));
        recvMem = DmaMemory.allocate(DmaOptions.of((long) SLOT * SLOTS).lock(false));
        recvMr = pd.register(recvMem, 0, recvMem.length(), Access.mask(Access.LOCAL_WRITE));
        qp = pd.createQp(QpInitAttributes.of(QpType.RC, cq, cq).maxSendWr(SLOTS).maxRecvWr(SLOTS).maxSendSge(1)
                .maxRecvSge(1));
        try {
            connect();
        } catch (final RuntimeException | Error e) {
            closeResources(); // the fixed VA above all: the next replay of this fixture maps it again
            throw e;
        }
    }

    private void connect() {
        // the QPN is in every BTH the requester sent and under their ICRC: it cannot be rewritten
        assertEquals(cap.responderDest.qpn, qp.qpn(), "the replay QP must get the captured responder's QPN");
        qp.modify(QpAttributes.toInit(1, Access.REMOTE_WRITE, Access.REMOTE_READ, Access.REMOTE_ATOMIC));
        qp.modify(QpAttributes.toRtr(cap.requesterDest.qpn, cap.requesterDest.psn,
                AhAttributes.to(Gid.of(cap.requesterDest.gid)).sgidIndex(1), MTU).maxDestRdAtomic(16).minRnrTimer(12));
        qp.modify(QpAttributes.toRts(cap.responderDest.psn).maxRdAtomic(16).timeout(14).retryCnt(7).rnrRetry(7));
        for (int i = 0; i < SLOTS; i++) {
            qp.postRecv(new RecvWr().wrId(1000 + i).sge(recvMr, (long) i * SLOT, SLOT));
        }
    }

    private ScriptedLink link() {
        return linkHolder[0];
    }

    /** Maps and registers the responder's buffer and fills it (and the model) with what the capture shows it held. */
    private void prepareTarget() {
        final Capture.Dest me = cap.responderDest;
        long end = me.va + PAGE;
        boolean remote = false;
        for (final ClassicPcap.IpPacket p : cap.roce) {
            final int op = Roce.opcode(p.payload);
            if (cap.fromRequester(p) && (op == Roce.WRITE_FIRST || op == Roce.WRITE_ONLY || op == Roce.READ_REQUEST
                    || op == Roce.FETCH_ADD || op == Roce.COMPARE_SWAP)) {
                final long len = op == Roce.FETCH_ADD || op == Roce.COMPARE_SWAP ? 8 : Roce.dmaLength(p.payload);
                end = Math.max(end, Roce.va(p.payload) + len);
                remote = true;
            }
        }
        if (!remote) { // SENDs only (rc_pingpong announces no buffer at all): the VA does not matter
            target = DmaMemory.allocate(DmaOptions.of(PAGE).lock(false));
            targetMr = pd.register(target, 0, target.length(), ALL_ACCESS);
            model = new byte[(int) target.length()];
            return;
        }
        final long length = (end - me.va + PAGE - 1) / PAGE * PAGE;
        target = new FixedAddressMemory(me.va, length);
        targetMr = RxeKeys.register(pd, target, 0, length, ALL_ACCESS, me.rkey);
        model = new byte[(int) length];
        // READ responses and atomic ACKs show what the buffer held before the run: put it there
        final boolean[] known = new boolean[model.length];
        for (int i = 0; i < cap.roce.size(); i++) {
            final byte[] req = cap.roce.get(i).payload;
            if (!cap.fromRequester(cap.roce.get(i))) {
                continue;
            }
            final int op = Roce.opcode(req);
            if (op == Roce.READ_REQUEST) {
                final byte[] data = readResponseData(i, Roce.psn(req), Roce.dmaLength(req));
                fill(known, (int) (Roce.va(req) - me.va), data);
            } else if (op == Roce.FETCH_ADD || op == Roce.COMPARE_SWAP) {
                final byte[] ack = responseTo(i, Roce.psn(req), Roce.ATOMIC_ACKNOWLEDGE);
                final byte[] orig = ByteBuffer.allocate(8).order(ByteOrder.nativeOrder())
                        .putLong(Roce.originalValue(ack)).array();
                fill(known, (int) (Roce.va(req) - me.va), orig);
            }
        }
        // bytes no response reveals get a pattern, so that a READ from the wrong place cannot pass for zeros
        for (int k = 0; k < model.length; k++) {
            if (!known[k]) {
                model[k] = (byte) (0x5A + 7 * k);
            }
        }
        target.buffer().putBytes(0, model);
    }

    private void fill(final boolean[] known, final int at, final byte[] data) {
        for (int k = 0; k < data.length; k++) {
            if (!known[at + k]) {
                model[at + k] = data[k];
                known[at + k] = true;
            }
        }
    }

    private byte[] readResponseData(final int from, final int psn, final int length) {
        final ByteBuffer out = ByteBuffer.allocate(length);
        int next = psn;
        for (int j = from + 1; j < cap.roce.size() && out.hasRemaining(); j++) {
            final byte[] p = cap.roce.get(j).payload;
            final int op = Roce.opcode(p);
            if (!cap.fromRequester(cap.roce.get(j)) && op >= Roce.READ_RESPONSE_FIRST && op <= Roce.READ_RESPONSE_ONLY
                    && Roce.psn(p) == next) {
                out.put(Roce.payload(p));
                next = (next + 1) & 0xFFFFFF;
            }
        }
        if (out.hasRemaining()) {
            fail(cap.name + ": the capture lacks the READ response to psn 0x" + Integer.toHexString(psn));
        }
        return out.array();
    }

    private byte[] responseTo(final int from, final int psn, final int opcode) {
        for (int j = from + 1; j < cap.roce.size(); j++) {
            final byte[] p = cap.roce.get(j).payload;
            if (!cap.fromRequester(cap.roce.get(j)) && Roce.opcode(p) == opcode && Roce.psn(p) == psn) {
                return p;
            }
        }
        return fail(cap.name + ": no response with opcode 0x" + Integer.toHexString(opcode) + " to psn 0x"
                + Integer.toHexString(psn));
    }

    /** Feeds the capture through; see the class comment. */
    void run() {
        int responderBefore = 0;
        int msg = 0;
        for (int i = 0; i < cap.roce.size(); i++) {
            final ClassicPcap.IpPacket p = cap.roce.get(i);
            if (cap.fromRequester(p)) {
                driveUntil(responderBefore, "before frame " + p.frame);
                requesterPackets++;
                if (p.ipId != 0) {
                    requesterPacketsWithId++;
                }
                link().offer(p.payload, new InetSocketAddress(p.src, p.srcPort));
                ctx.progress();
                applyToModel(p.payload);
            } else {
                final int op = Roce.opcode(p.payload);
                if (op == Roce.SEND_FIRST || op == Roce.SEND_ONLY || op == Roce.WRITE_FIRST || op == Roce.WRITE_ONLY) {
                    postLikeTheCapture(i, msg++);
                }
                expected.add(p.payload);
                expectedFrames.add(p);
                responderBefore++;
            }
        }
        driveUntil(expected.size(), "at the end");
        for (int k = 0; k < 1000; k++) { // anything more would be a packet the responder never sent
            ctx.progress();
            drainCq();
        }
    }

    /** Only the requester's packets, without waiting for answers; returns how many went in. */
    int deliverRequesterPackets() {
        int n = 0;
        for (final ClassicPcap.IpPacket p : cap.roce) {
            if (cap.fromRequester(p)) {
                link().offer(p.payload, new InetSocketAddress(p.src, p.srcPort));
                n++;
            }
        }
        for (int k = 0; k < 1000; k++) {
            ctx.progress();
            drainCq();
        }
        return n;
    }

    /** One datagram from anywhere, then a few engine cycles. */
    void offer(final byte[] datagram, final InetSocketAddress from) {
        link().offer(datagram, from);
        for (int k = 0; k < 100; k++) {
            ctx.progress();
        }
    }

    int sentCount() {
        return link().sentCount();
    }

    /** The responder's own request starting at capture index {@code i}: its bytes into a slot, posted. */
    private void postLikeTheCapture(final int i, final int msg) {
        final byte[] first = cap.roce.get(i).payload;
        final int op = Roce.opcode(first);
        final ByteBuffer data = ByteBuffer.allocate(SLOT);
        int psn = Roce.psn(first);
        for (int j = i; j < cap.roce.size(); j++) {
            final byte[] p = cap.roce.get(j).payload;
            if (cap.fromRequester(cap.roce.get(j)) || Roce.psn(p) != psn) {
                continue;
            }
            data.put(Roce.payload(p));
            psn = (psn + 1) & 0xFFFFFF;
            final int o = Roce.opcode(p);
            if (o == Roce.SEND_ONLY || o == Roce.SEND_LAST || o == Roce.WRITE_ONLY || o == Roce.WRITE_LAST) {
                break;
            }
        }
        final int length = data.position();
        final long offset = (long) (msg % SLOTS) * SLOT;
        local.buffer().putBytes((int) offset, data.array(), 0, length);
        sentMessages.add(Arrays.copyOf(data.array(), length));
        final SendWr wr = new SendWr().wrId(msg).sendFlags(SendFlags.SIGNALED).sge(localMr, offset, length);
        if (op == Roce.SEND_FIRST || op == Roce.SEND_ONLY) {
            wr.opcode(WrOpcode.SEND);
        } else {
            wr.opcode(WrOpcode.RDMA_WRITE).rdma(Roce.va(first), Roce.rkey(first));
        }
        qp.postSend(wr);
    }

    private void applyToModel(final byte[] p) {
        final int op = Roce.opcode(p);
        final long base = cap.responderDest.va;
        if (op == Roce.WRITE_FIRST || op == Roce.WRITE_ONLY) {
            writeCursor = Roce.va(p) - base;
        }
        if (op == Roce.WRITE_FIRST || op == Roce.WRITE_ONLY || op == Roce.WRITE_MIDDLE || op == Roce.WRITE_LAST) {
            final byte[] data = Roce.payload(p);
            System.arraycopy(data, 0, model, (int) writeCursor, data.length);
            writeCursor += data.length;
        } else if (op == Roce.FETCH_ADD || op == Roce.COMPARE_SWAP) {
            final ByteBuffer m = ByteBuffer.wrap(model).order(ByteOrder.nativeOrder());
            final int at = (int) (Roce.va(p) - base);
            final long old = m.getLong(at);
            final long compare = ByteBuffer.wrap(p).getLong(Roce.BTH + 20);
            if (op == Roce.FETCH_ADD) {
                m.putLong(at, old + Roce.swapAdd(p));
            } else if (old == compare) {
                m.putLong(at, Roce.swapAdd(p));
            }
        }
    }

    private long writeCursor;

    private void driveUntil(final int sent, final String where) {
        final long end = System.nanoTime() + DRIVE_MILLIS * 1_000_000L;
        while (link().sentCount() < sent) {
            if (System.nanoTime() > end) {
                fail(cap.name + ": " + where + " the responder had sent " + sent + " packets in the capture, jhca only "
                        + link().sentCount() + "; counters " + ctx.counters());
            }
            ctx.progress();
            drainCq();
        }
        drainCq();
    }

    private void drainCq() {
        for (WorkCompletion wc = new WorkCompletion(); cq.poll(wc) == 1; wc = new WorkCompletion()) {
            final WorkCompletion c = wc;
            assertEquals(WcStatus.SUCCESS, c.status(), () -> cap.name + ": completion " + c);
            if (wc.wrId() >= 1000) {
                final int slot = (int) (wc.wrId() - 1000);
                final byte[] b = new byte[wc.byteLen()];
                recvMem.buffer().getBytes(slot * SLOT, b);
                receivedMessages.add(b);
                qp.postRecv(new RecvWr().wrId(wc.wrId()).sge(recvMr, (long) slot * SLOT, SLOT));
            }
            completions.add(wc);
        }
    }

    /**
     * The device sent what the responder sent, byte for byte (ICRC included), to the requester's port 4791: its
     * responses (ACKs, READ responses, atomic ACKs) in the capture's order, and its own requests in the capture's
     * order. How the two streams interleave is not compared: jhca holds an ACK until its own next request has left
     * (coalesced acknowledges), where Linux rxe sent the ACK first.
     */
    void checkResponses() {
        final ScriptedLink link = link();
        for (final boolean responses : new boolean[] {true, false}) {
            final List<Integer> want = new ArrayList<>();
            for (int i = 0; i < expected.size(); i++) {
                if (isResponse(expected.get(i)) == responses) {
                    want.add(i);
                }
            }
            final List<Integer> got = new ArrayList<>();
            for (int i = 0; i < link.sentCount(); i++) {
                if (isResponse(link.sent(i).bytes) == responses) {
                    got.add(i);
                }
            }
            for (int k = 0; k < Math.min(want.size(), got.size()); k++) {
                final int w = want.get(k);
                final int g = got.get(k);
                assertArrayEquals(expected.get(w), link.sent(g).bytes, () -> cap.name + ": packet " + w + " (capture frame "
                        + expectedFrames.get(w).frame + "): want " + Roce.describe(expected.get(w)) + ", jhca sent "
                        + Roce.describe(link.sent(g).bytes));
                final ClassicPcap.IpPacket f = expectedFrames.get(w);
                assertEquals(new InetSocketAddress(f.dst, f.dstPort), link.sent(g).peer, "destination of packet " + g);
            }
            assertEquals(want.size(), got.size(), () -> cap.name + ": " + (responses ? "responses" : "requests")
                    + " sent by the responder");
        }
        assertEquals(expected.size(), link.sentCount(), () -> cap.name + ": packets sent by the responder");
        // the requester's ACKs completed every request the responder posted, in order
        final List<Long> done = new ArrayList<>();
        for (final WorkCompletion wc : completions) {
            if (wc.wrId() < 1000) {
                done.add(wc.wrId());
            }
        }
        final List<Long> posted = new ArrayList<>();
        for (long k = 0; k < sentMessages.size(); k++) {
            posted.add(k);
        }
        assertEquals(posted, done, () -> cap.name + ": send completions");
    }

    /** ACK, atomic ACK or READ response (IBTA opcodes 0x0D..0x12 of RC). */
    private static boolean isResponse(final byte[] p) {
        final int op = Roce.opcode(p);
        return op >= Roce.READ_RESPONSE_FIRST && op <= Roce.ATOMIC_ACKNOWLEDGE;
    }

        /** Every packet of the requester passed the ICRC check, with the IPv4 ID recovered where it was not 0. */
    void checkCounters() {
        final Map<String, Long> c = ctx.counters().snapshot();
        assertEquals(requesterPacketsWithId, ctx.counters().get(Counter.ICRC_RECOVERED_ID), () -> "counters " + c);
        assertEquals(requesterPackets - requesterPacketsWithId, ctx.counters().get(Counter.ICRC_CHECKED_FULL),
                () -> "counters " + c);
        for (final Map.Entry<String, Long> e : c.entrySet()) {
            final String k = e.getKey();
            if (k.startsWith("drop_") || k.startsWith("sent_nak") || k.startsWith("rcvd_nak") || k.endsWith("_err")
                    || k.equals("duplicate_request") || k.equals("out_of_sequence") || k.equals("retransmitted_pkts") || k.equals("tx_refused")
                    || k.equals("engine_errors")) {
                assertEquals(0L, e.getValue(), () -> cap.name + ": " + e.getKey() + " in " + c);
            }
        }
    }

    /** The responder's buffer holds what the requests wrote (perftest: at the announced VA). */
    void checkMemory() {
        final byte[] now = new byte[model.length];
        target.buffer().getBytes(0, now);
        assertArrayEquals(model, now, cap.name + ": the responder's buffer");
    }

    List<byte[]> sentMessages() {
        return sentMessages;
    }

    List<WorkCompletion> completions() {
        return completions;
    }

    byte[] model() {
        return model;
    }

    @Override
    public void close() {
        closeResources();
        assertEquals(null, ctx.engine().lastError(), "the engine caught an exception");
    }

    private void closeResources() {
        qp.close();
        targetMr.close();
        localMr.close();
        recvMr.close();
        target.close();
        local.close();
        recvMem.close();
        cq.close();
        pd.close();
        ctx.close();
    }
}
