package io.jhca.tests.fuzz;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.net.InetAddress;
import java.security.SecureRandom;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Random;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import io.jhca.memory.DmaMemory;
import io.jhca.memory.DmaOptions;
import io.jhca.memory.DmaRegion;
import io.jhca.rxe.ProgressMode;
import io.jhca.rxe.RxeContext;
import io.jhca.rxe.RxeDeviceConfig;
import io.jhca.rxe.RxeProvider;
import io.jhca.rxe.transport.RxeCounters.Counter;
import io.jhca.verbs.Access;
import io.jhca.verbs.AhAttributes;
import io.jhca.verbs.CompletionQueue;
import io.jhca.verbs.MemoryRegion;
import io.jhca.verbs.Mtu;
import io.jhca.verbs.ProtectionDomain;
import io.jhca.verbs.QpAttributes;
import io.jhca.verbs.QpInitAttributes;
import io.jhca.verbs.QpState;
import io.jhca.verbs.QueuePair;
import io.jhca.verbs.WcOpcode;
import io.jhca.verbs.WorkCompletion;

/**
 * A hostile peer sends packets of every kind at two rxe devices (malformed headers, every opcode at wrong PSNs,
 * forged responses with valid ICRCs aimed at the live QPs, oversize and truncated payloads, wrong QPNs and
 * sources; see {@link HostilePeer}) while real RC traffic runs both ways and is checked byte for byte. Nothing
 * may complete wrongly, no QP may leave RTS, the engines may not throw, and the devices must have received the
 * packets.
 *
 * <p>{@code -Djhca.fuzz.packets=N} (default 50,000; the long run is 1,000,000, see README) and
 * {@code -Djhca.fuzz.seed=S} (default random, printed) replay a run's packets. CALLER progress: one thread drives
 * both engines, the hostile peer and the traffic, so the packet stream is a function of the seed.
 */
class NetworkFuzzTest {

    private static final int MTU = 1024;
    private static final int REGION = 2 << 20;

    @Test
    @Timeout(3600) // the long run; the default run takes seconds
    void hostilePeerBesideRealTraffic() throws Exception {
        final long packets = Long.decode(System.getProperty("jhca.fuzz.packets", "50000"));
        final String seedText = System.getProperty("jhca.fuzz.seed");
        final long seed = seedText != null && !seedText.isBlank() ? Long.decode(seedText.trim())
                : new SecureRandom().nextLong();
        System.out.printf("NetworkFuzzTest: %d packets, seed %d (replay: -Djhca.fuzz.seed=%d)%n", packets, seed, seed);
        final Random random = new Random(seed);
        final InetAddress ipA = InetAddress.getByName("127.0.9.1");
        final InetAddress ipB = InetAddress.getByName("127.0.9.2");
        final InetAddress stranger = InetAddress.getByName("127.0.9.3");
        final List<AutoCloseable> open = new ArrayList<>();
        try {
            final RxeContext a = keep(open, RxeProvider.open(RxeDeviceConfig.builder("fuzz0").address(ipA)
                    .progressMode(ProgressMode.CALLER).build()));
            final RxeContext b = keep(open, RxeProvider.open(RxeDeviceConfig.builder("fuzz1").address(ipB)
                    .progressMode(ProgressMode.CALLER).build()));
            final Side sa = new Side(a, open);
            final Side sb = new Side(b, open);
            final int psnA = random.nextInt(1 << 24);
            final int psnB = (1 << 24) - 1 - random.nextInt(4096); // near the wrap: the run crosses it
            connect(sa, sb, psnA, psnB);
            connect(sb, sa, psnB, psnA);
            final Flow ab = new Flow("fuzz0->fuzz1", random.nextLong(), sa.qp, sb.qp, sa.mine, sa.mineMem, sb.theirs,
                    sb.theirsMem, MTU, psnA);
            final Flow ba = new Flow("fuzz1->fuzz0", random.nextLong(), sb.qp, sa.qp, sb.mine, sb.mineMem, sa.theirs,
                    sa.theirsMem, MTU, psnB);
            final HostilePeer atA = new HostilePeer(random.nextLong(), ipB, stranger, ipA, MTU);
            final HostilePeer atB = new HostilePeer(random.nextLong(), ipA, stranger, ipB, MTU);
            open.add(atA);
            open.add(atB);

            final WorkCompletion wc = new WorkCompletion();
            long sent = 0;
            final long start = System.nanoTime();
            while (sent < packets) {
                for (int i = 0; i < 8 && sent < packets; i++, sent += 2) {
                    atB.sendOne(sb.qp.qpn(), ab, ba);
                    atA.sendOne(sa.qp.qpn(), ba, ab);
                }
                for (int i = 0; i < 16 && a.progress() + b.progress() > 0; i++) {
                    poll(sa, sb, ab, ba, wc);
                }
                poll(sa, sb, ab, ba, wc);
                ab.maybePost();
                ba.maybePost();
            }
            final long end = System.nanoTime() + 60_000_000_000L;
            while (!(ab.idle() && ba.idle())) {
                assertTrue(System.nanoTime() < end, () -> "real traffic did not finish\n" + counters(a, b));
                a.progress();
                b.progress();
                poll(sa, sb, ab, ba, wc);
            }
            final double seconds = (System.nanoTime() - start) / 1e9;

            System.out.printf("NetworkFuzzTest: sent %d hostile packets in %.1f s%n  at fuzz0: %s%n  at fuzz1: %s%n",
                    sent, seconds, atA.sent(), atB.sent());
            System.out.printf("  real traffic: %s %d messages %d bytes, %s %d messages %d bytes, all verified%n",
                    ab.name, ab.messages, ab.bytes, ba.name, ba.messages, ba.bytes);
            System.out.println(counters(a, b));

            assertEquals(QpState.RTS, sa.qp.state(), "fuzz0's QP");
            assertEquals(QpState.RTS, sb.qp.state(), "fuzz1's QP");
            assertNull(a.engine().lastError(), "fuzz0's engine threw");
            assertNull(b.engine().lastError(), "fuzz1's engine threw");
            assertEquals(0, a.counters().get(Counter.ENGINE_ERRORS) + b.counters().get(Counter.ENGINE_ERRORS));
            assertTrue(ab.messages > 0 && ba.messages > 0, "real traffic ran both ways");
            final long received = a.counters().get(Counter.RCVD_PKTS) + b.counters().get(Counter.RCVD_PKTS);
            final long hostile = sent;
            assertTrue(received >= hostile, () -> "the devices received " + received + " packets, fewer than the "
                    + hostile + " hostile ones (the fuzz did not reach them)");
            for (final Map.Entry<HostilePeer.Kind, Long> e : atB.sent().entrySet()) {
                assertTrue(packets < 1000 || e.getValue() > 0, () -> "no " + e.getKey() + " packet was sent");
            }
            assertTrue(packets < 1000 || b.counters().get(Counter.DROP_GHOST_RESPONSE) > 0, "ghosts were recognised");
        } finally {
            for (int i = open.size() - 1; i >= 0; i--) {
                open.get(i).close();
            }
        }
    }

