package io.jhca.connectx;

import org.agrona.DirectBuffer;
import org.agrona.MutableDirectBuffer;

import io.jhca.mlx5.cmd.CmdStatus;
import io.jhca.mlx5.cmd.DriverCmdLayouts;
import io.jhca.mlx5.cmd.Field;
import io.jhca.mlx5.cmd.HcaCap;
import io.jhca.mlx5.cmd.HcaLayouts;
import io.jhca.mlx5.cmd.Layout;
import io.jhca.mlx5.cmd.CmdOpcode;
import io.jhca.mlx5.cmd.QueryRoceAddressLayouts;
import io.jhca.verbs.VerbsException;

/**
 * The firmware's command handler: every command the driver posts, as {@link CmdQueueDevice} delivers it. Lengths are
 * checked against the shared layouts first (BAD_INP_LEN / BAD_OUTP_LEN), then the bring-up state, then the command's
 * own fields. Statuses as mlx5_core cmd.c names them: an opcode the model does not implement is BAD_OP, a field out of
 * range BAD_PARAM, an object number that does not exist BAD_RES, a command before ENABLE_HCA or INIT_HCA (or INIT_HCA
 * before its pages) BAD_SYS_STATE, a QP transition from the wrong state BAD_QP_STATE, destroying an object still used
 * RES_BUSY, running out of numbers NO_RES; each with a {@link CmdSyndromes} syndrome.
 *
 * <p>Bring-up follows the kernel's mlx5_function_setup / rdma-core's mlx5_vfio_setup_function: ENABLE_HCA,
 * QUERY_ISSI / SET_ISSI, QUERY_PAGES boot + MANAGE_PAGES, QUERY_HCA_CAP, (SET_HCA_CAP), QUERY_PAGES init + MANAGE_PAGES,
 * INIT_HCA; teardown: TEARDOWN_HCA, MANAGE_PAGES take, DISABLE_HCA.
 */
final class Firmware implements CmdQueueDevice.Handler {

    /** Pages the firmware asks for at each stage (QUERY_PAGES op_mod boot / init); none later. */
    static final int BOOT_PAGES = 4;
    static final int INIT_PAGES = 8;
    /** mlx5_ifc.h {@code MLX5_REG_HOST_ENDIANNESS}: ACCESS_REG register the kernel writes in set_hca_ctrl. */
    static final int REG_HOST_ENDIANNESS = 0x7004;

    private final DeviceState st;
    private final ObjectCommands objects;
    private final QpCommands qps;
    private final McgCommands mcgs;
    private final QCounterCommands qCounters;
    private final SrqCommands srqs;
    private volatile String lastError;

    Firmware(DeviceState st, DataPath dataPath) {
        this.st = st;
        this.objects = new ObjectCommands(st, dataPath);
        this.qCounters = new QCounterCommands(st);
        this.qps = new QpCommands(st, dataPath, objects, qCounters);
        this.srqs = new SrqCommands(st, dataPath, objects);
        qps.srqs(srqs);
        this.mcgs = new McgCommands(qps);
    }

    /** The last refusal, for diagnostics ("CREATE_CQ: log_cq_size 30 > 22"). */
    String lastError() {
        return lastError;
    }

    @Override
    public void execute(DeviceCommand cmd) {
        st.counters.increment(ModelCounters.Counter.COMMANDS);
        try {
            dispatch(cmd);
        } catch (CmdError e) {
            refuse(cmd, e.status, e.syndrome, e.getMessage());
        } catch (VerbsException e) {
            // the rxe mirror refused what the checks let through: report it as an internal error, not a crash
            refuse(cmd, CmdStatus.INT_ERR, CmdSyndromes.MODEL_FAILURE, e.getMessage());
        } catch (RuntimeException e) {
            st.counters.increment(ModelCounters.Counter.MODEL_ERRORS);
            refuse(cmd, CmdStatus.INT_ERR, CmdSyndromes.MODEL_FAILURE, e.toString());
        }
    }

    private void refuse(DeviceCommand cmd, CmdStatus status, int syndrome, String message) {
        st.counters.increment(ModelCounters.Counter.COMMAND_ERRORS);
        lastError = CmdOpcode.name(cmd.opcode()) + ": " + message;
        cmd.output().setMemory(0, cmd.outLength(), (byte) 0);
        cmd.status(status, syndrome);
    }

    static Layout inputLayout(int opcode) {
        return opcode == CmdOpcode.QUERY_ROCE_ADDRESS ? QueryRoceAddressLayouts.QUERY_ROCE_ADDRESS_IN
                : DriverCmdLayouts.input(opcode);
    }

