package io.jhca.tests.traffic;

import io.jhca.tests.harness.DevicePair;
import io.jhca.tests.harness.DevicePairs;
import io.jhca.tests.harness.Harness;
import io.jhca.tests.harness.Payloads;
import io.jhca.tests.harness.Peer;
import io.jhca.tests.harness.PeerSpec;
import io.jhca.tests.harness.Wcs;
import io.jhca.verbs.WcOpcode;
import io.jhca.verbs.WorkCompletion;
import io.jhca.verbs.WrOpcode;

import java.time.Duration;
import java.util.stream.Stream;

import org.agrona.concurrent.UnsafeBuffer;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

import static org.junit.jupiter.api.Assertions.assertEquals;

/**
 * Every RC opcode at sizes 0, 1, PMTU-1, PMTU, PMTU+1, 3*PMTU+5 and 1 MiB (atomics: 8 bytes), posted both ways,
 * on every device pair: the bytes arrive exactly (nothing beyond them is touched) and every completion carries
 * the right status, opcode, byte_len, immediate, qp_num and wr_id.
 */
class RcOpcodeTest {
    private static final int MIB = 1 << 20;
    private static final int CANARY = 64;
    private static final byte CANARY_BYTE = 0x5A;
    private static final int LOCAL_OFF = 4096;

    static Stream<Arguments> cases() {
        // the memory window operations (no data of their own) are MemoryWindowTest's
        return DevicePairs.all().flatMap(p -> Stream.of(WrOpcode.values())
                .filter(op -> !op.isLocal() && op != WrOpcode.SEND_WITH_INV)
                .flatMap(op -> Stream.of(Style.values()).map(s -> Arguments.of(p, op, s))));
    }

    @ParameterizedTest(name = "{0} {1} {2}")
    @MethodSource("cases")
    void opcodeAtEverySize(DevicePair pair, WrOpcode op, Style style) {
        try (Harness h = Harness.open(pair)) {
            PeerSpec spec = PeerSpec.rc().bufferBytes(MIB + 2 * LOCAL_OFF + CANARY);
            Peer a = h.peerA(spec);
            Peer b = h.peerB(spec);
            h.connect(a, b);
            int mtu = h.activeMtu().bytes();
            int[] sizes = op.isAtomic() ? new int[] {8} : new int[] {0, 1, mtu - 1, mtu, mtu + 1, 3 * mtu + 5, MIB};
            long wrId = 1000;
            for (int size : sizes) {
                wrId++;
                String what = op + " of " + size + " bytes (" + style + ", PMTU " + mtu + ")";
                if (op.isAtomic()) {
                    atomic(h, a, b, op, style, wrId, what);
                } else {
                    transfer(h, a, b, op, style, size, wrId, what);
                }
            }
        }
    }

    private static void transfer(Harness h, Peer a, Peer b, WrOpcode op, Style style, int size, long wrId, String what) {
        long seed = wrId * 31 + op.ordinal();
        int imm = 0x80C0FFEE ^ (int) wrId;
        UnsafeBuffer ab = a.buf();
        UnsafeBuffer bb = b.buf();
        Payloads.set(ab, 0, ab.capacity(), (byte) 0);
        Payloads.set(bb, 0, bb.capacity(), CANARY_BYTE);
        boolean read = op == WrOpcode.RDMA_READ;
        if (read) {
            Payloads.fill(bb, 0, size, seed);
            Payloads.set(ab, LOCAL_OFF, size + CANARY, CANARY_BYTE);
        } else {
            Payloads.fill(ab, LOCAL_OFF, size, seed);
        }
        boolean consumesRecv = op == WrOpcode.SEND || op == WrOpcode.SEND_WITH_IMM || op == WrOpcode.RDMA_WRITE_WITH_IMM;
        if (consumesRecv) {
            // The receive buffer is larger than the message: byte_len must say the message size and the rest stays.
            b.postRecv(wrId + 50_000, 0, size + CANARY);
        }
        style.post(a, wrId, op, LOCAL_OFF, size, b, 0, imm, 0, 0);

        WorkCompletion swc = h.await(a.sendCq(), "send completion of " + what);
        Wcs.assertSuccess(swc, op.completionOpcode(), wrId, a.qpn(), what);
        if (read) {
            assertEquals(size, swc.byteLen(), "byte_len of the RDMA READ completion: " + swc);
        }
        switch (op) {
            case SEND -> Wcs.assertRecv(h.await(b.recvCq(), "receive of " + what), WcOpcode.RECV, wrId + 50_000, b.qpn(), size, null, what);
            case SEND_WITH_IMM -> Wcs.assertRecv(h.await(b.recvCq(), "receive of " + what), WcOpcode.RECV, wrId + 50_000, b.qpn(), size, imm, what);
            case RDMA_WRITE_WITH_IMM -> Wcs.assertRecv(h.await(b.recvCq(), "receive of " + what), WcOpcode.RECV_RDMA_WITH_IMM,
                    wrId + 50_000, b.qpn(), size, imm, what);
            default -> h.assertNoCompletion(b.recvCq(), Duration.ofMillis(5), what + " consumes no receive");
        }
        if (read) {
            Payloads.assertPayload(ab, LOCAL_OFF, size, seed, what + " data read");
            Payloads.assertFilled(ab, LOCAL_OFF + size, CANARY, CANARY_BYTE, what + " bytes after the read");
        } else {
            Payloads.assertPayload(bb, 0, size, seed, what + " data at the responder");
            Payloads.assertFilled(bb, size, CANARY, CANARY_BYTE, what + " bytes after the message");
        }
    }

