package io.jhca.connectx;

import java.nio.ByteOrder;

import org.agrona.concurrent.UnsafeBuffer;

import io.jhca.mlx5.cq.CqeSyndrome;
import io.jhca.mlx5.wqe.AtomicSeg;
import io.jhca.mlx5.wqe.CtrlSeg;
import io.jhca.mlx5.wqe.DataSeg;
import io.jhca.mlx5.wqe.DatagramSeg;
import io.jhca.mlx5.wqe.InlineSeg;
import io.jhca.mlx5.wqe.KlmSeg;
import io.jhca.mlx5.wqe.MkeyContextSeg;
import io.jhca.mlx5.wqe.UmrCtrlSeg;
import io.jhca.mlx5.wqe.Mlx5Opcode;
import io.jhca.mlx5.wqe.RaddrSeg;
import io.jhca.mlx5.wqe.SendWqeLayout;
import io.jhca.verbs.QpType;

/**
 * Reads one send WQE out of an SQ ring and checks it as the HCA would before executing it: the WQE's WQEBBs are copied
 * (unwrapping the ring end, rdma-core qp.c lets a WQE run past it) into one contiguous buffer and parsed with the
 * wqe package's readers. Layout per opcode (rdma-core qp.c {@code _mlx5_post_send}, in 16-byte DS units):
 * <ul>
 *   <li>SEND / SEND_IMM: ctrl, [UD: datagram (3 DS)], data segments or one inline segment;</li>
 *   <li>RDMA_WRITE / _IMM: ctrl, raddr, data or inline; RDMA_READ: ctrl, raddr, data (RC only);</li>
 *   <li>ATOMIC_CS / _FA: ctrl, raddr, atomic, exactly one 8-byte data segment (RC only);</li>
 *   <li>SEND_INVAL: as SEND, the rkey to invalidate in imm (RC only);</li>
 *   <li>UMR (a memory window bind, unbind or LOCAL_INV): ctrl, UMR control, mkey context, [KLM];</li>
 *   <li>NOP: ctrl only.</li>
 * </ul>
 * A WQE that breaks a rule gets the syndrome real hardware uses for it (mlx5dv.h {@code MLX5_CQE_SYNDROME_*}):
 * LOCAL_QP_OP_ERR for an opcode the QP cannot do, a DS count that is zero, larger than what was posted or too small
 * for the opcode's segments, a control segment whose index or QPN is not the QP's; LOCAL_LENGTH_ERR for an inline
 * segment claiming more bytes than the WQE holds, a message longer than the QP allows or (UD) than the path MTU, an
 * atomic whose local buffer is not 8 bytes; LOCAL_PROT_ERR for a data segment whose lkey is unknown, of another PD,
 * without local write where the device must write, or whose range is outside the key. Every gather address is
 * translated through its key to host memory the IOMMU mapped: nothing else is ever touched.
 */
final class SendWqeParser {

    static final int MAX_BYTES = SendWqeLayout.MAX_WQEBBS * SendWqeLayout.WQEBB;

    final UnsafeBuffer wqe = new UnsafeBuffer(new byte[MAX_BYTES]);
    private final UnsafeBuffer page = new UnsafeBuffer(0, 0);

    // ---- result
    int index;
    int opcode;
    int ds;
    int wqebbs;
    int fmCeSe;
    int imm;
    long raddr;
    int rkey;
    long swapAdd;
    long compare;
    int udQpn;
    int udQkey;
    long rgidHi;
    long rgidLo;
    int tclass;
    int hopLimit;
    int flowLabel;
    int numSge;
    final long[] sgeAddr = new long[ModelCaps.MAX_SGE];
    final int[] sgeLength = new int[ModelCaps.MAX_SGE];
    final int[] sgeKey = new int[ModelCaps.MAX_SGE];
    boolean inline;
    int inlineOffset;
    int inlineLength;
    long totalLength;
    /** SEND_INVAL: the rkey the responder invalidates. */
    int invalidateRkey;
    /** UMR: the window's key (imm), the region key the KLM names, and the bind. */
    DeviceMkey umrWindow;
    int umrNewKey;
    int umrLkey;
    long umrAddr;
    long umrLength;
    int umrAccess;
    /** 0 when the WQE may run; else the CQE syndrome and the model's vendor syndrome. */
    int syndrome;
    int vendor;

