package io.jhca.tests.vfio.guest;

import static io.jhca.tests.vfio.guest.TrafficPlan.*;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.Properties;

import org.agrona.concurrent.UnsafeBuffer;

import io.jhca.memory.DmaRegion;
import io.jhca.verbs.AhAttributes;
import io.jhca.verbs.CompletionChannel;
import io.jhca.verbs.CompletionQueue;
import io.jhca.verbs.Context;
import io.jhca.verbs.Gid;
import io.jhca.verbs.MemoryRegion;
import io.jhca.verbs.Mtu;
import io.jhca.verbs.ProtectionDomain;
import io.jhca.verbs.QpAttributes;
import io.jhca.verbs.QpInitAttributes;
import io.jhca.verbs.QueuePair;
import io.jhca.verbs.RecvWr;
import io.jhca.verbs.SendFlags;
import io.jhca.verbs.SendWr;
import io.jhca.verbs.WcOpcode;
import io.jhca.verbs.WcStatus;
import io.jhca.verbs.WorkCompletion;
import io.jhca.verbs.WrOpcode;

/**
 * One end of the RC connection between the guest's mlx5 device and the host's rxe device: PD, a registered 64 KiB
 * buffer, CQ and QP; the connection from what the other end published; every RC opcode as requester, and the
 * responder's preparation and checks, after {@link TrafficPlan}. Results are lines "NAME ok" or "NAME FAIL: why",
 * so a failure in the guest reaches the host test as text.
 */
public final class RcSide implements AutoCloseable {

    private static final long COMPLETION_MILLIS = 60_000;

    private final Context ctx;
    private final ProtectionDomain pd;
    private final QueuePair qp;
    private final CompletionChannel channel;
    private final CompletionQueue cq;
    private final MemoryRegion mr;
    private final UnsafeBuffer buf;
    private final int gidIndex;
    private final int psn;
    private final List<String> results = new ArrayList<>();

    public RcSide(Context ctx, DmaRegion mem, int psn) {
        this.ctx = ctx;
        this.pd = ctx.allocatePd();
        this.mr = pd.register(mem, 0, mem.length(), ALL);
        this.channel = ctx.createCompletionChannel();
        this.cq = ctx.createCq(64, channel);
        this.qp = pd.createQp(QpInitAttributes.rc(cq, cq).maxSendWr(16).maxRecvWr(16));
        this.buf = mem.buffer();
        this.gidIndex = roceIndex(ctx);
        this.psn = psn;
    }

    private static int roceIndex(Context ctx) {
        for (int i = 0; i < ctx.queryPort(1).gidTblLen(); i++) {
            if (ctx.queryGid(1, i).isIpv4Mapped()) {
                return i;
            }
        }
        throw new IllegalStateException(ctx.name() + " has no IPv4 GID");
    }

    /** What the other end needs to connect and to reach this end's buffer. */
    public Map<String, Object> describe() {
        return Map.of("qpn", qp.qpn(), "psn", psn, "rkey", mr.rkey(), "va", mr.address(),
                "gid", ctx.queryGid(1, gidIndex).toString());
    }

    /** INIT, RTR to the described peer, RTS. */
    public void connect(Properties peer) {
        qp.modify(QpAttributes.toInit(1).accessFlags(ALL));
        qp.modify(QpAttributes.toRtr(Integer.parseInt(peer.getProperty("qpn")), Integer.parseInt(peer.getProperty("psn")),
                AhAttributes.to(Gid.parse(peer.getProperty("gid"))).sgidIndex(gidIndex).hopLimit(64), Mtu.MTU_1024)
                .maxDestRdAtomic(4));
        qp.modify(QpAttributes.toRts(psn).maxRdAtomic(4));
    }

    public List<String> results() {
        return results;
    }

    public boolean allOk() {
        return results.stream().allMatch(r -> r.endsWith(" ok"));
    }

    private void check(String name, boolean ok, String why) {
        results.add(ok ? name + " ok" : name + " FAIL: " + why);
    }

    private WorkCompletion await() {
        WorkCompletion wc = new WorkCompletion();
        long deadline = System.nanoTime() + COMPLETION_MILLIS * 1_000_000L;
        while (cq.poll(wc) == 0) {
            ctx.progress();
            if (System.nanoTime() > deadline) {
                throw new IllegalStateException("no completion on " + ctx.name() + " within " + COMPLETION_MILLIS + " ms");
            }
            Thread.onSpinWait();
        }
        return wc;
    }

    private byte[] bytes(int offset, int len) {
        byte[] out = new byte[len];
        buf.getBytes(offset, out);
        return out;
    }

