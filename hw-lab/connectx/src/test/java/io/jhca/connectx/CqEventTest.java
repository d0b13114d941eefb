package io.jhca.connectx;

import static io.jhca.connectx.CqeBytes.assertCqe;
import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

import java.net.InetAddress;
import java.nio.ByteOrder;

import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;

import io.jhca.doorbell.CqArm;
import io.jhca.memory.DmaMemory;
import io.jhca.memory.DmaRegion;
import io.jhca.mlx5.cmd.CqLayouts;
import io.jhca.mlx5.cmd.QpLayouts;
import io.jhca.mlx5.eq.Eqe;
import io.jhca.mlx5.eq.EventType;
import io.jhca.mlx5.wqe.FmCeSe;
import io.jhca.mlx5.wqe.Mlx5Opcode;
import io.jhca.verbs.AhAttributes;
import io.jhca.verbs.CompletionQueue;
import io.jhca.verbs.Gid;
import io.jhca.verbs.Mtu;
import io.jhca.verbs.QpAttributes;
import io.jhca.verbs.QpInitAttributes;
import io.jhca.verbs.QueuePair;
import io.jhca.verbs.RecvWr;

/**
 * CQ overrun (the device never writes over a CQE the driver has not consumed: the CQ goes to error and a CQ_ERROR
 * event reaches the async EQ), overrun-ignore CQs, 128-byte CQEs, CQ arming and completion events, doorbell checks,
 * and memory unmapped under live objects.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class CqEventTest {

    private static final String SIM_IP = "127.0.0.37";
    private static final String RXE_IP = "127.0.0.38";
    private static final int UIDX = 0x1234;

    private HostDriver drv;
    private RxePeer peer;
    private DmaRegion smem;
    private int skey;

    @BeforeAll
    void setUp() throws Exception {
        drv = HostDriver.open("cq0", SIM_IP).bringUp();
        peer = new RxePeer("peer2", RXE_IP);
        smem = DmaMemory.allocate(1 << 16);
        skey = drv.createMkey(smem, true, true, true, true);
    }

    @AfterAll
    void tearDown() {
        drv.close();
        peer.close();
        smem.close();
    }

    /** A connected RC QP whose send CQ is {@code cq}; the peer has {@code recvs} receives posted. */
    private DriverRings connect(HostDriver.Cq cq, int recvs) throws Exception {
        HostDriver.Cq rcq = drv.createCq(4);
        DriverRings r = drv.createQp(QpLayouts.ST_RC, cq, rcq, 5, 4, 0);
        CompletionQueue pcq = peer.own(peer.ctx.createCq(64));
        QueuePair pqp = peer.own(peer.pd.createQp(QpInitAttributes.rc(pcq, pcq).maxRecvWr(32)));
        r.toInit(true, true, true);
        pqp.modify(QpAttributes.toInit(1));
        r.toRtr(pqp.qpn(), 0, InetAddress.getByName(RXE_IP), 3);
        r.toRts(0);
        pqp.modify(QpAttributes.toRtr(r.qpn, 0, AhAttributes.to(Gid.of(InetAddress.getByName(SIM_IP))).sgidIndex(1),
                Mtu.MTU_1024));
        pqp.modify(QpAttributes.toRts(0));
        for (int i = 0; i < recvs; i++) {
            RecvWr w = new RecvWr().wrId(i);
            w.sge(0).set(peer.mr, 0, 64);
            w.numSge(1);
            pqp.postRecv(w);
        }
        return r;
    }

    private int send(DriverRings r) {
        return r.begin(Mlx5Opcode.SEND, FmCeSe.CQ_UPDATE, 0).data(8, skey, smem.address()).post();
    }

    private static int awaitEqe(HostDriver.Eq eq) {
        long deadline = System.nanoTime() + 10_000_000_000L;
        int off;
        while ((off = eq.next()) < 0) {
            if (System.nanoTime() > deadline) {
                fail("no EQE on EQ " + eq.eqn);
            }
            Thread.onSpinWait();
        }
        return off;
    }

    @Test
    void overrunStopsTheCqAndRaisesCqError() throws Exception {
        HostDriver.Cq cq = drv.createCq(1); // 2 CQEs
        DriverRings r = connect(cq, 4);
        send(r);
        send(r);
        long drops = drv.counters().get(ModelCounters.Counter.CQES_DROPPED);
        send(r); // no room: the driver consumed nothing
        int off = awaitEqe(drv.asyncEq);
        assertEquals(EventType.CQ_ERROR, Eqe.type(drv.asyncEq.ring, off));
        assertEquals(cq.cqn, Eqe.cqErrorCqn(drv.asyncEq.ring, off));
        assertEquals(EventType.CQ_ERROR_OVERRUN, Eqe.cqErrorSyndrome(drv.asyncEq.ring, off));
        drv.asyncEq.updateCi();
        assertTrue(drv.counters().get(ModelCounters.Counter.CQES_DROPPED) > drops);
        assertTrue(drv.counters().get(ModelCounters.Counter.CQ_OVERRUNS) >= 1);
        // the two CQEs written are intact: counters 0 and 1, owner 0
        assertCqe(CqeBytes.req(Mlx5Opcode.SEND, r.qpn, 0, 0, UIDX, 0), cq.await());
        assertCqe(CqeBytes.req(Mlx5Opcode.SEND, r.qpn, 1, 0, UIDX, 0), cq.await());
        // the CQ is in error for good: nothing more, even with room again
        send(r);
        cq.assertEmpty(100);
    }

    @Test
    void overrunIgnoreKeepsWriting() throws Exception {
        HostDriver.Cq cq = drv.createCq(1, CqLayouts.CQE_SZ_64, true);
        DriverRings r = connect(cq, 4);
        for (int i = 0; i < 3; i++) {
            send(r);
        }
        long deadline = System.nanoTime() + 10_000_000_000L;
        while (cq.peek(2) < 0) { // the third CQE, in slot 0 with owner 1
            if (System.nanoTime() > deadline) {
                fail("the third CQE never came");
            }
            Thread.onSpinWait();
        }
        byte[] b = new byte[64];
        cq.ring.getBytes(0, b);
        assertCqe(CqeBytes.req(Mlx5Opcode.SEND, r.qpn, 2, 0, UIDX, 1), b);
    }

    @Test
    void bigCqesKeepTheCqe64InTheSecondHalf() throws Exception {
        HostDriver.Cq cq = drv.createCq(3, CqLayouts.CQE_SZ_128, false);
        DriverRings r = connect(cq, 2);
        int idx = send(r);
        assertCqe(CqeBytes.req(Mlx5Opcode.SEND, r.qpn, idx, 0, UIDX, 0), cq.await());
        byte[] first = new byte[64];
        cq.ring.getBytes(0, first);
        assertCqe(new byte[64], first);
    }

    @Test
    void armedCqRaisesOneCompletionEvent() throws Exception {
        HostDriver.Eq compEq = drv.createEq(4, 0);
        int savedEqn = drv.eqn;
        drv.eqn = compEq.eqn; // the next CQ reports to this EQ
        HostDriver.Cq cq;
        try {
            cq = drv.createCq(4);
        } finally {
            drv.eqn = savedEqn;
        }
        DriverRings r = connect(cq, 4);
        CqArm arm = new CqArm(drv.bar0, drv.uar * HostDriver.PAGE, cq.dbr, cq.cqn);
        arm.arm(0, cq.ci, false);
        send(r);
        int off = awaitEqe(compEq);
        assertEquals(EventType.COMP, Eqe.type(compEq.ring, off));
        assertEquals(cq.cqn, compEq.ring.getInt(off + Eqe.DATA_OFFSET + 24, ByteOrder.BIG_ENDIAN) & 0xffffff,
                "device.h struct mlx5_eqe_comp: cqn is the seventh be32 of the data");
        cq.await();
        send(r); // not re-armed: no second event
        cq.await();
        Thread.sleep(50);
        assertEquals(-1, compEq.next());
        assertTrue(drv.counters().get(ModelCounters.Counter.CQ_ARM_DOORBELLS) >= 1);
    }

    /** A CQ of 16 CQEs reporting its completion events to {@code compEq}. */
    private HostDriver.Cq cqOn(HostDriver.Eq compEq) {
        int savedEqn = drv.eqn;
        drv.eqn = compEq.eqn;
        try {
            return drv.createCq(4);
        } finally {
            drv.eqn = savedEqn;
        }
    }

    private static int eventCqn(HostDriver.Eq eq, int off) {
        assertEquals(EventType.COMP, Eqe.type(eq.ring, off));
        return eq.ring.getInt(off + Eqe.DATA_OFFSET + 24, ByteOrder.BIG_ENDIAN) & 0xffffff;
    }

    /** The CQNs of the next {@code n} completion events, in order. */
    private static int[] awaitEvents(HostDriver.Eq eq, int n) {
        int[] cqns = new int[n];
        for (int i = 0; i < n; i++) {
            cqns[i] = eventCqn(eq, awaitEqe(eq));
        }
        return cqns;
    }

    private static void assertQuiet(HostDriver.Eq eq) throws InterruptedException {
        Thread.sleep(50);
        int off = eq.next();
        assertEquals(-1, off, () -> "an event nobody asked for, for CQ " + eventCqn(eq, off));
    }

    private CqArm armOf(HostDriver.Cq cq) {
        return new CqArm(drv.bar0, drv.uar * HostDriver.PAGE, cq.dbr, cq.cqn);
    }

    /**
     * Two CQs armed back to back before the device reads the UAR: the second arm doorbell replaces the first in BAR
     * memory, and both CQs still raise their event, once each; then again after the events moved arm_sn on.
     */
    @Test
    void cqsArmedBackToBackBothRaiseTheirEvent() throws Exception {
        HostDriver.Eq compEq = drv.createEq(4, 0);
        drv.fn.model().pauseDataPath(true);
        HostDriver.Cq a;
        HostDriver.Cq b;
        DriverRings ra;
        DriverRings rb;
        try {
            // commands run with the data path paused, so after these the device reads no UAR until it resumes
            a = cqOn(compEq);
            b = cqOn(compEq);
            ra = connect(a, 8);
            rb = connect(b, 8);
            armOf(a).arm(0, a.ci, false); // word 0: what the record held since CREATE_CQ
            armOf(b).arm(0, b.ci, false);
        } finally {
            drv.fn.model().pauseDataPath(false);
        }
        send(ra);
        a.await();
        send(rb);
        b.await();
        assertArrayEquals(new int[] {a.cqn, b.cqn}, awaitEvents(compEq, 2));
        send(ra);
        send(rb);
        a.await();
        b.await();
        assertQuiet(compEq);

        // re-armed with arm_sn 1 (one event each) and ci 2, again back to back
        long recovered = drv.counters().get(ModelCounters.Counter.CQ_ARMS_RECOVERED);
        drv.fn.model().pauseDataPath(true);
        try {
            drv.createCq(1); // a command: the device finished the duty cycle it was in
            armOf(a).arm(1, a.ci, false);
            armOf(b).arm(1, b.ci, false);
        } finally {
            drv.fn.model().pauseDataPath(false);
        }
        send(rb);
        b.await();
        send(ra);
        a.await();
        assertArrayEquals(new int[] {b.cqn, a.cqn}, awaitEvents(compEq, 2));
        assertQuiet(compEq);
        assertEquals(recovered + 1, drv.counters().get(ModelCounters.Counter.CQ_ARMS_RECOVERED),
                "a's arm, taken from its record");
    }

    /** An arm taken from the record is not taken again when its own UAR doorbell shows up after all. */
    @Test
    void anArmSeenInItsRecordIsTakenOnce() throws Exception {
        HostDriver.Eq compEq = drv.createEq(4, 0);
        drv.fn.model().pauseDataPath(true);
        HostDriver.Cq a;
        HostDriver.Cq b;
        DriverRings ra;
        long doorbells;
        try {
            a = cqOn(compEq);
            b = cqOn(compEq);
            ra = connect(a, 8);
            connect(b, 8);
            a.dbr.setArmWord(CqArm.armWord(0, a.ci, false)); // the record written, its doorbell not yet
            armOf(b).arm(0, b.ci, false);
            // read while paused: once resumed the device may take b's doorbell before this thread reads the count
            doorbells = drv.counters().get(ModelCounters.Counter.CQ_ARM_DOORBELLS);
        } finally {
            drv.fn.model().pauseDataPath(false);
        }
        awaitCounter(ModelCounters.Counter.CQ_ARM_DOORBELLS, doorbells + 1);
        drv.bar0.putLongBe(drv.uar * HostDriver.PAGE + CqArm.CQ_DOORBELL, CqArm.doorbell(CqArm.armWord(0, a.ci, false), a.cqn));
        awaitCounter(ModelCounters.Counter.CQ_ARM_DOORBELLS, doorbells + 2);
        send(ra);
        a.await();
        assertArrayEquals(new int[] {a.cqn}, awaitEvents(compEq, 1));
        send(ra);
        a.await();
        assertQuiet(compEq);
    }

    /** PRM: an arm whose ci is older than the CQ's producer index raises the event at once, recovered arm or not. */
    @Test
    void aRecoveredArmWithAnOldCiFiresAtOnce() throws Exception {
        HostDriver.Eq compEq = drv.createEq(4, 0);
        HostDriver.Cq a = cqOn(compEq);
        HostDriver.Cq b = cqOn(compEq);
        DriverRings ra = connect(a, 8);
        connect(b, 8);
        send(ra);
        send(ra);
        a.await();
        assertTrue(waitFor(() -> a.peek(1) >= 0), "the second CQE never came");
        drv.fn.model().pauseDataPath(true);
        try {
            drv.createCq(1);
            armOf(a).arm(0, a.ci, false); // ci 1, the second CQE unconsumed
            armOf(b).arm(0, b.ci, false);
        } finally {
            drv.fn.model().pauseDataPath(false);
        }
        assertArrayEquals(new int[] {a.cqn}, awaitEvents(compEq, 1));
        assertQuiet(compEq);
        a.await();
    }

    /**
     * Another CQ's first arm at word 0 arms, with it, only the CQs that may have written the same word unseen: never
     * armed, no CQE yet, word 0 in the record (the documented price: such a CQ raises one event on its first CQE). A
     * CQ that has completed work and was never armed stays quiet.
     */
    @Test
    void aFirstArmAtWordZeroTakesOnlyUntouchedCqsAlong() throws Exception {
        HostDriver.Eq compEq = drv.createEq(4, 0);
        HostDriver.Cq busy = cqOn(compEq);
        HostDriver.Cq untouched = cqOn(compEq);
        HostDriver.Cq b = cqOn(compEq);
        DriverRings rBusy = connect(busy, 8);
        DriverRings rUntouched = connect(untouched, 8);
        DriverRings rb = connect(b, 8);
        send(rBusy);
        busy.await();
        armOf(b).arm(0, b.ci, false);
        send(rb);
        b.await();
        assertArrayEquals(new int[] {b.cqn}, awaitEvents(compEq, 1));
        send(rBusy);
        busy.await();
        assertQuiet(compEq);
        send(rUntouched);
        untouched.await();
        assertArrayEquals(new int[] {untouched.cqn}, awaitEvents(compEq, 1));
        send(rUntouched);
        untouched.await();
        assertQuiet(compEq);
    }

    private static boolean waitFor(java.util.function.BooleanSupplier c) throws InterruptedException {
        long deadline = System.nanoTime() + 10_000_000_000L;
        while (!c.getAsBoolean()) {
            if (System.nanoTime() > deadline) {
                return false;
            }
            Thread.sleep(1);
        }
        return true;
    }

    @Test
    void sendDoorbellsAreCheckedAgainstTheWqe() throws Exception {
        HostDriver.Cq cq = drv.createCq(4);
        DriverRings r = connect(cq, 4);
        long doorbells = drv.counters().get(ModelCounters.Counter.SQ_DOORBELLS);
        long mismatches = drv.counters().get(ModelCounters.Counter.SQ_DOORBELL_MISMATCHES);
        send(r);
        cq.await();
        // the model may execute the WQE from the doorbell record before it notices the UAR doorbell's store, so
        // the CQE can come first: wait for the count instead of reading it once
        awaitCounter(ModelCounters.Counter.SQ_DOORBELLS, doorbells + 1);
        assertEquals(mismatches, drv.counters().get(ModelCounters.Counter.SQ_DOORBELL_MISMATCHES));
        // a doorbell naming a WQE index that was never posted, then one with the wrong DS
        drv.bar0.putLongBe(drv.uar * HostDriver.PAGE + 0x900, (long) (5 << 8 | Mlx5Opcode.SEND) << 32 | r.qpn << 8 | 2);
        awaitCounter(ModelCounters.Counter.SQ_DOORBELL_MISMATCHES, mismatches + 1);
        drv.bar0.putLongBe(drv.uar * HostDriver.PAGE + 0x800, (long) (0 << 8 | Mlx5Opcode.SEND) << 32 | r.qpn << 8 | 3);
        awaitCounter(ModelCounters.Counter.SQ_DOORBELL_MISMATCHES, mismatches + 2);
    }

    private void awaitCounter(ModelCounters.Counter c, long value) throws InterruptedException {
        long deadline = System.nanoTime() + 10_000_000_000L;
        while (drv.counters().get(c) < value) {
            if (System.nanoTime() > deadline) {
                fail(c + " stayed at " + drv.counters().get(c) + ", expected " + value);
            }
            Thread.sleep(1);
        }
        assertEquals(value, drv.counters().get(c));
    }

    @Test
    void unmappingMemoryUnderAKeyStopsIt() throws Exception {
        HostDriver.Cq cq = drv.createCq(4);
        DriverRings r = connect(cq, 4);
        try (DmaRegion user = DmaMemory.allocate(8192)) {
            int key = drv.createMkey(user, true, false, false, false);
            long faults = drv.counters().get(ModelCounters.Counter.DMA_FAULTS);
            drv.fn.unmapForDevice(user);
            assertEquals(faults + 1, drv.counters().get(ModelCounters.Counter.DMA_FAULTS));
            int idx = r.begin(Mlx5Opcode.SEND, FmCeSe.CQ_UPDATE, 0).data(8, key, user.address()).post();
            assertCqe(CqeBytes.err(true, Mlx5Opcode.SEND, r.qpn, idx, 0x04, CqeErrors.VENDOR_BAD_LKEY, UIDX, 0),
                    cq.await());
        }
        assertEquals(0, drv.counters().get(ModelCounters.Counter.MODEL_ERRORS));
    }
}
