package io.jhca.tests.mcast;

import io.jhca.tests.harness.DevicePair;
import io.jhca.tests.harness.Harness;
import io.jhca.tests.harness.Peer;
import io.jhca.tests.harness.PeerSpec;
import io.jhca.tests.harness.Seeds;
import io.jhca.tests.harness.Wcs;
import io.jhca.verbs.AddressHandle;
import io.jhca.verbs.AhAttributes;
import io.jhca.verbs.Context;
import io.jhca.verbs.DeviceAttributes;
import io.jhca.verbs.Gid;
import io.jhca.verbs.CompletionQueue;
import io.jhca.verbs.QpAttributes;
import io.jhca.verbs.QpInitAttributes;
import io.jhca.verbs.QueuePair;
import io.jhca.verbs.RecvWr;
import io.jhca.verbs.SendFlags;
import io.jhca.verbs.SendWr;
import io.jhca.verbs.VerbsException;
import io.jhca.verbs.WcOpcode;
import io.jhca.verbs.WorkCompletion;
import io.jhca.verbs.WrOpcode;

import java.net.InetAddress;
import java.time.Duration;
import java.util.Map;
import java.util.Random;

import org.agrona.concurrent.UnsafeBuffer;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * UD multicast on every device pair: RoCEv2 multicast GIDs are IPv4 groups ({@code ::ffff:239.x.y.z}), a send names
 * QPN 0xFFFFFF (IBTA 10.5.2.1) and every QP attached to the group on every device gets a copy, the sender's own
 * device included (the host loops multicast back, as with Linux rxe). All devices of a pair sit on 127.0.0.x of one
 * host, so they share the group on the loopback interface. Each test uses its own random group (seed printed) so a
 * straggler from another test cannot be taken for one of its datagrams.
 */
class MulticastTest {
    private static final int GRH = 40;
    private static final int MSG = 64;
    private static final Duration QUIET = Duration.ofMillis(300);

    /** A fresh group 239.200.x.y (administratively scoped, RFC 2365) as an IPv4-mapped MGID. */
    private static Gid group(String what) {
        Random r = new Random(Seeds.of("jhca.test.mcast.seed", "multicast group of " + what));
        try {
            return Gid.of(InetAddress.getByAddress(new byte[] {(byte) 239, (byte) 200, (byte) r.nextInt(256),
                    (byte) (1 + r.nextInt(254))}));
        } catch (java.io.IOException e) {
            throw new AssertionError(e);
        }
    }

    /** Attaches {@code p}'s QP and lets the harness detach it before the QP closes (a QP still attached refuses). */
    private static void attach(Harness h, Peer p, Gid mgid) {
        p.qp().attachMcast(mgid, 0);
        h.track((AutoCloseable) () -> {
            if (p.qp().multicastGroups().contains(mgid)) {
                p.qp().detachMcast(mgid, 0);
            }
        });
    }

    private static void send(Peer sender, AddressHandle ah, long seq, int qkey) {
        UnsafeBuffer b = sender.buf();
        int at = (int) (seq % 32) * 128; // a slot of its own: the send reads it only once the engine sends
        b.putLong(at, seq);
        b.putLong(at + 8, ~seq);
        sender.post(new SendWr().wrId(seq).opcode(WrOpcode.SEND).sendFlags(SendFlags.SIGNALED)
                .sge(sender.mr(), at, MSG).ud(ah, QueuePair.MULTICAST_QPN, qkey));
    }

    /** Sends {@code seqs} to the group and waits for their send completions. */
    private static void sendAll(Harness h, Peer sender, AddressHandle ah, long... seqs) {
        for (long s : seqs) {
            send(sender, ah, s, Peer.QKEY);
        }
        for (long s : seqs) {
            Wcs.assertSuccess(h.await(sender.sendCq(), "send completion of multicast " + s), WcOpcode.SEND, s,
                    sender.qpn(), "multicast send " + s);
        }
    }

    /** Posts {@code n} receives of GRH + MSG bytes, slot i at i * 256. */
    private static void postRecvs(Peer p, int n) {
        for (int i = 0; i < n; i++) {
            p.postRecv(1000 + i, i * 256L, GRH + MSG);
        }
    }

    /** Waits for the receives of {@code seqs}, in order, checking source QP, length, payload and the GRH's group. */
    private static void expect(Harness h, Peer receiver, Peer sender, Gid mgid, int firstSlot, long... seqs) {
        expectFrom(h, receiver, sender.qpn(), sender.gid(), mgid, firstSlot, seqs);
    }

