package io.jhca.mlx5.cmd;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;

import java.nio.file.Path;
import java.util.HashMap;
import java.util.HexFormat;
import java.util.List;
import java.util.Map;
import java.util.Random;

import org.agrona.concurrent.UnsafeBuffer;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import io.jhca.doorbell.DoorbellRecord;
import io.jhca.mlx5.ring.SrqBuffer;
import io.jhca.mlx5.wqe.SrqNextSeg;

/**
 * The SRQ WQE against mlx5dv.h: {@code struct mlx5_wqe_srq_next_seg} (size, offsets of next_wqe_index and
 * signature, the bytes of a segment with a given link), and whole WQEs as rdma-core's srq.c posts them (the next
 * segment, {@code mlx5dv_set_data_seg} entries, the {@code MLX5_INVALID_LKEY} terminator) against what
 * {@link SrqBuffer} writes, for random SGE lists; plus the SRQ enumerators of mlx5_ifc.h. The SRQ commands' layouts
 * are checked with the other driver layouts ({@link DriverLayoutsGoldenTest}).
 */
class SrqGoldenTest {

    private static final long SEED = 0x5a5a_1234L;
    private static final int VECTORS = 64;
    /** WQE stride of the vectors: next segment + 3 data segments, rounded to 64 (rdma-core mlx5_alloc_srq_buf). */
    private static final int SHIFT = 6;
    private static final int MAX_GS = 3;
    private static final Map<String, Long> K = new HashMap<>();
    private static final Map<String, byte[]> BYTES = new HashMap<>();

    @BeforeAll
    static void runC(@TempDir Path dir) throws Exception {
        NativeHeaders.requireMlx5dv();
        StringBuilder c = new StringBuilder();
        c.append("#include \"kshim.h\"\n#include <infiniband/mlx5dv.h>\n#include <linux/mlx5/mlx5_ifc.h>\n")
                .append("#include <stdio.h>\n\n")
                .append("static void dump(const char *tag, int i, const unsigned char *p, size_t n)\n{\n")
                .append("\tprintf(\"B %s%d \", tag, i);\n\tfor (size_t k = 0; k < n; k++)\n\t\tprintf(\"%02x\", p[k]);\n")
                .append("\tprintf(\"\\n\");\n}\n\n")
                .append("#define VAL(x) printf(\"K \" #x \" %lld\\n\", (long long)(x))\n")
                .append("int main(void)\n{\n")
                .append("\tprintf(\"K size %zu\\n\", sizeof(struct mlx5_wqe_srq_next_seg));\n")
                .append("\tprintf(\"K next_wqe_index %zu\\n\", offsetof(struct mlx5_wqe_srq_next_seg, next_wqe_index));\n")
                .append("\tprintf(\"K signature %zu\\n\", offsetof(struct mlx5_wqe_srq_next_seg, signature));\n")
                .append("\tVAL(MLX5_INVALID_LKEY);\n\tVAL(MLX5_ARM_RQ_IN_OP_MOD_SRQ);\n")
                .append("\tVAL(MLX5_SRQC_STATE_GOOD);\n\tVAL(MLX5_SRQC_STATE_ERROR);\n")
                .append("\tVAL(MLX5_CMD_OP_CREATE_SRQ);\n\tVAL(MLX5_CMD_OP_DESTROY_SRQ);\n")
                .append("\tVAL(MLX5_CMD_OP_QUERY_SRQ);\n\tVAL(MLX5_CMD_OP_ARM_RQ);\n");
        Random r = new Random(SEED);
        for (int v = 0; v < VECTORS; v++) {
            int next = v == 0 ? 0xffff : r.nextInt(0x10000);
            int n = v % (MAX_GS + 1);
            c.append("\t{\n\t\tunsigned char w[").append(1 << SHIFT).append("];\n")
                    .append("\t\tstruct mlx5_wqe_srq_next_seg *ns = (void *)w;\n")
                    .append("\t\tstruct mlx5_wqe_data_seg *scat = (void *)(ns + 1);\n")
                    .append("\t\tmemset(w, 0xee, sizeof(w));\n")
                    .append("\t\tmemset(ns, 0, sizeof(*ns));\n")
                    .append("\t\tns->next_wqe_index = htobe16(").append(next).append(");\n")
                    .append("\t\tdump(\"next\", ").append(v).append(", (void *)ns, sizeof(*ns));\n");
            for (int k = 0; k < n; k++) {
                long len = r.nextInt() & 0x7fffffffL | 1;
                long lkey = r.nextInt() & 0xffffffffL;
                long addr = r.nextLong();
                c.append("\t\tmlx5dv_set_data_seg(scat + ").append(k).append(", ").append(len).append("u, ")
                        .append(lkey).append("u, ").append(Long.toUnsignedString(addr)).append("ull);\n");
            }
            if (n < MAX_GS) {
                // rdma-core srq.c mlx5_post_srq_recv: a short list ends with byte_count 0, MLX5_INVALID_LKEY, addr 0
                c.append("\t\tscat[").append(n).append("].byte_count = 0;\n")
                        .append("\t\tscat[").append(n).append("].lkey = htobe32(MLX5_INVALID_LKEY);\n")
                        .append("\t\tscat[").append(n).append("].addr = 0;\n");
            }
            c.append("\t\tdump(\"wqe\", ").append(v).append(", w, ").append(SrqNextSeg.SIZE + (n < MAX_GS ? n + 1 : n) * 16)
                    .append(");\n\t}\n");
        }
        for (Layout l : SrqLayouts.all()) {
            emitLayout(c, l);
        }
        c.append("\treturn 0;\n}\n");
        for (String line : NativeHeaders.compileAndRun(dir, "srq_golden", c.toString())) {
            String[] w = line.trim().split(" ");
            if (w[0].equals("F")) {
                K.put(w[1] + "@off", Long.parseLong(w[2]));
                K.put(w[1] + "@bits", Long.parseLong(w[3]));
            } else if (w[0].equals("K")) {
                K.put(w[1], Long.parseLong(w[2]));
            } else if (w[0].equals("B")) {
                BYTES.put(w[1], HexFormat.of().parseHex(w[2]));
            }
        }
    }

