package io.jhca.connectx;

import org.agrona.concurrent.UnsafeBuffer;

import io.jhca.mlx5.cmd.QpLayouts;
import io.jhca.mlx5.cq.CqeOpcode;
import io.jhca.mlx5.cq.CqeSyndrome;
import io.jhca.mlx5.wqe.AtomicSeg;
import io.jhca.mlx5.wqe.CtrlSeg;
import io.jhca.mlx5.wqe.DataSeg;
import io.jhca.mlx5.wqe.Mlx5Opcode;
import io.jhca.mlx5.wqe.RecvWqeLayout;
import io.jhca.mlx5.wqe.SendWqeLayout;
import io.jhca.mlx5.wqe.SrqNextSeg;
import io.jhca.verbs.AddressHandle;
import io.jhca.verbs.AhAttributes;
import io.jhca.verbs.Gid;
import io.jhca.verbs.QpState;
import io.jhca.verbs.QpType;
import io.jhca.verbs.QpAttributes;
import io.jhca.verbs.RecvWr;
import io.jhca.verbs.SendFlags;
import io.jhca.verbs.SendQueue;
import io.jhca.verbs.VerbsException;
import io.jhca.verbs.WcFlags;
import io.jhca.verbs.WcOpcode;
import io.jhca.verbs.WcStatus;
import io.jhca.verbs.WorkCompletion;

/**
 * The hardware half of the model, run every duty cycle on the firmware thread:
 * <ol>
 *   <li>{@link #fetch}: for every QP, receive WQEs up to the RQ doorbell record counter are posted to the mirror rxe
 *       QP (INIT and later), send WQEs up to the SQ counter are parsed, checked and posted (RTS); a WQE the device
 *       answers itself (malformed, NOP) waits until everything posted before it completed, so CQEs stay in order. In
 *       the error state every new WQE is flushed.</li>
 *   <li>{@link #drainCompletions}: completions of the rxe CQs become mlx5 CQEs in the driver's rings.</li>
 * </ol>
 * Nothing here allocates in steady state: the parser, the receive WR and the work completion are reused.
 */
final class DataPath {

    private final DeviceState st;
    private final ModelCounters counters;
    private final SendWqeParser parser = new SendWqeParser();
    private final RecvWr recv = new RecvWr(ModelCaps.MAX_SGE);
    private final WorkCompletion wc = new WorkCompletion();
    private final io.jhca.verbs.MwBind bind = new io.jhca.verbs.MwBind();
    private final UnsafeBuffer view = new UnsafeBuffer(0, 0);
    private final int portMtu;

    DataPath(DeviceState st, int portMtu) {
        this.st = st;
        this.counters = st.counters;
        this.portMtu = portMtu;
    }

    // ------------------------------------------------------------------------------------------ rings to rxe

    int fetch() {
        int work = 0;
        for (int i = 0; i < st.qpList.size(); i++) {
            DeviceQp qp = st.qpList.get(i);
            if (qp.faulted) {
                continue;
            }
            work += fetchRecv(qp);
            work += fetchSend(qp);
        }
        for (int i = 0; i < st.srqList.size(); i++) {
            work += fetchSrq(st.srqList.get(i));
        }
        return work;
    }

    /**
     * SRQ WQEs up to the doorbell record's counter go to the mirror rxe SRQ in free-list order, each with wr_id = its
     * index; the next one fetched is the one its next_wqe_index names.
     */
    int fetchSrq(DeviceSrq srq) {
        int work = 0;
        int dbr = srq.dbrCounter();
        while (((dbr - srq.hwCount) & 0xffff) != 0) {
            long base = srq.slotOffset(srq.hwHead);
            srq.buffer.wrap(view, base, SrqNextSeg.SIZE);
            int next = SrqNextSeg.next(view, 0);
            int n = scatterList(srq.pd, srq.buffer, base + SrqNextSeg.SIZE,
                    ((1 << srq.strideShift) - SrqNextSeg.SIZE) / DataSeg.SIZE);
            recv.wrId(srq.hwHead).numSge(n);
            try {
                if (srq.rxeSrq.postRecv(recv) == 0) {
                    break; // cannot happen while the rxe SRQ is as deep as ours; retried next cycle
                }
            } catch (VerbsException e) {
                counters.increment(ModelCounters.Counter.MODEL_ERRORS);
                break;
            }
            srq.hwHead = next & (srq.wqeCnt - 1);
            srq.hwCount = (srq.hwCount + 1) & 0xffff;
            counters.increment(ModelCounters.Counter.RECV_WQES);
            work++;
        }
        return work;
    }

