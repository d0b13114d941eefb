package io.jhca.mlx5.wqe;

import static io.jhca.mlx5.wqe.GoldenC.bytes;
import static io.jhca.mlx5.wqe.GoldenC.hex;
import static io.jhca.mlx5.wqe.GoldenC.int32;
import static io.jhca.mlx5.wqe.GoldenC.num;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Path;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

import org.agrona.concurrent.UnsafeBuffer;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Every segment writer against mlx5dv.h (libibverbs-dev): the C program fills the header's structs with
 * seeded random and edge values (via mlx5dv_set_ctrl_seg / _data_seg / _dgram_seg where the header has a
 * helper) and prints inputs and bytes; the Java writers must produce the same bytes, and the readers must
 * give the inputs back.
 */
class WqeGoldenTest {

    private static final int COUNT = 1500;

    @TempDir
    static Path dir;
    private static Path exe;

    /** Segments are written at an odd-ish offset into garbage, so a byte the writer forgets shows up. */
    private static final int AT = 48;
    private final UnsafeBuffer buf = new UnsafeBuffer(new byte[1024]);
    /** Off-heap, as a send ring is: {@link OneSgeWqe} stores there without per-segment checks. */
    private final UnsafeBuffer direct = new UnsafeBuffer(java.nio.ByteBuffer.allocateDirect(1024));

    @BeforeAll
    static void build() throws Exception {
        exe = GoldenC.compile("wqe_golden", dir);
    }

    private void garbage() {
        buf.setMemory(0, buf.capacity(), (byte) 0x5a);
        direct.setMemory(0, direct.capacity(), (byte) 0x5a);
    }

