package io.jhca.mlx5.cmd;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.HashMap;
import java.util.HexFormat;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import org.agrona.concurrent.UnsafeBuffer;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import io.jhca.mlx5.Mlx5Path;
import io.jhca.mlx5.eq.Eqe;
import io.jhca.mlx5.eq.EventType;

/**
 * Golden vectors for what the driver added to this package and for the EQE format, through the same C harness as
 * {@link IfcGoldenTest} ({@link NativeHeaders}):
 * <ul>
 * <li>every field of {@link DriverCmdLayouts#all()} against mlx5_ifc.h: offset, width, structure size, and the bytes
 *     DEVX_SET writes for random values, compared with the Java DSL's;</li>
 * <li>the EQE offsets and event constants against device.h ({@code struct mlx5_eqe}, {@code MLX5_EVENT_TYPE_*});</li>
 * <li>the RoCE constants against device.h, the CQ error syndromes against mlx5_ifc.h;</li>
 * <li>the RoCEv2 UDP source port of a flow label against libibverbs' {@code ibv_flow_label_to_udp_sport};</li>
 * <li>the qp.h / driver.h enumerators (these headers need the whole kernel to compile) read from the header text.</li>
 * </ul>
 */
class DriverLayoutsGoldenTest {

    private static final Map<String, Integer> SIZES = new HashMap<>();
    private static final Map<String, int[]> FIELDS = new HashMap<>();
    private static final Map<String, byte[]> C_BYTES = new HashMap<>();
    private static final Map<String, byte[]> JAVA_BYTES = new HashMap<>();
    private static final Map<String, Long> K = new HashMap<>();
    private static final int[] FLOW_LABELS = {0x1, 0x3fff, 0x4000, 0x12345, 0xfffff, 0x80001};

    @BeforeAll
    static void runC(@TempDir Path dir) throws Exception {
        NativeHeaders.requireMlx5dv();
        parse(NativeHeaders.compileAndRun(dir.resolve("ifc"), "driver_ifc_golden", ifcProgram()));
        parse(NativeHeaders.compileAndRun(dir.resolve("dev"), "driver_device_golden", deviceProgram()));
    }

    private static String ifcProgram() {
        StringBuilder c = new StringBuilder();
        c.append("#include \"kshim.h\"\n#include <infiniband/mlx5dv.h>\n#include <linux/mlx5/mlx5_ifc.h>\n")
                .append("#include <stdio.h>\n\n")
                .append("static void dump(const char *tag, const unsigned char *p, size_t n)\n{\n")
                .append("\tprintf(\"B %s \", tag);\n\tfor (size_t i = 0; i < n; i++)\n\t\tprintf(\"%02x\", p[i]);\n")
                .append("\tprintf(\"\\n\");\n}\n\nint main(void)\n{\n");
        for (Layout l : DriverCmdLayouts.all()) {
            String t = l.name();
            c.append("\tprintf(\"S ").append(t).append(" %zu\\n\", (size_t)DEVX_ST_SZ_BYTES(").append(t).append("));\n");
            for (Field f : l.fields()) {
                if (f.isAlias()) {
                    continue;
                }
                c.append("\tprintf(\"F ").append(t).append(' ').append(f.name())
                        .append(" %zu %zu\\n\", (size_t)__devx_bit_off(").append(t).append(", ").append(f.name())
                        .append("), (size_t)__devx_bit_sz(").append(t).append(", ").append(f.name()).append("));\n");
            }
            emitRound(c, l);
        }
        for (int fl : FLOW_LABELS) {
            c.append("\tprintf(\"K sport_").append(fl).append(" %u\\n\", (unsigned)ibv_flow_label_to_udp_sport(")
                    .append(fl).append("));\n");
        }
        c.append("\tprintf(\"K MLX5_CQ_ERROR_SYNDROME_CQ_OVERRUN %d\\n\", (int)MLX5_CQ_ERROR_SYNDROME_CQ_OVERRUN);\n")
                .append("\tprintf(\"K MLX5_CQ_ERROR_SYNDROME_CQ_ACCESS_VIOLATION_ERROR %d\\n\",")
                .append(" (int)MLX5_CQ_ERROR_SYNDROME_CQ_ACCESS_VIOLATION_ERROR);\n")
                .append("\treturn 0;\n}\n");
        return c.toString();
    }

