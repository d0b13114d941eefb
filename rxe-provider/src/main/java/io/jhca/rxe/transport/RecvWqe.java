package io.jhca.rxe.transport;

/** One receive-queue slot: the WR id and its SGE descriptors, copied at post time. */
public final class RecvWqe {
    public long wrId;
    public int numSge;
    public final long[] sgeAddr;
    public final int[] sgeLength;
    public final int[] sgeLkey;
    /** Sum of the SGE lengths. */
    public long length;

    RecvWqe(final int maxSge) {
        sgeAddr = new long[maxSge];
        sgeLength = new int[maxSge];
        sgeLkey = new int[maxSge];
    }

    public void open(final long wrId) {
        this.wrId = wrId;
        this.numSge = 0;
        this.length = 0;
    }

    public void addSge(final long addr, final int length, final int lkey) {
        final int i = numSge++;
        sgeAddr[i] = addr;
        sgeLength[i] = length;
        sgeLkey[i] = lkey;
        this.length += length & 0xFFFFFFFFL;
    }
}
