package io.jhca.connectx;

import java.util.ArrayList;

import org.agrona.DirectBuffer;
import org.agrona.MutableDirectBuffer;

import io.jhca.mlx5.cmd.CmdStatus;
import io.jhca.mlx5.cmd.Layout;
import io.jhca.mlx5.cmd.CmdOpcode;
import io.jhca.mlx5.cmd.QpLayouts;
import io.jhca.mlx5.cmd.QpModifyLayouts;
import io.jhca.mlx5.cmd.RoceAddressLayouts;
import io.jhca.mlx5.wqe.SendWqeLayout;
import io.jhca.verbs.AddressHandle;
import io.jhca.verbs.Gid;
import io.jhca.verbs.QpAttributes;
import io.jhca.verbs.QpInitAttributes;
import io.jhca.verbs.QpState;
import io.jhca.verbs.QpType;
import io.jhca.verbs.QueuePair;
import io.jhca.verbs.VerbsException;

/**
 * CREATE_QP, the QP transitions, QUERY_QP, DESTROY_QP and the RoCE address table (SET/QUERY_ROCE_ADDRESS). A QP is
 * mirrored by an rxe QP of the same type whose QPN the command returns, so peers address it by that number.
 */
final class QpCommands {

    /** Byte offset of the qpc inside create_qp_in, the modify commands and query_qp_out (bit 0xc0). */
    static final int QPC_OFFSET = 0x18;
    /** Byte offset and size of primary_address_path inside the qpc (bit 0xc0, 44 bytes). */
    static final int PATH_OFFSET = 0x18;
    static final int PATH_SIZE = 0x2c;

    private final DeviceState st;
    private final DataPath dataPath;
    private final ObjectCommands objects;
    private final QCounterCommands qCounters;
    private SrqCommands srqs;

    QpCommands(DeviceState st, DataPath dataPath, ObjectCommands objects, QCounterCommands qCounters) {
        this.st = st;
        this.dataPath = dataPath;
        this.objects = objects;
        this.qCounters = qCounters;
    }

    void srqs(SrqCommands srqs) {
        this.srqs = srqs;
    }

