package io.jhca.mlx5.init;

import io.jhca.mlx5.cmd.CmdQueue;
import io.jhca.mlx5.cmd.CmdQueueOptions;
import io.jhca.mlx5.cmd.HcaCap;
import io.jhca.mlx5.cmd.HcaLayouts;
import io.jhca.mlx5.cmd.InitSegment;
import io.jhca.mlx5.spi.Mlx5Function;

/**
 * Bringing a ConnectX function up, in the order of rdma-core's mlx5_vfio.c ({@code mlx5_vfio_init_cmd_interface},
 * {@code mlx5_vfio_setup_function}, {@code create_async_eqs}) and the kernel's mlx5_core ({@code mlx5_function_setup},
 * {@code mlx5_load}):
 *
 * <ol>
 * <li>wait for the init segment's {@code initializing} bit (0x1fc bit 31) to clear: firmware pre-init;</li>
 * <li>check the command interface revision (0x004 bits 31:16) is 5;</li>
 * <li>allocate the 4 KiB-aligned command queue page and write its address, {@code cmdq_addr_h} then
 *     {@code cmdq_addr_l_sz};</li>
 * <li>wait for {@code initializing} to clear again;</li>
 * <li>ENABLE_HCA;</li>
 * <li>QUERY_ISSI (ISSI 1 must be supported), SET_ISSI 1;</li>
 * <li>QUERY_PAGES (boot), MANAGE_PAGES (give);</li>
 * <li>QUERY_HCA_CAP: general device capabilities, current values;</li>
 * <li>QUERY_PAGES (init), MANAGE_PAGES (give);</li>
 * <li>INIT_HCA;</li>
 * <li>ALLOC_UAR: the UAR page all doorbells of this function use;</li>
 * <li>CREATE_EQ: the async EQ, whose number every CQ names as its c_eqn;</li>
 * <li>SET_ROCE_ADDRESS for each GID of the port (mlx5_ib programs its RoCE GID table this way);</li>
 * <li>ALLOC_Q_COUNTER when the caps offer Q counters (max_qp_cnt): the port's counter set, which every QP names in
 *     qpc.counter_set_id at RST2INIT (mlx5_ib counters.c {@code mlx5_ib_alloc_counters}, qp.c
 *     {@code __mlx5_ib_modify_qp}).</li>
 * </ol>
 * Teardown is the reverse ({@link Hca#close()}). Not done here, as in rdma-core's minimal path: SET_HCA_CAP (the
 * defaults are used), ACCESS_REG HOST_ENDIANNESS, MODIFY_NIC_VPORT_CONTEXT roce_en, health polling.
 */
public final class HcaBringUp {

    private HcaBringUp() {
    }

    /**
     * Brings {@code function} up.
     *
     * @throws io.jhca.mlx5.cmd.CommandException a command failed (the steps done so far are undone)
     * @throws IllegalStateException             the firmware did not come out of initialization in time, or speaks
     *                                           another command interface revision
     */
    public static Hca bringUp(Mlx5Function function, Mlx5Options options) {
        Hca h = new Hca(function, options);
        try {
            awaitFirmware(h, "pre-initialization", options.preInitTimeoutMillis());
            checkCmdifRevision(h);
            openCommandQueue(h);
            awaitFirmware(h, "initialization", options.initTimeoutMillis());
            enableHca(h);
            setIssi(h);
            giveStartupPages(h, HcaLayouts.PAGES_BOOT);
            queryCaps(h);
            giveStartupPages(h, HcaLayouts.PAGES_INIT);
            initHca(h);
            allocUar(h);
            createEq(h);
            programGids(h);
            allocQCounter(h);
            return h;
        } catch (RuntimeException e) {
            h.abort(e);
            throw e;
        }
    }

    /** rdma-core wait_fw_init: poll bit 31 of {@code initializing} until it clears. */
    static void awaitFirmware(Hca h, String phase, long timeoutMillis) {
        boolean ready;
        try {
            ready = h.iseg.awaitInitialized(timeoutMillis);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException(h.function.name() + ": interrupted waiting for firmware " + phase, e);
        }
        if (!ready) {
            throw new IllegalStateException(h.function.name() + ": firmware " + phase + " did not finish within "
                    + timeoutMillis + " ms (init segment 'initializing', BAR0 0x1fc bit 31, still set)");
        }
    }

