package io.jhca.rxe;

import io.jhca.rxe.transport.RecvRing;
import io.jhca.rxe.transport.RecvWqe;
import io.jhca.verbs.RecvWr;
import io.jhca.verbs.Sge;

/** A receive WR into a receive ring, a QP's or an SRQ's: the same slot, the same scatter list, published later. */
final class RecvPosting {

    private RecvPosting() {
    }

    /** Fills the ring's tail slot from {@code wr} (checked by the verbs layer); false if the ring is full. */
    static boolean post(final RecvRing ring, final RecvWr wr) {
        final RecvWqe w = ring.tailSlot();
        if (w == null) {
            return false;
        }
        w.open(wr.wrId());
        for (int i = 0; i < wr.numSge(); i++) {
            final Sge s = wr.sge(i);
            w.addSge(s.addr(), s.length(), s.lkey());
        }
        ring.advanceTail();
        return true;
    }
}
