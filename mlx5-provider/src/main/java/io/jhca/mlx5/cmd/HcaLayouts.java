package io.jhca.mlx5.cmd;

/**
 * Device bring-up and teardown commands: ENABLE/DISABLE_HCA, QUERY/SET_ISSI, QUERY/MANAGE_PAGES, QUERY_HCA_CAP,
 * INIT_HCA, TEARDOWN_HCA. Positions from the kernel's mlx5_ifc.h ({@code struct mlx5_ifc_<name>_bits}: bit offset,
 * width), checked against it by the golden test.
 */
public final class HcaLayouts {

    /** QUERY_PAGES op_mod (mlx5_ifc {@code MLX5_QUERY_PAGES_IN_OP_MOD_*}): 1 boot, 2 init, 3 regular. */
    public static final int PAGES_BOOT = 1;
    public static final int PAGES_INIT = 2;
    public static final int PAGES_REGULAR = 3;
    /** MANAGE_PAGES op_mod (rdma-core providers/mlx5/mlx5_ifc.h {@code MLX5_PAGES_*}): 0 can't give, 1 give, 2 take. */
    public static final int PAGES_CANT_GIVE = 0;
    public static final int PAGES_GIVE = 1;
    public static final int PAGES_TAKE = 2;
    /** TEARDOWN_HCA profile (mlx5_ifc): 0 graceful close, 1 force close, 2 prepare fast teardown. */
    public static final int TEARDOWN_GRACEFUL = 0;
    public static final int TEARDOWN_FORCE = 1;
    public static final int TEARDOWN_PREPARE_FAST = 2;

    public static final Layout ENABLE_HCA_IN = Layout.struct("enable_hca_in", 0x10).inHeader(false)
            .field("embedded_cpu_function", 0x40, 1)
            .field("function_id", 0x50, 16)
            .build();
    public static final Layout ENABLE_HCA_OUT = Layout.struct("enable_hca_out", 0x0c).outHeader().build();

    public static final Layout DISABLE_HCA_IN = Layout.struct("disable_hca_in", 0x10).inHeader(false)
            .field("embedded_cpu_function", 0x40, 1)
            .field("function_id", 0x50, 16)
            .build();
    public static final Layout DISABLE_HCA_OUT = Layout.struct("disable_hca_out", 0x0c).outHeader().build();

    public static final Layout QUERY_ISSI_IN = Layout.struct("query_issi_in", 0x10).inHeader(false).build();
    /** supported_issi_dw0: bit n set = ISSI n supported (rdma-core requires bit 1). */
    public static final Layout QUERY_ISSI_OUT = Layout.struct("query_issi_out", 0x70).outHeader()
            .field("current_issi", 0x50, 16)
            .field("supported_issi_dw0", 0x360, 32)
            .build();

    public static final Layout SET_ISSI_IN = Layout.struct("set_issi_in", 0x10).inHeader(false)
            .field("current_issi", 0x50, 16)
            .build();
    public static final Layout SET_ISSI_OUT = Layout.struct("set_issi_out", 0x10).outHeader().build();

    public static final Layout QUERY_PAGES_IN = Layout.struct("query_pages_in", 0x10).inHeader(false)
            .field("embedded_cpu_function", 0x40, 1)
            .field("function_id", 0x50, 16)
            .build();
    /** num_pages is signed: negative asks the driver to take pages back. */
    public static final Layout QUERY_PAGES_OUT = Layout.struct("query_pages_out", 0x10).outHeader()
            .field("embedded_cpu_function", 0x40, 1)
            .field("function_id", 0x50, 16)
            .field("num_pages", 0x60, 32)
            .build();

    /** pas[]: big-endian 64-bit DMA addresses of 4 KiB pages, starting at byte 0x10. */
    public static final Layout MANAGE_PAGES_IN = Layout.struct("manage_pages_in", 0x10).inHeader(false)
            .field("embedded_cpu_function", 0x40, 1)
            .field("function_id", 0x50, 16)
            .field("input_num_entries", 0x60, 32)
            .flexibleArray("pas", 0x80, 64)
            .build();
    public static final Layout MANAGE_PAGES_OUT = Layout.struct("manage_pages_out", 0x10).outHeader()
            .field("output_num_entries", 0x40, 32)
            .flexibleArray("pas", 0x80, 64)
            .build();

    public static final Layout QUERY_HCA_CAP_IN = Layout.struct("query_hca_cap_in", 0x10).inHeader(false)
            .field("other_function", 0x40, 1)
            .field("function_id", 0x50, 16)
            .build();
    /** The capability union is 4096 bytes; the general caps sit at its start ({@code capability.cmd_hca_cap}). */
    public static final Layout QUERY_HCA_CAP_OUT = Layout.struct("query_hca_cap_out", 0x1010).outHeader()
            .embed("capability.cmd_hca_cap", 0x80, HcaCap.CMD_HCA_CAP)
            .build();

    public static final Layout INIT_HCA_IN = Layout.struct("init_hca_in", 0x20).inHeader(false)
            .field("sw_vhca_id", 0x62, 14)
            .array("sw_owner_id", 0x80, 32, 4)
            .build();
    public static final Layout INIT_HCA_OUT = Layout.struct("init_hca_out", 0x10).outHeader().build();

    public static final Layout TEARDOWN_HCA_IN = Layout.struct("teardown_hca_in", 0x10).inHeader(false)
            .field("profile", 0x50, 16)
            .build();
    /** state: for force/fast teardown, 0 success, 1 failed (mlx5_ifc MLX5_TEARDOWN_HCA_OUT_FORCE_STATE_FAIL). */
    public static final Layout TEARDOWN_HCA_OUT = Layout.struct("teardown_hca_out", 0x10).outHeader()
            .field("state", 0x7f, 1)
            .build();

    private HcaLayouts() {
    }
}
