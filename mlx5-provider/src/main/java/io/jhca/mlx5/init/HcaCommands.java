package io.jhca.mlx5.init;

import io.jhca.mlx5.cmd.CmdQueue;
import io.jhca.mlx5.cmd.EqLayouts;
import io.jhca.mlx5.cmd.HcaCap;
import io.jhca.mlx5.cmd.HcaLayouts;
import io.jhca.mlx5.cmd.CmdOpcode;
import io.jhca.mlx5.cmd.QCounterLayouts;
import io.jhca.mlx5.cmd.RoceAddressLayouts;
import io.jhca.mlx5.cmd.Struct;
import io.jhca.mlx5.cmd.UarPdLayouts;

/**
 * The bring-up and teardown commands, one method each, named as mlx5_core names them. Object commands (PD, mkey, CQ,
 * QP) are built by their owners with {@link PrmCommand}. Every failure throws {@link io.jhca.mlx5.cmd.CommandException}.
 */
public final class HcaCommands {

    /** function_id 0 with embedded_cpu_function 0: this function itself (rdma-core mlx5_vfio.c). */
    public static final int SELF = 0;

    private final CmdQueue cmdq;

    public HcaCommands(CmdQueue cmdq) {
        this.cmdq = cmdq;
    }

    public CmdQueue queue() {
        return cmdq;
    }

    public void enableHca() {
        PrmCommand.of(CmdOpcode.ENABLE_HCA, HcaLayouts.ENABLE_HCA_IN, HcaLayouts.ENABLE_HCA_OUT).set("function_id", SELF)
                .execute(cmdq);
    }

    public void disableHca() {
        PrmCommand.of(CmdOpcode.DISABLE_HCA, HcaLayouts.DISABLE_HCA_IN, HcaLayouts.DISABLE_HCA_OUT).set("function_id", SELF)
                .execute(cmdq);
    }

    /** QUERY_ISSI: the {@code supported_issi_dw0} bitmap (bit n = ISSI n). */
    public int querySupportedIssi() {
        return (int) PrmCommand.of(CmdOpcode.QUERY_ISSI, HcaLayouts.QUERY_ISSI_IN, HcaLayouts.QUERY_ISSI_OUT).execute(cmdq)
                .get("supported_issi_dw0");
    }

    public void setIssi(int issi) {
        PrmCommand.of(CmdOpcode.SET_ISSI, HcaLayouts.SET_ISSI_IN, HcaLayouts.SET_ISSI_OUT).set("current_issi", issi)
                .execute(cmdq);
    }

    /** QUERY_PAGES: what the firmware asks for; {@code opMod} is {@link HcaLayouts#PAGES_BOOT} or {@code _INIT}. */
    public PageRequest queryPages(int opMod) {
        Struct out = PrmCommand.of(CmdOpcode.QUERY_PAGES, HcaLayouts.QUERY_PAGES_IN, HcaLayouts.QUERY_PAGES_OUT).opMod(opMod)
                .set("function_id", SELF).execute(cmdq);
        return new PageRequest((int) out.get("function_id"), (int) out.get("num_pages"));
    }

    /** The answer to QUERY_PAGES: num_pages is signed, negative means the firmware has pages to return. */
    public record PageRequest(int functionId, int numPages) {
    }

    /** MANAGE_PAGES give: hands {@code count} 4 KiB pages (their IOVAs) to the firmware. */
    public void givePages(int functionId, long[] pages, int count) {
        PrmCommand c = PrmCommand.of(CmdOpcode.MANAGE_PAGES, HcaLayouts.MANAGE_PAGES_IN, HcaLayouts.MANAGE_PAGES_IN.sizeBytes(count),
                HcaLayouts.MANAGE_PAGES_OUT, HcaLayouts.MANAGE_PAGES_OUT.sizeBytes())
                .opMod(HcaLayouts.PAGES_GIVE).set("function_id", functionId).set("input_num_entries", count);
        for (int i = 0; i < count; i++) {
            c.setElement("pas", i, pages[i]);
        }
        c.execute(cmdq);
    }

    /**
     * MANAGE_PAGES take: asks for up to {@code count} pages back; returns how many the firmware returned, their IOVAs
     * in {@code returned[0..n)}.
     */
    public int takePages(int functionId, int count, long[] returned) {
        Struct out = PrmCommand.of(CmdOpcode.MANAGE_PAGES, HcaLayouts.MANAGE_PAGES_IN, HcaLayouts.MANAGE_PAGES_IN.sizeBytes(),
                HcaLayouts.MANAGE_PAGES_OUT, HcaLayouts.MANAGE_PAGES_OUT.sizeBytes(count))
                .opMod(HcaLayouts.PAGES_TAKE).set("function_id", functionId).set("input_num_entries", count)
                .execute(cmdq);
        int n = (int) out.get("output_num_entries");
        if (n < 0 || n > count) {
            throw new IllegalStateException("MANAGE_PAGES take: firmware returned " + n + " pages, asked for " + count);
        }
        for (int i = 0; i < n; i++) {
            returned[i] = out.getElement("pas", i);
        }
        return n;
    }