    /** One round of random values, through DEVX_SET in C and the DSL in Java. */
    private static void emitRound(StringBuilder c, Layout l) {
        String t = l.name();
        Random r = new Random(t.hashCode());
        UnsafeBuffer jb = new UnsafeBuffer(new byte[l.sizeBytes()]);
        c.append("\t{\n\t\tstatic unsigned char b[").append(l.sizeBytes()).append("];\n");
        for (Field f : l.fields()) {
            if (f.isAlias()) {
                continue;
            }
            if (f.kind() == Field.Kind.SCALAR) {
                long v = r.nextLong() & Field.mask(f.bitWidth());
                l.set(jb, 0, f.name(), v);
                if (f.bitWidth() <= 32) {
                    c.append("\t\tDEVX_SET(").append(t).append(", b, ").append(f.name()).append(", 0x")
                            .append(Long.toHexString(v)).append("u);\n");
                } else if (f.bitWidth() == 64 && f.bitOffset() % 64 == 0) {
                    c.append("\t\tDEVX_SET64(").append(t).append(", b, ").append(f.name()).append(", 0x")
                            .append(Long.toHexString(v)).append("ull);\n");
                } else {
                    fail(t + "." + f.name() + ": wide unaligned field has no DEVX macro");
                }
            } else if (f.kind() == Field.Kind.BYTES) {
                byte[] v = new byte[f.bitWidth() / 8];
                r.nextBytes(v);
                f.setBytes(jb, 0, v);
                c.append("\t\t{\n\t\t\tstatic const unsigned char v[] = {");
                for (byte x : v) {
                    c.append(" 0x").append(Integer.toHexString(x & 0xff)).append(',');
                }
                c.append(" };\n\t\t\tmemcpy(DEVX_ADDR_OF(").append(t).append(", b, ").append(f.name())
                        .append("), v, sizeof(v));\n\t\t}\n");
            } else {
                fail(t + "." + f.name() + ": arrays are not expected in these layouts");
            }
        }
        c.append("\t\tdump(\"").append(t).append("\", b, sizeof(b));\n\t}\n");
        JAVA_BYTES.put(t, jb.byteArray());
    }

    private static String deviceProgram() {
        StringBuilder c = new StringBuilder();
        c.append("#include \"kshim.h\"\n#include <linux/mlx5/device.h>\n#include <stdio.h>\n\n")
                .append("#define OFF(f) printf(\"K eqe.\" #f \" %zu\\n\", offsetof(struct mlx5_eqe, f))\n")
                .append("#define VAL(x) printf(\"K \" #x \" %lld\\n\", (long long)(x))\n")
                .append("int main(void)\n{\n");
        for (String f : List.of("type", "sub_type", "data", "signature", "owner", "data.cq_err.cqn",
                "data.cq_err.syndrome", "data.qp_srq.type", "data.qp_srq.qp_srq_n", "data.req_pages.func_id",
                "data.req_pages.num_pages", "data.comp.cqn", "data.port.port")) {
            c.append("\tOFF(").append(f).append(");\n");
        }
        c.append("\tprintf(\"K eqe.size %zu\\n\", sizeof(struct mlx5_eqe));\n");
        for (String k : eventConstants().keySet()) {
            c.append("\tVAL(").append(k).append(");\n");
        }
        for (String k : List.of("MLX5_ROCE_VERSION_1", "MLX5_ROCE_VERSION_2", "MLX5_ROCE_L3_TYPE_IPV4",
                "MLX5_ROCE_L3_TYPE_IPV6")) {
            c.append("\tVAL(").append(k).append(");\n");
        }
        c.append("\treturn 0;\n}\n");
        return c.toString();
    }

