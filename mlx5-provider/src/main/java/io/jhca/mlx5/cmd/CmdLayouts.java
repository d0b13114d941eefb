package io.jhca.mlx5.cmd;

import java.util.HashMap;
import java.util.List;
import java.util.Map;

/**
 * Every layout this package defines, and which input/output layout goes with which opcode. Golden tests walk
 * {@link #all()}; a device model uses {@link #input(int)} / {@link #output(int)} to check lengths.
 */
public final class CmdLayouts {

    private static final List<Layout> ALL = List.of(
            HcaCap.CMD_HCA_CAP, MkeyLayouts.MKC, CqLayouts.CQC, QpLayouts.ADS, QpLayouts.QPC, EqLayouts.EQC,
            HcaLayouts.ENABLE_HCA_IN, HcaLayouts.ENABLE_HCA_OUT,
            HcaLayouts.DISABLE_HCA_IN, HcaLayouts.DISABLE_HCA_OUT,
            HcaLayouts.QUERY_ISSI_IN, HcaLayouts.QUERY_ISSI_OUT,
            HcaLayouts.SET_ISSI_IN, HcaLayouts.SET_ISSI_OUT,
            HcaLayouts.QUERY_PAGES_IN, HcaLayouts.QUERY_PAGES_OUT,
            HcaLayouts.MANAGE_PAGES_IN, HcaLayouts.MANAGE_PAGES_OUT,
            HcaLayouts.QUERY_HCA_CAP_IN, HcaLayouts.QUERY_HCA_CAP_OUT,
            HcaLayouts.INIT_HCA_IN, HcaLayouts.INIT_HCA_OUT,
            HcaLayouts.TEARDOWN_HCA_IN, HcaLayouts.TEARDOWN_HCA_OUT,
            UarPdLayouts.ALLOC_UAR_IN, UarPdLayouts.ALLOC_UAR_OUT,
            UarPdLayouts.DEALLOC_UAR_IN, UarPdLayouts.DEALLOC_UAR_OUT,
            UarPdLayouts.ALLOC_PD_IN, UarPdLayouts.ALLOC_PD_OUT,
            UarPdLayouts.DEALLOC_PD_IN, UarPdLayouts.DEALLOC_PD_OUT,
            MkeyLayouts.CREATE_MKEY_IN, MkeyLayouts.CREATE_MKEY_OUT,
            MkeyLayouts.DESTROY_MKEY_IN, MkeyLayouts.DESTROY_MKEY_OUT,
            CqLayouts.CREATE_CQ_IN, CqLayouts.CREATE_CQ_OUT,
            CqLayouts.DESTROY_CQ_IN, CqLayouts.DESTROY_CQ_OUT,
            QpLayouts.CREATE_QP_IN, QpLayouts.CREATE_QP_OUT,
            QpLayouts.DESTROY_QP_IN, QpLayouts.DESTROY_QP_OUT,
            QpLayouts.RST2INIT_QP_IN, QpLayouts.RST2INIT_QP_OUT,
            QpLayouts.INIT2RTR_QP_IN, QpLayouts.INIT2RTR_QP_OUT,
            QpLayouts.RTR2RTS_QP_IN, QpLayouts.RTR2RTS_QP_OUT,
            QpLayouts.QP_2ERR_IN, QpLayouts.QP_2ERR_OUT,
            QpLayouts.QP_2RST_IN, QpLayouts.QP_2RST_OUT,
            QpLayouts.QUERY_QP_IN, QpLayouts.QUERY_QP_OUT,
            EqLayouts.CREATE_EQ_IN, EqLayouts.CREATE_EQ_OUT,
            EqLayouts.DESTROY_EQ_IN, EqLayouts.DESTROY_EQ_OUT);

    private static final Map<Integer, Layout[]> BY_OPCODE = new HashMap<>();

