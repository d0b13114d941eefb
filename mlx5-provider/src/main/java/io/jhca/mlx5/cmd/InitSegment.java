package io.jhca.mlx5.cmd;

import io.jhca.doorbell.MmioWindow;

/**
 * Flyweight over the initialization segment at the start of BAR0 (kernel device.h {@code struct mlx5_init_seg},
 * 0x2010 bytes; offsets checked against the header by a golden test). All registers are big-endian 32-bit; sub-word
 * fields are extracted from the containing dword, since BAR accesses are always whole aligned dwords. It reads and
 * writes BAR0 through the function's {@link MmioWindow} (one aligned, big-endian 4-byte load or store each); a test
 * double that must see register writes as they happen overrides the window's store hook.
 */
public final class InitSegment {

    public static final int FW_REV = 0x000;
    public static final int CMDIF_REV_FW_SUB = 0x004;
    public static final int CMDQ_ADDR_H = 0x010;
    public static final int CMDQ_ADDR_L_SZ = 0x014;
    public static final int CMD_DBELL = 0x018;
    public static final int INITIALIZING = 0x1fc;
    /** {@code struct health_buffer}, 64 bytes (kernel 6.1 layout; rdma-core's older one has the same synd offsets). */
    public static final int HEALTH = 0x200;
    public static final int HEALTH_ASSERT_EXIT_PTR = 0x220;
    public static final int HEALTH_ASSERT_CALLRA = 0x224;
    public static final int HEALTH_FW_VER = 0x230;
    public static final int HEALTH_HW_ID = 0x234;
    /** Dword holding irisc_index (31:24), synd (23:16) and ext_synd (15:0). */
    public static final int HEALTH_SYND_DWORD = 0x23c;
    public static final int CMD_EXEC_TO = 0xff8;
    public static final int CMD_Q_INIT_TO = 0xffc;
    public static final int INTERNAL_TIMER_H = 0x1000;
    public static final int INTERNAL_TIMER_L = 0x1004;
    public static final int HEALTH_COUNTER = 0x1010;
    public static final int REAL_TIME_H = 0x1040;
    public static final int REAL_TIME_L = 0x1044;
    public static final int IEEE1588_CLK = 0x2000;
    public static final int IEEE1588_CLK_TYPE = 0x2008;
    public static final int CLR_INTX = 0x200c;
    public static final int SIZE = 0x2010;

    /** mlx5_core cmd.c {@code CMD_IF_REV}: the only command interface revision drivers accept. */
    public static final int CMDIF_REV = 5;
    /** The command queue page must be 4 KiB aligned: the low 12 bits of cmdq_addr_l_sz are size fields. */
    public static final int CMDQ_ALIGNMENT = 4096;

    /**
     * nic_interface (cmdq_addr_l_sz bits 10:8; device.h MLX5_NIC_IFC_OFFSET 8), mlx5_core.h {@code MLX5_NIC_IFC_*}:
     * 0 full driver, 1 disabled, 7 SW reset.
     */
    public static final int NIC_IFC_FULL = 0;
    public static final int NIC_IFC_DISABLED = 1;
    public static final int NIC_IFC_SW_RESET = 7;

    private final MmioWindow bar;

    public InitSegment(MmioWindow bar) {
        this.bar = bar;
    }

    public MmioWindow bar() {
        return bar;
    }

    /** fw_rev bits 15:0. */
    public int fwRevMajor() {
        return bar.getIntBe(FW_REV) & 0xffff;
    }

    /** fw_rev bits 31:16. */
    public int fwRevMinor() {
        return bar.getIntBe(FW_REV) >>> 16;
    }

    /** cmdif_rev_fw_sub bits 15:0. */
    public int fwRevSubminor() {
        return bar.getIntBe(CMDIF_REV_FW_SUB) & 0xffff;
    }

    /** Firmware version as {@code ethtool -i} shows it (mlx5e drvinfo {@code "%d.%d.%04d"}, e.g. 16.35.2000). */
    public String fwVersion() {
        return String.format("%d.%d.%04d", fwRevMajor(), fwRevMinor(), fwRevSubminor());
    }

    /** cmdif_rev_fw_sub bits 31:16; must be {@link #CMDIF_REV}. */
    public int cmdifRev() {
        return bar.getIntBe(CMDIF_REV_FW_SUB) >>> 16;
    }

    /** log2 of the number of command queue entries (cmdq_addr_l_sz bits 7:4, read side). */
    public int logCmdqSize() {
        return (bar.getIntBe(CMDQ_ADDR_L_SZ) >>> 4) & 0xf;
    }

    /** log2 of the command entry stride in bytes (cmdq_addr_l_sz bits 3:0, read side). */
    public int logCmdqStride() {
        return bar.getIntBe(CMDQ_ADDR_L_SZ) & 0xf;
    }