    void createQp(DeviceCommand cmd, DirectBuffer i, MutableDirectBuffer o, Layout in, Layout out) throws CmdError {
        String q = "qpc.";
        if (in.get(i, 0, "wq_umem_valid") != 0 || in.get(i, 0, q + "dbr_umem_valid") != 0) {
            throw CmdError.badParam(CmdSyndromes.UMEM_UNSUPPORTED, "umem QPs are not modelled");
        }
        QpType type;
        long st0 = in.get(i, 0, q + "st");
        if (st0 == QpLayouts.ST_RC) {
            type = QpType.RC;
        } else if (st0 == QpLayouts.ST_UC) {
            type = QpType.UC;
        } else if (st0 == QpLayouts.ST_UD || st0 == QpLayouts.ST_QP1) {
            type = QpType.UD;
        } else {
            throw CmdError.badParam(CmdSyndromes.QP_TYPE, "qpc.st " + st0 + " (the model has RC 0, UC 1, UD 2, QP1 8)");
        }
        DevicePd pd = objects.pd(in.get(i, 0, q + "pd"));
        int uar = objects.uar(in.get(i, 0, q + "uar_page"));
        DeviceCq scq = objects.cq(in.get(i, 0, q + "cqn_snd"));
        DeviceCq rcq = objects.cq(in.get(i, 0, q + "cqn_rcv"));
        long rqType = in.get(i, 0, q + "rq_type");
        if (rqType != QpModifyLayouts.RQ_TYPE_REGULAR && rqType != QpModifyLayouts.RQ_TYPE_ZERO_LEN
                && rqType != QpModifyLayouts.RQ_TYPE_SRQ) {
            throw CmdError.badParam(CmdSyndromes.QP_RQ_TYPE, "rq_type " + rqType + " (the model has regular 0, SRQ 1,"
                    + " zero-length 3)");
        }
        DeviceSrq srq = null;
        if (rqType == QpModifyLayouts.RQ_TYPE_SRQ) {
            if (type == QpType.UC) {
                throw CmdError.badParam(CmdSyndromes.QP_RQ_TYPE, "a UC QP cannot use an SRQ");
            }
            srq = srqs.srq(in.get(i, 0, q + "srqn_rmpn_xrqn"));
        }
        int logSq = (int) in.get(i, 0, q + "log_sq_size");
        int logRq = (int) in.get(i, 0, q + "log_rq_size");
        if (logSq > ModelCaps.LOG_MAX_QP_SZ) {
            throw CmdError.badParam(CmdSyndromes.QP_SQ_SIZE, "log_sq_size " + logSq + " > " + ModelCaps.LOG_MAX_QP_SZ);
        }
        if (logRq > ModelCaps.LOG_MAX_QP_SZ) {
            throw CmdError.badParam(CmdSyndromes.QP_RQ_SIZE, "log_rq_size " + logRq + " > " + ModelCaps.LOG_MAX_QP_SZ);
        }
        int sqCount = in.get(i, 0, q + "no_sq") != 0 ? 0 : 1 << logSq;
        int rqCount = rqType != QpModifyLayouts.RQ_TYPE_REGULAR ? 0 : 1 << logRq;
        int strideShift = (int) in.get(i, 0, q + "log_rq_stride") + 4; // log2(RQ WQE bytes) - 4
        if (in.get(i, 0, q + "page_offset") != 0) {
            throw CmdError.badParam(CmdSyndromes.PAGE_OFFSET_UNSUPPORTED, "qpc.page_offset must be 0");
        }
        long bytes = ((long) rqCount << strideShift) + ((long) sqCount << SendWqeLayout.WQEBB_SHIFT);
        PagedBuffer buffer = bytes == 0 ? null
                : objects.ring(cmd, i, in, (int) in.get(i, 0, q + "log_page_size"), bytes);
        long dbrHost = objects.dbr(in.get(i, 0, q + "dbr_addr"));
        if (st.qps.size() >= 1 << ModelCaps.LOG_MAX_QP) {
            throw new CmdError(CmdStatus.NO_RES_ERR, CmdSyndromes.TABLE_FULL, "QP table full");
        }
        int bounceIndex = -1;
        if (sqCount > 0) {
            bounceIndex = st.privateKeys.nextFree();
            if (bounceIndex < 0) {
                throw new CmdError(CmdStatus.NO_RES_ERR, CmdSyndromes.TABLE_FULL, "no private key left");
            }
        }
        // QP1 (GSI) is the mirror device's own QP1: QPN 1 and the GSI Q_Key on the wire (IBTA 16.1)
        QpInitAttributes base = st0 == QpLayouts.ST_QP1 ? QpInitAttributes.gsi(scq.rxeCq, rcq.rxeCq)
                : QpInitAttributes.of(type, scq.rxeCq, rcq.rxeCq);
        base                .maxSendWr(Math.max(1, sqCount)).maxRecvWr(Math.max(1, rqCount))
                .maxSendSge(ModelCaps.MAX_SGE)
                .maxRecvSge(Math.max(1, Math.min(ModelCaps.MAX_SGE, (1 << strideShift) / 16)))
                .srq(srq == null ? null : srq.rxeSrq);
        if (in.get(i, 0, q + "block_lb_mc") != 0) {
            base.blockSelfMulticastLoopback(); // the QP's own multicast is not looped back to it
        }
        QueuePair rxeQp = pd.rxePd.createQp(base);

        DeviceQp qp = new DeviceQp(rxeQp.qpn(), type, pd, scq, rcq, uar, (int) in.get(i, 0, q + "user_index"), buffer,
                rqCount, strideShift, sqCount, dbrHost, rxeQp);
        if (sqCount > 0) {
            qp.bounceKey = bounceIndex << 8;
            try {
                qp.bounceMr = st.rxe.registerHost(pd.rxePd, qp.bounceHost, qp.bounceMemory.capacity(), 0, qp.bounceKey);
            } catch (RuntimeException e) {
                rxeQp.close();
                throw e;
            }
            st.privateKeys.put(bounceIndex, Boolean.TRUE);
        }
        i.getBytes(QPC_OFFSET, qp.qpc, 0, qp.qpc.capacity());
        QpLayouts.QPC.set(qp.qpc, 0, "state", QpLayouts.STATE_RST);
        st.qps.put(qp.qpn, qp);
        st.qpList.add(qp);
        qp.srq = srq;
        if (srq != null) {
            srq.users++;
        }
        pd.users++;
        scq.users++;
        rcq.users++;
        st.uarUsers[uar]++;
        out.set(o, 0, "qpn", qp.qpn);
    }

    void destroyQp(DirectBuffer i, Layout in) throws CmdError {
        DeviceQp qp = qp(in.get(i, 0, "qpn"));
        dataPath.drain(qp.sendCq);
        dataPath.drain(qp.recvCq);
        release(qp);
    }

    private void release(DeviceQp qp) {
        if (qp.counterSet != null) {
            qp.counterSet.detach(qp); // its counts stay in the set, as a destroyed QP's do on the device
        }
        st.qps.remove(qp.qpn);
        st.qpList.remove(qp);
        if (qp.srq != null) {
            qp.srq.users--;
        }
        qp.pd.users--;
        qp.sendCq.users--;
        qp.recvCq.users--;
        st.uarUsers[qp.uar]--;
        McgCommands.detachAll(qp);
        qp.rxeQp.close();
        for (int k = 0; k < qp.ahCount; k++) {
            AddressHandle ah = qp.ahs[k];
            if (ah != null) {
                ah.close();
            }
        }
        if (qp.bounceMr != null) {
            RxeMirror.deregister(qp.bounceMr);
            st.privateKeys.remove(qp.bounceKey >>> 8);
        }
        qp.faulted = true;
    }

