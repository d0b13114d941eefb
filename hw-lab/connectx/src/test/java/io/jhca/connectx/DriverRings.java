package io.jhca.connectx;

import java.net.InetAddress;
import java.nio.ByteOrder;

import org.agrona.concurrent.UnsafeBuffer;

import io.jhca.doorbell.DoorbellRecord;
import io.jhca.doorbell.Fences;
import io.jhca.doorbell.UarDoorbell;
import io.jhca.mlx5.cmd.CmdOpcode;
import io.jhca.mlx5.cmd.QpLayouts;
import io.jhca.mlx5.cmd.QpModifyLayouts;
import io.jhca.mlx5.wqe.AtomicSeg;
import io.jhca.mlx5.wqe.CtrlSeg;
import io.jhca.mlx5.wqe.DataSeg;
import io.jhca.mlx5.wqe.DatagramSeg;
import io.jhca.mlx5.wqe.InlineSeg;
import io.jhca.mlx5.wqe.RaddrSeg;
import io.jhca.mlx5.wqe.RecvWqeLayout;
import io.jhca.mlx5.wqe.SendWqeLayout;
import io.jhca.verbs.Gid;

/**
 * The rings of one QP as a driver handles them: send WQEs composed with the wqe writers into a scratch buffer and
 * copied WQEBB by WQEBB into the SQ (wrapping at the ring end, as rdma-core does), the doorbell record, then the
 * 8-byte UAR doorbell alternating halves; receive WQEs with a terminator; QP transitions by raw commands.
 */
final class DriverRings {

    final HostDriver drv;
    final int qpn;
    final int st;
    final UnsafeBuffer buf;
    final int sqOffset;
    final int rqCount;
    final int rqShift;
    final int sqCount;
    final DoorbellRecord dbr;
    final UarDoorbell bf;
    final int userIndex;
    int sqPi;
    int rqPi;
    private final UnsafeBuffer wqe = new UnsafeBuffer(new byte[SendWqeLayout.MAX_WQEBBS * SendWqeLayout.WQEBB]);
    private int pos;
    private int opcode;
    private int fmCeSe;
    private int imm;

    DriverRings(HostDriver drv, int qpn, int st, UnsafeBuffer buf, int sqOffset, int rqCount, int rqShift, int sqCount,
            DoorbellRecord dbr, UarDoorbell bf, int userIndex) {
        this.drv = drv;
        this.qpn = qpn;
        this.st = st;
        this.buf = buf;
        this.sqOffset = sqOffset;
        this.rqCount = rqCount;
        this.rqShift = rqShift;
        this.sqCount = sqCount;
        this.dbr = dbr;
        this.bf = bf;
        this.userIndex = userIndex;
    }

    // ------------------------------------------------------------------------------------------ transitions

    void toInit(boolean rre, boolean rwe, boolean rae) {
        drv.modify(CmdOpcode.RST2INIT_QP, QpLayouts.RST2INIT_QP_IN, qpn, 0, s -> s
                .set("qpc.rre", rre).set("qpc.rwe", rwe).set("qpc.rae", rae)
                .set("qpc.primary_address_path.vhca_port_num", 1)
                .set("qpc.primary_address_path.pkey_index", 0));
    }

    void toInitUd(int qkey) {
        drv.modify(CmdOpcode.RST2INIT_QP, QpLayouts.RST2INIT_QP_IN, qpn, 0, s -> s
                .set("qpc.q_key", Integer.toUnsignedLong(qkey))
                .set("qpc.primary_address_path.vhca_port_num", 1));
    }

    void toRtr(int remoteQpn, int rqPsn, InetAddress peer, int mtu) {
        drv.modify(CmdOpcode.INIT2RTR_QP, QpLayouts.INIT2RTR_QP_IN, qpn, 0, s -> s
                .set("qpc.mtu", mtu)
                .set("qpc.log_msg_max", 30)
                .set("qpc.remote_qpn", remoteQpn)
                .set("qpc.next_rcv_psn", rqPsn)
                .set("qpc.log_rra_max", 2)
                .set("qpc.min_rnr_nak", 12)
                .setBytes("qpc.primary_address_path.rgid_rip", Gid.of(peer).bytes())
                .set("qpc.primary_address_path.src_addr_index", 0)
                .set("qpc.primary_address_path.hop_limit", 64)
                .set("qpc.primary_address_path.vhca_port_num", 1));
    }

    void toRtrUd() {
        drv.modify(CmdOpcode.INIT2RTR_QP, QpLayouts.INIT2RTR_QP_IN, qpn, 0, s -> { });
    }

    void toRts(int sqPsn) {
        drv.modify(CmdOpcode.RTR2RTS_QP, QpLayouts.RTR2RTS_QP_IN, qpn, 0, s -> s
                .set("qpc.next_send_psn", sqPsn)
                .set("qpc.retry_count", 7)
                .set("qpc.rnr_retry", 7)
                .set("qpc.log_sra_max", 2)
                .set("qpc.primary_address_path.ack_timeout", 14));
    }

    void toErr() {
        drv.modify(CmdOpcode.QP_2ERR, QpLayouts.QP_2ERR_IN, qpn, 0, s -> { });
    }

    void toRst() {
        drv.modify(CmdOpcode.QP_2RST, QpLayouts.QP_2RST_IN, qpn, 0, s -> { });
        sqPi = 0;
        rqPi = 0;
        dbr.setSendCounter(0);
        dbr.setRecvCounter(0);
    }

