package io.jhca.connectx;

import java.util.ArrayList;

import org.agrona.DirectBuffer;
import org.agrona.MutableDirectBuffer;

import io.jhca.mlx5.cmd.CmdStatus;
import io.jhca.mlx5.cmd.Layout;
import io.jhca.mlx5.cmd.SrqLayouts;
import io.jhca.mlx5.eq.EventType;
import io.jhca.mlx5.wqe.DataSeg;
import io.jhca.mlx5.wqe.SrqNextSeg;
import io.jhca.verbs.AsyncEvent;
import io.jhca.verbs.SharedReceiveQueue;
import io.jhca.verbs.SrqAttributes;
import io.jhca.verbs.SrqInitAttributes;

/**
 * CREATE_SRQ, DESTROY_SRQ, QUERY_SRQ and ARM_RQ (op_mod SRQ). An SRQ is mirrored by an rxe SRQ as deep as its ring;
 * ARM_RQ arms the mirror's limit with lwm, so the limit is crossed exactly when the rxe responders take WQEs, and
 * the mirror's SRQ_LIMIT_REACHED and QP_LAST_WQE_REACHED events become SRQ_RQ_LIMIT (0x14) and SRQ_LAST_WQE (0x13)
 * EQEs ({@link #limitReached}).
 */
final class SrqCommands {

    /** Byte offset of the srqc inside create_srq_in and query_srq_out (bit 0x80). */
    static final int SRQC_OFFSET = 0x10;

    private final DeviceState st;
    private final DataPath dataPath;
    private final ObjectCommands objects;

    SrqCommands(DeviceState st, DataPath dataPath, ObjectCommands objects) {
        this.st = st;
        this.dataPath = dataPath;
        this.objects = objects;
    }

    void createSrq(DeviceCommand cmd, DirectBuffer i, MutableDirectBuffer o, Layout in, Layout out) throws CmdError {
        String c = "srq_context_entry.";
        int logSize = (int) in.get(i, 0, c + "log_srq_size");
        if (logSize < 1 || logSize > ModelCaps.LOG_MAX_SRQ_SZ) {
            throw CmdError.badParam(CmdSyndromes.SRQ_SIZE, "log_srq_size " + logSize + " out of 1.."
                    + ModelCaps.LOG_MAX_SRQ_SZ);
        }
        int strideShift = (int) in.get(i, 0, c + "log_rq_stride") + 4;
        if (strideShift < 5 || strideShift > 9) {
            throw CmdError.badParam(CmdSyndromes.SRQ_SIZE, "log_rq_stride " + (strideShift - 4)
                    + ": an SRQ WQE is 32..512 bytes");
        }
        if (in.get(i, 0, c + "page_offset") != 0) {
            throw CmdError.badParam(CmdSyndromes.PAGE_OFFSET_UNSUPPORTED, "srqc.page_offset must be 0");
        }
        DevicePd pd = objects.pd(in.get(i, 0, c + "pd"));
        int wqeCnt = 1 << logSize;
        PagedBuffer buffer = objects.ring(cmd, i, in, (int) in.get(i, 0, c + "log_page_size"),
                (long) wqeCnt << strideShift);
        long dbrHost = objects.dbr(in.get(i, 0, c + "dbr_addr"));
        int srqn = st.srqs.nextFree();
        if (srqn < 0) {
            throw new CmdError(CmdStatus.NO_RES_ERR, CmdSyndromes.TABLE_FULL, "SRQ table full");
        }
        int maxSge = Math.min(ModelCaps.MAX_SGE, ((1 << strideShift) - SrqNextSeg.SIZE) / DataSeg.SIZE);
        SharedReceiveQueue rxeSrq = pd.rxePd.createSrq(SrqInitAttributes.create().maxWr(wqeCnt).maxSge(maxSge));
        DeviceSrq srq = new DeviceSrq(srqn, pd, buffer, wqeCnt, strideShift, dbrHost, rxeSrq);
        i.getBytes(SRQC_OFFSET, srq.srqc, 0, srq.srqc.capacity());
        SrqLayouts.SRQC.set(srq.srqc, 0, "lwm", 0);
        st.srqs.put(srqn, srq);
        st.srqList.add(srq);
        pd.users++;
        out.set(o, 0, "srqn", srqn);
    }

    void destroySrq(DirectBuffer i, Layout in) throws CmdError {
        DeviceSrq srq = srq(in.get(i, 0, "srqn"));
        if (srq.users > 0) {
            throw CmdError.badResource(CmdSyndromes.OBJECT_IN_USE, "SRQ " + srq.srqn + " has " + srq.users
                    + " QPs attached");
        }
        release(srq);
    }

    void querySrq(DirectBuffer i, MutableDirectBuffer o, Layout in, Layout out) throws CmdError {
        DeviceSrq srq = srq(in.get(i, 0, "srqn"));
        SrqLayouts.SRQC.set(srq.srqc, 0, "lwm", srq.rxeSrq.query().srqLimit());
        o.putBytes(SRQC_OFFSET, srq.srqc, 0, srq.srqc.capacity());
    }

    /** ARM_RQ op_mod SRQ: what the driver posted is fetched first, so the limit counts every posted WQE. */
    void armRq(int opMod, DirectBuffer i, Layout in) throws CmdError {
        if (opMod != SrqLayouts.ARM_RQ_OP_MOD_SRQ) {
            throw CmdError.badParam(CmdSyndromes.BAD_OP_MOD, "ARM_RQ op_mod " + opMod + " (the model has SRQs only)");
        }
        DeviceSrq srq = srq(in.get(i, 0, "srq_number"));
        int lwm = (int) in.get(i, 0, "lwm");
        if (lwm >= srq.wqeCnt) {
            throw CmdError.badParam(CmdSyndromes.SRQ_BAD_LWM, "lwm " + lwm + " >= the SRQ's " + srq.wqeCnt + " WQEs");
        }
        dataPath.fetchSrq(srq);
        srq.rxeSrq.modify(SrqAttributes.limit(lwm), SrqAttributes.LIMIT);
    }

    DeviceSrq srq(long n) throws CmdError {
        DeviceSrq srq = n > 0 && n <= 0xffffff ? st.srqs.get((int) n) : null;
        if (srq == null) {
            throw CmdError.badResource(CmdSyndromes.BAD_SRQN, "SRQ " + n + " does not exist");
        }
        return srq;
    }

    private void release(DeviceSrq srq) {
        st.srqs.remove(srq.srqn);
        st.srqList.remove(srq);
        srq.pd.users--;
        srq.rxeSrq.close();
    }

    /** TEARDOWN_HCA / close, after the QPs went: every SRQ goes. */
    void destroyAll() {
        for (DeviceSrq srq : new ArrayList<>(st.srqList)) {
            release(srq);
        }
    }

    /**
     * A SRQ_LIMIT_REACHED of the mirror (it names the rxe SRQ) becomes the device's SRQ_RQ_LIMIT EQE; called by
     * {@link AsyncEventRelay}, the one reader of the mirror's async events.
     */
    static void limitReached(DeviceState st, AsyncEvent e) {
        for (int k = 0; k < st.srqList.size(); k++) {
            DeviceSrq srq = st.srqList.get(k);
            if (srq.rxeName.equals(e.resource())) {
                st.reportQpSrqEvent(EventType.SRQ_RQ_LIMIT, srq.srqn);
            }
        }
    }
}
