package io.jhca.rxe;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.fail;

import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.BooleanSupplier;
import java.util.function.UnaryOperator;

import io.jhca.memory.DmaMemory;
import io.jhca.memory.DmaOptions;
import io.jhca.memory.DmaRegion;
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
import io.jhca.verbs.WcStatus;
import io.jhca.verbs.WorkCompletion;

/**
 * Two rxe devices in this JVM, each with a PD, a CQ, a registered buffer and a QP, connected to each other.
 * Every rig binds a fresh pair of loopback addresses (127.11.x.y) so rigs never collide with each other or with
 * other test modules.
 */
final class Rig implements AutoCloseable {

    private static final AtomicInteger NEXT = new AtomicInteger(2);

    final RxeContext a;
    final RxeContext b;
    final ProtectionDomain pdA;
    final ProtectionDomain pdB;
    final CompletionQueue cqA;
    final CompletionQueue cqB;
    final DmaRegion memA;
    final DmaRegion memB;
    final MemoryRegion mrA;
    final MemoryRegion mrB;
    final QueuePair qpA;
    final QueuePair qpB;
    final ProgressMode mode;

    static final int ALL_ACCESS = Access.mask(Access.LOCAL_WRITE, Access.REMOTE_WRITE, Access.REMOTE_READ,
            Access.REMOTE_ATOMIC);

    /**
     * A test's random seed: {@code -Djhca.test.seed} if given, else fresh; printed with {@code test}'s name so that a
     * failing run can be replayed.
     */
    static long seed(final String test) {
        final String given = System.getProperty("jhca.test.seed");
        final long seed = given != null ? Long.parseLong(given.trim()) : System.nanoTime();
        System.out.println(test + " seed " + seed + " (replay: -Djhca.test.seed=" + seed + ")");
        return seed;
    }

    /**
     * Fresh addresses 127.11.x.y for one device, y in 1..254: the JDK refuses to bind 127.x.x.255 on Linux (see
     * {@code UdpLink.open}), which the 255th rig of a JVM used to get.
     */
    static String nextAddress() {
        final int n = NEXT.getAndIncrement();
        return "127.11." + (n / 254 & 0xFF) + "." + (1 + n % 254);
    }

    static RxeDeviceConfig.Builder config(final String name, final ProgressMode mode) {
        return RxeDeviceConfig.builder(name).address(nextAddress()).progressMode(mode);
    }

    static Rig rc(final ProgressMode mode, final long memBytes, final Mtu mtu) {
        return new Rig(config("rxeA", mode).build(), config("rxeB", mode).build(), QpType.RC, memBytes, mtu,
                UnaryOperator.identity());
    }

    Rig(final RxeDeviceConfig ca, final RxeDeviceConfig cb, final QpType type, final long memBytes, final Mtu mtu,
            final UnaryOperator<QpInitAttributes> qpInit) {
        this(ca, cb, type, memBytes, mtu, qpInit, 14);
    }

    /** @param timeout local ACK timeout code of both QPs (4.096 us * 2^timeout) */
    Rig(final RxeDeviceConfig ca, final RxeDeviceConfig cb, final QpType type, final long memBytes, final Mtu mtu,
            final UnaryOperator<QpInitAttributes> qpInit, final int timeout) {
        this.mode = ca.progressMode();
        a = RxeProvider.open(ca);
        b = RxeProvider.open(cb);
        pdA = a.allocatePd();
        pdB = b.allocatePd();
        cqA = a.createCq(4096);
        cqB = b.createCq(4096);
        memA = DmaMemory.allocate(DmaOptions.of(memBytes).lock(false));
        memB = DmaMemory.allocate(DmaOptions.of(memBytes).lock(false));
        mrA = pdA.register(memA, 0, memBytes, ALL_ACCESS);
        mrB = pdB.register(memB, 0, memBytes, ALL_ACCESS);
        qpA = pdA.createQp(qpInit.apply(QpInitAttributes.of(type, cqA, cqA).maxSendWr(256).maxRecvWr(256).maxSendSge(4)
                .maxRecvSge(4).maxInlineData(256)));
        qpB = pdB.createQp(qpInit.apply(QpInitAttributes.of(type, cqB, cqB).maxSendWr(256).maxRecvWr(256).maxSendSge(4)
                .maxRecvSge(4).maxInlineData(256)));
        if (type != QpType.UD) {
            connect(qpA, a, qpB, b, mtu, 0x1000, 0x2000, timeout);
            connect(qpB, b, qpA, a, mtu, 0x2000, 0x1000, timeout);
        }
    }