    void rts2rts(int optMask, boolean rre, boolean rwe, boolean rae) {
        drv.modify(CmdOpcode.RTS2RTS_QP, QpModifyLayouts.RTS2RTS_QP_IN, qpn, optMask, s -> s
                .set("qpc.rre", rre).set("qpc.rwe", rwe).set("qpc.rae", rae));
    }

    // ------------------------------------------------------------------------------------------ send WQEs

    /** Starts a WQE: the control segment is written by {@link #post}. {@code imm} is the wire value. */
    DriverRings begin(int op, int fm, int immediate) {
        wqe.setMemory(0, wqe.capacity(), (byte) 0);
        opcode = op;
        fmCeSe = fm;
        imm = immediate;
        pos = CtrlSeg.SIZE;
        return this;
    }

    DriverRings raddr(long raddr, int rkey) {
        RaddrSeg.set(wqe, pos, raddr, rkey);
        pos += RaddrSeg.SIZE;
        return this;
    }

    DriverRings compareSwap(long compare, long swap) {
        AtomicSeg.compareSwap(wqe, pos, compare, swap);
        pos += AtomicSeg.SIZE;
        return this;
    }

    DriverRings fetchAdd(long add) {
        AtomicSeg.fetchAdd(wqe, pos, add);
        pos += AtomicSeg.SIZE;
        return this;
    }

    DriverRings data(int length, int lkey, long addr) {
        DataSeg.set(wqe, pos, length, lkey, addr);
        pos += DataSeg.SIZE;
        return this;
    }

    DriverRings inline(byte[] bytes) {
        InlineSeg.setHeader(wqe, pos, bytes.length);
        wqe.putBytes(pos + InlineSeg.HEADER_SIZE, bytes);
        pos += InlineSeg.ds(bytes.length) * SendWqeLayout.DS;
        return this;
    }

    /** Raw bytes after the control segment (random WQEs). */
    DriverRings raw(byte[] bytes) {
        wqe.putBytes(CtrlSeg.SIZE, bytes, 0, Math.min(bytes.length, wqe.capacity() - CtrlSeg.SIZE));
        return this;
    }

    /** A raw inline header claiming {@code length} bytes, followed by {@code room} DS of payload space. */
    DriverRings inlineHeader(int length, int roomDs) {
        InlineSeg.setHeader(wqe, pos, length);
        pos += (1 + roomDs) * SendWqeLayout.DS;
        return this;
    }

    DriverRings datagram(int remoteQpn, int qkey, InetAddress dest) {
        byte[] mac = new byte[6];
        DatagramSeg.set(wqe, pos, (long) qkey << 32, remoteQpn, 1, 0, 0, 0xc000,
                new UnsafeBuffer(mac), 0, 0, 64, DatagramSeg.grhGidFl(false, 0, 0),
                new UnsafeBuffer(Gid.of(dest).bytes()), 0);
        pos += DatagramSeg.SIZE;
        return this;
    }

    /** Writes the control segment with the DS count of what was written, copies the WQE in and rings. */
    int post() {
        return post(pos / SendWqeLayout.DS, opcode, qpn, sqPi);
    }

    /** As {@link #post()} with explicit (possibly wrong) fields for malformed-WQE tests. */
    int post(int ds, int op, int ctrlQpn, int ctrlIndex) {
        CtrlSeg.set(wqe, 0, ctrlIndex, op, 0, ctrlQpn, fmCeSe, ds, 0, CtrlSeg.beImm(imm));
        int wqebbs = Math.max(1, SendWqeLayout.wqebbs(Math.max(ds, pos / SendWqeLayout.DS)));
        int index = sqPi & 0xffff;
        for (int i = 0; i < wqebbs; i++) {
            int slot = (sqPi + i) & (sqCount - 1);
            buf.putBytes(sqOffset + slot * SendWqeLayout.WQEBB, wqe, i * SendWqeLayout.WQEBB, SendWqeLayout.WQEBB);
        }
        sqPi += wqebbs;
        bf.ring(dbr, sqPi, wqe.getLong(0, ByteOrder.BIG_ENDIAN)); // WQE bytes are big-endian
        return index;
    }

    /**
     * Writes the control segment with {@code ds} but copies in and posts only {@code wqebbs} WQEBBs (a DS count
     * larger than what the doorbell record covers).
     */
    int postPartial(int ds, int wqebbs) {
        CtrlSeg.set(wqe, 0, sqPi, opcode, 0, qpn, fmCeSe, ds, 0, CtrlSeg.beImm(imm));
        int index = sqPi & 0xffff;
        for (int i = 0; i < wqebbs; i++) {
            int slot = (sqPi + i) & (sqCount - 1);
            buf.putBytes(sqOffset + slot * SendWqeLayout.WQEBB, wqe, i * SendWqeLayout.WQEBB, SendWqeLayout.WQEBB);
        }
        sqPi += wqebbs;
        bf.ring(dbr, sqPi, wqe.getLong(0, ByteOrder.BIG_ENDIAN));
        return index;
    }

    // ------------------------------------------------------------------------------------------ receive WQEs

    int postRecv(int lkey, long addr, int length) {
        int off = (rqPi & (rqCount - 1)) << rqShift;
        RecvWqeLayout.setSge(buf, off, 0, length, lkey, addr);
        RecvWqeLayout.finish(buf, off, 1, (1 << rqShift) / DataSeg.SIZE);
        int index = rqPi & 0xffff;
        rqPi++;
        Fences.wqeBeforeDoorbellRecord();
        dbr.setRecvCounter(rqPi);
        return index;
    }
}