    static Layout outputLayout(int opcode) {
        return opcode == CmdOpcode.QUERY_ROCE_ADDRESS ? QueryRoceAddressLayouts.QUERY_ROCE_ADDRESS_OUT
                : DriverCmdLayouts.output(opcode);
    }

    private void dispatch(DeviceCommand cmd) throws CmdError {
        int op = cmd.opcode();
        switch (op) {
            // commands without a shared layout: fixed minimum lengths from mlx5_ifc.h
            case CmdOpcode.NOP:
                lengths(cmd, 0x10, 0x10);
                return;
            case CmdOpcode.SET_DRIVER_VERSION:
                lengths(cmd, 0x50, 0x10); // set_driver_version_in: 16-byte header + 64-byte string
                requireInitialized();
                return;
            case CmdOpcode.SET_HCA_CAP:
                lengths(cmd, 0x10 + HcaCap.CMD_HCA_CAP.sizeBytes(), 0x10);
                setHcaCap(cmd);
                return;
            case CmdOpcode.ACCESS_REG:
                lengths(cmd, 0x10, 0x10);
                accessReg(cmd);
                return;
            default:
                break;
        }
        Layout in = inputLayout(op);
        Layout out = outputLayout(op);
        if (in == null) {
            throw new CmdError(CmdStatus.BAD_OP_ERR, CmdSyndromes.UNKNOWN_OPCODE,
                    String.format("opcode 0x%x (%s) is not implemented", op, CmdOpcode.name(op)));
        }
        lengths(cmd, in.sizeBytes(), out.sizeBytes());
        DirectBuffer i = cmd.input();
        MutableDirectBuffer o = cmd.output();
        switch (op) {
            case CmdOpcode.ENABLE_HCA: enableHca(i, in); return;
            case CmdOpcode.DISABLE_HCA: disableHca(i, in); return;
            case CmdOpcode.QUERY_ISSI: queryIssi(o, out); return;
            case CmdOpcode.SET_ISSI: setIssi(i, in); return;
            case CmdOpcode.QUERY_PAGES: queryPages(cmd, i, o, in, out); return;
            case CmdOpcode.MANAGE_PAGES: managePages(cmd, i, o, in, out); return;
            case CmdOpcode.QUERY_HCA_CAP: queryHcaCap(cmd, i, o, in); return;
            case CmdOpcode.INIT_HCA: initHca(); return;
            case CmdOpcode.TEARDOWN_HCA: teardownHca(i, in); return;
            default:
                break;
        }
        requireInitialized();
        switch (op) {
            case CmdOpcode.ALLOC_UAR: objects.allocUar(o, out); return;
            case CmdOpcode.DEALLOC_UAR: objects.deallocUar(i, in); return;
            case CmdOpcode.ALLOC_PD: objects.allocPd(o, out); return;
            case CmdOpcode.DEALLOC_PD: objects.deallocPd(i, in); return;
            case CmdOpcode.CREATE_EQ: objects.createEq(cmd, i, o, in, out); return;
            case CmdOpcode.DESTROY_EQ: objects.destroyEq(i, in); return;
            case CmdOpcode.CREATE_MKEY: objects.createMkey(cmd, i, o, in, out); return;
            case CmdOpcode.DESTROY_MKEY: objects.destroyMkey(i, in); return;
            case CmdOpcode.CREATE_CQ: objects.createCq(cmd, i, o, in, out); return;
            case CmdOpcode.DESTROY_CQ: objects.destroyCq(i, in); return;
            case CmdOpcode.CREATE_QP: qps.createQp(cmd, i, o, in, out); return;
            case CmdOpcode.DESTROY_QP: qps.destroyQp(i, in); return;
            case CmdOpcode.RST2INIT_QP:
            case CmdOpcode.INIT2INIT_QP:
            case CmdOpcode.INIT2RTR_QP:
            case CmdOpcode.RTR2RTS_QP:
            case CmdOpcode.RTS2RTS_QP:
            case CmdOpcode.SQERR2RTS_QP:
            case CmdOpcode.QP_2ERR:
            case CmdOpcode.QP_2RST:
                qps.modifyQp(op, i, in);
                return;
            case CmdOpcode.QUERY_QP: qps.queryQp(i, o, in, out); return;
            case CmdOpcode.SET_ROCE_ADDRESS: qps.setRoceAddress(i, in); return;
            case CmdOpcode.QUERY_ROCE_ADDRESS: qps.queryRoceAddress(i, o, in, out); return;
            case CmdOpcode.ALLOC_Q_COUNTER: qCounters.alloc(o, out); return;
            case CmdOpcode.DEALLOC_Q_COUNTER: qCounters.dealloc(i, in); return;
            case CmdOpcode.QUERY_Q_COUNTER: qCounters.query(i, o, in, out); return;
            case CmdOpcode.CREATE_SRQ: srqs.createSrq(cmd, i, o, in, out); return;
            case CmdOpcode.DESTROY_SRQ: srqs.destroySrq(i, in); return;
            case CmdOpcode.QUERY_SRQ: srqs.querySrq(i, o, in, out); return;
            case CmdOpcode.ARM_RQ: srqs.armRq(cmd.opMod(), i, in); return;
            case CmdOpcode.ATTACH_TO_MCG: mcgs.attach(i, in); return;
            case CmdOpcode.DETACH_FROM_MCG: mcgs.detach(i, in); return;
            default:
                throw new CmdError(CmdStatus.BAD_OP_ERR, CmdSyndromes.UNSUPPORTED_OPCODE,
                        String.format("opcode 0x%x (%s) is not implemented by the model", op, CmdOpcode.name(op)));
        }
    }

