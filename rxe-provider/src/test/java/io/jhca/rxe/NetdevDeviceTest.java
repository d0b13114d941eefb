package io.jhca.rxe;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

import java.net.InetAddress;
import java.util.List;

import org.junit.jupiter.api.Test;

import io.jhca.memory.DmaMemory;
import io.jhca.memory.DmaOptions;
import io.jhca.memory.DmaRegion;
import io.jhca.rxe.transport.RxeCounters;
import io.jhca.verbs.Access;
import io.jhca.verbs.AhAttributes;
import io.jhca.verbs.CompletionQueue;
import io.jhca.verbs.Gid;
import io.jhca.verbs.GidType;
import io.jhca.verbs.MemoryRegion;
import io.jhca.verbs.Mtu;
import io.jhca.verbs.ProtectionDomain;
import io.jhca.verbs.QpAttributes;
import io.jhca.verbs.QpInitAttributes;
import io.jhca.verbs.QueuePair;
import io.jhca.verbs.SendFlags;
import io.jhca.verbs.SendWr;
import io.jhca.verbs.VerbsException;
import io.jhca.verbs.WcStatus;
import io.jhca.verbs.WorkCompletion;
import io.jhca.verbs.WrOpcode;

/**
 * A device on an interface with two addresses (loopback ones, given as the interface's) against a device on one
 * address: each QP sends from the address its sgid_index names, so the peer's RC source check accepts it, and
 * receives on either address with the ICRC checked against the address it arrived at.
 */
class NetdevDeviceTest {

    private static final String A1 = "127.12.0.1";
    private static final String A2 = "127.12.0.2";
    private static final String B = "127.12.0.3";