    /**
     * Parses the WQE at the QP's {@code sqHw}.
     *
     * @param posted WQEBBs posted past sqHw (from the doorbell record), at least 1
     * @param mtu    bytes of the path MTU (UD messages must fit one packet)
     */
    void parse(DeviceQp qp, DeviceState st, int posted, int mtu, int logMsgMax) {
        syndrome = 0;
        vendor = 0;
        numSge = 0;
        inline = false;
        inlineLength = 0;
        totalLength = 0;
        copyWqebb(qp, qp.sqHw, 0);
        opcode = CtrlSeg.opcode(wqe, 0);
        index = CtrlSeg.wqeIndex(wqe, 0);
        ds = CtrlSeg.ds(wqe, 0);
        fmCeSe = CtrlSeg.fmCeSe(wqe, 0);
        imm = CtrlSeg.immBe(wqe, 0); // the immediate as it goes on the wire
        int claimed = ds == 0 ? 1 : SendWqeLayout.wqebbs(ds);
        wqebbs = Math.min(claimed, posted);
        if (ds == 0 || claimed > posted || claimed > qp.sqCount) {
            fail(CqeSyndrome.LOCAL_QP_OP_ERR, CqeErrors.VENDOR_BAD_DS);
            return;
        }
        if (index != (qp.sqHw & 0xffff)) {
            fail(CqeSyndrome.LOCAL_QP_OP_ERR, CqeErrors.VENDOR_BAD_INDEX);
            return;
        }
        if (CtrlSeg.qpn(wqe, 0) != qp.qpn) {
            fail(CqeSyndrome.LOCAL_QP_OP_ERR, CqeErrors.VENDOR_BAD_QPN);
            return;
        }
        for (int i = 1; i < wqebbs; i++) {
            copyWqebb(qp, qp.sqHw + i, i * SendWqeLayout.WQEBB);
        }
        int end = ds * SendWqeLayout.DS;
        int data;
        boolean write = false;
        boolean allowInline = true;
        switch (opcode) {
            case Mlx5Opcode.NOP:
                return;
            case Mlx5Opcode.UMR:
                umr(qp, st, end);
                return;
            case Mlx5Opcode.SEND_INVAL:
                if (qp.type != QpType.RC) {
                    fail(CqeSyndrome.LOCAL_QP_OP_ERR, CqeErrors.VENDOR_BAD_OPCODE);
                    return;
                }
                invalidateRkey = imm; // qp.c send_ieth: htobe32(invalidate_rkey) in the imm field
                data = CtrlSeg.SIZE;
                break;
            case Mlx5Opcode.SEND:
            case Mlx5Opcode.SEND_IMM:
                data = CtrlSeg.SIZE;
                if (qp.type == QpType.UD) {
                    if (end < CtrlSeg.SIZE + DatagramSeg.SIZE) {
                        fail(CqeSyndrome.LOCAL_QP_OP_ERR, CqeErrors.VENDOR_BAD_SEGMENT);
                        return;
                    }
                    readDatagram(CtrlSeg.SIZE);
                    data = CtrlSeg.SIZE + DatagramSeg.SIZE;
                }
                break;
            case Mlx5Opcode.RDMA_WRITE:
            case Mlx5Opcode.RDMA_WRITE_IMM:
            case Mlx5Opcode.RDMA_READ:
                if (qp.type == QpType.UD || (opcode == Mlx5Opcode.RDMA_READ && qp.type != QpType.RC)) {
                    fail(CqeSyndrome.LOCAL_QP_OP_ERR, CqeErrors.VENDOR_BAD_OPCODE);
                    return;
                }
                if (end < CtrlSeg.SIZE + RaddrSeg.SIZE) {
                    fail(CqeSyndrome.LOCAL_QP_OP_ERR, CqeErrors.VENDOR_BAD_SEGMENT);
                    return;
                }
                raddr = RaddrSeg.raddr(wqe, CtrlSeg.SIZE);
                rkey = RaddrSeg.rkey(wqe, CtrlSeg.SIZE);
                data = CtrlSeg.SIZE + RaddrSeg.SIZE;
                write = opcode == Mlx5Opcode.RDMA_READ;
                allowInline = !write;
                break;
            case Mlx5Opcode.ATOMIC_CS:
            case Mlx5Opcode.ATOMIC_FA:
                if (qp.type != QpType.RC) {
                    fail(CqeSyndrome.LOCAL_QP_OP_ERR, CqeErrors.VENDOR_BAD_OPCODE);
                    return;
                }
                if (end != CtrlSeg.SIZE + RaddrSeg.SIZE + AtomicSeg.SIZE + DataSeg.SIZE) {
                    fail(CqeSyndrome.LOCAL_QP_OP_ERR, CqeErrors.VENDOR_BAD_SEGMENT);
                    return;
                }
                raddr = RaddrSeg.raddr(wqe, CtrlSeg.SIZE);
                rkey = RaddrSeg.rkey(wqe, CtrlSeg.SIZE);
                swapAdd = AtomicSeg.swapAdd(wqe, CtrlSeg.SIZE + RaddrSeg.SIZE);
                compare = AtomicSeg.compare(wqe, CtrlSeg.SIZE + RaddrSeg.SIZE);
                data = CtrlSeg.SIZE + RaddrSeg.SIZE + AtomicSeg.SIZE;
                write = true;
                allowInline = false;
                break;
            default:
                fail(CqeSyndrome.LOCAL_QP_OP_ERR, CqeErrors.VENDOR_BAD_OPCODE);
                return;
        }
        if (!segments(qp, st, data, end, write, allowInline)) {
            return;
        }
        if (opcode == Mlx5Opcode.ATOMIC_CS || opcode == Mlx5Opcode.ATOMIC_FA) {
            if (numSge != 1 || sgeLength[0] != AtomicSeg.ATOMIC_SIZE) {
                fail(CqeSyndrome.LOCAL_LENGTH_ERR, CqeErrors.VENDOR_LENGTH);
                return;
            }
            if ((raddr & 7) != 0) {
                // IBTA: a misaligned atomic is an invalid request, NAKed by the responder (rxe does the same)
                fail(CqeSyndrome.REMOTE_INVAL_REQ_ERR, CqeErrors.VENDOR_UNALIGNED_ATOMIC);
                return;
            }
        }
        if (totalLength > Integer.MAX_VALUE || totalLength > (1L << logMsgMax)
                || (qp.type == QpType.UD && totalLength > mtu)) {
            fail(CqeSyndrome.LOCAL_LENGTH_ERR, CqeErrors.VENDOR_LENGTH);
        }
    }