    /** Reads a receive scatter list (data segments ended by MLX5_INVALID_LKEY) into {@link #recv}; its length. */
    private int scatterList(DevicePd pd, PagedBuffer buffer, long base, int maxSegs) {
        int max = Math.min(ModelCaps.MAX_SGE, maxSegs);
        int n = 0;
        for (int i = 0; i < max; i++) {
            buffer.wrap(view, base + (long) i * DataSeg.SIZE, DataSeg.SIZE);
            int lkey = DataSeg.lkey(view, 0);
            if (lkey == RecvWqeLayout.INVALID_LKEY) {
                break;
            }
            int len = DataSeg.byteCount(view, 0);
            if (len == 0) {
                continue;
            }
            long addr = DataSeg.addr(view, 0);
            DeviceMkey k = st.mkeys.get(lkey >>> 8);
            if (k != null && k.key == lkey && k.valid && k.pd == pd && k.contains(addr, len & 0xffffffffL)) {
                recv.sge(n).set(addr, len, lkey);
            } else {
                recv.sge(n).set(addr, len, 0); // refused with LOC_PROT_ERR when a message arrives (see postRecv)
            }
            n++;
        }
        return n;
    }

    /** The wire found {@code qpn}'s receive queue empty: take what the driver posted since the last fetch. */
    void refillRecv(int qpn) {
        DeviceQp qp = st.qp(qpn);
        if (qp != null && !qp.faulted) {
            if (qp.srq != null) {
                fetchSrq(qp.srq);
            } else {
                fetchRecv(qp);
            }
        }
    }

    private int fetchRecv(DeviceQp qp) {
        if (qp.rqCount == 0) {
            return 0;
        }
        int work = 0;
        int dbr = qp.dbrRq();
        while (((dbr - qp.rqHw) & 0xffff) != 0) {
            if (qp.inError()) {
                if (qp.rqOutstanding != 0) {
                    break; // the transport flushes what it holds first
                }
                flushRecv(qp, qp.rqHw & 0xffff);
            } else if (qp.recvAllowed()) {
                if (!postRecv(qp)) {
                    break;
                }
            } else {
                break; // RESET: the RQ is not processed yet
            }
            qp.rqHw = (qp.rqHw + 1) & 0xffff;
            counters.increment(ModelCounters.Counter.RECV_WQES);
            work++;
        }
        return work;
    }

    /** One receive WQE (mlx5_wqe_data_seg array, ended by lkey MLX5_INVALID_LKEY) posted to the rxe QP. */
    private boolean postRecv(DeviceQp qp) {
        long base = qp.rqSlotOffset(qp.rqHw);
        int max = Math.min(ModelCaps.MAX_SGE, (1 << qp.rqStrideShift) / DataSeg.SIZE);
        int n = 0;
        for (int i = 0; i < max; i++) {
            qp.buffer.wrap(view, base + (long) i * DataSeg.SIZE, DataSeg.SIZE);
            int lkey = DataSeg.lkey(view, 0);
            if (lkey == RecvWqeLayout.INVALID_LKEY) {
                break;
            }
            int len = DataSeg.byteCount(view, 0);
            if (len == 0) {
                continue;
            }
            long addr = DataSeg.addr(view, 0);
            DeviceMkey k = st.mkeys.get(lkey >>> 8);
            if (k != null && k.key == lkey && k.valid && k.pd == qp.pd && k.contains(addr, len & 0xffffffffL)) {
                recv.sge(n).set(addr, len, lkey);
            } else {
                // key 0 is never registered: the transport refuses the scatter with LOC_PROT_ERR when a message
                // arrives, as the HCA reports a bad receive entry only then
                recv.sge(n).set(addr, len, 0);
            }
            n++;
        }
        recv.wrId(qp.rqHw & 0xffff).numSge(n);
        try {
            if (qp.rxeQp.postRecv(recv) == 0) {
                return false; // cannot happen while the rxe RQ is as deep as ours; retried next cycle
            }
        } catch (VerbsException e) {
            counters.increment(ModelCounters.Counter.MODEL_ERRORS);
            return false;
        }
        qp.rqOutstanding++;
        return true;
    }

