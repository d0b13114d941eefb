package io.jhca.connectx;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.net.InetAddress;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

import io.jhca.memory.DmaMemory;
import io.jhca.memory.DmaRegion;
import io.jhca.mlx5.Mlx5Context;
import io.jhca.mlx5.Mlx5Provider;
import io.jhca.mlx5.cmd.CmdTrace;
import io.jhca.mlx5.cq.CqeSyndrome;
import io.jhca.mlx5.init.Mlx5Options;
import io.jhca.verbs.Access;
import io.jhca.verbs.AhAttributes;
import io.jhca.verbs.AsyncEvent;
import io.jhca.verbs.CompletionQueue;
import io.jhca.verbs.DeviceInfo;
import io.jhca.verbs.MemoryRegion;
import io.jhca.verbs.Mtu;
import io.jhca.verbs.ProtectionDomain;
import io.jhca.verbs.QpAttributes;
import io.jhca.verbs.QpInitAttributes;
import io.jhca.verbs.QpState;
import io.jhca.verbs.QueuePair;
import io.jhca.verbs.RecvWr;
import io.jhca.verbs.SendFlags;
import io.jhca.verbs.SendWr;
import io.jhca.verbs.SharedReceiveQueue;
import io.jhca.verbs.SrqInitAttributes;
import io.jhca.verbs.VerbsException;
import io.jhca.verbs.WcOpcode;
import io.jhca.verbs.WcStatus;
import io.jhca.verbs.WorkCompletion;
import io.jhca.verbs.WrOpcode;

/**
 * A device that dies with work outstanding (mlx5_ib's internal-error flow): each poll of a CQ returns the real CQEs
 * first, then one WR_FLUSH_ERR completion for every WR still outstanding on its QPs, signaled or not, in posting order
 * per queue, each once; the QPs are in ERR, posts fail with EIO naming the device, and closing everything works
 * without a command reaching the device. The data path is paused before the outstanding WRs are posted, so the device
 * has them but completes none; the WRs completed before are real completions, found before the flushes.
 */
class DeadDeviceFlushTest {

    private Mlx5Context ctx;
    private ModelFunction fn;
    private DmaRegion mem;
    private final List<String> trace = new ArrayList<>();

    @AfterEach
    void close() {
        if (ctx != null && !ctx.isClosed()) {
            ctx.close();
        }
        if (mem != null && !mem.isClosed()) {
            mem.close();
        }
    }

    private void open(String name, String ip) throws Exception {
        fn = ModelFunction.open(name, InetAddress.getByName(ip));
        ctx = Mlx5Provider.open(new DeviceInfo(name, "mlx5", 0, "InfiniBand"), fn, Mlx5Options.defaults());
        mem = DmaMemory.allocate(1 << 16);
    }

    private void connect(QueuePair q, QueuePair peer) {
        q.modify(QpAttributes.toInit(1, Access.REMOTE_WRITE));
        q.modify(QpAttributes.toRtr(peer.qpn(), 0, AhAttributes.to(ctx.queryGid(1, 1)).sgidIndex(1), Mtu.MTU_1024));
        q.modify(QpAttributes.toRts(0));
    }

    private static WorkCompletion awaitOne(CompletionQueue cq) {
        WorkCompletion wc = new WorkCompletion();
        long deadline = System.nanoTime() + 20_000_000_000L;
        while (cq.poll(wc) == 0) {
            assertTrue(System.nanoTime() < deadline, "no completion on " + cq.describe() + " within 20 s");
            Thread.onSpinWait();
        }
        return wc;
    }

    /** Every completion until the CQ is empty. */
    private static List<WorkCompletion> drain(CompletionQueue cq) {
        List<WorkCompletion> out = new ArrayList<>();
        WorkCompletion wc = new WorkCompletion();
        while (cq.poll(wc) == 1) {
            WorkCompletion copy = new WorkCompletion();
            copy.set(wc.wrId(), wc.status(), wc.opcode(), wc.qpNum(), wc.byteLen()).vendorErr(wc.vendorErr());
            out.add(copy);
            assertTrue(out.size() < 10_000, "endless completions");
        }
        return out;
    }