    @Test
    void layoutsMatchTheHeader() throws Exception {
        Map<String, int[]> java = new HashMap<>();
        java.put("mlx5_wqe_ctrl_seg", new int[] {CtrlSeg.SIZE});
        java.put("mlx5_wqe_ctrl_seg.opmod_idx_opcode", new int[] {CtrlSeg.OPMOD_IDX_OPCODE_OFFSET, 4});
        java.put("mlx5_wqe_ctrl_seg.qpn_ds", new int[] {CtrlSeg.QPN_DS_OFFSET, 4});
        java.put("mlx5_wqe_ctrl_seg.signature", new int[] {CtrlSeg.SIGNATURE_OFFSET, 1});
        java.put("mlx5_wqe_ctrl_seg.dci_stream_channel_id", new int[] {CtrlSeg.DCI_STREAM_CHANNEL_ID_OFFSET, 2});
        java.put("mlx5_wqe_ctrl_seg.fm_ce_se", new int[] {CtrlSeg.FM_CE_SE_OFFSET, 1});
        java.put("mlx5_wqe_ctrl_seg.imm", new int[] {CtrlSeg.IMM_OFFSET, 4});
        java.put("mlx5_wqe_data_seg", new int[] {DataSeg.SIZE});
        java.put("mlx5_wqe_data_seg.byte_count", new int[] {DataSeg.BYTE_COUNT_OFFSET, 4});
        java.put("mlx5_wqe_data_seg.lkey", new int[] {DataSeg.LKEY_OFFSET, 4});
        java.put("mlx5_wqe_data_seg.addr", new int[] {DataSeg.ADDR_OFFSET, 8});
        java.put("mlx5_wqe_raddr_seg", new int[] {RaddrSeg.SIZE});
        java.put("mlx5_wqe_raddr_seg.raddr", new int[] {RaddrSeg.RADDR_OFFSET, 8});
        java.put("mlx5_wqe_raddr_seg.rkey", new int[] {RaddrSeg.RKEY_OFFSET, 4});
        java.put("mlx5_wqe_raddr_seg.reserved", new int[] {RaddrSeg.RESERVED_OFFSET, 4});
        java.put("mlx5_wqe_atomic_seg", new int[] {AtomicSeg.SIZE});
        java.put("mlx5_wqe_atomic_seg.swap_add", new int[] {AtomicSeg.SWAP_ADD_OFFSET, 8});
        java.put("mlx5_wqe_atomic_seg.compare", new int[] {AtomicSeg.COMPARE_OFFSET, 8});
        java.put("mlx5_wqe_inl_data_seg", new int[] {InlineSeg.HEADER_SIZE});
        java.put("mlx5_wqe_inl_data_seg.byte_count", new int[] {0, InlineSeg.HEADER_SIZE});
        java.put("mlx5_wqe_datagram_seg", new int[] {DatagramSeg.SIZE});
        java.put("mlx5_wqe_av", new int[] {DatagramSeg.SIZE});
        java.put("mlx5_wqe_av.key", new int[] {DatagramSeg.KEY_OFFSET, 8});
        java.put("mlx5_wqe_av.key.qkey.qkey", new int[] {DatagramSeg.KEY_OFFSET, 4});
        java.put("mlx5_wqe_av.key.dc_key", new int[] {DatagramSeg.KEY_OFFSET, 8});
        java.put("mlx5_wqe_av.dqp_dct", new int[] {DatagramSeg.DQP_DCT_OFFSET, 4});
        java.put("mlx5_wqe_av.stat_rate_sl", new int[] {DatagramSeg.STAT_RATE_SL_OFFSET, 1});
        java.put("mlx5_wqe_av.fl_mlid", new int[] {DatagramSeg.FL_MLID_OFFSET, 1});
        java.put("mlx5_wqe_av.rlid", new int[] {DatagramSeg.RLID_OFFSET, 2});
        java.put("mlx5_wqe_av.reserved0", new int[] {DatagramSeg.RESERVED0_OFFSET, 4});
        java.put("mlx5_wqe_av.rmac", new int[] {DatagramSeg.RMAC_OFFSET, DatagramSeg.MAC_SIZE});
        java.put("mlx5_wqe_av.tclass", new int[] {DatagramSeg.TCLASS_OFFSET, 1});
        java.put("mlx5_wqe_av.hop_limit", new int[] {DatagramSeg.HOP_LIMIT_OFFSET, 1});
        java.put("mlx5_wqe_av.grh_gid_fl", new int[] {DatagramSeg.GRH_GID_FL_OFFSET, 4});
        java.put("mlx5_wqe_av.rgid", new int[] {DatagramSeg.RGID_OFFSET, DatagramSeg.GID_SIZE});

        GoldenC.checkLayouts(exe, java);
    }

    @Test
    void seed1() throws Exception {
        vectors("1");
    }

    @Test
    void seed2() throws Exception {
        vectors("0x6a09e667f3bcc908");
    }

    /** Receive vectors of at most one SGE, also checked through {@link RecvWqeLayout#putOne}. */
    private int oneCallRecvs;

    private void vectors(String seed) throws Exception {
        List<String[]> lines = GoldenC.run(exe, seed, Integer.toString(COUNT));
        oneCallRecvs = 0;
        Map<String, Integer> counts = new HashMap<>();
        int n = 0;
        for (String[] t : lines) {
            counts.merge(t[0], 1, Integer::sum);
            String where = "seed " + seed + " vector " + (n++) + ": " + String.join(" ", t);
            switch (t[0]) {
                case "ctrl":
                case "ctrlx86":
                    ctrl(t, n, where);
                    break;
                case "data":
                    data(t, where);
                    break;
                case "raddr":
                    raddr(t, where);
                    break;
                case "atomic":
                    atomic(t, where);
                    break;
                case "inl":
                    inline(t, where);
                    break;
                case "dgram":
                    dgram(t, where);
                    break;
                case "udav":
                    udav(t, where);
                    break;
                case "recv":
                    recv(t, where);
                    break;
                default:
                    break;
            }
        }
        for (String kind : new String[] {"ctrl", "data", "raddr", "atomic", "inl", "dgram", "udav", "recv"}) {
            assertEquals(COUNT, counts.getOrDefault(kind, 0), kind + " vectors");
        }
        assertTrue(oneCallRecvs > COUNT / 10, oneCallRecvs + " receive vectors of at most one SGE");
        if (GoldenC.x86()) {
            assertEquals(COUNT, counts.getOrDefault("ctrlx86", 0), "mlx5dv_x86_set_ctrl_seg vectors (built with -mssse3)");
        }
    }