    private static void expectFrom(Harness h, Peer receiver, int senderQpn, Gid senderGid, Gid mgid, int firstSlot,
            long... seqs) {
        String who = "receiver QP 0x" + Integer.toHexString(receiver.qpn()) + " on " + receiver.ctx().name();
        for (int i = 0; i < seqs.length; i++) {
            int slot = firstSlot + i;
            String what = "multicast " + seqs[i] + " at " + who;
            WorkCompletion wc = h.await(receiver.recvCq(), what);
            Wcs.assertRecv(wc, WcOpcode.RECV, 1000 + slot, receiver.qpn(), GRH + MSG, null, what);
            assertEquals(Integer.toHexString(senderQpn), Integer.toHexString(wc.srcQp()), "src_qp of " + what);
            UnsafeBuffer b = receiver.buf();
            int at = slot * 256;
            assertEquals(seqs[i], b.getLong(at + GRH), "sequence number of " + what);
            assertEquals(~seqs[i], b.getLong(at + GRH + 8), "payload of " + what);
            for (int k = 0; k < 4; k++) {
                // the IPv4 header sits at GRH offset 20; its destination (offset 16) is the group
                assertEquals(mgid.get(12 + k), b.getByte(at + 20 + 16 + k), what + ": GRH destination byte " + k
                        + " is the group's");
                assertEquals(senderGid.get(12 + k), b.getByte(at + 20 + 12 + k), what + ": GRH source byte " + k);
            }
        }
    }

    @ParameterizedTest
    @MethodSource("io.jhca.tests.harness.DevicePairs#all")
    void everyAttachedQpOnEveryDeviceGetsACopy(DevicePair pair) {
        try (Harness h = Harness.open(pair)) {
            Gid mgid = group("fan-out " + pair);
            Peer sender = h.peerA(PeerSpec.ud());
            Peer localRx = h.peerA(PeerSpec.ud().bufferBytes(8192));
            Peer rx1 = h.peerB(PeerSpec.ud().bufferBytes(8192));
            Peer rx2 = h.peerB(PeerSpec.ud().bufferBytes(8192));
            for (Peer p : new Peer[] {sender, localRx, rx1, rx2}) {
                p.readyUd();
            }
            for (Peer p : new Peer[] {localRx, rx1, rx2}) {
                postRecvs(p, 8);
                attach(h, p, mgid);
            }
            postRecvs(sender, 1);
            AddressHandle ah = h.track(sender.pd().createAh(AhAttributes.to(mgid).sgidIndex(sender.gidIndex())));
            assertTrue(ah.attributes().isMulticast(), "an AH to " + mgid + " is a multicast AH");
            sendAll(h, sender, ah, 1, 2, 3, 4, 5);
            for (Peer p : new Peer[] {localRx, rx1, rx2}) {
                expect(h, p, sender, mgid, 0, 1, 2, 3, 4, 5);
            }
            h.assertNoCompletion(sender.recvCq(), QUIET, "the sending QP is not attached: it gets no copy");
            for (Peer p : new Peer[] {localRx, rx1, rx2}) {
                h.assertNoCompletion(p.recvCq(), Duration.ofMillis(50), "exactly one copy per attached QP");
            }
        }
    }

