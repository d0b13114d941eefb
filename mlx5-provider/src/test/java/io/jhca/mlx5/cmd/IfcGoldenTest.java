package io.jhca.mlx5.cmd;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HexFormat;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;

import org.agrona.concurrent.UnsafeBuffer;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Golden vectors from the kernel's mlx5_ifc.h: a generated C program sets every field of every layout in
 * {@link CmdLayouts#all()} with mlx5dv.h's {@code DEVX_SET}/{@code DEVX_SET64} (byte blobs and array elements by
 * big-endian stores at {@code DEVX_BYTE_OFF}/{@code DEVX_ADDR_OF}), prints each field's bit offset and width and the
 * resulting bytes; the Java DSL must give the same offsets, widths, sizes and bytes. Three rounds: two with random
 * values (by name and through pre-resolved fields), one with every field all ones. Opcode values and the enum
 * constants we copied are compared too.
 */
class IfcGoldenTest {

    private static final int ROUNDS = 3;
    private static final int FLEX_ELEMENTS = 3;

    /** Java constant vs mlx5_ifc.h / device.h enumerator. */
    private static final Map<String, Long> CONSTANTS = new LinkedHashMap<>();

    static {
        CONSTANTS.put("MLX5_QPC_ST_RC", (long) QpLayouts.ST_RC);
        CONSTANTS.put("MLX5_QPC_ST_UC", (long) QpLayouts.ST_UC);
        CONSTANTS.put("MLX5_QPC_ST_UD", (long) QpLayouts.ST_UD);
        CONSTANTS.put("MLX5_QPC_ST_XRC", (long) QpLayouts.ST_XRC);
        CONSTANTS.put("MLX5_QPC_ST_RAW_DATAGRAM", (long) QpLayouts.ST_RAW_DATAGRAM);
        CONSTANTS.put("MLX5_QPC_PM_STATE_MIGRATED", (long) QpLayouts.PM_STATE_MIGRATED);
        CONSTANTS.put("MLX5_QPC_MTU_256_BYTES", (long) QpLayouts.MTU_256);
        CONSTANTS.put("MLX5_QPC_MTU_1K_BYTES", (long) QpLayouts.MTU_1024);
        CONSTANTS.put("MLX5_QPC_MTU_4K_BYTES", (long) QpLayouts.MTU_4096);
        CONSTANTS.put("MLX5_QPC_STATE_RST", (long) QpLayouts.STATE_RST);
        CONSTANTS.put("MLX5_QPC_STATE_INIT", (long) QpLayouts.STATE_INIT);
        CONSTANTS.put("MLX5_QPC_STATE_RTR", (long) QpLayouts.STATE_RTR);
        CONSTANTS.put("MLX5_QPC_STATE_RTS", (long) QpLayouts.STATE_RTS);
        CONSTANTS.put("MLX5_QPC_STATE_SQER", (long) QpLayouts.STATE_SQER);
        CONSTANTS.put("MLX5_QPC_STATE_ERR", (long) QpLayouts.STATE_ERR);
        CONSTANTS.put("MLX5_QPC_STATE_SQD", (long) QpLayouts.STATE_SQD);
        CONSTANTS.put("MLX5_MKC_ACCESS_MODE_PA", (long) MkeyLayouts.ACCESS_MODE_PA);
        CONSTANTS.put("MLX5_MKC_ACCESS_MODE_MTT", (long) MkeyLayouts.ACCESS_MODE_MTT);
        CONSTANTS.put("MLX5_MKC_ACCESS_MODE_KLMS", (long) MkeyLayouts.ACCESS_MODE_KLMS);
        CONSTANTS.put("MLX5_MKC_ACCESS_MODE_KSM", (long) MkeyLayouts.ACCESS_MODE_KSM);
        CONSTANTS.put("MLX5_MTT_PERM_RW", MkeyLayouts.MTT_PERM_RW);
        CONSTANTS.put("MLX5_CQC_CQE_SZ_64_BYTES", (long) CqLayouts.CQE_SZ_64);
        CONSTANTS.put("MLX5_CQC_CQE_SZ_128_BYTES", (long) CqLayouts.CQE_SZ_128);
        CONSTANTS.put("MLX5_QUERY_PAGES_IN_OP_MOD_BOOT_PAGES", (long) HcaLayouts.PAGES_BOOT);
        CONSTANTS.put("MLX5_QUERY_PAGES_IN_OP_MOD_INIT_PAGES", (long) HcaLayouts.PAGES_INIT);
        CONSTANTS.put("MLX5_QUERY_PAGES_IN_OP_MOD_REGULAR_PAGES", (long) HcaLayouts.PAGES_REGULAR);
        CONSTANTS.put("MLX5_TEARDOWN_HCA_IN_PROFILE_GRACEFUL_CLOSE", (long) HcaLayouts.TEARDOWN_GRACEFUL);
        CONSTANTS.put("MLX5_TEARDOWN_HCA_IN_PROFILE_FORCE_CLOSE", (long) HcaLayouts.TEARDOWN_FORCE);
        CONSTANTS.put("MLX5_TEARDOWN_HCA_IN_PROFILE_PREPARE_FAST_TEARDOWN", (long) HcaLayouts.TEARDOWN_PREPARE_FAST);
        CONSTANTS.put("MLX5_CAP_PORT_TYPE_IB", (long) HcaCap.PORT_TYPE_IB);
        CONSTANTS.put("MLX5_CAP_PORT_TYPE_ETH", (long) HcaCap.PORT_TYPE_ETH);
    }