    static Gid gid(final RxeContext ctx) {
        return ctx.queryGid(1, 1);
    }

    static void connect(final QueuePair qp, final RxeContext local, final QueuePair peer, final RxeContext remote,
            final Mtu mtu, final int sqPsn, final int rqPsn, final int timeout) {
        qp.modify(QpAttributes.toInit(1, Access.REMOTE_WRITE, Access.REMOTE_READ, Access.REMOTE_ATOMIC));
        QpAttributes rtr = QpAttributes.toRtr(peer.qpn(), rqPsn, AhAttributes.to(gid(remote)).sgidIndex(1), mtu)
                .maxDestRdAtomic(16).minRnrTimer(1);
        if (qp.type() == QpType.UC) {
            rtr = rtr.without(io.jhca.verbs.QpAttrMask.MAX_DEST_RD_ATOMIC | io.jhca.verbs.QpAttrMask.MIN_RNR_TIMER);
        }
        qp.modify(rtr);
        QpAttributes rts = QpAttributes.toRts(sqPsn).maxRdAtomic(16).timeout(timeout);
        if (qp.type() == QpType.UC) {
            rts = QpAttributes.toRtsUd(sqPsn);
        }
        qp.modify(rts);
    }

    /**
     * Drives both engines in CALLER mode; in THREAD mode a short park, so that on a small machine the polling test
     * thread does not take the cores the two engine threads need.
     */
    void progress() {
        if (mode == ProgressMode.CALLER) {
            a.progress();
            b.progress();
        } else {
            java.util.concurrent.locks.LockSupport.parkNanos(20_000);
        }
    }

    /**
     * Drives progress ({@link #progress}) until {@code done} holds; fails after 5 s, naming {@code what} and both
     * devices' counters.
     */
    void await(final BooleanSupplier done, final String what) {
        final long end = System.nanoTime() + 5_000_000_000L;
        while (!done.getAsBoolean()) {
            if (System.nanoTime() - end > 0) {
                fail("waited 5 s for " + what + "; counters A " + a.counters() + " B " + b.counters());
            }
            progress();
        }
    }

    /** Polls one completion, driving progress, within {@code millis}. */
    WorkCompletion poll(final CompletionQueue cq, final long millis) {
        final WorkCompletion wc = new WorkCompletion();
        final long end = System.nanoTime() + millis * 1_000_000L;
        while (System.nanoTime() < end) {
            progress();
            if (cq.poll(wc) == 1) {
                return wc;
            }
        }
        fail("no completion on " + cq.describe() + " within " + millis + " ms; counters A " + a.counters()
                + " B " + b.counters());
        return null;
    }

    WorkCompletion expect(final CompletionQueue cq, final long wrId, final WcStatus status) {
        final WorkCompletion wc = poll(cq, 20_000);
        assertEquals(status, wc.status(), () -> "completion " + wc);
        assertEquals(wrId, wc.wrId(), () -> "completion " + wc);
        return wc;
    }

    /** Asserts that nothing completes on {@code cq} for {@code millis}. */
    void expectNothing(final CompletionQueue cq, final long millis) {
        final WorkCompletion wc = new WorkCompletion();
        final long end = System.nanoTime() + millis * 1_000_000L;
        while (System.nanoTime() < end) {
            progress();
            if (cq.poll(wc) == 1) {
                fail("unexpected completion " + wc);
            }
        }
    }

    @Override
    public void close() {
        qpA.close();
        qpB.close();
        mrA.close();
        mrB.close();
        memA.close();
        memB.close();
        cqA.close();
        cqB.close();
        pdA.close();
        pdB.close();
        a.close();
        b.close();
        assertEquals(null, a.engine().lastError(), "engine A caught an exception");
        assertEquals(null, b.engine().lastError(), "engine B caught an exception");
    }
}