    @ParameterizedTest
    @MethodSource("io.jhca.tests.harness.DevicePairs#all")
    void membersJoiningAndLeavingMidStream(DevicePair pair) {
        try (Harness h = Harness.open(pair)) {
            Gid mgid = group("join/leave " + pair);
            Peer sender = h.peerA(PeerSpec.ud());
            Peer early = h.peerB(PeerSpec.ud().bufferBytes(8192));
            Peer late = h.peerB(PeerSpec.ud().bufferBytes(8192));
            Peer local = h.peerA(PeerSpec.ud().bufferBytes(8192));
            for (Peer p : new Peer[] {sender, early, late, local}) {
                p.readyUd();
                postRecvs(p, 12);
            }
            AddressHandle ah = h.track(sender.pd().createAh(AhAttributes.to(mgid).sgidIndex(sender.gidIndex())));
            attach(h, early, mgid);
            sendAll(h, sender, ah, 1, 2, 3);
            expect(h, early, sender, mgid, 0, 1, 2, 3);
            h.assertNoCompletion(late.recvCq(), QUIET, "a QP not yet attached receives nothing");
            h.assertNoCompletion(local.recvCq(), Duration.ofMillis(50), "a QP not yet attached receives nothing");

            attach(h, late, mgid); // joins mid-stream: from the next message on
            attach(h, local, mgid);
            sendAll(h, sender, ah, 4, 5, 6);
            expect(h, early, sender, mgid, 3, 4, 5, 6);
            expect(h, late, sender, mgid, 0, 4, 5, 6);
            expect(h, local, sender, mgid, 0, 4, 5, 6);

            early.qp().detachMcast(mgid, 0); // leaves mid-stream: nothing more
            local.qp().detachMcast(mgid, 0); // the sender's device leaves the group altogether
            assertTrue(early.qp().multicastGroups().isEmpty(), "no groups after detach");
            sendAll(h, sender, ah, 7, 8, 9);
            expect(h, late, sender, mgid, 3, 7, 8, 9);
            h.assertNoCompletion(early.recvCq(), QUIET, "a detached QP receives nothing more");
            h.assertNoCompletion(local.recvCq(), Duration.ofMillis(50), "a detached QP receives nothing more");

            late.qp().detachMcast(mgid, 0); // the last member: the device leaves the IP group
            sendAll(h, sender, ah, 10);
            h.assertNoCompletion(late.recvCq(), QUIET, "after the last detach nothing arrives");
            attach(h, early, mgid); // and joins again
            sendAll(h, sender, ah, 11);
            expect(h, early, sender, mgid, 6, 11);
        }
    }

    @ParameterizedTest
    @MethodSource("io.jhca.tests.harness.DevicePairs#all")
    void qkeyMismatchIsDroppedAndCounted(DevicePair pair) {
        try (Harness h = Harness.open(pair)) {
            Gid mgid = group("Q_Key " + pair);
            Peer sender = h.peerA(PeerSpec.ud());
            Peer rx = h.peerB(PeerSpec.ud().bufferBytes(8192));
            sender.readyUd();
            rx.readyUd();
            postRecvs(rx, 4);
            attach(h, rx, mgid);
            AddressHandle ah = h.track(sender.pd().createAh(AhAttributes.to(mgid).sgidIndex(sender.gidIndex())));
            Long before = badQkey(h.b());
            send(sender, ah, 1, Peer.QKEY + 1);
            Wcs.assertSuccess(h.await(sender.sendCq(), "send with a wrong Q_Key"), WcOpcode.SEND, 1, sender.qpn(), "send");
            h.assertNoCompletion(rx.recvCq(), QUIET, "a multicast datagram with another Q_Key is dropped (IBTA 10.2.4)");
            if (before != null) {
                h.awaitCondition(() -> badQkey(h.b()) == before + 1, h.b().name() + " counts drop_bad_qkey "
                        + (before + 1), Duration.ofSeconds(10));
            } else {
                System.out.println(h.b().name() + " reports no drop_bad_qkey counter: only the drop is checked");
            }
            sendAll(h, sender, ah, 2);
            expect(h, rx, sender, mgid, 0, 2);
        }
    }

    private static Long badQkey(Context ctx) {
        Map<String, Long> s = ctx.statistics();
        return s.get("drop_bad_qkey");
    }

    @ParameterizedTest
    @MethodSource("io.jhca.tests.harness.DevicePairs#all")
    void verbsRulesOfAttachAndDetach(DevicePair pair) {
        try (Harness h = Harness.open(pair)) {
            for (Context ctx : new Context[] {h.a(), h.b()}) {
                DeviceAttributes d = ctx.queryDevice();
                assertTrue(d.maxMcastGrp() > 0 && d.maxMcastQpAttach() > 0
                        && d.maxTotalMcastQpAttach() >= d.maxMcastQpAttach(), ctx.name() + " reports multicast limits: " + d);
            }
            Gid mgid = group("verbs rules " + pair);
            Peer ud = h.peerA(PeerSpec.ud());
            Peer rc = h.peerB(PeerSpec.rc());
            VerbsException e = assertThrows(VerbsException.class, () -> rc.qp().attachMcast(mgid, 0), "RC QP attach");
            assertEquals(VerbsException.EINVAL, e.errno(), "an RC QP cannot attach: " + e.getMessage());
            Gid unicast = ud.gid();
            e = assertThrows(VerbsException.class, () -> ud.qp().attachMcast(unicast, 0), "unicast GID attach");
            assertEquals(VerbsException.EINVAL, e.errno(), "a unicast GID is no group: " + e.getMessage());
            e = assertThrows(VerbsException.class, () -> ud.qp().detachMcast(mgid, 0), "detach before attach");
            assertEquals(VerbsException.EINVAL, e.errno(), "detach from a group not joined: " + e.getMessage());
            ud.qp().attachMcast(mgid, 0);
            ud.qp().attachMcast(mgid, 0); // twice: no error (rxe)
            assertEquals(1, ud.qp().multicastGroups().size(), "attached once");
            e = assertThrows(VerbsException.class, () -> ud.qp().close(), "close while attached");
            assertEquals(VerbsException.EBUSY, e.errno(), "an attached QP refuses to close: " + e.getMessage());
            ud.qp().detachMcast(mgid, 0);
            e = assertThrows(VerbsException.class, () -> ud.qp().detachMcast(mgid, 0), "second detach");
            assertEquals(VerbsException.EINVAL, e.errno(), "detach twice: " + e.getMessage());
        }
    }