    private static Map<String, Long> eventConstants() {
        Map<String, Long> m = new LinkedHashMap<>();
        m.put("MLX5_EVENT_TYPE_COMP", (long) EventType.COMP);
        m.put("MLX5_EVENT_TYPE_PATH_MIG", (long) EventType.PATH_MIG);
        m.put("MLX5_EVENT_TYPE_COMM_EST", (long) EventType.COMM_EST);
        m.put("MLX5_EVENT_TYPE_SQ_DRAINED", (long) EventType.SQ_DRAINED);
        m.put("MLX5_EVENT_TYPE_CQ_ERROR", (long) EventType.CQ_ERROR);
        m.put("MLX5_EVENT_TYPE_WQ_CATAS_ERROR", (long) EventType.WQ_CATAS_ERROR);
        m.put("MLX5_EVENT_TYPE_PATH_MIG_FAILED", (long) EventType.PATH_MIG_FAILED);
        m.put("MLX5_EVENT_TYPE_INTERNAL_ERROR", (long) EventType.INTERNAL_ERROR);
        m.put("MLX5_EVENT_TYPE_PORT_CHANGE", (long) EventType.PORT_CHANGE);
        m.put("MLX5_EVENT_TYPE_CMD", (long) EventType.CMD);
        m.put("MLX5_EVENT_TYPE_PAGE_REQUEST", (long) EventType.PAGE_REQUEST);
        m.put("MLX5_EVENT_TYPE_WQ_INVAL_REQ_ERROR", (long) EventType.WQ_INVAL_REQ_ERROR);
        m.put("MLX5_EVENT_TYPE_WQ_ACCESS_ERROR", (long) EventType.WQ_ACCESS_ERROR);
        m.put("MLX5_EVENT_TYPE_SRQ_LAST_WQE", (long) EventType.SRQ_LAST_WQE);
        m.put("MLX5_EVENT_TYPE_SRQ_RQ_LIMIT", (long) EventType.SRQ_RQ_LIMIT);
        m.put("MLX5_PORT_CHANGE_SUBTYPE_DOWN", (long) EventType.PORT_CHANGE_DOWN);
        m.put("MLX5_PORT_CHANGE_SUBTYPE_ACTIVE", (long) EventType.PORT_CHANGE_ACTIVE);
        m.put("MLX5_EVENT_TYPE_SRQ_CATAS_ERROR", (long) EventType.SRQ_CATAS_ERROR);
        m.put("MLX5_EVENT_TYPE_SRQ_LAST_WQE", (long) EventType.SRQ_LAST_WQE);
        m.put("MLX5_EVENT_TYPE_SRQ_RQ_LIMIT", (long) EventType.SRQ_RQ_LIMIT);
        return m;
    }

    private static void parse(List<String> lines) {
        for (String line : lines) {
            String[] w = line.trim().split(" ");
            switch (w[0]) {
                case "S": SIZES.put(w[1], Integer.parseInt(w[2])); break;
                case "F": FIELDS.put(w[1] + " " + w[2], new int[] {Integer.parseInt(w[3]), Integer.parseInt(w[4])});
                    break;
                case "B": C_BYTES.put(w[1], HexFormat.of().parseHex(w[2])); break;
                case "K": K.put(w[1], Long.parseLong(w[2])); break;
                case "": break;
                default: fail("unexpected C output: " + line);
            }
        }
    }

    @Test
    void layoutsMatchMlx5Ifc() {
        int checked = 0;
        for (Layout l : DriverCmdLayouts.all()) {
            assertEquals(SIZES.get(l.name()), l.sizeBytes(), "DEVX_ST_SZ_BYTES(" + l.name() + ")");
            for (Field f : l.fields()) {
                if (f.isAlias()) {
                    continue;
                }
                int[] cf = FIELDS.get(l.name() + " " + f.name());
                assertNotNull(cf, l.name() + "." + f.name());
                assertEquals(cf[0], f.bitOffset(), l.name() + "." + f.name() + " bit offset");
                assertEquals(cf[1], f.bitWidth(), l.name() + "." + f.name() + " width");
                checked++;
            }
            byte[] c = C_BYTES.get(l.name());
            byte[] j = JAVA_BYTES.get(l.name());
            for (int i = 0; i < c.length; i++) {
                if (c[i] != j[i]) {
                    fail(String.format("%s: byte 0x%x is %02x in C, %02x in Java", l.name(), i, c[i] & 0xff, j[i] & 0xff));
                }
            }
        }
        assertTrue(checked > 60, "checked " + checked + " fields");
    }