    /** QUERY_HCA_CAP of the general capabilities in the given mode ({@link HcaCap#MODE_CURRENT} or MAX). */
    public HcaCaps queryGeneralCaps(int mode) {
        return HcaCaps.from(PrmCommand.of(CmdOpcode.QUERY_HCA_CAP, HcaLayouts.QUERY_HCA_CAP_IN, HcaLayouts.QUERY_HCA_CAP_OUT)
                .opMod(HcaCap.opMod(HcaCap.TYPE_GENERAL, mode)).execute(cmdq));
    }

    public void initHca() {
        PrmCommand.of(CmdOpcode.INIT_HCA, HcaLayouts.INIT_HCA_IN, HcaLayouts.INIT_HCA_OUT).execute(cmdq);
    }

    /** TEARDOWN_HCA with a profile; returns the output {@code state} (1 = force/fast teardown failed). */
    public int teardownHca(int profile) {
        return (int) PrmCommand.of(CmdOpcode.TEARDOWN_HCA, HcaLayouts.TEARDOWN_HCA_IN, HcaLayouts.TEARDOWN_HCA_OUT)
                .set("profile", profile).execute(cmdq).get("state");
    }

    public int allocUar() {
        return (int) PrmCommand.of(CmdOpcode.ALLOC_UAR, UarPdLayouts.ALLOC_UAR_IN, UarPdLayouts.ALLOC_UAR_OUT).execute(cmdq)
                .get("uar");
    }

    public void deallocUar(int uar) {
        PrmCommand.of(CmdOpcode.DEALLOC_UAR, UarPdLayouts.DEALLOC_UAR_IN, UarPdLayouts.DEALLOC_UAR_OUT).set("uar", uar)
                .execute(cmdq);
    }

    public int allocPd() {
        return (int) PrmCommand.of(CmdOpcode.ALLOC_PD, UarPdLayouts.ALLOC_PD_IN, UarPdLayouts.ALLOC_PD_OUT).execute(cmdq)
                .get("pd");
    }

    public void deallocPd(int pd) {
        PrmCommand.of(CmdOpcode.DEALLOC_PD, UarPdLayouts.DEALLOC_PD_IN, UarPdLayouts.DEALLOC_PD_OUT).set("pd", pd).execute(cmdq);
    }

    /** ALLOC_Q_COUNTER: a counter set QPs can name in qpc.counter_set_id. */
    public int allocQCounter() {
        return (int) PrmCommand.of(CmdOpcode.ALLOC_Q_COUNTER, QCounterLayouts.ALLOC_Q_COUNTER_IN,
                QCounterLayouts.ALLOC_Q_COUNTER_OUT).execute(cmdq).get("counter_set_id");
    }

    public void deallocQCounter(int counterSetId) {
        PrmCommand.of(CmdOpcode.DEALLOC_Q_COUNTER, QCounterLayouts.DEALLOC_Q_COUNTER_IN,
                QCounterLayouts.DEALLOC_Q_COUNTER_OUT).set("counter_set_id", counterSetId).execute(cmdq);
    }

    /**
     * QUERY_Q_COUNTER: every counter of {@link QCounterLayouts#COUNTERS}, in that order (unsigned 32-bit values);
     * with {@code clear} the device zeroes the set after reading it.
     */
    public long[] queryQCounter(int counterSetId, boolean clear) {
        Struct out = PrmCommand.of(CmdOpcode.QUERY_Q_COUNTER, QCounterLayouts.QUERY_Q_COUNTER_IN,
                QCounterLayouts.QUERY_Q_COUNTER_OUT).set("counter_set_id", counterSetId).set("clear", clear)
                .execute(cmdq);
        long[] values = new long[QCounterLayouts.COUNTERS.size()];
        for (int n = 0; n < values.length; n++) {
            values[n] = out.get(QCounterLayouts.COUNTERS.get(n));
        }
        return values;
    }

    public void destroyEq(int eqn) {
        PrmCommand.of(CmdOpcode.DESTROY_EQ, EqLayouts.DESTROY_EQ_IN, EqLayouts.DESTROY_EQ_OUT).set("eq_number", eqn)
                .execute(cmdq);
    }

    /**
     * SET_ROCE_ADDRESS: programs GID table entry {@code index} (mlx5 core lib/gid.c {@code mlx5_core_roce_gid_set}).
     *
     * @param gid    16 bytes, wire order
     * @param mac    6 bytes, the source MAC of the entry
     * @param l3Type {@link RoceAddressLayouts#L3_TYPE_IPV4} for an IPv4-mapped GID, else IPv6
     */
    public void setRoceAddress(int index, byte[] gid, byte[] mac, int l3Type, int roceVersion) {
        long macValue = 0;
        for (byte b : mac) {
            macValue = macValue << 8 | (b & 0xff);
        }
        PrmCommand.of(CmdOpcode.SET_ROCE_ADDRESS, RoceAddressLayouts.SET_ROCE_ADDRESS_IN, RoceAddressLayouts.SET_ROCE_ADDRESS_OUT)
                .set("roce_address_index", index)
                .setBytes("roce_address.source_l3_address", gid)
                .set("roce_address.source_mac", macValue)
                .set("roce_address.roce_l3_type", l3Type)
                .set("roce_address.roce_version", roceVersion)
                .execute(cmdq);
    }
}
