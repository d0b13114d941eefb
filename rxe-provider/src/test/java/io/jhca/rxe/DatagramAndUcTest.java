package io.jhca.rxe;

import static java.nio.ByteOrder.BIG_ENDIAN;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.net.InetAddress;
import java.util.function.UnaryOperator;

import org.agrona.concurrent.UnsafeBuffer;
import org.junit.jupiter.api.Test;

import io.jhca.memory.DmaMemory;
import io.jhca.memory.DmaOptions;
import io.jhca.memory.DmaRegion;
import io.jhca.rxe.transport.RxeCounters;
import io.jhca.rxe.wire.PacketLayout;
import io.jhca.verbs.AddressHandle;
import io.jhca.verbs.AhAttributes;
import io.jhca.verbs.CompletionQueue;
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
import io.jhca.verbs.WcFlags;
import io.jhca.verbs.WcOpcode;
import io.jhca.verbs.WcStatus;
import io.jhca.verbs.WorkCompletion;
import io.jhca.verbs.WrOpcode;

/** UD (with the GRH area), UC, and traffic over IPv6 (::1, two QPs of one device). */
class DatagramAndUcTest {

    static final int QKEY = 0x11111111; // perftest's UD Q_Key

    @Test
    void udSendWithGrhOverIpv4() {
        try (Rig r = udRig("udA", "udB", ProgressMode.THREAD);
             AddressHandle ah = r.pdA.createAh(AhAttributes.to(Rig.gid(r.b)).sgidIndex(1))) {
            TrafficTest.fill(r.memA.buffer(), 0, 1000, 9);
            r.qpB.postRecv(new RecvWr().wrId(50).sge(r.mrB, 0, 2048));
            r.qpA.postSend(new SendWr().wrId(1).opcode(WrOpcode.SEND_WITH_IMM).immData(0x1234).sendFlags(SendFlags.SIGNALED)
                    .sge(r.mrA, 0, 1000).ud(ah, r.qpB.qpn(), QKEY));
            r.expect(r.cqA, 1, WcStatus.SUCCESS);
            final WorkCompletion wc = r.expect(r.cqB, 50, WcStatus.SUCCESS);
            assertEquals(40 + 1000, wc.byteLen());
            assertEquals(WcOpcode.RECV, wc.opcode());
            assertEquals(r.qpA.qpn(), wc.srcQp());
            assertTrue((wc.wcFlags() & WcFlags.GRH) != 0);
            assertEquals(0x1234, wc.immData());
            final UnsafeBuffer b = r.memB.buffer();
            TrafficTest.check(b, 40, 1000, 9);
            // GRH area: 20 undefined (zero) bytes, then the IPv4 header of the datagram
            for (int i = 0; i < 20; i++) {
                assertEquals(0, b.getByte(i));
            }
            final int ip = 20;
            assertEquals(0x45, b.getByte(ip) & 0xFF);
            final int udpPayload = 12 + 8 + 4 + 1000 + 4; // BTH, DETH, ImmDt, payload, ICRC
            assertEquals(20 + 8 + udpPayload, b.getShort(ip + PacketLayout.IPV4_TOTAL_LENGTH, BIG_ENDIAN) & 0xFFFF);
            assertEquals(PacketLayout.IPV4_DF, b.getShort(ip + PacketLayout.IPV4_FLAGS_FRAGMENT, BIG_ENDIAN) & 0xFFFF);
            assertEquals(17, b.getByte(ip + PacketLayout.IPV4_PROTOCOL));
            assertEquals(0, internetChecksum(b, ip, 20), "a valid IPv4 header checksum");
            assertEquals(ipv4(r.a), b.getInt(ip + PacketLayout.IPV4_SRC, BIG_ENDIAN));
            assertEquals(ipv4(r.b), b.getInt(ip + PacketLayout.IPV4_DST, BIG_ENDIAN));

            // a wrong Q_Key is dropped and counted; a message above the port MTU completes without being sent
            r.qpB.postRecv(new RecvWr().wrId(51).sge(r.mrB, 0, 2048));
            r.qpA.postSend(new SendWr().wrId(2).opcode(WrOpcode.SEND).sendFlags(SendFlags.SIGNALED).sge(r.mrA, 0, 10)
                    .ud(ah, r.qpB.qpn(), QKEY + 1));
            r.expect(r.cqA, 2, WcStatus.SUCCESS);
            final long sent = r.a.counters().get(RxeCounters.Counter.SENT_PKTS);
            r.qpA.postSend(new SendWr().wrId(3).opcode(WrOpcode.SEND).sendFlags(SendFlags.SIGNALED)
                    .sge(r.mrA, 0, r.a.queryPort(1).activeMtu().bytes() + 1).ud(ah, r.qpB.qpn(), QKEY));
            r.expect(r.cqA, 3, WcStatus.SUCCESS);
            assertEquals(sent, r.a.counters().get(RxeCounters.Counter.SENT_PKTS), "rxe: over-MTU UD is not sent");
            r.await(() -> r.b.counters().get(RxeCounters.Counter.DROP_BAD_QKEY) == 1, "the wrong Q_Key dropped");
            r.qpA.postSend(new SendWr().wrId(4).opcode(WrOpcode.SEND).sendFlags(SendFlags.SIGNALED).sge(r.mrA, 0, 10)
                    .ud(ah, r.qpB.qpn(), QKEY));
            r.expect(r.cqA, 4, WcStatus.SUCCESS);
            assertEquals(40 + 10, r.expect(r.cqB, 51, WcStatus.SUCCESS).byteLen());
        }
    }