    private static final class Parsed {
        final Map<String, Integer> sizes = new HashMap<>();
        final Map<String, int[]> fields = new HashMap<>();
        final Map<String, byte[]> bytes = new HashMap<>();
        final Map<String, Long> values = new HashMap<>();
        final Map<String, Long> constants = new HashMap<>();
    }

    private static Parsed parsed;
    private static final Map<String, byte[]> JAVA_BYTES = new HashMap<>();
    private static final Map<String, Long> JAVA_VALUES = new HashMap<>();

    @BeforeAll
    static void runC(@TempDir Path dir) throws Exception {
        NativeHeaders.requireMlx5dv();
        String source = generate();
        parsed = parse(NativeHeaders.compileAndRun(dir, "ifc_golden", source));
    }

    private static String generate() {
        StringBuilder c = new StringBuilder();
        c.append("#include \"kshim.h\"\n#include <infiniband/mlx5dv.h>\n#include <linux/mlx5/mlx5_ifc.h>\n")
                .append("#include <stdio.h>\n\n")
                .append("static void dump(const char *tag, const unsigned char *p, size_t n)\n{\n")
                .append("\tprintf(\"B %s \", tag);\n\tfor (size_t i = 0; i < n; i++)\n\t\tprintf(\"%02x\", p[i]);\n")
                .append("\tprintf(\"\\n\");\n}\n\n")
                .append("static void put_be(unsigned char *p, uint64_t v, int bytes)\n{\n")
                .append("\tfor (int i = bytes - 1; i >= 0; i--) {\n\t\tp[i] = (unsigned char)v;\n\t\tv >>= 8;\n\t}\n}\n\n")
                .append("int main(void)\n{\n");
        for (Map.Entry<Integer, String> op : CmdOpcode.known().entrySet()) {
            c.append("\tprintf(\"O ").append(op.getValue()).append(" %d\\n\", (int)MLX5_CMD_OP_")
                    .append(op.getValue()).append(");\n");
        }
        for (String k : CONSTANTS.keySet()) {
            c.append("\tprintf(\"K ").append(k).append(" %lld\\n\", (long long)").append(k).append(");\n");
        }
        for (Layout l : CmdLayouts.all()) {
            String t = l.name();
            c.append("\tprintf(\"S ").append(t).append(" %zu\\n\", (size_t)DEVX_ST_SZ_BYTES(").append(t).append("));\n");
            for (Field f : l.fields()) {
                if (f.isAlias()) {
                    continue;
                }
                String sz = f.kind() == Field.Kind.ARRAY ? f.name() + "[0]" : f.name();
                c.append("\tprintf(\"F ").append(t).append(' ').append(f.name())
                        .append(" %zu %zu\\n\", (size_t)__devx_bit_off(").append(t).append(", ").append(f.name())
                        .append("), (size_t)__devx_bit_sz(").append(t).append(", ").append(sz).append("));\n");
            }
            for (int round = 0; round < ROUNDS; round++) {
                emitRound(c, l, round);
            }
        }
        c.append("\treturn 0;\n}\n");
        return c.toString();
    }

    private static int bufferSize(Layout l) {
        Field flex = l.flexibleArray();
        return flex == null ? l.sizeBytes() : l.sizeBytes(FLEX_ELEMENTS);
    }