    private int fetchSend(DeviceQp qp) {
        if (qp.sqCount == 0 || qp.pending) {
            return 0;
        }
        int work = 0;
        int dbr = qp.dbrSq();
        int posted;
        while ((posted = (dbr - qp.sqHw) & 0xffff) != 0 && !qp.pending) {
            if (qp.inError()) {
                if (qp.sqOutstanding != 0) {
                    break;
                }
                flushSendWqe(qp, posted);
            } else if (qp.sendAllowed()) {
                sendOne(qp, posted);
            } else {
                break; // INIT / RTR: send WQEs wait for RTS
            }
            work++;
        }
        return work;
    }

    private void sendOne(DeviceQp qp, int posted) {
        SendWqeParser p = parser;
        p.parse(qp, st, posted, portMtu, qp.logMsgMax);
        counters.increment(ModelCounters.Counter.SEND_WQES);
        if (p.syndrome != 0) {
            counters.increment(ModelCounters.Counter.MALFORMED_WQES);
            hold(qp, true, p.opcode, p.wqebbs, p.syndrome, p.vendor, true);
            return;
        }
        if (p.opcode == Mlx5Opcode.NOP) {
            hold(qp, false, p.opcode, p.wqebbs, 0, 0, p.signaled());
            return;
        }
        int slot = qp.sqHw & (qp.sqCount - 1);
        if (!post(qp, p, slot)) {
            counters.increment(ModelCounters.Counter.MALFORMED_WQES);
            // a bind the transport refuses outright (a region key of another PD, unknown or gone) is a bind error
            int syndrome = p.opcode == Mlx5Opcode.UMR ? CqeSyndrome.MW_BIND_ERR : CqeSyndrome.LOCAL_QP_OP_ERR;
            hold(qp, true, p.opcode, p.wqebbs, syndrome, CqeErrors.VENDOR_POST_REFUSED, true);
            return;
        }
        qp.sqOpcode[slot] = (byte) p.opcode;
        qp.sqSignaled[slot] = p.signaled();
        qp.sqOutstanding++;
        qp.sqHw = (qp.sqHw + p.wqebbs) & 0xffff;
    }