    /** Sizes, every field's bit offset and width, and the bytes DEVX_SET writes for random values (3 PAS entries). */
    private static void emitLayout(StringBuilder c, Layout l) {
        String t = l.name();
        c.append("\tprintf(\"K ").append(t).append(" %zu\\n\", (size_t)DEVX_ST_SZ_BYTES(").append(t).append("));\n");
        Random r = new Random(t.hashCode());
        int elements = l.flexibleArray() != null ? 3 : 0;
        int size = l.sizeBytes() + elements * 8;
        UnsafeBuffer jb = new UnsafeBuffer(new byte[size]);
        c.append("\t{\n\t\tstatic unsigned char b[").append(size).append("];\n");
        for (Field f : l.fields()) {
            if (f.isAlias()) {
                continue;
            }
            // a flexible array has no size: its offset and its element width (u8 pas[][0x40]: one u8 per bit)
            String width = f.kind() == Field.Kind.ARRAY ? "(size_t)(sizeof(((struct mlx5_ifc_" + t + "_bits *)0)->"
                    + f.name() + "[0]))" : "(size_t)__devx_bit_sz(" + t + ", " + f.name() + ")";
            c.append("\t\tprintf(\"F ").append(t).append('.').append(f.name())
                    .append(" %zu %zu\\n\", (size_t)__devx_bit_off(").append(t).append(", ").append(f.name())
                    .append("), ").append(width).append(");\n");
            if (f.kind() == Field.Kind.ARRAY) {
                for (int k = 0; k < elements; k++) {
                    long v = r.nextLong();
                    f.setElement(jb, 0, k, v);
                    c.append("\t\t*(__be64 *)(b + DEVX_BYTE_OFF(").append(t).append(", ").append(f.name())
                            .append(") + ").append(8 * k).append(") = htobe64(0x").append(Long.toHexString(v))
                            .append("ull);\n");
                }
            } else if (f.bitWidth() <= 32) {
                long v = r.nextLong() & Field.mask(f.bitWidth());
                l.set(jb, 0, f.name(), v);
                c.append("\t\tDEVX_SET(").append(t).append(", b, ").append(f.name()).append(", 0x")
                        .append(Long.toHexString(v)).append("u);\n");
            } else {
                long v = r.nextLong();
                l.set(jb, 0, f.name(), v);
                c.append("\t\tDEVX_SET64(").append(t).append(", b, ").append(f.name()).append(", 0x")
                        .append(Long.toHexString(v)).append("ull);\n");
            }
        }
        c.append("\t\tdump(\"").append(t).append("\", 0, b, sizeof(b));\n\t}\n");
        JAVA_LAYOUT_BYTES.put(t + "0", jb.byteArray());
    }

    private static final Map<String, byte[]> JAVA_LAYOUT_BYTES = new HashMap<>();