    /**
     * A UD receive holds the 40-byte GRH area and the payload: a buffer one byte short of both drops the datagram
     * (counted, the receive stays posted), and the next datagram, one byte shorter, fills the same buffer exactly.
     */
    @Test
    void udReceiveMustHoldTheGrhAreaAndThePayload() {
        try (Rig r = udRig("udC", "udD", ProgressMode.CALLER);
             AddressHandle ah = r.pdA.createAh(AhAttributes.to(Rig.gid(r.b)).sgidIndex(1))) {
            TrafficTest.fill(r.memA.buffer(), 0, 100, 3);
            r.qpB.postRecv(new RecvWr().wrId(60).sge(r.mrB, 0, 40 + 99));
            r.qpA.postSend(new SendWr().wrId(1).opcode(WrOpcode.SEND).sendFlags(SendFlags.SIGNALED).sge(r.mrA, 0, 100)
                    .ud(ah, r.qpB.qpn(), QKEY));
            r.expect(r.cqA, 1, WcStatus.SUCCESS);
            r.await(() -> r.b.counters().get(RxeCounters.Counter.DROP_BAD_LENGTH) > 0, "the datagram dropped");
            assertEquals(0, r.memB.buffer().getByte(40), "the dropped datagram's first byte");
            r.qpA.postSend(new SendWr().wrId(2).opcode(WrOpcode.SEND).sendFlags(SendFlags.SIGNALED).sge(r.mrA, 0, 99)
                    .ud(ah, r.qpB.qpn(), QKEY));
            r.expect(r.cqA, 2, WcStatus.SUCCESS);
            assertEquals(40 + 99, r.expect(r.cqB, 60, WcStatus.SUCCESS).byteLen());
            TrafficTest.check(r.memB.buffer(), 40, 99, 3);
        }
    }

    /** Two devices with a UD QP each, both up (Q_Key {@link #QKEY}). */
    private static Rig udRig(final String nameA, final String nameB, final ProgressMode mode) {
        final Rig r = new Rig(Rig.config(nameA, mode).build(), Rig.config(nameB, mode).build(), QpType.UD, 1 << 16,
                Mtu.MTU_1024, UnaryOperator.identity());
        try {
            udUp(r.qpA);
            udUp(r.qpB);
            return r;
        } catch (final RuntimeException e) {
            r.close();
            throw e;
        }
    }

    static void udUp(final QueuePair qp) {
        qp.modify(QpAttributes.toInitUd(1, QKEY));
        qp.modify(QpAttributes.toRtrUd());
        qp.modify(QpAttributes.toRtsUd(0x100));
    }

    static int ipv4(final RxeContext ctx) {
        return ipv4FromAddress(ctx.config().address());
    }

    static int ipv4FromAddress(final InetAddress address) {
        final byte[] a = address.getAddress();
        return (a[0] & 0xFF) << 24 | (a[1] & 0xFF) << 16 | (a[2] & 0xFF) << 8 | (a[3] & 0xFF);
    }

