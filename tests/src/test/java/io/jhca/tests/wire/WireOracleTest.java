package io.jhca.tests.wire;

import io.jhca.tests.harness.DevicePair;
import io.jhca.tests.harness.Harness;
import io.jhca.tests.harness.Payloads;
import io.jhca.tests.harness.Peer;
import io.jhca.tests.harness.PeerSpec;
import io.jhca.tests.harness.RcParams;
import io.jhca.tests.harness.RxeDevices;
import io.jhca.verbs.AddressHandle;
import io.jhca.verbs.Mtu;
import io.jhca.verbs.SendFlags;
import io.jhca.verbs.SendWr;
import io.jhca.verbs.WcStatus;
import io.jhca.verbs.WorkCompletion;
import io.jhca.verbs.WrOpcode;

import java.io.IOException;
import java.io.InputStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

/**
 * Wire oracles on real traffic: an rxe pair on 127.0.0.41/42 exchanges SEND, WRITE, WRITE_IMM, READ, atomics and
 * UD datagrams at path MTU 1024 while tshark captures loopback. tshark decodes the capture and the opcode
 * sequence (FIRST/MIDDLE/LAST, ACKs, read responses, atomic ACKs), destination QPNs, PSNs (across the 2^24 wrap),
 * AckReq, pad counts, AETH syndromes and MSNs must be exactly what IBTA and Linux rxe put on the wire
 * (rocev2.md sections 1 and 3). scapy then recomputes every packet's ICRC, which must match, and every IPv4
 * ID must be 0 with DF set (the ICRC covers the ID; rocev2.md section 2.4).
 */
class WireOracleTest {
    private static final String IP_A = "127.0.0.41";
    private static final String IP_B = "127.0.0.42";
    private static final int MTU = 1024;
    /** A's first PSN: the wrap from 0xFFFFFF to 0 happens inside the first messages. */
    private static final int PSN_A = 0xFFFFFD;
    private static final int PSN_B = 0x7FFFFF;

    // IBTA opcodes (rocev2.md section 1.4): RC 0x00-0x14, UD 0x64/0x65.
    private static final int SEND_FIRST = 0x00;
    private static final int SEND_MIDDLE = 0x01;
    private static final int SEND_LAST = 0x02;
    private static final int SEND_ONLY = 0x04;
    private static final int SEND_ONLY_IMM = 0x05;
    private static final int WRITE_FIRST = 0x06;
    private static final int WRITE_MIDDLE = 0x07;
    private static final int WRITE_LAST_IMM = 0x09;
    private static final int WRITE_ONLY = 0x0A;
    private static final int READ_REQUEST = 0x0C;
    private static final int READ_RESP_FIRST = 0x0D;
    private static final int READ_RESP_MIDDLE = 0x0E;
    private static final int READ_RESP_LAST = 0x0F;
    private static final int ACK = 0x11;
    private static final int ATOMIC_ACK = 0x12;
    private static final int CMP_SWAP = 0x13;
    private static final int FETCH_ADD = 0x14;
    private static final int UD_SEND_ONLY = 0x64;
    private static final int UD_SEND_ONLY_IMM = 0x65;

    /** What one packet must look like; -1 (or null) means "not checked". */
    private record Expect(boolean aToB, int destQp, int opcode, int psn, Boolean ackReq, int pad, int msn, long dmaLen) {
    }

