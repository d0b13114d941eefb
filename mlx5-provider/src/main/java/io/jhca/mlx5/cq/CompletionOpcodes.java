package io.jhca.mlx5.cq;

import io.jhca.mlx5.wqe.Mlx5Opcode;
import io.jhca.verbs.WcOpcode;

/** CQE to verbs work-completion opcode, as rdma-core's mlx5 provider decides it. */
public final class CompletionOpcodes {

    private CompletionOpcodes() {
    }

    /**
     * Requester CQE: the opcode of the completed send WQE ({@code sop_drop_qpn >> 24}) to the completion
     * opcode (rdma-core cq.c {@code handle_good_req}, same table in {@code mlx5_cq_read_wc_opcode}).
     * Returns {@code null} where the CQE alone does not decide: UMR, SET_PSV, NOP and MMO take the opcode
     * recorded for the WR at post time ({@code wq->wr_data[idx]}), e.g. LOCAL_INV or BIND_MW sent as UMR;
     * TSO ({@code IBV_WC_TSO}) and unknown opcodes have no {@link WcOpcode} here.
     */
    public static WcOpcode requester(int wqeOpcode) {
        switch (wqeOpcode) {
            case Mlx5Opcode.RDMA_WRITE:
            case Mlx5Opcode.RDMA_WRITE_IMM:
                return WcOpcode.RDMA_WRITE;
            case Mlx5Opcode.SEND:
            case Mlx5Opcode.SEND_IMM:
            case Mlx5Opcode.SEND_INVAL:
                return WcOpcode.SEND;
            case Mlx5Opcode.RDMA_READ:
                return WcOpcode.RDMA_READ;
            case Mlx5Opcode.ATOMIC_CS:
                return WcOpcode.COMP_SWAP;
            case Mlx5Opcode.ATOMIC_FA:
                return WcOpcode.FETCH_ADD;
            default:
                return null;
        }
    }

    /** Whether a requester completion of this WQE opcode carries {@code IBV_WC_WITH_IMM} (handle_good_req). */
    public static boolean requesterWithImm(int wqeOpcode) {
        return wqeOpcode == Mlx5Opcode.RDMA_WRITE_IMM || wqeOpcode == Mlx5Opcode.SEND_IMM;
    }

    /**
     * {@code wc.byte_len} of a requester completion (handle_good_req): the CQE's byte_cnt for RDMA READ,
     * 8 for the two atomics, otherwise not set by rdma-core (0 here).
     */
    public static int requesterByteLen(int wqeOpcode, int byteCnt) {
        switch (wqeOpcode) {
            case Mlx5Opcode.RDMA_READ: return byteCnt;
            case Mlx5Opcode.ATOMIC_CS:
            case Mlx5Opcode.ATOMIC_FA: return 8;
            default: return 0;
        }
    }

    /**
     * Responder CQE opcode ({@code op_own >> 4}) to the completion opcode (rdma-core cq.c
     * {@code handle_responder}): RESP_WR_IMM is RECV_RDMA_WITH_IMM, the three RESP_SEND kinds are RECV
     * (tag-matching completions not covered). {@code null} for other CQE opcodes.
     */
    public static WcOpcode responder(int cqeOpcode) {
        switch (cqeOpcode) {
            case CqeOpcode.RESP_WR_IMM:
                return WcOpcode.RECV_RDMA_WITH_IMM;
            case CqeOpcode.RESP_SEND:
            case CqeOpcode.RESP_SEND_IMM:
            case CqeOpcode.RESP_SEND_INV:
                return WcOpcode.RECV;
            default:
                return null;
        }
    }
}
