package io.jhca.mlx5.wqe;

import static io.jhca.mlx5.wqe.GoldenC.hex;
import static io.jhca.mlx5.wqe.GoldenC.int32;
import static io.jhca.mlx5.wqe.GoldenC.num;
import static org.junit.jupiter.api.Assertions.assertEquals;

import java.nio.file.Path;
import java.util.HashMap;
import java.util.Map;

import org.agrona.concurrent.UnsafeBuffer;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The memory window UMR segments against mlx5dv.h (libibverbs-dev): the C program fills the header's UMR control,
 * mkey context and KLM structs as rdma-core's mlx5 provider does for binds of both window types, unbinds and
 * LOCAL_INV, with seeded random and edge values; the Java writers must produce the same bytes (written into garbage,
 * so a forgotten byte shows), and the readers must give the inputs back.
 */
class UmrGoldenTest {

    private static final int COUNT = 2000;
    private static final int AT = 40;

    @TempDir
    static Path dir;
    private static Path exe;
    private final UnsafeBuffer buf = new UnsafeBuffer(new byte[512]);

    @BeforeAll
    static void build() throws Exception {
        exe = GoldenC.compile("umr_golden", dir);
    }

    @Test
    void layoutsAndOpcodesMatchTheHeader() throws Exception {
        Map<String, int[]> java = new HashMap<>();
        java.put("mlx5_wqe_umr_ctrl_seg", new int[] {UmrCtrlSeg.SIZE});
        java.put("mlx5_wqe_umr_ctrl_seg.flags", new int[] {UmrCtrlSeg.FLAGS_OFFSET, 1});
        java.put("mlx5_wqe_umr_ctrl_seg.klm_octowords", new int[] {UmrCtrlSeg.KLM_OCTOWORDS_OFFSET, 2});
        java.put("mlx5_wqe_umr_ctrl_seg.translation_offset", new int[] {UmrCtrlSeg.TRANSLATION_OFFSET_OFFSET, 2});
        java.put("mlx5_wqe_umr_ctrl_seg.mkey_mask", new int[] {UmrCtrlSeg.MKEY_MASK_OFFSET, 8});
        java.put("mlx5_wqe_mkey_context_seg", new int[] {MkeyContextSeg.SIZE});
        java.put("mlx5_wqe_mkey_context_seg.free", new int[] {MkeyContextSeg.FREE_OFFSET, 1});
        java.put("mlx5_wqe_mkey_context_seg.access_flags", new int[] {MkeyContextSeg.ACCESS_FLAGS_OFFSET, 1});
        java.put("mlx5_wqe_mkey_context_seg.qpn_mkey", new int[] {MkeyContextSeg.QPN_MKEY_OFFSET, 4});
        java.put("mlx5_wqe_mkey_context_seg.flags_pd", new int[] {MkeyContextSeg.FLAGS_PD_OFFSET, 4});
        java.put("mlx5_wqe_mkey_context_seg.start_addr", new int[] {MkeyContextSeg.START_ADDR_OFFSET, 8});
        java.put("mlx5_wqe_mkey_context_seg.len", new int[] {MkeyContextSeg.LEN_OFFSET, 8});
        java.put("mlx5_wqe_umr_klm_seg", new int[] {KlmSeg.ENTRY_SIZE});
        java.put("mlx5_wqe_umr_klm_seg.byte_count", new int[] {KlmSeg.BYTE_COUNT_OFFSET, 4});
        java.put("mlx5_wqe_umr_klm_seg.mkey", new int[] {KlmSeg.MKEY_OFFSET, 4});
        java.put("mlx5_wqe_umr_klm_seg.address", new int[] {KlmSeg.ADDRESS_OFFSET, 8});
        GoldenC.checkLayouts(exe, java);
        int consts = 0;
        for (String[] t : GoldenC.run(exe, "1", "0")) {
            if (t[0].equals("const")) {
                int expected = t[1].equals("UMR") ? Mlx5Opcode.UMR : Mlx5Opcode.SEND_INVAL;
                assertEquals(int32(t[2]), expected, "MLX5_OPCODE_" + t[1]);
                consts++;
            }
        }
        assertEquals(2, consts);
    }

    @Test
    void seed1() throws Exception {
        vectors("1");
    }

    @Test
    void seed2() throws Exception {
        vectors("0x2545f4914f6cdd1d");
    }

    private void vectors(String seed) throws Exception {
        int n = 0;
        int binds = 0;
        for (String[] t : GoldenC.run(exe, seed, String.valueOf(COUNT))) {
            if (!t[0].equals("umr")) {
                continue;
            }
            String where = "seed " + seed + " vector " + n + ": " + String.join(" ", t);
            boolean type2 = int32(t[1]) == 2;
            long length = num(t[2]);
            int key = int32(t[3]);
            int qpn = int32(t[4]);
            int access = int32(t[5]);
            long addr = num(t[6]);
            int lkey = int32(t[7]);

            buf.setMemory(0, buf.capacity(), (byte) 0x5a);
            UmrCtrlSeg.set(buf, AT, type2, length);
            assertEquals(t[8], hex(buf, AT, UmrCtrlSeg.SIZE), "ctrl " + where);
            assertEquals(length == 0 ? 0 : 4, UmrCtrlSeg.klmOctowords(buf, AT), where);

            buf.setMemory(0, buf.capacity(), (byte) 0x5a);
            MkeyContextSeg.set(buf, AT, type2, key, qpn, MkeyContextSeg.accessFlagsOf(access), addr, length);
            assertEquals(t[9], hex(buf, AT, MkeyContextSeg.SIZE), "mkey " + where);
            assertEquals(key & 0xff, MkeyContextSeg.qpnMkey(buf, AT) & 0xff, where);
            if (length != 0) {
                assertEquals(access, MkeyContextSeg.verbsAccessOf(MkeyContextSeg.accessFlags(buf, AT)), where);
                assertEquals(addr, MkeyContextSeg.startAddr(buf, AT), where);
                assertEquals(length, MkeyContextSeg.length(buf, AT), where);
                buf.setMemory(0, buf.capacity(), (byte) 0x5a);
                KlmSeg.set(buf, AT, (int) length, lkey, addr);
                assertEquals(t[10], hex(buf, AT, KlmSeg.SIZE), "klm " + where);
                assertEquals(lkey, KlmSeg.mkey(buf, AT), where);
                assertEquals((int) length, KlmSeg.byteCount(buf, AT), where);
                assertEquals(addr, KlmSeg.address(buf, AT), where);
                binds++;
            } else {
                assertEquals("-", t[10], where);
                assertEquals(MkeyContextSeg.FREE, MkeyContextSeg.free(buf, AT), where);
            }
            n++;
        }
        assertEquals(COUNT, n, "vectors");
        assertEquals(true, binds > COUNT / 2 && binds < COUNT, "binds and unbinds both covered: " + binds);
    }
}