    private AsyncEvent awaitFatal() throws InterruptedException {
        AsyncEvent ev = ctx.asyncEventChannel().getEvent(20_000);
        assertNotNull(ev, "no DEVICE_FATAL within 20 s of the device dying");
        assertEquals(AsyncEvent.Type.DEVICE_FATAL, ev.type(), ev.toString());
        ctx.asyncEventChannel().ackEvent(ev);
        return ev;
    }

    @Test
    void surpriseRemovalFlushesEveryOutstandingWrOnceInOrder() throws Exception {
        long seed = System.nanoTime();
        System.out.println("DeadDeviceFlushTest seed " + seed);
        Random rnd = new Random(seed);
        open("flush0", "127.0.0.47");
        ProtectionDomain pd = ctx.allocatePd();
        MemoryRegion mr = pd.register(mem, Access.LOCAL_WRITE, Access.REMOTE_WRITE);
        CompletionQueue scq = ctx.createCq(256);
        CompletionQueue rcq = ctx.createCq(256);
        QpInitAttributes init = QpInitAttributes.rc(scq, rcq).maxSendWr(64).maxRecvWr(64).maxInlineData(64);
        QueuePair a = pd.createQp(init);
        QueuePair b = pd.createQp(init);
        SharedReceiveQueue srq = pd.createSrq(SrqInitAttributes.create().maxWr(16).maxSge(1));
        connect(a, b);
        connect(b, a);
        int regions = fn.dmaRegions();

        // completed for real before the death: their CQEs stay in the send CQ, unpolled
        int done = 1 + rnd.nextInt(4);
        for (int i = 0; i < done; i++) {
            b.postRecv(new RecvWr().wrId(9000 + i).sge(mr, 4096, 64));
        }
        for (int i = 0; i < done; i++) {
            a.postSend(new SendWr().wrId(i).opcode(WrOpcode.SEND).sendFlags(SendFlags.SIGNALED).sge(mr, 0, 16));
        }
        for (int i = 0; i < done; i++) {
            WorkCompletion wc = awaitOne(rcq);
            assertEquals(WcStatus.SUCCESS, wc.status(), wc.toString());
            assertEquals(9000 + i, wc.wrId());
        }

        // outstanding: the device holds them (doorbells rung) but its data path stands still
        fn.model().pauseDataPath(true);
        int sends = 5 + rnd.nextInt(20);
        int recvs = 3 + rnd.nextInt(20);
        List<Long> sent = new ArrayList<>();
        for (int i = 0; i < sends; i++) {
            long id = 100 + i;
            int flags = rnd.nextBoolean() ? SendFlags.SIGNALED : 0;
            if (i % 5 == 4) {
                // the builder's path, a WQE of two WQEBBs (raddr + inline)
                a.sendQueue().start().wrId(id).flags(flags).rdmaWrite(mr.rkey(), mem.address() + 8192)
                        .inlineData(mem.buffer(0, 40), 0, 40);
                a.sendQueue().complete();
            } else {
                a.postSend(new SendWr().wrId(id).opcode(WrOpcode.SEND).sendFlags(flags).sge(mr, 0, 16));
            }
            sent.add(id);
        }
        List<Long> posted = new ArrayList<>();
        for (int i = 0; i < recvs; i++) {
            a.postRecv(new RecvWr().wrId(500 + i).sge(mr, 12288, 64));
            posted.add(500L + i);
        }
        for (int i = 0; i < 4; i++) {
            srq.postRecv(new RecvWr().wrId(700 + i).sge(mr, 16384, 64));
        }

        ctx.traceCommands(CmdTrace.of(trace::add, CmdTrace.Mode.DATA));
        fn.model().surpriseRemoval();
        AsyncEvent ev = awaitFatal();
        assertTrue(ev.toString().contains("fw_ver reads 0xffffffff"), ev.toString());
        assertEquals(QpState.ERR, a.state());
        assertEquals(QpState.ERR, b.state());

        // the send CQ: the real completions first (those whose ACK made it), then every other send flushed
        List<WorkCompletion> s = drain(scq);
        int real = 0;
        while (real < s.size() && s.get(real).status() == WcStatus.SUCCESS) {
            assertEquals(real, s.get(real).wrId(), "real completions in order");
            real++;
        }
        assertTrue(real <= done, "at most the " + done + " completed sends succeed: " + real);
        List<Long> expected = new ArrayList<>();
        for (long i = real; i < done; i++) {
            expected.add(i);
        }
        expected.addAll(sent);
        List<Long> flushed = new ArrayList<>();
        for (WorkCompletion wc : s.subList(real, s.size())) {
            assertEquals(WcStatus.WR_FLUSH_ERR, wc.status(), wc.toString());
            assertEquals(a.qpn(), wc.qpNum());
            assertEquals(CqeSyndrome.WR_FLUSH_ERR, wc.vendorErr());
            flushed.add(wc.wrId());
            if (wc.wrId() >= 100 && (wc.wrId() - 100) % 5 == 4) {
                assertEquals(WcOpcode.RDMA_WRITE, wc.opcode(), wc.toString());
            }
        }
        assertEquals(expected, flushed, "every outstanding send, signaled or not, once, in posting order");

        // the receive CQ: a's receives, then nothing of b (all consumed) nor of the SRQ (its WQEs are the SRQ's)
        List<Long> rflushed = new ArrayList<>();
        for (WorkCompletion wc : drain(rcq)) {
            assertEquals(WcStatus.WR_FLUSH_ERR, wc.status(), wc.toString());
            assertEquals(WcOpcode.RECV, wc.opcode(), wc.toString());
            assertEquals(a.qpn(), wc.qpNum());
            rflushed.add(wc.wrId());
        }
        assertEquals(posted, rflushed, "every outstanding receive once, in posting order");
        WorkCompletion wc = new WorkCompletion();
        assertEquals(0, scq.poll(wc), "nothing twice");
        assertEquals(0, rcq.poll(wc), "nothing twice");

        // posts fail with EIO naming the device, on every path
        VerbsException e = assertThrows(VerbsException.class,
                () -> a.postSend(new SendWr().wrId(1).opcode(WrOpcode.SEND).sge(mr, 0, 8)));
        assertEquals(VerbsException.EIO, e.errno(), e.toString());
        assertTrue(e.getMessage().contains("flush0") && e.getMessage().contains("dead"), e.getMessage());
        // a chain of common WRs takes the path that writes WQEs as it checks them: it must refuse too, writing none
        SendWr chain = new SendWr().wrId(3).opcode(WrOpcode.SEND).sge(mr, 0, 8)
                .next(new SendWr().wrId(4).opcode(WrOpcode.SEND).sge(mr, 0, 8));
        e = assertThrows(VerbsException.class, () -> a.postSend(chain));
        assertEquals(VerbsException.EIO, e.errno(), e.toString());
        e = assertThrows(VerbsException.class, () -> a.postRecv(new RecvWr().wrId(1).sge(mr, 0, 8)));
        assertEquals(VerbsException.EIO, e.errno(), e.toString());
        e = assertThrows(VerbsException.class, () -> srq.postRecv(new RecvWr().wrId(1).sge(mr, 0, 8)));
        assertEquals(VerbsException.EIO, e.errno(), e.toString());
        e = assertThrows(VerbsException.class, () -> {
            a.sendQueue().start();
            try {
                a.sendQueue().wrId(2).send().sge(mr, 0, 8);
            } finally {
                a.sendQueue().abort();
            }
        });
        assertEquals(VerbsException.EIO, e.errno(), e.toString());
        assertEquals(0, scq.poll(wc), "a refused post leaves nothing to flush");
        // a command that would create something fails at once, without reaching the device
        e = assertThrows(VerbsException.class, () -> ctx.createCq(4));
        assertTrue(e.getMessage().contains("not posted"), e.getMessage());

        // closing works, no command reaches the dead device, and the memory of the objects is released
        a.close();
        b.close();
        srq.close();
        scq.close();
        rcq.close();
        assertEquals(regions - 5, fn.dmaRegions(), "the rings of 2 QPs, 1 SRQ and 2 CQs are freed");
        mr.close();
        pd.close();
        mem.close(); // refused while the device could still reach it: the MR gave it up
        assertTrue(mem.isClosed());
        ctx.close();
        for (String line : trace) {
            assertFalse(line.contains("dump command"), "a command reached the dead device: " + line);
        }
        assertTrue(trace.stream().anyMatch(l -> l.contains("DESTROY_QP") && l.contains("answered by the driver")),
                String.join("\n", trace));
    }