    DeviceQp qp(long qpn) throws CmdError {
        DeviceQp qp = qpn > 0 && qpn <= 0xffffff ? st.qp((int) qpn) : null;
        if (qp == null) {
            throw CmdError.badResource(CmdSyndromes.BAD_QPN, String.format("QP 0x%x does not exist", qpn));
        }
        return qp;
    }

    /** RST2INIT, INIT2INIT, INIT2RTR, RTR2RTS, RTS2RTS, SQERR2RTS, 2ERR, 2RST. */
    void modifyQp(int opcode, DirectBuffer i, Layout in) throws CmdError {
        DeviceQp qp = qp(in.get(i, 0, "qpn"));
        // CQEs of work already done go out before the state changes (as the HCA's completions precede the command)
        dataPath.drain(qp.sendCq);
        dataPath.drain(qp.recvCq);
        if (opcode == CmdOpcode.QP_2RST) {
            if (qp.rxeQp.state() != QpState.RESET) {
                qp.rxeQp.modify(QpAttributes.toState(QpState.RESET));
            }
            qp.state = QpLayouts.STATE_RST;
            qp.sqHw = 0;
            qp.rqHw = 0;
            qp.sqOutstanding = 0;
            qp.rqOutstanding = 0;
            qp.pending = false;
            return;
        }
        if (opcode == CmdOpcode.QP_2ERR) {
            QpState s = qp.rxeQp.state();
            if (s != QpState.RESET && s != QpState.ERR) {
                qp.rxeQp.modify(QpAttributes.toState(QpState.ERR)); // the transport flushes what it holds
            }
            qp.state = QpLayouts.STATE_ERR;
            return;
        }
        int need;
        int next;
        switch (opcode) {
            case CmdOpcode.RST2INIT_QP: need = QpLayouts.STATE_RST; next = QpLayouts.STATE_INIT; break;
            case CmdOpcode.INIT2INIT_QP: need = QpLayouts.STATE_INIT; next = QpLayouts.STATE_INIT; break;
            case CmdOpcode.INIT2RTR_QP: need = QpLayouts.STATE_INIT; next = QpLayouts.STATE_RTR; break;
            case CmdOpcode.RTR2RTS_QP: need = QpLayouts.STATE_RTR; next = QpLayouts.STATE_RTS; break;
            case CmdOpcode.RTS2RTS_QP: need = QpLayouts.STATE_RTS; next = QpLayouts.STATE_RTS; break;
            default: need = QpLayouts.STATE_SQER; next = QpLayouts.STATE_RTS; break; // SQERR2RTS
        }
        if (qp.state != need) {
            throw new CmdError(CmdStatus.BAD_QP_STATE_ERR, CmdSyndromes.QP_BAD_STATE, CmdOpcode.name(opcode)
                    + " on QP 0x" + Integer.toHexString(qp.qpn) + " in state " + qp.state + ", needs " + need);
        }
        QpAttributes a = QpcAttributes.of(opcode, qp, i, in, st);
        // RST2INIT names the Q counter set the QP is counted in (0: none); later transitions leave it
        long setId = opcode == CmdOpcode.RST2INIT_QP ? in.get(i, 0, "qpc.counter_set_id") : 0;
        QCounterSet set = setId != 0 ? qCounters.set(setId) : null;
        try {
            qp.rxeQp.modify(a);
        } catch (VerbsException e) {
            throw CmdError.badParam(CmdSyndromes.QP_ATTRIBUTES, e.getMessage());
        }
        if (opcode == CmdOpcode.RST2INIT_QP) {
            if (qp.counterSet != null) {
                qp.counterSet.detach(qp); // reset and initialized again: counted where it now says
            }
            if (set != null) {
                set.attach(qp);
            }
        }
        remember(opcode, qp, i, in);
        qp.state = next;
    }