    private void ctrl(String[] t, int n, String where) {
        int pi = int32(t[1]);
        int opcode = int32(t[2]);
        int opmod = int32(t[3]);
        int qpn = int32(t[4]);
        int fmCeSe = int32(t[5]);
        int ds = int32(t[6]);
        int sig = int32(t[7]);
        int imm = int32(t[8]);
        garbage();
        int curPost = pi + 0x10000 * (n % 4);   // a free-running producer counter wraps to the same 16 bits
        CtrlSeg.set(buf, AT, curPost, opcode, opmod, qpn, fmCeSe, ds, sig, imm);
        assertEquals(t[9], hex(buf, AT, CtrlSeg.SIZE), where);
        assertEquals(pi, CtrlSeg.wqeIndex(buf, AT), where);
        assertEquals(opcode, CtrlSeg.opcode(buf, AT), where);
        assertEquals(opmod, CtrlSeg.opmod(buf, AT), where);
        assertEquals(qpn, CtrlSeg.qpn(buf, AT), where);
        assertEquals(ds, CtrlSeg.ds(buf, AT), where);
        assertEquals(sig, CtrlSeg.signature(buf, AT), where);
        assertEquals(fmCeSe, CtrlSeg.fmCeSe(buf, AT), where);
        assertEquals(imm, CtrlSeg.immAsIs(buf, AT), where);
        assertEquals("5a5a5a5a", hex(buf, AT + 16, 4), "nothing written past the segment: " + where);
        // the send ring's way: the whole segment when the WQE opens (another size, another imm), qpn_ds when it
        // closes, imm rewritten for a window bind; the same bytes
        garbage();
        CtrlSeg.put(buf, AT, curPost, opcode, opmod, qpn ^ 0x5a5a5a, fmCeSe, (ds + 1) & 0x3f, sig, ~imm);
        CtrlSeg.putQpnDs(buf, AT, qpn, ds);
        CtrlSeg.putImm(buf, AT, imm);
        assertEquals(t[9], hex(buf, AT, CtrlSeg.SIZE), "put, putQpnDs, putImm: " + where);
        assertEquals("5a5a5a5a", hex(buf, AT + 16, 4), "nothing written past the segment: " + where);
    }