    @Test
    void aHungDeviceFlushesTooAndWakesASleepingPoller() throws Exception {
        System.setProperty("jhca.mlx5.healthStallMs", "300");
        try {
            open("flush1", "127.0.0.48");
        } finally {
            System.clearProperty("jhca.mlx5.healthStallMs");
        }
        ProtectionDomain pd = ctx.allocatePd();
        MemoryRegion mr = pd.register(mem, Access.LOCAL_WRITE);
        io.jhca.verbs.CompletionChannel ch = ctx.createCompletionChannel();
        CompletionQueue cq = ctx.createCq(64, ch);
        QueuePair a = pd.createQp(QpInitAttributes.rc(cq, cq).maxSendWr(16).maxRecvWr(16));
        QueuePair b = pd.createQp(QpInitAttributes.rc(cq, cq).maxSendWr(16).maxRecvWr(16));
        connect(a, b);
        connect(b, a);
        fn.model().pauseDataPath(true);
        for (int i = 0; i < 7; i++) {
            a.postRecv(new RecvWr().wrId(40 + i).sge(mr, 0, 64));
        }
        for (int i = 0; i < 3; i++) {
            b.postSend(new SendWr().wrId(i).opcode(WrOpcode.SEND).sge(mr, 0, 8)); // unsignaled
        }
        WorkCompletion wc = new WorkCompletion();
        assertEquals(0, cq.poll(wc));
        cq.requestNotify(false);
        fn.model().hang();
        // the poller sleeps on the channel: the death wakes it
        CompletionQueue woken = ch.getEvent(20_000);
        assertEquals(cq, woken, "the CQ's completion event after the device died");
        cq.ackEvents(1);
        awaitFatal();
        List<Long> ids = new ArrayList<>();
        List<Integer> qpns = new ArrayList<>();
        for (WorkCompletion w : drain(cq)) {
            assertEquals(WcStatus.WR_FLUSH_ERR, w.status(), w.toString());
            ids.add(w.wrId());
            qpns.add(w.qpNum());
        }
        // QP by QP in QPN order, sends before receives
        List<Long> expected = new ArrayList<>();
        List<Integer> expectedQpns = new ArrayList<>();
        QueuePair first = a.qpn() < b.qpn() ? a : b;
        for (QueuePair q : first == a ? List.of(a, b) : List.of(b, a)) {
            if (q == b) {
                expected.addAll(List.of(0L, 1L, 2L));
                expectedQpns.addAll(List.of(b.qpn(), b.qpn(), b.qpn()));
            } else {
                for (long i = 40; i < 47; i++) {
                    expected.add(i);
                    expectedQpns.add(a.qpn());
                }
            }
        }
        assertEquals(expected, ids);
        assertEquals(expectedQpns, qpns);
        a.close();
        b.close();
        cq.close();
        ch.close();
        mr.close();
        pd.close();
        ctx.close();
    }