    static void checkCmdifRevision(Hca h) {
        int rev = h.iseg.cmdifRev();
        if (rev != InitSegment.CMDIF_REV) {
            throw new IllegalStateException(h.function.name() + ": firmware command interface revision " + rev
                    + ", the driver speaks " + InitSegment.CMDIF_REV + " (BAR0 0x004 bits 31:16)");
        }
    }

    /** mlx5_cmd_init: the queue page is allocated and its address programmed, high word first. */
    static void openCommandQueue(Hca h) {
        CmdQueueOptions o = CmdQueueOptions.defaults().timeoutMillis(h.options.commandTimeoutMillis())
                .trace(h.options.trace())
                .healthStallMillis(Long.getLong("jhca.mlx5.healthStallMs", CmdQueueOptions.DEFAULT_HEALTH_STALL_MILLIS));
        h.cmdq = CmdQueue.open(h.iseg, h.cmdMemory, o);
        h.commands = new HcaCommands(h.cmdq);
        h.onClose("free command queue", false, () -> {
            h.cmdq.close();
            if (!h.firmwareHung()) {
                h.cmdMemory.close();
            }
        });
        // pages are freed only after DISABLE_HCA: registered now, so they are undone after it
        h.onClose("free firmware pages", false, () -> {
            if (!h.firmwareHung()) {
                h.pages.close();
            }
        });
    }

    static void enableHca(Hca h) {
        h.commands.enableHca();
        h.onClose("DISABLE_HCA", true, h.commands::disableHca);
    }

    /** rdma-core mlx5_vfio_set_issi: ISSI 1 is required. */
    static void setIssi(Hca h) {
        int supported = h.commands.querySupportedIssi();
        if ((supported & (1 << 1)) == 0) {
            throw new IllegalStateException(h.function.name() + ": firmware does not support ISSI 1 (supported_issi_dw0 0x"
                    + Integer.toHexString(supported) + ")");
        }
        h.commands.setIssi(1);
    }

    /** mlx5_satisfy_startup_pages: QUERY_PAGES then MANAGE_PAGES give, for the boot or the init stage. */
    static void giveStartupPages(Hca h, int stage) {
        HcaCommands.PageRequest r = h.commands.queryPages(stage);
        boolean first = h.pages.given() == 0;
        h.functionId = r.functionId();
        h.pages.give(h.commands, r.functionId(), r.numPages());
        if (first && h.pages.given() > 0) {
            // mlx5_reclaim_startup_pages, after TEARDOWN_HCA
            h.onClose("MANAGE_PAGES take", true, () -> h.pages.reclaim(h.commands, h.functionId, h.pages.given()));
        }
    }

    static void queryCaps(Hca h) {
        h.caps = h.commands.queryGeneralCaps(HcaCap.MODE_CURRENT);
    }

    static void initHca(Hca h) {
        h.commands.initHca();
        h.onClose("TEARDOWN_HCA", true, () -> h.commands.teardownHca(HcaLayouts.TEARDOWN_GRACEFUL));
    }

    static void allocUar(Hca h) {
        int uar = h.commands.allocUar();
        if ((long) (uar + 1) * 4096 > h.function.bar0().length()) {
            h.commands.deallocUar(uar);
            throw new IllegalStateException(h.function.name() + ": ALLOC_UAR returned UAR " + uar
                    + ", outside BAR0 of " + h.function.bar0().length() + " bytes");
        }
        h.uar = uar;
        h.onClose("DEALLOC_UAR", true, () -> h.commands.deallocUar(uar));
    }

    static void createEq(Hca h) {
        AsyncEq eq = AsyncEq.create(h.function, h.cmdq, h.uar);
        h.eq = eq;
        h.onClose("DESTROY_EQ", true, () -> eq.destroy(h.commands));
    }

    static void programGids(Hca h) {
        h.gids = RoceGids.of(h.function.portAddresses());
        if (h.caps.isEthernet()) {
            h.gids.program(h.commands);
        }
    }

    static void allocQCounter(Hca h) {
        if (!h.caps.hasQCounters()) {
            return;
        }
        int id = h.commands.allocQCounter();
        h.qCounter = id;
        h.onClose("DEALLOC_Q_COUNTER", true, () -> h.commands.deallocQCounter(id));
    }
}