    @Test
    void commandLayoutsMatchMlx5Ifc() {
        int checked = 0;
        for (Layout l : SrqLayouts.all()) {
            assertEquals(K.get(l.name()), (long) l.sizeBytes(), "DEVX_ST_SZ_BYTES(" + l.name() + ")");
            for (Field f : l.fields()) {
                if (f.isAlias()) {
                    continue;
                }
                String n = l.name() + "." + f.name();
                assertNotNull(K.get(n + "@off"), n);
                assertEquals(K.get(n + "@off"), (long) f.bitOffset(), n + " bit offset");
                assertEquals(K.get(n + "@bits"), (long) f.bitWidth(), n + (f.kind() == Field.Kind.ARRAY ? " element width" : " width"));
                checked++;
            }
            assertArrayEquals(BYTES.get(l.name() + "0"), JAVA_LAYOUT_BYTES.get(l.name() + "0"), "DEVX_SET bytes of " + l.name());
        }
        assertEquals(true, checked >= 25, "fields checked: " + checked);
    }

    @Test
    void nextSegmentLayoutMatchesMlx5dv() {
        assertEquals(K.get("size"), (long) SrqNextSeg.SIZE, "sizeof(struct mlx5_wqe_srq_next_seg)");
        assertEquals(K.get("next_wqe_index"), (long) SrqNextSeg.NEXT_WQE_INDEX_OFFSET, "next_wqe_index offset");
        assertEquals(K.get("signature"), (long) SrqNextSeg.SIGNATURE_OFFSET, "signature offset");
    }

    @Test
    void constantsMatchTheHeaders() {
        assertEquals(K.get("MLX5_INVALID_LKEY"), (long) io.jhca.mlx5.wqe.RecvWqeLayout.INVALID_LKEY);
        assertEquals(K.get("MLX5_ARM_RQ_IN_OP_MOD_SRQ"), (long) SrqLayouts.ARM_RQ_OP_MOD_SRQ);
        assertEquals(K.get("MLX5_SRQC_STATE_GOOD"), (long) SrqLayouts.STATE_GOOD);
        assertEquals(K.get("MLX5_SRQC_STATE_ERROR"), (long) SrqLayouts.STATE_ERROR);
        assertEquals(K.get("MLX5_CMD_OP_CREATE_SRQ"), (long) CmdOpcode.CREATE_SRQ);
        assertEquals(K.get("MLX5_CMD_OP_DESTROY_SRQ"), (long) CmdOpcode.DESTROY_SRQ);
        assertEquals(K.get("MLX5_CMD_OP_QUERY_SRQ"), (long) CmdOpcode.QUERY_SRQ);
        assertEquals(K.get("MLX5_CMD_OP_ARM_RQ"), (long) CmdOpcode.ARM_RQ);
    }

    @Test
    void wqesMatchWhatRdmaCorePosts() {
        Random r = new Random(SEED);
        for (int v = 0; v < VECTORS; v++) {
            int next = v == 0 ? 0xffff : r.nextInt(0x10000);
            int n = v % (MAX_GS + 1);
            String what = "vector " + v + " (seed 0x" + Long.toHexString(SEED) + ")";

            UnsafeBuffer seg = new UnsafeBuffer(new byte[SrqNextSeg.SIZE]);
            seg.setMemory(0, SrqNextSeg.SIZE, (byte) 0xee);
            SrqNextSeg.set(seg, 0, next);
            byte[] cNext = BYTES.get("next" + v);
            assertNotNull(cNext, what);
            assertArrayEquals(cNext, seg.byteArray(), "next segment, " + what);
            assertEquals(next, SrqNextSeg.next(seg, 0), what);

            // a two-WQE ring whose WQE 0 links to `next`'s low bit: write WQE 0 through SrqBuffer and compare
            UnsafeBuffer ring = new UnsafeBuffer(new byte[2 << SHIFT]);
            UnsafeBuffer dbrMem = new UnsafeBuffer(java.nio.ByteBuffer.allocateDirect(8));
            SrqBuffer srq = new SrqBuffer(ring, 2, SHIFT, new DoorbellRecord().wrap(dbrMem, 0));
            SrqNextSeg.setNext(ring, 0, next);
            srq.lock();   // a poster holds the ring's lock
            srq.begin(v);
            for (int k = 0; k < n; k++) {
                int len = (int) (r.nextInt() & 0x7fffffffL | 1);
                int lkey = r.nextInt();
                long addr = r.nextLong();
                srq.sge(lkey, addr, len);
            }
            srq.finish();
            srq.unlock();
            byte[] cWqe = BYTES.get("wqe" + v);
            assertNotNull(cWqe, what);
            byte[] jWqe = new byte[cWqe.length];
            ring.getBytes(0, jWqe);
            assertArrayEquals(cWqe, jWqe, "SRQ WQE with " + n + " SGEs, " + what);
        }
    }

    @SuppressWarnings("unused")
    private static final List<String> HEADERS = List.of("infiniband/mlx5dv.h", "linux/mlx5/mlx5_ifc.h");
}