    @Test
    void sendsHeldByADrainedQpAreFlushedToo() throws Exception {
        open("flush2", "127.0.0.49");
        ProtectionDomain pd = ctx.allocatePd();
        MemoryRegion mr = pd.register(mem, Access.LOCAL_WRITE);
        CompletionQueue cq = ctx.createCq(16);
        QueuePair a = pd.createQp(QpInitAttributes.rc(cq, cq).maxSendWr(8).maxRecvWr(8));
        QueuePair b = pd.createQp(QpInitAttributes.rc(cq, cq).maxSendWr(8).maxRecvWr(8));
        connect(a, b);
        connect(b, a);
        // SQD: the provider holds the doorbell, the device never sees these WQEs; the application posted them all the same
        a.modify(QpAttributes.toState(QpState.SQD));
        for (int i = 0; i < 3; i++) {
            a.postSend(new SendWr().wrId(60 + i).opcode(WrOpcode.SEND).sendFlags(SendFlags.SIGNALED).sge(mr, 0, 8));
        }
        fn.model().surpriseRemoval();
        awaitFatal();
        List<Long> ids = new ArrayList<>();
        for (WorkCompletion w : drain(cq)) {
            assertEquals(WcStatus.WR_FLUSH_ERR, w.status(), w.toString());
            assertEquals(WcOpcode.SEND, w.opcode(), w.toString());
            ids.add(w.wrId());
        }
        assertEquals(List.of(60L, 61L, 62L), ids);
        a.close();
        b.close();
        cq.close();
        mr.close();
        pd.close();
        ctx.close();
    }
}