    static int internetChecksum(final UnsafeBuffer b, final int at, final int length) {
        int sum = 0;
        for (int i = 0; i < length; i += 2) {
            sum += b.getShort(at + i, BIG_ENDIAN) & 0xFFFF;
        }
        while ((sum >>> 16) != 0) {
            sum = (sum & 0xFFFF) + (sum >>> 16);
        }
        return ~sum & 0xFFFF;
    }

    @Test
    void ucWritesAndSends() {
        try (Rig r = new Rig(Rig.config("ucA", ProgressMode.CALLER).build(), Rig.config("ucB", ProgressMode.CALLER).build(),
                QpType.UC, 1 << 20, Mtu.MTU_1024, UnaryOperator.identity())) {
            for (final int size : new int[] {0, 1, 1023, 1024, 1025, 3077, 100_000}) {
                TrafficTest.fill(r.memA.buffer(), 0, size, size);
                r.qpB.postRecv(new RecvWr().wrId(size).sge(r.mrB, 0, 200_000));
                r.qpA.postSend(new SendWr().wrId(size).opcode(WrOpcode.SEND).sendFlags(SendFlags.SIGNALED).sge(r.mrA, 0, size));
                r.expect(r.cqA, size, WcStatus.SUCCESS);
                assertEquals(size, r.expect(r.cqB, size, WcStatus.SUCCESS).byteLen());
                TrafficTest.check(r.memB.buffer(), 0, size, size);
                r.qpA.postSend(new SendWr().wrId(size + 1).opcode(WrOpcode.RDMA_WRITE_WITH_IMM).immData(size)
                        .sendFlags(SendFlags.SIGNALED).sge(r.mrA, 0, size).rdma(r.mrB.address() + 300_000, r.mrB.rkey()));
                r.qpB.postRecv(new RecvWr().wrId(size + 1).numSge(0));
                r.expect(r.cqA, size + 1, WcStatus.SUCCESS);
                final WorkCompletion wc = r.expect(r.cqB, size + 1, WcStatus.SUCCESS);
                assertEquals(WcOpcode.RECV_RDMA_WITH_IMM, wc.opcode());
                assertEquals(size, wc.immData());
                TrafficTest.check(r.memB.buffer(), 300_000, size, size);
            }
        }
    }

    @Test
    void rcAndUdOverIpv6() throws Exception {
        final InetAddress v6 = InetAddress.getByName("::1");
        try (RxeContext ctx = RxeProvider.open(RxeDeviceConfig.builder("rxe6").address(v6).build());
             ProtectionDomain pd = ctx.allocatePd();
             CompletionQueue cq = ctx.createCq(64);
             DmaRegion mem = DmaMemory.allocate(DmaOptions.of(1 << 16).lock(false));
             MemoryRegion mr = pd.register(mem, 0, 1 << 16, Rig.ALL_ACCESS);
             QueuePair a = pd.createQp(QpInitAttributes.rc(cq, cq));
             QueuePair b = pd.createQp(QpInitAttributes.rc(cq, cq))) {
            assertEquals(InetAddress.getByName("::1"), ctx.queryGid(1, 1).toInetAddress());
            ErrorPathTest.connect(a, ctx, b, ctx, Rig.ALL_ACCESS, 7, 7, 10);
            ErrorPathTest.connect(b, ctx, a, ctx, Rig.ALL_ACCESS, 7, 7, 10);
            TrafficTest.fill(mem.buffer(), 0, 5000, 6);
            b.postRecv(new RecvWr().wrId(2).sge(mr, 8192, 8192));
            a.postSend(new SendWr().wrId(1).opcode(WrOpcode.SEND).sendFlags(SendFlags.SIGNALED).sge(mr, 0, 5000));
            final WorkCompletion wc = new WorkCompletion();
            int seen = 0;
            final long end = System.nanoTime() + 10_000_000_000L;
            while (seen < 2 && System.nanoTime() < end) {
                if (cq.poll(wc) == 1) {
                    assertEquals(WcStatus.SUCCESS, wc.status(), wc::toString);
                    seen++;
                }
            }
            assertEquals(2, seen, () -> "counters " + ctx.counters());
            TrafficTest.check(mem.buffer(), 8192, 5000, 6);
            assertEquals(0, ctx.counters().dropped(), () -> "IPv6 ICRCs verify: " + ctx.counters());
        }
    }
}