    @Test
    void opcodeLookupCoversDriverCommands() {
        assertEquals(RoceAddressLayouts.SET_ROCE_ADDRESS_IN, DriverCmdLayouts.input(CmdOpcode.SET_ROCE_ADDRESS));
        assertEquals(QpModifyLayouts.RTS2RTS_QP_OUT, DriverCmdLayouts.output(CmdOpcode.RTS2RTS_QP));
        assertEquals(CmdLayouts.input(CmdOpcode.CREATE_QP), DriverCmdLayouts.input(CmdOpcode.CREATE_QP));
        assertEquals(QCounterLayouts.ALLOC_Q_COUNTER_OUT, DriverCmdLayouts.output(CmdOpcode.ALLOC_Q_COUNTER));
        assertEquals(QCounterLayouts.DEALLOC_Q_COUNTER_IN, DriverCmdLayouts.input(CmdOpcode.DEALLOC_Q_COUNTER));
        assertEquals(QCounterLayouts.QUERY_Q_COUNTER_OUT, DriverCmdLayouts.output(CmdOpcode.QUERY_Q_COUNTER));
        assertEquals(McgLayouts.ATTACH_TO_MCG_IN, DriverCmdLayouts.input(CmdOpcode.ATTACH_TO_MCG));
        assertEquals(McgLayouts.DETACH_FROM_MCG_OUT, DriverCmdLayouts.output(CmdOpcode.DETACH_FROM_MCG));
    }

    /**
     * ATTACH_TO_MCG of QP 0x123456 to ::ffff:239.1.2.3, byte by byte as mlx5_ifc.h places it: opcode 0x0806 at 0,
     * the QPN in the low 24 bits of dword 2, the GID in network order at byte 16 (the generated C program checks
     * every field of the layout as well; this pins the whole command).
     */
    @Test
    void attachToMcgBytes() {
        org.agrona.concurrent.UnsafeBuffer b = new org.agrona.concurrent.UnsafeBuffer(new byte[McgLayouts.ATTACH_TO_MCG_IN.sizeBytes()]);
        McgLayouts.ATTACH_TO_MCG_IN.set(b, 0, "opcode", CmdOpcode.ATTACH_TO_MCG).set(b, 0, "qpn", 0x123456);
        McgLayouts.ATTACH_TO_MCG_IN.field("multicast_gid").setBytes(b, 0, new byte[] {0, 0, 0, 0, 0, 0, 0, 0, 0, 0,
                (byte) 0xff, (byte) 0xff, (byte) 239, 1, 2, 3});
        assertEquals("080600000000000000123456000000000000000000000000" + "0000ffffef010203",
                java.util.HexFormat.of().formatHex(b.byteArray()));
    }

    /** Every 32-bit counter of query_q_counter_out is reported, and nothing of the header. */
    @Test
    void qCounterNamesAreTheCounterFields() {
        assertEquals(35, QCounterLayouts.COUNTERS.size(), QCounterLayouts.COUNTERS.toString());
        assertEquals("rx_write_requests", QCounterLayouts.COUNTERS.get(0));
        assertEquals("roce_slow_restart_trans", QCounterLayouts.COUNTERS.get(34));
        for (String n : QCounterLayouts.COUNTERS) {
            assertEquals(32, QCounterLayouts.QUERY_Q_COUNTER_OUT.field(n).bitWidth(), n);
        }
    }

