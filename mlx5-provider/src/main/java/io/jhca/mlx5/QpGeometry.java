package io.jhca.mlx5;

import io.jhca.mlx5.wqe.AtomicSeg;
import io.jhca.mlx5.wqe.CtrlSeg;
import io.jhca.mlx5.wqe.DataSeg;
import io.jhca.mlx5.wqe.DatagramSeg;
import io.jhca.mlx5.wqe.InlineSeg;
import io.jhca.mlx5.wqe.RaddrSeg;
import io.jhca.mlx5.wqe.SendWqeLayout;
import io.jhca.verbs.QpCapabilities;
import io.jhca.verbs.QpType;
import io.jhca.verbs.VerbsException;

/**
 * The sizes of a QP's rings, computed as rdma-core's verbs.c does ({@code mlx5_calc_send_wqe}, {@code mlx5_calc_sq_size},
 * {@code mlx5_calc_rcv_wqe}, {@code mlx5_calc_rq_size}, {@code mlx5_calc_wq_size}):
 * <ul>
 * <li>send WQE size = align(max(overhead + 16 * max_send_sge, overhead + align(4 + max_inline_data, 16)), 64), where
 *     the overhead is the largest fixed part of a WQE of the QP type: RC ctrl + raddr + atomic (48), UC ctrl + raddr
 *     (32), UD ctrl + datagram (64); no memory-window or LOCAL_INV WQEs here, so no UMR overhead;</li>
 * <li>SQ = roundup_pow_of_two(max_send_wr * WQE size) bytes, wqe_cnt = that / 64, max_post = that / WQE size;</li>
 * <li>RQ WQE = roundup_pow_of_two(16 * max(max_recv_sge, 1)), RQ = max(roundup_pow_of_two(max_recv_wr) * WQE, 64)
 *     bytes, max_post = wqe_cnt;</li>
 * <li>buffer: RQ at offset 0, SQ right after it.</li>
 * </ul>
 * The granted capabilities are what fits: max_send_wr = max_post, max_inline_data = WQE - overhead - 4 (within 63 DS),
 * max_send_sge = (WQE - overhead) / 16, max_recv_wr = RQ wqe_cnt, max_recv_sge = RQ WQE / 16, each capped at the
 * device limits.
 */
record QpGeometry(int sqWqeCnt, int sqMaxPost, int sqWqeSize, int rqWqeCnt, int rqWqeShift, QpCapabilities granted) {

    static int overhead(QpType type) {
        switch (type) {
            case RC: return CtrlSeg.SIZE + RaddrSeg.SIZE + AtomicSeg.SIZE;
            case UC: return CtrlSeg.SIZE + RaddrSeg.SIZE;
            case UD: return CtrlSeg.SIZE + DatagramSeg.SIZE;
            default: throw new IllegalArgumentException(type.toString());
        }
    }

    static QpGeometry of(QpType type, QpCapabilities req, int maxSge, int logMaxQpSz) {
        int maxWqes = 1 << Math.min(logMaxQpSz, 24);
        int overhead = overhead(type);
        int sqWqeCnt = 0;
        int sqMaxPost = 0;
        int wqeSize = 0;
        int sendSge = req.maxSendSge();     // a queue that is not there keeps what was asked (rdma-core)
        int inline = req.maxInlineData();
        if (req.maxSendWr() > 0) {
            int size = overhead + req.maxSendSge() * DataSeg.SIZE;
            int inl = req.maxInlineData() > 0 ? overhead + align(InlineSeg.HEADER_SIZE + req.maxInlineData(), SendWqeLayout.DS) : 0;
            int total = Math.max(size, inl);
            if (total > Mlx5Attributes.MAX_SEND_WQE) {
                throw new VerbsException(VerbsException.EINVAL, "create QP: a send WQE of " + req.maxSendSge()
                        + " SGEs / " + req.maxInlineData() + " inline bytes needs " + total + " bytes, more than 63 DS");
            }
            wqeSize = align(total, SendWqeLayout.WQEBB);
            long bytes = roundUpPow2((long) req.maxSendWr() * wqeSize);
            if (bytes / SendWqeLayout.WQEBB > maxWqes) {
                throw new VerbsException(VerbsException.ENOMEM, "create QP: send queue of " + req.maxSendWr() + " x "
                        + wqeSize + " bytes needs " + bytes / SendWqeLayout.WQEBB + " WQEBBs, the device allows " + maxWqes);
            }
            sqWqeCnt = (int) (bytes / SendWqeLayout.WQEBB);
            sqMaxPost = (int) (bytes / wqeSize);
            int usable = Math.min(wqeSize, Mlx5Attributes.MAX_SEND_WQE) - overhead;
            sendSge = Math.min(maxSge, usable / DataSeg.SIZE);
            inline = usable - InlineSeg.HEADER_SIZE;
        }
        int rqWqeCnt = 0;
        int rqShift = 0;
        int recvSge = req.maxRecvSge();
        if (req.maxRecvWr() > 0) {
            int rqWqe = (int) roundUpPow2((long) Math.max(req.maxRecvSge(), 1) * DataSeg.SIZE);
            if (rqWqe > Mlx5Attributes.MAX_RECV_WQE) {
                throw new VerbsException(VerbsException.EINVAL, "create QP: a receive WQE of " + req.maxRecvSge()
                        + " SGEs exceeds " + Mlx5Attributes.MAX_RECV_WQE + " bytes");
            }
            long bytes = Math.max(roundUpPow2(req.maxRecvWr()) * rqWqe, SendWqeLayout.WQEBB);
            rqWqeCnt = (int) (bytes / rqWqe);
            if (rqWqeCnt > maxWqes) {
                throw new VerbsException(VerbsException.ENOMEM, "create QP: receive queue of " + rqWqeCnt
                        + " WQEs exceeds the device's " + maxWqes);
            }
            rqShift = Integer.numberOfTrailingZeros(rqWqe);
            recvSge = Math.min(maxSge, rqWqe / DataSeg.SIZE);
        }
        QpCapabilities granted = new QpCapabilities(sqMaxPost, rqWqeCnt, sendSge, recvSge, inline);
        return new QpGeometry(sqWqeCnt, sqMaxPost, wqeSize, rqWqeCnt, rqShift, granted);
    }

    int rqBytes() {
        return rqWqeCnt << rqWqeShift;
    }

    int sqBytes() {
        return sqWqeCnt * SendWqeLayout.WQEBB;
    }

    /** QP buffer bytes, whole 4 KiB pages (the PAS list names pages). */
    int bufferBytes() {
        return align(Math.max(rqBytes() + sqBytes(), 1), 4096);
    }

    private static int align(int v, int a) {
        return (v + a - 1) & -a;
    }

    private static long roundUpPow2(long v) {
        return v <= 1 ? 1 : Long.highestOneBit(v - 1) << 1;
    }
}
