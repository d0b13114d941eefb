package io.jhca.mlx5.init;

import io.jhca.mlx5.cmd.Field;
import io.jhca.mlx5.cmd.HcaCap;
import io.jhca.mlx5.cmd.Layout;
import io.jhca.mlx5.cmd.Struct;

/**
 * The general device capabilities ({@code cmd_hca_cap}, QUERY_HCA_CAP op_mod GENERAL/CURRENT) the driver uses; the
 * log2 fields as the device reports them. The verbs limits derived from them follow the kernel's
 * mlx5_ib_query_device (see {@code Mlx5Attributes}).
 */
public record HcaCaps(
        int logMaxQp, int logMaxQpSz, int logMaxCq, int logMaxCqSz, int logMaxEq, int logMaxEqSz, int logMaxMkey,
        int logMaxPd, int logMaxMrwSz, int logMaxRaReqQp, int logMaxRaResQp, int logMaxMsg, int gidTableSize,
        int pkeyTableSize, int localCaAckDelay, int portType, int numPorts, int cqeVersion, boolean roce,
        boolean atomic, boolean rc, boolean uc, boolean ud, boolean bf, int logBfRegSize, boolean fastTeardown,
        int vhcaId, int logPgSz, int maxQpCnt, boolean imaicl, int logMaxSrq, int logMaxSrqSz, int logMaxMcg,
        int maxQpMcg) {

    /** Reads the capability structure at {@code capability.cmd_hca_cap} of a QUERY_HCA_CAP output. */
    public static HcaCaps from(Struct out) {
        Layout l = out.layout();
        String p = "capability.cmd_hca_cap.";
        return new HcaCaps(
                get(out, l, p + "log_max_qp"), get(out, l, p + "log_max_qp_sz"), get(out, l, p + "log_max_cq"),
                get(out, l, p + "log_max_cq_sz"), get(out, l, p + "log_max_eq"), get(out, l, p + "log_max_eq_sz"),
                get(out, l, p + "log_max_mkey"), get(out, l, p + "log_max_pd"), get(out, l, p + "log_max_mrw_sz"),
                get(out, l, p + "log_max_ra_req_qp"), get(out, l, p + "log_max_ra_res_qp"),
                get(out, l, p + "log_max_msg"), get(out, l, p + "gid_table_size"),
                get(out, l, p + "pkey_table_size"), get(out, l, p + "local_ca_ack_delay"),
                get(out, l, p + "port_type"), get(out, l, p + "num_ports"), get(out, l, p + "cqe_version"),
                get(out, l, p + "roce") != 0, get(out, l, p + "atomic") != 0, get(out, l, p + "rc") != 0,
                get(out, l, p + "uc") != 0, get(out, l, p + "ud") != 0, get(out, l, p + "bf") != 0,
                get(out, l, p + "log_bf_reg_size"), get(out, l, p + "fast_teardown") != 0,
                get(out, l, p + "vhca_id"), get(out, l, p + "log_pg_sz"), get(out, l, p + "max_qp_cnt"),
                get(out, l, p + "imaicl") != 0,
                get(out, l, p + "log_max_srq"), get(out, l, p + "log_max_srq_sz"),
                get(out, l, p + "log_max_mcg"), get(out, l, p + "max_qp_mcg"));
    }

    private static int get(Struct out, Layout l, String name) {
        Field f = l.field(name);
        return (int) out.get(f);
    }

    /** True when the device has Q counters to allocate ({@code max_qp_cnt}; mlx5_ib allocates them only then). */
    public boolean hasQCounters() {
        return maxQpCnt > 0;
    }

    /**
     * True when the device offers memory windows: mlx5_ib reports MEM_WINDOW and MEM_WINDOW_TYPE_2B and max_mw =
     * 2^log_max_mkey only when {@code imaicl} (infinite memory access in the context of a linked QP) is set.
     */
    public boolean memoryWindows() {
        return imaicl;
    }

    /** True when the port is Ethernet (RoCE), {@code port_type == MLX5_CAP_PORT_TYPE_ETH}. */
    public boolean isEthernet() {
        return portType == HcaCap.PORT_TYPE_ETH;
    }
}