    private static String diff(byte[] want, byte[] got) {
        for (int i = 0; i < want.length; i++) {
            if (want[i] != got[i]) {
                return "first difference at byte " + i + ": want " + (want[i] & 0xff) + " got " + (got[i] & 0xff);
            }
        }
        return "equal";
    }

    /** As responder for traffic from {@code from}: receives posted, READ source and atomic targets filled. */
    public void prepareResponder(TrafficPlan plan, String from) {
        buf.setMemory(RECV_SEND, READ_SOURCE - RECV_SEND, (byte) 0);
        buf.putBytes(READ_SOURCE, plan.payload(from, WrOpcode.RDMA_READ));
        buf.putLong(CAS_TARGET, plan.atomicOld(from, WrOpcode.ATOMIC_CMP_AND_SWP));
        buf.putLong(FAA_TARGET, plan.atomicOld(from, WrOpcode.ATOMIC_FETCH_AND_ADD));
        qp.postRecv(new RecvWr().wrId(1).sge(mr, RECV_SEND, LENGTH));
        qp.postRecv(new RecvWr().wrId(2).sge(mr, RECV_SEND_IMM, LENGTH));
        qp.postRecv(new RecvWr().wrId(3)); // consumed by RDMA_WRITE_WITH_IMM
    }

    /** Every RC opcode in {@code order} to the described peer, checking what comes back here. */
    public void runRequester(TrafficPlan plan, String from, Properties peer) {
        long va = Long.parseLong(peer.getProperty("va"));
        int rkey = Integer.parseInt(peer.getProperty("rkey"));
        for (WrOpcode op : order()) {
            SendWr wr = new SendWr().wrId(100 + op.ordinal()).sendFlags(SendFlags.SIGNALED).opcode(op);
            switch (op) {
                case SEND, SEND_WITH_IMM, RDMA_WRITE, RDMA_WRITE_WITH_IMM -> {
                    buf.putBytes(SOURCE, plan.payload(from, op));
                    wr.sge(mr, SOURCE, LENGTH);
                    if (op == WrOpcode.SEND_WITH_IMM || op == WrOpcode.RDMA_WRITE_WITH_IMM) {
                        wr.immData(plan.imm(from, op));
                    }
                    if (op == WrOpcode.RDMA_WRITE) {
                        wr.rdma(va + WRITE, rkey);
                    } else if (op == WrOpcode.RDMA_WRITE_WITH_IMM) {
                        wr.rdma(va + WRITE_IMM, rkey);
                    }
                }
                case RDMA_READ -> {
                    buf.setMemory(READ_DEST, LENGTH, (byte) 0);
                    wr.sge(mr, READ_DEST, LENGTH).rdma(va + READ_SOURCE, rkey);
                }
                case ATOMIC_CMP_AND_SWP -> wr.sge(mr, CAS_RESULT, 8).atomic(va + CAS_TARGET, rkey,
                        plan.atomicOld(from, op), plan.atomicOperand(from, op));
                case ATOMIC_FETCH_AND_ADD -> wr.sge(mr, FAA_RESULT, 8).atomic(va + FAA_TARGET, rkey,
                        plan.atomicOperand(from, op), 0);
                default -> throw new IllegalStateException("opcode " + op + " not covered");
            }
            qp.postSend(wr);
            WorkCompletion wc = await();
            String name = "requester " + from + " " + op;
            if (wc.status() != WcStatus.SUCCESS || wc.wrId() != 100 + op.ordinal()) {
                check(name, false, wc.toString());
                continue;
            }
            switch (op) {
                case RDMA_READ -> {
                    byte[] want = plan.payload(from, WrOpcode.RDMA_READ); // the responder filled it so
                    byte[] got = bytes(READ_DEST, LENGTH);
                    check(name, Arrays.equals(want, got), diff(want, got));
                }
                case ATOMIC_CMP_AND_SWP -> check(name, buf.getLong(CAS_RESULT) == plan.atomicOld(from, op),
                        "returned " + buf.getLong(CAS_RESULT) + ", want " + plan.atomicOld(from, op));
                case ATOMIC_FETCH_AND_ADD -> check(name, buf.getLong(FAA_RESULT) == plan.atomicOld(from, op),
                        "returned " + buf.getLong(FAA_RESULT) + ", want " + plan.atomicOld(from, op));
                default -> check(name, wc.opcode() == op.completionOpcode(), wc.toString());
            }
        }
    }

