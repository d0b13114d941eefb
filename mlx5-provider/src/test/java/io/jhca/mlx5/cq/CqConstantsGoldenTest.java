package io.jhca.mlx5.cq;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Path;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;

import io.jhca.mlx5.wqe.GoldenC;
import io.jhca.verbs.WcOpcode;
import io.jhca.verbs.WcStatus;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * CQE opcodes, syndromes, ibv_wc_status / ibv_wc_opcode values and the syndrome and opcode tables, pinned to
 * the numbers of mlx5dv.h / verbs.h (libibverbs-dev). The tables are rdma-core providers/mlx5/cq.c's
 * (mlx5_handle_error_cqe, handle_good_req, handle_responder), spelled in the headers' names by the C program.
 */
class CqConstantsGoldenTest {

    @TempDir
    static Path dir;
    private static List<String[]> lines;
    private static final Map<String, Long> C = new HashMap<>();

    @BeforeAll
    static void build() throws Exception {
        lines = GoldenC.run(GoldenC.compile("constants_golden", dir));
        for (String[] t : lines) {
            if (t[0].equals("const")) {
                C.put(t[1], Long.parseLong(t[2]));
            }
        }
    }

    private static void check(String name, long java) {
        assertTrue(C.containsKey(name), name + " printed by constants_golden");
        assertEquals(C.get(name), java, name);
    }

    @Test
    void cqeConstants() {
        check("MLX5_CQE_OWNER_MASK", 1);
        check("MLX5_CQE_REQ", CqeOpcode.REQ);
        check("MLX5_CQE_RESP_WR_IMM", CqeOpcode.RESP_WR_IMM);
        check("MLX5_CQE_RESP_SEND", CqeOpcode.RESP_SEND);
        check("MLX5_CQE_RESP_SEND_IMM", CqeOpcode.RESP_SEND_IMM);
        check("MLX5_CQE_RESP_SEND_INV", CqeOpcode.RESP_SEND_INV);
        check("MLX5_CQE_RESIZE_CQ", CqeOpcode.RESIZE_CQ);
        check("MLX5_CQE_NO_PACKET", CqeOpcode.NO_PACKET);
        check("MLX5_CQE_SIG_ERR", CqeOpcode.SIG_ERR);
        check("MLX5_CQE_REQ_ERR", CqeOpcode.REQ_ERR);
        check("MLX5_CQE_RESP_ERR", CqeOpcode.RESP_ERR);
        check("MLX5_CQE_INVALID", CqeOpcode.INVALID);
        check("MLX5_INLINE_SCATTER_32", CqeOpcode.INLINE_SCATTER_32);
        check("MLX5_INLINE_SCATTER_64", CqeOpcode.INLINE_SCATTER_64);
        check("MLX5_CQE_L2_OK", Cqe64.L2_OK);
        check("MLX5_CQE_L3_OK", Cqe64.L3_OK);
        check("MLX5_CQE_L4_OK", Cqe64.L4_OK);
        check("MLX5_CQE_L3_HDR_TYPE_NONE", Cqe64.L3_HDR_TYPE_NONE);
        check("MLX5_CQE_L3_HDR_TYPE_IPV6", Cqe64.L3_HDR_TYPE_IPV6);
        check("MLX5_CQE_L3_HDR_TYPE_IPV4", Cqe64.L3_HDR_TYPE_IPV4);
        check("MLX5_CQE_VENDOR_SYNDROME_ODP_PFAULT", CqeSyndrome.VENDOR_ODP_PFAULT);
        check("MLX5_CQE_SYNDROME_LOCAL_LENGTH_ERR", CqeSyndrome.LOCAL_LENGTH_ERR);
        check("MLX5_CQE_SYNDROME_LOCAL_QP_OP_ERR", CqeSyndrome.LOCAL_QP_OP_ERR);
        check("MLX5_CQE_SYNDROME_LOCAL_PROT_ERR", CqeSyndrome.LOCAL_PROT_ERR);
        check("MLX5_CQE_SYNDROME_WR_FLUSH_ERR", CqeSyndrome.WR_FLUSH_ERR);
        check("MLX5_CQE_SYNDROME_MW_BIND_ERR", CqeSyndrome.MW_BIND_ERR);
        check("MLX5_CQE_SYNDROME_BAD_RESP_ERR", CqeSyndrome.BAD_RESP_ERR);
        check("MLX5_CQE_SYNDROME_LOCAL_ACCESS_ERR", CqeSyndrome.LOCAL_ACCESS_ERR);
        check("MLX5_CQE_SYNDROME_REMOTE_INVAL_REQ_ERR", CqeSyndrome.REMOTE_INVAL_REQ_ERR);
        check("MLX5_CQE_SYNDROME_REMOTE_ACCESS_ERR", CqeSyndrome.REMOTE_ACCESS_ERR);
        check("MLX5_CQE_SYNDROME_REMOTE_OP_ERR", CqeSyndrome.REMOTE_OP_ERR);
        check("MLX5_CQE_SYNDROME_TRANSPORT_RETRY_EXC_ERR", CqeSyndrome.TRANSPORT_RETRY_EXC_ERR);
        check("MLX5_CQE_SYNDROME_RNR_RETRY_EXC_ERR", CqeSyndrome.RNR_RETRY_EXC_ERR);
        check("MLX5_CQE_SYNDROME_REMOTE_ABORTED_ERR", CqeSyndrome.REMOTE_ABORTED_ERR);
    }