    private static void lengths(DeviceCommand cmd, int in, int out) throws CmdError {
        if (cmd.inLength() < in) {
            throw new CmdError(CmdStatus.BAD_INP_LEN_ERR, CmdSyndromes.INPUT_TOO_SHORT,
                    "input of " + cmd.inLength() + " bytes, at least " + in + " needed");
        }
        if (cmd.outLength() < out) {
            throw new CmdError(CmdStatus.BAD_OUTP_LEN_ERR, CmdSyndromes.OUTPUT_TOO_SHORT,
                    "output of " + cmd.outLength() + " bytes, at least " + out + " needed");
        }
    }

    private void requireEnabled() throws CmdError {
        if (!st.enabled) {
            throw new CmdError(CmdStatus.BAD_SYS_STATE_ERR, CmdSyndromes.NOT_ENABLED, "the HCA is not enabled");
        }
    }

    private void requireInitialized() throws CmdError {
        if (!st.initialized) {
            throw new CmdError(CmdStatus.BAD_SYS_STATE_ERR, CmdSyndromes.NOT_INITIALIZED, "INIT_HCA was not done");
        }
    }

    private static void functionZero(DirectBuffer i, Layout in) throws CmdError {
        if (in.get(i, 0, "function_id") != 0 || in.get(i, 0, "embedded_cpu_function") != 0) {
            throw CmdError.badParam(CmdSyndromes.BAD_FUNCTION_ID, "only function 0 (this function) exists");
        }
    }

    // ------------------------------------------------------------------------------------------ bring-up

    private void enableHca(DirectBuffer i, Layout in) throws CmdError {
        functionZero(i, in);
        st.enabled = true;
    }

    private void disableHca(DirectBuffer i, Layout in) throws CmdError {
        functionZero(i, in);
        if (st.initialized) {
            throw new CmdError(CmdStatus.BAD_SYS_STATE_ERR, CmdSyndromes.ALREADY_INITIALIZED,
                    "DISABLE_HCA before TEARDOWN_HCA");
        }
        st.enabled = false;
    }

    private void queryIssi(MutableDirectBuffer o, Layout out) throws CmdError {
        requireEnabled();
        out.set(o, 0, "current_issi", st.issi);
        out.set(o, 0, "supported_issi_dw0", 0b11); // ISSI 0 and 1 (rdma-core requires bit 1)
    }

    private void setIssi(DirectBuffer i, Layout in) throws CmdError {
        requireEnabled();
        long issi = in.get(i, 0, "current_issi");
        if (issi > 1) {
            throw CmdError.badParam(CmdSyndromes.BAD_ISSI, "ISSI " + issi + " is not supported (0 and 1 are)");
        }
        st.issi = (int) issi;
    }

    /** Pages the firmware still wants for a stage: what it needs up to that stage minus what it holds. */
    private int pagesWanted(int opMod) {
        int need;
        switch (opMod) {
            case HcaLayouts.PAGES_BOOT: need = BOOT_PAGES; break;
            case HcaLayouts.PAGES_INIT: need = BOOT_PAGES + INIT_PAGES; break;
            case HcaLayouts.PAGES_REGULAR: need = BOOT_PAGES + INIT_PAGES + st.regularPages; break;
            default: return 0;
        }
        return Math.max(0, need - st.firmwarePages.size());
    }

