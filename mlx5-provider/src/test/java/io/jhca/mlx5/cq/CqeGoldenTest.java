package io.jhca.mlx5.cq;

import static io.jhca.mlx5.wqe.GoldenC.bytes;
import static io.jhca.mlx5.wqe.GoldenC.int32;
import static io.jhca.mlx5.wqe.GoldenC.num;
import static org.junit.jupiter.api.Assertions.assertEquals;

import java.nio.file.Path;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

import io.jhca.mlx5.wqe.GoldenC;
import org.agrona.concurrent.UnsafeBuffer;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The CQE readers against mlx5dv.h (libibverbs-dev): the C program sets every named field of
 * {@code struct mlx5_cqe64} / {@code struct mlx5_err_cqe} over random bytes and prints the values and the
 * 64 bytes (plus what the mlx5dv_get_cqe_* helpers read from op_own); the flyweights must read each value back.
 */
class CqeGoldenTest {

    private static final int COUNT = 2000;

    @TempDir
    static Path dir;
    private static Path exe;

    @BeforeAll
    static void build() throws Exception {
        exe = GoldenC.compile("cqe_golden", dir);
    }

    @Test
    void layoutsMatchTheHeader() throws Exception {
        Map<String, int[]> java = new HashMap<>();
        java.put("mlx5_cqe64", new int[] {Cqe64.SIZE});
        java.put("mlx5_cqe64.wqe_id", new int[] {Cqe64.WQE_ID_OFFSET, 2});
        java.put("mlx5_cqe64.ml_path", new int[] {Cqe64.ML_PATH_OFFSET, 1});
        java.put("mlx5_cqe64.slid", new int[] {Cqe64.SLID_OFFSET, 2});
        java.put("mlx5_cqe64.flags_rqpn", new int[] {Cqe64.FLAGS_RQPN_OFFSET, 4});
        java.put("mlx5_cqe64.hds_ip_ext", new int[] {Cqe64.HDS_IP_EXT_OFFSET, 1});
        java.put("mlx5_cqe64.l4_hdr_type_etc", new int[] {Cqe64.L4_HDR_TYPE_ETC_OFFSET, 1});
        java.put("mlx5_cqe64.vlan_info", new int[] {Cqe64.VLAN_INFO_OFFSET, 2});
        java.put("mlx5_cqe64.srqn_uidx", new int[] {Cqe64.SRQN_UIDX_OFFSET, 4});
        java.put("mlx5_cqe64.imm_inval_pkey", new int[] {Cqe64.IMM_INVAL_PKEY_OFFSET, 4});
        java.put("mlx5_cqe64.app", new int[] {Cqe64.APP_OFFSET, 1});
        java.put("mlx5_cqe64.app_op", new int[] {Cqe64.APP_OP_OFFSET, 1});
        java.put("mlx5_cqe64.app_info", new int[] {Cqe64.APP_INFO_OFFSET, 2});
        java.put("mlx5_cqe64.byte_cnt", new int[] {Cqe64.BYTE_CNT_OFFSET, 4});
        java.put("mlx5_cqe64.timestamp", new int[] {Cqe64.TIMESTAMP_OFFSET, 8});
        java.put("mlx5_cqe64.sop_drop_qpn", new int[] {Cqe64.SOP_DROP_QPN_OFFSET, 4});
        java.put("mlx5_cqe64.wqe_counter", new int[] {Cqe64.WQE_COUNTER_OFFSET, 2});
        java.put("mlx5_cqe64.signature", new int[] {Cqe64.SIGNATURE_OFFSET, 1});
        java.put("mlx5_cqe64.op_own", new int[] {Cqe64.OP_OWN_OFFSET, 1});
        java.put("mlx5_err_cqe", new int[] {ErrCqe.SIZE});
        java.put("mlx5_err_cqe.srqn", new int[] {ErrCqe.SRQN_OFFSET, 4});
        java.put("mlx5_err_cqe.vendor_err_synd", new int[] {ErrCqe.VENDOR_ERR_SYND_OFFSET, 1});
        java.put("mlx5_err_cqe.syndrome", new int[] {ErrCqe.SYNDROME_OFFSET, 1});
        java.put("mlx5_err_cqe.s_wqe_opcode_qpn", new int[] {ErrCqe.S_WQE_OPCODE_QPN_OFFSET, 4});
        java.put("mlx5_err_cqe.wqe_counter", new int[] {ErrCqe.WQE_COUNTER_OFFSET, 2});
        java.put("mlx5_err_cqe.signature", new int[] {ErrCqe.SIGNATURE_OFFSET, 1});
        java.put("mlx5_err_cqe.op_own", new int[] {ErrCqe.OP_OWN_OFFSET, 1});

        GoldenC.checkLayouts(exe, java);
    }

    @Test
    void seed1() throws Exception {
        vectors("1");
    }

    @Test
    void seed2() throws Exception {
        vectors("0xbb67ae8584caa73b");
    }