    @Test
    void eachQpSendsFromItsSourceGidAndBothAddressesReceive() throws Exception {
        final RxeDeviceConfig ca = RxeDeviceConfig.builder("rxeN").progressMode(ProgressMode.CALLER)
                .netdev("lo", new byte[6], 65536, List.of(InetAddress.getByName(A1), InetAddress.getByName(A2)))
                .build();
        final RxeDeviceConfig cb = RxeDeviceConfig.builder("rxeB").address(B).progressMode(ProgressMode.CALLER).build();
        try (RxeContext a = RxeProvider.open(ca); RxeContext b = RxeProvider.open(cb);
             DmaRegion memA = DmaMemory.allocate(DmaOptions.of(8192).lock(false));
             DmaRegion memB = DmaMemory.allocate(DmaOptions.of(8192).lock(false))) {
            assertEquals(Gid.of(InetAddress.getByName(A1)), a.queryGid(1, 1));
            assertEquals(Gid.of(InetAddress.getByName(A2)), a.queryGid(1, 2));
            assertEquals(GidType.ROCE_V2, a.queryGidType(1, 2));
            final ProtectionDomain pdA = a.allocatePd();
            final ProtectionDomain pdB = b.allocatePd();
            final CompletionQueue cqA = a.createCq(64);
            final CompletionQueue cqB = b.createCq(64);
            final int access = Access.mask(Access.LOCAL_WRITE, Access.REMOTE_WRITE);
            final MemoryRegion mrA = pdA.register(memA, 0, 8192, access);
            final MemoryRegion mrB = pdB.register(memB, 0, 8192, access);
            final QueuePair[] qa = new QueuePair[2];
            final QueuePair[] qb = new QueuePair[2];
            final int[] sgid = {1, 2};
            for (int i = 0; i < 2; i++) {
                qa[i] = pdA.createQp(QpInitAttributes.rc(cqA, cqA).maxSendWr(8).maxRecvWr(8));
                qb[i] = pdB.createQp(QpInitAttributes.rc(cqB, cqB).maxSendWr(8).maxRecvWr(8));
                connect(qa[i], qb[i].qpn(), b.queryGid(1, 1), sgid[i]);
                connect(qb[i], qa[i].qpn(), a.queryGid(1, sgid[i]), 1);
            }
            for (int i = 0; i < 2; i++) {
                memA.buffer().putLong(64 * i, 0x1111_0000L + i);
                write(qa[i], i, mrA, 64L * i, mrB, 64L * i);
                memB.buffer().putLong(4096 + 64 * i, 0x2222_0000L + i);
                write(qb[i], 10 + i, mrB, 4096 + 64L * i, mrA, 4096 + 64L * i);
            }
            final WorkCompletion wc = new WorkCompletion();
            int done = 0;
            final long end = System.nanoTime() + 20_000_000_000L;
            while (done < 4) {
                a.progress();
                b.progress();
                for (final CompletionQueue cq : new CompletionQueue[] {cqA, cqB}) {
                    while (cq.poll(wc) == 1) {
                        assertEquals(WcStatus.SUCCESS, wc.status(), () -> "completion " + wc);
                        done++;
                    }
                }
                if (System.nanoTime() > end) {
                    fail("4 WRITEs did not complete; A " + a.counters() + " B " + b.counters());
                }
            }
            for (int i = 0; i < 2; i++) {
                assertEquals(0x1111_0000L + i, memB.buffer().getLong(64 * i), "WRITE from A's address " + (i + 1));
                assertEquals(0x2222_0000L + i, memA.buffer().getLong(4096 + 64 * i), "WRITE to A's address " + (i + 1));
            }
            assertEquals(0, b.counters().get(RxeCounters.Counter.DROP_BAD_SRC_ADDR));
            assertEquals(0, a.counters().get(RxeCounters.Counter.DROP_BAD_SRC_ADDR));

            // address vectors the table refuses: the default GID with no such address, the wrong family
            final QueuePair bad = pdA.createQp(QpInitAttributes.rc(cqA, cqA).maxSendWr(8).maxRecvWr(8));
            bad.modify(QpAttributes.toInit(1, Access.REMOTE_WRITE));
            final VerbsException ll = assertThrows(VerbsException.class, () -> bad.modify(
                    QpAttributes.toRtr(qb[0].qpn(), 0, AhAttributes.to(b.queryGid(1, 1)).sgidIndex(0), Mtu.MTU_1024)));
            assertTrue(ll.getMessage().contains("not an address"), ll.getMessage());
            final VerbsException fam = assertThrows(VerbsException.class, () -> bad.modify(QpAttributes.toRtr(
                    qb[0].qpn(), 0, AhAttributes.to(Gid.of(InetAddress.getByName("fd00::9"))).sgidIndex(1),
                    Mtu.MTU_1024)));
            assertTrue(fam.getMessage().contains("IPv6"), fam.getMessage());
            bad.close();
            for (int i = 0; i < 2; i++) {
                qa[i].close();
                qb[i].close();
            }
            mrA.close();
            mrB.close();
            cqA.close();
            cqB.close();
            pdA.close();
            pdB.close();
        }
    }

    private static void connect(final QueuePair qp, final int peerQpn, final Gid dgid, final int sgidIndex) {
        qp.modify(QpAttributes.toInit(1, Access.REMOTE_WRITE));
        qp.modify(QpAttributes.toRtr(peerQpn, 0x100, AhAttributes.to(dgid).sgidIndex(sgidIndex), Mtu.MTU_1024)
                .maxDestRdAtomic(1).minRnrTimer(1));
        qp.modify(QpAttributes.toRts(0x100).maxRdAtomic(1).timeout(14));
    }

    private static void write(final QueuePair qp, final long wrId, final MemoryRegion local, final long offset,
            final MemoryRegion remote, final long remoteOffset) {
        final SendWr wr = new SendWr().wrId(wrId).opcode(WrOpcode.RDMA_WRITE).sendFlags(SendFlags.SIGNALED)
                .rdma(remote.address() + remoteOffset, remote.rkey()).sge(local, offset, 8);
        assertEquals(1, qp.postSend(wr));
    }
}