    private void queryPages(DeviceCommand cmd, DirectBuffer i, MutableDirectBuffer o, Layout in, Layout out)
            throws CmdError {
        requireEnabled();
        functionZero(i, in);
        int opMod = cmd.opMod();
        if (opMod < HcaLayouts.PAGES_BOOT || opMod > HcaLayouts.PAGES_REGULAR) {
            throw CmdError.badParam(CmdSyndromes.BAD_OP_MOD, "QUERY_PAGES op_mod " + opMod + " (1 boot, 2 init, 3 regular)");
        }
        out.set(o, 0, "num_pages", pagesWanted(opMod)); // signed; pages to return are announced by PAGE_REQUEST
    }

    private void managePages(DeviceCommand cmd, DirectBuffer i, MutableDirectBuffer o, Layout in, Layout out)
            throws CmdError {
        requireEnabled();
        functionZero(i, in);
        long n = in.get(i, 0, "input_num_entries");
        switch (cmd.opMod()) {
            case HcaLayouts.PAGES_CANT_GIVE:
                return;
            case HcaLayouts.PAGES_GIVE: {
                if (n > (cmd.inLength() - in.sizeBytes()) / 8) {
                    throw new CmdError(CmdStatus.BAD_INP_LEN_ERR, CmdSyndromes.PAGE_COUNT,
                            n + " pages announced, the input holds " + (cmd.inLength() - in.sizeBytes()) / 8);
                }
                Field pas = in.flexibleArray();
                java.util.Set<Long> batch = new java.util.HashSet<>();
                for (int k = 0; k < n; k++) {
                    long page = pas.getElement(i, 0, k); // be64 page IOVA
                    if ((page & 0xfff) != 0) {
                        throw CmdError.badParam(CmdSyndromes.PAGE_MISALIGNED,
                                String.format("page 0x%x is not 4 KiB aligned", page));
                    }
                    if (!st.iommu.contains(page, 4096)) {
                        throw CmdError.badParam(CmdSyndromes.PAGE_NOT_MAPPED,
                                String.format("page 0x%x is not DMA-mapped", page));
                    }
                    if (st.firmwarePages.contains(page) || !batch.add(page)) {
                        throw CmdError.badParam(CmdSyndromes.PAGE_GIVEN_TWICE,
                                String.format("page 0x%x was already given", page));
                    }
                }
                st.firmwarePages.addAll(batch);
                return;
            }
            case HcaLayouts.PAGES_TAKE: {
                int spare = st.initialized
                        ? Math.max(0, st.firmwarePages.size() - BOOT_PAGES - INIT_PAGES - st.regularPages)
                        : st.firmwarePages.size();
                int k = (int) Math.min(n, spare);
                if (cmd.outLength() < out.sizeBytes(k)) {
                    throw new CmdError(CmdStatus.BAD_OUTP_LEN_ERR, CmdSyndromes.OUTPUT_TOO_SHORT,
                            "no room for " + k + " returned pages");
                }
                Field pas = out.flexibleArray();
                java.util.Iterator<Long> it = st.firmwarePages.iterator();
                for (int j = 0; j < k; j++) {
                    pas.setElement(o, 0, j, it.next());
                    it.remove();
                }
                out.set(o, 0, "output_num_entries", k);
                return;
            }
            default:
                throw CmdError.badParam(CmdSyndromes.BAD_OP_MOD, "MANAGE_PAGES op_mod " + cmd.opMod());
        }
    }

    private void queryHcaCap(DeviceCommand cmd, DirectBuffer i, MutableDirectBuffer o, Layout in) throws CmdError {
        requireEnabled();
        if (in.get(i, 0, "other_function") != 0 || in.get(i, 0, "function_id") != 0) {
            throw CmdError.badParam(CmdSyndromes.BAD_FUNCTION_ID, "only this function's capabilities exist");
        }
        if (st.firmwarePages.size() < BOOT_PAGES) {
            throw new CmdError(CmdStatus.BAD_SYS_STATE_ERR, CmdSyndromes.PAGES_MISSING,
                    "boot pages not given (" + st.firmwarePages.size() + " of " + BOOT_PAGES + ")");
        }
        int type = cmd.opMod() >>> 1;
        // query_hca_cap_out.capability at byte 0x10; max and current are the same
        switch (type) {
            case HcaCap.TYPE_GENERAL: ModelCaps.write(o, 0x10); break;
            case HcaCap.TYPE_ATOMIC: ModelCaps.writeAtomic(o, 0x10); break;
            case HcaCap.TYPE_ROCE: ModelCaps.writeRoce(o, 0x10); break;
            default:
                throw CmdError.badParam(CmdSyndromes.BAD_CAP_TYPE, "capability type " + type
                        + " is not modelled (general 0, atomic 3 and RoCE 4 are)");
        }
    }

