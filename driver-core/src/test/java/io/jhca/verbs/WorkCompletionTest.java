package io.jhca.verbs;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;

import java.util.List;
import java.util.function.Consumer;

import org.junit.jupiter.api.Test;

/**
 * A reused completion never shows a field of an earlier one: {@code set} clears every field beyond its five, whichever
 * setter wrote it, also when the completion came by {@code copyFrom}, and a completion of an error or a receive
 * followed by a send completion reads as the send completion alone.
 */
class WorkCompletionTest {

    private static final List<Consumer<WorkCompletion>> EXTRAS = List.of(
            wc -> wc.vendorErr(0x81),
            wc -> wc.immData(0x12345678),
            wc -> wc.srcQp(0x11),
            wc -> wc.wcFlags(WcFlags.GRH),
            wc -> wc.pkeyIndex(3),
            wc -> wc.slid(0x2a),
            wc -> wc.sl(7),
            wc -> wc.solicited(true),
            wc -> wc.invalidatedRkey(0xabcd));

    @Test
    void setClearsWhatEachSetterWrote() {
        for (int i = 0; i < EXTRAS.size(); i++) {
            WorkCompletion wc = new WorkCompletion().set(1, WcStatus.SUCCESS, WcOpcode.RECV, 0x10, 64);
            EXTRAS.get(i).accept(wc);
            wc.set(2, WcStatus.SUCCESS, WcOpcode.RDMA_WRITE, 0x20, 0);
            assertOnlyTheFive(wc, "after setter " + i);
        }
    }

    @Test
    void setClearsEveryExtraAtOnceAndAgainAfterACleanSet() {
        WorkCompletion wc = new WorkCompletion().set(1, WcStatus.REM_ACCESS_ERR, WcOpcode.RECV, 0x10, 64);
        EXTRAS.forEach(e -> e.accept(wc));
        wc.set(2, WcStatus.SUCCESS, WcOpcode.RDMA_WRITE, 0x20, 0);
        assertOnlyTheFive(wc, "after all setters");
        wc.set(3, WcStatus.SUCCESS, WcOpcode.RDMA_WRITE, 0x20, 0);
        assertOnlyTheFive(wc, "a clean set after a clean set");
        wc.immData(5);
        wc.set(4, WcStatus.SUCCESS, WcOpcode.RDMA_WRITE, 0x20, 0);
        assertOnlyTheFive(wc, "an extra written after clean sets");
    }

    @Test
    void aCopyCarriesItsExtrasAndSetClearsThem() {
        WorkCompletion from = new WorkCompletion().set(1, WcStatus.SUCCESS, WcOpcode.RECV_RDMA_WITH_IMM, 0x10, 64)
                .immData(9).srcQp(0x33);
        WorkCompletion wc = new WorkCompletion().copyFrom(from);
        assertEquals(9, wc.immData());
        assertEquals(0x33, wc.srcQp());
        assertEquals(WcFlags.WITH_IMM, wc.wcFlags());
        wc.set(2, WcStatus.SUCCESS, WcOpcode.SEND, 0x20, 0);
        assertOnlyTheFive(wc, "a copy, then set");
    }

    @Test
    void setReceiveWritesTheSourceFieldsAndClearsEveryOtherExtra() {
        for (int i = 0; i < EXTRAS.size(); i++) {
            WorkCompletion wc = new WorkCompletion().set(1, WcStatus.LOC_LEN_ERR, WcOpcode.RECV, 0x10, 64);
            EXTRAS.get(i).accept(wc);
            wc.setReceive(2, WcOpcode.RECV, 0x20, 128, 0x33, 5, 0x2b, WcFlags.GRH);
            String when = "setReceive after setter " + i;
            assertEquals(2, wc.wrId(), when);
            assertEquals(WcStatus.SUCCESS, wc.status(), when);
            assertEquals(WcOpcode.RECV, wc.opcode(), when);
            assertEquals(0x20, wc.qpNum(), when);
            assertEquals(128, wc.byteLen(), when);
            assertEquals(0x33, wc.srcQp(), when);
            assertEquals(5, wc.sl(), when);
            assertEquals(0x2b, wc.slid(), when);
            assertEquals(WcFlags.GRH, wc.wcFlags(), when);
            assertEquals(0, wc.vendorErr(), when);
            assertEquals(0, wc.immData(), when);
            assertEquals(0, wc.pkeyIndex(), when);
            assertEquals(0, wc.dlidPathBits(), when);
            assertFalse(wc.solicited(), when);
            assertEquals(0, wc.invalidatedRkey(), when);
        }
    }

    @Test
    void setAfterSetReceiveClearsTheSourceFieldsAlsoAfterACopy() {
        WorkCompletion wc = new WorkCompletion().setReceive(1, WcOpcode.RECV, 0x10, 64, 0x33, 5, 0x2b, WcFlags.GRH);
        wc.set(2, WcStatus.SUCCESS, WcOpcode.SEND, 0x20, 0);
        assertOnlyTheFive(wc, "set after setReceive");
        WorkCompletion from = new WorkCompletion().setReceive(1, WcOpcode.RECV, 0x10, 64, 0x33, 5, 0x2b, 0).immData(9);
        WorkCompletion copy = new WorkCompletion().copyFrom(from);
        assertEquals(WcFlags.WITH_IMM, copy.wcFlags());
        copy.set(2, WcStatus.SUCCESS, WcOpcode.SEND, 0x20, 0);
        assertOnlyTheFive(copy, "a copy of a receive, then set");
        WorkCompletion zero = new WorkCompletion().setReceive(1, WcOpcode.RECV, 0x10, 64, 0x33, 0, 0, 0);
        zero.setReceive(2, WcOpcode.RECV, 0x10, 64, 0, 0, 0, 0);
        assertOnlyTheFive(zero, "a receive with zero source fields after one with a source QP");
    }

    private static void assertOnlyTheFive(WorkCompletion wc, String when) {
        assertEquals(0, wc.vendorErr(), when);
        assertEquals(0, wc.immData(), when);
        assertEquals(0, wc.srcQp(), when);
        assertEquals(0, wc.wcFlags(), when);
        assertEquals(0, wc.pkeyIndex(), when);
        assertEquals(0, wc.slid(), when);
        assertEquals(0, wc.sl(), when);
        assertEquals(0, wc.dlidPathBits(), when);
        assertFalse(wc.solicited(), when);
        assertEquals(0, wc.invalidatedRkey(), when);
    }
}