    /** Posts the parsed WQE to the rxe QP: always signaled there, so every WQE's end is seen. */
    private boolean post(DeviceQp qp, SendWqeParser p, int slot) {
        SendQueue sq = qp.rxeQp.sendQueue();
        try {
            sq.start();
            int flags = SendFlags.SIGNALED | (p.solicited() ? SendFlags.SOLICITED : 0)
                    | (p.fenced() ? SendFlags.FENCE : 0);
            sq.wrId(p.index).flags(flags);
            switch (p.opcode) {
                case Mlx5Opcode.UMR: return postUmr(sq, p);
                case Mlx5Opcode.SEND_INVAL: sq.sendInv(p.invalidateRkey); break;
                case Mlx5Opcode.SEND: sq.send(); break;
                case Mlx5Opcode.SEND_IMM: sq.sendImm(p.imm); break;
                case Mlx5Opcode.RDMA_WRITE: sq.rdmaWrite(p.rkey, p.raddr); break;
                case Mlx5Opcode.RDMA_WRITE_IMM: sq.rdmaWriteImm(p.rkey, p.raddr, p.imm); break;
                case Mlx5Opcode.RDMA_READ: sq.rdmaRead(p.rkey, p.raddr); break;
                case Mlx5Opcode.ATOMIC_CS: sq.atomicCmpSwp(p.rkey, p.raddr, p.compare, p.swapAdd); break;
                case Mlx5Opcode.ATOMIC_FA: sq.atomicFetchAdd(p.rkey, p.raddr, p.swapAdd); break;
                default: sq.abort(); return false;
            }
            if (qp.type == QpType.UD) {
                AddressHandle ah = addressHandle(qp, p);
                int qkey = (p.udQkey & 0x80000000) != 0 ? qp.qkey : p.udQkey; // IBTA: high bit set = QP's Q_Key
                sq.udAddr(ah, p.udQpn, qkey);
            }
            if (p.inline) {
                if (p.inlineLength > 0) {
                    long at = (long) slot * SendWqeLayout.WQEBB;
                    view.wrap(qp.bounceHost + at, p.inlineLength);
                    view.putBytes(0, p.wqe, p.inlineOffset, p.inlineLength);
                    sq.sge(qp.bounceKey, qp.bounceHost + at, p.inlineLength);
                }
            } else {
                for (int i = 0; i < p.numSge; i++) {
                    sq.sge(p.sgeKey[i], p.sgeAddr[i], p.sgeLength[i]);
                }
            }
            return sq.complete() == 0;
        } catch (VerbsException e) {
            sq.abort();
            return false;
        }
    }

    /**
     * A window UMR as the transport's bind: LOCAL_INV of a type 2 window's key, an unbind of a type 1 window, or a
     * bind to the region key the KLM names (its rxe mirror), under the window's key with the new key byte.
     */
    private boolean postUmr(SendQueue sq, SendWqeParser p) {
        io.jhca.verbs.MemoryWindow mw = p.umrWindow.rxeMw;
        if (p.umrLength == 0 && mw.type() == io.jhca.verbs.MwType.TYPE_2) {
            sq.localInv(p.imm);
            return sq.complete() == 0;
        }
        io.jhca.verbs.MemoryRegion mr = null;
        if (p.umrLength != 0) {
            DeviceMkey k = st.mkeys.get(p.umrLkey >>> 8);
            if (k == null || k.key != p.umrLkey || !k.valid || k.isWindow() || k.rxeMr == null) {
                sq.abort();
                return false;
            }
            mr = k.rxeMr;
            p.umrWindow.lastBind = k;
        }
        bind.set(mr, p.umrAddr, p.umrLength, p.umrAccess);
        sq.bindMw(mw, (mw.rkey() & 0xffffff00) | p.umrNewKey, bind);
        return sq.complete() == 0;
    }

    /** UD destinations: the rxe AH for the WQE's GID, cached per QP (created on first use, control-path cost). */
    private AddressHandle addressHandle(DeviceQp qp, SendWqeParser p) {
        int grh = p.hopLimit << 28 | p.tclass << 20 | p.flowLabel;
        for (int i = 0; i < qp.ahCount; i++) {
            if (qp.ahKeyHi[i] == p.rgidHi && qp.ahKeyLo[i] == p.rgidLo && qp.ahKeyGrh[i] == grh) {
                return qp.ahs[i];
            }
        }
        byte[] g = new byte[Gid.LENGTH];
        for (int i = 0; i < 8; i++) {
            g[i] = (byte) (p.rgidHi >>> (56 - 8 * i));
            g[8 + i] = (byte) (p.rgidLo >>> (56 - 8 * i));
        }
        AddressHandle ah = qp.pd.rxePd.createAh(AhAttributes.to(Gid.of(g)).sgidIndex(RxeMirror.PORT_GID_INDEX)
                .hopLimit(p.hopLimit).trafficClass(p.tclass).flowLabel(p.flowLabel));
        int i = qp.ahCount < qp.ahs.length ? qp.ahCount++ : (int) (p.rgidLo & (qp.ahs.length - 1));
        if (qp.ahs[i] != null) {
            qp.ahs[i].close();
        }
        qp.ahs[i] = ah;
        qp.ahKeyHi[i] = p.rgidHi;
        qp.ahKeyLo[i] = p.rgidLo;
        qp.ahKeyGrh[i] = grh;
        return ah;
    }

