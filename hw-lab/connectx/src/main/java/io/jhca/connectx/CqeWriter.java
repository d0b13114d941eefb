package io.jhca.connectx;

import java.nio.ByteOrder;

import org.agrona.concurrent.UnsafeBuffer;

import io.jhca.mlx5.cq.CqeOpcode;
import io.jhca.mlx5.cq.Cqe64;
import io.jhca.mlx5.cq.ErrCqe;

/**
 * Fills CQEs the way the HCA does (mlx5dv.h {@code struct mlx5_cqe64} / {@code struct mlx5_err_cqe}, offsets from
 * {@link Cqe64} and {@link ErrCqe}; every multi-byte field big-endian): the body into a slot {@link DeviceCq#claim}ed,
 * then {@link DeviceCq#publish} writes op_own last. srqn_uidx carries the QP's user_index (CQE version 1).
 */
final class CqeWriter {

    /** cqe64.flags_rqpn bit 28: a GRH is in the receive buffer (rdma-core cq.c handle_responder, IBV_WC_GRH). */
    static final int FLAGS_GRH = 1 << 28;

    private CqeWriter() {
    }

    /** A requester CQE: the send WQE's opcode and index; byte_cnt for RDMA READ (bytes read) and atomics (8). */
    static boolean requester(DeviceCq cq, DeviceQp qp, int wqeOpcode, int wqeIndex, int byteCnt) {
        UnsafeBuffer c = cq.claim();
        if (c == null) {
            return false;
        }
        c.putInt(Cqe64.SRQN_UIDX_OFFSET, qp.userIndex & 0xffffff, ByteOrder.BIG_ENDIAN);
        c.putInt(Cqe64.BYTE_CNT_OFFSET, byteCnt, ByteOrder.BIG_ENDIAN);
        c.putInt(Cqe64.SOP_DROP_QPN_OFFSET, wqeOpcode << 24 | qp.qpn, ByteOrder.BIG_ENDIAN);
        c.putShort(Cqe64.WQE_COUNTER_OFFSET, (short) wqeIndex, ByteOrder.BIG_ENDIAN);
        cq.publish(CqeOpcode.REQ, false);
        return true;
    }

    /**
     * A responder CQE: RESP_SEND, RESP_SEND_IMM or RESP_WR_IMM with byte_cnt and the immediate (as it came on the
     * wire); for UD the source QP and the GRH flag in flags_rqpn and the L3 type of the GRH (IPv4 2, IPv6 1; mlx5dv.h
     * MLX5_CQE_L3_HDR_TYPE_*) in l4_hdr_type_etc bits 3:2.
     */
    static boolean responder(DeviceCq cq, DeviceQp qp, int cqeOpcode, int rqIndex, int byteCnt, int imm, int flagsRqpn,
            int l3Type, boolean solicited) {
        UnsafeBuffer c = cq.claim();
        if (c == null) {
            return false;
        }
        c.putInt(Cqe64.FLAGS_RQPN_OFFSET, flagsRqpn, ByteOrder.BIG_ENDIAN);
        c.putByte(Cqe64.L4_HDR_TYPE_ETC_OFFSET, (byte) (l3Type << 2));
        c.putInt(Cqe64.SRQN_UIDX_OFFSET, qp.userIndex & 0xffffff, ByteOrder.BIG_ENDIAN);
        c.putInt(Cqe64.IMM_INVAL_PKEY_OFFSET, imm, ByteOrder.BIG_ENDIAN);
        c.putInt(Cqe64.BYTE_CNT_OFFSET, byteCnt, ByteOrder.BIG_ENDIAN);
        c.putInt(Cqe64.SOP_DROP_QPN_OFFSET, qp.qpn, ByteOrder.BIG_ENDIAN);
        c.putShort(Cqe64.WQE_COUNTER_OFFSET, (short) rqIndex, ByteOrder.BIG_ENDIAN);
        cq.publish(cqeOpcode, solicited);
        return true;
    }

    /** An error CQE (REQ_ERR with the WQE opcode, or RESP_ERR with opcode 0), syndrome and vendor syndrome. */
    static boolean error(DeviceCq cq, DeviceQp qp, boolean requester, int wqeOpcode, int wqeIndex, int syndrome,
            int vendor) {
        UnsafeBuffer c = cq.claim();
        if (c == null) {
            return false;
        }
        c.putInt(ErrCqe.SRQN_OFFSET, qp.userIndex & 0xffffff, ByteOrder.BIG_ENDIAN);
        c.putByte(ErrCqe.VENDOR_ERR_SYND_OFFSET, (byte) vendor);
        c.putByte(ErrCqe.SYNDROME_OFFSET, (byte) syndrome);
        c.putInt(ErrCqe.S_WQE_OPCODE_QPN_OFFSET, (requester ? wqeOpcode << 24 : 0) | qp.qpn, ByteOrder.BIG_ENDIAN);
        c.putShort(ErrCqe.WQE_COUNTER_OFFSET, (short) wqeIndex, ByteOrder.BIG_ENDIAN);
        cq.publish(requester ? CqeOpcode.REQ_ERR : CqeOpcode.RESP_ERR, false);
        return true;
    }
}