    private void data(String[] t, String where) {
        garbage();
        DataSeg.set(buf, AT, int32(t[1]), int32(t[2]), num(t[3]));
        assertEquals(t[4], hex(buf, AT, DataSeg.SIZE), where);
        assertEquals(int32(t[1]), DataSeg.byteCount(buf, AT), where);
        assertEquals(int32(t[2]), DataSeg.lkey(buf, AT), where);
        assertEquals(num(t[3]), DataSeg.addr(buf, AT), where);
        // the one-call WQE's data segment: after the control segment (SEND), and after a remote address (WRITE)
        int length = int32(t[1]);
        if (length != 0) {
            for (UnsafeBuffer b : new UnsafeBuffer[] {buf, direct}) {
                garbage();
                assertEquals(2, OneSgeWqe.put(b, AT, 7, 0x0a, 0x11, 8, 0, false, 0, 0, int32(t[2]), num(t[3]), length));
                assertEquals(t[4], hex(b, AT + 16, DataSeg.SIZE), "OneSgeWqe SEND: " + where);
                assertEquals("5a5a5a5a", hex(b, AT + 32, 4), "nothing past the WQE: " + where);
                garbage();
                assertEquals(3, OneSgeWqe.put(b, AT, 7, 0x08, 0x11, 8, 0, true, 0x1000, 5, int32(t[2]), num(t[3]), length));
                assertEquals(t[4], hex(b, AT + 32, DataSeg.SIZE), "OneSgeWqe RDMA WRITE: " + where);
                assertEquals("5a5a5a5a", hex(b, AT + 48, 4), "nothing past the WQE: " + where);
            }
            // the direct send queue's WQE, stored at a raw address in off-heap memory
            garbage();
            OneSgeWqe.putRdmaAt(direct.addressOffset() + AT, 7, 0x08, 0x11, 8, 0, 0x1000, 5, int32(t[2]), num(t[3]),
                    length);
            assertEquals(t[4], hex(direct, AT + 32, DataSeg.SIZE), "OneSgeWqe.putRdmaAt: " + where);
            assertEquals("5a5a5a5a", hex(direct, AT + 48, 4), "nothing past the WQE: " + where);
            garbage();
            OneSgeWqe.putSendAt(direct.addressOffset() + AT, 7, 0x0a, 0x11, 8, 0, int32(t[2]), num(t[3]), length);
            assertEquals(t[4], hex(direct, AT + 16, DataSeg.SIZE), "OneSgeWqe.putSendAt: " + where);
            assertEquals("5a5a5a5a", hex(direct, AT + 32, 4), "nothing past the WQE: " + where);
        }
    }

    private void raddr(String[] t, String where) {
        garbage();
        RaddrSeg.set(buf, AT, num(t[1]), int32(t[2]));
        assertEquals(t[3], hex(buf, AT, RaddrSeg.SIZE), where);
        assertEquals(num(t[1]), RaddrSeg.raddr(buf, AT), where);
        assertEquals(int32(t[2]), RaddrSeg.rkey(buf, AT), where);
        // the one-call WQE's remote address segment, with and without a data segment after it
        for (UnsafeBuffer b : new UnsafeBuffer[] {buf, direct}) {
            for (int length : new int[] {0, 64}) {
                garbage();
                OneSgeWqe.put(b, AT, 3, 0x08, 0x22, 0, 0, true, num(t[1]), int32(t[2]), 0x100, 0x2000, length);
                assertEquals(t[3], hex(b, AT + 16, RaddrSeg.SIZE), "OneSgeWqe, SGE of " + length + ": " + where);
            }
        }
        garbage();
        OneSgeWqe.putRdmaAt(direct.addressOffset() + AT, 3, 0x08, 0x22, 0, 0, num(t[1]), int32(t[2]), 0x100, 0x2000, 64);
        assertEquals(t[3], hex(direct, AT + 16, RaddrSeg.SIZE), "OneSgeWqe.putRdmaAt: " + where);
    }

    private void atomic(String[] t, String where) {
        garbage();
        AtomicSeg.set(buf, AT, num(t[1]), num(t[2]));
        assertEquals(t[3], hex(buf, AT, AtomicSeg.SIZE), where);
        garbage();
        AtomicSeg.compareSwap(buf, AT, num(t[2]), num(t[1]));
        assertEquals(t[3], hex(buf, AT, AtomicSeg.SIZE), "compare-and-swap: " + where);
        assertEquals(num(t[1]), AtomicSeg.swapAdd(buf, AT), where);
        assertEquals(num(t[2]), AtomicSeg.compare(buf, AT), where);
    }

    private void inline(String[] t, String where) {
        int len = int32(t[1]);
        UnsafeBuffer payload = new UnsafeBuffer(bytes(t[2]));
        garbage();
        // ring [64, 64 + 512): big enough that this vector does not wrap (wrapping: InlineSegTest)
        int ds = InlineSeg.write(buf, 64, 64 + 512, 64 + 16, payload, 0, len);
        assertEquals(t[3], hex(buf, 64 + 16, InlineSeg.HEADER_SIZE + len), where);
        assertEquals((len + 4 + 15) / 16, ds, "align(len + 4, 16) / 16: " + where);
        assertEquals(len, InlineSeg.length(buf, 64 + 16), where);
        assertTrue(InlineSeg.isInline(buf, 64 + 16), where);
    }