    @Test
    void eqeMatchesDeviceH() {
        assertEquals(Eqe.SIZE, K.get("eqe.size"));
        assertEquals(Eqe.TYPE_OFFSET, K.get("eqe.type"));
        assertEquals(Eqe.SUB_TYPE_OFFSET, K.get("eqe.sub_type"));
        assertEquals(Eqe.DATA_OFFSET, K.get("eqe.data"));
        assertEquals(Eqe.SIGNATURE_OFFSET, K.get("eqe.signature"));
        assertEquals(Eqe.OWNER_OFFSET, K.get("eqe.owner"));
        assertEquals(Eqe.DATA_OFFSET + Eqe.CQ_ERR_CQN, K.get("eqe.data.cq_err.cqn"));
        assertEquals(Eqe.DATA_OFFSET + Eqe.CQ_ERR_SYNDROME, K.get("eqe.data.cq_err.syndrome"));
        assertEquals(Eqe.DATA_OFFSET + Eqe.QP_SRQ_TYPE, K.get("eqe.data.qp_srq.type"));
        assertEquals(Eqe.DATA_OFFSET + Eqe.QP_SRQ_NUMBER, K.get("eqe.data.qp_srq.qp_srq_n"));
        assertEquals(Eqe.DATA_OFFSET + Eqe.PAGE_REQ_FUNC_ID, K.get("eqe.data.req_pages.func_id"));
        assertEquals(Eqe.DATA_OFFSET + Eqe.PAGE_REQ_NUM_PAGES, K.get("eqe.data.req_pages.num_pages"));
        assertEquals(Eqe.DATA_OFFSET + Eqe.COMP_CQN, K.get("eqe.data.comp.cqn"));
        assertEquals(Eqe.DATA_OFFSET + Eqe.PORT_STATE_PORT, K.get("eqe.data.port.port"));
        eventConstants().forEach((name, java) -> assertEquals(K.get(name), java, name));
        assertEquals(K.get("MLX5_CQ_ERROR_SYNDROME_CQ_OVERRUN"), (long) EventType.CQ_ERROR_OVERRUN);
        assertEquals(K.get("MLX5_CQ_ERROR_SYNDROME_CQ_ACCESS_VIOLATION_ERROR"), (long) EventType.CQ_ERROR_ACCESS_VIOLATION);
    }

    @Test
    void roceConstantsMatchDeviceH() {
        assertEquals(K.get("MLX5_ROCE_VERSION_1"), (long) RoceAddressLayouts.ROCE_VERSION_1);
        assertEquals(K.get("MLX5_ROCE_VERSION_2"), (long) RoceAddressLayouts.ROCE_VERSION_2);
        assertEquals(K.get("MLX5_ROCE_L3_TYPE_IPV4"), (long) RoceAddressLayouts.L3_TYPE_IPV4);
        assertEquals(K.get("MLX5_ROCE_L3_TYPE_IPV6"), (long) RoceAddressLayouts.L3_TYPE_IPV6);
    }

    @Test
    void udpSourcePortMatchesLibibverbs() {
        for (int fl : FLOW_LABELS) {
            assertEquals(K.get("sport_" + fl), (long) Mlx5Path.udpSportOfFlowLabel(fl), "flow label 0x" + Integer.toHexString(fl));
        }
    }

