package io.jhca.mlx5.wqe;

import org.agrona.MutableDirectBuffer;

/**
 * The whole WQE of a SEND, RDMA WRITE or RDMA READ (with or without immediate) of at most one SGE, not inline, on RC or
 * UC: a control segment, a remote address segment for RDMA, a data segment for a non-empty SGE; 2 or 3 DS in one
 * WQEBB. The words are those of {@link CtrlSeg}, {@link RaddrSeg} and {@link DataSeg} (the golden-tested writers),
 * stored after one bounds check for the whole WQE instead of one per segment.
 */
public final class OneSgeWqe {

    private OneSgeWqe() {
    }

    /**
     * Writes the WQE at {@code offset} and returns its DS count.
     *
     * @param rdma   whether a remote address segment follows the control segment
     * @param length 0 for no data segment
     */
    public static int put(MutableDirectBuffer buffer, int offset, int pi, int opcode, int qpn, int fmCeSe, int imm,
                          boolean rdma, long raddr, int rkey, int lkey, long addr, int length) {
        int ds = 1 + (rdma ? 1 : 0) + (length != 0 ? 1 : 0);
        long c0 = CtrlSeg.word0(pi, opcode, 0, qpn, ds);
        long c1 = CtrlSeg.word1(0, fmCeSe, imm);
        if (rdma && length != 0) {
            Segments.put48(buffer, offset, c0, c1, raddr, RaddrSeg.word1(rkey), DataSeg.word0(length, lkey), addr);
        } else if (rdma) {
            Segments.put32(buffer, offset, c0, c1, raddr, RaddrSeg.word1(rkey));
        } else if (length != 0) {
            Segments.put32(buffer, offset, c0, c1, DataSeg.word0(length, lkey), addr);
        } else {
            Segments.put16(buffer, offset, c0, c1);
        }
        return ds;
    }

    /**
     * The WQE of an RDMA WRITE or READ of one non-empty SGE (3 DS: control, remote address, data segment), with the
     * words of {@link #put}, stored off-heap at {@code address} with no bounds check: for a send ring that owns the
     * 64-byte slot at {@code address} and masked its index into the ring ({@code io.jhca.mlx5.ring.DirectSq}), so
     * that nothing a caller passes can move the stores. Returns the control segment's first word (big-endian value),
     * what the doorbell carries.
     */
    public static long putRdmaAt(long address, int pi, int opcode, int qpn, int fmCeSe, int imm, long raddr, int rkey,
                                 int lkey, long addr, int length) {
        long c0 = CtrlSeg.word0(pi, opcode, 0, qpn, 3);
        Segments.put48At(address, c0, CtrlSeg.word1(0, fmCeSe, imm), raddr, RaddrSeg.word1(rkey),
                DataSeg.word0(length, lkey), addr);
        return c0;
    }

    /**
     * The WQE of a SEND (with or without immediate) of one non-empty SGE (2 DS: control and data segment), with the
     * words of {@link #put}, stored as {@link #putRdmaAt} stores; returns the control segment's first word.
     */
    public static long putSendAt(long address, int pi, int opcode, int qpn, int fmCeSe, int imm, int lkey, long addr,
                                 int length) {
        long c0 = CtrlSeg.word0(pi, opcode, 0, qpn, 2);
        Segments.put32At(address, c0, CtrlSeg.word1(0, fmCeSe, imm), DataSeg.word0(length, lkey), addr);
        return c0;
    }
}
