package io.jhca.mlx5.wqe;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Path;
import java.util.HashMap;
import java.util.Map;

import io.jhca.doorbell.CqArm;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** WQE and doorbell constants against the values mlx5dv.h (libibverbs-dev) gives them. */
class Mlx5ConstantsGoldenTest {

    @TempDir
    Path dir;

    @Test
    void constantsMatchMlx5dvH() throws Exception {
        Map<String, Long> c = new HashMap<>();
        for (String[] t : GoldenC.run(GoldenC.compile("constants_golden", dir))) {
            if (t[0].equals("const")) {
                c.put(t[1], Long.parseLong(t[2]));
            }
        }
        Map<String, Long> java = new HashMap<>();
        java.put("MLX5_OPCODE_NOP", (long) Mlx5Opcode.NOP);
        java.put("MLX5_OPCODE_SEND_INVAL", (long) Mlx5Opcode.SEND_INVAL);
        java.put("MLX5_OPCODE_RDMA_WRITE", (long) Mlx5Opcode.RDMA_WRITE);
        java.put("MLX5_OPCODE_RDMA_WRITE_IMM", (long) Mlx5Opcode.RDMA_WRITE_IMM);
        java.put("MLX5_OPCODE_SEND", (long) Mlx5Opcode.SEND);
        java.put("MLX5_OPCODE_SEND_IMM", (long) Mlx5Opcode.SEND_IMM);
        java.put("MLX5_OPCODE_TSO", (long) Mlx5Opcode.TSO);
        java.put("MLX5_OPCODE_RDMA_READ", (long) Mlx5Opcode.RDMA_READ);
        java.put("MLX5_OPCODE_ATOMIC_CS", (long) Mlx5Opcode.ATOMIC_CS);
        java.put("MLX5_OPCODE_ATOMIC_FA", (long) Mlx5Opcode.ATOMIC_FA);
        java.put("MLX5_OPCODE_ATOMIC_MASKED_CS", (long) Mlx5Opcode.ATOMIC_MASKED_CS);
        java.put("MLX5_OPCODE_ATOMIC_MASKED_FA", (long) Mlx5Opcode.ATOMIC_MASKED_FA);
        java.put("MLX5_OPCODE_FMR", (long) Mlx5Opcode.FMR);
        java.put("MLX5_OPCODE_LOCAL_INVAL", (long) Mlx5Opcode.LOCAL_INVAL);
        java.put("MLX5_OPCODE_CONFIG_CMD", (long) Mlx5Opcode.CONFIG_CMD);
        java.put("MLX5_OPCODE_SET_PSV", (long) Mlx5Opcode.SET_PSV);
        java.put("MLX5_OPCODE_UMR", (long) Mlx5Opcode.UMR);
        java.put("MLX5_OPCODE_TAG_MATCHING", (long) Mlx5Opcode.TAG_MATCHING);
        java.put("MLX5_OPCODE_FLOW_TBL_ACCESS", (long) Mlx5Opcode.FLOW_TBL_ACCESS);
        java.put("MLX5_OPCODE_MMO", (long) Mlx5Opcode.MMO);
        java.put("MLX5_WQE_CTRL_CQ_UPDATE", (long) FmCeSe.CQ_UPDATE);
        java.put("MLX5_WQE_CTRL_SOLICITED", (long) FmCeSe.SOLICITED);
        java.put("MLX5_WQE_CTRL_FENCE", (long) FmCeSe.FENCE);
        java.put("MLX5_WQE_CTRL_INITIATOR_SMALL_FENCE", (long) FmCeSe.FENCE_INITIATOR_SMALL);
        java.put("MLX5_SEND_WQE_BB", (long) SendWqeLayout.WQEBB);
        java.put("MLX5_SEND_WQE_SHIFT", (long) SendWqeLayout.WQEBB_SHIFT);
        java.put("MLX5_INLINE_SEG", InlineSeg.INLINE_SEG & 0xffffffffL);
        java.put("MLX5_INVALID_LKEY", (long) RecvWqeLayout.INVALID_LKEY);
        java.put("MLX5_EXTENDED_UD_AV", DatagramSeg.EXTENDED_UD_AV & 0xffffffffL);
        java.put("MLX5_CQ_DOORBELL", (long) CqArm.CQ_DOORBELL);
        java.put("MLX5_CQ_DB_REQ_NOT_SOL", (long) CqArm.REQ_NOT_SOL);
        java.put("MLX5_CQ_DB_REQ_NOT", (long) CqArm.REQ_NOT);

        for (Map.Entry<String, Long> e : java.entrySet()) {
            assertTrue(c.containsKey(e.getKey()), e.getKey() + " printed by constants_golden");
            assertEquals(c.get(e.getKey()), e.getValue(), e.getKey());
        }
        for (String name : c.keySet()) {
            if (name.startsWith("MLX5_OPCODE_")) {
                assertTrue(java.containsKey(name), name + " has a Java constant");
            }
        }
    }
}