    @Test
    void trafficMatchesTsharkAndScapy(@TempDir Path dir) throws Exception {
        String tshark = Tools.tshark();
        Tools.requireScapy();
        // bursts and coalesced pairs are CoalescedSegmentsTest's (split by the kernel); here one packet a frame
        DevicePair pair = RxeDevices.onePacketADatagramPair("wire-a", "wire-b", IP_A, IP_B);
        Path pcap = dir.resolve("rxe.pcap");
        List<Expect> expected = new ArrayList<>();
        try (Harness h = Harness.open(pair)) {
            // A throwaway QP on A first, so A's and B's QPNs differ and each DestQP check tells them apart.
            h.peer(h.a(), PeerSpec.ud(), 0);
            Peer a = h.peer(h.a(), PeerSpec.rc(), PSN_A);
            Peer b = h.peer(h.b(), PeerSpec.rc(), PSN_B);
            // timeout 18 (1.07 s): no retransmission may sneak into the expected sequence on a busy machine.
            h.connect(a, b, RcParams.defaults().mtu(Mtu.MTU_1024).timeout(18));
            Peer ua = h.peer(h.a(), PeerSpec.ud(), 0x123);
            Peer ub = h.peer(h.b(), PeerSpec.ud(), 0x456);
            ua.readyUd();
            ub.readyUd();
            AddressHandle ah = h.track(ua.pd().createAh(ua.avTo(ub)));
            int qpnA = a.qpn();
            int qpnB = b.qpn();
            int udQpnB = ub.qpn();
            Payloads.fill(a.buf(), 0, 8192, 1);
            Payloads.fill(b.buf(), 0, 8192, 2);

            try (Capture cap = Capture.start(pcap, IP_A)) {
                int p = PSN_A;
                // 1. SEND of 2501 bytes: FIRST, MIDDLE, LAST (953 bytes + 3 pad, AckReq); one ACK.
                b.postRecv(1, 0, 4096);
                run(h, a, b, a.wr(1, WrOpcode.SEND, 0, 2501), true);
                req(expected, qpnB, SEND_FIRST, p, false, 0, -1);
                req(expected, qpnB, SEND_MIDDLE, p + 1, false, 0, -1);
                req(expected, qpnB, SEND_LAST, p + 2, true, 3, -1);
                ack(expected, qpnA, ACK, p + 2, 1);
                // 2. RDMA WRITE of exactly one MTU: WRITE_ONLY with RETH length 1024.
                run(h, a, b, a.rdma(2, WrOpcode.RDMA_WRITE, 0, MTU, b, 4096), false);
                req(expected, qpnB, WRITE_ONLY, p + 3, true, 0, MTU);
                ack(expected, qpnA, ACK, p + 3, 2);
                // 3. RDMA WRITE with immediate of 2049 bytes: FIRST (RETH 2049), MIDDLE, LAST_WITH_IMM (1 byte + 3 pad).
                b.postRecv(3, 0, 16);
                run(h, a, b, a.rdma(3, WrOpcode.RDMA_WRITE_WITH_IMM, 0, 2049, b, 4096).immData(0x01020304), true);
                req(expected, qpnB, WRITE_FIRST, p + 4, false, 0, 2049);
                req(expected, qpnB, WRITE_MIDDLE, p + 5, false, 0, -1);
                req(expected, qpnB, WRITE_LAST_IMM, p + 6, true, 3, -1);
                ack(expected, qpnA, ACK, p + 6, 3);
                // 4. RDMA READ of 2100 bytes: one request consuming 3 PSNs; responses FIRST, MIDDLE, LAST (52 bytes).
                run(h, a, b, a.rdma(4, WrOpcode.RDMA_READ, 0, 2100, b, 0), false);
                req(expected, qpnB, READ_REQUEST, p + 7, null, 0, 2100);
                ack(expected, qpnA, READ_RESP_FIRST, p + 7, 4);
                expected.add(new Expect(false, qpnA, READ_RESP_MIDDLE, (p + 8) & 0xFFFFFF, null, 0, -1, -1));
                ack(expected, qpnA, READ_RESP_LAST, p + 9, 4);
                // 5, 6. Atomics: one PSN each, answered by ATOMIC ACKNOWLEDGE.
                b.buf().putLong(8192, 5);
                run(h, a, b, a.wr(5, WrOpcode.ATOMIC_CMP_AND_SWP, 8000, 8).atomic(b.addr(8192), b.mr().rkey(), 5, 6), false);
                req(expected, qpnB, CMP_SWAP, p + 10, null, 0, -1);
                ack(expected, qpnA, ATOMIC_ACK, p + 10, 5);
                run(h, a, b, a.wr(6, WrOpcode.ATOMIC_FETCH_AND_ADD, 8000, 8).atomic(b.addr(8192), b.mr().rkey(), 1, 0), false);
                req(expected, qpnB, FETCH_ADD, p + 11, null, 0, -1);
                ack(expected, qpnA, ATOMIC_ACK, p + 11, 6);
                // 7. SEND with immediate of 5 bytes: SEND_ONLY_WITH_IMMEDIATE, pad 3.
                b.postRecv(7, 0, 64);
                run(h, a, b, a.wr(7, WrOpcode.SEND_WITH_IMM, 0, 5).immData(7), true);
                req(expected, qpnB, SEND_ONLY_IMM, p + 12, true, 3, -1);
                ack(expected, qpnA, ACK, p + 12, 7);
                // 8. B to A: SEND_ONLY of 100 bytes at B's PSNs; A acknowledges with its own MSN 1.
                a.postRecv(8, 0, 128);
                run(h, b, a, b.wr(8, WrOpcode.SEND, 0, 100), true);
                expected.add(new Expect(false, qpnA, SEND_ONLY, PSN_B, true, 0, -1, -1));
                expected.add(new Expect(true, qpnB, ACK, PSN_B, null, 0, 1, -1));
                // 9. UD: SEND_ONLY of 33 bytes (pad 3) and SEND_ONLY_WITH_IMMEDIATE of 0 bytes; no ACKs.
                ub.postRecv(9, 0, 1024);
                ub.postRecv(10, 1024, 1024);
                ua.post(new SendWr().wrId(9).opcode(WrOpcode.SEND).sendFlags(SendFlags.SIGNALED).sge(ua.mr(), 0, 33)
                        .ud(ah, ub.qpn(), Peer.QKEY));
                ua.post(new SendWr().wrId(10).opcode(WrOpcode.SEND_WITH_IMM).immData(10).sendFlags(SendFlags.SIGNALED)
                        .numSge(0).ud(ah, ub.qpn(), Peer.QKEY));
                h.await(ua.sendCq(), 2, "UD sends");
                h.await(ub.recvCq(), 2, "UD receives");
                expected.add(new Expect(true, udQpnB, UD_SEND_ONLY, 0x123, false, 3, -1, -1));
                expected.add(new Expect(true, udQpnB, UD_SEND_ONLY_IMM, 0x124, false, 0, -1, -1));
                cap.stop();
            }
        }

        Tools.Result decoded = Tools.run(Packet.tsharkArgs(tshark, pcap.toString()), 60);
        assertEquals(0, decoded.exit(), "tshark -r failed:\n" + decoded.output());
        List<Packet> packets = new ArrayList<>();
        for (String l : Tools.lines(decoded.output())) {
            if (Character.isDigit(l.charAt(0))) {
                packets.add(Packet.parse(l));
            }
        }
        StringBuilder trace = new StringBuilder();
        packets.forEach(pk -> trace.append("\n  ").append(pk));
        System.out.println("captured " + packets.size() + " packets:" + trace);
        assertEquals(expected.size(), packets.size(), "packets on the wire (expected " + expected + "); captured:" + trace);
        for (int i = 0; i < expected.size(); i++) {
            check(expected.get(i), packets.get(i), i, trace);
        }

        List<String> icrc = scapyIcrc(dir, pcap);
        assertEquals(packets.size(), icrc.size(), "scapy saw every packet:\n" + String.join("\n", icrc));
        for (String l : icrc) {
            String[] f = l.split(" ");
            if (f.length != 6) {
                fail("scapy could not check a packet: '" + l + "'");
            }
            assertEquals("ok", f[5], "ICRC of frame " + f[0] + ": on the wire " + f[3] + ", scapy computes " + f[4]);
            assertEquals("0", f[1], "IPv4 ID of frame " + f[0] + " (the ICRC covers it; rxe-java sends 0)");
            assertEquals("1", f[2], "DF bit of frame " + f[0]);
        }
    }