    private void dgram(String[] t, String where) {
        garbage();
        DatagramSeg.set(buf, AT, num(t[1]), int32(t[2]), int32(t[3]), int32(t[4]), int32(t[5]), int32(t[6]),
            new UnsafeBuffer(bytes(t[7])), 0, int32(t[8]), int32(t[9]), int32(t[10]), new UnsafeBuffer(bytes(t[11])), 0);
        assertEquals(t[12], hex(buf, AT, DatagramSeg.SIZE), where);
        assertEquals(num(t[1]), DatagramSeg.dcKey(buf, AT), where);
        assertEquals(int32(t[3]) << 31 | int32(t[2]), DatagramSeg.dqpDct(buf, AT), where);
        assertEquals(int32(t[4]), DatagramSeg.statRateSl(buf, AT), where);
        assertEquals(int32(t[5]), DatagramSeg.flMlid(buf, AT), where);
        assertEquals(int32(t[6]), DatagramSeg.rlid(buf, AT), where);
        assertEquals(int32(t[8]), DatagramSeg.tclass(buf, AT), where);
        assertEquals(int32(t[9]), DatagramSeg.hopLimit(buf, AT), where);
        assertEquals(int32(t[10]), DatagramSeg.grhGidFl(buf, AT), where);
    }

    private void udav(String[] t, String where) {
        int qkey = int32(t[1]);
        int qpn = int32(t[2]);
        UnsafeBuffer av = new UnsafeBuffer(new byte[DatagramSeg.SIZE]);
        DatagramSeg.set(av, 0, 0L, 0, 0, DatagramSeg.roceStatRateSl(int32(t[3]), int32(t[4])), 0, int32(t[5]),
            new UnsafeBuffer(bytes(t[6])), 0, int32(t[7]), int32(t[8]),
            DatagramSeg.grhGidFl(false, int32(t[9]), int32(t[10])), new UnsafeBuffer(bytes(t[11])), 0);
        garbage();
        DatagramSeg.setUd(buf, AT, av, 0, qpn, qkey);
        assertEquals(t[12], hex(buf, AT, DatagramSeg.SIZE), where);
        assertEquals(qkey, DatagramSeg.qkey(buf, AT), where);
        assertEquals(qpn | DatagramSeg.EXTENDED_UD_AV, DatagramSeg.dqpDct(buf, AT), where);
    }

    private void recv(String[] t, String where) {
        int used = int32(t[1]);
        int maxSge = int32(t[2]);
        garbage();
        for (int i = 0; i < used; i++) {
            RecvWqeLayout.setSge(buf, AT, i, int32(t[3 + 3 * i]), int32(t[4 + 3 * i]), num(t[5 + 3 * i]));
        }
        RecvWqeLayout.finish(buf, AT, used, maxSge);
        String c = t[3 + 3 * used];
        int written = Math.min(used + 1, maxSge) * DataSeg.SIZE;
        assertEquals(c.substring(0, 2 * written), hex(buf, AT, written), where);
        assertEquals("5a5a5a5a", hex(buf, AT + written, 4), "nothing written past the terminator: " + where);
        // the one-call form of a receive of at most one SGE (RqBuffer.postOne); an empty SGE is skipped, as C skips it
        if (used == 0 || (used == 1 && int32(t[3]) != 0)) {
            garbage();
            RecvWqeLayout.putOne(buf, AT, used == 0 ? 0 : int32(t[3]), used == 0 ? 0 : int32(t[4]),
                    used == 0 ? 0 : num(t[5]), maxSge);
            assertEquals(c.substring(0, 2 * written), hex(buf, AT, written), "putOne: " + where);
            assertEquals("5a5a5a5a", hex(buf, AT + written, 4), "putOne, nothing past the terminator: " + where);
            oneCallRecvs++;
        }
    }
}