    private static long value(Random r, int round, int width) {
        return round == ROUNDS - 1 ? Field.mask(width) : r.nextLong() & Field.mask(width);
    }

    /** One round: the same values go into the C program and through the Java DSL. */
    private static void emitRound(StringBuilder c, Layout l, int round) {
        String t = l.name();
        String tag = t + "/" + round;
        int n = bufferSize(l);
        Random r = new Random(31L * t.hashCode() + round);
        UnsafeBuffer jb = new UnsafeBuffer(new byte[n]);
        c.append("\t{\n\t\tstatic unsigned char b[").append(n).append("];\n\t\tmemset(b, 0, sizeof(b));\n");
        List<String> checks = new ArrayList<>();
        for (Field f : l.fields()) {
            if (f.isAlias()) {
                continue;
            }
            switch (f.kind()) {
                case SCALAR: {
                    long v = value(r, round, f.bitWidth());
                    if (round == 1) {
                        f.set(jb, 0, v);
                    } else {
                        l.set(jb, 0, f.name(), v);
                    }
                    JAVA_VALUES.put(tag + " " + f.name(), v);
                    if (f.bitWidth() <= 32) {
                        c.append("\t\tDEVX_SET(").append(t).append(", b, ").append(f.name()).append(", 0x")
                                .append(Long.toHexString(v)).append("u);\n");
                        checks.add("\t\tprintf(\"V " + tag + " " + f.name() + " %llu\\n\", (unsigned long long)DEVX_GET("
                                + t + ", b, " + f.name() + "));\n");
                    } else if (f.bitWidth() == 64 && f.bitOffset() % 64 == 0) {
                        c.append("\t\tDEVX_SET64(").append(t).append(", b, ").append(f.name()).append(", 0x")
                                .append(Long.toHexString(v)).append("ull);\n");
                        checks.add("\t\tprintf(\"V " + tag + " " + f.name() + " %llu\\n\", (unsigned long long)"
                                + "DEVX_GET64(" + t + ", b, " + f.name() + "));\n");
                    } else {
                        fail(t + "." + f.name() + ": wide unaligned field has no DEVX macro");
                    }
                    break;
                }
                case BYTES: {
                    byte[] v = new byte[f.bitWidth() / 8];
                    for (int i = 0; i < v.length; i++) {
                        v[i] = round == ROUNDS - 1 ? (byte) 0xff : (byte) r.nextInt(256);
                    }
                    f.setBytes(jb, 0, v);
                    c.append("\t\t{\n\t\t\tstatic const unsigned char v[] = {");
                    for (byte x : v) {
                        c.append(" 0x").append(Integer.toHexString(x & 0xff)).append(',');
                    }
                    c.append(" };\n\t\t\tmemcpy(DEVX_ADDR_OF(").append(t).append(", b, ").append(f.name())
                            .append("), v, sizeof(v));\n\t\t}\n");
                    break;
                }
                default: {
                    int count = f.count() == Field.FLEXIBLE ? FLEX_ELEMENTS : f.count();
                    for (int i = 0; i < count; i++) {
                        long v = value(r, round, f.bitWidth());
                        f.setElement(jb, 0, i, v);
                        c.append("\t\tput_be(b + DEVX_BYTE_OFF(").append(t).append(", ").append(f.name()).append(") + ")
                                .append(i * f.elementBytes()).append(", 0x").append(Long.toHexString(v))
                                .append("ull, ").append(f.elementBytes()).append(");\n");
                    }
                    break;
                }
            }
        }
        c.append("\t\tdump(\"").append(tag).append("\", b, sizeof(b));\n");
        checks.forEach(c::append);
        c.append("\t}\n");
        JAVA_BYTES.put(tag, jb.byteArray());
    }

    private static Parsed parse(List<String> lines) {
        Parsed p = new Parsed();
        for (String line : lines) {
            String[] w = line.trim().split(" ");
            switch (w[0]) {
                case "S": p.sizes.put(w[1], Integer.parseInt(w[2])); break;
                case "F": p.fields.put(w[1] + " " + w[2], new int[] {Integer.parseInt(w[3]), Integer.parseInt(w[4])});
                    break;
                case "B": p.bytes.put(w[1], HexFormat.of().parseHex(w[2])); break;
                case "V": p.values.put(w[1] + " " + w[2], Long.parseUnsignedLong(w[3])); break;
                case "O":
                case "K": p.constants.put(w[1], Long.parseLong(w[2])); break;
                case "": break;
                default: fail("unexpected C output: " + line);
            }
        }
        return p;
    }