    /** Copies what a transition set into the QP's context (for QUERY_QP) and into the data path's limits. */
    private void remember(int opcode, DeviceQp qp, DirectBuffer i, Layout in) {
        switch (opcode) {
            case CmdOpcode.RST2INIT_QP:
                copy(i, in, qp, "rre", "rwe", "rae", "q_key", "primary_address_path.pkey_index",
                        "primary_address_path.vhca_port_num", "counter_set_id");
                qp.qkey = (int) in.get(i, 0, "qpc.q_key");
                break;
            case CmdOpcode.INIT2RTR_QP:
                copy(i, in, qp, "mtu", "log_msg_max", "remote_qpn", "next_rcv_psn", "log_rra_max", "min_rnr_nak");
                i.getBytes(QPC_OFFSET + PATH_OFFSET, qp.qpc, PATH_OFFSET, PATH_SIZE);
                int lm = (int) in.get(i, 0, "qpc.log_msg_max");
                // the kernel sets log_msg_max from the caps for RC/UC; 0 (unset) leaves the device limit
                qp.logMsgMax = qp.type == QpType.UD || lm == 0 ? ModelCaps.LOG_MAX_MSG
                        : Math.min(lm, ModelCaps.LOG_MAX_MSG);
                break;
            case CmdOpcode.RTR2RTS_QP:
                copy(i, in, qp, "next_send_psn", "retry_count", "rnr_retry", "log_sra_max",
                        "primary_address_path.ack_timeout");
                break;
            default:
                break;
        }
    }

    private static void copy(DirectBuffer i, Layout in, DeviceQp qp, String... fields) {
        for (String f : fields) {
            QpLayouts.QPC.set(qp.qpc, 0, f, in.get(i, 0, "qpc." + f));
        }
    }

    void queryQp(DirectBuffer i, MutableDirectBuffer o, Layout in, Layout out) throws CmdError {
        DeviceQp qp = qp(in.get(i, 0, "qpn"));
        o.putBytes(QPC_OFFSET, qp.qpc, 0, qp.qpc.capacity());
        out.set(o, 0, "qpc.state", qp.state);
        out.set(o, 0, "qpc.hw_sq_wqebb_counter", qp.sqHw & 0xffff);
        out.set(o, 0, "qpc.sw_sq_wqebb_counter", qp.sqCount == 0 ? 0 : qp.dbrSq());
        out.set(o, 0, "qpc.hw_rq_counter", qp.rqHw & 0xffff);
        out.set(o, 0, "qpc.sw_rq_counter", qp.rqCount == 0 ? 0 : qp.dbrRq());
    }

    // ------------------------------------------------------------------------------------------ GID table

    void setRoceAddress(DirectBuffer i, Layout in) throws CmdError {
        int index = gidIndex(in.get(i, 0, "roce_address_index"));
        if (in.get(i, 0, "vhca_port_num") > 1) {
            throw CmdError.badParam(CmdSyndromes.QP_BAD_PORT, "vhca_port_num " + in.get(i, 0, "vhca_port_num"));
        }
        byte[] addr = new byte[Gid.LENGTH];
        in.field("roce_address.source_l3_address").getBytes(i, 0, addr);
        Gid g = Gid.of(addr);
        if (g.isZero()) {
            st.gids[index] = null; // the kernel deletes an entry by writing zeros
            return;
        }
        long version = in.get(i, 0, "roce_address.roce_version");
        if (version != RoceAddressLayouts.ROCE_VERSION_2) {
            throw CmdError.badParam(CmdSyndromes.GID_VERSION, "roce_version " + version
                    + ": the model's port speaks RoCEv2 (2) only");
        }
        long l3 = in.get(i, 0, "roce_address.roce_l3_type");
        long want = g.isIpv4Mapped() ? RoceAddressLayouts.L3_TYPE_IPV4 : RoceAddressLayouts.L3_TYPE_IPV6;
        if (l3 != want) {
            throw CmdError.badParam(CmdSyndromes.GID_L3_TYPE, "roce_l3_type " + l3 + " for " + g);
        }
        st.gids[index] = addr;
        st.gidVersion[index] = (int) version;
        st.gidL3Type[index] = (int) l3;
        st.gidMac[index] = in.get(i, 0, "roce_address.source_mac");
    }

    void queryRoceAddress(DirectBuffer i, MutableDirectBuffer o, Layout in, Layout out) throws CmdError {
        int index = gidIndex(in.get(i, 0, "roce_address_index"));
        byte[] g = st.gids[index];
        if (g == null) {
            return; // an empty entry reads as zeros
        }
        out.field("roce_address.source_l3_address").setBytes(o, 0, g);
        out.set(o, 0, "roce_address.roce_version", st.gidVersion[index]);
        out.set(o, 0, "roce_address.roce_l3_type", st.gidL3Type[index]);
        out.set(o, 0, "roce_address.source_mac", st.gidMac[index]);
    }

    private static int gidIndex(long index) throws CmdError {
        if (index < 0 || index >= ModelCaps.GID_TABLE_ENTRIES) {
            throw CmdError.badParam(CmdSyndromes.GID_INDEX, "roce_address_index " + index + " (table of "
                    + ModelCaps.GID_TABLE_ENTRIES + ")");
        }
        return (int) index;
    }

    /** Every QP goes (TEARDOWN_HCA, close). */
    void destroyAll() {
        for (DeviceQp qp : new ArrayList<>(st.qpList)) {
            dataPath.drain(qp.sendCq);
            dataPath.drain(qp.recvCq);
            release(qp);
        }
    }
}