    /**
     * A memory window UMR (rdma-core qp.c set_bind_wr): ctrl with the window's rkey in imm, UMR control, mkey
     * context, and for a bind one KLM naming the span in a region key. The window key must exist and be a window of
     * the QP's device; a type 2 bind must name this QP; the KLM must agree with the context. What the window's state
     * decides is left to the transport's bind (MW_BIND_ERR there).
     */
    private void umr(DeviceQp qp, DeviceState st, int end) {
        if (qp.type == QpType.UD) {
            fail(CqeSyndrome.LOCAL_QP_OP_ERR, CqeErrors.VENDOR_BAD_OPCODE);
            return;
        }
        int ctrl = CtrlSeg.SIZE;
        int mkey = ctrl + UmrCtrlSeg.SIZE;
        int klm = mkey + MkeyContextSeg.SIZE;
        if (end < klm) {
            fail(CqeSyndrome.LOCAL_QP_OP_ERR, CqeErrors.VENDOR_BAD_SEGMENT);
            return;
        }
        DeviceMkey w = st.mkeys.get(imm >>> 8);
        if (w == null || !w.isWindow() || !w.valid || w.pd.rxePd.context() != qp.pd.rxePd.context()) {
            fail(CqeSyndrome.MW_BIND_ERR, CqeErrors.VENDOR_BAD_WINDOW);
            return;
        }
        umrWindow = w;
        boolean free = (MkeyContextSeg.free(wqe, mkey) & MkeyContextSeg.FREE) != 0;
        int qpnMkey = MkeyContextSeg.qpnMkey(wqe, mkey);
        umrNewKey = qpnMkey & 0xff;
        umrLkey = 0;
        umrAddr = 0;
        umrLength = 0;
        umrAccess = 0;
        if (free) {
            return; // LOCAL_INV (type 2) or an unbind (type 1)
        }
        if (UmrCtrlSeg.klmOctowords(wqe, ctrl) == 0 || end < klm + KlmSeg.ENTRY_SIZE) {
            fail(CqeSyndrome.LOCAL_QP_OP_ERR, CqeErrors.VENDOR_BAD_SEGMENT);
            return;
        }
        umrLength = MkeyContextSeg.length(wqe, mkey);
        umrAddr = MkeyContextSeg.startAddr(wqe, mkey);
        umrAccess = MkeyContextSeg.verbsAccessOf(MkeyContextSeg.accessFlags(wqe, mkey));
        umrLkey = KlmSeg.mkey(wqe, klm);
        boolean type2 = w.rxeMw.type() == io.jhca.verbs.MwType.TYPE_2;
        if ((KlmSeg.byteCount(wqe, klm) & 0xffffffffL) != umrLength || KlmSeg.address(wqe, klm) != umrAddr
                || (type2 && (qpnMkey >>> 8) != qp.qpn)) {
            fail(CqeSyndrome.MW_BIND_ERR, CqeErrors.VENDOR_BAD_WINDOW);
        }
    }