    @Test
    void sizesMatchDevxStSzBytes() {
        for (Layout l : CmdLayouts.all()) {
            assertEquals(parsed.sizes.get(l.name()), l.sizeBytes(), "DEVX_ST_SZ_BYTES(" + l.name() + ")");
        }
    }

    @Test
    void everyFieldOffsetAndWidthMatch() {
        int checked = 0;
        for (Layout l : CmdLayouts.all()) {
            for (Field f : l.fields()) {
                if (f.isAlias()) {
                    continue;
                }
                int[] cf = parsed.fields.get(l.name() + " " + f.name());
                assertEquals(cf[0], f.bitOffset(), () -> l.name() + "." + f.name() + " bit offset");
                if (f.kind() == Field.Kind.ARRAY) {
                    // element width may be a multiple of the header's unit (MTT entries: 2 x 32-bit units)
                    assertEquals(0, f.bitWidth() % cf[1], () -> l.name() + "." + f.name() + " element width");
                    if (f.bitWidth() != cf[1]) {
                        assertEquals("klm_pas_mtt", f.name(), "only the MTT list is re-chunked");
                    }
                } else {
                    assertEquals(cf[1], f.bitWidth(), () -> l.name() + "." + f.name() + " width");
                }
                checked++;
            }
        }
        assertTrue(checked > 300, "checked " + checked + " fields");
    }

    @Test
    void bytesMatchDevxSet() {
        for (Layout l : CmdLayouts.all()) {
            for (int round = 0; round < ROUNDS; round++) {
                String tag = l.name() + "/" + round;
                byte[] expected = parsed.bytes.get(tag);
                byte[] actual = JAVA_BYTES.get(tag);
                assertEquals(expected.length, actual.length, tag + " length");
                for (int i = 0; i < expected.length; i++) {
                    if (expected[i] != actual[i]) {
                        fail(String.format("%s: byte 0x%x is %02x in C, %02x in Java; fields there: %s", tag, i,
                                expected[i] & 0xff, actual[i] & 0xff, fieldsAt(l, i)));
                    }
                }
            }
        }
    }

    @Test
    void javaReadsBackWhatCReadsBack() {
        for (Map.Entry<String, Long> e : JAVA_VALUES.entrySet()) {
            Long c = parsed.values.get(e.getKey());
            if (c != null) {
                assertEquals(c, e.getValue(), e.getKey() + " DEVX_GET");
            }
        }
        for (Layout l : CmdLayouts.all()) {
            for (int round = 0; round < ROUNDS; round++) {
                String tag = l.name() + "/" + round;
                UnsafeBuffer c = new UnsafeBuffer(parsed.bytes.get(tag));
                for (Field f : l.fields()) {
                    if (f.kind() == Field.Kind.SCALAR && !f.isAlias()) {
                        assertEquals(JAVA_VALUES.get(tag + " " + f.name()), f.get(c, 0), tag + " get " + f.name());
                    }
                }
            }
        }
    }

    @Test
    void opcodesMatchMlx5Ifc() {
        for (Map.Entry<Integer, String> op : CmdOpcode.known().entrySet()) {
            assertEquals(parsed.constants.get(op.getValue()), (long) op.getKey(), "MLX5_CMD_OP_" + op.getValue());
        }
        assertTrue(CmdOpcode.known().size() > 70);
    }

    @Test
    void enumConstantsMatchHeaders() {
        for (Map.Entry<String, Long> k : CONSTANTS.entrySet()) {
            assertEquals(parsed.constants.get(k.getKey()), k.getValue(), k.getKey());
        }
    }

    private static String fieldsAt(Layout l, int byteIndex) {
        StringBuilder sb = new StringBuilder();
        int bitLo = byteIndex * 8;
        for (Field f : l.fields()) {
            int start = f.bitOffset();
            int end = start + Math.max(f.totalBits(), f.kind() == Field.Kind.ARRAY ? f.bitWidth() * FLEX_ELEMENTS : 0);
            if (start < bitLo + 8 && end > bitLo) {
                sb.append(f).append("; ");
            }
        }
        return sb.length() == 0 ? "(none: reserved)" : sb.toString();
    }
}