    private void vectors(String seed) throws Exception {
        List<String[]> lines = GoldenC.run(exe, seed, Integer.toString(COUNT));
        // a 128-byte CQE slot: the mlx5_cqe64 is its second half
        UnsafeBuffer ring = new UnsafeBuffer(new byte[256]);
        Cqe64 cqe = new Cqe64();
        ErrCqe err = new ErrCqe();
        int cqes = 0;
        int errs = 0;
        for (String[] t : lines) {
            String where = "seed " + seed + ": " + String.join(" ", t);
            if (t[0].equals("cqe64")) {
                ring.putBytes(128 + 64, bytes(t[23]));
                cqe.wrap(ring, 128 + 64);
                assertEquals(int32(t[1]), cqe.wqeId(), "wqe_id " + where);
                assertEquals(int32(t[2]), cqe.mlPath(), "ml_path " + where);
                assertEquals(int32(t[3]), cqe.slid(), "slid " + where);
                assertEquals(int32(t[4]), cqe.flagsRqpn(), "flags_rqpn " + where);
                assertEquals(int32(t[4]) >>> 24 & 0xf, cqe.sl(), "sl " + where);
                assertEquals(int32(t[4]) & 0xffffff, cqe.rqpn(), "rqpn " + where);
                assertEquals(int32(t[5]), cqe.hdsIpExt(), "hds_ip_ext " + where);
                assertEquals(int32(t[6]), cqe.l4HdrTypeEtc(), "l4_hdr_type_etc " + where);
                assertEquals(int32(t[6]) >> 2 & 3, cqe.l3HdrType(), "l3 type " + where);
                assertEquals(int32(t[7]), cqe.vlanInfo(), "vlan_info " + where);
                assertEquals(int32(t[8]), cqe.srqnUidx(), "srqn_uidx " + where);
                assertEquals(int32(t[8]) & 0xffffff, cqe.srqn(), "srqn " + where);
                assertEquals(int32(t[9]), cqe.immInvalPkey(), "imm_inval_pkey " + where);
                assertEquals(int32(t[10]), cqe.app(), "app " + where);
                assertEquals(int32(t[11]), cqe.appOp(), "app_op " + where);
                assertEquals(int32(t[12]), cqe.appInfo(), "app_info " + where);
                assertEquals(int32(t[13]), cqe.byteCnt(), "byte_cnt " + where);
                assertEquals(num(t[14]), cqe.timestamp(), "timestamp " + where);
                assertEquals(int32(t[15]), cqe.sopDropQpn(), "sop_drop_qpn " + where);
                assertEquals(int32(t[15]) >>> 24, cqe.sendOpcode(), "send opcode " + where);
                assertEquals(int32(t[15]) & 0xffffff, cqe.qpn(), "qpn " + where);
                assertEquals(int32(t[16]), cqe.wqeCounter(), "wqe_counter " + where);
                long tail = Cqe64.tail(ring, 128 + 64);   // the poller's one load of the last 8 bytes
                assertEquals(int32(t[15]) & 0xffffff, Cqe64.tailQpn(tail), "tail qpn " + where);
                assertEquals(int32(t[15]) >>> 24, Cqe64.tailSendOpcode(tail), "tail send opcode " + where);
                assertEquals(int32(t[16]), Cqe64.tailWqeCounter(tail), "tail wqe_counter " + where);
                assertEquals(int32(t[18]), (int) tail & 0xff, "tail op_own " + where);
                // the responder's words (CqPoller)
                assertEquals(int32(t[3]), Cqe64.slidOf(Cqe64.word(ring, 128 + 64, 16)), "word slid " + where);
                assertEquals(int32(t[4]), Cqe64.flagsRqpnOf(Cqe64.word(ring, 128 + 64, 24)), "word flags_rqpn " + where);
                assertEquals(int32(t[9]), Cqe64.immInvalPkeyOf(Cqe64.word(ring, 128 + 64, 32)), "word imm " + where);
                assertEquals(int32(t[13]), Cqe64.byteCntOf(Cqe64.word(ring, 128 + 64, 40)), "word byte_cnt " + where);
                assertEquals(int32(t[17]), cqe.signature(), "signature " + where);
                assertEquals(int32(t[18]), cqe.opOwn(), "op_own " + where);
                assertEquals(int32(t[19]), cqe.owner(), "mlx5dv_get_cqe_owner " + where);
                assertEquals(int32(t[20]), cqe.se(), "mlx5dv_get_cqe_se " + where);
                assertEquals(int32(t[21]), cqe.format(), "mlx5dv_get_cqe_format " + where);
                assertEquals(int32(t[22]), cqe.opcode(), "mlx5dv_get_cqe_opcode " + where);
                cqes++;
            } else if (t[0].equals("errcqe")) {
                ring.putBytes(64, bytes(t[8]));
                err.wrap(ring, 64);
                assertEquals(int32(t[1]), err.srqn(), "srqn " + where);
                assertEquals(int32(t[2]), err.vendorErrSynd(), "vendor_err_synd " + where);
                assertEquals(int32(t[3]), err.syndrome(), "syndrome " + where);
                assertEquals(int32(t[4]), err.sWqeOpcodeQpn(), "s_wqe_opcode_qpn " + where);
                assertEquals(int32(t[4]) >>> 24, err.wqeOpcode(), "wqe opcode " + where);
                assertEquals(int32(t[4]) & 0xffffff, err.qpn(), "qpn " + where);
                assertEquals(int32(t[5]), err.wqeCounter(), "wqe_counter " + where);
                assertEquals(int32(t[6]), err.signature(), "signature " + where);
                assertEquals(int32(t[7]), err.opOwn(), "op_own " + where);
                assertEquals(int32(t[7]) >>> 4, err.opcode(), "opcode " + where);
                assertEquals(true, CqeOpcode.isError(err.opcode()), where);
                errs++;
            }
        }
        assertEquals(COUNT, cqes, "cqe64 vectors");
        assertEquals(COUNT, errs, "err cqe vectors");
    }
}
