package io.jhca.verbs;

/** A receive work request ({@code struct ibv_recv_wr}), built once and reused; chains through {@link #next}. */
public final class RecvWr {
    private long wrId;
    private final Sge[] sgList;
    private int numSge;
    private RecvWr next;

    public RecvWr() {
        this(4);
    }

    public RecvWr(int maxSge) {
        sgList = new Sge[maxSge];
        for (int i = 0; i < maxSge; i++) {
            sgList[i] = new Sge();
        }
    }

    public RecvWr wrId(long id) {
        this.wrId = id;
        return this;
    }

    public RecvWr numSge(int n) {
        if (n < 0 || n > sgList.length) {
            throw new IllegalArgumentException("numSge " + n + " out of 0.." + sgList.length);
        }
        this.numSge = n;
        return this;
    }

    public RecvWr sge(MemoryRegion mr, long offset, int length) {
        sgList[0].set(mr, offset, length);
        numSge = 1;
        return this;
    }

    public Sge sge(int i) {
        return sgList[i];
    }

    public RecvWr next(RecvWr next) {
        this.next = next;
        return this;
    }

    public long wrId() {
        return wrId;
    }

    public int numSge() {
        return numSge;
    }

    public int maxSge() {
        return sgList.length;
    }

    public RecvWr next() {
        return next;
    }

    public long totalLength() {
        if (numSge == 1) {
            return sgList[0].length() & 0xFFFFFFFFL;   // the common WR: no loop (C2 strip-mines even a 1-trip one)
        }
        long n = 0;
        for (int i = 0; i < numSge; i++) {
            n += sgList[i].length() & 0xFFFFFFFFL;
        }
        return n;
    }
}
