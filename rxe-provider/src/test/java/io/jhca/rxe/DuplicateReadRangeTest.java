package io.jhca.rxe;

import static org.junit.jupiter.api.Assertions.assertEquals;

import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

import io.jhca.rxe.transport.RxeCounters.Counter;
import io.jhca.verbs.Mtu;
import io.jhca.verbs.QpState;
import io.jhca.verbs.SendFlags;
import io.jhca.verbs.SendWr;
import io.jhca.verbs.WcStatus;
import io.jhca.verbs.WrOpcode;

/**
 * A duplicate READ is replayed only if its span lies inside the original READ's and it names the original's rkey
 * (rxe_resp.c duplicate_request): spans whose end wraps past 2^63 or 2^64, or that start before or end after the
 * original, and the original span under another key, are stale duplicates (dropped and counted) and leave the
 * responder in RTS.
 */
class DuplicateReadRangeTest {

    @ParameterizedTest(name = "va {0} length {1}")
    @CsvSource({
            "0x7FFFFFFFFFFFFF00, 0x100", // va + length wraps to Long.MIN_VALUE
            "0x7FFFFFFFFFFFFFFF, 0x10",
            "0xFFFFFFFFFFFFFF00, 0x200", // wraps past 2^64 to a small address
            "-1, 0",                     // a zero-length span outside
            "+1, 0x1000",                // one byte past the original's end (offset from its VA)
            "-1, 0x10",                  // one byte before its start (offset from its VA)
            "+0, 0x1001",                // longer than the original
    })
    void duplicateReadOutsideTheOriginalSpanIsDropped(final String vaText, final String lengthText) throws Exception {
        try (Rig r = Rig.rc(ProgressMode.CALLER, 1 << 16, Mtu.MTU_1024); Forger peer = new Forger(r.a, r.b)) {
            final long base = r.mrB.address();
            r.qpA.postSend(read(1, r, base, 4096));
            r.expect(r.cqA, 1, WcStatus.SUCCESS); // B now remembers the READ at PSN 0x1000..0x1003
            final long va = vaText.startsWith("+") || vaText.startsWith("-")
                    ? base + Long.decode(vaText) : Long.parseUnsignedLong(vaText.substring(2), 16);
            droppedAsStale(r, peer, va, r.mrB.rkey(), Integer.decode(lengthText));
        }
    }

    /** The original's span under the MR's key with another key byte (a stale rkey of the same MR). */
    @ParameterizedTest(name = "key byte + {0}")
    @CsvSource({"1", "255"})
    void duplicateReadUnderAnotherRkeyIsDropped(final int keyByteStep) throws Exception {
        try (Rig r = Rig.rc(ProgressMode.CALLER, 1 << 16, Mtu.MTU_1024); Forger peer = new Forger(r.a, r.b)) {
            final long base = r.mrB.address();
            r.qpA.postSend(read(1, r, base, 4096));
            r.expect(r.cqA, 1, WcStatus.SUCCESS);
            final int rkey = r.mrB.rkey() & ~0xFF | (r.mrB.rkey() + keyByteStep) & 0xFF;
            droppedAsStale(r, peer, base + 0x400, rkey, 0x400);
        }
    }

    /** Forges a duplicate of the READ at PSN 0x1000 (its second packet's PSN) and expects it dropped as stale. */
    private static void droppedAsStale(final Rig r, final Forger peer, final long va, final int rkey, final int length)
            throws Exception {
        final long before = r.b.counters().get(Counter.DROP_STALE_DUPLICATE);
        peer.readRequest(r.qpB.qpn(), 0x1001, va, rkey, length);
        r.await(() -> r.b.counters().get(Counter.DROP_STALE_DUPLICATE) > before, "the duplicate dropped as stale");
        assertEquals(QpState.RTS, r.qpB.state());
        assertEquals(1, r.b.counters().get(Counter.DUPLICATE_REQUEST));
        r.qpA.postSend(read(2, r, r.mrB.address(), 4096));
        r.expect(r.cqA, 2, WcStatus.SUCCESS);
    }

    private static SendWr read(final long id, final Rig r, final long va, final int length) {
        return new SendWr().wrId(id).opcode(WrOpcode.RDMA_READ).sendFlags(SendFlags.SIGNALED).sge(r.mrA, 0, length)
                .rdma(va, r.mrB.rkey());
    }
}
