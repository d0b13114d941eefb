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
        sgList = Sges.preallocate(maxSge);
    }

    public RecvWr wrId(long id) {
        this.wrId = id;
        return this;
    }

    public RecvWr numSge(int n) {
        this.numSge = Sges.count(n, sgList);
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

    /** Sum of the SGE lengths, each unsigned (a total past 2^31-1 is refused at post time). */
    public long totalLength() {
        return Sges.totalLength(sgList, numSge);
    }

    /**
     * The checks a receive chain passes before any of it is posted (a refused chain posts nothing), for a QP's receive
     * queue and an SRQ alike: at most {@code maxSge} SGEs per WR ({@code limit} names that cap in the message), SGE
     * lengths that add up to at most 2^31-1.
     */
    static void checkChain(RecvWr wr, VerbsResource queue, int maxSge, String limit) {
        for (RecvWr w = wr; w != null; w = w.next()) {
            if (w.numSge() > maxSge) {
                throw new VerbsException(VerbsException.EINVAL, "post recv on " + queue.describe() + ": " + w.numSge()
                        + " SGEs exceed " + limit + " " + maxSge);
            }
            if (w.totalLength() > Integer.MAX_VALUE) {
                throw new VerbsException(VerbsException.EINVAL, "post recv on " + queue.describe()
                        + ": SGE lengths add up to more than 2^31-1");
            }
        }
    }
}