    /** Stops fetching at this WQE; {@link #resolvePending} answers it once nothing before it is outstanding. */
    private void hold(DeviceQp qp, boolean error, int opcode, int wqebbs, int syndrome, int vendor, boolean signaled) {
        qp.pending = true;
        qp.pendingError = error;
        qp.pendingIndex = qp.sqHw & 0xffff;
        qp.pendingOpcode = opcode;
        qp.pendingWqebbs = Math.max(1, wqebbs);
        qp.pendingSyndrome = syndrome;
        qp.pendingVendor = vendor;
        qp.pendingSignaled = signaled;
    }

    int resolvePending() {
        int work = 0;
        for (int i = 0; i < st.qpList.size(); i++) {
            DeviceQp qp = st.qpList.get(i);
            if (!qp.pending || qp.sqOutstanding != 0 || qp.faulted) {
                continue;
            }
            qp.pending = false;
            if (qp.inError()) {
                flushed(qp, true, qp.pendingOpcode, qp.pendingIndex);
            } else if (qp.pendingError) {
                error(qp, true, qp.pendingOpcode, qp.pendingIndex, qp.pendingSyndrome, qp.pendingVendor);
                enterError(qp);
            } else if (qp.pendingSignaled) {
                CqeWriter.requester(qp.sendCq, qp, qp.pendingOpcode, qp.pendingIndex, 0);
            }
            qp.sqHw = (qp.sqHw + qp.pendingWqebbs) & 0xffff;
            work++;
        }
        return work;
    }

    /** The QP failed on its own: error state, and the transport flushes what it holds (the RQ). */
    void enterError(DeviceQp qp) {
        qp.state = QpLayouts.STATE_ERR;
        QpState s = qp.rxeQp.state();
        if (s != QpState.ERR && s != QpState.RESET) {
            try {
                qp.rxeQp.modify(QpAttributes.toState(QpState.ERR));
            } catch (VerbsException e) {
                counters.increment(ModelCounters.Counter.MODEL_ERRORS);
            }
        }
    }

    private void flushSendWqe(DeviceQp qp, int posted) {
        qp.buffer.wrap(view, qp.sqSlotOffset(qp.sqHw), SendWqeLayout.WQEBB);
        int ds = CtrlSeg.ds(view, 0);
        int opcode = CtrlSeg.opcode(view, 0);
        int wqebbs = Math.min(ds == 0 ? 1 : SendWqeLayout.wqebbs(ds), posted);
        flushed(qp, true, opcode, qp.sqHw & 0xffff);
        qp.sqHw = (qp.sqHw + wqebbs) & 0xffff;
        counters.increment(ModelCounters.Counter.SEND_WQES);
    }

    private void flushRecv(DeviceQp qp, int index) {
        flushed(qp, false, 0, index);
    }

    private void flushed(DeviceQp qp, boolean requester, int opcode, int index) {
        error(qp, requester, opcode, index, CqeSyndrome.WR_FLUSH_ERR, CqeErrors.VENDOR_FLUSH);
    }

    private void error(DeviceQp qp, boolean requester, int opcode, int index, int syndrome, int vendor) {
        if (CqeWriter.error(requester ? qp.sendCq : qp.recvCq, qp, requester, opcode, index, syndrome, vendor)) {
            counters.increment(ModelCounters.Counter.ERROR_CQES);
            if (qp.counterSet != null) {
                qp.counterSet.errorCqe(requester, syndrome);
            }
        }
    }

