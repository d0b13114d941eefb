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

/**
 * {@link QueryRoceAddressLayouts} against the kernel's mlx5_ifc.h (offset, width and size of every field, and the
 * bytes DEVX_SET writes for random values), and the two EQE data offsets the device model writes besides those
 * {@code io.jhca.mlx5.eq.Eqe} covers: {@code struct mlx5_eqe_comp.cqn} and {@code struct mlx5_eqe_cmd.vector}
 * (device.h), through the same C harness as {@link IfcGoldenTest}.
 */
class QueryRoceAddressGoldenTest {

    private static final List<Layout> LAYOUTS = List.of(QueryRoceAddressLayouts.QUERY_ROCE_ADDRESS_IN,
            QueryRoceAddressLayouts.QUERY_ROCE_ADDRESS_OUT);
    private static final Map<String, String> LINES = new HashMap<>();
    private static final Map<String, byte[]> JAVA_BYTES = new HashMap<>();

    @BeforeAll
    static void runC(@TempDir Path dir) throws Exception {
        NativeHeaders.requireMlx5dv();
        StringBuilder c = new StringBuilder();
        c.append("#include \"kshim.h\"\n#include <infiniband/mlx5dv.h>\n#include <linux/mlx5/mlx5_ifc.h>\n")
                .append("#include <stdio.h>\n\nint main(void)\n{\n");
        for (Layout l : LAYOUTS) {
            String t = l.name();
            c.append("\tprintf(\"S ").append(t).append(" %zu\\n\", (size_t)DEVX_ST_SZ_BYTES(").append(t).append("));\n");
            for (Field f : l.fields()) {
                if (f.isAlias()) {
                    continue;
                }
                c.append("\tprintf(\"F ").append(t).append('.').append(f.name())
                        .append(" %zu %zu\\n\", (size_t)__devx_bit_off(").append(t).append(", ").append(f.name())
                        .append("), (size_t)__devx_bit_sz(").append(t).append(", ").append(f.name()).append("));\n");
            }
            Random r = new Random(t.hashCode());
            UnsafeBuffer jb = new UnsafeBuffer(new byte[l.sizeBytes()]);
            c.append("\t{\n\t\tstatic unsigned char b[").append(l.sizeBytes()).append("];\n");
            for (Field f : l.fields()) {
                if (f.isAlias()) {
                    continue;
                }
                if (f.kind() == Field.Kind.BYTES) {
                    byte[] v = new byte[f.bitWidth() / 8];
                    r.nextBytes(v);
                    f.setBytes(jb, 0, v);
                    c.append("\t\t{ static const unsigned char v[] = {");
                    for (byte x : v) {
                        c.append(" 0x").append(Integer.toHexString(x & 0xff)).append(',');
                    }
                    c.append(" }; memcpy(DEVX_ADDR_OF(").append(t).append(", b, ").append(f.name())
                            .append("), v, sizeof(v)); }\n");
                } else {
                    long v = r.nextLong() & Field.mask(f.bitWidth());
                    f.set(jb, 0, v);
                    c.append("\t\tDEVX_SET(").append(t).append(", b, ").append(f.name()).append(", 0x")
                            .append(Long.toHexString(v)).append("u);\n");
                }
            }
            c.append("\t\tprintf(\"B ").append(t).append(" \");\n\t\tfor (size_t i = 0; i < sizeof(b); i++)\n")
                    .append("\t\t\tprintf(\"%02x\", b[i]);\n\t\tprintf(\"\\n\");\n\t}\n");
            JAVA_BYTES.put(t, jb.byteArray());
        }
        c.append("\treturn 0;\n}\n");
        parse(NativeHeaders.compileAndRun(dir.resolve("ifc"), "query_roce_golden", c.toString()));
        String dev = "#include \"kshim.h\"\n#include <linux/mlx5/device.h>\n#include <stdio.h>\n\nint main(void)\n{\n"
                + "\tprintf(\"K comp.cqn %zu\\n\", offsetof(struct mlx5_eqe, data.comp.cqn));\n"
                + "\tprintf(\"K cmd.vector %zu\\n\", offsetof(struct mlx5_eqe, data.cmd.vector));\n"
                + "\treturn 0;\n}\n";
        parse(NativeHeaders.compileAndRun(dir.resolve("dev"), "eqe_golden", dev));
    }

    private static void parse(List<String> lines) {
        for (String line : lines) {
            String[] p = line.trim().split(" ", 3);
            if (p.length == 3) {
                LINES.put(p[0] + " " + p[1], p[2]);
            }
        }
    }

    @Test
    void sizesAndFields() {
        for (Layout l : LAYOUTS) {
            assertEquals(String.valueOf(l.sizeBytes()), LINES.get("S " + l.name()), l.name() + " size");
            for (Field f : l.fields()) {
                if (f.isAlias()) {
                    continue;
                }
                String got = LINES.get("F " + l.name() + "." + f.name());
                assertNotNull(got, l.name() + "." + f.name() + " missing from the C output");
                assertEquals(f.bitOffset() + " " + f.bitWidth(), got, l.name() + "." + f.name());
            }
        }
    }

    @Test
    void bytesMatchDevxSet() {
        for (Layout l : LAYOUTS) {
            String hex = LINES.get("B " + l.name());
            assertNotNull(hex, l.name());
            assertArrayEquals(HexFormat.of().parseHex(hex), JAVA_BYTES.get(l.name()), l.name());
        }
    }

    @Test
    void eqeDataOffsetsTheModelWrites() {
        // io.jhca.connectx.DeviceEq: COMP cqn at data + 24, CMD vector at data + 0 (data at EQE byte 0x20)
        assertEquals("56", LINES.get("K comp.cqn"));
        assertEquals("32", LINES.get("K cmd.vector"));
    }
}