    /** nic_interface, cmdq_addr_l_sz bits 10:8. */
    public int nicInterface() {
        return (bar.getIntBe(CMDQ_ADDR_L_SZ) >>> 8) & 0x7;
    }

    /**
     * Programs the command queue address: high dword first, then the low dword (whose low 12 bits are zero, which
     * also selects nic_interface 0 = full driver), as mlx5_core and rdma-core do.
     */
    public void cmdqAddress(long iova) {
        if ((iova & (CMDQ_ALIGNMENT - 1)) != 0) {
            throw new IllegalArgumentException(String.format("command queue IOVA 0x%x is not 4 KiB aligned", iova));
        }
        bar.putIntBe(CMDQ_ADDR_H, (int) (iova >>> 32));
        bar.putIntBe(CMDQ_ADDR_L_SZ, (int) iova);
    }

    /** The programmed command queue address as the registers read back (size fields masked off). */
    public long cmdqAddress() {
        long hi = Integer.toUnsignedLong(bar.getIntBe(CMDQ_ADDR_H));
        long lo = Integer.toUnsignedLong(bar.getIntBe(CMDQ_ADDR_L_SZ)) & ~0xfffL;
        return (hi << 32) | lo;
    }

    /** Rewrites nic_interface, keeping the address bits (used by fast teardown: 1 = disabled). */
    public void nicInterface(int mode) {
        int lo = bar.getIntBe(CMDQ_ADDR_L_SZ);
        bar.putIntBe(CMDQ_ADDR_L_SZ, (lo & ~0xfff) | ((mode & 0x7) << 8));
    }

    /** Rings the command doorbell: one big-endian 32-bit store of the slot bit mask. */
    public void ringCmdDoorbell(int slotMask) {
        bar.putIntBe(CMD_DBELL, slotMask);
    }

    /** initializing bit 31: firmware has not finished its own initialization yet. */
    public boolean initializing() {
        return (bar.getIntBe(INITIALIZING) >>> 31) != 0;
    }

    /**
     * Polls {@link #initializing()} until it clears, sleeping 1 ms between reads (rdma-core's wait_fw_init);
     * returns false on timeout. Pre-init can take minutes (mlx5_core FW_PRE_INIT_TIMEOUT 120 s).
     */
    public boolean awaitInitialized(long timeoutMillis) throws InterruptedException {
        long deadline = System.nanoTime() + timeoutMillis * 1_000_000L;
        while (initializing()) {
            if (System.nanoTime() - deadline >= 0) {
                return false;
            }
            Thread.sleep(1);
        }
        return true;
    }

    /** health.synd (byte 0x23d): 0 while healthy. */
    public int healthSyndrome() {
        return (bar.getIntBe(HEALTH_SYND_DWORD) >>> 16) & 0xff;
    }

    /** health.ext_synd (be16 at 0x23e). */
    public int healthExtSyndrome() {
        return bar.getIntBe(HEALTH_SYND_DWORD) & 0xffff;
    }

    /** health.irisc_index (byte 0x23c). */
    public int healthIriscIndex() {
        return bar.getIntBe(HEALTH_SYND_DWORD) >>> 24;
    }

    /** health.fw_ver; 0xffffffff means the device dropped off the bus. */
    public int healthFwVer() {
        return bar.getIntBe(HEALTH_FW_VER);
    }

    /** health_counter bits 23:0: firmware keeps incrementing it; rdma-core declares the device dead after 3 stalls. */
    public int healthCounter() {
        return bar.getIntBe(HEALTH_COUNTER) & 0xffffff;
    }

    /** The free-running internal timer, read high/low/high to survive a carry between the two reads. */
    public long internalTimer() {
        int hi = bar.getIntBe(INTERNAL_TIMER_H);
        int lo = bar.getIntBe(INTERNAL_TIMER_L);
        int hi2 = bar.getIntBe(INTERNAL_TIMER_H);
        if (hi != hi2) {
            lo = bar.getIntBe(INTERNAL_TIMER_L);
        }
        return (Integer.toUnsignedLong(hi2) << 32) | Integer.toUnsignedLong(lo);
    }

    /** Health syndrome text, rdma-core mlx5_vfio.c {@code hsynd_str}. */
    public static String describeHealthSyndrome(int synd) {
        switch (synd) {
            case 0x0: return "no error";
            case 0x1: return "firmware internal error";
            case 0x7: return "irisc not responding";
            case 0x8: return "unrecoverable hardware error";
            case 0x9: return "firmware CRC error";
            case 0xa: return "ICM fetch PCI error";
            case 0xb: return "HW fatal error";
            case 0xc: return "async EQ buffer overrun";
            case 0xd: return "EQ error";
            case 0xe: return "Invalid EQ referenced";
            case 0xf: return "FFSER error";
            case 0x10: return "High temperature";
            default: return "unrecognized error";
        }
    }
}