    private static void atomic(Harness h, Peer a, Peer b, WrOpcode op, Style style, long wrId, String what) {
        UnsafeBuffer ab = a.buf();
        UnsafeBuffer bb = b.buf();
        // Atomics act on a 64-bit word in the responder's memory, in its native (here little-endian) order.
        long original = 0x1122334455667788L;
        bb.putLong(0, original);
        bb.putLong(8, 0x0badf00d0badf00dL);
        ab.putLong(LOCAL_OFF, 0);
        if (op == WrOpcode.ATOMIC_CMP_AND_SWP) {
            long swap = 0x8877665544332211L;
            style.post(a, wrId, op, LOCAL_OFF, 8, b, 0, 0, original, swap);
            Wcs.assertSuccess(h.await(a.sendCq(), what), WcOpcode.COMP_SWAP, wrId, a.qpn(), what);
            assertEquals(original, ab.getLong(LOCAL_OFF), what + ": the original value comes back");
            assertEquals(swap, bb.getLong(0), what + ": compare matched, swap stored");
            // A compare that does not match leaves memory alone and still returns the current value.
            style.post(a, wrId + 1, op, LOCAL_OFF, 8, b, 0, 0, original, 42);
            Wcs.assertSuccess(h.await(a.sendCq(), what + " (mismatch)"), WcOpcode.COMP_SWAP, wrId + 1, a.qpn(), what);
            assertEquals(swap, ab.getLong(LOCAL_OFF), what + " (mismatch): current value returned");
            assertEquals(swap, bb.getLong(0), what + " (mismatch): memory unchanged");
        } else {
            long add = 0x0000000100000001L;
            style.post(a, wrId, op, LOCAL_OFF, 8, b, 0, 0, add, 0);
            WorkCompletion wc = h.await(a.sendCq(), what);
            Wcs.assertSuccess(wc, WcOpcode.FETCH_ADD, wrId, a.qpn(), what);
            assertEquals(8, wc.byteLen(), "byte_len of an atomic completion: " + wc);
            assertEquals(original, ab.getLong(LOCAL_OFF), what + ": the original value comes back");
            assertEquals(original + add, bb.getLong(0), what + ": the sum is stored");
            // Carry across the 32-bit halves and wrap-around at 2^64.
            bb.putLong(0, -1L);
            style.post(a, wrId + 1, op, LOCAL_OFF, 8, b, 0, 0, 2, 0);
            Wcs.assertSuccess(h.await(a.sendCq(), what + " (wrap)"), WcOpcode.FETCH_ADD, wrId + 1, a.qpn(), what);
            assertEquals(-1L, ab.getLong(LOCAL_OFF), what + " (wrap): original");
            assertEquals(1L, bb.getLong(0), what + " (wrap): sum modulo 2^64");
        }
        assertEquals(0x0badf00d0badf00dL, bb.getLong(8), what + ": the next word is untouched");
    }
}