    private static String counters(final RxeContext a, final RxeContext b) {
        return "  fuzz0 counters " + a.counters() + "\n  fuzz1 counters " + b.counters();
    }

    private static void poll(final Side sa, final Side sb, final Flow ab, final Flow ba, final WorkCompletion wc) {
        while (sa.cq.poll(wc) == 1) {
            route(wc, ab, ba, sa, sb);
        }
        while (sb.cq.poll(wc) == 1) {
            route(wc, ba, ab, sa, sb);
        }
    }

    /** A completion at a device: its own requests' ({@code mine}) or a receive of the other flow. */
    private static void route(final WorkCompletion wc, final Flow mine, final Flow theirs, final Side sa,
            final Side sb) {
        final String context = counters(sa.ctx, sb.ctx);
        if (wc.opcode() == WcOpcode.RECV) {
            theirs.onRecv(wc, context);
        } else {
            mine.onSend(wc, context);
        }
    }

    private static void connect(final Side local, final Side remote, final int sqPsn, final int rqPsn) {
        final int access = Access.mask(Access.REMOTE_WRITE, Access.REMOTE_READ, Access.REMOTE_ATOMIC);
        local.qp.modify(QpAttributes.toInit(1).accessFlags(access));
        local.qp.modify(QpAttributes.toRtr(remote.qp.qpn(), rqPsn,
                AhAttributes.to(remote.ctx.queryGid(1, 1)).sgidIndex(1), Mtu.MTU_1024).maxDestRdAtomic(16)
                .minRnrTimer(1));
        // retry_cnt and rnr_retry 7: retry for ever, so forged NAKs can cost time but never fail a message
        local.qp.modify(QpAttributes.toRts(sqPsn).timeout(14).retryCnt(7).rnrRetry(7).maxRdAtomic(16));
    }

    private static <T extends AutoCloseable> T keep(final List<AutoCloseable> open, final T t) {
        open.add(t);
        return t;
    }

    /** One device with a PD, a CQ, a QP and two regions: its own sources/targets and the peer's target span. */
    private static final class Side {
        final RxeContext ctx;
        final CompletionQueue cq;
        final QueuePair qp;
        final MemoryRegion mine;
        final MemoryRegion theirs;
        final org.agrona.concurrent.UnsafeBuffer mineMem;
        final org.agrona.concurrent.UnsafeBuffer theirsMem;

        Side(final RxeContext ctx, final List<AutoCloseable> open) {
            this.ctx = ctx;
            final ProtectionDomain pd = keep(open, ctx.allocatePd());
            cq = keep(open, ctx.createCq(1024));
            final int access = Access.mask(Access.LOCAL_WRITE, Access.REMOTE_WRITE, Access.REMOTE_READ,
                    Access.REMOTE_ATOMIC);
            final DmaRegion m1 = keep(open, DmaMemory.allocate(DmaOptions.of(REGION).lock(false)));
            final DmaRegion m2 = keep(open, DmaMemory.allocate(DmaOptions.of(REGION).lock(false)));
            mine = keep(open, pd.register(m1, 0, REGION, access));
            theirs = keep(open, pd.register(m2, 0, REGION, access));
            mineMem = m1.buffer();
            theirsMem = m2.buffer();
            qp = keep(open, pd.createQp(QpInitAttributes.rc(cq, cq).maxSendWr(64).maxRecvWr(64)));
        }
    }
}
