package io.jhca.mlx5.ring;

import static org.junit.jupiter.api.Assertions.assertEquals;

import org.junit.jupiter.api.Test;

import io.jhca.mlx5.wqe.CtrlSeg;
import io.jhca.mlx5.wqe.Mlx5Opcode;
import io.jhca.verbs.WcOpcode;

/**
 * The control segment's fm_ce_se byte for every combination of send flags, with and without the fence a window bind
 * leaves for the next WQE, through both ways of opening a WQE ({@code begin} and {@code writeOneSge}). The expected
 * byte is rdma-core's formula (qp.c {@code _common_wqe_init}: {@code fence = IBV_SEND_FENCE ? MLX5_WQE_CTRL_FENCE :
 * qp->fm_cache; fm_cache = 0; fm_ce_se = sq_signal_bits | fence | CQ_UPDATE if SIGNALED | SOLICITED if SOLICITED})
 * with the constants as literals from verbs.h and mlx5dv.h, not from this project's classes.
 */
class SqFmCeSeTest {

    // verbs.h enum ibv_send_flags
    private static final int IBV_SEND_FENCE = 1;
    private static final int IBV_SEND_SIGNALED = 2;
    private static final int IBV_SEND_SOLICITED = 4;
    private static final int IBV_SEND_INLINE = 8;
    // mlx5dv.h
    private static final int MLX5_WQE_CTRL_CQ_UPDATE = 2 << 2;
    private static final int MLX5_WQE_CTRL_SOLICITED = 1 << 1;
    private static final int MLX5_WQE_CTRL_FENCE = 4 << 5;
    private static final int MLX5_WQE_CTRL_INITIATOR_SMALL_FENCE = 1 << 5;

    private static int expected(int flags, int fmCache) {
        int fence = (flags & IBV_SEND_FENCE) != 0 ? MLX5_WQE_CTRL_FENCE : fmCache;
        return fence | ((flags & IBV_SEND_SIGNALED) != 0 ? MLX5_WQE_CTRL_CQ_UPDATE : 0)
                | ((flags & IBV_SEND_SOLICITED) != 0 ? MLX5_WQE_CTRL_SOLICITED : 0);
    }

    @Test
    void everyFlagCombinationAfterABindAndWithout() {
        for (boolean oneCall : new boolean[] {false, true}) {
            int all = IBV_SEND_FENCE | IBV_SEND_SIGNALED | IBV_SEND_SOLICITED | IBV_SEND_INLINE;
            for (int flags = 0; flags <= all; flags++) {
                for (boolean afterBind : new boolean[] {false, true}) {
                    try (RingFixture f = new RingFixture(16, 8, 4, 4, 8, SqBuffer.BF_OFF)) {
                        f.sq.startBatch();
                        if (afterBind) {   // a LOCAL_INV: the WQE after it waits for it (qp.c: fm_cache = small fence)
                            f.sq.begin(Mlx5Opcode.UMR, WcOpcode.LOCAL_INV, 1, 0, 0x00abcd08);
                            f.sq.umr(true, 0, 0, 0, 0, 0);
                            f.sq.finish();
                        }
                        int sendFlags = flags & ~IBV_SEND_INLINE;   // inline changes the segments, not fm_ce_se
                        int fmCache = afterBind ? MLX5_WQE_CTRL_INITIATOR_SMALL_FENCE : 0;
                        String what = (oneCall ? "writeOneSge" : "begin") + ", flags " + flags
                                + (afterBind ? ", after a bind" : "");
                        assertEquals(expected(flags, fmCache), fmCeSeOfNext(f, oneCall, sendFlags), what);
                        // the bind's fence goes to one WQE only
                        assertEquals(expected(flags, 0), fmCeSeOfNext(f, oneCall, sendFlags), what + ", the WQE after");
                    }
                }
            }
        }
    }

    private static int fmCeSeOfNext(RingFixture f, boolean oneCall, int sendFlags) {
        int ctrl;
        if (oneCall) {
            ctrl = f.sq.start() + (f.sq.curPost() & (f.sq.wqeCnt() - 1)) * 64;
            f.sq.writeOneSge(Mlx5Opcode.RDMA_WRITE, WcOpcode.RDMA_WRITE, 7, sendFlags, 0, true, 0x1000, 0x22, 0x33,
                    0x2000, 64);
        } else {
            ctrl = f.sq.begin(Mlx5Opcode.RDMA_WRITE, WcOpcode.RDMA_WRITE, 7, sendFlags, 0);
            f.sq.raddr(0x1000, 0x22);
            f.sq.data(0x33, 0x2000, 64);
            f.sq.finish();
        }
        return CtrlSeg.fmCeSe(f.qpBuf, ctrl);
    }
}