    /** After the peer ran {@link #runRequester}: the three receive completions and every byte and word it changed. */
    public void checkResponder(TrafficPlan plan, String from) {
        String p = "responder " + from + " ";
        WorkCompletion send = await();
        check(p + "SEND", send.status() == WcStatus.SUCCESS && send.wrId() == 1 && send.opcode() == WcOpcode.RECV
                && send.byteLen() == LENGTH, send.toString());
        byte[] want = plan.payload(from, WrOpcode.SEND);
        byte[] got = bytes(RECV_SEND, LENGTH);
        check(p + "SEND bytes", Arrays.equals(want, got), diff(want, got));

        WorkCompletion sendImm = await();
        check(p + "SEND_WITH_IMM", sendImm.status() == WcStatus.SUCCESS && sendImm.wrId() == 2
                && sendImm.byteLen() == LENGTH && sendImm.immData() == plan.imm(from, WrOpcode.SEND_WITH_IMM),
                sendImm.toString());
        want = plan.payload(from, WrOpcode.SEND_WITH_IMM);
        got = bytes(RECV_SEND_IMM, LENGTH);
        check(p + "SEND_WITH_IMM bytes", Arrays.equals(want, got), diff(want, got));

        want = plan.payload(from, WrOpcode.RDMA_WRITE);
        got = bytes(WRITE, LENGTH);
        check(p + "RDMA_WRITE bytes", Arrays.equals(want, got), diff(want, got));

        WorkCompletion writeImm = await();
        check(p + "RDMA_WRITE_WITH_IMM", writeImm.status() == WcStatus.SUCCESS && writeImm.wrId() == 3
                && writeImm.opcode() == WcOpcode.RECV_RDMA_WITH_IMM
                && writeImm.immData() == plan.imm(from, WrOpcode.RDMA_WRITE_WITH_IMM), writeImm.toString());
        want = plan.payload(from, WrOpcode.RDMA_WRITE_WITH_IMM);
        got = bytes(WRITE_IMM, LENGTH);
        check(p + "RDMA_WRITE_WITH_IMM bytes", Arrays.equals(want, got), diff(want, got));

        long cas = buf.getLong(CAS_TARGET);
        check(p + "ATOMIC_CMP_AND_SWP value", cas == plan.atomicNew(from, WrOpcode.ATOMIC_CMP_AND_SWP),
                "target holds " + cas);
        long faa = buf.getLong(FAA_TARGET);
        check(p + "ATOMIC_FETCH_AND_ADD value", faa == plan.atomicNew(from, WrOpcode.ATOMIC_FETCH_AND_ADD),
                "target holds " + faa);
    }

    /** QP, CQ, MR and PD, in that order (the buffer is the caller's). */
    @Override
    public void close() {
        qp.close();
        cq.close();
        channel.close();
        mr.close();
        pd.close();
    }

    /**
     * Arms the CQ, posts one signaled RDMA READ of the peer's read source and waits on the completion channel:
     * the event must name this CQ, and the completion must follow it. The peer does nothing for it.
     */
    public void armedRead(String from, Properties peer) throws InterruptedException {
        long va = Long.parseLong(peer.getProperty("va"));
        int rkey = Integer.parseInt(peer.getProperty("rkey"));
        String name = "cq-event " + from;
        cq.requestNotify(false);
        qp.postSend(new SendWr().wrId(900).sendFlags(SendFlags.SIGNALED).opcode(WrOpcode.RDMA_READ)
                .sge(mr, READ_DEST, LENGTH).rdma(va + READ_SOURCE, rkey));
        long deadline = System.nanoTime() + COMPLETION_MILLIS * 1_000_000L;
        CompletionQueue got = null;
        while (got == null && System.nanoTime() < deadline) {
            ctx.progress();
            got = channel.getEvent(10);
        }
        if (got == null) {
            check(name, false, "no CQ event within " + COMPLETION_MILLIS + " ms");
            return;
        }
        WorkCompletion wc = await();
        cq.ackEvents(1);
        check(name, got == cq && wc.status() == WcStatus.SUCCESS && wc.wrId() == 900 && channel.getEvent(0) == null,
                "event for " + got.describe() + ", completion " + wc);
    }

    /** The requester's opcodes, in the order the responder's receives expect them. */
    public static List<WrOpcode> order() {
        return List.of(WrOpcode.SEND, WrOpcode.SEND_WITH_IMM, WrOpcode.RDMA_WRITE, WrOpcode.RDMA_WRITE_WITH_IMM,
                WrOpcode.RDMA_READ, WrOpcode.ATOMIC_CMP_AND_SWP, WrOpcode.ATOMIC_FETCH_AND_ADD);
    }
}
