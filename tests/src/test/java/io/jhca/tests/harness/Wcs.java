package io.jhca.tests.harness;

import io.jhca.verbs.WcFlags;
import io.jhca.verbs.WcOpcode;
import io.jhca.verbs.WcStatus;
import io.jhca.verbs.WorkCompletion;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** Assertions on work completions, each naming the completion in full when it fails. */
public final class Wcs {
    private Wcs() {
    }

    /** Status, wr_id and qp_num: what every completion, flushed ones included, must carry right. */
    public static void assertStatus(WorkCompletion wc, WcStatus status, long wrId, int qpn, String what) {
        String ctx = what + ": " + wc;
        assertEquals(status, wc.status(), ctx);
        assertEquals(wrId, wc.wrId(), "wr_id of " + ctx);
        assertEquals(Integer.toHexString(qpn), Integer.toHexString(wc.qpNum()), "qp_num of " + ctx);
    }

    /** A successful completion with the given opcode. */
    public static void assertSuccess(WorkCompletion wc, WcOpcode opcode, long wrId, int qpn, String what) {
        assertStatus(wc, WcStatus.SUCCESS, wrId, qpn, what);
        assertEquals(opcode, wc.opcode(), "opcode of " + what + ": " + wc);
    }

    /** A successful receive: opcode, byte_len and the immediate (null: none must be flagged). */
    public static void assertRecv(WorkCompletion wc, WcOpcode opcode, long wrId, int qpn, int byteLen, Integer imm,
                                  String what) {
        assertSuccess(wc, opcode, wrId, qpn, what);
        assertEquals(byteLen, wc.byteLen(), "byte_len of " + what + ": " + wc);
        if (imm == null) {
            assertEquals(0, wc.wcFlags() & WcFlags.WITH_IMM, "no WITH_IMM flag on " + what + ": " + wc);
        } else {
            assertTrue((wc.wcFlags() & WcFlags.WITH_IMM) != 0, "WITH_IMM flag on " + what + ": " + wc);
            assertEquals(Integer.toHexString(imm), Integer.toHexString(wc.immData()), "imm_data of " + what + ": " + wc);
        }
    }
}