    /**
     * A QP attached to the group it sends to gets its own datagrams back (the host loops them back, as with Linux
     * rxe), unless it was created with IBV_QP_CREATE_BLOCK_SELF_MCAST_LB (mlx5: qpc.block_lb_mc); the device's other
     * attached QPs get them either way.
     */
    @ParameterizedTest
    @MethodSource("io.jhca.tests.harness.DevicePairs#all")
    void selfLoopbackUnlessTheQpBlocksIt(DevicePair pair) {
        try (Harness h = Harness.open(pair)) {
            Gid mgid = group("self loopback " + pair);
            Peer loud = h.peerA(PeerSpec.ud().bufferBytes(16384));
            Peer other = h.peerA(PeerSpec.ud().bufferBytes(8192));
            loud.readyUd();
            other.readyUd();
            CompletionQueue quietCq = h.track(h.a().createCq(64));
            QueuePair quiet = h.track(loud.pd().createQp(QpInitAttributes.ud(quietCq, quietCq).maxSendWr(8)
                    .maxRecvWr(8).blockSelfMulticastLoopback()));
            quiet.modify(QpAttributes.toInitUd(1, Peer.QKEY));
            quiet.modify(QpAttributes.toRtrUd());
            quiet.modify(QpAttributes.toRtsUd(0));
            postRecvs(loud, 4);
            postRecvs(other, 4);
            for (int k = 0; k < 4; k++) {
                quiet.postRecv(new RecvWr().wrId(2000 + k).sge(loud.mr(), 8192 + k * 256L, GRH + MSG));
            }
            attach(h, loud, mgid);
            attach(h, other, mgid);
            quiet.attachMcast(mgid, 0);
            h.track((AutoCloseable) () -> quiet.detachMcast(mgid, 0));
            AddressHandle ah = h.track(loud.pd().createAh(AhAttributes.to(mgid).sgidIndex(loud.gidIndex())));

            sendAll(h, loud, ah, 1); // an ordinary QP: every member gets it, the sender too
            expect(h, loud, loud, mgid, 0, 1);
            expect(h, other, loud, mgid, 0, 1);
            WorkCompletion wc = h.await(quietCq, "the blocking QP receives another QP's datagram");
            assertEquals(loud.qpn(), wc.srcQp(), "src_qp at the blocking QP: " + wc);

            UnsafeBuffer b = loud.buf();
            b.putLong(4096, 2);
            b.putLong(4096 + 8, ~2L);
            assertEquals(1, quiet.postSend(new SendWr().wrId(2).opcode(WrOpcode.SEND).sendFlags(SendFlags.SIGNALED)
                    .sge(loud.mr(), 4096, MSG).ud(ah, QueuePair.MULTICAST_QPN, Peer.QKEY)));
            wc = h.await(quietCq, "send completion of the blocking QP");
            assertEquals(2, wc.wrId(), "the blocking QP's send completes: " + wc);
            expectFrom(h, loud, quiet.qpn(), loud.gid(), mgid, 1, 2);
            expectFrom(h, other, quiet.qpn(), loud.gid(), mgid, 1, 2);
            h.assertNoCompletion(quietCq, QUIET, "IBV_QP_CREATE_BLOCK_SELF_MCAST_LB: no copy of its own send");
        }
    }
}
