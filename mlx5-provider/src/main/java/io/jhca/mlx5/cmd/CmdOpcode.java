package io.jhca.mlx5.cmd;

import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.Map;

/**
 * Command opcodes, values from the kernel's mlx5_ifc.h {@code enum MLX5_CMD_OP_*} (checked by a golden test against
 * the installed header). {@link #name(int)} gives the kernel's spelling (mlx5_core cmd.c {@code mlx5_command_str}), so
 * traces and errors read like dmesg.
 */
public final class CmdOpcode {

    public static final int QUERY_HCA_CAP = 0x100;
    public static final int QUERY_ADAPTER = 0x101;
    public static final int INIT_HCA = 0x102;
    public static final int TEARDOWN_HCA = 0x103;
    public static final int ENABLE_HCA = 0x104;
    public static final int DISABLE_HCA = 0x105;
    public static final int QUERY_PAGES = 0x107;
    public static final int MANAGE_PAGES = 0x108;
    public static final int SET_HCA_CAP = 0x109;
    public static final int QUERY_ISSI = 0x10a;
    public static final int SET_ISSI = 0x10b;
    public static final int SET_DRIVER_VERSION = 0x10d;
    public static final int CREATE_MKEY = 0x200;
    public static final int QUERY_MKEY = 0x201;
    public static final int DESTROY_MKEY = 0x202;
    public static final int QUERY_SPECIAL_CONTEXTS = 0x203;
    public static final int CREATE_EQ = 0x301;
    public static final int DESTROY_EQ = 0x302;
    public static final int QUERY_EQ = 0x303;
    public static final int GEN_EQE = 0x304;
    public static final int CREATE_CQ = 0x400;
    public static final int DESTROY_CQ = 0x401;
    public static final int QUERY_CQ = 0x402;
    public static final int MODIFY_CQ = 0x403;
    public static final int CREATE_QP = 0x500;
    public static final int DESTROY_QP = 0x501;
    public static final int RST2INIT_QP = 0x502;
    public static final int INIT2RTR_QP = 0x503;
    public static final int RTR2RTS_QP = 0x504;
    public static final int RTS2RTS_QP = 0x505;
    public static final int SQERR2RTS_QP = 0x506;
    /** mlx5_ifc {@code MLX5_CMD_OP_2ERR_QP}. */
    public static final int QP_2ERR = 0x507;
    /** mlx5_ifc {@code MLX5_CMD_OP_2RST_QP}. */
    public static final int QP_2RST = 0x50a;
    public static final int QUERY_QP = 0x50b;
    public static final int SQD_RTS_QP = 0x50c;
    public static final int MAD_IFC = 0x50d;
    public static final int INIT2INIT_QP = 0x50e;
    public static final int QUERY_VPORT_STATE = 0x750;
    public static final int MODIFY_VPORT_STATE = 0x751;
    public static final int QUERY_NIC_VPORT_CONTEXT = 0x754;
    public static final int MODIFY_NIC_VPORT_CONTEXT = 0x755;
    public static final int QUERY_ROCE_ADDRESS = 0x760;
    public static final int SET_ROCE_ADDRESS = 0x761;
    public static final int QUERY_HCA_VPORT_CONTEXT = 0x762;
    public static final int QUERY_HCA_VPORT_GID = 0x764;
    public static final int QUERY_HCA_VPORT_PKEY = 0x765;
    public static final int ALLOC_Q_COUNTER = 0x771;
    public static final int DEALLOC_Q_COUNTER = 0x772;
    public static final int QUERY_Q_COUNTER = 0x773;
    public static final int ALLOC_PD = 0x800;
    public static final int DEALLOC_PD = 0x801;
    public static final int ALLOC_UAR = 0x802;
    public static final int DEALLOC_UAR = 0x803;
    public static final int CONFIG_INT_MODERATION = 0x804;
    public static final int ACCESS_REG = 0x805;
    public static final int ATTACH_TO_MCG = 0x806;
    public static final int DETACH_FROM_MCG = 0x807;
    public static final int NOP = 0x80d;
    public static final int ALLOC_XRCD = 0x80e;
    public static final int DEALLOC_XRCD = 0x80f;
    public static final int ALLOC_TRANSPORT_DOMAIN = 0x816;
    public static final int DEALLOC_TRANSPORT_DOMAIN = 0x817;
    public static final int CREATE_TIR = 0x900;
    public static final int DESTROY_TIR = 0x902;
    public static final int CREATE_SQ = 0x904;
    public static final int MODIFY_SQ = 0x905;
    public static final int DESTROY_SQ = 0x906;
    public static final int CREATE_RQ = 0x908;
    public static final int MODIFY_RQ = 0x909;
    public static final int DESTROY_RQ = 0x90a;
    public static final int CREATE_TIS = 0x912;
    public static final int DESTROY_TIS = 0x914;
    public static final int CREATE_RQT = 0x916;
    public static final int DESTROY_RQT = 0x918;
    public static final int CREATE_GENERAL_OBJECT = 0xa00;
    public static final int CREATE_SRQ = 0x700;
    public static final int DESTROY_SRQ = 0x701;
    public static final int QUERY_SRQ = 0x702;
    public static final int ARM_RQ = 0x703;

    private static final Map<Integer, String> NAMES;

    static {
        Map<Integer, String> m = new LinkedHashMap<>();
        for (java.lang.reflect.Field f : CmdOpcode.class.getDeclaredFields()) {
            if (f.getType() == int.class) {
                try {
                    m.put(f.getInt(null), kernelName(f.getName()));
                } catch (IllegalAccessException e) {
                    throw new ExceptionInInitializerError(e);
                }
            }
        }
        NAMES = Collections.unmodifiableMap(m);
    }

    private CmdOpcode() {
    }

    private static String kernelName(String javaName) {
        // Java names cannot start with a digit: QP_2ERR is the kernel's 2ERR_QP
        return javaName.startsWith("QP_2") ? javaName.substring(3) + "_QP" : javaName;
    }

    /** The kernel's name ({@code "CREATE_QP"}, {@code "2ERR_QP"}), or cmd.c's {@code "unknown command opcode"}. */
    public static String name(int opcode) {
        String n = NAMES.get(opcode);
        return n != null ? n : "unknown command opcode";
    }

    /** Every opcode this class knows, value to kernel name, in declaration order. */
    public static Map<Integer, String> known() {
        return NAMES;
    }
}
