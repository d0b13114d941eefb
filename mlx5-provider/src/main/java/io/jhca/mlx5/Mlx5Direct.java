package io.jhca.mlx5;

import io.jhca.mlx5.ring.DirectCq;
import io.jhca.mlx5.ring.DirectSq;
import io.jhca.verbs.CompletionQueue;
import io.jhca.verbs.QueuePair;
import io.jhca.verbs.VerbsException;

/**
 * The mlx5 queues driven directly, what rdma-core's mlx5dv gives a C program: WQEs written by the application at
 * counters it holds, doorbells when it chooses, CQEs read as the device wrote them, no wr_id kept by the driver. For
 * programs that want the bare loop's cost: the verbs keep a wr_id per WQE and fill a work completion per CQE, which
 * makes their ring 1.5-2x the bare mlx5dv C loop's time where this level is within 1.2x of it (the benchmarks'
 * HISTORY, round 43). The queue pair's setup, state changes and receives stay with the verbs.
 *
 * <pre>{@code
 * DirectSq sq = Mlx5Direct.sendQueue(qp);          // an RC QP, nothing outstanding
 * DirectCq cq = Mlx5Direct.completionQueue(sendCq);
 * int pi = sq.producer();
 * pi = sq.write(pi, 0, raddr, rkey, lkey, addr, len);
 * pi = sq.write(pi, SendFlags.SIGNALED, raddr + len, rkey, lkey, addr + len, len);
 * sq.doorbell(pi);
 * while (!cq.poll()) { }
 * sq.retire(cq.wqeCounter());                      // both WQEs done: the second was signaled
 * }</pre>
 *
 * <p>Taking a queue is for good, until the QP is reset (take it again then) or destroyed: from then on the verbs
 * refuse to post on that send queue, or to poll that CQ. Take them from the thread that will drive them, before it
 * posts or polls.
 */
public final class Mlx5Direct {

    private Mlx5Direct() {
    }

    /**
     * The send queue of an mlx5 RC or UC QP, driven directly from now on; the same object on every call until the QP
     * is reset.
     *
     * @throws VerbsException EINVAL for a QP of another provider, in RESET or SQD, or without a send queue;
     *                        EOPNOTSUPP for a UD QP; EBUSY while WRs posted through the verbs are outstanding
     */
    public static DirectSq sendQueue(QueuePair qp) {
        if (!(qp instanceof Mlx5Qp)) {
            throw new VerbsException(VerbsException.EINVAL, "Mlx5Direct.sendQueue: " + qp + " is not an mlx5 QP");
        }
        return ((Mlx5Qp) qp).takeDirectSq();
    }

    /**
     * An mlx5 CQ, polled directly from now on; the same object on every call.
     *
     * @throws VerbsException EINVAL for a CQ of another provider or a closed one; EIO for a CQ in error or of a dead
     *                        device
     */
    public static DirectCq completionQueue(CompletionQueue cq) {
        if (!(cq instanceof Mlx5Cq)) {
            throw new VerbsException(VerbsException.EINVAL, "Mlx5Direct.completionQueue: " + cq + " is not an mlx5 CQ");
        }
        return ((Mlx5Cq) cq).takeDirect();
    }
}