    private void setHcaCap(DeviceCommand cmd) throws CmdError {
        requireEnabled();
        if (st.initialized) {
            throw new CmdError(CmdStatus.BAD_SYS_STATE_ERR, CmdSyndromes.ALREADY_INITIALIZED,
                    "SET_HCA_CAP after INIT_HCA");
        }
        int type = cmd.opMod() >>> 1;
        if (type == HcaCap.TYPE_ATOMIC || type == HcaCap.TYPE_ROCE) {
            return; // mlx5_core writes back what it read (atomic: host endianness, the only mode the model has)
        }
        if (type != HcaCap.TYPE_GENERAL) {
            throw CmdError.badParam(CmdSyndromes.BAD_CAP_TYPE, "capability type " + type);
        }
        if (HcaCap.CMD_HCA_CAP.get(cmd.input(), 0x10, "cmdif_checksum") != 0) {
            throw CmdError.badParam(CmdSyndromes.BAD_CAP_TYPE, "the model does not checksum commands");
        }
        // every other setting the model has only one value for; accepted as rdma-core sends them
    }

    private void accessReg(DeviceCommand cmd) throws CmdError {
        requireEnabled();
        // access_register_in (mlx5_ifc.h): register_id be16 at byte 0x0a, argument at 0x0c, data from 0x10
        int reg = cmd.input().getShort(0x0a, java.nio.ByteOrder.BIG_ENDIAN) & 0xffff;
        if (reg != REG_HOST_ENDIANNESS) {
            throw CmdError.badParam(CmdSyndromes.BAD_REGISTER, String.format("register 0x%x is not modelled", reg));
        }
    }

    private void initHca() throws CmdError {
        requireEnabled();
        if (st.initialized) {
            throw new CmdError(CmdStatus.BAD_SYS_STATE_ERR, CmdSyndromes.ALREADY_INITIALIZED, "INIT_HCA twice");
        }
        if (st.firmwarePages.size() < BOOT_PAGES + INIT_PAGES) {
            throw new CmdError(CmdStatus.BAD_SYS_STATE_ERR, CmdSyndromes.PAGES_MISSING, "init pages not given ("
                    + st.firmwarePages.size() + " of " + (BOOT_PAGES + INIT_PAGES) + ")");
        }
        st.initialized = true;
    }

    private void teardownHca(DirectBuffer i, Layout in) throws CmdError {
        requireEnabled();
        long profile = in.get(i, 0, "profile");
        if (profile != HcaLayouts.TEARDOWN_GRACEFUL && profile != HcaLayouts.TEARDOWN_FORCE) {
            throw CmdError.badParam(CmdSyndromes.BAD_TEARDOWN_PROFILE, "teardown profile " + profile
                    + " (the model reports fast_teardown 0)");
        }
        requireInitialized();
        qps.destroyAll();
        srqs.destroyAll();
        objects.destroyAll(qps);
        st.initialized = false;
        // teardown_hca_out.state 0: success (the output is zero already)
    }

    /** TEARDOWN_HCA without a command: the function is being closed or reset. */
    void reset() {
        qps.destroyAll();
        srqs.destroyAll();
        objects.destroyAll(qps);
        st.initialized = false;
        st.enabled = false;
        st.firmwarePages.clear();
        st.regularPages = 0;
    }

    /**
     * The firmware changes its mind about how many pages it needs after INIT_HCA, as a ConnectX does (mlx5_core
     * pagealloc.c serves the PAGE_REQUEST event): {@code numPages > 0} asks the driver for that many more, {@code < 0}
     * announces that many can be taken back (MANAGE_PAGES take then returns them).
     */
    void requestPages(int numPages) {
        if (!st.initialized) {
            throw new IllegalStateException("page requests come after INIT_HCA");
        }
        if (numPages < 0 && -(long) numPages > st.regularPages) {
            throw new IllegalArgumentException("the firmware can give back at most the " + st.regularPages
                    + " pages it asked for since INIT_HCA, not " + -(long) numPages);
        }
        DeviceEq eq = st.asyncEq(io.jhca.mlx5.eq.EventType.PAGE_REQUEST);
        if (eq == null) {
            throw new IllegalStateException("no EQ asked for PAGE_REQUEST events");
        }
        st.regularPages += numPages;
        eq.pageRequest(0, numPages);
    }
}
