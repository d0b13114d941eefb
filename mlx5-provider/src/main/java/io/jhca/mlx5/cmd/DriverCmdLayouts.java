package io.jhca.mlx5.cmd;

import java.util.List;
import java.util.Map;

/**
 * The layouts the mlx5 driver needs beyond {@link CmdLayouts} (added by the driver, in files of their own), with the
 * same opcode lookup: {@link #input(int)} / {@link #output(int)} answer for every opcode either class describes, so a
 * device model can check lengths of all the commands the driver sends.
 */
public final class DriverCmdLayouts {

    private static final List<Layout> ALL = List.of(
            RoceAddressLayouts.ROCE_ADDR_LAYOUT,
            RoceAddressLayouts.SET_ROCE_ADDRESS_IN, RoceAddressLayouts.SET_ROCE_ADDRESS_OUT,
            QpModifyLayouts.INIT2INIT_QP_IN, QpModifyLayouts.INIT2INIT_QP_OUT,
            QpModifyLayouts.RTS2RTS_QP_IN, QpModifyLayouts.RTS2RTS_QP_OUT,
            QpModifyLayouts.SQERR2RTS_QP_IN, QpModifyLayouts.SQERR2RTS_QP_OUT,
            QCounterLayouts.ALLOC_Q_COUNTER_IN, QCounterLayouts.ALLOC_Q_COUNTER_OUT,
            QCounterLayouts.DEALLOC_Q_COUNTER_IN, QCounterLayouts.DEALLOC_Q_COUNTER_OUT,
            QCounterLayouts.QUERY_Q_COUNTER_IN, QCounterLayouts.QUERY_Q_COUNTER_OUT,
            McgLayouts.ATTACH_TO_MCG_IN, McgLayouts.ATTACH_TO_MCG_OUT,
            McgLayouts.DETACH_FROM_MCG_IN, McgLayouts.DETACH_FROM_MCG_OUT);

    private static final Map<Integer, Layout[]> BY_OPCODE = Map.of(
            CmdOpcode.SET_ROCE_ADDRESS,
            new Layout[] {RoceAddressLayouts.SET_ROCE_ADDRESS_IN, RoceAddressLayouts.SET_ROCE_ADDRESS_OUT},
            CmdOpcode.INIT2INIT_QP, new Layout[] {QpModifyLayouts.INIT2INIT_QP_IN, QpModifyLayouts.INIT2INIT_QP_OUT},
            CmdOpcode.RTS2RTS_QP, new Layout[] {QpModifyLayouts.RTS2RTS_QP_IN, QpModifyLayouts.RTS2RTS_QP_OUT},
            CmdOpcode.SQERR2RTS_QP, new Layout[] {QpModifyLayouts.SQERR2RTS_QP_IN, QpModifyLayouts.SQERR2RTS_QP_OUT},
            CmdOpcode.ALLOC_Q_COUNTER,
            new Layout[] {QCounterLayouts.ALLOC_Q_COUNTER_IN, QCounterLayouts.ALLOC_Q_COUNTER_OUT},
            CmdOpcode.DEALLOC_Q_COUNTER,
            new Layout[] {QCounterLayouts.DEALLOC_Q_COUNTER_IN, QCounterLayouts.DEALLOC_Q_COUNTER_OUT},
            CmdOpcode.QUERY_Q_COUNTER,
            new Layout[] {QCounterLayouts.QUERY_Q_COUNTER_IN, QCounterLayouts.QUERY_Q_COUNTER_OUT},
            CmdOpcode.ATTACH_TO_MCG, new Layout[] {McgLayouts.ATTACH_TO_MCG_IN, McgLayouts.ATTACH_TO_MCG_OUT},
            CmdOpcode.DETACH_FROM_MCG, new Layout[] {McgLayouts.DETACH_FROM_MCG_IN, McgLayouts.DETACH_FROM_MCG_OUT});

    private DriverCmdLayouts() {
    }

    /** The layouts added here (golden-tested like {@link CmdLayouts#all()}). */
    public static List<Layout> all() {
        return ALL;
    }

    /** Input layout for an opcode described here or in {@link CmdLayouts}; null if neither does. */
    public static Layout input(int opcode) {
        Layout[] p = BY_OPCODE.get(opcode);
        if (p == null) {
            p = SrqLayouts.forOpcode(opcode);
        }
        return p != null ? p[0] : CmdLayouts.input(opcode);
    }

    /** Output layout for an opcode described here or in {@link CmdLayouts}; null if neither does. */
    public static Layout output(int opcode) {
        Layout[] p = BY_OPCODE.get(opcode);
        if (p == null) {
            p = SrqLayouts.forOpcode(opcode);
        }
        return p != null ? p[1] : CmdLayouts.output(opcode);
    }
}