    /** A request from A to B's QP. */
    private static void req(List<Expect> e, int qpnB, int opcode, int psn, Boolean ackReq, int pad, long dmaLen) {
        e.add(new Expect(true, qpnB, opcode, psn & 0xFFFFFF, ackReq, pad, -1, dmaLen));
    }

    /** A response from B to A's QP. */
    private static void ack(List<Expect> e, int qpnA, int opcode, int psn, int msn) {
        e.add(new Expect(false, qpnA, opcode, psn & 0xFFFFFF, null, 0, msn, -1));
    }

    /** Posts one WR from {@code from}, waits for its completion (and the receive at {@code to} if it takes one). */
    private static void run(Harness h, Peer from, Peer to, SendWr wr, boolean consumesRecv) {
        from.post(wr);
        WorkCompletion wc = h.await(from.sendCq(), wr.opcode() + " " + wr.wrId());
        assertEquals(WcStatus.SUCCESS, wc.status(), wc.toString());
        if (consumesRecv) {
            WorkCompletion r = h.await(to.recvCq(), "receive of " + wr.opcode());
            assertEquals(WcStatus.SUCCESS, r.status(), r.toString());
        }
    }

    private static void check(Expect e, Packet p, int i, StringBuilder trace) {
        String what = "packet " + i + " " + p + " (expected " + e + "); capture:" + trace;
        assertEquals(e.opcode(), p.opcode(), "opcode of " + what);
        assertEquals(e.aToB() ? IP_A : IP_B, p.src(), "source of " + what);
        assertEquals(e.aToB() ? IP_B : IP_A, p.dst(), "destination of " + what);
        assertEquals(Integer.toHexString(e.destQp()), Integer.toHexString(p.destQp()), "BTH DestQP of " + what);
        assertEquals(Integer.toHexString(e.psn()), Integer.toHexString(p.psn()), "BTH PSN of " + what);
        if (e.ackReq() != null) {
            assertEquals(e.ackReq(), p.ackReq(), "BTH AckReq of " + what);
        }
        assertEquals(e.pad(), p.padCnt(), "BTH PadCnt of " + what);
        if (e.msn() >= 0) {
            // AETH syndrome: type ACK (bits 6:5 = 00) with rxe's "unlimited credits" 0x1F; MSN counts messages.
            assertEquals(0x1F, p.syndrome(), "AETH syndrome of " + what);
            assertEquals(e.msn(), p.msn(), "AETH MSN of " + what);
        } else {
            assertEquals(-1, p.syndrome(), "no AETH on " + what);
        }
        if (e.dmaLen() >= 0) {
            assertEquals(e.dmaLen(), p.dmaLen(), "RETH DMA length of " + what);
        }
    }

    private static List<String> scapyIcrc(Path dir, Path pcap) throws IOException {
        Path script = dir.resolve("icrc_check.py");
        try (InputStream in = WireOracleTest.class.getResourceAsStream("icrc_check.py")) {
            assertTrue(in != null, "icrc_check.py is on the test class path");
            Files.copy(in, script);
        }
        List<String> cmd = new ArrayList<>(List.of(Tools.PYTHON, script.toString()));
        for (String probeHost : Capture.PROBE_HOSTS) {
            cmd.add("--exclude-host");
            cmd.add(probeHost);
        }
        cmd.add(pcap.toString());
        Tools.Result r = Tools.run(cmd, 120);
        assertEquals(0, r.exit(), "scapy ICRC check failed to run:\n" + r.output());
        List<String> out = new ArrayList<>();
        for (String l : Tools.lines(r.output())) {
            if (Character.isDigit(l.charAt(0))) {
                out.add(l);
            }
        }
        return out;
    }
}