    @Test
    void verbsEnumValues() {
        for (WcStatus s : WcStatus.values()) {
            check("IBV_WC_" + s.name(), s.value());
        }
        for (WcOpcode o : WcOpcode.values()) {
            check("IBV_WC_" + o.name(), o.value());
        }
    }

    @Test
    void syndromeToStatusIsRdmaCoresTableForEverySyndromeByte() {
        Map<Integer, Integer> table = new HashMap<>();
        int fallback = -1;
        for (String[] t : lines) {
            if (t[0].equals("synmap")) {
                table.put(Integer.parseInt(t[1]), Integer.parseInt(t[2]));
            } else if (t[0].equals("syndefault")) {
                fallback = Integer.parseInt(t[1]);
            }
        }
        assertEquals(13, table.size(), "mapped syndromes in mlx5_handle_error_cqe");
        for (int syndrome = 0; syndrome < 256; syndrome++) {
            int expect = table.getOrDefault(syndrome, fallback);
            assertEquals(expect, CqeStatus.toWcStatus(syndrome).value(), "syndrome 0x" + Integer.toHexString(syndrome));
        }
    }

    @Test
    void completionOpcodesAreRdmaCoresTables() {
        Set<Integer> mapped = new HashSet<>();
        for (String[] t : lines) {
            if (t[0].equals("reqmap")) {
                int wqeOpcode = Integer.parseInt(t[1]);
                mapped.add(wqeOpcode);
                assertEquals(Integer.parseInt(t[2]), CompletionOpcodes.requester(wqeOpcode).value(), "send opcode " + wqeOpcode);
            } else if (t[0].equals("respmap")) {
                assertEquals(Integer.parseInt(t[2]), CompletionOpcodes.responder(Integer.parseInt(t[1])).value(), "CQE opcode " + t[1]);
            }
        }
        assertEquals(8, mapped.size());
        for (Map.Entry<String, Long> e : C.entrySet()) {
            if (e.getKey().startsWith("MLX5_OPCODE_") && !mapped.contains(e.getValue().intValue())) {
                assertNull(CompletionOpcodes.requester(e.getValue().intValue()), e.getKey() + " is not decided by the CQE");
            }
        }
        assertNull(CompletionOpcodes.responder(CqeOpcode.REQ));
        assertNull(CompletionOpcodes.responder(CqeOpcode.RESP_ERR));
        assertEquals(8, CompletionOpcodes.requesterByteLen(C.get("MLX5_OPCODE_ATOMIC_FA").intValue(), 99));
        assertEquals(99, CompletionOpcodes.requesterByteLen(C.get("MLX5_OPCODE_RDMA_READ").intValue(), 99));
        assertEquals(0, CompletionOpcodes.requesterByteLen(C.get("MLX5_OPCODE_SEND").intValue(), 99));
        assertTrue(CompletionOpcodes.requesterWithImm(C.get("MLX5_OPCODE_SEND_IMM").intValue()));
        assertTrue(CompletionOpcodes.requesterWithImm(C.get("MLX5_OPCODE_RDMA_WRITE_IMM").intValue()));
    }
}
