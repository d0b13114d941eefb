package io.jhca.mlx5.ring;

import io.jhca.verbs.RecvWr;
import io.jhca.verbs.Sge;

/**
 * What posting a receive WR needs of the ring it goes into: a QP's receive queue ({@link RqBuffer}) or a shared
 * receive queue ({@link SrqBuffer}). The two keep different bookkeeping (a ring, a free list) and write the same
 * scatter list.
 */
public interface ReceiveRing {

    /** Whether one more WR would not fit. */
    boolean full();

    /** The whole WQE of a receive of one SGE. */
    void postOne(long wrId, int lkey, long addr, int length);

    /** Opens the next WQE for a receive of any number of SGEs. */
    void begin(long wrId);

    /** One scatter entry of the open WQE. */
    void sge(int lkey, long addr, int length);

    /** Closes the open WQE. */
    void finish();

    /**
     * One receive WR, checked by the verbs layer, into {@code ring}: one call for a single SGE, SGE by SGE otherwise;
     * false if the ring is full.
     */
    static boolean post(ReceiveRing ring, RecvWr wr) {
        if (ring.full()) {
            return false;
        }
        if (wr.numSge() == 1) {
            Sge s = wr.sge(0);
            ring.postOne(wr.wrId(), s.lkey(), s.addr(), s.length());
            return true;
        }
        ring.begin(wr.wrId());
        for (int i = 0; i < wr.numSge(); i++) {
            Sge s = wr.sge(i);
            ring.sge(s.lkey(), s.addr(), s.length());
        }
        ring.finish();
        return true;
    }
}
