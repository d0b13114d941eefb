package io.jhca.connectx;

import static org.junit.jupiter.api.Assertions.assertEquals;

import java.nio.ByteBuffer;
import java.util.HexFormat;

/**
 * Expected CQEs built byte by byte from mlx5dv.h's layout (struct mlx5_cqe64 / struct mlx5_err_cqe offsets written
 * out here, not taken from the model), every multi-byte field big-endian, every other byte zero.
 */
final class CqeBytes {

    private CqeBytes() {
    }

    /** A requester CQE: opcode REQ (0). */
    static byte[] req(int wqeOpcode, int qpn, int wqeCounter, int byteCnt, int userIndex, int owner) {
        ByteBuffer b = ByteBuffer.allocate(64);
        b.putInt(32, userIndex);                    // srqn_uidx
        b.putInt(44, byteCnt);                      // byte_cnt
        b.putInt(56, wqeOpcode << 24 | qpn);        // sop_drop_qpn
        b.putShort(60, (short) wqeCounter);         // wqe_counter
        b.put(63, (byte) (0x0 << 4 | owner));       // op_own: MLX5_CQE_REQ
        return b.array();
    }

    /** A responder CQE: RESP_WR_IMM 1, RESP_SEND 2, RESP_SEND_IMM 3. */
    static byte[] resp(int cqeOpcode, int qpn, int wqeCounter, int byteCnt, int imm, int flagsRqpn, int l4HdrTypeEtc,
            int userIndex, int owner) {
        ByteBuffer b = ByteBuffer.allocate(64);
        b.putInt(24, flagsRqpn);                    // flags_rqpn
        b.put(29, (byte) l4HdrTypeEtc);             // l4_hdr_type_etc
        b.putInt(32, userIndex);                    // srqn_uidx
        b.putInt(36, imm);                          // imm_inval_pkey
        b.putInt(44, byteCnt);                      // byte_cnt
        b.putInt(56, qpn);                          // sop_drop_qpn
        b.putShort(60, (short) wqeCounter);         // wqe_counter
        b.put(63, (byte) (cqeOpcode << 4 | owner));
        return b.array();
    }

    /** An error CQE: REQ_ERR 13 (with the WQE opcode) or RESP_ERR 14. */
    static byte[] err(boolean requester, int wqeOpcode, int qpn, int wqeCounter, int syndrome, int vendor,
            int userIndex, int owner) {
        ByteBuffer b = ByteBuffer.allocate(64);
        b.putInt(32, userIndex);                    // srqn
        b.put(54, (byte) vendor);                   // vendor_err_synd
        b.put(55, (byte) syndrome);                 // syndrome
        b.putInt(56, (requester ? wqeOpcode << 24 : 0) | qpn); // s_wqe_opcode_qpn
        b.putShort(60, (short) wqeCounter);         // wqe_counter
        b.put(63, (byte) ((requester ? 13 : 14) << 4 | owner));
        return b.array();
    }

    static void assertCqe(byte[] expected, byte[] actual) {
        assertEquals(HexFormat.ofDelimiter(" ").formatHex(expected), HexFormat.ofDelimiter(" ").formatHex(actual),
                "CQE bytes");
    }
}