    /** Data or inline segments in {@code [from, end)}; false (and failed) on the first bad one. */
    private boolean segments(DeviceQp qp, DeviceState st, int from, int end, boolean write, boolean allowInline) {
        int pos = from;
        while (pos < end) {
            if (InlineSeg.isInline(wqe, pos)) {
                int len = InlineSeg.length(wqe, pos);
                if (!allowInline || inline || numSge > 0) {
                    fail(CqeSyndrome.LOCAL_QP_OP_ERR, CqeErrors.VENDOR_BAD_SEGMENT);
                    return false;
                }
                if (len > end - pos - InlineSeg.HEADER_SIZE) {
                    fail(CqeSyndrome.LOCAL_LENGTH_ERR, CqeErrors.VENDOR_INLINE_LENGTH);
                    return false;
                }
                inline = true;
                inlineOffset = pos + InlineSeg.HEADER_SIZE;
                inlineLength = len;
                totalLength += len;
                pos += Math.max(1, InlineSeg.ds(len)) * SendWqeLayout.DS;
                continue;
            }
            if (inline) {
                fail(CqeSyndrome.LOCAL_QP_OP_ERR, CqeErrors.VENDOR_BAD_SEGMENT);
                return false;
            }
            int len = DataSeg.byteCount(wqe, pos);
            int lkey = DataSeg.lkey(wqe, pos);
            long addr = DataSeg.addr(wqe, pos);
            pos += DataSeg.SIZE;
            if (len == 0) {
                continue; // rdma-core never posts zero-length gather entries; nothing to fetch
            }
            if (numSge == ModelCaps.MAX_SGE) {
                fail(CqeSyndrome.LOCAL_QP_OP_ERR, CqeErrors.VENDOR_TOO_MANY_SGES);
                return false;
            }
            DeviceMkey k = st.mkeys.get(lkey >>> 8);
            if (k == null || k.key != lkey || !k.valid) {
                fail(CqeSyndrome.LOCAL_PROT_ERR, CqeErrors.VENDOR_BAD_LKEY);
                return false;
            }
            if (k.pd != qp.pd) {
                fail(CqeSyndrome.LOCAL_PROT_ERR, CqeErrors.VENDOR_BAD_PD);
                return false;
            }
            if (write && !k.localWrite) {
                fail(CqeSyndrome.LOCAL_PROT_ERR, CqeErrors.VENDOR_NO_LOCAL_WRITE);
                return false;
            }
            if (!k.contains(addr, len & 0xffffffffL)) {
                fail(CqeSyndrome.LOCAL_PROT_ERR, CqeErrors.VENDOR_BAD_ADDRESS);
                return false;
            }
            sgeAddr[numSge] = addr; // the key's address: the rxe MR resolves it through the key's pages
            sgeLength[numSge] = len;
            sgeKey[numSge] = lkey;
            numSge++;
            totalLength += len & 0xffffffffL;
        }
        return true;
    }

    /** The UD address vector (mlx5dv.h struct mlx5_wqe_datagram_seg), big-endian fields. */
    private void readDatagram(int at) {
        udQkey = DatagramSeg.qkey(wqe, at);
        udQpn = DatagramSeg.dqpDct(wqe, at) & 0xffffff;
        tclass = DatagramSeg.tclass(wqe, at);
        hopLimit = DatagramSeg.hopLimit(wqe, at);
        flowLabel = DatagramSeg.grhGidFl(wqe, at) & 0xfffff;
        rgidHi = wqe.getLong(at + DatagramSeg.RGID_OFFSET, ByteOrder.BIG_ENDIAN);
        rgidLo = wqe.getLong(at + DatagramSeg.RGID_OFFSET + 8, ByteOrder.BIG_ENDIAN);
    }

    private void copyWqebb(DeviceQp qp, int counter, int to) {
        qp.buffer.wrap(page, qp.sqSlotOffset(counter), SendWqeLayout.WQEBB);
        wqe.putBytes(to, page, 0, SendWqeLayout.WQEBB);
    }

    private void fail(int cqeSyndrome, int vendorSyndrome) {
        syndrome = cqeSyndrome;
        vendor = vendorSyndrome;
    }

    boolean signaled() {
        return (fmCeSe & 0x08) != 0; // fm_ce_se bits 3:2 = 2 or 3: MLX5_WQE_CTRL_CQ_UPDATE(_AND_EQE)
    }

    boolean solicited() {
        return (fmCeSe & 0x02) != 0; // MLX5_WQE_CTRL_SOLICITED
    }

    boolean fenced() {
        return (fmCeSe & 0xe0) != 0; // any fence mode: the transport orders after earlier READs/atomics
    }
}
