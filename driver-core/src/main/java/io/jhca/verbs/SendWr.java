package io.jhca.verbs;

import java.util.Objects;

/**
 * A send work request ({@code struct ibv_send_wr}), built once and reused: the SGE array is preallocated
 * and posting copies what it needs, so the object may be changed and posted again at once. WRs chain through
 * {@link #next(SendWr)} as in verbs.
 */
public final class SendWr {
    private long wrId;
    private WrOpcode opcode = WrOpcode.SEND;
    private int sendFlags;
    private int shape = ANY;   // the bits below for opcode and sendFlags, kept by their setters
    private int immData;
    private final Sge[] sgList;
    private final Sge firstSge;   // sgList[0] (null with room for none): one load less on every post
    private int numSge;
    private long remoteAddr;
    private int rkey;
    private long compareAdd;
    private long swap;
    private AddressHandle ah;
    private int remoteQpn;
    private int remoteQkey;
    private SendWr next;
    private int invalidateRkey;
    private MemoryWindow mw;
    private int bindRkey;
    private final MwBind bindInfo = new MwBind();

    /** A WR with room for 4 SGEs. */
    public SendWr() {
        this(4);
    }

    public SendWr(int maxSge) {
        sgList = Sges.preallocate(maxSge);
        firstSge = maxSge > 0 ? sgList[0] : null;
    }

    public SendWr wrId(long id) {
        this.wrId = id;
        return this;
    }

    public SendWr opcode(WrOpcode op) {
        this.opcode = Objects.requireNonNull(op, "opcode");
        shape = shape & ~OPCODE_BITS | (op.isPlain() ? 0 : UNCOMMON_OPCODE) | (op == WrOpcode.RDMA_READ ? READ : 0);
        return this;
    }

    /** {@link SendFlags} bits. */
    public SendWr sendFlags(int flags) {
        this.sendFlags = flags;
        shape = shape & ~UNCOMMON_FLAGS
                | ((flags & ~(SendFlags.FENCE | SendFlags.SIGNALED | SendFlags.SOLICITED)) != 0 ? UNCOMMON_FLAGS : 0);
        return this;
    }

    // What postSend's check walk asks of every WR, kept as bits so that it reads one field, not the opcode's
    static final int UNCOMMON_OPCODE = 1;   // not WrOpcode.isPlain
    static final int UNCOMMON_FLAGS = 2;    // a flag other than FENCE, SIGNALED and SOLICITED (INLINE, unknown bits)
    static final int READ = 4;              // RDMA READ: common on RC only
    static final int ANY = 8;               // set in every WR: a QP that takes no common WR (UD) refuses it
    private static final int OPCODE_BITS = UNCOMMON_OPCODE | READ;

    /** The bits above as the setters left them. */
    int shape() {
        return shape;
    }

    public SendWr immData(int imm) {
        this.immData = imm;
        return this;
    }

    /** Uses the first {@code n} preallocated SGEs (fill them with {@link #sge(int)}). */
    public SendWr numSge(int n) {
        this.numSge = Sges.count(n, sgList);
        return this;
    }

    /** Sets a single SGE and numSge = 1. */
    public SendWr sge(MemoryRegion mr, long offset, int length) {
        sgList[0].set(mr, offset, length);
        numSge = 1;
        return this;
    }

    public Sge sge(int i) {
        return sgList[i];
    }

    /** {@code sge(0)}, or null if the WR has room for no SGE: what a provider's posting loop reads for the common WR. */
    public Sge firstSge() {
        return firstSge;
    }

    /** RDMA READ/WRITE target. */
    public SendWr rdma(long remoteAddr, int rkey) {
        this.remoteAddr = remoteAddr;
        this.rkey = rkey;
        return this;
    }

    /** Atomic target and operands: for FETCH_AND_ADD {@code compareAdd} is the value added, swap is unused. */
    public SendWr atomic(long remoteAddr, int rkey, long compareAdd, long swap) {
        this.remoteAddr = remoteAddr;
        this.rkey = rkey;
        this.compareAdd = compareAdd;
        this.swap = swap;
        return this;
    }

    /** UD destination. */
    public SendWr ud(AddressHandle ah, int remoteQpn, int remoteQkey) {
        this.ah = ah;
        this.remoteQpn = remoteQpn;
        this.remoteQkey = remoteQkey;
        return this;
    }

    /** The rkey a {@link WrOpcode#LOCAL_INV} or {@link WrOpcode#SEND_WITH_INV} invalidates ({@code invalidate_rkey}). */
    public SendWr invalidateRkey(int rkey) {
        this.invalidateRkey = rkey;
        return this;
    }

    /**
     * A {@link WrOpcode#BIND_MW} of a type 2 window ({@code wr.bind_mw}): {@code rkey} is the window's key with the
     * new key byte the caller chose (as verbs: usually {@link MemoryWindow#incRkey}); {@code bind} is copied.
     */
    public SendWr bindMw(MemoryWindow mw, int rkey, MwBind bind) {
        this.mw = mw;
        this.bindRkey = rkey;
        this.bindInfo.set(bind.mr(), bind.addr(), bind.length(), bind.access());
        return this;
    }

    public SendWr next(SendWr next) {
        this.next = next;
        return this;
    }

    public long wrId() {
        return wrId;
    }

    public WrOpcode opcode() {
        return opcode;
    }

    public int sendFlags() {
        return sendFlags;
    }

    public int immData() {
        return immData;
    }

    public int numSge() {
        return numSge;
    }

    public int maxSge() {
        return sgList.length;
    }

    public long remoteAddr() {
        return remoteAddr;
    }

    public int rkey() {
        return rkey;
    }

    public long compareAdd() {
        return compareAdd;
    }

    public long swap() {
        return swap;
    }

    public AddressHandle ah() {
        return ah;
    }

    public int remoteQpn() {
        return remoteQpn;
    }

    public int remoteQkey() {
        return remoteQkey;
    }

    public SendWr next() {
        return next;
    }

    public int invalidateRkey() {
        return invalidateRkey;
    }

    /** The window of a BIND_MW. */
    public MemoryWindow mw() {
        return mw;
    }

    /** The window's new rkey of a BIND_MW. */
    public int bindRkey() {
        return bindRkey;
    }

    /** What a BIND_MW binds to (this WR's own copy). */
    public MwBind bindInfo() {
        return bindInfo;
    }

    /** Sum of the SGE lengths, each unsigned (a total past 2^31-1 is refused at post time). */
    public long totalLength() {
        if (numSge == 1) {
            return firstSge.length() & 0xFFFFFFFFL;   // the common WR
        }
        return Sges.totalLength(sgList, numSge);
    }
}