    // ------------------------------------------------------------------------------------------ rxe to CQEs

    int drainCompletions() {
        int work = 0;
        for (int i = 0; i < st.cqList.size(); i++) {
            DeviceCq cq = st.cqList.get(i);
            work += drain(cq);
        }
        return work;
    }

    int drain(DeviceCq cq) {
        int n = 0;
        while (true) {
            int got;
            try {
                got = cq.rxeCq.poll(wc);
            } catch (VerbsException e) {
                // the rxe CQ overran: completions were lost on the way, so this CQ can no longer be trusted
                cq.overrun(io.jhca.mlx5.eq.EventType.CQ_ERROR_OVERRUN);
                return n;
            }
            if (got == 0) {
                return n;
            }
            n++;
            DeviceQp qp = st.qp(wc.qpNum());
            if (qp == null) {
                counters.increment(ModelCounters.Counter.STRAY_COMPLETIONS);
                continue;
            }
            if (wc.opcode().isReceive()) {
                onRecv(qp);
            } else {
                onSend(qp);
            }
        }
    }

    private void onSend(DeviceQp qp) {
        int index = (int) wc.wrId() & 0xffff;
        int slot = index & (qp.sqCount - 1);
        int opcode = qp.sqOpcode[slot] & 0xff;
        qp.sqOutstanding--;
        WcStatus s = wc.status();
        if (s == WcStatus.SUCCESS) {
            if (qp.sqSignaled[slot]) {
                int byteCnt = opcode == Mlx5Opcode.RDMA_READ ? wc.byteLen()
                        : opcode == Mlx5Opcode.ATOMIC_CS || opcode == Mlx5Opcode.ATOMIC_FA ? AtomicSeg.ATOMIC_SIZE : 0;
                CqeWriter.requester(qp.sendCq, qp, opcode, index, byteCnt);
            }
            return;
        }
        error(qp, true, opcode, index, CqeErrors.syndromeOf(s),
                s == WcStatus.WR_FLUSH_ERR ? CqeErrors.VENDOR_FLUSH : CqeErrors.VENDOR_TRANSPORT);
        qp.state = QpLayouts.STATE_ERR; // the transport already moved its QP to ERR and flushes the rest
    }

    private void onRecv(DeviceQp qp) {
        int index = (int) wc.wrId() & 0xffff;
        if (qp.srq == null) {
            qp.rqOutstanding--;
        }
        WcStatus s = wc.status();
        if (s != WcStatus.SUCCESS) {
            error(qp, false, 0, index, CqeErrors.syndromeOf(s),
                    s == WcStatus.WR_FLUSH_ERR ? CqeErrors.VENDOR_FLUSH : CqeErrors.VENDOR_TRANSPORT);
            qp.state = QpLayouts.STATE_ERR;
            return;
        }
        boolean imm = (wc.wcFlags() & WcFlags.WITH_IMM) != 0;
        boolean inv = (wc.wcFlags() & WcFlags.WITH_INV) != 0;
        int opcode = wc.opcode() == WcOpcode.RECV_RDMA_WITH_IMM ? CqeOpcode.RESP_WR_IMM
                : imm ? CqeOpcode.RESP_SEND_IMM : inv ? CqeOpcode.RESP_SEND_INV : CqeOpcode.RESP_SEND;
        int flags = 0;
        int l3 = 0;
        if (qp.type == QpType.UD) {
            flags = wc.srcQp() & 0xffffff | ((wc.wcFlags() & WcFlags.GRH) != 0 ? CqeWriter.FLAGS_GRH : 0);
            l3 = st.portAddress.getAddress().length == 4 ? 2 : 1; // mlx5dv.h MLX5_CQE_L3_HDR_TYPE_IPV4 / _IPV6
        }
        CqeWriter.responder(qp.recvCq, qp, opcode, index, wc.byteLen(),
                imm ? wc.immData() : inv ? wc.invalidatedRkey() : 0, flags, l3, wc.solicited());
    }
}
