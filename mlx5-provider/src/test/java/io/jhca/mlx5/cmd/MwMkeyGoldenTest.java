package io.jhca.mlx5.cmd;

import static org.junit.jupiter.api.Assertions.assertEquals;

import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HexFormat;
import java.util.List;
import java.util.Random;

import org.agrona.concurrent.UnsafeBuffer;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * CREATE_MKEY of a memory window's free key against mlx5_ifc.h: a C program sets the input with DEVX_SET as the
 * kernel's mlx5_ib {@code mlx5_ib_alloc_mw} sets it (free, translations_octword_size 4, pd, umr_en, lr, KLM access
 * mode, en_rinval for type 2, qpn 0xffffff, the key's tag byte), for seeded PDs, tags and both types; the Java input
 * built by {@link MkeyLayouts#setMwMkey} must be byte for byte the same.
 */
class MwMkeyGoldenTest {

    private static final int COUNT = 64;

    @Test
    void createMkeyOfAWindowMatchesMlx5Ifc(@TempDir Path dir) throws Exception {
        NativeHeaders.requireMlx5dv();
        long seed = Long.getLong("jhca.mwmkey.seed", new Random().nextLong());
        System.out.println("MwMkeyGoldenTest seed " + seed + " (replay: -Djhca.mwmkey.seed=" + seed + ")");
        Random r = new Random(seed);
        List<int[]> vectors = new ArrayList<>();
        StringBuilder c = new StringBuilder();
        c.append("#include \"kshim.h\"\n#include <infiniband/mlx5dv.h>\n#include <linux/mlx5/mlx5_ifc.h>\n")
                .append("#include <stdio.h>\n#include <string.h>\n\n")
                .append("static void one(unsigned pdn, int type2, unsigned tag)\n{\n")
                .append("\tunsigned char in[DEVX_ST_SZ_BYTES(create_mkey_in)];\n")
                .append("\tvoid *mkc = DEVX_ADDR_OF(create_mkey_in, in, memory_key_mkey_entry);\n")
                .append("\tmemset(in, 0, sizeof(in));\n")
                .append("\tDEVX_SET(create_mkey_in, in, opcode, MLX5_CMD_OP_CREATE_MKEY);\n")
                .append("\tDEVX_SET(mkc, mkc, free, 1);\n")
                .append("\tDEVX_SET(mkc, mkc, translations_octword_size, 4);\n")
                .append("\tDEVX_SET(mkc, mkc, pd, pdn);\n")
                .append("\tDEVX_SET(mkc, mkc, umr_en, 1);\n")
                .append("\tDEVX_SET(mkc, mkc, lr, 1);\n")
                .append("\tDEVX_SET(mkc, mkc, access_mode_1_0, MLX5_MKC_ACCESS_MODE_KLMS);\n")
                .append("\tDEVX_SET(mkc, mkc, en_rinval, !!type2);\n")
                .append("\tDEVX_SET(mkc, mkc, qpn, 0xffffff);\n")
                .append("\tDEVX_SET(mkc, mkc, mkey_7_0, tag);\n")
                .append("\tfor (size_t i = 0; i < sizeof(in); i++)\n\t\tprintf(\"%02x\", in[i]);\n")
                .append("\tprintf(\"\\n\");\n}\n\nint main(void)\n{\n");
        for (int i = 0; i < COUNT; i++) {
            int pdn = i == 0 ? 0xffffff : i == 1 ? 1 : r.nextInt(1 << 24);
            int type2 = i % 2;
            int tag = i == 2 ? 0xff : r.nextInt(256);
            vectors.add(new int[] {pdn, type2, tag});
            c.append("\tone(0x").append(Integer.toHexString(pdn)).append(", ").append(type2).append(", 0x")
                    .append(Integer.toHexString(tag)).append(");\n");
        }
        c.append("\treturn 0;\n}\n");
        List<String> out = NativeHeaders.compileAndRun(dir, "mw_mkey_golden", c.toString());
        assertEquals(COUNT, out.size(), "vectors printed");
        for (int i = 0; i < COUNT; i++) {
            int[] v = vectors.get(i);
            int len = MkeyLayouts.CREATE_MKEY_IN.sizeBytes();
            Struct in = new Struct().wrap(MkeyLayouts.CREATE_MKEY_IN, new UnsafeBuffer(new byte[len]), 0, len);
            in.set("opcode", CmdOpcode.CREATE_MKEY);
            MkeyLayouts.setMwMkey(in, v[0], v[1] == 1, v[2]);
            byte[] java = new byte[len];
            in.buffer().getBytes(0, java);
            assertEquals(out.get(i).trim(), HexFormat.of().formatHex(java),
                    "CREATE_MKEY of a window: pdn 0x" + Integer.toHexString(v[0]) + " type " + (v[1] + 1) + " tag 0x"
                            + Integer.toHexString(v[2]) + " (seed " + seed + ")");
        }
    }
}