    static {
        pair(CmdOpcode.ENABLE_HCA, HcaLayouts.ENABLE_HCA_IN, HcaLayouts.ENABLE_HCA_OUT);
        pair(CmdOpcode.DISABLE_HCA, HcaLayouts.DISABLE_HCA_IN, HcaLayouts.DISABLE_HCA_OUT);
        pair(CmdOpcode.QUERY_ISSI, HcaLayouts.QUERY_ISSI_IN, HcaLayouts.QUERY_ISSI_OUT);
        pair(CmdOpcode.SET_ISSI, HcaLayouts.SET_ISSI_IN, HcaLayouts.SET_ISSI_OUT);
        pair(CmdOpcode.QUERY_PAGES, HcaLayouts.QUERY_PAGES_IN, HcaLayouts.QUERY_PAGES_OUT);
        pair(CmdOpcode.MANAGE_PAGES, HcaLayouts.MANAGE_PAGES_IN, HcaLayouts.MANAGE_PAGES_OUT);
        pair(CmdOpcode.QUERY_HCA_CAP, HcaLayouts.QUERY_HCA_CAP_IN, HcaLayouts.QUERY_HCA_CAP_OUT);
        pair(CmdOpcode.INIT_HCA, HcaLayouts.INIT_HCA_IN, HcaLayouts.INIT_HCA_OUT);
        pair(CmdOpcode.TEARDOWN_HCA, HcaLayouts.TEARDOWN_HCA_IN, HcaLayouts.TEARDOWN_HCA_OUT);
        pair(CmdOpcode.ALLOC_UAR, UarPdLayouts.ALLOC_UAR_IN, UarPdLayouts.ALLOC_UAR_OUT);
        pair(CmdOpcode.DEALLOC_UAR, UarPdLayouts.DEALLOC_UAR_IN, UarPdLayouts.DEALLOC_UAR_OUT);
        pair(CmdOpcode.ALLOC_PD, UarPdLayouts.ALLOC_PD_IN, UarPdLayouts.ALLOC_PD_OUT);
        pair(CmdOpcode.DEALLOC_PD, UarPdLayouts.DEALLOC_PD_IN, UarPdLayouts.DEALLOC_PD_OUT);
        pair(CmdOpcode.CREATE_MKEY, MkeyLayouts.CREATE_MKEY_IN, MkeyLayouts.CREATE_MKEY_OUT);
        pair(CmdOpcode.DESTROY_MKEY, MkeyLayouts.DESTROY_MKEY_IN, MkeyLayouts.DESTROY_MKEY_OUT);
        pair(CmdOpcode.CREATE_CQ, CqLayouts.CREATE_CQ_IN, CqLayouts.CREATE_CQ_OUT);
        pair(CmdOpcode.DESTROY_CQ, CqLayouts.DESTROY_CQ_IN, CqLayouts.DESTROY_CQ_OUT);
        pair(CmdOpcode.CREATE_QP, QpLayouts.CREATE_QP_IN, QpLayouts.CREATE_QP_OUT);
        pair(CmdOpcode.DESTROY_QP, QpLayouts.DESTROY_QP_IN, QpLayouts.DESTROY_QP_OUT);
        pair(CmdOpcode.RST2INIT_QP, QpLayouts.RST2INIT_QP_IN, QpLayouts.RST2INIT_QP_OUT);
        pair(CmdOpcode.INIT2RTR_QP, QpLayouts.INIT2RTR_QP_IN, QpLayouts.INIT2RTR_QP_OUT);
        pair(CmdOpcode.RTR2RTS_QP, QpLayouts.RTR2RTS_QP_IN, QpLayouts.RTR2RTS_QP_OUT);
        pair(CmdOpcode.QP_2ERR, QpLayouts.QP_2ERR_IN, QpLayouts.QP_2ERR_OUT);
        pair(CmdOpcode.QP_2RST, QpLayouts.QP_2RST_IN, QpLayouts.QP_2RST_OUT);
        pair(CmdOpcode.QUERY_QP, QpLayouts.QUERY_QP_IN, QpLayouts.QUERY_QP_OUT);
        pair(CmdOpcode.CREATE_EQ, EqLayouts.CREATE_EQ_IN, EqLayouts.CREATE_EQ_OUT);
        pair(CmdOpcode.DESTROY_EQ, EqLayouts.DESTROY_EQ_IN, EqLayouts.DESTROY_EQ_OUT);
    }

    private CmdLayouts() {
    }

    private static void pair(int opcode, Layout in, Layout out) {
        BY_OPCODE.put(opcode, new Layout[] {in, out});
    }

    /** All layouts, contexts first, then commands as input/output pairs. */
    public static List<Layout> all() {
        return ALL;
    }

    /** The input layout for an opcode, or null if this package does not describe it. */
    public static Layout input(int opcode) {
        Layout[] p = BY_OPCODE.get(opcode);
        return p == null ? null : p[0];
    }

    /** The output layout for an opcode, or null if this package does not describe it. */
    public static Layout output(int opcode) {
        Layout[] p = BY_OPCODE.get(opcode);
        return p == null ? null : p[1];
    }
}