    /** qp.h and driver.h pull in the whole kernel: their enumerators are read from the header text instead. */
    @Test
    void qpEnumeratorsMatchKernelHeaderText() throws IOException {
        Path dir = NativeHeaders.mlx5HeaderDir();
        Map<String, Long> qp = enumerators(Files.readString(dir.resolve("qp.h")));
        Map<String, Long> driver = enumerators(Files.readString(dir.resolve("driver.h")));
        Map<String, Long> expected = new LinkedHashMap<>();
        expected.put("MLX5_QP_OPTPAR_ALT_ADDR_PATH", (long) QpModifyLayouts.OPTPAR_ALT_ADDR_PATH);
        expected.put("MLX5_QP_OPTPAR_RRE", (long) QpModifyLayouts.OPTPAR_RRE);
        expected.put("MLX5_QP_OPTPAR_RAE", (long) QpModifyLayouts.OPTPAR_RAE);
        expected.put("MLX5_QP_OPTPAR_RWE", (long) QpModifyLayouts.OPTPAR_RWE);
        expected.put("MLX5_QP_OPTPAR_PKEY_INDEX", (long) QpModifyLayouts.OPTPAR_PKEY_INDEX);
        expected.put("MLX5_QP_OPTPAR_Q_KEY", (long) QpModifyLayouts.OPTPAR_Q_KEY);
        expected.put("MLX5_QP_OPTPAR_RNR_TIMEOUT", (long) QpModifyLayouts.OPTPAR_RNR_TIMEOUT);
        expected.put("MLX5_QP_OPTPAR_PRIMARY_ADDR_PATH", (long) QpModifyLayouts.OPTPAR_PRIMARY_ADDR_PATH);
        expected.put("MLX5_QP_OPTPAR_SRA_MAX", (long) QpModifyLayouts.OPTPAR_SRA_MAX);
        expected.put("MLX5_QP_OPTPAR_RRA_MAX", (long) QpModifyLayouts.OPTPAR_RRA_MAX);
        expected.put("MLX5_QP_OPTPAR_PM_STATE", (long) QpModifyLayouts.OPTPAR_PM_STATE);
        expected.put("MLX5_QP_OPTPAR_RETRY_COUNT", (long) QpModifyLayouts.OPTPAR_RETRY_COUNT);
        expected.put("MLX5_QP_OPTPAR_RNR_RETRY", (long) QpModifyLayouts.OPTPAR_RNR_RETRY);
        expected.put("MLX5_QP_OPTPAR_ACK_TIMEOUT", (long) QpModifyLayouts.OPTPAR_ACK_TIMEOUT);
        expected.put("MLX5_QP_OPTPAR_PRI_PORT", (long) QpModifyLayouts.OPTPAR_PRI_PORT);
        expected.put("MLX5_QP_OPTPAR_SRQN", (long) QpModifyLayouts.OPTPAR_SRQN);
        expected.put("MLX5_QP_OPTPAR_CQN_RCV", (long) QpModifyLayouts.OPTPAR_CQN_RCV);
        expected.put("MLX5_NON_ZERO_RQ", (long) QpModifyLayouts.RQ_TYPE_REGULAR);
        expected.put("MLX5_SRQ_RQ", (long) QpModifyLayouts.RQ_TYPE_SRQ);
        expected.put("MLX5_ZERO_LEN_RQ", (long) QpModifyLayouts.RQ_TYPE_ZERO_LEN);
        for (Map.Entry<String, Long> e : expected.entrySet()) {
            assertEquals(qp.get(e.getKey()), e.getValue(), e.getKey() + " in qp.h");
        }
        assertEquals(driver.get("MLX5_ATOMIC_MODE_IB_COMP"), (long) QpModifyLayouts.ATOMIC_MODE_IB_COMP,
                "MLX5_ATOMIC_MODE_IB_COMP in driver.h");
    }

    /** {@code NAME = 0x10,} / {@code NAME = 1 << 3,} / {@code NAME = 7,} enumerators of a header. */
    private static Map<String, Long> enumerators(String text) {
        Map<String, Long> m = new HashMap<>();
        Matcher x = Pattern.compile("\\b(MLX5_[A-Z0-9_]+)\\s*=\\s*(0x[0-9a-fA-F]+|\\d+)(?:\\s*<<\\s*(\\d+))?\\s*,?")
                .matcher(text);
        while (x.find()) {
            String v = x.group(2);
            long n = v.startsWith("0x") ? Long.parseLong(v.substring(2), 16) : Long.parseLong(v);
            if (x.group(3) != null) {
                n <<= Integer.parseInt(x.group(3));
            }
            m.putIfAbsent(x.group(1), n);
        }
        return m;
    }
}
